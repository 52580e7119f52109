// vmap (tenferro/vmap.hpp): axes, composition with grad (per-example gradients, gradients of
// batched programs), nesting, batched ops being whole-batch ops, and errors. Every op's batching
// rule is checked against a loop over examples in op_coverage_test.cpp; here the results are
// compared with the same computation written per example or with a hand-written batch axis.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "tenferro/program.hpp"
#include "op_test_util.hpp"
#include "tenferro/tenferro.hpp"

namespace tf = tenferro;
using T = tf::Traced;
using testing::HasSubstr;

namespace {

tf::Tensor random_tensor(tf::Shape shape, std::uint64_t seed) {
  return tf::test::random_tensor({tf::DType::F64, std::move(shape)}, seed);
}

void expect_near(const tf::Tensor& a, const tf::Tensor& b, double tol = 1e-12) {
  ASSERT_EQ(a.shape(), b.shape());
  for (std::int64_t i = 0; i < a.numel(); ++i) {
    EXPECT_NEAR(a.data<double>()[i], b.data<double>()[i], tol * (1 + std::abs(b.data<double>()[i]))) << "element " << i;
  }
}

T mlp_loss(const T& w1, const T& w2, const T& x, const T& y) {
  const T h = tf::tanh(tf::matmul(x, w1));
  const T out = tf::matmul(h, w2);
  return tf::sum((out - y) * (out - y));
}

}  // namespace

TEST(Vmap, InAxesOutAxesAndSharedArguments) {
  const tf::Tensor w = random_tensor({3, 2}, 1);
  const tf::Tensor xs = random_tensor({3, 5}, 2);  // batch on axis 1
  auto f = [](T wi, T x) { return tf::matmul(x, wi); };  // x [3] -> [2]
  const tf::Tensor ys = tf::vmap(f, {.in_axes = {std::nullopt, 1}, .out_axes = {1}})(w, xs);
  ASSERT_EQ(ys.shape(), (tf::Shape{2, 5}));
  for (std::int64_t i = 0; i < 5; ++i) {
    const tf::Tensor xi = tf::test::example(xs, 1, i);
    expect_near(tf::test::example(ys, 1, i), tf::trace(f, w, xi).run({w, xi})[0]);
  }
  // Negative axes count from the end; axis_size batches a function of no batched argument.
  const tf::Tensor again = tf::vmap(f, {.in_axes = {std::nullopt, -1}, .out_axes = {-1}})(w, xs);
  expect_near(again, ys);
  const tf::Tensor repeated = tf::vmap([](T a) { return tf::sum(a); }, {.in_axes = {std::nullopt}, .axis_size = 4})(w);
  ASSERT_EQ(repeated.shape(), (tf::Shape{4}));
  double total = 0;
  for (std::int64_t k = 0; k < w.numel(); ++k) total += w.data<double>()[k];
  for (std::int64_t i = 0; i < 4; ++i) EXPECT_NEAR(repeated.data<double>()[i], total, 1e-14);
}

TEST(Vmap, PerExampleGradientsAreVmapOfGrad) {
  const tf::Tensor w1 = random_tensor({4, 8}, 3), w2 = random_tensor({8, 2}, 4);
  const tf::Tensor xs = random_tensor({6, 4}, 5), ys = random_tensor({6, 2}, 6);
  // One example: x [4], y [2] as rows of one.
  auto loss = [](T a, T b, T x, T y) { return mlp_loss(a, b, tf::reshape(x, {1, 4}), tf::reshape(y, {1, 2})); };
  auto per_example = tf::vmap(tf::grad(loss), {.in_axes = {std::nullopt, std::nullopt, 0, 0}});
  const tf::Tensor g = per_example(w1, w2, xs, ys);
  ASSERT_EQ(g.shape(), (tf::Shape{6, 4, 8}));
  for (std::int64_t i = 0; i < 6; ++i) {
    const tf::Tensor gi = tf::grad(loss)(w1, w2, tf::test::example(xs, 0, i), tf::test::example(ys, 0, i));
    expect_near(tf::test::example(g, 0, i), gi);
  }
  // The gradient of the batch's summed loss is the sum of the per-example gradients.
  auto batch_loss = [&](T a, T b, T x, T y) {
    return tf::sum(tf::vmap(loss, {.in_axes = {std::nullopt, std::nullopt, 0, 0}})(a, b, x, y));
  };
  const tf::Tensor total = tf::grad(batch_loss)(w1, w2, xs, ys);
  const tf::Tensor summed = tf::trace([](T a) { return tf::sum(a, {0}); }, g).run({g})[0];
  expect_near(total, summed);
  expect_near(total, tf::grad([](T a, T b, T x, T y) { return mlp_loss(a, b, x, y); })(w1, w2, xs, ys));
}

TEST(Vmap, NestedVmapIsADoubleLoop) {
  const tf::Tensor a = random_tensor({2, 3, 4}, 7), b = random_tensor({4}, 8);
  auto f = [](T x, T y) { return tf::sum(tf::sin(x) * y); };  // x [4], y [4]
  auto inner = [&](T x, T y) { return tf::vmap(f, {.in_axes = {0, std::nullopt}})(x, y); };
  const tf::Tensor r = tf::vmap(inner, {.in_axes = {0, std::nullopt}})(a, b);
  ASSERT_EQ(r.shape(), (tf::Shape{2, 3}));
  for (std::int64_t i = 0; i < 2; ++i) {
    for (std::int64_t j = 0; j < 3; ++j) {
      const tf::Tensor x = tf::test::example(tf::test::example(a, 0, i), 0, j);
      EXPECT_NEAR(r.data<double>()[i * 3 + j], tf::trace(f, x, b).run({x, b})[0].item<double>(), 1e-14);
    }
  }
}

TEST(Vmap, ABatchedMatmulIsOneContraction) {
  const tf::Tensor ws = random_tensor({5, 3, 3}, 9), x = random_tensor({3}, 10);
  auto f = [](T w, T v) { return tf::matmul(w, v); };
  auto batched = [&](T w, T v) { return tf::vmap(f, {.in_axes = {0, std::nullopt}})(w, v); };
  const tf::Program p = tf::trace(batched, ws, x);
  const std::string ir = p.print();
  std::size_t dots = 0;
  for (std::size_t at = ir.find("dot_general"); at != std::string::npos; at = ir.find("dot_general", at + 1)) ++dots;
  EXPECT_EQ(dots, 1u) << ir;
  EXPECT_THAT(ir, testing::Not(HasSubstr("slice"))) << "a loop over the batch";
  const tf::Tensor r = p.run({ws, x})[0];
  for (std::int64_t i = 0; i < 5; ++i) {
    const tf::Tensor wi = tf::test::example(ws, 0, i);
    expect_near(tf::test::example(r, 0, i), tf::trace(f, wi, x).run({wi, x})[0]);
  }
}

// The tropical products batch like dot_general (one product with a batch dimension), both outputs
// of the index variant included; the same kernel runs, so the values are equal bit for bit.
TEST(Vmap, TropicalProductsAreOneBatchedProduct) {
  const tf::DotDims matmul{{}, {}, {1}, {0}};
  const tf::Tensor as = random_tensor({4, 2, 3}, 21), b = random_tensor({3, 2}, 22), bs = random_tensor({4, 3, 2}, 23);
  auto f = [&](T x, T y) {
    auto [v, k] = tf::semiring_dot_general_index(x, y, tf::Semiring::MaxPlus, matmul);
    return tf::semiring_dot_general(x, y, tf::Semiring::MinPlus, matmul) + v + tf::astype(k, tf::DType::F64);
  };
  using Axes = std::vector<std::optional<std::int64_t>>;
  for (const Axes& axes : {Axes{0, std::nullopt}, Axes{std::nullopt, 0}, Axes{0, 0}}) {
    const tf::Tensor x = axes[0] ? as : tf::test::example(as, 0, 0), y = axes[1] ? bs : b;
    auto batched = [&](T u, T v) { return tf::vmap(f, {.in_axes = axes})(u, v); };
    const tf::Program p = tf::trace(batched, x, y);
    EXPECT_THAT(p.print(), testing::Not(HasSubstr("slice"))) << "a loop over the batch";
    const tf::Tensor r = p.run({x, y})[0];
    for (std::int64_t i = 0; i < 4; ++i) {
      const tf::Tensor xi = axes[0] ? tf::test::example(x, 0, i) : x, yi = axes[1] ? tf::test::example(y, 0, i) : y;
      expect_near(tf::test::example(r, 0, i), tf::trace(f, xi, yi).run({xi, yi})[0], 0);
    }
  }
}

TEST(Vmap, AForiLoopIsOneBatchedScan) {
  const tf::Tensor c0 = random_tensor({4, 2}, 11);
  auto f = [](T c) {
    return tf::fori_loop(0, 3, [](const T&, const tf::TracedList& carry) { return tf::TracedList{tf::sin(carry[0]) + carry[0]}; },
                         {c})[0];
  };
  const tf::Tensor r = tf::vmap(f)(c0);
  for (std::int64_t i = 0; i < 4; ++i) {
    const tf::Tensor ci = tf::test::example(c0, 0, i);
    expect_near(tf::test::example(r, 0, i), tf::trace(f, ci).run({ci})[0]);
  }
}

TEST(Vmap, BadAxesAndSizesNameTheArgument) {
  const tf::Tensor a = random_tensor({3, 2}, 1), b = random_tensor({4, 2}, 2);
  auto f = [](T x, T y) { return x + y; };
  try {
    tf::vmap(f)(a, b);
    ADD_FAILURE() << "mismatched batch sizes were accepted";
  } catch (const tf::ShapeError& e) {
    EXPECT_THAT(e.what(), HasSubstr("argument 1"));
    EXPECT_THAT(e.what(), HasSubstr("[4, 2]"));
  }
  try {
    tf::vmap(f, {.in_axes = {2, 0}})(a, a);
    ADD_FAILURE() << "an axis out of range was accepted";
  } catch (const tf::ShapeError& e) {
    EXPECT_THAT(e.what(), HasSubstr("in_axes[0] = 2"));
  }
  EXPECT_THROW(tf::vmap(f, {.in_axes = {0}})(a, a), tf::BindingError);
  EXPECT_THROW(tf::vmap(f, {.in_axes = {std::nullopt, std::nullopt}})(a, a), tf::ValueError);
  EXPECT_THROW(tf::vmap(f, {.out_axes = {3}})(a, a), tf::ShapeError);
}
