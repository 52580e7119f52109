// tidu::Transforms (transforms.hpp): jvp, vjp, grad, value_and_grad, hvp, jacfwd, jacrev and
// hessian against closed forms and finite differences; jacfwd == jacrev; compile-cache reuse.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "scalar_helpers.hpp"
#include "tidu/testing/random_scalar_dag.hpp"

namespace {

using namespace tidutest;
using Values = std::vector<Number>;
using Transforms = tidu::Transforms<ScalarOp>;
namespace kit = tidu::testkit;

// f(x, y) = [sin(x) y, exp(x / y)]
GraphPtr two_outputs() {
  ScalarGraph g;
  auto x = g.input("x"), y = g.input("y");
  auto first = g.mul(g.sin(x), y);
  auto second = g.exp(g.div(x, y));
  g.output(first);
  g.output(second);
  return g.finish();
}

// g(x, y) = sin(x) exp(y) + x y
GraphPtr scalar_loss() {
  ScalarGraph g;
  auto x = g.input("x"), y = g.input("y");
  auto first = g.mul(g.sin(x), g.exp(y));
  g.output(g.add(first, g.mul(x, y)));
  return g.finish();
}

constexpr double X = 0.7, Y = -1.3;

/// Jacobian of two_outputs() at (X, Y).
double jacobian(int i, int j) {
  const double e = std::exp(X / Y);
  const double J[2][2] = {{std::cos(X) * Y, std::sin(X)}, {e / Y, -X * e / (Y * Y)}};
  return J[i][j];
}

/// Hessian of scalar_loss() at (X, Y).
double hessian(int i, int j) {
  const double s = std::sin(X) * std::exp(Y), c = std::cos(X) * std::exp(Y);
  const double H[2][2] = {{-s, c + 1}, {c + 1, s}};
  return H[i][j];
}

TEST(Transforms, EvalJvpAndVjpMatchClosedForms) {
  Transforms ad;
  auto f = two_outputs();
  const Values x{X, Y};
  auto y = ad.eval(f, x);
  ASSERT_EQ(y.size(), 2u);
  EXPECT_TRUE(near(y[0], std::sin(X) * Y));
  EXPECT_TRUE(near(y[1], std::exp(X / Y)));

  const double dx = 0.3, dy = -0.2;
  auto [values, tangents] = ad.jvp(f, x, Values{dx, dy});
  EXPECT_TRUE(near(values[1], std::exp(X / Y)));
  for (int i = 0; i < 2; ++i) EXPECT_TRUE(near(tangents[i], jacobian(i, 0) * dx + jacobian(i, 1) * dy));

  const double c0 = 0.7, c1 = -1.1;
  auto [primal, cotangents] = ad.vjp(f, x, Values{c0, c1});
  EXPECT_TRUE(near(primal[0], std::sin(X) * Y));
  for (int j = 0; j < 2; ++j) EXPECT_TRUE(near(cotangents[j], jacobian(0, j) * c0 + jacobian(1, j) * c1));
}

TEST(Transforms, GradAndValueAndGrad) {
  Transforms ad;
  auto g = scalar_loss();
  const Values x{X, Y};
  auto [value, grad] = ad.value_and_grad(g, x);
  EXPECT_TRUE(near(value, std::sin(X) * std::exp(Y) + X * Y));
  EXPECT_TRUE(near(grad[0], std::cos(X) * std::exp(Y) + Y));
  EXPECT_TRUE(near(grad[1], std::sin(X) * std::exp(Y) + X));
  auto again = ad.grad(g, x);
  EXPECT_EQ(again, grad);
}

TEST(Transforms, HvpMatchesClosedFormAndFiniteDifferencesOfTheGradient) {
  Transforms ad;
  auto g = scalar_loss();
  const Values x{X, Y};
  const double v0 = 0.4, v1 = 0.9, h = 1e-5;
  auto hv = ad.hvp(g, x, Values{v0, v1});
  auto plus = ad.grad(g, Values{X + h * v0, Y + h * v1});
  auto minus = ad.grad(g, Values{X - h * v0, Y - h * v1});
  for (int i = 0; i < 2; ++i) {
    EXPECT_TRUE(near(hv[i], hessian(i, 0) * v0 + hessian(i, 1) * v1));
    EXPECT_TRUE(near(hv[i], (plus[i].z - minus[i].z) / (2 * h), 1e-8));
  }
}

TEST(Transforms, JacobiansAndHessianMatchClosedForms) {
  Transforms ad;
  const Values x{X, Y};
  auto jf = ad.jacfwd(two_outputs(), x);
  auto jr = ad.jacrev(two_outputs(), x);
  ASSERT_EQ(jf.rows, 2u);
  ASSERT_EQ(jf.cols, 2u);
  ASSERT_EQ(jr.rows, 2u);
  ASSERT_EQ(jr.cols, 2u);
  auto H = ad.hessian(scalar_loss(), x);
  ASSERT_EQ(H.rows, 2u);
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 2; ++j) {
      EXPECT_NEAR(jf(i, j).real(), jacobian(i, j), 1e-12);
      EXPECT_NEAR(std::abs(jf(i, j) - jr(i, j)), 0.0, 1e-12);
      EXPECT_NEAR(H(i, j).real(), hessian(i, j), 1e-12);
    }
  }
}

// For holomorphic functions jacfwd and jacrev agree (jacrev conjugates the adjoint's rows):
// h(z, c) = exp(c z) z, with dh/dz = exp(cz) (1 + cz) and dh/dc = z^2 exp(cz).
TEST(Transforms, JacfwdEqualsJacrevForHolomorphicComplexFunctions) {
  ScalarGraph g;
  auto z = g.input("z", DType::Complex), c = g.input("c", DType::Complex);
  g.output(g.mul(g.exp(g.mul(c, z)), z));
  auto h = g.finish();
  Transforms ad;
  const cd zv(0.4, -0.3), cv(1.1, 0.6);
  auto jf = ad.jacfwd(h, Values{zv, cv});
  auto jr = ad.jacrev(h, Values{zv, cv});
  const cd e = std::exp(cv * zv);
  EXPECT_NEAR(std::abs(jf(0, 0) - e * (1.0 + cv * zv)), 0.0, 1e-12);
  EXPECT_NEAR(std::abs(jf(0, 1) - zv * zv * e), 0.0, 1e-12);
  for (int j = 0; j < 2; ++j) EXPECT_NEAR(std::abs(jf(0, j) - jr(0, j)), 0.0, 1e-12);
}

// jacfwd == jacrev on random real DAGs, and the columns match finite differences.
TEST(Transforms, JacfwdEqualsJacrevOnRandomDags) {
  Transforms ad;
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    kit::RandomDagOptions opts;
    opts.ops = 40;
    opts.seed = seed;
    opts.outputs = 3;
    auto dag = kit::random_scalar_dag(opts);
    auto jf = ad.jacfwd(dag.graph, dag.args);
    auto jr = ad.jacrev(dag.graph, dag.args);
    ASSERT_EQ(jf.rows, jr.rows);
    ASSERT_EQ(jf.cols, dag.args.size());
    for (std::size_t j = 0; j < jf.cols; ++j) {
      const double h = 1e-6;
      Values plus = dag.args, minus = dag.args;
      plus[j].z += h;
      minus[j].z -= h;
      auto yp = ad.eval(dag.graph, plus), ym = ad.eval(dag.graph, minus);
      for (std::size_t i = 0; i < jf.rows; ++i) {
        EXPECT_NEAR(std::abs(jf(i, j) - jr(i, j)), 0.0, 1e-10 * std::max(1.0, std::abs(jf(i, j))));
        const double fd = (yp[i].z.real() - ym[i].z.real()) / (2 * h);
        EXPECT_NEAR(jf(i, j).real(), fd, 1e-6 * std::max(1.0, std::abs(fd)));
      }
    }
  }
}

// Outputs that do not depend on the arguments get zero tangents; arguments no output depends on
// get zero cotangents (of their dtype).
TEST(Transforms, IndependentOutputsAndArgumentsGetZeros) {
  ScalarGraph g;
  auto x = g.input("x");
  g.input("unused", DType::Complex);
  g.output(g.mul(x, x));
  g.output(g.constant(3.0));
  auto f = g.finish();
  Transforms ad;
  const Values args{0.5, cd(1, 1)};
  auto [values, tangents] = ad.jvp(f, args, Values{1.0, cd(2, 0)});
  EXPECT_TRUE(near(tangents[0], 1.0));
  EXPECT_EQ(tangents[1], Number(0.0));
  EXPECT_TRUE(near(values[1], 3.0));
  auto [primal, cotangents] = ad.vjp(f, args, Values{2.0, 5.0});
  EXPECT_TRUE(near(cotangents[0], 2.0));
  EXPECT_EQ(cotangents[1], Number(cd(0, 0)));
}

// H v where some gradient is absent (an unused argument) or constant (a linear argument): results
// stay aligned with the arguments. g(x, u, y, w) = x y + w, u unused: H v = (v_y, 0, v_x, 0).
TEST(Transforms, HvpStaysAlignedWhenGradientsAreAbsentOrConstant) {
  ScalarGraph g;
  auto x = g.input("x");
  g.input("u");
  auto y = g.input("y"), w = g.input("w");
  auto xy = g.mul(x, y);
  g.output(g.add(xy, w));
  auto f = g.finish();
  Transforms ad;
  auto hv = ad.hvp(f, Values{0.5, 0.7, 2.0, -1.0}, Values{1.0, 10.0, 100.0, 1000.0});
  ASSERT_EQ(hv.size(), 4u);
  EXPECT_TRUE(near(hv[0], 100.0));
  EXPECT_TRUE(near(hv[1], 0.0));
  EXPECT_TRUE(near(hv[2], 1.0));
  EXPECT_TRUE(near(hv[3], 0.0));
  auto H = ad.hessian(f, Values{0.5, 0.7, 2.0, -1.0});
  EXPECT_EQ(H(0, 2), cd(1.0));
  EXPECT_EQ(H(2, 0), cd(1.0));
  EXPECT_EQ(H(1, 1), cd(0.0));
}

// A loss that does not depend on its arguments has zero gradient and zero Hessian.
TEST(Transforms, ConstantLossHasZeroGradientAndHessian) {
  ScalarGraph g;
  g.input("x");
  g.output(g.constant(2.0));
  auto f = g.finish();
  Transforms ad;
  EXPECT_EQ(ad.grad(f, Values{0.5})[0], Number(0.0));
  EXPECT_EQ(ad.hvp(f, Values{0.5}, Values{1.0})[0], Number(0.0));
  EXPECT_EQ(ad.hessian(f, Values{0.5})(0, 0), cd(0.0));
}

// set_wrt differentiates a subset of the arguments; the others get zero derivatives.
TEST(Transforms, SetWrtDifferentiatesOnlyTheChosenArguments) {
  Transforms ad;
  auto g = scalar_loss();
  ad.set_wrt(g, {true, false});
  const Values x{X, Y};
  auto grad = ad.grad(g, x);
  EXPECT_TRUE(near(grad[0], std::cos(X) * std::exp(Y) + Y));
  EXPECT_EQ(grad[1], Number(0.0));
  auto [values, tangents] = ad.jvp(g, x, Values{0.5, 7.0});
  EXPECT_TRUE(near(tangents[0], (std::cos(X) * std::exp(Y) + Y) * 0.5));
  auto hv = ad.hvp(g, x, Values{1.0, 1.0});
  EXPECT_TRUE(near(hv[0], hessian(0, 0)));
  EXPECT_EQ(hv[1], Number(0.0));
  EXPECT_THROW(ad.set_wrt(g, {true, true}), computegraph::Error);
}

TEST(Transforms, RepeatedCallsCompileNothingNew) {
  Transforms ad;
  auto g = scalar_loss();
  const Values x{X, Y};
  ad.grad(g, x);
  ad.hvp(g, x, Values{1.0, 0.0});
  const auto misses = ad.cache_stats().misses;
  EXPECT_GT(misses, 0u);
  for (int i = 0; i < 3; ++i) {
    ad.grad(g, Values{X + i, Y});
    ad.hvp(g, x, Values{0.0, 1.0});
    ad.hessian(g, x);
  }
  EXPECT_EQ(ad.cache_stats().misses, misses);
}

// A second graph with the same structure has the same keys, so its programs come from the cache.
TEST(Transforms, StructurallyEqualFunctionsShareCompiledPrograms) {
  Transforms ad;
  const Values x{X, Y};
  auto first = ad.grad(scalar_loss(), x);
  const auto before = ad.cache_stats();
  auto second = ad.grad(scalar_loss(), x);
  const auto after = ad.cache_stats();
  EXPECT_EQ(first, second);
  EXPECT_EQ(after.misses, before.misses);
  EXPECT_GT(after.hits, before.hits);
}

}  // namespace
