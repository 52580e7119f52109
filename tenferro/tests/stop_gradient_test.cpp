// stop_gradient: the value passes unchanged, the derivative is zero in every mode and order, and
// the logsumexp family, which detaches its max shift with it, has the exact softmax gradient.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "computegraph/printer.hpp"
#include "op_test_util.hpp"
#include "tenferro/tenferro.hpp"

namespace tf = tenferro;

TEST(StopGradient, ValueIsUnchangedAndDerivativesVanish) {
  const tf::Tensor x = tf::Tensor::from({0.5, -1.5, 2.0});
  auto identity = [](tf::Traced a) { return tf::stop_gradient(a); };
  EXPECT_TRUE(tf::test::near(tf::trace(identity, x).run({x})[0], x, 0.0));
  // f(x) = sum(sg(x) * x): df = sg(x), so the gradient is x (not 2x) and the Hessian is zero.
  auto f = [](tf::Traced a) { return tf::sum(tf::stop_gradient(a) * a); };
  EXPECT_TRUE(tf::test::near(tf::grad(f)(x), x, 0.0));
  const tf::Tensor h = tf::hessian(f)(x);
  EXPECT_TRUE(tf::test::near(h, tf::Tensor(tf::TensorType{tf::DType::F64, {3, 3}}), 0.0));
  // Forward mode: the tangent of stop_gradient(x) * 3 is zero.
  auto g = [](tf::Traced a) { return tf::stop_gradient(a) * 3.0; };
  const auto [y, t] = tf::jvp(g, {x}, {tf::Tensor::from({1.0, 1.0, 1.0})});
  EXPECT_TRUE(tf::test::near(y, tf::Tensor::from({1.5, -4.5, 6.0}), 0.0));
  EXPECT_TRUE(tf::test::near(t, tf::Tensor::from({0.0, 0.0, 0.0}), 0.0));
  // Reverse mode through a vjp of a stopped output.
  const auto [v, ct] = tf::vjp(g, {x}, tf::Tensor::from({1.0, 2.0, 3.0}));
  EXPECT_TRUE(tf::test::near(ct[0], tf::Tensor::from({0.0, 0.0, 0.0}), 0.0));
}

TEST(StopGradient, ComplexAndSecondOrderThroughOtherPaths) {
  // f(z) = re(sum(conj(z) * sg(z) * z)): d/dz treats sg(z) as a constant c, f = re(sum(c |z|^2)).
  const tf::Tensor z = tf::Tensor::from(std::vector<tf::c128>{{0.5, 1.0}, {-1.0, 0.25}}, {2});
  auto f = [](tf::Traced a) { return tf::real(tf::sum(tf::conj(a) * tf::stop_gradient(a) * a)); };
  const tf::Tensor g = tf::grad(f)(z);
  // df = re(sum(c (conj(dz) z + conj(z) dz))) = <2 re(c) z, dz>: the gradient is 2 re(z) z.
  for (std::int64_t i = 0; i < 2; ++i) {
    const tf::c128 zi = z.element(i);
    EXPECT_NEAR(std::abs(g.element(i) - 2.0 * zi.real() * zi), 0.0, 1e-15) << i;
  }
}

TEST(StopGradient, LogsumexpGradientIsSoftmaxEvenAtTheMaximum) {
  // Long single-precision rows: were the shift differentiated, the gradient at each row's maximum
  // would carry n (1 - sum(softmax)) of rounding, which cancels only in exact arithmetic.
  const std::int64_t rows = 2, n = 20011;
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(-3.0, 3.0);
  std::vector<float> xs(static_cast<std::size_t>(rows * n));
  for (auto& v : xs) v = static_cast<float>(u(rng));
  xs[17] = 9.0f;  // clear maxima
  xs[static_cast<std::size_t>(n + 5)] = 9.0f;
  const tf::Tensor x = tf::Tensor::from(xs, {rows, n});
  auto lse = [](tf::Traced a) { return tf::sum(tf::logsumexp(a, {1})); };
  const tf::Tensor g = tf::grad(lse)(x);
  double worst = 0;
  for (std::int64_t r = 0; r < rows; ++r) {  // each row's softmax in double precision
    const float* row = xs.data() + r * n;
    double s = 0.0;
    for (std::int64_t i = 0; i < n; ++i) s += std::exp(static_cast<double>(row[i]) - 9.0);
    for (std::int64_t i = 0; i < n; ++i) {
      const double want = std::exp(static_cast<double>(row[i]) - 9.0) / s;
      worst = std::max(worst, std::abs(g.element(r * n + i).real() - want));
    }
  }
  // f32 rounding of the softmax itself is about 1e-7 here; the differentiated shift added 2e-6.
  EXPECT_LT(worst, 5e-7);
}

TEST(StopGradient, PrintsAndCompilesToNoStep) {
  auto f = [](tf::Traced a) { return tf::exp(tf::stop_gradient(a)); };
  const tf::Tensor x = tf::Tensor::from({1.0, 2.0});
  const auto program = tf::trace(f, x);
  EXPECT_THAT(program.print(), testing::HasSubstr("stop_gradient"));
  EXPECT_TRUE(tf::test::near(program.run({x})[0], tf::Tensor::from({std::exp(1.0), std::exp(2.0)}), 1e-15));
}
