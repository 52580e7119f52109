// The elementwise mathematics of tenferro/math.hpp on traced tensors: every function computes its
// mathematical definition on the tensor path (fused kernels, vector math) and on the scalar path
// (rank-0 programs, libm) in f64 and f32, complex functions match std::complex's principal
// branches, special values are those of IEEE and the peers, composites are right at their
// delicate points (with derivatives from closed forms), derivatives pass check_grads to order 2,
// and bad input throws typed errors naming the function.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <functional>
#include <limits>
#include <numbers>
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

struct UnaryCase {
  const char* name;
  std::function<T(T)> f;
  long double (*reference)(long double);
  double lo, hi;
};

std::vector<UnaryCase> unary_cases() {
  return {
      {"tan", [](T x) { return tf::tan(x); }, [](long double x) { return tanl(x); }, -1.5, 1.5},
      {"asin", [](T x) { return tf::asin(x); }, [](long double x) { return asinl(x); }, -1, 1},
      {"acos", [](T x) { return tf::acos(x); }, [](long double x) { return acosl(x); }, -1, 1},
      {"atan", [](T x) { return tf::atan(x); }, [](long double x) { return atanl(x); }, -20, 20},
      {"sinh", [](T x) { return tf::sinh(x); }, [](long double x) { return sinhl(x); }, -20, 20},
      {"cosh", [](T x) { return tf::cosh(x); }, [](long double x) { return coshl(x); }, -20, 20},
      {"asinh", [](T x) { return tf::asinh(x); }, [](long double x) { return asinhl(x); }, -1e3, 1e3},
      {"acosh", [](T x) { return tf::acosh(x); }, [](long double x) { return acoshl(x); }, 1, 1e3},
      {"atanh", [](T x) { return tf::atanh(x); }, [](long double x) { return atanhl(x); }, -0.999, 0.999},
      {"log2", [](T x) { return tf::log2(x); }, [](long double x) { return log2l(x); }, 1e-3, 1e6},
      {"log10", [](T x) { return tf::log10(x); }, [](long double x) { return log10l(x); }, 1e-3, 1e6},
      {"exp2", [](T x) { return tf::exp2(x); }, [](long double x) { return exp2l(x); }, -50, 50},
      {"cbrt", [](T x) { return tf::cbrt(x); }, [](long double x) { return cbrtl(x); }, -1e3, 1e3},
      {"erf", [](T x) { return tf::erf(x); }, [](long double x) { return erfl(x); }, -4, 4},
      {"erfc", [](T x) { return tf::erfc(x); }, [](long double x) { return erfcl(x); }, -4, 20},
      // Away from the roots at 1 and 2, where the relative error of any lgamma grows without bound.
      {"lgamma", [](T x) { return tf::lgamma(x); }, [](long double x) { return lgammal(x); }, 2.5, 30},
      {"lgamma", [](T x) { return tf::lgamma(x); }, [](long double x) { return lgammal(x); }, 0.05, 0.9},
      {"floor", [](T x) { return tf::floor(x); }, [](long double x) { return floorl(x); }, -5, 5},
      {"ceil", [](T x) { return tf::ceil(x); }, [](long double x) { return ceill(x); }, -5, 5},
      {"round", [](T x) { return tf::round(x); }, [](long double x) { return nearbyintl(x); }, -5, 5},
      {"trunc", [](T x) { return tf::trunc(x); }, [](long double x) { return truncl(x); }, -5, 5},
      {"frac", [](T x) { return tf::frac(x); }, [](long double x) { return x - truncl(x); }, -5, 5},
  };
}

std::vector<double> uniform(double lo, double hi, std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> x(n);
  for (auto& v : x) v = u(rng);
  return x;
}

/// f on the whole tensor (one fused kernel) and on each element alone (the scalar path).
template <class Real>
void run_both(const std::function<T(T)>& f, const std::vector<double>& x, std::vector<double>& vec,
              std::vector<double>& scalar) {
  const tf::DType dtype = sizeof(Real) == 8 ? tf::DType::F64 : tf::DType::F32;
  const std::vector<Real> xr(x.begin(), x.end());
  const tf::Tensor xs = tf::Tensor::from(xr, {static_cast<std::int64_t>(x.size())});
  const tf::Tensor y = tf::trace(f, xs).run({xs})[0];
  vec.clear();
  for (std::int64_t i = 0; i < y.numel(); ++i) vec.push_back(y.element(i).real());
  const tf::Program one = tf::trace(f, tf::Tensor::scalar(0.5, dtype));
  scalar.clear();
  for (double v : x) scalar.push_back(one.run({tf::Tensor::scalar(v, dtype)})[0].element(0).real());
}

double relative_error(double got, long double want) {
  if (want == 0) return got == 0 ? 0 : kInf;
  return static_cast<double>(std::fabs((static_cast<long double>(got) - want) / want));
}

}  // namespace

TEST(MathFunctions, EveryFunctionComputesItsDefinitionOnBothPathsInF64AndF32) {
  for (const UnaryCase& c : unary_cases()) {
    SCOPED_TRACE(c.name);
    const std::vector<double> x = uniform(c.lo, c.hi, 301, 3);
    std::vector<double> vec, scalar;
    run_both<double>(c.f, x, vec, scalar);
    for (std::size_t i = 0; i < x.size(); ++i) {
      const long double want = c.reference(x[i]);
      // Within 4 ULP (libmvec's bound; SLEEF and glibc's scalar functions are tighter).
      EXPECT_LE(relative_error(vec[i], want), 4 * 0x1p-53) << "tensor path at x = " << x[i];
      EXPECT_LE(relative_error(scalar[i], want), 4 * 0x1p-53) << "scalar path at x = " << x[i];
    }
    run_both<float>(c.f, x, vec, scalar);
    for (std::size_t i = 0; i < x.size(); ++i) {
      const float xf = static_cast<float>(x[i]);
      const long double want = c.reference(xf);
      if (std::fabs(want) < 1e-30L) continue;  // f32 underflow (erfc of large x)
      EXPECT_LE(relative_error(vec[i], want), 4 * 0x1p-24) << "f32 tensor path at x = " << xf;
      EXPECT_LE(relative_error(scalar[i], want), 4 * 0x1p-24) << "f32 scalar path at x = " << xf;
    }
  }
}

TEST(MathFunctions, BinaryFunctionsComputeTheirDefinitionsAndBroadcast) {
  const std::vector<double> a = uniform(-5, 5, 200, 4), b = uniform(-5, 5, 200, 5);
  const auto n = static_cast<std::int64_t>(a.size());
  const tf::Tensor ta = tf::Tensor::from(a, {n}), tb = tf::Tensor::from(b, {n});
  struct Case {
    const char* name;
    std::function<T(T, T)> f;
    long double (*reference)(long double, long double);
  };
  const Case cases[] = {
      {"atan2", [](T y, T x) { return tf::atan2(y, x); }, [](long double y, long double x) { return atan2l(y, x); }},
      {"hypot", [](T y, T x) { return tf::hypot(y, x); }, [](long double y, long double x) { return hypotl(y, x); }},
      {"fmod", [](T y, T x) { return tf::fmod(y, x); }, [](long double y, long double x) { return fmodl(y, x); }},
      {"remainder", [](T y, T x) { return tf::remainder(y, x); },
       [](long double y, long double x) { return y - floorl(y / x) * x; }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const tf::Tensor z = tf::trace(c.f, ta, tb).run({ta, tb})[0];
    for (std::int64_t i = 0; i < n; ++i) {
      const long double want = c.reference(a[i], b[i]);
      EXPECT_LE(relative_error(z.data<double>()[i], want), 4 * 0x1p-53) << a[i] << ", " << b[i];
    }
  }
  // Broadcasting: a column against a row.
  const tf::Tensor col = tf::Tensor::from(std::vector<double>{1.0, -2.0}, {2, 1});
  const tf::Tensor row = tf::Tensor::from(std::vector<double>{3.0, -4.0, 0.5}, {3});
  const tf::Tensor h = tf::trace([](T y, T x) { return tf::hypot(y, x); }, col, row).run({col, row})[0];
  ASSERT_EQ(h.shape(), (tf::Shape{2, 3}));
  EXPECT_DOUBLE_EQ(h.data<double>()[1], 4.123105625617661);  // hypot(1, -4) = sqrt(17)
  EXPECT_DOUBLE_EQ(h.data<double>()[3], std::sqrt(13.0));    // hypot(-2, 3)
}

TEST(MathFunctions, ComplexFunctionsAreTheStdPrincipalBranches) {
  struct Case {
    const char* name;
    std::function<T(T)> f;
    tf::c128 (*reference)(tf::c128);
  };
  const Case cases[] = {
      {"tan", [](T x) { return tf::tan(x); }, [](tf::c128 z) { return std::tan(z); }},
      {"asin", [](T x) { return tf::asin(x); }, [](tf::c128 z) { return std::asin(z); }},
      {"acos", [](T x) { return tf::acos(x); }, [](tf::c128 z) { return std::acos(z); }},
      {"atan", [](T x) { return tf::atan(x); }, [](tf::c128 z) { return std::atan(z); }},
      {"sinh", [](T x) { return tf::sinh(x); }, [](tf::c128 z) { return std::sinh(z); }},
      {"cosh", [](T x) { return tf::cosh(x); }, [](tf::c128 z) { return std::cosh(z); }},
      {"asinh", [](T x) { return tf::asinh(x); }, [](tf::c128 z) { return std::asinh(z); }},
      {"acosh", [](T x) { return tf::acosh(x); }, [](tf::c128 z) { return std::acosh(z); }},
      {"atanh", [](T x) { return tf::atanh(x); }, [](tf::c128 z) { return std::atanh(z); }},
      {"log2", [](T x) { return tf::log2(x); }, [](tf::c128 z) { return std::log(z) / std::numbers::ln2; }},
      {"log10", [](T x) { return tf::log10(x); }, [](tf::c128 z) { return std::log10(z); }},
      {"exp2", [](T x) { return tf::exp2(x); }, [](tf::c128 z) { return std::pow(tf::c128(2), z); }},
  };
  // Points on both sides of every branch cut (the real axis outside [-1, 1], the imaginary axis
  // outside [-i, i], the negative real axis).
  const std::vector<tf::c128> z = {{0.3, 0.4}, {-2.5, 1e-3}, {-2.5, -1e-3}, {2.5, 1e-3}, {1e-3, 2.5},
                                   {-1e-3, -2.5}, {-0.7, -1.2}, {1.5, -0.2}};
  const tf::Tensor t = tf::Tensor::from(z, {static_cast<std::int64_t>(z.size())});
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const tf::Tensor y = tf::trace(c.f, t).run({t})[0];
    for (std::size_t i = 0; i < z.size(); ++i) {
      const tf::c128 want = c.reference(z[i]);
      EXPECT_LE(std::abs(y.data<tf::c128>()[i] - want), 1e-14 * std::abs(want)) << z[i];
    }
  }
}

TEST(MathFunctions, SpecialValuesAreThoseOfIeeeAndThePeers) {
  auto eval1 = [](const std::function<T(T)>& f, std::vector<double> x) {
    const tf::Tensor t = tf::Tensor::from(x, {static_cast<std::int64_t>(x.size())});
    const tf::Tensor y = tf::trace(f, t).run({t})[0];
    return std::vector<double>(y.data<double>(), y.data<double>() + y.numel());
  };
  auto eval2 = [](const std::function<T(T, T)>& f, std::vector<double> a, std::vector<double> b) {
    const auto n = static_cast<std::int64_t>(a.size());
    const tf::Tensor ta = tf::Tensor::from(a, {n}), tb = tf::Tensor::from(b, {n});
    const tf::Tensor y = tf::trace(f, ta, tb).run({ta, tb})[0];
    return std::vector<double>(y.data<double>(), y.data<double>() + y.numel());
  };
  // atan2 of signed zeros and infinities.
  const auto at = eval2([](T y, T x) { return tf::atan2(y, x); }, {0.0, -0.0, 0.0, -0.0, kInf, 1.0},
                        {-1.0, -1.0, 0.0, 0.0, kInf, -kInf});
  EXPECT_EQ(at[0], std::numbers::pi);
  EXPECT_EQ(at[1], -std::numbers::pi);
  EXPECT_TRUE(at[2] == 0 && !std::signbit(at[2]));
  EXPECT_TRUE(at[3] == 0 && std::signbit(at[3]));
  EXPECT_EQ(at[4], std::numbers::pi / 4);
  EXPECT_EQ(at[5], std::numbers::pi);
  // Round half to even, and the sign of zero kept.
  EXPECT_EQ(eval1([](T x) { return tf::round(x); }, {0.5, 1.5, 2.5, -0.5, -2.5, 3.7}),
            (std::vector<double>{0.0, 2.0, 2.0, -0.0, -2.0, 4.0}));
  EXPECT_TRUE(std::signbit(eval1([](T x) { return tf::round(x); }, {-0.5})[0]));
  // fmod takes the dividend's sign, remainder the divisor's (Python: -1 % 3 == 2, 1 % -3 == -2).
  EXPECT_EQ(eval2([](T a, T b) { return tf::fmod(a, b); }, {-1, 1, 7.5}, {3, -3, 2}), (std::vector<double>{-1, 1, 1.5}));
  EXPECT_EQ(eval2([](T a, T b) { return tf::remainder(a, b); }, {-1, 1, 7.5, -6}, {3, -3, 2, 3}),
            (std::vector<double>{2, -2, 1.5, 0}));
  EXPECT_FALSE(std::signbit(eval2([](T a, T b) { return tf::remainder(a, b); }, {-6}, {3})[0]));
  EXPECT_TRUE(std::signbit(eval2([](T a, T b) { return tf::remainder(a, b); }, {6}, {-3})[0]));
  // Limits of the error function, logarithms at 0 and infinity, exact powers and roots.
  EXPECT_EQ(eval1([](T x) { return tf::erf(x); }, {kInf, -kInf, 0.0}), (std::vector<double>{1, -1, 0}));
  EXPECT_EQ(eval1([](T x) { return tf::erfc(x); }, {kInf, -kInf, 0.0}), (std::vector<double>{0, 2, 1}));
  EXPECT_EQ(eval1([](T x) { return tf::log2(x); }, {0.0, kInf, 1024.0}), (std::vector<double>{-kInf, kInf, 10}));
  EXPECT_EQ(eval1([](T x) { return tf::log10(x); }, {1000.0, 1e-5}), (std::vector<double>{3, -5}));
  EXPECT_EQ(eval1([](T x) { return tf::exp2(x); }, {10.0, -1.0, -kInf}), (std::vector<double>{1024, 0.5, 0}));
  // libmvec's cbrt is within 4 ULP, not exact on perfect cubes (SLEEF's and glibc's are).
  const auto roots = eval1([](T x) { return tf::cbrt(x); }, {-8.0, 27.0, -kInf});
  EXPECT_NEAR(roots[0], -2.0, 4 * 0x1p-52 * 2);
  EXPECT_NEAR(roots[1], 3.0, 4 * 0x1p-52 * 3);
  EXPECT_EQ(roots[2], -kInf);
  EXPECT_EQ(eval1([](T x) { return tf::acosh(x); }, {1.0}), (std::vector<double>{0.0}));
  EXPECT_EQ(eval1([](T x) { return tf::atanh(x); }, {1.0, -1.0}), (std::vector<double>{kInf, -kInf}));
  EXPECT_TRUE(std::isnan(eval1([](T x) { return tf::asin(x); }, {1.5})[0]));
  EXPECT_TRUE(std::isnan(eval1([](T x) { return tf::acosh(x); }, {0.5})[0]));
  // hypot(inf, NaN) is inf (IEEE 754: an infinite operand wins over NaN).
  EXPECT_EQ(eval2([](T a, T b) { return tf::hypot(a, b); }, {kInf, 3e300}, {kNaN, 4e300}),
            (std::vector<double>{kInf, 5e300}));
}

TEST(MathComposites, ValuesAtTheirDelicatePoints) {
  auto run2 = [](const std::function<T(T, T)>& f, double a, double b) {
    return tf::trace(f, tf::Tensor::scalar(a), tf::Tensor::scalar(b)).run({tf::Tensor::scalar(a), tf::Tensor::scalar(b)})[0].item<double>();
  };
  auto logaddexp = [](T a, T b) { return tf::logaddexp(a, b); };
  EXPECT_DOUBLE_EQ(run2(logaddexp, 1000.0, 1000.0), 1000.0 + std::numbers::ln2);  // exp overflows
  EXPECT_DOUBLE_EQ(run2(logaddexp, -1000.0, -1001.0), -1000.0 + std::log1p(std::exp(-1.0)));
  EXPECT_EQ(run2(logaddexp, -kInf, -kInf), -kInf);
  EXPECT_EQ(run2(logaddexp, kInf, kInf), kInf);
  EXPECT_DOUBLE_EQ(run2(logaddexp, 0.5, -0.25), std::log(std::exp(0.5) + std::exp(-0.25)));
  auto xlogy = [](T x, T y) { return tf::xlogy(x, y); };
  EXPECT_EQ(run2(xlogy, 0.0, 0.0), 0.0);
  EXPECT_EQ(run2(xlogy, 0.0, 2.0), 0.0);
  EXPECT_DOUBLE_EQ(run2(xlogy, 2.0, 3.0), 2 * std::log(3.0));
  // d/dx x log y = log y, also at x = 0; d/dy = x / y.
  const double dx = tf::grad(xlogy, 0)(tf::Tensor::scalar(0.0), tf::Tensor::scalar(2.0)).item<double>();
  const double dy = tf::grad(xlogy, 1)(tf::Tensor::scalar(0.0), tf::Tensor::scalar(2.0)).item<double>();
  EXPECT_DOUBLE_EQ(dx, std::log(2.0));
  EXPECT_EQ(dy, 0.0);

  auto sinc = [](T x) { return tf::sinc(x); };
  auto run1 = [](const std::function<T(T)>& f, double x) {
    return tf::trace(f, tf::Tensor::scalar(x)).run({tf::Tensor::scalar(x)})[0].item<double>();
  };
  EXPECT_EQ(run1(sinc, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(run1(sinc, 0.5), 2 / std::numbers::pi);
  EXPECT_NEAR(run1(sinc, 1.0), 0.0, 1e-16);
  // sinc''(0) = -pi^2 / 3, sinc'(0) = 0.
  EXPECT_EQ(tf::grad(sinc)(tf::Tensor::scalar(0.0)).item<double>(), 0.0);
  EXPECT_NEAR(tf::hessian(sinc)(tf::Tensor::scalar(0.0)).item<double>(), -std::numbers::pi * std::numbers::pi / 3, 1e-14);

  auto ndtr = [](T x) { return tf::ndtr(x); };
  EXPECT_EQ(run1(ndtr, 0.0), 0.5);
  // The lower tail keeps its relative accuracy: Phi(-10) = erfc(10 / sqrt 2) / 2.
  EXPECT_NEAR(run1(ndtr, -10.0), 7.619853024160527e-24, 1e-37);
  // ldexp is exact; round to decimals as numpy.round.
  EXPECT_EQ(run2([](T x, T e) { return tf::ldexp(x, e); }, 3.0, 4.0), 48.0);
  EXPECT_EQ(run1([](T x) { return tf::round(x, 2); }, 1.23456), 1.23);
  EXPECT_EQ(run1([](T x) { return tf::round(x, -2); }, 1250.0), 1200.0);  // half to even
  // Classification.
  const tf::Tensor special = tf::Tensor::from(std::vector<double>{0.0, kInf, -kInf, kNaN, 1.0}, {5});
  auto flags = [&](const std::function<T(T)>& f) {
    const tf::Tensor b = tf::trace(f, special).run({special})[0];
    return std::vector<bool>(b.data<bool>(), b.data<bool>() + b.numel());
  };
  EXPECT_EQ(flags([](T x) { return tf::isnan(x); }), (std::vector<bool>{false, false, false, true, false}));
  EXPECT_EQ(flags([](T x) { return tf::isinf(x); }), (std::vector<bool>{false, true, true, false, false}));
  EXPECT_EQ(flags([](T x) { return tf::isfinite(x); }), (std::vector<bool>{true, false, false, false, true}));
}

TEST(MathComposites, DerivativesPassCheckGradsToOrderTwo) {
  struct Case {
    const char* name;
    std::function<T(T, T)> f;
  };
  const Case cases[] = {
      {"logaddexp", [](T a, T b) { return tf::sum(tf::logaddexp(a, b * 2.0)); }},
      {"xlogy", [](T a, T b) { return tf::sum(tf::xlogy(a, b * b + 0.5)); }},
      {"sinc", [](T a, T b) { return tf::sum(tf::sinc(a * 2.0) * b); }},
      {"sinc near 0", [](T a, T b) { return tf::sum(tf::sinc(a * 1e-3) * b); }},
      {"ndtr", [](T a, T b) { return tf::sum(tf::ndtr(a * 3.0) * b); }},
      {"ldexp", [](T a, T b) { return tf::sum(tf::ldexp(a * b, tf::full_like(a, 3.0))); }},
      {"round to decimals", [](T a, T b) { return tf::sum(tf::round(a, 1) * a * b); }},
  };
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> a(5), b(5);
  for (auto& v : a) v = u(rng);
  for (auto& v : b) v = u(rng);
  const std::vector<tf::Tensor> args = {tf::Tensor::from(a, {5}), tf::Tensor::from(b, {5})};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto graph = tf::detail::trace_graph(c.f, tf::detail::types_of(args));
    auto result = tidu::testkit::check_grads(tidu::testkit::function_of(graph), std::span<const tf::Tensor>(args), 2);
    EXPECT_TRUE(result.ok) << result.message;
  }
}

TEST(MathFunctions, BadInputThrowsTypedErrorsNamingTheFunction) {
  const tf::Tensor z = tf::Tensor::from(std::vector<tf::c128>{{1, 2}}, {1});
  const tf::Tensor i = tf::Tensor::from(std::vector<std::int64_t>{3}, {1});
  auto expect_dtype_error = [](auto f, const tf::Tensor& x, const char* name, const char* dtype) {
    try {
      tf::trace(f, x);
      ADD_FAILURE() << name << " accepted " << dtype;
    } catch (const tf::DTypeError& e) {
      EXPECT_THAT(e.what(), HasSubstr(name));
      EXPECT_THAT(e.what(), HasSubstr(dtype));
    }
  };
  expect_dtype_error([](T x) { return tf::erf(x); }, z, "erf", "c128");
  expect_dtype_error([](T x) { return tf::floor(x); }, z, "floor", "c128");
  expect_dtype_error([](T x) { return tf::round(x, 2); }, z, "round", "c128");
  expect_dtype_error([](T x) { return tf::cbrt(x); }, z, "cbrt", "c128");
  expect_dtype_error([](T x) { return tf::floor(x); }, i, "floor", "i64");
  expect_dtype_error([](T x) { return tf::asin(x); }, i, "asin", "i64");
  expect_dtype_error([](T x) { return tf::atan2(x, x); }, z, "atan2", "c128");
  expect_dtype_error([](T x) { return tf::logaddexp(x, x); }, z, "logaddexp", "c128");
  expect_dtype_error([](T x) { return tf::sinc(x); }, z, "sinc", "c128");
  const tf::Tensor a = tf::Tensor::zeros({2}), b = tf::Tensor::zeros({3});
  EXPECT_THROW(tf::trace([](T x, T y) { return tf::hypot(x, y); }, a, b), tf::ShapeError);
  try {
    tf::trace([](T x, T y) { return tf::fmod(x, y); }, a, b);
  } catch (const tf::ShapeError& e) {
    EXPECT_THAT(e.what(), HasSubstr("fmod"));
  }
}

TEST(Statistics, VarianceOfComplexIsRealAndTakesACorrection) {
  // x = [1+1i, -1-1i]: mean 0, |x - m|^2 = 2 each. NumPy, JAX and PyTorch: var = 2 (real).
  const tf::Tensor x = tf::Tensor::from(std::vector<tf::c128>{{1, 1}, {-1, -1}}, {2});
  const tf::Tensor v = tf::trace([](T a) { return tf::var(a, {0}); }, x).run({x})[0];
  EXPECT_EQ(v.dtype(), tf::DType::F64);
  EXPECT_DOUBLE_EQ(v.item<double>(), 2.0);
  const tf::Tensor v1 = tf::trace([](T a) { return tf::var(a, {0}, 1); }, x).run({x})[0];
  EXPECT_DOUBLE_EQ(v1.item<double>(), 4.0);
  const tf::Tensor s1 = tf::trace([](T a) { return tf::stddev(a, {0}, 1); }, x).run({x})[0];
  EXPECT_DOUBLE_EQ(s1.item<double>(), 2.0);
  // Real data: the sample variance of 1..4 is 5/3; n <= correction divides by zero.
  const tf::Tensor r = tf::Tensor::from(std::vector<double>{1, 2, 3, 4}, {4});
  EXPECT_DOUBLE_EQ(tf::trace([](T a) { return tf::var(a, {0}, 1); }, r).run({r})[0].item<double>(), 5.0 / 3);
  EXPECT_EQ(tf::trace([](T a) { return tf::var(a, {0}, 4); }, r).run({r})[0].item<double>(), kInf);
  // The gradient of the real variance of complex data, d var / d conj(x) convention as the rest of
  // the library: 2 (x - m) / (n - correction) for each element (here (x - 0) with n - 1 = 1).
  const tf::Tensor g = tf::grad([](T a) { return tf::var(a, {0}, 1); })(x);
  EXPECT_NEAR(std::abs(g.data<tf::c128>()[0] - tf::c128(2, 2)), 0.0, 1e-15);
  EXPECT_NEAR(std::abs(g.data<tf::c128>()[1] - tf::c128(-2, -2)), 0.0, 1e-15);
  EXPECT_THROW(tf::trace([](T a) { return tf::var(a, {0}); }, tf::Tensor::from(std::vector<std::int64_t>{1, 2}, {2})),
               tf::DTypeError);
}

TEST(SpecialFunctions, IdentitiesAndClosedFormsOnBothPaths) {
  constexpr double kEulerGamma = 0.57721566490153286;
  auto run1 = [](const std::function<T(T)>& f, double x) {
    return tf::trace(f, tf::Tensor::scalar(x)).run({tf::Tensor::scalar(x)})[0].item<double>();
  };
  auto run_vec = [](const std::function<T(T)>& f, std::vector<double> x) {
    const tf::Tensor t = tf::Tensor::from(x, {static_cast<std::int64_t>(x.size())});
    const tf::Tensor y = tf::trace(f, t).run({t})[0];
    return std::vector<double>(y.data<double>(), y.data<double>() + y.numel());
  };
  auto digamma = [](T x) { return tf::digamma(x); };
  // Within 4 ULP of max(|psi|, 1): the bound of the fused form under MathAccuracy::Fast (a rank-0
  // program runs as a fused kernel when the executor's passes are off).
  const double psi_ulp = 0x1p-52;
  EXPECT_NEAR(run1(digamma, 1.0), -kEulerGamma, 4 * psi_ulp);
  EXPECT_NEAR(run1(digamma, 0.5), -kEulerGamma - 2 * std::numbers::ln2, 4 * 2 * psi_ulp);
  EXPECT_NEAR(run1([](T x) { return tf::polygamma(1, x); }, 1.0), std::numbers::pi * std::numbers::pi / 6, 1e-15);
  // polygamma(2, 1) = -2 zeta(3).
  EXPECT_NEAR(run1([](T x) { return tf::polygamma(2, x); }, 1.0), -2 * 1.2020569031595942, 1e-15);
  // The recurrences psi(x + 1) = psi(x) + 1/x and lgamma(x + 1) = lgamma(x) + log x, on a vector.
  const std::vector<double> xs = uniform(0.2, 30, 101, 21);
  std::vector<double> xs1 = xs;
  for (double& v : xs1) v += 1;
  const auto d0 = run_vec(digamma, xs), d1 = run_vec(digamma, xs1);
  const auto l0 = run_vec([](T x) { return tf::lgamma(x); }, xs), l1 = run_vec([](T x) { return tf::lgamma(x); }, xs1);
  for (std::size_t i = 0; i < xs.size(); ++i) {
    EXPECT_NEAR(d1[i], d0[i] + 1 / xs[i], 16 * psi_ulp * (1 + std::abs(d1[i]) + 1 / xs[i])) << xs[i];
    EXPECT_NEAR(l1[i], l0[i] + std::log(xs[i]), 1e-14 * (1 + std::abs(l1[i]))) << xs[i];
  }
  // erfinv inverts erf; i0, i1 and the scaled forms agree; I0(0) = 1, I1(0) = 0.
  const auto round_trip = run_vec([](T x) { return tf::erfinv(tf::erf(x)); }, uniform(-3, 3, 101, 22));
  const auto inputs = uniform(-3, 3, 101, 22);
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    // erf rounds its result to a few ULP of y; erfinv then moves x by that over erf'(x), which is
    // tiny where erf is near +-1 (the inverse is ill-conditioned there).
    const double slope = 2 / std::sqrt(std::numbers::pi) * std::exp(-inputs[i] * inputs[i]);
    const double tolerance = 4 * 0x1p-53 * (1 / slope + std::abs(inputs[i]));
    EXPECT_NEAR(round_trip[i], inputs[i], tolerance) << inputs[i];
  }
  const auto scaled = run_vec([](T x) { return tf::i0e(x) * tf::exp(tf::abs(x)) - tf::i0(x); }, uniform(-20, 20, 51, 23));
  for (double v : scaled) EXPECT_NEAR(v, 0.0, 1e-6);  // |i0| < 5e7 here: relative 1e-14
  EXPECT_EQ(run1([](T x) { return tf::i0(x); }, 0.0), 1.0);
  EXPECT_EQ(run1([](T x) { return tf::i1(x); }, 0.0), 0.0);
  EXPECT_NEAR(run1([](T x) { return tf::i1(x); }, 1.0), 0.56515910399248503, 1e-16);
  // Poles and limits, as SciPy and PyTorch give them.
  const auto lg = run_vec([](T x) { return tf::lgamma(x); }, {0.0, -1.0, -2.0, kInf});
  for (double v : lg) EXPECT_EQ(v, kInf);
  EXPECT_EQ(run1(digamma, 0.0), -kInf);
  EXPECT_TRUE(std::isnan(run1(digamma, -2.0)));
  EXPECT_EQ(run_vec([](T x) { return tf::erfinv(x); }, {1.0, -1.0}), (std::vector<double>{kInf, -kInf}));
  EXPECT_TRUE(std::isnan(run1([](T x) { return tf::erfinv(x); }, 1.5)));
  EXPECT_GT(run1([](T x) { return tf::i0e(x); }, 1e300), 0.0);  // finite, ~1/sqrt(2 pi x)
  // mvlgamma(x, 1) = lgamma(x); mvlgamma(x, 2) = log(pi)/2 + lgamma(x) + lgamma(x - 1/2).
  EXPECT_DOUBLE_EQ(run1([](T x) { return tf::mvlgamma(x, 2); }, 3.0),
                   0.5 * std::log(std::numbers::pi) + std::lgamma(3.0) + std::lgamma(2.5));
  // Closed-form derivatives: d lgamma = digamma, d digamma = polygamma(1), i0' = i1, i1'(0) = 1/2.
  EXPECT_NEAR(tf::grad([](T x) { return tf::lgamma(x); })(tf::Tensor::scalar(1.0)).item<double>(), -kEulerGamma, 1e-15);
  EXPECT_NEAR(tf::grad(digamma)(tf::Tensor::scalar(1.0)).item<double>(), std::numbers::pi * std::numbers::pi / 6, 1e-15);
  EXPECT_NEAR(tf::grad([](T x) { return tf::i0(x); })(tf::Tensor::scalar(1.0)).item<double>(), 0.56515910399248503, 1e-15);
  EXPECT_EQ(tf::grad([](T x) { return tf::i1(x); })(tf::Tensor::scalar(0.0)).item<double>(), 0.5);
  // i1''(0) = 0 and i0''(0) = 1/2 (I0 = 1 + x^2/4 + ...).
  EXPECT_NEAR(tf::hessian([](T x) { return tf::i1(x); })(tf::Tensor::scalar(0.0)).item<double>(), 0.0, 1e-15);
  EXPECT_NEAR(tf::hessian([](T x) { return tf::i0(x); })(tf::Tensor::scalar(0.0)).item<double>(), 0.5, 1e-15);
  // erfinv' = sqrt(pi)/2 exp(erfinv^2): at 0, sqrt(pi)/2.
  EXPECT_NEAR(tf::grad([](T x) { return tf::erfinv(x); })(tf::Tensor::scalar(0.0)).item<double>(),
              std::sqrt(std::numbers::pi) / 2, 1e-15);
}

TEST(SpecialFunctions, DerivativesPassCheckGradsToOrderTwo) {
  struct Case {
    const char* name;
    std::function<T(T, T)> f;
  };
  const Case cases[] = {
      {"lgamma", [](T a, T b) { return tf::sum(tf::lgamma(a + 2.0) * b); }},
      {"digamma", [](T a, T b) { return tf::sum(tf::digamma(a * 0.5 + 1.0) * b); }},
      {"polygamma 3", [](T a, T b) { return tf::sum(tf::polygamma(3, a + 2.0) * b); }},
      {"mvlgamma", [](T a, T b) { return tf::sum(tf::mvlgamma(a + 3.0, 3) * b); }},
      {"erfinv", [](T a, T b) { return tf::sum(tf::erfinv(a * 0.9) * b); }},
      {"i0", [](T a, T b) { return tf::sum(tf::i0(a * 4.0) * b); }},
      {"i0e", [](T a, T b) { return tf::sum(tf::i0e(a * 4.0 + 5.0) * b); }},
      {"i1", [](T a, T b) { return tf::sum(tf::i1(a * 4.0) * b); }},
      {"i1 near 0", [](T a, T b) { return tf::sum(tf::i1(a * 1e-5) * b); }},
      {"i1e", [](T a, T b) { return tf::sum(tf::i1e(a * 4.0 + 5.0) * b); }},
  };
  const std::vector<double> a = uniform(-1, 1, 5, 31), b = uniform(-1, 1, 5, 32);
  const std::vector<tf::Tensor> args = {tf::Tensor::from(a, {5}), tf::Tensor::from(b, {5})};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto graph = tf::detail::trace_graph(c.f, tf::detail::types_of(args));
    auto result = tidu::testkit::check_grads(tidu::testkit::function_of(graph), std::span<const tf::Tensor>(args), 2);
    EXPECT_TRUE(result.ok) << result.message;
  }
}

// erfcx'(x) = 2 x erfcx(x) - 2/sqrt(pi) cancels as x grows (2 x erfcx(x) tends to 2/sqrt(pi), and
// the difference to -1/(sqrt(pi) x^2)), losing about log10(2 x^2) digits; the second derivative
// 2 erfcx(x) + 2 x erfcx'(x) cancels once more. Both keep their relative accuracy for large x.
// (Found by the random programs: the Hessian of erfcx(exp(x)) at x = 11 was off by 0.03 against
// a true 1e-5.) References: mpmath at 60 digits.
TEST(SpecialFunctions, ErfcxDerivativesKeepTheirRelativeAccuracyForLargeArguments) {
  struct Point {
    double x, first, second;
  };
  const Point points[] = {
      {-3.0, -97237.061503164615265, 615834.34672698686484},
      {5.0, -0.021332789764826310194, 0.0080813778178741508},
      {30.0, -0.00062583541050748406864, 0.000041653092384458875901},
      {1000.0, -5.6418873726549666885e-7, 1.1283757819707054937e-9},
      {1e6, -5.6418958354691000257e-13, 1.1283791670921274364e-18},
  };
  auto f = [](T x) { return tf::erfcx(x); };
  auto rel = [](double got, double want) { return std::abs(got - want) / std::abs(want); };
  for (const Point& p : points) {
    SCOPED_TRACE(p.x);
    const tf::Tensor x = tf::Tensor::scalar(p.x);
    EXPECT_LT(rel(tf::grad(f)(x).item<double>(), p.first), 1e-14);
    EXPECT_LT(rel(tf::hessian(f)(x).item<double>(), p.second), 1e-12);
  }
}

TEST(SpecialFunctions, BadInputThrowsTypedErrors) {
  const tf::Tensor z = tf::Tensor::from(std::vector<tf::c128>{{1, 2}}, {1});
  const tf::Tensor x = tf::Tensor::from(std::vector<double>{1.5}, {1});
  EXPECT_THROW(tf::trace([](T a) { return tf::lgamma(a); }, z), tf::DTypeError);
  EXPECT_THROW(tf::trace([](T a) { return tf::i0(a); }, z), tf::DTypeError);
  EXPECT_THROW(tf::trace([](T a) { return tf::polygamma(1, a); }, z), tf::DTypeError);
  try {
    tf::trace([](T a) { return tf::polygamma(-1, a); }, x);
    ADD_FAILURE() << "polygamma accepted a negative order";
  } catch (const tf::ValueError& e) {
    EXPECT_THAT(e.what(), HasSubstr("polygamma"));
    EXPECT_THAT(e.what(), HasSubstr("-1"));
  }
  EXPECT_THROW(tf::trace([](T a) { return tf::mvlgamma(a, 0); }, x), tf::ValueError);
}

TEST(MathFunctions, FracIsTheFractionalPartWithDerivativeOne) {
  auto eval1 = [](std::vector<double> x) {
    const tf::Tensor t = tf::Tensor::from(x, {static_cast<std::int64_t>(x.size())});
    const tf::Tensor y = tf::trace([](T v) { return tf::frac(v); }, t).run({t})[0];
    return std::vector<double>(y.data<double>(), y.data<double>() + y.numel());
  };
  // torch.frac: x - trunc(x), the sign of x; exact; NaN at +-inf.
  const auto y = eval1({-2.5, -0.25, 0.0, 1.75, 3.0, 1e20, 0x1p-1074});
  EXPECT_EQ(y, (std::vector<double>{-0.5, -0.25, 0.0, 0.75, 0.0, 0.0, 0x1p-1074}));
  EXPECT_TRUE(std::isnan(eval1({kInf})[0]));
  EXPECT_TRUE(std::isnan(eval1({-kInf})[0]));
  // Derivative 1 (also at an integer), first order; second order 0; check_grads in f64 and f32.
  const tf::Tensor x = tf::Tensor::from(std::vector<double>{-2.5, 3.0, 0.3}, {3});
  const tf::Tensor g = tf::grad([](T v) { return tf::sum(tf::frac(v) * tf::frac(v)); })(x);
  EXPECT_EQ(g.data<double>()[0], -1.0);  // 2 frac(x)
  EXPECT_EQ(g.data<double>()[1], 0.0);
  EXPECT_NEAR(g.data<double>()[2], 0.6, 1e-15);
  for (tf::DType dtype : {tf::DType::F64, tf::DType::F32}) {
    SCOPED_TRACE(tf::dtype_name(dtype));
    const std::vector<double> values{-2.7, 1.2, 0.4, 5.6};
    const std::vector<tf::Tensor> args = {dtype == tf::DType::F64 ? tf::Tensor::from(values, {4})
                                                                  : tf::Tensor::from(std::vector<float>(values.begin(), values.end()), {4})};
    auto f = [](T v) { return tf::frac(v) * tf::frac(v) * v; };
    auto graph = tf::detail::trace_graph(f, tf::detail::types_of(args));
    tidu::testkit::CheckOptions o;
    if (dtype == tf::DType::F32) {
      o.step = 1e-2;
      o.eps = std::numeric_limits<float>::epsilon();
      o.rtol = 1e-2;
      o.atol = 1e-4;
      o.adjoint_rtol = 1e-4;
    }
    auto result = tidu::testkit::check_grads(tidu::testkit::function_of(graph), std::span<const tf::Tensor>(args), 2,
                                             {tidu::testkit::Mode::Forward, tidu::testkit::Mode::Reverse}, o);
    EXPECT_TRUE(result.ok) << result.message;
  }
  EXPECT_THROW(tf::trace([](T v) { return tf::frac(v); }, tf::Tensor::zeros({2}, tf::DType::C128)), tf::DTypeError);
}

TEST(MathFunctions, FrexpAndLdexpAreExactInverses) {
  // Every power of two of f64, subnormals included: ldexp(1, e) = 2^e exactly (on the fused path),
  // and frexp takes it apart again.
  std::vector<double> exponents;
  for (int e = -1074; e <= 1023; ++e) exponents.push_back(e);
  const auto n = static_cast<std::int64_t>(exponents.size());
  const tf::Tensor e = tf::Tensor::from(exponents, {n});
  const tf::Tensor one = tf::Tensor::full({n}, 1.0);
  const tf::Tensor p = tf::trace([](T x, T k) { return tf::ldexp(x, k); }, one, e).run({one, e})[0];
  for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(p.data<double>()[i], std::ldexp(1.0, static_cast<int>(exponents[i]))) << exponents[i];
  const std::vector<double> xs = {0.0, -0.0, 1.0, -3.0, 0.1, 1e300, 5e-324, kInf, -kInf};
  const tf::Tensor x = tf::Tensor::from(xs, {static_cast<std::int64_t>(xs.size())});
  auto both = [](T v) {
    auto [m, k] = tf::frexp(v);
    return std::vector<T>{m, k};
  };
  const auto r = tf::trace(both, x).run({x});
  for (std::size_t i = 0; i < xs.size(); ++i) {
    int k = 0;
    const double m = std::frexp(xs[i], &k);
    EXPECT_EQ(r[0].data<double>()[i], m) << xs[i];
    EXPECT_EQ(r[1].data<std::int64_t>()[i], std::isfinite(xs[i]) ? k : 0) << xs[i];
  }
  // d m / d x = 2^-e: at x = 3 (m = 3/4, e = 2), 1/4.
  EXPECT_EQ(tf::grad([](T v) { return tf::frexp(v).first; })(tf::Tensor::scalar(3.0)).item<double>(), 0.25);
  EXPECT_THROW(tf::trace([](T v) { return tf::frexp(v).first; }, tf::Tensor::from(std::vector<tf::c128>{{1, 1}}, {1})),
               tf::DTypeError);
}

TEST(SpecialFunctions, NormalDistributionTailsKeepTheirRelativeAccuracy) {
  auto run1 = [](const std::function<T(T)>& f, double x) {
    return tf::trace(f, tf::Tensor::scalar(x)).run({tf::Tensor::scalar(x)})[0].item<double>();
  };
  auto rel = [](double got, double want) { return std::abs(got - want) / std::abs(want); };
  // log Phi(-40) = -804.6084420137538 (MPFR; Phi(-40) ~ 3.7e-350 underflows, its log does not).
  EXPECT_LT(rel(run1([](T x) { return tf::log_ndtr(x); }, -40.0), -804.60844201375380), 1e-14);
  // log Phi(10) = log1p(-Q(10)) = -7.6198530241605255e-24 (MPFR).
  EXPECT_LT(rel(run1([](T x) { return tf::log_ndtr(x); }, 10.0), -7.6198530241605255e-24), 1e-14);
  EXPECT_LT(rel(run1([](T x) { return tf::log_ndtr(x); }, 0.0), -std::numbers::ln2), 1e-15);
  // ndtri inverts ndtr in both tails: Phi^-1(1e-300) = -37.047096299361201 (MPFR).
  EXPECT_LT(rel(run1([](T p) { return tf::ndtri(p); }, 1e-300), -37.047096299361201), 1e-14);
  EXPECT_EQ(run1([](T p) { return tf::ndtri(p); }, 0.5), 0.0);
  const double p = 1 - 0x1p-40;  // near 1: 2 - 2p is exact
  EXPECT_LT(rel(run1([](T q) { return tf::ndtri(q); }, p), -run1([](T q) { return tf::ndtri(q); }, 0x1p-40)), 1e-14);
  EXPECT_EQ(run1([](T q) { return tf::ndtri(q); }, 0.0), -kInf);
  // erfcx: finite where erfc underflows; erfcx(x) ~ 1 / (x sqrt(pi)) for large x.
  EXPECT_LT(rel(run1([](T x) { return tf::erfcx(x); }, 1e6), 1 / (1e6 * std::sqrt(std::numbers::pi)) * (1 - 0.5e-12)), 1e-15);
  EXPECT_EQ(run1([](T x) { return tf::erfcx(x); }, 0.0), 1.0);
  // Derivatives: d log_ndtr / dx = phi(x) / Phi(x) (the inverse Mills ratio): 40.024968847207262
  // at x = -40 (MPFR).
  const double g = tf::grad([](T x) { return tf::log_ndtr(x); })(tf::Tensor::scalar(-40.0)).item<double>();
  EXPECT_LT(rel(g, 40.024968847207262), 1e-13);
  // d ndtri / dp = 1 / phi(ndtri(p)): at p = 1/2, sqrt(2 pi).
  EXPECT_LT(rel(tf::grad([](T q) { return tf::ndtri(q); })(tf::Tensor::scalar(0.5)).item<double>(), std::sqrt(2 * std::numbers::pi)), 1e-15);
  struct Case {
    const char* name;
    std::function<T(T, T)> f;
  };
  const Case cases[] = {
      {"log_ndtr", [](T a, T b) { return tf::sum(tf::log_ndtr(a * 4.0) * b); }},
      {"log_ndtr far left", [](T a, T b) { return tf::sum(tf::log_ndtr(a - 30.0) * b); }},
      {"ndtri", [](T a, T b) { return tf::sum(tf::ndtri(a * 0.45 + 0.5) * b); }},
      {"erfcx", [](T a, T b) { return tf::sum(tf::erfcx(a * 5.0) * b); }},
  };
  const std::vector<double> a = uniform(-1, 1, 5, 51), b = uniform(-1, 1, 5, 52);
  const std::vector<tf::Tensor> args = {tf::Tensor::from(a, {5}), tf::Tensor::from(b, {5})};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto graph = tf::detail::trace_graph(c.f, tf::detail::types_of(args));
    auto result = tidu::testkit::check_grads(tidu::testkit::function_of(graph), std::span<const tf::Tensor>(args), 2);
    EXPECT_TRUE(result.ok) << result.message;
  }
}
