// Vector and matrix norms on traced tensors: values against closed forms (without overflow at
// extreme magnitudes), NumPy's orders (negative and infinite ones), empty input as NumPy has it,
// and derivatives by check_grads to order 2 away from the non-differentiable points.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <random>

#include "tenferro/tenferro.hpp"
#include "tenferro/program.hpp"
#include "tenferro/operand_space.hpp"
#include "tidu/testing/check.hpp"

namespace tf = tenferro;
using T = tf::Traced;
using testing::HasSubstr;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(Norms, ValuesMatchClosedFormsWithoutOverflowAndGradientsPassCheckGrads) {
  auto run = [](const std::function<T(T)>& f, const tf::Tensor& x) { return tf::trace(f, x).run({x})[0]; };
  const tf::Tensor v = tf::Tensor::from(std::vector<double>{3, -4, 0, 12}, {4});
  EXPECT_DOUBLE_EQ(run([](T x) { return tf::vector_norm(x); }, v).item<double>(), 13.0);
  EXPECT_DOUBLE_EQ(run([](T x) { return tf::vector_norm(x, 1); }, v).item<double>(), 19.0);
  EXPECT_DOUBLE_EQ(run([](T x) { return tf::vector_norm(x, kInf); }, v).item<double>(), 12.0);
  EXPECT_DOUBLE_EQ(run([](T x) { return tf::vector_norm(x, -kInf); }, v).item<double>(), 0.0);
  EXPECT_DOUBLE_EQ(run([](T x) { return tf::vector_norm(x, 0); }, v).item<double>(), 3.0);
  EXPECT_NEAR(run([](T x) { return tf::vector_norm(x, 3); }, v).item<double>(), std::cbrt(27.0 + 64 + 1728), 1e-13);
  // No overflow or underflow in the squares.
  const tf::Tensor huge = tf::Tensor::from(std::vector<double>{3e200, 4e200}, {2});
  EXPECT_DOUBLE_EQ(run([](T x) { return tf::vector_norm(x); }, huge).item<double>(), 5e200);
  const tf::Tensor tiny = tf::Tensor::from(std::vector<double>{3e-200, -4e-200}, {2});
  EXPECT_DOUBLE_EQ(run([](T x) { return tf::vector_norm(x); }, tiny).item<double>(), 5e-200);
  // Complex: |3+4i| = 5; over chosen axes.
  const tf::Tensor z = tf::Tensor::from(std::vector<tf::c128>{{3, 4}, {0, 0}, {1, 0}, {0, -1}}, {2, 2});
  const tf::Tensor rows = run([](T x) { return tf::vector_norm(x, 2, {1}); }, z);
  EXPECT_EQ(rows.dtype(), tf::DType::F64);
  EXPECT_DOUBLE_EQ(rows.data<double>()[0], 5.0);
  EXPECT_DOUBLE_EQ(rows.data<double>()[1], std::sqrt(2.0));
  // Matrix norms of [[1, -2], [3, 4]]: column sums 4, 6; row sums 3, 7; Frobenius sqrt(30).
  const tf::Tensor m = tf::Tensor::from(std::vector<double>{1, -2, 3, 4}, {2, 2});
  EXPECT_DOUBLE_EQ(run([](T x) { return tf::matrix_norm(x); }, m).item<double>(), std::sqrt(30.0));
  EXPECT_DOUBLE_EQ(run([](T x) { return tf::matrix_norm(x, 1); }, m).item<double>(), 6.0);
  EXPECT_DOUBLE_EQ(run([](T x) { return tf::matrix_norm(x, -1); }, m).item<double>(), 4.0);
  EXPECT_DOUBLE_EQ(run([](T x) { return tf::matrix_norm(x, kInf); }, m).item<double>(), 7.0);
  EXPECT_DOUBLE_EQ(run([](T x) { return tf::matrix_norm(x, -kInf); }, m).item<double>(), 3.0);
  // Singular values of a 2 x 2 matrix in closed form: s^2 = (F ± sqrt(F^2 - 4 det^2)) / 2 with
  // F = |m|_F^2 = 30 and det = 10.
  const double s_hi = std::sqrt((30.0 + std::sqrt(900.0 - 400.0)) / 2), s_lo = std::sqrt((30.0 - std::sqrt(500.0)) / 2);
  EXPECT_NEAR(run([](T x) { return tf::matrix_norm(x, 2); }, m).item<double>(), s_hi, 1e-14);
  EXPECT_NEAR(run([](T x) { return tf::matrix_norm(x, -2); }, m).item<double>(), s_lo, 1e-14);
  EXPECT_NEAR(run([](T x) { return tf::matrix_norm(x, "nuc"); }, m).item<double>(), s_hi + s_lo, 1e-14);
  EXPECT_NEAR(run([](T x) { return tf::linalg::matrix_norm(x, "nuc"); }, m).item<double>(), s_hi + s_lo, 1e-14);
  EXPECT_THROW(tf::trace([](T x) { return tf::matrix_norm(x, "max"); }, m), tf::ValueError);
  EXPECT_THROW(tf::trace([](T x) { return tf::matrix_norm(x); }, v), tf::ShapeError);
  EXPECT_THROW(tf::trace([](T x) { return tf::vector_norm(x, kNaN); }, v), tf::ValueError);
  // The gradient of the 2-norm is x / |x|, and 0 at x = 0.
  const tf::Tensor g = tf::grad([](T x) { return tf::vector_norm(x); })(v);
  EXPECT_DOUBLE_EQ(g.data<double>()[0], 3.0 / 13);
  EXPECT_DOUBLE_EQ(g.data<double>()[3], 12.0 / 13);
  const tf::Tensor g0 = tf::grad([](T x) { return tf::vector_norm(x); })(tf::Tensor::zeros({3}));
  for (int i = 0; i < 3; ++i) EXPECT_EQ(g0.data<double>()[i], 0.0);
  // check_grads to order 2, real and complex.
  struct Case {
    const char* name;
    std::function<T(T, T)> f;
    bool complex_ok;
  };
  const Case cases[] = {
      {"vector_norm 2", [](T a, T b) { return tf::vector_norm(a * b); }, true},
      {"vector_norm 3 over an axis", [](T a, T b) { return tf::sum(tf::vector_norm(a + b, 3, {0})); }, true},
      {"vector_norm 1", [](T a, T b) { return tf::vector_norm(a * b + 2.0, 1); }, false},
      {"matrix_norm fro", [](T a, T b) { return tf::matrix_norm(tf::reshape(a * b, {2, 2})); }, true},
      {"matrix_norm inf", [](T a, T b) { return tf::matrix_norm(tf::reshape(a * b, {2, 2}) + 3.0, kInf); }, false},
  };
  for (const Case& c : cases) {
    for (tf::DType dtype : {tf::DType::F64, tf::DType::C128}) {
      if (dtype == tf::DType::C128 && !c.complex_ok) continue;
      SCOPED_TRACE(std::string(c.name) + " " + tf::dtype_name(dtype));
      std::vector<tf::c128> a(4), b(4);
      std::mt19937_64 rng(41);
      std::uniform_real_distribution<double> u(0.2, 1.0);
      for (auto& x : a) x = tf::c128(u(rng), dtype == tf::DType::C128 ? u(rng) : 0.0);
      for (auto& x : b) x = tf::c128(u(rng), dtype == tf::DType::C128 ? u(rng) : 0.0);
      std::vector<tf::Tensor> args;
      if (dtype == tf::DType::F64) {
        std::vector<double> ra, rb;
        for (auto x : a) ra.push_back(x.real());
        for (auto x : b) rb.push_back(x.real());
        args = {tf::Tensor::from(ra, {4}), tf::Tensor::from(rb, {4})};
      } else {
        args = {tf::Tensor::from(a, {4}), tf::Tensor::from(b, {4})};
      }
      auto graph = tf::detail::trace_graph(c.f, tf::detail::types_of(args));
      auto result = tidu::testkit::check_grads(tidu::testkit::function_of(graph), std::span<const tf::Tensor>(args), 2);
      EXPECT_TRUE(result.ok) << result.message;
    }
  }
}

TEST(Norms, NegativeOrdersAreNumPysAndDifferentiableAwayFromZeros) {
  auto run = [](const std::function<T(T)>& f, const tf::Tensor& x) { return tf::trace(f, x).run({x})[0]; };
  // sum(|x|^p)^(1/p) in closed form; -inf is min |x|.
  const tf::Tensor v = tf::Tensor::from(std::vector<double>{3, -4, 0.5, 12}, {4});
  EXPECT_NEAR(run([](T x) { return tf::vector_norm(x, -1); }, v).item<double>(), 1 / (1.0 / 3 + 0.25 + 2 + 1.0 / 12), 1e-15);
  EXPECT_NEAR(run([](T x) { return tf::vector_norm(x, -2); }, v).item<double>(),
              1 / std::sqrt(1.0 / 9 + 1.0 / 16 + 4 + 1.0 / 144), 1e-15);
  EXPECT_NEAR(run([](T x) { return tf::vector_norm(x, -0.5); }, v).item<double>(),
              std::pow(std::pow(3, -0.5) + 0.5 + std::pow(0.5, -0.5) + std::pow(12, -0.5), -2.0), 1e-15);
  EXPECT_EQ(run([](T x) { return tf::vector_norm(x, -kInf); }, v).item<double>(), 0.5);
  // Tiny magnitudes: |x|^-2 would overflow unscaled.
  const tf::Tensor tiny = tf::Tensor::from(std::vector<double>{3e-200, 4e-200}, {2});
  EXPECT_NEAR(run([](T x) { return tf::vector_norm(x, -2); }, tiny).item<double>(), 2.4e-200, 1e-214);
  // A zero entry: |0|^p = inf, so the norm is 0 (NumPy's value), with gradient 0.
  const tf::Tensor z = tf::Tensor::from(std::vector<double>{0, 2, -3}, {3});
  EXPECT_EQ(run([](T x) { return tf::vector_norm(x, -1.5); }, z).item<double>(), 0.0);
  const tf::Tensor gz = tf::grad([](T x) { return tf::vector_norm(x, -1.5); })(z);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(gz.data<double>()[i], 0.0);
  // The gradient of a p-norm, p > 0 below 1, at a zero entry is 0 there (PyTorch's subgradient),
  // and |x_i|^(p-1) sign(x_i) (sum |x|^p)^(1/p - 1) elsewhere: finite, never 0 * inf = NaN.
  const tf::Tensor g5 = tf::grad([](T x) { return tf::vector_norm(x, 0.5); })(z);
  const double s5 = std::sqrt(2.0) + std::sqrt(3.0);
  EXPECT_EQ(g5.data<double>()[0], 0.0);
  EXPECT_NEAR(g5.data<double>()[1], std::pow(2.0, -0.5) * s5, 1e-14);
  EXPECT_NEAR(g5.data<double>()[2], -std::pow(3.0, -0.5) * s5, 1e-14);
  // Infinite entries: the norm is inf for every p (inf / inf never appears inside).
  const tf::Tensor big = tf::Tensor::from(std::vector<double>{kInf, 1}, {2});
  EXPECT_EQ(run([](T x) { return tf::vector_norm(x); }, big).item<double>(), kInf);
  EXPECT_EQ(run([](T x) { return tf::vector_norm(x, 3); }, big).item<double>(), kInf);
  EXPECT_EQ(run([](T x) { return tf::vector_norm(x, -1); }, tf::Tensor::from(std::vector<double>{kInf, -kInf}, {2})).item<double>(), kInf);
  // check_grads to order 2 where every |x| > 0, real and complex, over all axes and over one.
  for (tf::DType dtype : {tf::DType::F64, tf::DType::C128}) {
    SCOPED_TRACE(tf::dtype_name(dtype));
    std::mt19937_64 rng(43);
    std::uniform_real_distribution<double> u(0.3, 1.5);
    std::vector<tf::c128> a(6);
    for (auto& x : a) x = tf::c128(u(rng), dtype == tf::DType::C128 ? u(rng) : 0.0);
    tf::Tensor arg = tf::Tensor::from(a, {2, 3});
    if (dtype == tf::DType::F64) arg = tf::Tensor::from(std::vector<double>{a[0].real(), -a[1].real(), a[2].real(), a[3].real(), -a[4].real(), a[5].real()}, {2, 3});
    const std::vector<tf::Tensor> args = {arg};
    auto f = [](T x) { return tf::vector_norm(x, -1.5) + tf::sum(tf::vector_norm(x, -1, {1})) + tf::vector_norm(x, -kInf); };
    auto graph = tf::detail::trace_graph(f, tf::detail::types_of(args));
    auto result = tidu::testkit::check_grads(tidu::testkit::function_of(graph), std::span<const tf::Tensor>(args), 2);
    EXPECT_TRUE(result.ok) << result.message;
  }
}

TEST(Norms, EmptyInputFollowsNumPyWithDerivativeZero) {
  auto run = [](const std::function<T(T)>& f, const tf::Tensor& x) { return tf::trace(f, x).run({x})[0]; };
  const tf::Tensor empty = tf::Tensor::zeros({0});
  // numpy.linalg.norm(np.zeros(0), p): 0 for p >= 0, inf for p < 0; +-inf raise.
  for (double p : {2.0, 1.0, 0.5, 3.5, 0.0}) {
    SCOPED_TRACE(p);
    EXPECT_EQ(run([p](T x) { return tf::vector_norm(x, p); }, empty).item<double>(), 0.0);
  }
  for (double p : {-1.0, -0.5, -2.0}) {
    SCOPED_TRACE(p);
    EXPECT_EQ(run([p](T x) { return tf::vector_norm(x, p); }, empty).item<double>(), kInf);
  }
  for (double p : {kInf, -kInf}) {
    try {
      tf::trace([p](T x) { return tf::vector_norm(x, p); }, empty);
      ADD_FAILURE() << "expected ShapeError for ord " << p;
    } catch (const tf::ShapeError& e) {
      EXPECT_THAT(e.what(), HasSubstr("vector_norm"));
      EXPECT_THAT(e.what(), HasSubstr(p > 0 ? "ord inf" : "ord -inf"));
      EXPECT_THAT(e.what(), HasSubstr("f64[0]"));
    }
  }
  // Over a size-0 axis: one 0 per kept position; complex too.
  const tf::Tensor rows = run([](T x) { return tf::vector_norm(x, 3.5, {1}); }, tf::Tensor::zeros({3, 0}, tf::DType::C128));
  EXPECT_EQ(rows.shape(), (tf::Shape{3}));
  for (int i = 0; i < 3; ++i) EXPECT_EQ(rows.data<double>()[i], 0.0);
  // The derivative is 0, first and second order: f(w) = sum(w) (1 + |x w_0|_p) with x empty has
  // gradient 1 and Hessian 0 (NaN before: the empty max is -inf and 0 * -inf = NaN).
  const tf::Tensor w = tf::Tensor::from(std::vector<double>{0.5, 2.0}, {2});
  for (double p : {2.0, 0.5, 3.5, 1.0}) {
    SCOPED_TRACE(p);
    auto f = [p](T wv, T x) {
      const T scale = tf::sum(wv);
      return scale * (1.0 + tf::vector_norm(x * scale, p)) + tf::matrix_norm(tf::reshape(x, {0, 0}) * scale, "fro");
    };
    const tf::Tensor g = tf::grad(f)(w, empty);
    const tf::Tensor h = tf::hessian(f)(w, empty);
    for (int i = 0; i < 2; ++i) EXPECT_EQ(g.data<double>()[i], 1.0);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(h.data<double>()[i], 0.0);
    auto [y, dy] = tf::jvp([p](T x) { return tf::vector_norm(x, p); }, {empty}, {empty});
    EXPECT_EQ(y.item<double>(), 0.0);
    EXPECT_EQ(dy.item<double>(), 0.0);
  }
  // Negative p: the constant inf, derivative 0.
  const tf::Tensor gneg = tf::grad([](T wv, T x) { return tf::sum(wv) + 0.0 * tf::exp(-tf::vector_norm(x * tf::sum(wv), -1)); })(w, empty);
  for (int i = 0; i < 2; ++i) EXPECT_EQ(gneg.data<double>()[i], 1.0);
  // Matrix norms of empty matrices, as numpy.linalg.norm(np.zeros(shape), ord) (NumPy 1.24.2):
  // "fro" and "nuc" are 0 for every shape; 1 / -1 are 0 for (0, 3) and raise otherwise; inf / -inf
  // are 0 for (3, 0) and raise otherwise; 2 / -2 raise for all three.
  struct Expect {
    const char* ord;
    bool ok00, ok03, ok30;
  };
  const Expect table[] = {{"fro", true, true, true}, {"nuc", true, true, true},   {"1", false, true, false},
                          {"-1", false, true, false}, {"inf", false, false, true}, {"-inf", false, false, true},
                          {"2", false, false, false}, {"-2", false, false, false}};
  for (const Expect& e : table) {
    const std::pair<tf::Shape, bool> shapes[] = {{{0, 0}, e.ok00}, {{0, 3}, e.ok03}, {{3, 0}, e.ok30}};
    for (const auto& [shape, ok] : shapes) {
      SCOPED_TRACE(std::string(e.ord) + " " + tf::shape_to_string(shape));
      const tf::Tensor m = tf::Tensor::zeros(shape);
      const std::string ord = e.ord;
      auto f = [ord](T x) { return tf::linalg::matrix_norm(x, ord); };
      if (ok) {
        EXPECT_EQ(run(f, m).item<double>(), 0.0);
        auto [y, dy] = tf::jvp(f, {m}, {m});
        EXPECT_EQ(dy.item<double>(), 0.0);
      } else {
        try {
          tf::trace(f, m);
          ADD_FAILURE() << "expected ShapeError";
        } catch (const tf::ShapeError& err) {
          EXPECT_THAT(err.what(), HasSubstr("matrix_norm"));
          EXPECT_THAT(err.what(), HasSubstr("ord " + ord));
          EXPECT_THAT(err.what(), HasSubstr(tf::shape_to_string(shape)));
        }
      }
    }
  }
}

}  // namespace
