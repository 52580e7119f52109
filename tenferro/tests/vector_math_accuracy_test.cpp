// Accuracy of every function of every vector math table this CPU runs, in ULP against a correctly
// rounded reference (MPFR at 256 bits, rounded once to the format; the ULP is that of the rounded value, as glibc's tests measure
// it), over sweeps that include
// subnormals, huge arguments, infinities, NaN and the poles: within each library's documented
// bound (SLEEF: 1.0 ULP for its u10 functions, 1.5 for erfc, 0.5 for hypot; glibc's libmvec: 4
// ULP), with infinities, signed zeros and NaN as IEEE defines them.
#include <gtest/gtest.h>
#include <mpfr.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/vector_math.hpp"

namespace tf = tenferro;
using tf::exec::MathFn;
using tf::exec::MathFn2;
using tf::exec::VectorMathTable;

namespace {

constexpr mpfr_prec_t kPrecision = 160;

/// An MPFR number at kPrecision bits, freed on scope exit.
struct Big {
  mpfr_t v;
  Big() { mpfr_init2(v, kPrecision); }
  explicit Big(double x) : Big() { mpfr_set_d(v, x, MPFR_RNDN); }
  ~Big() { mpfr_clear(v); }
  Big(const Big&) = delete;
  Big& operator=(const Big&) = delete;
};

using Unary = std::function<void(mpfr_t, const mpfr_t)>;
using Binary = std::function<void(mpfr_t, const mpfr_t, const mpfr_t)>;

/// The error of `got` in ULP of T at the exact value `exact`: |got - exact| / ulp(exact), where
/// ulp is the spacing of T's numbers at |exact| (2^-1074 or 2^-149 for subnormals). An exact value
/// beyond T's range counts as T's infinity. Infinities, zeros' signs and NaN must match exactly
/// (else the result is infinite).
template <class T>
double ulp_error(T got, const mpfr_t exact) {
  if (mpfr_nan_p(exact)) return std::isnan(got) ? 0 : HUGE_VAL;
  if (std::isnan(got)) return HUGE_VAL;
  const T rounded = sizeof(T) == 8 ? static_cast<T>(mpfr_get_d(exact, MPFR_RNDN))
                                   : static_cast<T>(mpfr_get_flt(exact, MPFR_RNDN));
  if (std::isinf(rounded) || std::isinf(got)) {
    // Overflow: within the bound if the exact value is beyond the largest finite number by less
    // than a few ULP is a corner no sweep here reaches; require the same infinity.
    return got == rounded ? 0 : HUGE_VAL;
  }
  if (rounded == 0 && got == 0) return std::signbit(rounded) == std::signbit(got) ? 0 : HUGE_VAL;
  constexpr int digits = std::numeric_limits<T>::digits;
  constexpr int min_exp = std::numeric_limits<T>::min_exponent;  // 2^(min_exp - 1) is the least normal
  int e = min_exp;
  if (rounded != 0) {
    std::frexp(static_cast<double>(rounded), &e);  // |rounded| = f 2^e, f in [0.5, 1)
    if (e < min_exp) e = min_exp;
  }
  Big diff, g;
  mpfr_set_d(g.v, static_cast<double>(got), MPFR_RNDN);
  mpfr_sub(diff.v, g.v, exact, MPFR_RNDN);
  mpfr_abs(diff.v, diff.v, MPFR_RNDN);
  mpfr_mul_2si(diff.v, diff.v, digits - e, MPFR_RNDN);  // in units of 2^(e - digits)
  return mpfr_get_d(diff.v, MPFR_RNDN);
}

template <class T>
std::vector<T> sweep(double lo, double hi, bool log_scale, std::uint64_t seed, std::size_t n = 1500) {
  std::mt19937_64 rng(seed);
  std::vector<T> x(n);
  std::uniform_real_distribution<double> u(0, 1);
  for (auto& v : x) {
    const double t = u(rng);
    v = static_cast<T>(log_scale ? std::exp(std::log(lo) + t * (std::log(hi) - std::log(lo))) : lo + t * (hi - lo));
  }
  return x;
}

/// Inputs that every function sees: zeros, subnormals, the extremes, infinities and NaN.
template <class T>
std::vector<T> special_inputs() {
  using L = std::numeric_limits<T>;
  std::vector<T> x = {T(0), -T(0), L::denorm_min(), -L::denorm_min(), L::min() / 3, -L::min() / 3, L::min(), -L::min(),
                      L::max(), -L::max(), L::infinity(), -L::infinity(), L::quiet_NaN(), T(1), T(-1), T(2), T(-2), T(0.5), T(-0.5)};
  return x;
}

struct UnaryCase {
  MathFn fn;
  const char* name;
  Unary reference;
  /// Sweep ranges: {lo, hi, log scale (magnitudes, both signs)}.
  std::vector<std::tuple<double, double, bool>> ranges;
  double sleef_bound = 1.0;
};

std::vector<UnaryCase> unary_cases(bool f64) {
  const double big = f64 ? 1e300 : 1e38;
  const double tiny = f64 ? 1e-310 : 1e-44;  // into the subnormals
  auto r = [](auto f) { return Unary([f](mpfr_t y, const mpfr_t x) { f(y, x, MPFR_RNDN); }); };
  return {
      {MathFn::Exp, "exp", r(mpfr_exp), {{tiny, 750, true}, {-750, 750, false}}},
      {MathFn::Log, "log", r(mpfr_log), {{tiny, big, true}, {0.5, 2, false}}},
      {MathFn::Sin, "sin", r(mpfr_sin), {{tiny, f64 ? 1e300 : 1e30, true}, {-10, 10, false}}},
      {MathFn::Cos, "cos", r(mpfr_cos), {{tiny, f64 ? 1e300 : 1e30, true}, {-10, 10, false}}},
      {MathFn::Tan, "tan", r(mpfr_tan), {{tiny, f64 ? 1e300 : 1e30, true}, {-10, 10, false}}},
      {MathFn::Tanh, "tanh", r(mpfr_tanh), {{tiny, 30, true}, {-5, 5, false}}},
      {MathFn::Expm1, "expm1", r(mpfr_expm1), {{tiny, 750, true}, {-2, 2, false}}},
      {MathFn::Log1p, "log1p", r(mpfr_log1p), {{tiny, big, true}, {-0.999, 2, false}}},
      {MathFn::Asin, "asin", r(mpfr_asin), {{tiny, 1, true}, {-1, 1, false}}},
      {MathFn::Acos, "acos", r(mpfr_acos), {{tiny, 1, true}, {-1, 1, false}}},
      {MathFn::Atan, "atan", r(mpfr_atan), {{tiny, big, true}, {-5, 5, false}}},
      {MathFn::Sinh, "sinh", r(mpfr_sinh), {{tiny, 720, true}, {-5, 5, false}}},
      {MathFn::Cosh, "cosh", r(mpfr_cosh), {{tiny, 720, true}, {-5, 5, false}}},
      {MathFn::Asinh, "asinh", r(mpfr_asinh), {{tiny, big, true}, {-5, 5, false}}},
      {MathFn::Acosh, "acosh", r(mpfr_acosh), {{1, big, true}, {1, 3, false}}},
      {MathFn::Atanh, "atanh", r(mpfr_atanh), {{tiny, 1, true}, {-1, 1, false}}},
      {MathFn::Erf, "erf", r(mpfr_erf), {{tiny, 30, true}, {-4, 4, false}}},
      {MathFn::Erfc, "erfc", r(mpfr_erfc), {{tiny, 30, true}, {-4, 27, false}}, 1.5},
      {MathFn::Lgamma, "lgamma", Unary([](mpfr_t y, const mpfr_t x) { int s; mpfr_lgamma(y, &s, x, MPFR_RNDN); }),
       {{tiny, big, true}, {0.1, 20, false}}},
      {MathFn::Log2, "log2", r(mpfr_log2), {{tiny, big, true}, {0.5, 2, false}}},
      {MathFn::Log10, "log10", r(mpfr_log10), {{tiny, big, true}, {0.5, 2, false}}},
      {MathFn::Exp2, "exp2", r(mpfr_exp2), {{tiny, 1100, true}, {-1080, 1030, false}}},
      {MathFn::Cbrt, "cbrt", r(mpfr_cbrt), {{tiny, big, true}, {-10, 10, false}}},
  };
}

template <class T>
tf::exec::UnaryArrayFn<T> pick(const VectorMathTable& table, MathFn fn) {
  if constexpr (sizeof(T) == 8) {
    return table.f64[static_cast<int>(fn)];
  } else {
    return table.f32[static_cast<int>(fn)];
  }
}

template <class T>
void check_unary(const VectorMathTable& table) {
  const bool f64 = sizeof(T) == 8;
  const bool sleef = table.accuracy == tf::MathAccuracy::Precise;
  for (const UnaryCase& c : unary_cases(f64)) {
    SCOPED_TRACE(std::string(table.library) + " " + table.isa + (f64 ? " f64 " : " f32 ") + c.name);
    std::vector<T> x = special_inputs<T>();
    std::uint64_t seed = 1;
    for (const auto& [lo, hi, log_scale] : c.ranges) {
      for (T v : sweep<T>(lo, hi, log_scale, seed++)) {
        x.push_back(v);
        if (log_scale) x.push_back(-v);
      }
    }
    std::vector<T> y(x.size());
    pick<T>(table, c.fn)(x.data(), y.data(), static_cast<std::int64_t>(x.size()));
    const double bound = sleef ? c.sleef_bound : 4.0;
    double worst = 0;
    T worst_at = 0;
    Big xin, exact;
    for (std::size_t i = 0; i < x.size(); ++i) {
      mpfr_set_d(xin.v, static_cast<double>(x[i]), MPFR_RNDN);
      c.reference(exact.v, xin.v);
      // The reference in T's format, with subnormal rounding (mpfr_subnormalize needs the
      // format's exponent range; rounding through double/float conversion above handles the
      // values, and the ULP measure uses the subnormal spacing).
      const double e = ulp_error<T>(y[i], exact.v);
      if (e > worst) {
        worst = e;
        worst_at = x[i];
      }
    }
    EXPECT_LE(worst, bound) << "worst at x = " << static_cast<double>(worst_at);
  }
}

template <class T>
tf::exec::BinaryArrayFn<T> pick2(const VectorMathTable& table, MathFn2 fn) {
  if constexpr (sizeof(T) == 8) {
    return table.math2_f64[static_cast<int>(fn)];
  } else {
    return table.math2_f32[static_cast<int>(fn)];
  }
}

template <class T>
void check_binary(const VectorMathTable& table) {
  const bool f64 = sizeof(T) == 8;
  const bool sleef = table.accuracy == tf::MathAccuracy::Precise;
  struct Case {
    MathFn2 fn;
    const char* name;
    Binary reference;
    double sleef_bound;
  };
  const Case cases[] = {
      {MathFn2::Atan2, "atan2", [](mpfr_t z, const mpfr_t a, const mpfr_t b) { mpfr_atan2(z, a, b, MPFR_RNDN); }, 1.0},
      {MathFn2::Hypot, "hypot", [](mpfr_t z, const mpfr_t a, const mpfr_t b) { mpfr_hypot(z, a, b, MPFR_RNDN); }, 0.5},
  };
  const std::vector<T> specials = special_inputs<T>();
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(table.library) + " " + table.isa + (f64 ? " f64 " : " f32 ") + c.name);
    std::vector<T> a, b;
    for (T u : specials) {
      for (T v : specials) {
        a.push_back(u);
        b.push_back(v);
      }
    }
    const auto mag = sweep<T>(f64 ? 1e-300 : 1e-37, f64 ? 1e300 : 1e37, true, 7, 1500);
    const auto mag2 = sweep<T>(f64 ? 1e-300 : 1e-37, f64 ? 1e300 : 1e37, true, 8, 1500);
    const auto lin = sweep<T>(-10, 10, false, 9, 1500);
    const auto lin2 = sweep<T>(-10, 10, false, 10, 1500);
    for (std::size_t i = 0; i < mag.size(); ++i) {
      a.push_back(i % 2 ? mag[i] : -mag[i]);
      b.push_back(i % 3 ? mag2[i] : -mag2[i]);
      a.push_back(lin[i]);
      b.push_back(lin2[i]);
    }
    std::vector<T> z(a.size());
    pick2<T>(table, c.fn)(a.data(), b.data(), z.data(), static_cast<std::int64_t>(a.size()));
    const double bound = sleef ? c.sleef_bound : 4.0;
    double worst = 0;
    std::size_t worst_at = 0;
    Big ba, bb, exact;
    for (std::size_t i = 0; i < a.size(); ++i) {
      mpfr_set_d(ba.v, static_cast<double>(a[i]), MPFR_RNDN);
      mpfr_set_d(bb.v, static_cast<double>(b[i]), MPFR_RNDN);
      c.reference(exact.v, ba.v, bb.v);
      const double e = ulp_error<T>(z[i], exact.v);
      if (e > worst) {
        worst = e;
        worst_at = i;
      }
    }
    EXPECT_LE(worst, bound) << "worst at (" << static_cast<double>(a[worst_at]) << ", "
                            << static_cast<double>(b[worst_at]) << ")";
  }
}

TEST(VectorMathAccuracy, UnaryFunctionsAreWithinTheLibrarysBoundOfTheCorrectlyRoundedValue) {
  for (const VectorMathTable* table : tf::exec::runnable_vector_math_tables()) {
    check_unary<double>(*table);
    check_unary<float>(*table);
  }
}

TEST(VectorMathAccuracy, BinaryFunctionsAreWithinTheLibrarysBoundOfTheCorrectlyRoundedValue) {
  for (const VectorMathTable* table : tf::exec::runnable_vector_math_tables()) {
    check_binary<double>(*table);
    check_binary<float>(*table);
  }
}

}  // namespace
