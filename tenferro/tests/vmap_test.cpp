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
    EXPECT_THAT(e.what(), HasSubstr("in_axes 2 of argument 0"));
  }
  EXPECT_THROW(tf::vmap(f, {.in_axes = {0}})(a, a), tf::BindingError);
  EXPECT_THROW(tf::vmap(f, {.in_axes = {std::nullopt, std::nullopt}})(a, a), tf::ValueError);
  EXPECT_THROW(tf::vmap(f, {.out_axes = {3}})(a, a), tf::ShapeError);
}

// ---- Jacobians as vmap of jvp / vjp ---------------------------------------------------------------

namespace {
T jac_f(T x, T a) { return tf::exp(x * a) * tf::sum(x) + tf::sin(x) * tf::sum(x * x); }
}  // namespace

// On Traced arguments jacfwd, jacrev and hessian are vmap over the coordinate vectors of the jvp,
// vjp and hvp programs: they agree with the column sweeps of the Tensor path, and column k equals
// the jvp along the k-th coordinate vector.
TEST(VmapJacobian, TracedJacobiansAgreeWithTheColumnSweeps) {
  const tf::Tensor x = random_tensor({4}, 30), a = random_tensor({4}, 31);
  const tf::Tensor jf = tf::trace([](T u, T v) { return tf::jacfwd(jac_f)(u, v); }, x, a).run({x, a})[0];
  const tf::Tensor jr = tf::trace([](T u, T v) { return tf::jacrev(jac_f)(u, v); }, x, a).run({x, a})[0];
  const tf::Tensor expected = tf::jacfwd(jac_f)(x, a);
  ASSERT_EQ(jf.shape(), (tf::Shape{4, 4}));
  expect_near(jf, expected, 1e-14);
  expect_near(jr, expected, 1e-14);
  for (std::int64_t k = 0; k < 4; ++k) {  // column k is the directional derivative along e_k
    std::vector<double> e(4, 0.0);
    e[static_cast<std::size_t>(k)] = 1.0;
    const tf::Tensor column = tf::jvp(jac_f, {x, a}, {tf::Tensor::from(e, {4}), tf::Tensor::zeros({4})}).second;
    for (std::int64_t i = 0; i < 4; ++i) EXPECT_NEAR(jf.data<double>()[i * 4 + k], column.data<double>()[i], 1e-14);
  }
  auto loss = [](T u, T v) { return tf::sum(tf::exp(u * v) * u) * tf::sum(u * u); };
  const tf::Tensor h = tf::trace([&](T u, T v) { return tf::hessian(loss)(u, v); }, x, a).run({x, a})[0];
  expect_near(h, tf::hessian(loss)(x, a), 1e-13);
  const auto ir = tf::trace([](T u, T v) { return tf::jacfwd(jac_f)(u, v); }, x, a).print();
  EXPECT_THAT(ir, testing::Not(HasSubstr(" slice("))) << "a loop over the columns";
}

// jacrev's rows are conj(J^H e_row): for a holomorphic function of complex arguments both modes
// give J = f'(z) (here diagonal, 2 a z).
TEST(VmapJacobian, ComplexJacobiansInBothModes) {
  const tf::Tensor z = tf::test::random_tensor({tf::DType::C128, {3}}, 32), a = tf::test::random_tensor({tf::DType::C128, {3}}, 33);
  auto f = [](T u, T v) { return u * u * v; };
  for (bool reverse : {false, true}) {
    const tf::Tensor j = tf::trace([&](T u, T v) { return reverse ? tf::jacrev(f)(u, v) : tf::jacfwd(f)(u, v); }, z, a).run({z, a})[0];
    for (std::int64_t i = 0; i < 3; ++i) {
      for (std::int64_t k = 0; k < 3; ++k) {
        const tf::c128 expected = i == k ? 2.0 * z.data<tf::c128>()[i] * a.data<tf::c128>()[i] : tf::c128{};
        EXPECT_NEAR(std::abs(j.data<tf::c128>()[i * 3 + k] - expected), 0.0, 1e-14) << (reverse ? "jacrev" : "jacfwd");
      }
    }
  }
}

// A batch of Jacobians (one per state, as for an ODE step's sensitivity) is vmap of jacfwd: equal
// to the Jacobians taken one state at a time.
TEST(VmapJacobian, VmapOfJacfwdIsABatchOfJacobians) {
  const tf::Tensor us = random_tensor({5, 3}, 34), w = random_tensor({3, 3}, 35);
  auto step = [](T u, T m) { return u + 0.1 * tf::tanh(tf::matmul(m, u)); };
  auto jac = [&](T u, T m) { return tf::jacfwd(step)(u, m); };
  const tf::Tensor js = tf::vmap(jac, {.in_axes = {0, std::nullopt}})(us, w);
  ASSERT_EQ(js.shape(), (tf::Shape{5, 3, 3}));
  for (std::int64_t i = 0; i < 5; ++i) expect_near(tf::test::example(js, 0, i), tf::jacfwd(step)(tf::test::example(us, 0, i), w), 1e-14);
  auto jac_rev = [&](T u, T m) { return tf::jacrev(step)(u, m); };
  expect_near(tf::vmap(jac_rev, {.in_axes = {0, std::nullopt}})(us, w), js, 1e-14);
}

// The traced jvp and vjp: vmap of jvp over tangents gives Jacobian columns, the vjp's cotangents
// satisfy the adjoint identity <J t, c> = <t, J^T c>, and a Jacobian inside a loss differentiates
// (to second order).
TEST(VmapJacobian, TracedJvpVjpAndDerivativesOfJacobians) {
  const tf::Tensor x = random_tensor({4}, 36), a = random_tensor({4}, 37), t = random_tensor({4}, 38), c = random_tensor({4}, 39);
  auto pair = [](T u, T v, T du, T cu) {
    const T jt = tf::jvp(jac_f, {u, v}, {du, tf::full_like(v, 0.0)}).second;
    const auto [value, cts] = tf::vjp(jac_f, {u, v}, cu);
    return tf::stack(std::vector<T>{tf::sum(jt * cu), tf::sum(du * cts[0])}, 0);
  };
  const tf::Tensor r = tf::trace(pair, x, a, t, c).run({x, a, t, c})[0];
  EXPECT_NEAR(r.data<double>()[0], r.data<double>()[1], 1e-13);
  auto loss = [](T u, T v) { return tf::sum(tf::jacfwd(jac_f)(u, v) * tf::jacrev(jac_f)(u, v)); };
  const std::vector<tf::Tensor> args = {x, a};
  const auto result = tidu::testkit::check_grads(
      tidu::testkit::function_of(tf::detail::trace_graph(loss, tf::detail::types_of(args))), std::span<const tf::Tensor>(args), 2);
  EXPECT_TRUE(result.ok) << result.message;
}

// Above a size (columns x values of the function) the Tensor path sweeps columns instead of
// running the batched program; both give the same Jacobian and Hessian.
TEST(VmapJacobian, TheColumnSweepAndTheBatchedProgramAgree) {
  const std::int64_t n = 300;
  const tf::Tensor x = random_tensor({n}, 40), a = random_tensor({n}, 41);
  auto loss = [](T u, T v) { return tf::sum(tf::exp(u * v) * u) * tf::sum(u * u); };
  expect_near(tf::jacfwd(jac_f)(x, a), tf::trace([](T u, T v) { return tf::jacfwd(jac_f)(u, v); }, x, a).run({x, a})[0], 1e-13);
  expect_near(tf::jacrev(jac_f)(x, a), tf::trace([](T u, T v) { return tf::jacrev(jac_f)(u, v); }, x, a).run({x, a})[0], 1e-13);
  expect_near(tf::hessian(loss)(x, a), tf::trace([&](T u, T v) { return tf::hessian(loss)(u, v); }, x, a).run({x, a})[0], 1e-12);
}
