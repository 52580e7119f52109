// Special functions on f32 and f64: erf, erfc, erfinv, erfcinv, erfcx, lgamma, digamma, polygamma and the modified
// Bessel functions i0, i0e, i1, i1e. Each is given by its formula (ElementFormula): libm's function
// (erf, erfc, lgamma) or kernels/special_scalar.hpp's for one element, and the vector math library's for
// fused blocks where it has one (erf, erfc: SLEEF's 1.5-ULP variant; lgamma: SLEEF's).
//
// JVP rules (x the operand, y the result):
//   erf: 2/sqrt(pi) exp(-x^2) dx      erfc: -2/sqrt(pi) exp(-x^2) dx
//   erfinv: sqrt(pi)/2 exp(y^2) dx    erfcinv: -sqrt(pi)/2 exp(y^2) dx
//   erfcx = exp(x^2) erfc(x): (2 x y - 2/sqrt(pi)) dx, above x = 20 by its asymptotic series (the
//     difference cancels there: erfcx_slope)
//   lgamma: digamma(x) dx    digamma: polygamma(1, x) dx
//   polygamma(n, x): polygamma(n + 1, x) dx (the order n is a non-differentiable operand, an
//     integer held in x's dtype, so the op is an ordinary binary formula that fuses)
//   i0: i1 dx     i0e: (i1e - sign(x) i0e) dx (i0e and i1e have a kink at 0: OpDef::discontinuity)
//   i1: (i0 - i1/x) dx    i1e: (i0e - sign(x) i1e - i1e/x) dx, with i1(x)/x taken from its series
//     1/2 + x^2/16 for |x| < 1e-4 (exact there to the last bit), so the rules are finite at 0 and
//     differentiable again.
#include <cmath>
#include <limits>
#include <numbers>

#include "ir/family.hpp"
#include "ir/vector_blocks.hpp"
#include "kernels/special_erf.hpp"
#include "kernels/special_scalar.hpp"
#include "tenferro/ops/rule.hpp"

namespace tenferro::detail {

namespace {
using exec::MathFn;

constexpr auto erf_fn = [](auto x) { return std::erf(x); };
constexpr auto erfc_fn = [](auto x) { return std::erfc(x); };
constexpr auto erfinv_fn = [](auto x) { return special::erfinv(x); };
constexpr auto erfcinv_fn = [](auto x) { return special::erfcinv(x); };
constexpr auto erfcx_fn = [](auto x) { return special::erfcx(x); };
// lgamma_r: glibc's lgamma writes the global signgam, a data race between threads.
constexpr auto lgamma_fn = [](auto x) {
  int sign = 0;
  if constexpr (sizeof(x) == 8) {
    return ::lgamma_r(x, &sign);
  } else {
    return ::lgammaf_r(x, &sign);
  }
};
constexpr auto digamma_fn = [](auto x) { return special::digamma(x); };

void digamma_block_f64(MathAccuracy accuracy, const double* a, const double*, double* y, std::int64_t n) {
  if (accuracy == MathAccuracy::Fast) {
    for (std::int64_t i = 0; i < n; ++i) y[i] = special::digamma_fast(a[i]);
  } else {
    for (std::int64_t i = 0; i < n; ++i) y[i] = special::digamma(a[i]);
  }
}
void digamma_block_f32(MathAccuracy accuracy, const float* a, const float*, float* y, std::int64_t n) {
  // In double, rounded once: within 0.51 ULP of f32 either way.
  if (accuracy == MathAccuracy::Fast) {
    for (std::int64_t i = 0; i < n; ++i) y[i] = static_cast<float>(special::digamma_fast(a[i]));
  } else {
    for (std::int64_t i = 0; i < n; ++i) y[i] = special::digamma(a[i]);
  }
}

/// digamma's formula: special::digamma for one element, special::digamma_fast for fused blocks
/// under MathAccuracy::Fast.
ElementFormula digamma_formula() {
  ElementFormula f = unary_formula<digamma_fn, false>();
  f.f64_block = digamma_block_f64;
  f.f32_block = digamma_block_f32;
  return f;
}
/// polygamma(n, x) with the order held as a float; a negative or non-integer order gives NaN (the
/// traced API rejects it before).
constexpr auto polygamma_fn = [](auto n, auto x) {
  if (!(n >= 0) || n != std::floor(n) || n > 1000) return static_cast<decltype(x)>(std::numeric_limits<double>::quiet_NaN());
  return special::polygamma(static_cast<int>(n), x);
};
constexpr auto i0_fn = [](auto x) { return special::bessel_i0(x); };
constexpr auto i0e_fn = [](auto x) { return special::bessel_i0e(x); };
constexpr auto i1_fn = [](auto x) { return special::bessel_i1(x); };
constexpr auto i1e_fn = [](auto x) { return special::bessel_i1e(x); };

/// c exp(-x^2) dx.
Traced gaussian_times(const Traced& x, double c, const Traced& dx) { return exp(-(x * x)) * c * dx; }
constexpr double kTwoOverSqrtPi = 2 * std::numbers::inv_sqrtpi;

/// polygamma(n, x) (n a value of x's type).
Traced polygamma_of(const Traced& n, const Traced& x) {
  return apply_binary(ops::binary(OpKind::Polygamma, n.type(), x.type()), n, x);
}

/// i1(x) / x, with its series 1/2 + x^2/16 where |x| < 1e-4 (the next term, x^4/384, is below
/// the last bit there) and x kept away from 0 in the quotient (double where).
Traced i1_over_x(const Traced& x) {
  const Traced small = lt(abs(x), full_like(x, 1e-4));
  const Traced safe_x = where(small, 1.0, x);
  const Traced quotient = i1(safe_x) / safe_x;
  const Traced series = 0.5 + x * x * (1.0 / 16);
  return where(small, series, quotient);
}

/// erfcx'(x) = 2 x erfcx(x) - 2/sqrt(pi) (y = erfcx(x)). The difference cancels as x grows
/// (2 x y tends to 2/sqrt(pi)), losing about log10(2 x^2) digits, and the second derivative
/// 2 y + 2 x erfcx'(x) cancels once more; so above x = 20 it is the asymptotic series
/// (2/sqrt(pi)) sum_{k>=1} (-1)^k (2k-1)!! / (2 x^2)^k, whose terms fall by a factor of at least
/// 2 x^2 / (2k + 1) = 800 / 17 there: its first 8 terms reach the last bit of a double. The series
/// is an expression of ops, so the rule differentiates again; its operand is held at 20 where the
/// other branch is taken (the "double where": 1 / x^2 is infinite at 0).
Traced erfcx_slope(const Traced& x, const Traced& y) {
  constexpr double kSeriesFrom = 20;
  constexpr double kCoefficients[] = {-1, 3, -15, 105, -945, 10395, -135135, 2027025};  // (-1)^k (2k-1)!!
  const Traced direct = x * y * 2.0 - kTwoOverSqrtPi;
  const Traced large = gt(x, full_like(x, kSeriesFrom));
  const Traced x_safe = where(large, x, kSeriesFrom);
  const Traced z = 0.5 / (x_safe * x_safe);  // 1 / (2 x^2)
  Traced sum = full_like(x, kCoefficients[7]);
  for (int k = 6; k >= 0; --k) sum = kCoefficients[k] + z * sum;
  const Traced series = z * sum * kTwoOverSqrtPi;
  return where(large, series, direct);
}
}  // namespace

const OpDef& def_Erf() {
  static const OpDef d = formula_op("erf", OpKind::Erf, {kNonlinear}, vectorized<MathFn::Erf>(unary_formula<erf_fn, false>()),
                                    traced_unary_jvp([](const Traced& x, const Traced&, const Traced& dx) {
                                      return gaussian_times(x, kTwoOverSqrtPi, dx);
                                    }));
  return d;
}

const OpDef& def_Erfinv() {
  static const OpDef d = formula_op("erfinv", OpKind::Erfinv, {kNonlinear}, unary_formula<erfinv_fn, false>(),
                                    traced_unary_jvp([](const Traced&, const Traced& y, const Traced& dx) {
                                      return exp(y * y) * (std::sqrt(std::numbers::pi) / 2) * dx;
                                    }), Domain::Centered);
  return d;
}

const OpDef& def_Erfcinv() {
  static const OpDef d = formula_op("erfcinv", OpKind::Erfcinv, {kNonlinear}, unary_formula<erfcinv_fn, false>(),
                                    traced_unary_jvp([](const Traced&, const Traced& y, const Traced& dx) {
                                      return exp(y * y) * (-std::sqrt(std::numbers::pi) / 2) * dx;
                                    }), Domain::NearOne);
  return d;
}

const OpDef& def_Erfcx() {
  static const OpDef d = formula_op("erfcx", OpKind::Erfcx, {kNonlinear}, unary_formula<erfcx_fn, false>(),
                                    traced_unary_jvp([](const Traced& x, const Traced& y, const Traced& dx) {
                                      return erfcx_slope(x, y) * dx;
                                    }));
  return d;
}

const OpDef& def_Lgamma() {
  static const OpDef d = formula_op("lgamma", OpKind::Lgamma, {kNonlinear},
                                    vectorized<MathFn::Lgamma>(unary_formula<lgamma_fn, false>()),
                                    traced_unary_jvp([](const Traced& x, const Traced&, const Traced& dx) {
                                      return digamma(x) * dx;
                                    }), Domain::Positive);
  return d;
}

const OpDef& def_Digamma() {
  static const OpDef d = formula_op("digamma", OpKind::Digamma, {kNonlinear}, digamma_formula(),
                                    traced_unary_jvp([](const Traced& x, const Traced&, const Traced& dx) {
                                      return polygamma_of(full_like(x, 1.0), x) * dx;
                                    }), Domain::Positive);
  return d;
}

const OpDef& def_Polygamma() {
  static const OpDef d = formula_op("polygamma", OpKind::Polygamma, {kNoGrad, kNonlinear}, binary_formula<polygamma_fn>(),
                                    [](const StdTensorOp& op, const JvpArgs& a) -> Tangents {
                                      if (!a.t[1]) return {std::nullopt};
                                      RuleTrace r(a.b);
                                      const Traced n = r.fixed(a.x[0]);
                                      const Traced next = polygamma_of(n + 1.0, r.fixed(a.x[1]));
                                      return {r.result(next * r.linear(*a.t[1]), op, tidu::RuleKind::Jvp)};
                                    });
  return d;
}

const OpDef& def_BesselI0() {
  static const OpDef d = formula_op("bessel_i0", OpKind::BesselI0, {kNonlinear}, unary_formula<i0_fn, false>(),
                                    traced_unary_jvp([](const Traced& x, const Traced&, const Traced& dx) {
                                      return i1(x) * dx;
                                    }));
  return d;
}

const OpDef& def_BesselI0e() {
  static const OpDef d = formula_op("bessel_i0e", OpKind::BesselI0e, {kNonlinear}, unary_formula<i0e_fn, false>(),
                                    traced_unary_jvp([](const Traced& x, const Traced& y, const Traced& dx) {
                                      const Traced sign_y = sign(x) * y;
                                      return (i1e(x) - sign_y) * dx;
                                    }), Domain::Positive, Discontinuity::KinkAtZero);
  return d;
}

const OpDef& def_BesselI1() {
  static const OpDef d = formula_op("bessel_i1", OpKind::BesselI1, {kNonlinear}, unary_formula<i1_fn, false>(),
                                    traced_unary_jvp([](const Traced& x, const Traced&, const Traced& dx) {
                                      const Traced i0x = i0(x);
                                      return (i0x - i1_over_x(x)) * dx;
                                    }));
  return d;
}

const OpDef& def_BesselI1e() {
  static const OpDef d = formula_op("bessel_i1e", OpKind::BesselI1e, {kNonlinear}, unary_formula<i1e_fn, false>(),
                                    traced_unary_jvp([](const Traced& x, const Traced& y, const Traced& dx) {
                                      // i1e' = i0e - sign(x) i1e - i1e / x, and i1e / x = exp(-|x|) i1(x) / x.
                                      const Traced exp_abs = exp(-abs(x));
                                      const Traced scaled_quotient = exp_abs * i1_over_x(x);
                                      const Traced sign_y = sign(x) * y;
                                      const Traced i0ex = i0e(x);
                                      return (i0ex - sign_y - scaled_quotient) * dx;
                                    }), Domain::Positive, Discontinuity::KinkAtZero);
  return d;
}

const OpDef& def_Erfc() {
  static const OpDef d = formula_op("erfc", OpKind::Erfc, {kNonlinear}, vectorized<MathFn::Erfc>(unary_formula<erfc_fn, false>()),
                                    traced_unary_jvp([](const Traced& x, const Traced&, const Traced& dx) {
                                      return gaussian_times(x, -kTwoOverSqrtPi, dx);
                                    }));
  return d;
}

}  // namespace tenferro::detail
