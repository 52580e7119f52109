// vmap of control flow (the batching rules of cond, while_loop and scan): each batched program is
// compared with the unbatched program run on every example on its own, bit for bit where the same
// kernels run on the same numbers; the batched program's printed IR shows one control-flow op for
// the whole batch (not a loop over examples); derivatives of vmapped control flow pass
// check_grads to second order.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "op_test_util.hpp"
#include "tenferro/program.hpp"
#include "tenferro/tenferro.hpp"

namespace tf = tenferro;
using T = tf::Traced;
using L = tf::TracedList;
using testing::HasSubstr;
using Axes = std::vector<std::optional<std::int64_t>>;

namespace {

tf::Tensor random_tensor(tf::Shape shape, std::uint64_t seed) {
  return tf::test::random_tensor({tf::DType::F64, std::move(shape)}, seed);
}

std::size_t count(const std::string& text, const std::string& word) {
  std::size_t n = 0;
  for (auto at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) ++n;
  return n;
}

/// vmap(f) over (a, b) with `in_axes` (0 or nullopt each) equals f on each example, bit for bit
/// (tolerance 0) or within `tol` relative; returns the batched program's printed IR.
template <class F>
std::string expect_batches_like_a_loop(F f, const tf::Tensor& a, const tf::Tensor& b, const Axes& in_axes, double tol = 0) {
  auto batched = [&](T x, T y) { return tf::vmap(f, {.in_axes = in_axes})(x, y); };
  const tf::Program p = tf::trace(batched, a, b);
  const tf::Tensor r = p.run({a, b})[0];
  const std::int64_t n = in_axes[0] ? a.shape()[0] : b.shape()[0];
  EXPECT_EQ(r.shape()[0], n);
  for (std::int64_t i = 0; i < n; ++i) {
    const tf::Tensor ai = in_axes[0] ? tf::test::example(a, 0, i) : a, bi = in_axes[1] ? tf::test::example(b, 0, i) : b;
    const tf::Tensor expected = tf::trace(f, ai, bi).run({ai, bi})[0];
    const tf::Tensor got = tf::test::example(r, 0, i);
    EXPECT_EQ(got.type(), expected.type());
    if (got.type() != expected.type()) continue;
    for (std::int64_t k = 0; k < got.numel(); ++k) {
      const double g = got.data<double>()[k], e = expected.data<double>()[k];
      if (tol == 0) {
        EXPECT_EQ(g, e) << "example " << i << " element " << k;
      } else {
        EXPECT_NEAR(g, e, tol * (1 + std::abs(e))) << "example " << i << " element " << k;
      }
    }
  }
  return p.print();
}

/// check_grads to second order of vmap(f) over (a, b).
template <class F>
void expect_grads(F f, const tf::Tensor& a, const tf::Tensor& b, const Axes& in_axes) {
  auto vf = [&](T x, T y) { return tf::vmap(f, {.in_axes = in_axes})(x, y); };
  const std::vector<tf::Tensor> args = {a, b};
  const auto result = tidu::testkit::check_grads(
      tidu::testkit::function_of(tf::detail::trace_graph(vf, tf::detail::types_of(args))), std::span<const tf::Tensor>(args), 2);
  EXPECT_TRUE(result.ok) << result.message;
}

T scalar_i64(const T& like, std::int64_t v) { return tf::constant(like, tf::Tensor::from(std::vector<std::int64_t>{v}, {})); }

}  // namespace

// ---- cond -----------------------------------------------------------------------------------------

// One index for the whole batch: one cond whose branches are batched.
TEST(VmapCond, AnUnbatchedIndexKeepsOneCond) {
  auto f = [](T x, T y) {
    const T index = scalar_i64(x, 1);
    return tf::switch_case(index, {[](const L& o) { return L{o[0] * o[1]}; }, [](const L& o) { return L{tf::sin(o[0]) + o[1]}; }},
                           {x, y})[0];
  };
  const tf::Tensor a = random_tensor({4, 3}, 1), b = random_tensor({3}, 2);
  for (const Axes& axes : {Axes{0, std::nullopt}, Axes{0, 0}}) {
    const std::string ir = expect_batches_like_a_loop(f, a, axes[1] ? random_tensor({4, 3}, 3) : b, axes);
    EXPECT_EQ(count(ir, "= cond["), 1u) << ir;
    EXPECT_THAT(ir, testing::Not(HasSubstr("slice"))) << "a loop over the batch";
  }
  expect_grads(f, a, b, {0, std::nullopt});
}

// A branch whose result reads only unbatched values still returns the batched type when another
// branch's result is batched.
TEST(VmapCond, AResultBatchedInOneBranchIsBatchedInAll) {
  auto f = [](T x, T y) {
    return tf::cond(tf::gt(tf::sum(y), tf::sum(y) * 0.0 + 100.0), [](const L& o) { return L{o[1] * 2.0}; },
                    [](const L& o) { return L{o[0] + o[1]}; }, {x, y})[0];
  };
  const tf::Tensor a = random_tensor({4, 1}, 4), b = tf::Tensor::from(std::vector<double>{0.5}, {1});
  expect_batches_like_a_loop(f, a, b, {0, std::nullopt});
}

// An index per example: every branch runs on the whole batch, each example selects its own.
TEST(VmapCond, ABatchedPredicateSelectsPerExample) {
  auto f = [](T x, T y) {
    const T pred = tf::gt(tf::sum(x), tf::sum(y) * 0.0);
    return tf::cond(pred, [](const L& o) { return L{tf::exp(o[0]) * o[1]}; }, [](const L& o) { return L{o[0] * o[0] - o[1]}; },
                    {x, y})[0];
  };
  const tf::Tensor a = random_tensor({6, 3}, 5), b = random_tensor({3}, 6);
  const std::string ir = expect_batches_like_a_loop(f, a, b, {0, std::nullopt});
  EXPECT_EQ(count(ir, "= cond["), 0u) << "a per-example predicate is a select: " << ir;
  expect_grads(f, a, b, {0, std::nullopt});
  expect_grads(f, a, random_tensor({6, 3}, 7), {0, 0});
}

// An i64 index per example, out of range on both sides: clamped as the unbatched cond clamps.
TEST(VmapCond, ABatchedIndexIsClampedIntoRange) {
  auto f = [](T x, T k) {
    const T index = tf::astype(tf::sum(k), tf::DType::I64);
    return tf::switch_case(index, {[](const L& o) { return L{o[0] + 1.0}; }, [](const L& o) { return L{o[0] * 3.0}; },
                                   [](const L& o) { return L{tf::cos(o[0])}; }},
                           {x})[0];
  };
  const tf::Tensor a = random_tensor({5, 2}, 8);
  const tf::Tensor k = tf::Tensor::from(std::vector<double>{-3, 0, 1, 2, 7}, {5, 1});
  expect_batches_like_a_loop(f, a, k, {0, 0});
}

// ---- while_loop -----------------------------------------------------------------------------------

// The trip count does not depend on the batch: one while_loop over batched carries.
TEST(VmapWhile, AnUnbatchedConditionKeepsOneLoop) {
  auto f = [](T x, T y) {
    const T three = scalar_i64(x, 3), one = scalar_i64(x, 1);
    return tf::while_loop([&](const L& c) { return tf::lt(c[1], three); },
                          [&](const L& c) { return L{tf::sin(c[0]) * y + c[0], c[1] + one}; }, {x, scalar_i64(x, 0)})[0];
  };
  const tf::Tensor a = random_tensor({4, 3}, 9), b = random_tensor({3}, 10);
  for (const Axes& axes : {Axes{0, std::nullopt}, Axes{std::nullopt, 0}, Axes{0, 0}}) {
    const tf::Tensor x = axes[0] ? a : b, y = axes[1] ? random_tensor({4, 3}, 11) : b;
    const std::string ir = expect_batches_like_a_loop(f, x, y, axes);
    EXPECT_EQ(count(ir, "= while_loop["), 1u) << ir;
    EXPECT_THAT(ir, testing::Not(HasSubstr("slice"))) << "a loop over the batch";
  }
}

// Each example stops after its own number of steps: the loop runs until every example is done and
// an example that is done keeps its carry. Doubling x until it exceeds a limit takes a different
// count per example; both the values and the counts must be each example's own.
TEST(VmapWhile, ABatchedConditionRunsEachExampleToItsOwnEnd) {
  auto f = [](T x, T limit) {
    const T one = scalar_i64(x, 1);
    const L out = tf::while_loop([&](const L& c) { return tf::lt(tf::sum(c[0]), tf::sum(limit)); },
                                 [&](const L& c) { return L{c[0] * 2.0 + 0.25, c[1] + one}; }, {x, scalar_i64(x, 0)});
    return out[0] + tf::astype(out[1], tf::DType::F64) * 1000.0;
  };
  const tf::Tensor x = tf::Tensor::from(std::vector<double>{0.1, 0.2, 1.0, 3.0, 50.0, 7.0}, {3, 2});
  const tf::Tensor limits = tf::Tensor::from(std::vector<double>{4.0, 100.0, 30.0}, {3, 1});
  expect_batches_like_a_loop(f, x, limits, {0, 0});
  // Example 0 stops after 3 doublings, example 1 after 3, example 2 after 0: distinct counts.
  const tf::Tensor r = tf::vmap(f, {.in_axes = {0, 0}})(x, limits);
  EXPECT_EQ(std::floor(r.data<double>()[0] / 1000.0), 3.0);
  EXPECT_EQ(std::floor(r.data<double>()[4] / 1000.0), 0.0);
}

// A carry that starts unbatched but is updated from a batched value becomes batched (the fixed
// point of the carry's batching).
TEST(VmapWhile, ACarryUpdatedFromABatchedValueIsBatched) {
  auto f = [](T x, T y) {
    const T two = scalar_i64(x, 2), one = scalar_i64(x, 1);
    const T acc0 = x * 0.0;  // unbatched when x is not
    return tf::while_loop([&](const L& c) { return tf::lt(c[2], two); },
                          [&](const L& c) { return L{c[0] + 1.0, c[1] + c[0] * y, c[2] + one}; }, {x, acc0, scalar_i64(x, 0)})[1];
  };
  expect_batches_like_a_loop(f, random_tensor({3}, 12), random_tensor({5, 3}, 13), {std::nullopt, 0});
}

// fixed_point iterates a while_loop whose condition is each example's own convergence test.
TEST(VmapWhile, FixedPointConvergesPerExample) {
  auto f = [](T p, T x0) {
    return tf::fixed_point([](const L& x, const L& q) { return L{tf::cos(x[0] * q[0])}; }, {x0}, {p},
                           {.tol = 1e-13, .max_iter = 500, .derivative_steps = 60})[0];
  };
  const tf::Tensor p = tf::Tensor::from(std::vector<double>{0.1, 0.5, 0.9, 0.3}, {4, 1});
  const tf::Tensor x0 = tf::Tensor::from(std::vector<double>{0.0}, {1});
  expect_batches_like_a_loop(f, p, x0, {0, std::nullopt});
  // The per-example derivative matches the implicit-function theorem: dx*/dp = -x* sin(p x*) /
  // (1 + p sin(p x*)).
  auto g = [&](T q, T x) { return tf::sum(f(q, x)); };
  const tf::Tensor grads = tf::vmap(tf::grad(g), {.in_axes = {0, std::nullopt}})(p, x0);
  const tf::Tensor xs = tf::vmap(f, {.in_axes = {0, std::nullopt}})(p, x0);
  for (std::int64_t i = 0; i < 4; ++i) {
    const double q = p.data<double>()[i], x = xs.data<double>()[i];
    EXPECT_NEAR(x, std::cos(q * x), 1e-12);
    EXPECT_NEAR(grads.data<double>()[i], -x * std::sin(q * x) / (1 + q * std::sin(q * x)), 1e-10);
  }
}

// ---- scan -----------------------------------------------------------------------------------------

T scan_program(const T& x, const T& ys, bool reverse) {
  const auto r = tf::scan(
      [&](const L& carry, const L& step) {
        const T h = tf::tanh(carry[0] * step[0] + x);
        return std::pair{L{h, carry[1] + tf::sum(h)}, L{h * h}};
      },
      {x * 0.5, tf::sum(x) * 0.0}, {ys}, {.reverse = reverse});
  return r.first[0] * r.first[1] + tf::sum(r.second[0], {0});
}

TEST(VmapScan, BatchedXsCarriesAndConstantsAreOneScan) {
  const tf::Tensor a = random_tensor({3, 2}, 14), a1 = random_tensor({2}, 15);
  const tf::Tensor xs = random_tensor({3, 4, 2}, 16), xs1 = random_tensor({4, 2}, 17);
  for (bool reverse : {false, true}) {
    SCOPED_TRACE(reverse ? "reverse" : "forward");
    auto f = [reverse](T x, T ys) { return scan_program(x, ys, reverse); };
    for (const Axes& axes : {Axes{0, std::nullopt}, Axes{std::nullopt, 0}, Axes{0, 0}}) {
      const std::string ir = expect_batches_like_a_loop(f, axes[0] ? a : a1, axes[1] ? xs : xs1, axes);
      EXPECT_EQ(count(ir, "= scan["), 1u) << ir;
      EXPECT_THAT(ir, testing::Not(HasSubstr(" slice("))) << "a loop over the batch";
      expect_grads(f, axes[0] ? a : a1, axes[1] ? xs : xs1, axes);
    }
  }
}

// vmap of grad through a scan (per-example gradients of a recurrence) equals the loop of grads,
// and grad of a vmapped scan is the gradient of the batched sum.
TEST(VmapScan, PerExampleGradientsThroughAScan) {
  auto loss = [](T x, T ys) { return tf::sum(scan_program(x, ys, false)); };
  const tf::Tensor a = random_tensor({2}, 18), xs = random_tensor({5, 4, 2}, 19);
  const tf::Tensor g = tf::vmap(tf::grad(loss), {.in_axes = {std::nullopt, 0}})(a, xs);
  ASSERT_EQ(g.shape(), (tf::Shape{5, 2}));
  for (std::int64_t i = 0; i < 5; ++i) {
    const tf::Tensor gi = tf::grad(loss)(a, tf::test::example(xs, 0, i));
    for (std::int64_t k = 0; k < 2; ++k) EXPECT_NEAR(g.data<double>()[i * 2 + k], gi.data<double>()[k], 1e-13);
  }
}

// Nested vmaps of a scan: a double loop.
TEST(VmapScan, NestedVmapOfAScan) {
  auto f = [](T x, T ys) { return scan_program(x, ys, false); };
  auto inner = [&](T x, T ys) { return tf::vmap(f, {.in_axes = {0, std::nullopt}})(x, ys); };
  const tf::Tensor a = random_tensor({2, 3, 2}, 20), xs = random_tensor({4, 2}, 21);
  const tf::Tensor r = tf::vmap(inner, {.in_axes = {0, std::nullopt}})(a, xs);
  ASSERT_EQ(r.shape(), (tf::Shape{2, 3, 2}));
  for (std::int64_t i = 0; i < 2; ++i) {
    for (std::int64_t j = 0; j < 3; ++j) {
      const tf::Tensor x = tf::test::example(tf::test::example(a, 0, i), 0, j);
      const tf::Tensor e = tf::trace(f, x, xs).run({x, xs})[0];
      for (std::int64_t k = 0; k < 2; ++k) EXPECT_EQ(r.data<double>()[(i * 3 + j) * 2 + k], e.data<double>()[k]);
    }
  }
}

// A scan whose carry is unbatched on entry and reads a batched constant: batched by the fixed point.
TEST(VmapScan, ACarryReadingABatchedConstantIsBatched) {
  auto f = [](T x, T c) {
    return tf::scan([&](const L& carry, const L&) { return std::pair{L{carry[0] * 0.5 + c}, L{}}; }, {x}, {},
                    {.length = 3})
        .first[0];
  };
  expect_batches_like_a_loop(f, random_tensor({2}, 22), random_tensor({4, 2}, 23), {std::nullopt, 0});
}
