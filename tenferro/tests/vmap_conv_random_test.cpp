// vmap's own batching rules for conv and the random ops (src/ops/conv.cpp, src/ops/random_bits.cpp):
// a batched conv is one conv (the batch folded into its batch axis, its kernel's output features or,
// both batched, its feature groups), in every layout of ConvAttrs, equal to the conv of each example
// and differentiable to order 2; per-example gradients of a small CNN equal a loop of gradients; a
// batched key is a stack of keys, whose draws are bitwise the separate draws of its keys, for every
// function of tenferro/random.hpp.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "op_test_util.hpp"
#include "tenferro/ops/conv_attrs.hpp"
#include "tenferro/ops/random_attrs.hpp"
#include "tenferro/ops/record.hpp"
#include "tenferro/program.hpp"
#include "tenferro/random.hpp"
#include "tenferro/tenferro.hpp"

namespace tf = tenferro;
namespace rnd = tenferro::random;
using T = tf::Traced;
using testing::HasSubstr;
using Axes = std::vector<std::optional<std::int64_t>>;

namespace {

tf::Tensor random_tensor(tf::Shape shape, std::uint64_t seed) {
  return tf::test::random_tensor({tf::DType::F64, std::move(shape)}, seed);
}

void expect_near(const tf::Tensor& got, const tf::Tensor& expected, double tol = 1e-12) {
  ASSERT_EQ(got.type(), expected.type());
  for (std::int64_t i = 0; i < got.numel(); ++i) {
    const double e = expected.data<double>()[i];
    EXPECT_NEAR(got.data<double>()[i], e, tol * (1 + std::abs(e))) << "element " << i;
  }
}

bool same_bits(const tf::Tensor& a, const tf::Tensor& b) {
  return a.type() == b.type() && std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0;
}

/// How many times `word` occurs in `text` as an op name (followed by '(' or ' ', not a prefix of
/// another name such as convert).
std::size_t count_op(const std::string& text, const std::string& word) {
  std::size_t n = 0;
  for (std::size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) {
    const char before = at == 0 ? ' ' : text[at - 1];
    const char after = at + word.size() < text.size() ? text[at + word.size()] : ' ';
    const bool starts = !(std::isalnum(static_cast<unsigned char>(before)) || before == '_');
    const bool ends = !(std::isalnum(static_cast<unsigned char>(after)) || after == '_');
    n += starts && ends;
  }
  return n;
}

// ---- conv --------------------------------------------------------------------------------------

/// One convolution, written with the primitive's attributes (every layout flag reachable).
struct ConvCase {
  std::string name;
  tf::Shape lhs, rhs;  ///< unbatched shapes, in the case's layout
  tf::ConvAttrs attrs;
};

tf::ConvAttrs conv_attrs(std::vector<std::int64_t> strides, std::vector<std::int64_t> lo, std::vector<std::int64_t> hi,
                         std::vector<std::int64_t> lhs_dilation, std::vector<std::int64_t> rhs_dilation, std::int64_t groups,
                         std::int64_t lhs_batch_axis, std::int64_t rhs_out_axis, std::int64_t out_batch_axis) {
  tf::ConvAttrs a;
  a.strides = std::move(strides);
  a.pad_lo = std::move(lo);
  a.pad_hi = std::move(hi);
  a.lhs_dilation = std::move(lhs_dilation);
  a.rhs_dilation = std::move(rhs_dilation);
  a.groups = groups;
  a.lhs_batch_axis = lhs_batch_axis;
  a.rhs_out_axis = rhs_out_axis;
  a.out_batch_axis = out_batch_axis;
  return a;
}

std::vector<ConvCase> conv_cases() {
  return {
      // 1-D, default layout: input [N=2, C=2, 7], kernel [O=3, C=2, 2], stride 2, padding, kernel dilation.
      {"1d_groups1_default", {2, 2, 7}, {3, 2, 2}, conv_attrs({2}, {1}, {1}, {1}, {2}, 1, 0, 0, 0)},
      // 1-D, two groups, input dilation, uneven padding: input [2, 4, 5], kernel [O=4, C/G=2, 3].
      {"1d_groups2_default", {2, 4, 5}, {4, 2, 3}, conv_attrs({1}, {1}, {0}, {2}, {1}, 2, 0, 0, 0)},
      // 2-D, two groups, every axis swapped: input [C=4, N=2, 5, 4], kernel [C/G=2, O=6, 2, 3],
      // result [O, N, ..].
      {"2d_groups2_fb_io_fb", {4, 2, 5, 4}, {2, 6, 2, 3}, conv_attrs({2, 1}, {1, 0}, {0, 1}, {1, 1}, {1, 2}, 2, 1, 1, 1)},
      // 2-D, one group, kernel [C=3, O=2, ..] and result [O, N, ..]; strides and input dilation.
      {"2d_groups1_bf_io_fb", {2, 3, 4, 4}, {3, 2, 2, 2}, conv_attrs({2, 2}, {1, 1}, {1, 0}, {2, 1}, {1, 1}, 1, 0, 1, 1)},
      // 2-D, two groups, input [C=4, N=1, ..], kernel [O=2, C/G=2, ..], result [N, O, ..].
      {"2d_groups2_fb_oi_bf", {4, 1, 5, 5}, {2, 2, 3, 3}, conv_attrs({2, 2}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 2, 1, 0, 0)},
  };
}

tf::Shape with_leading(std::int64_t n, tf::Shape s) {
  s.insert(s.begin(), n);
  return s;
}

std::string axes_name(const Axes& a) { return std::string(a[0] ? "input" : "") + (a[0] && a[1] ? "+" : "") + (a[1] ? "kernel" : ""); }

// Batched on the input, on the kernel and on both, the batched conv equals the conv of each
// example (the fold reorders no sum over an example's own terms in the kernel's GEMMs, so equal
// to rounding), and it is one conv, not a loop of slices.
TEST(VmapConv, EqualsTheConvOfEachExampleAndIsOneConv) {
  const std::int64_t n = 3;
  std::uint64_t seed = 100;
  for (const ConvCase& c : conv_cases()) {
    SCOPED_TRACE(c.name);
    auto f = [&c](T x, T w) { return tf::apply(tf::ops::conv(x.type(), w.type(), c.attrs), {x, w}); };
    for (const Axes& in_axes : {Axes{0, std::nullopt}, Axes{std::nullopt, 0}, Axes{0, 0}}) {
      SCOPED_TRACE("batched: " + axes_name(in_axes));
      const tf::Tensor x = random_tensor(in_axes[0] ? with_leading(n, c.lhs) : c.lhs, ++seed);
      const tf::Tensor w = random_tensor(in_axes[1] ? with_leading(n, c.rhs) : c.rhs, ++seed);
      auto batched = [&](T a, T b) { return tf::vmap(f, {.in_axes = in_axes})(a, b); };
      const tf::Program p = tf::trace(batched, x, w);
      const std::string ir = p.print();
      EXPECT_EQ(count_op(ir, "conv"), 1u) << ir;
      EXPECT_EQ(count_op(ir, "slice"), 0u) << "a loop over the batch:\n" << ir;
      const tf::Tensor r = p.run({x, w})[0];
      ASSERT_EQ(r.shape()[0], n);
      for (std::int64_t i = 0; i < n; ++i) {
        const tf::Tensor xi = in_axes[0] ? tf::test::example(x, 0, i) : x, wi = in_axes[1] ? tf::test::example(w, 0, i) : w;
        SCOPED_TRACE("example " + std::to_string(i));
        expect_near(tf::test::example(r, 0, i), tf::trace(f, xi, wi).run({xi, wi})[0]);
      }
    }
  }
}

// The batch axis anywhere in the arguments and the result (vmap moves it first and back), with
// the public tf::conv.
TEST(VmapConv, BatchAxesElsewhere) {
  const tf::Tensor xs = random_tensor({2, 4, 4, 6}, 7);  // examples [N=2, C=4, 6], batch on axis 1
  const tf::Tensor wk = random_tensor({2, 2, 4, 3}, 8);  // examples [O=2, C/G=2, 3], batch on axis 2
  auto f = [](T x, T w) { return tf::conv(x, w, {.stride = {2}, .padding = {1}, .groups = 2}); };
  const tf::Tensor r = tf::vmap(f, {.in_axes = {1, 2}, .out_axes = {-1}})(xs, wk);
  ASSERT_EQ(r.shape(), (tf::Shape{2, 2, 3, 4}));
  for (std::int64_t i = 0; i < 4; ++i) {
    const tf::Tensor xi = tf::test::example(xs, 1, i), wi = tf::test::example(wk, 2, i);
    expect_near(tf::test::example(r, 3, i), tf::trace(f, xi, wi).run({xi, wi})[0]);
  }
}

// The batched program's derivatives, forward and reverse, to order 2 (finite differences and the
// adjoint identity), in every batching pattern, one group and two, 1-D and 2-D.
TEST(VmapConv, BatchedConvPassesCheckGradsToOrderTwo) {
  const std::int64_t n = 2;
  std::uint64_t seed = 300;
  const std::vector<ConvCase> all = conv_cases();
  for (const ConvCase& c : {all[0], all[1], all[2]}) {
    SCOPED_TRACE(c.name);
    auto f = [&c](T x, T w) {
      const T y = tf::apply(tf::ops::conv(x.type(), w.type(), c.attrs), {x * x, w});
      return y * y;
    };
    for (const Axes& in_axes : {Axes{0, std::nullopt}, Axes{std::nullopt, 0}, Axes{0, 0}}) {
      SCOPED_TRACE("batched: " + axes_name(in_axes));
      const tf::Tensor x = random_tensor(in_axes[0] ? with_leading(n, c.lhs) : c.lhs, ++seed);
      const tf::Tensor w = random_tensor(in_axes[1] ? with_leading(n, c.rhs) : c.rhs, ++seed);
      auto vf = [&](T a, T b) { return tf::vmap(f, {.in_axes = in_axes})(a, b); };
      const std::vector<tf::Tensor> args = {x, w};
      const auto result = tidu::testkit::check_grads(
          tidu::testkit::function_of(tf::detail::trace_graph(vf, tf::detail::types_of(args))), std::span<const tf::Tensor>(args), 2);
      EXPECT_TRUE(result.ok) << result.message;
    }
  }
}

/// A tiny CNN on one example x [C=2, L=8] with target y [2, 4]: conv (padding 1) -> tanh -> conv
/// with two groups and stride 2 -> squared error.
T cnn_loss(const T& w1, const T& w2, const T& x, const T& y) {
  const T h = tf::tanh(tf::conv(tf::reshape(x, {1, 2, 8}), w1, {.padding = {1}}));  // [1, 4, 8]
  const T out = tf::conv(h, w2, {.stride = {2}, .padding = {1}, .groups = 2});       // [1, 2, 4]
  const T d = tf::reshape(out, {2, 4}) - y;
  return tf::sum(d * d);
}

// Per-example gradients vmap(grad(loss)) equal the gradients of each example's loss; the kernel's
// cotangent (a conv of the batched input with the batched cotangent) is the both-batched case, so
// the batched gradient program has as many convs as one example's, and no per-example loop.
TEST(VmapConv, PerExampleGradientsOfACnn) {
  const tf::Tensor w1 = random_tensor({4, 2, 3}, 11), w2 = random_tensor({2, 2, 3}, 12);
  const tf::Tensor xs = random_tensor({5, 2, 8}, 13), ys = random_tensor({5, 2, 4}, 14);
  const Axes in_axes = {std::nullopt, std::nullopt, 0, 0};
  for (std::size_t arg : {0u, 1u}) {
    SCOPED_TRACE("gradient of w" + std::to_string(arg + 1));
    auto g = tf::grad([](T a, T b, T x, T y) { return cnn_loss(a, b, x, y); }, arg);
    const tf::Tensor gs = tf::vmap(g, {.in_axes = in_axes})(w1, w2, xs, ys);
    ASSERT_EQ(gs.shape(), with_leading(5, arg == 0 ? w1.shape() : w2.shape()));
    for (std::int64_t i = 0; i < 5; ++i) {
      SCOPED_TRACE("example " + std::to_string(i));
      expect_near(tf::test::example(gs, 0, i), g(w1, w2, tf::test::example(xs, 0, i), tf::test::example(ys, 0, i)));
    }
    const tf::Tensor x0 = tf::test::example(xs, 0, 0), y0 = tf::test::example(ys, 0, 0);
    const std::string one = tf::trace([&](T a, T b, T x, T y) { return g(a, b, x, y); }, w1, w2, x0, y0).print();
    const std::string batched =
        tf::trace([&](T a, T b, T x, T y) { return tf::vmap(g, {.in_axes = in_axes})(a, b, x, y); }, w1, w2, xs, ys).print();
    EXPECT_EQ(count_op(batched, "conv"), count_op(one, "conv")) << batched;
    EXPECT_GE(count_op(one, "conv"), 3u) << one;
  }
}

// ---- random ------------------------------------------------------------------------------------

/// Keys [k.., 2] from seeds: row j is rnd::key(seeds[j]).
tf::Tensor keys_of(const std::vector<std::uint64_t>& seeds, tf::Shape leading) {
  std::vector<std::int64_t> words;
  for (std::uint64_t s : seeds) {
    const tf::Tensor k = rnd::key(s);
    words.push_back(k.data<std::int64_t>()[0]);
    words.push_back(k.data<std::int64_t>()[1]);
  }
  leading.push_back(2);
  return tf::Tensor::from(words, std::move(leading));
}

template <class F>
tf::Tensor draw(F f, const tf::Tensor& key) {
  return tf::trace([&](T k) { return f(k); }, key).run({key}).at(0);
}

/// The keys of a stack [k, 2] built by `rnd::split` of a seed's key.
tf::Tensor split_keys(std::uint64_t seed, std::int64_t n) {
  return draw([n](T k) { return tf::stack(rnd::split(k, n)); }, rnd::key(seed));
}

// vmap over a stack of keys gives each key's own draw, bit for bit, for uniform (f32 and f64),
// bits and normal; the batched draw is one primitive (the stack of keys), not a loop.
TEST(VmapRandom, BatchedKeysGiveEachKeysDrawBitwise) {
  const std::vector<std::pair<std::string, std::function<T(T)>>> draws = {
      {"uniform f64", [](T k) { return rnd::uniform(k, {3, 5}); }},
      {"uniform f32", [](T k) { return rnd::uniform(k, {7}, tf::DType::F32); }},
      {"uniform f32 lo hi", [](T k) { return rnd::uniform(k, {5}, tf::DType::F32, -2.0, 3.0); }},
      {"bits", [](T k) { return rnd::bits(k, {9}); }},
      {"normal f64", [](T k) { return rnd::normal(k, {2, 3}); }},
      {"normal f32", [](T k) { return rnd::normal(k, {33}, tf::DType::F32); }},
  };
  for (const tf::Tensor& keys : {keys_of({1, 2, 3, 1000}, {4}), split_keys(7, 5)}) {
    for (const auto& [name, fn] : draws) {
      SCOPED_TRACE(name);
      const std::function<T(T)> f = fn;
      const tf::Tensor r = tf::vmap(f)(keys);
      const std::int64_t n = keys.shape()[0];
      ASSERT_EQ(r.shape()[0], n);
      for (std::int64_t i = 0; i < n; ++i) {
        const tf::Tensor ki = tf::test::example(keys, 0, i);
        EXPECT_TRUE(same_bits(tf::test::example(r, 0, i), draw(f, ki))) << "key " << i;
      }
      // Different keys, different streams.
      EXPECT_FALSE(same_bits(tf::test::example(r, 0, 0), tf::test::example(r, 0, 1)));
      const std::string ir = tf::trace([&](T k) { return tf::vmap(f)(k); }, keys).print();
      EXPECT_EQ(count_op(ir, "random_uniform") + count_op(ir, "random_bits"), 1u) << ir;
      EXPECT_EQ(count_op(ir, "slice"), 0u) << "a loop over the keys:\n" << ir;
    }
  }
}

// vmap of vmap over keys [2, 3, 2]: each of the six keys' draws; the same as the primitive on the
// stack of keys directly (result [2, 3, shape..]).
TEST(VmapRandom, NestedVmapOverAKeyGrid) {
  const tf::Tensor keys = keys_of({11, 12, 13, 21, 22, 23}, {2, 3});
  for (tf::DType dtype : {tf::DType::F64, tf::DType::F32}) {
    SCOPED_TRACE(tf::dtype_name(dtype));
    auto f = [dtype](T k) { return rnd::uniform(k, {4}, dtype); };
    auto inner = [&](T k) { return tf::vmap(f)(k); };
    const tf::Tensor r = tf::vmap(inner)(keys);
    ASSERT_EQ(r.shape(), (tf::Shape{2, 3, 4}));
    for (std::int64_t i = 0; i < 2; ++i) {
      for (std::int64_t j = 0; j < 3; ++j) {
        const tf::Tensor kij = tf::test::example(tf::test::example(keys, 0, i), 0, j);
        EXPECT_TRUE(same_bits(tf::test::example(tf::test::example(r, 0, i), 0, j), draw(f, kij))) << i << ", " << j;
      }
    }
    EXPECT_TRUE(same_bits(r, draw(f, keys)));  // the stack of keys, without vmap
  }
}

// Every function of tenferro/random.hpp under vmap with a batched key equals the loop over keys,
// bitwise (split, fold_in, bernoulli, categorical, permutation, dropout, and draws from derived
// keys).
TEST(VmapRandom, EveryRandomFunctionUnderVmap) {
  const tf::Tensor keys = keys_of({5, 6, 7}, {3});
  const tf::Tensor logits = random_tensor({8, 6}, 21), x = random_tensor({6}, 22);
  const std::vector<std::pair<std::string, std::function<T(T)>>> draws = {
      {"split", [](T k) { return tf::stack(rnd::split(k, 3), static_cast<std::int64_t>(k.rank()) - 1); }},
      {"uniform of a split key", [](T k) { return rnd::uniform(rnd::split(k, 4)[2], {5}); }},
      {"fold_in", [](T k) { return rnd::fold_in(k, 42); }},
      {"normal of a folded key", [](T k) { return rnd::normal(rnd::fold_in(k, 3), {4}); }},
      {"bernoulli", [](T k) { return tf::astype(rnd::bernoulli(k, 0.3, {40}), tf::DType::I64); }},
      {"categorical", [&](T k) { return rnd::categorical(k, tf::constant(k, logits)); }},
      {"categorical axis 0", [&](T k) { return rnd::categorical(k, tf::constant(k, logits), 0); }},
      {"permutation", [](T k) { return rnd::permutation(k, 8); }},
      {"dropout", [&](T k) { return tf::dropout(k, tf::constant(k, x), 0.5); }},
  };
  for (const auto& [name, fn] : draws) {
    SCOPED_TRACE(name);
    const std::function<T(T)> f = fn;
    const tf::Tensor r = tf::vmap(f)(keys);
    ASSERT_EQ(r.shape()[0], 3);
    for (std::int64_t i = 0; i < 3; ++i) {
      const tf::Tensor ki = tf::test::example(keys, 0, i);
      EXPECT_TRUE(same_bits(tf::test::example(r, 0, i), draw(f, ki))) << "key " << i;
    }
    EXPECT_FALSE(same_bits(tf::test::example(r, 0, 0), tf::test::example(r, 0, 1)));
    // Without vmap, the stack of keys gives the same (the functions take stacks of keys).
    EXPECT_TRUE(same_bits(r, draw(f, keys)));
  }
  // A batched key and a batched operand together: dropout of each example with its own key.
  const tf::Tensor xs = random_tensor({3, 6}, 23);
  auto drop = [](T k, T v) { return tf::dropout(k, v, 0.25); };
  const tf::Tensor d = tf::vmap(drop)(keys, xs);
  for (std::int64_t i = 0; i < 3; ++i) {
    const tf::Tensor ki = tf::test::example(keys, 0, i), xi = tf::test::example(xs, 0, i);
    EXPECT_TRUE(same_bits(tf::test::example(d, 0, i), tf::trace(drop, ki, xi).run({ki, xi})[0]));
  }
}

// A stack of many keys with long streams is split over the threads by (key, counter) pairs: the
// same bits on one thread and on two, and each key's block its own draw.
TEST(VmapRandom, StacksOfKeysAreThreadCountIndependent) {
  const tf::Tensor keys = split_keys(3, 6);
  auto f = [](T k) { return rnd::uniform(k, {5003}) + tf::astype(rnd::bits(k, {5003}), tf::DType::F64); };
  const int threads = tf::num_threads();
  tf::set_num_threads(1);
  const tf::Tensor one = draw(f, keys);
  tf::set_num_threads(2);
  const tf::Tensor two = draw(f, keys);
  tf::set_num_threads(threads);
  EXPECT_TRUE(same_bits(one, two));
  for (std::int64_t i = 0; i < 6; ++i) EXPECT_TRUE(same_bits(tf::test::example(one, 0, i), draw(f, tf::test::example(keys, 0, i)))) << "key " << i;
}

// The key check: a key that is not i64 is a DTypeError, one whose last axis is not 2 a ShapeError,
// each naming the op, the key's type and the expected types.
TEST(VmapRandom, KeyTypeErrorsAreTypedAndNameTheOp) {
  const tf::Tensor key = rnd::key(1);
  try {
    draw([](T k) { return rnd::uniform(tf::astype(k, tf::DType::F64), {2}); }, key);
    FAIL() << "expected DTypeError";
  } catch (const tf::DTypeError& e) {
    EXPECT_THAT(e.what(), HasSubstr("random_uniform"));
    EXPECT_THAT(e.what(), HasSubstr("f64[2]"));
    EXPECT_THAT(e.what(), HasSubstr("i64[k.., 2]"));
  }
  try {
    draw([](T k) { return rnd::bits(tf::reshape(tf::stack({k, k, k}), {3, 2, 1}), {2}); }, key);
    FAIL() << "expected ShapeError";
  } catch (const tf::ShapeError& e) {
    EXPECT_THAT(e.what(), HasSubstr("random_bits"));
    EXPECT_THAT(e.what(), HasSubstr("i64[3, 2, 1]"));
    EXPECT_THAT(e.what(), HasSubstr("i64[2]"));
  }
  // Under vmap the check sees the example's key: a batch of f64 "keys" is refused the same way.
  const tf::Tensor fkeys = random_tensor({3, 2}, 1);
  EXPECT_THROW(tf::vmap([](T k) { return rnd::uniform(k, {2}); })(fkeys), tf::DTypeError);
  // A bad word in one key of a stack names that key.
  const tf::Tensor bad = tf::Tensor::from(std::vector<std::int64_t>{1, 2, 3, -4}, {2, 2});
  try {
    draw([](T k) { return rnd::uniform(k, {2}); }, bad);
    FAIL() << "expected ValueError";
  } catch (const tf::ValueError& e) {
    EXPECT_THAT(e.what(), HasSubstr("key word 1 of key 1"));
  }
}

}  // namespace
