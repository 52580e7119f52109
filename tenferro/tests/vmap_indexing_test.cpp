// vmap of the indexing ops (gather, scatter in both modes, dynamic_slice, dynamic_update_slice,
// take, index_add, pad with a batched padding value): their batching rules are whole-batch ops, not
// a loop over the examples. For every pattern of batched operands (and batch axes other than 0)
// the batched program must equal the example's program run on each example, bit for bit (the same
// kernels copy or add the same numbers in the same order), clamped, negative and repeated indices
// included; its IR must hold one application of the op (no per-example slices); and the derivative
// of the batched program must pass check_grads to order 2.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <cctype>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "op_test_util.hpp"
#include "tenferro/ops/index_attrs.hpp"
#include "tenferro/ops/record.hpp"
#include "tenferro/program.hpp"
#include "tenferro/tenferro.hpp"

namespace tf = tenferro;
using T = tf::Traced;
using Axes = std::vector<std::optional<std::int64_t>>;

namespace {

constexpr std::int64_t kBatch = 3;

tf::Tensor random_f64(tf::Shape shape, std::uint64_t seed) {
  return tf::test::random_tensor({tf::DType::F64, std::move(shape)}, seed);
}
tf::Tensor ints(std::vector<std::int64_t> values, tf::Shape shape) { return tf::Tensor::from(values, std::move(shape)); }

/// Same type and the same value in every element (exact equality, any dtype).
void expect_identical(const tf::Tensor& got, const tf::Tensor& expected) {
  ASSERT_EQ(got.type(), expected.type());
  tf::visit_dtype(got.dtype(), [&](auto zero) {
    using V = decltype(zero);
    const V* g = got.data<V>();
    const V* e = expected.data<V>();
    for (std::int64_t k = 0; k < got.numel(); ++k) EXPECT_EQ(g[k], e[k]) << "element " << k;
  });
}

/// How many applications of op `name` the printed program holds (the name as a whole word).
std::size_t count_op(const std::string& ir, const std::string& name) {
  auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  std::size_t count = 0;
  for (std::size_t at = ir.find(name); at != std::string::npos; at = ir.find(name, at + 1)) {
    const std::size_t end = at + name.size();
    if ((at == 0 || !word(ir[at - 1])) && (end == ir.size() || !word(ir[end]))) ++count;
  }
  return count;
}

/// f vmapped with `in_axes`, as a function of exactly I... Traced arguments (for tf::trace).
template <class F, std::size_t... I>
auto vmapped(F f, Axes in_axes, std::index_sequence<I...>) {
  return [f, in_axes](tf::detail::AsTraced<decltype(I)>... xs) -> T { return tf::vmap(f, {.in_axes = in_axes})(xs...); };
}

/// vmap(f) on `args` equals f run on each example, bit for bit. Returns the batched program's IR.
template <class F, class... A>
std::string expect_batches_like_loop(F f, const Axes& in_axes, const A&... args) {
  constexpr std::size_t n_args = sizeof...(A);
  const std::array<tf::Tensor, n_args> all{args...};
  std::int64_t n = -1;
  for (std::size_t k = 0; k < n_args; ++k) {
    if (in_axes[k]) n = all[k].shape()[static_cast<std::size_t>(*in_axes[k])];
  }
  const tf::Tensor batched = tf::vmap(f, {.in_axes = in_axes})(args...);
  EXPECT_EQ(batched.shape()[0], n);
  for (std::int64_t i = 0; i < n; ++i) {
    SCOPED_TRACE("example " + std::to_string(i));
    std::array<tf::Tensor, n_args> ex;
    for (std::size_t k = 0; k < n_args; ++k) ex[k] = in_axes[k] ? tf::test::example(all[k], *in_axes[k], i) : all[k];
    const tf::Tensor expected =
        std::apply([&f](const auto&... e) { return tf::trace(f, e...).run(tf::Tensors{e...})[0]; }, ex);
    expect_identical(tf::test::example(batched, 0, i), expected);
  }
  auto vf = vmapped(f, in_axes, std::make_index_sequence<n_args>{});
  return tf::trace(vf, args...).print();
}

/// The batched program holds one application of `op` and nothing of a loop over the examples
/// (batch_by_loop slices every batched operand per example).
void expect_one_application(const std::string& ir, const std::string& op) {
  EXPECT_EQ(count_op(ir, op), 1u) << ir;
  EXPECT_EQ(count_op(ir, "slice"), 0u) << "a loop over the examples:\n" << ir;
}

/// check_grads to order 2 of a function of f64 arguments (a vmapped program).
template <class G>
void expect_grads(G vf, std::vector<tf::Tensor> args) {
  const auto result = tidu::testkit::check_grads(
      tidu::testkit::function_of(tf::detail::trace_graph(vf, tf::detail::types_of(args))),
      std::span<const tf::Tensor>(args), 2);
  EXPECT_TRUE(result.ok) << result.message;
}

/// The shape with a batch axis of kBatch inserted at `axis` (none if nullopt).
tf::Shape batched_shape(tf::Shape shape, std::optional<std::int64_t> axis) {
  if (axis) shape.insert(shape.begin() + *axis, kBatch);
  return shape;
}

std::string pattern_name(const Axes& in_axes) {
  std::string s = "in_axes {";
  for (std::size_t k = 0; k < in_axes.size(); ++k) {
    s += (k ? ", " : "") + (in_axes[k] ? std::to_string(*in_axes[k]) : std::string("none"));
  }
  return s + "}";
}

/// Every non-empty subset of `count` operands batched on axis 0.
std::vector<Axes> all_patterns(std::size_t count) {
  std::vector<Axes> out;
  for (unsigned mask = 1; mask < (1u << count); ++mask) {
    Axes a(count);
    for (std::size_t k = 0; k < count; ++k) {
      if (mask & (1u << k)) a[k] = 0;
    }
    out.push_back(a);
  }
  return out;
}

/// Index vectors (row, column) for a [5, 4] operand: out of range on both sides (clamped), and
/// in every example vector 3 repeats vector 1. Batched on `axis` of a [4, 2] example, or one example.
tf::Tensor row_col_indices(std::optional<std::int64_t> axis) {
  const std::vector<std::vector<std::int64_t>> examples = {
      {2, 1, -3, 7, 4, 0, -3, 7}, {9, -1, 0, 2, 3, 3, 0, 2}, {1, 2, 4, -5, 0, 9, 4, -5}};
  if (!axis) return ints(examples[0], {4, 2});
  std::vector<std::int64_t> all;
  for (const auto& e : examples) all.insert(all.end(), e.begin(), e.end());
  const tf::Tensor stacked = ints(all, {kBatch, 4, 2});
  if (*axis == 0) return stacked;
  auto move = [a = *axis](T x) {
    std::vector<std::int64_t> perm = {1, 2};
    perm.insert(perm.begin() + a, 0);
    return tf::transpose(x, perm);
  };
  return tf::trace(move, stacked).run({stacked})[0];
}

// Windows x[r, c:c+2] at each index vector (r, c): result [4, 2].
const tf::GatherDims kRowWindows{{1}, {0}, {0, 1}, 1, {1, 2}};

}  // namespace

// ---- gather ------------------------------------------------------------------------------------

TEST(VmapIndexing, GatherBatchesLikeALoopForEveryPattern) {
  auto f = [](T x, T idx) { return tf::gather(x, idx, kRowWindows); };
  for (const Axes& axes : {Axes{0, std::nullopt}, Axes{std::nullopt, 0}, Axes{0, 0}, Axes{1, 2}, Axes{2, std::nullopt}}) {
    SCOPED_TRACE(pattern_name(axes));
    const tf::Tensor x = random_f64(batched_shape({5, 4}, axes[0]), 1);
    const std::string ir = expect_batches_like_loop(f, axes, x, row_col_indices(axes[1]));
    expect_one_application(ir, "gather");
  }
}

TEST(VmapIndexing, GatherWithAnImplicitIndexVectorOrTheVectorAxisFirst) {
  // Rows by one index each (index_vector_dim = indices' rank: vectors of length 1).
  const tf::GatherDims rows{{1}, {0}, {0}, 1, {1, 4}};
  auto by_rows = [rows](T x, T idx) { return tf::gather(x, idx, rows); };
  // Vectors along indices' axis 0 and the window axis first in the result: [2, 4].
  const tf::GatherDims first{{0}, {0}, {0, 1}, 0, {1, 2}};
  auto vectors_first = [first](T x, T idx) { return tf::gather(x, idx, first); };
  const tf::Tensor row_idx = ints({4, -1, 9, 2, 0, 0, 1, 3, 2, 7, 2, 2}, {kBatch, 4});
  const tf::Tensor first_idx = ints({0, 4, 2, 9, 1, -1, 3, 3, 6, 0, 2, 1, 1, 2, 3, 2, 0, 0, 5, 3, 1, 7, 2, 0}, {kBatch, 2, 4});
  for (const Axes& axes : {Axes{0, 0}, Axes{std::nullopt, 0}, Axes{0, std::nullopt}}) {
    SCOPED_TRACE(pattern_name(axes));
    const tf::Tensor x = random_f64(batched_shape({5, 4}, axes[0]), 2);
    const tf::Tensor ri = axes[1] ? row_idx : tf::test::example(row_idx, 0, 1);
    const tf::Tensor fi = axes[1] ? first_idx : tf::test::example(first_idx, 0, 2);
    expect_one_application(expect_batches_like_loop(by_rows, axes, x, ri), "gather");
    expect_one_application(expect_batches_like_loop(vectors_first, axes, x, fi), "gather");
  }
}

TEST(VmapIndexing, NestedVmapOfGatherIsADoubleLoop) {
  auto f = [](T x, T idx) { return tf::gather(x, idx, kRowWindows); };
  const tf::Tensor x = random_f64({2, kBatch, 5, 4}, 3);
  // Indices batched on both levels [2, 3, 4, 2], or on the outer level only [2, 4, 2].
  std::vector<std::int64_t> values(2 * kBatch * 4 * 2);
  for (std::size_t k = 0; k < values.size(); ++k) values[k] = static_cast<std::int64_t>(k * 7 % 12) - 3;
  const tf::Tensor both_levels = ints(values, {2, kBatch, 4, 2});
  const tf::Tensor outer_level = ints({0, 0, 1, 3, 4, 2, 4, 1, -2, 0, 2, 8, 1, 1, 3, 2}, {2, 4, 2});
  for (const bool inner_batched : {true, false}) {
    SCOPED_TRACE(inner_batched ? "indices batched on both levels" : "indices batched on the outer level");
    const Axes inner_axes = {0, inner_batched ? std::optional<std::int64_t>(0) : std::nullopt};
    auto inner = [f, inner_axes](T a, T i) { return tf::vmap(f, {.in_axes = inner_axes})(a, i); };
    const tf::Tensor& indices = inner_batched ? both_levels : outer_level;
    const tf::Tensor r = tf::vmap(inner, {.in_axes = {0, 0}})(x, indices);
    ASSERT_EQ(r.shape(), (tf::Shape{2, kBatch, 4, 2}));
    for (std::int64_t i = 0; i < 2; ++i) {
      for (std::int64_t j = 0; j < kBatch; ++j) {
        const tf::Tensor xij = tf::test::example(tf::test::example(x, 0, i), 0, j);
        const tf::Tensor ii = tf::test::example(indices, 0, i);
        const tf::Tensor iij = inner_batched ? tf::test::example(ii, 0, j) : ii;
        expect_identical(tf::test::example(tf::test::example(r, 0, i), 0, j), tf::trace(f, xij, iij).run({xij, iij})[0]);
      }
    }
    auto both = [inner](T a, T i) { return tf::vmap(inner, {.in_axes = {0, 0}})(a, i); };
    expect_one_application(tf::trace(both, x, indices).print(), "gather");
  }
}

TEST(VmapIndexing, GatherOfAVmappedFunctionPassesCheckGradsToOrderTwo) {
  auto g = [](T x, T idx) { return tf::gather(x * x, idx, kRowWindows); };
  for (const Axes& axes : {Axes{0, 0}, Axes{std::nullopt, 0}, Axes{0, std::nullopt}}) {
    SCOPED_TRACE(pattern_name(axes));
    const tf::Tensor idx = row_col_indices(axes[1]);
    auto vf = [g, axes, idx](T x) { return tf::vmap(g, {.in_axes = axes})(x, tf::constant(x, idx)); };
    expect_grads(vf, {random_f64(batched_shape({5, 4}, axes[0]), 4)});
  }
}

// ---- scatter -----------------------------------------------------------------------------------

namespace {
// Updates [4, 2] written at x[r, c:c+2] for each index vector (r, c) of a [5, 4] operand.
tf::ScatterDims scatter_dims(tf::ScatterMode mode) { return {{1}, {0}, {0, 1}, 1, mode}; }
}  // namespace

TEST(VmapIndexing, ScatterAddAndReplaceBatchLikeALoopForEveryPattern) {
  auto add = [](T x, T idx, T u) { return tf::scatter_add(x, idx, u, scatter_dims(tf::ScatterMode::Add)); };
  auto replace = [](T x, T idx, T u) { return tf::scatter(x, idx, u, scatter_dims(tf::ScatterMode::Replace)); };
  std::vector<Axes> patterns = all_patterns(3);
  patterns.push_back({1, 2, std::nullopt});
  patterns.push_back({2, 1, 1});
  patterns.push_back({std::nullopt, 2, 2});
  for (const Axes& axes : patterns) {
    SCOPED_TRACE(pattern_name(axes));
    const tf::Tensor x = random_f64(batched_shape({5, 4}, axes[0]), 5);
    const tf::Tensor idx = row_col_indices(axes[1]);
    const tf::Tensor u = random_f64(batched_shape({4, 2}, axes[2]), 6);
    {
      SCOPED_TRACE("add");
      expect_one_application(expect_batches_like_loop(add, axes, x, idx, u), "scatter");
    }
    {
      SCOPED_TRACE("replace");
      expect_one_application(expect_batches_like_loop(replace, axes, x, idx, u), "scatter");
    }
  }
}

TEST(VmapIndexing, ScatterAddOfIntegersWithAnImplicitIndexVector) {
  // Rows of an i64 [5, 3] operand, one index per update row; repeated rows accumulate.
  const tf::ScatterDims rows{{1}, {0}, {0}, 1, tf::ScatterMode::Add};
  auto f = [rows](T x, T idx, T u) { return tf::scatter_add(x, idx, u, rows); };
  const tf::Tensor idx = ints({1, 1, 7, -2, 0, 4, 4, 4, 3, 2, 3, 2}, {kBatch, 4});
  for (const Axes& axes : all_patterns(3)) {
    SCOPED_TRACE(pattern_name(axes));
    const tf::Tensor x = tf::test::random_tensor({tf::DType::I64, batched_shape({5, 3}, axes[0])}, 7);
    const tf::Tensor u = tf::test::random_tensor({tf::DType::I64, batched_shape({4, 3}, axes[2])}, 8);
    expect_one_application(expect_batches_like_loop(f, axes, x, axes[1] ? idx : tf::test::example(idx, 0, 2), u), "scatter");
  }
}

TEST(VmapIndexing, ScatterOfAVmappedFunctionPassesCheckGradsToOrderTwo) {
  auto g = [](T x, T idx, T u) {
    const T xx = x * x;
    return (tf::scatter_add(xx, idx, u * u, scatter_dims(tf::ScatterMode::Add)) +
            tf::scatter(xx, idx, u * u * u, scatter_dims(tf::ScatterMode::Replace))) *
           x;
  };
  for (const Axes& axes : all_patterns(3)) {
    SCOPED_TRACE(pattern_name(axes));
    const tf::Tensor idx = row_col_indices(axes[1]);
    auto vf = [g, axes, idx](T x, T u) { return tf::vmap(g, {.in_axes = axes})(x, tf::constant(x, idx), u); };
    expect_grads(vf, {random_f64(batched_shape({5, 4}, axes[0]), 9), random_f64(batched_shape({4, 2}, axes[2]), 10)});
  }
}

// ---- dynamic_slice and dynamic_update_slice --------------------------------------------------

namespace {
/// Starts for a [5, 6] operand, clamped in every example: [3, 2] (batched on axis 0), [2, 3]
/// (on axis 1) or one example.
tf::Tensor starts_for(std::optional<std::int64_t> axis) {
  const tf::Tensor s = ints({-2, 4, 1, 9, 4, 2}, {kBatch, 2});
  if (!axis) return tf::test::example(s, 0, 1);
  if (*axis == 0) return s;
  return tf::trace([](T a) { return tf::transpose(a); }, s).run({s})[0];
}
}  // namespace

TEST(VmapIndexing, DynamicSliceBatchesLikeALoopForEveryPattern) {
  auto f = [](T x, T s) { return tf::dynamic_slice(x, s, {2, 3}); };
  for (const Axes& axes : {Axes{0, std::nullopt}, Axes{std::nullopt, 0}, Axes{0, 0}, Axes{1, 1}, Axes{2, 0}}) {
    SCOPED_TRACE(pattern_name(axes));
    const tf::Tensor x = random_f64(batched_shape({5, 6}, axes[0]), 11);
    const std::string ir = expect_batches_like_loop(f, axes, x, starts_for(axes[1]));
    // Shared starts: one dynamic_slice over the batch; batched starts: one gather.
    EXPECT_EQ(count_op(ir, "dynamic_slice") + count_op(ir, "gather"), 1u) << ir;
    expect_one_application(ir, axes[1] ? "gather" : "dynamic_slice");
  }
}

TEST(VmapIndexing, DynamicUpdateSliceBatchesLikeALoopForEveryPattern) {
  auto f = [](T x, T u, T s) { return tf::dynamic_update_slice(x, u, s); };
  std::vector<Axes> patterns = all_patterns(3);
  patterns.push_back({1, 2, 1});
  patterns.push_back({2, std::nullopt, 0});
  for (const Axes& axes : patterns) {
    SCOPED_TRACE(pattern_name(axes));
    const tf::Tensor x = random_f64(batched_shape({5, 6}, axes[0]), 12);
    const tf::Tensor u = random_f64(batched_shape({2, 3}, axes[1]), 13);
    const std::string ir = expect_batches_like_loop(f, axes, x, u, starts_for(axes[2]));
    EXPECT_EQ(count_op(ir, "dynamic_update_slice") + count_op(ir, "scatter"), 1u) << ir;
    expect_one_application(ir, axes[2] ? "scatter" : "dynamic_update_slice");
  }
  // Bool operands (a replacing scatter copies any dtype).
  const tf::Tensor xb = tf::test::random_tensor({tf::DType::Bool, {kBatch, 5, 6}}, 14);
  const tf::Tensor ub = tf::test::random_tensor({tf::DType::Bool, {2, 3}}, 15);
  expect_batches_like_loop(f, {0, std::nullopt, 0}, xb, ub, starts_for(0));
}

TEST(VmapIndexing, DynamicSlicesOfAVmappedFunctionPassCheckGradsToOrderTwo) {
  auto slice = [](T x, T s) { return tf::dynamic_slice(x * x, s, {2, 3}); };
  auto update = [](T x, T u, T s) { return tf::dynamic_update_slice(x * x, u * u * u, s) * x; };
  for (const Axes& axes : {Axes{0, 0}, Axes{std::nullopt, 0}, Axes{0, std::nullopt}}) {
    SCOPED_TRACE(pattern_name(axes));
    const tf::Tensor s = starts_for(axes[1]);
    auto vs = [slice, axes, s](T x) { return tf::vmap(slice, {.in_axes = axes})(x, tf::constant(x, s)); };
    expect_grads(vs, {random_f64(batched_shape({5, 6}, axes[0]), 16)});
  }
  for (const Axes& axes : all_patterns(3)) {
    SCOPED_TRACE(pattern_name(axes));
    const tf::Tensor s = starts_for(axes[2]);
    auto vu = [update, axes, s](T x, T u) { return tf::vmap(update, {.in_axes = axes})(x, u, tf::constant(x, s)); };
    expect_grads(vu, {random_f64(batched_shape({5, 6}, axes[0]), 17), random_f64(batched_shape({2, 3}, axes[1]), 18)});
  }
}

// ---- take and index_add ------------------------------------------------------------------------

namespace {
/// A 1-D index into an axis of length 5: negative entries (from the end) and repeats; [3, 4]
/// (batched on axis 0), [4, 3] (on axis 1) or one example.
tf::Tensor take_index(std::optional<std::int64_t> axis) {
  const tf::Tensor idx = ints({4, -1, 0, 4, -5, 2, 2, 3, 1, -2, 1, 0}, {kBatch, 4});
  if (!axis) return tf::test::example(idx, 0, 2);
  if (*axis == 0) return idx;
  return tf::trace([](T a) { return tf::transpose(a); }, idx).run({idx})[0];
}
}  // namespace

TEST(VmapIndexing, TakeWithABatchedIndexBatchesLikeALoop) {
  for (const std::int64_t axis : {0, 1, 2}) {
    SCOPED_TRACE("axis " + std::to_string(axis));
    tf::Shape shape = {2, 3, 2};
    shape[static_cast<std::size_t>(axis)] = 5;
    auto f = [axis](T x, T idx) { return tf::take(x, idx, axis); };
    for (const Axes& axes : {Axes{std::nullopt, 0}, Axes{0, 0}, Axes{0, std::nullopt}, Axes{1, 1}, Axes{3, 0}}) {
      SCOPED_TRACE(pattern_name(axes));
      const tf::Tensor x = random_f64(batched_shape(shape, axes[0]), 19);
      expect_one_application(expect_batches_like_loop(f, axes, x, take_index(axes[1])), "take");
    }
  }
  // Integers and bools are copied as they are.
  auto f = [](T x, T idx) { return tf::take(x, idx, 0); };
  const tf::Tensor xi = tf::test::random_tensor({tf::DType::I64, {5, 2}}, 20);
  const tf::Tensor xb = tf::test::random_tensor({tf::DType::Bool, {kBatch, 5, 2}}, 21);
  expect_batches_like_loop(f, {std::nullopt, 0}, xi, take_index(0));
  expect_batches_like_loop(f, {0, 0}, xb, take_index(0));
}

TEST(VmapIndexing, TakeWithAnIndexOutOfRangeThrowsAsEachExampleDoes) {
  auto f = [](T x, T idx) { return tf::take(x, idx, 0); };
  const tf::Tensor x = random_f64({5, 2}, 22);
  const tf::Tensor idx = ints({0, 1, 2, 3, 5, 0, -6, 1, 4}, {kBatch, 3});  // 5 and -6 out of [-5, 5)
  EXPECT_THROW(tf::vmap(f, {.in_axes = {std::nullopt, 0}})(x, idx), tf::ValueError);
  const tf::Tensor bad = tf::test::example(idx, 0, 1);
  EXPECT_THROW(tf::trace(f, x, bad).run({x, bad}), tf::ValueError);
}

TEST(VmapIndexing, IndexAddBatchesLikeALoopForEveryPattern) {
  auto f = [](T base, T idx, T u) { return tf::index_add(base, idx, u, 1); };
  std::vector<Axes> patterns = all_patterns(3);
  patterns.push_back({2, 1, 0});
  for (const Axes& axes : patterns) {
    SCOPED_TRACE(pattern_name(axes));
    const tf::Tensor base = random_f64(batched_shape({2, 5, 3}, axes[0]), 23);
    const tf::Tensor u = random_f64(batched_shape({2, 4, 3}, axes[2]), 24);
    expect_one_application(expect_batches_like_loop(f, axes, base, take_index(axes[1]), u), "index_add");
  }
}

TEST(VmapIndexing, TakeAndIndexAddOfAVmappedFunctionPassCheckGradsToOrderTwo) {
  auto take = [](T x, T idx) { return tf::take(x * x, idx, 1); };
  auto add = [](T b, T idx, T u) { return tf::index_add(b * b, idx, u * u * u, 0) * b; };
  for (const Axes& axes : {Axes{0, 0}, Axes{std::nullopt, 0}, Axes{0, std::nullopt}}) {
    SCOPED_TRACE(pattern_name(axes));
    const tf::Tensor idx = take_index(axes[1]);
    auto vt = [take, axes, idx](T x) { return tf::vmap(take, {.in_axes = axes})(x, tf::constant(x, idx)); };
    expect_grads(vt, {random_f64(batched_shape({2, 5}, axes[0]), 25)});
  }
  for (const Axes& axes : all_patterns(3)) {
    SCOPED_TRACE(pattern_name(axes));
    const tf::Tensor idx = take_index(axes[1]);
    auto va = [add, axes, idx](T b, T u) { return tf::vmap(add, {.in_axes = axes})(b, tf::constant(b, idx), u); };
    expect_grads(va, {random_f64(batched_shape({5, 2}, axes[0]), 26), random_f64(batched_shape({4, 2}, axes[2]), 27)});
  }
}

// ---- pad with a batched padding value ----------------------------------------------------------

namespace {
// Low, high (negative: cut) and interior padding of a [3, 4] operand: result [5, 5].
const tf::PadAttrs kPad{{1, -1}, {-1, 2}, {1, 0}};
T pad_by(const T& x, const T& value) { return tf::apply(tf::ops::pad(x.type(), value.type(), kPad), {x, value}); }
}  // namespace

TEST(VmapIndexing, PadWithABatchedValueBatchesLikeALoopInEveryDtype) {
  auto f = [](T x, T v) { return pad_by(x, v); };
  for (const tf::DType dtype : {tf::DType::F64, tf::DType::I64, tf::DType::Bool, tf::DType::C128}) {
    SCOPED_TRACE(tf::dtype_name(dtype));
    for (const Axes& axes : {Axes{std::nullopt, 0}, Axes{0, 0}, Axes{1, 0}, Axes{0, std::nullopt}}) {
      SCOPED_TRACE(pattern_name(axes));
      const tf::Tensor x = tf::test::random_tensor({dtype, batched_shape({3, 4}, axes[0])}, 28);
      const tf::Tensor v = tf::test::random_tensor({dtype, batched_shape({}, axes[1])}, 29);
      const std::string ir = expect_batches_like_loop(f, axes, x, v);
      EXPECT_EQ(count_op(ir, "slice"), 0u) << "a loop over the examples:\n" << ir;
      // The operand's pad, and for a batched value the mask's pad and one select.
      EXPECT_EQ(count_op(ir, "pad"), axes[1] ? 2u : 1u) << ir;
      EXPECT_EQ(count_op(ir, "select"), axes[1] ? 1u : 0u) << ir;
    }
  }
}

TEST(VmapIndexing, PadWithABatchedValuePassesCheckGradsToOrderTwo) {
  auto g = [](T x, T v) { return pad_by(x * x, v * v) * 1.5; };
  for (const Axes& axes : {Axes{std::nullopt, 0}, Axes{0, 0}}) {
    SCOPED_TRACE(pattern_name(axes));
    auto vf = [g, axes](T x, T v) { return tf::vmap(g, {.in_axes = axes})(x, v); };
    expect_grads(vf, {random_f64(batched_shape({3, 4}, axes[0]), 30), random_f64({kBatch}, 31)});
  }
}

// ---- an empty batch ----------------------------------------------------------------------------

TEST(VmapIndexing, AnEmptyBatchGivesEmptyResultsOfTheBatchedShape) {
  const tf::Tensor x = random_f64({0, 5, 4}, 32), idx = ints({}, {0, 4, 2}), u = random_f64({0, 4, 2}, 33);
  const tf::Tensor starts = ints({}, {0, 2});
  auto gather = [](T a, T i) { return tf::gather(a, i, kRowWindows); };
  auto scatter = [](T a, T i, T b) { return tf::scatter(a, i, b, scatter_dims(tf::ScatterMode::Replace)); };
  auto slice = [](T a, T s) { return tf::dynamic_slice(a, s, {2, 3}); };
  auto update = [](T a, T b, T s) { return tf::dynamic_update_slice(a, b, s); };
  auto take = [](T a, T i) { return tf::take(a, i, 1); };
  auto pad = [](T a, T v) { return pad_by(a, v); };
  EXPECT_EQ(tf::vmap(gather)(x, idx).shape(), (tf::Shape{0, 4, 2}));
  EXPECT_EQ(tf::vmap(gather, {.in_axes = {0, std::nullopt}})(x, row_col_indices(std::nullopt)).shape(), (tf::Shape{0, 4, 2}));
  EXPECT_EQ(tf::vmap(scatter)(x, idx, u).shape(), (tf::Shape{0, 5, 4}));
  EXPECT_EQ(tf::vmap(slice, {.in_axes = {std::nullopt, 0}})(random_f64({5, 4}, 34), starts).shape(), (tf::Shape{0, 2, 3}));
  EXPECT_EQ(tf::vmap(update)(x, random_f64({0, 2, 3}, 35), starts).shape(), (tf::Shape{0, 5, 4}));
  EXPECT_EQ(tf::vmap(take)(x, ints({}, {0, 4})).shape(), (tf::Shape{0, 5, 4}));
  EXPECT_EQ(tf::vmap(pad, {.in_axes = {std::nullopt, 0}})(random_f64({3, 4}, 36), random_f64({0}, 37)).shape(),
            (tf::Shape{0, 5, 5}));
}
