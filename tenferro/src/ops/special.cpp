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

#include "ir/emit.hpp"
#include "ir/family.hpp"
#include "ir/vector_blocks.hpp"
#include "kernels/special_erf.hpp"
#include "kernels/special_scalar.hpp"

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
template <class Rule>
JvpRule unary_jvp(Rule rule) {
  return [rule](const StdTensorOp&, const JvpArgs& a) -> Tangents {
    Emit e(a.b);
    return {rule(e, Emit::ext(a.x[0]), Emit::ext(a.y[0]), *a.t[0])};
  };
}
LocalValueId gaussian_times(Emit& e, const PV& x, double c, LocalValueId dx) {
  PV minus_x2 = e.fixed(OpKind::Neg, e.fixed_mul(x, x));
  return e.scale(e.fixed_scaled(e.fixed(OpKind::Exp, minus_x2), c), dx);
}
constexpr double kTwoOverSqrtPi = 2 * std::numbers::inv_sqrtpi;

/// polygamma(n, x) as a fixed value (n a value of x's type).
PV fixed_polygamma(Emit& e, const PV& n, const PV& x) {
  return e.primal(ops::binary(OpKind::Polygamma, e.type(n), e.type(x)), {n, x});
}

/// i1(x) / x, with its series 1/2 + x^2/16 where |x| < 1e-4 (the next term, x^4/384, is below
/// the last bit there) and x kept away from 0 in the quotient (double where).
PV i1_over_x(Emit& e, const PV& x) {
  const TensorType& t = e.type(x);
  PV small = e.compare(CompareDir::Lt, e.fixed(OpKind::Abs, x), e.full(t, 1e-4));
  PV safe_x = e.primal(ops::select(e.type(small), t, t), {small, e.full(t, 1.0), x});
  PV quotient = e.fixed_div(e.fixed(OpKind::BesselI1, safe_x), safe_x);
  PV series = e.fixed_add(e.full(t, 0.5), e.fixed_scaled(e.fixed_mul(x, x), 1.0 / 16));
  return e.primal(ops::select(e.type(small), t, t), {small, series, quotient});
}

/// erfcx'(x) = 2 x erfcx(x) - 2/sqrt(pi) as a fixed value (y = erfcx(x)). The difference cancels
/// as x grows (2 x y tends to 2/sqrt(pi)), losing about log10(2 x^2) digits, and the second
/// derivative 2 y + 2 x erfcx'(x) cancels once more; so above x = 20 it is the asymptotic series
/// (2/sqrt(pi)) sum_{k>=1} (-1)^k (2k-1)!! / (2 x^2)^k, whose terms fall by a factor of at least
/// 2 x^2 / (2k + 1) = 800 / 17 there: its first 8 terms reach the last bit of a double. The series
/// is an expression of ops, so the rule differentiates again; its operand is held at 20 where the
/// other branch is taken (the "double where": 1 / x^2 is infinite at 0). Operands that emit are
/// named first, so that the graph's order does not depend on the compiler's order of evaluation.
PV erfcx_slope(Emit& e, const PV& x, const PV& y) {
  constexpr double kSeriesFrom = 20;
  constexpr double kCoefficients[] = {-1, 3, -15, 105, -945, 10395, -135135, 2027025};  // (-1)^k (2k-1)!!
  const TensorType& t = e.type(x);
  const PV two_xy = e.fixed_scaled(e.fixed_mul(x, y), 2.0);
  const PV direct = e.fixed_sub(two_xy, e.full(t, kTwoOverSqrtPi));
  const PV large = e.compare(CompareDir::Gt, x, e.full(t, kSeriesFrom));
  const PV x_safe = e.primal(ops::select(e.type(large), t, t), {large, x, e.full(t, kSeriesFrom)});
  const PV x2 = e.fixed_mul(x_safe, x_safe);
  const PV z = e.fixed_div(e.full(t, 0.5), x2);  // 1 / (2 x^2)
  PV sum = e.full(t, kCoefficients[7]);
  for (int k = 6; k >= 0; --k) {
    const PV scaled = e.fixed_mul(z, sum);
    sum = e.fixed_add(e.full(t, kCoefficients[k]), scaled);
  }
  const PV series = e.fixed_scaled(e.fixed_mul(z, sum), kTwoOverSqrtPi);
  return e.primal(ops::select(e.type(large), t, t), {large, series, direct});
}
}  // namespace

const OpDef& def_Erf() {
  static const OpDef d = formula_op("erf", OpKind::Erf, {kNonlinear}, vectorized<MathFn::Erf>(unary_formula<erf_fn, false>()),
                                    unary_jvp([](Emit& e, const PV& x, const PV&, LocalValueId dx) {
                                      return gaussian_times(e, x, kTwoOverSqrtPi, dx);
                                    }));
  return d;
}

const OpDef& def_Erfinv() {
  static const OpDef d = formula_op("erfinv", OpKind::Erfinv, {kNonlinear}, unary_formula<erfinv_fn, false>(),
                                    unary_jvp([](Emit& e, const PV&, const PV& y, LocalValueId dx) {
                                      PV exp_y2 = e.fixed(OpKind::Exp, e.fixed_mul(y, y));
                                      return e.scale(e.fixed_scaled(exp_y2, std::sqrt(std::numbers::pi) / 2), dx);
                                    }), Domain::Centered);
  return d;
}

const OpDef& def_Erfcinv() {
  static const OpDef d = formula_op("erfcinv", OpKind::Erfcinv, {kNonlinear}, unary_formula<erfcinv_fn, false>(),
                                    unary_jvp([](Emit& e, const PV&, const PV& y, LocalValueId dx) {
                                      PV exp_y2 = e.fixed(OpKind::Exp, e.fixed_mul(y, y));
                                      return e.scale(e.fixed_scaled(exp_y2, -std::sqrt(std::numbers::pi) / 2), dx);
                                    }), Domain::NearOne);
  return d;
}

const OpDef& def_Erfcx() {
  static const OpDef d = formula_op("erfcx", OpKind::Erfcx, {kNonlinear}, unary_formula<erfcx_fn, false>(),
                                    unary_jvp([](Emit& e, const PV& x, const PV& y, LocalValueId dx) {
                                      return e.scale(erfcx_slope(e, x, y), dx);
                                    }));
  return d;
}

const OpDef& def_Lgamma() {
  static const OpDef d = formula_op("lgamma", OpKind::Lgamma, {kNonlinear},
                                    vectorized<MathFn::Lgamma>(unary_formula<lgamma_fn, false>()),
                                    unary_jvp([](Emit& e, const PV& x, const PV&, LocalValueId dx) {
                                      return e.scale(e.fixed(OpKind::Digamma, x), dx);
                                    }), Domain::Positive);
  return d;
}

const OpDef& def_Digamma() {
  static const OpDef d = formula_op("digamma", OpKind::Digamma, {kNonlinear}, digamma_formula(),
                                    unary_jvp([](Emit& e, const PV& x, const PV&, LocalValueId dx) {
                                      return e.scale(fixed_polygamma(e, e.full(e.type(x), 1.0), x), dx);
                                    }), Domain::Positive);
  return d;
}

const OpDef& def_Polygamma() {
  static const OpDef d = formula_op("polygamma", OpKind::Polygamma, {kNoGrad, kNonlinear}, binary_formula<polygamma_fn>(),
                                    [](const StdTensorOp&, const JvpArgs& a) -> Tangents {
                                      if (!a.t[1]) return {std::nullopt};
                                      Emit e(a.b);
                                      const PV n = Emit::ext(a.x[0]);
                                      const PV x = Emit::ext(a.x[1]);
                                      PV next = e.fixed_add(n, e.full(e.type(n), 1.0));
                                      return {e.scale(fixed_polygamma(e, next, x), *a.t[1])};
                                    });
  return d;
}

const OpDef& def_BesselI0() {
  static const OpDef d = formula_op("bessel_i0", OpKind::BesselI0, {kNonlinear}, unary_formula<i0_fn, false>(),
                                    unary_jvp([](Emit& e, const PV& x, const PV&, LocalValueId dx) {
                                      return e.scale(e.fixed(OpKind::BesselI1, x), dx);
                                    }));
  return d;
}

const OpDef& def_BesselI0e() {
  static const OpDef d = formula_op("bessel_i0e", OpKind::BesselI0e, {kNonlinear}, unary_formula<i0e_fn, false>(),
                                    unary_jvp([](Emit& e, const PV& x, const PV& y, LocalValueId dx) {
                                      PV sign_y = e.fixed_mul(e.fixed(OpKind::Sign, x), y);
                                      return e.scale(e.fixed_sub(e.fixed(OpKind::BesselI1e, x), sign_y), dx);
                                    }), Domain::Positive, Discontinuity::KinkAtZero);
  return d;
}

const OpDef& def_BesselI1() {
  static const OpDef d = formula_op("bessel_i1", OpKind::BesselI1, {kNonlinear}, unary_formula<i1_fn, false>(),
                                    unary_jvp([](Emit& e, const PV& x, const PV&, LocalValueId dx) {
                                      PV i0 = e.fixed(OpKind::BesselI0, x);
                                      return e.scale(e.fixed_sub(i0, i1_over_x(e, x)), dx);
                                    }));
  return d;
}

const OpDef& def_BesselI1e() {
  static const OpDef d = formula_op("bessel_i1e", OpKind::BesselI1e, {kNonlinear}, unary_formula<i1e_fn, false>(),
                                    unary_jvp([](Emit& e, const PV& x, const PV& y, LocalValueId dx) {
                                      // i1e' = i0e - sign(x) i1e - i1e / x, and i1e / x = exp(-|x|) i1(x) / x.
                                      PV scaled_quotient = e.fixed_mul(e.fixed(OpKind::Exp, e.fixed(OpKind::Neg, e.fixed(OpKind::Abs, x))),
                                                                       i1_over_x(e, x));
                                      PV sign_y = e.fixed_mul(e.fixed(OpKind::Sign, x), y);
                                      PV i0e = e.fixed(OpKind::BesselI0e, x);
                                      return e.scale(e.fixed_sub(e.fixed_sub(i0e, sign_y), scaled_quotient), dx);
                                    }), Domain::Positive, Discontinuity::KinkAtZero);
  return d;
}

const OpDef& def_Erfc() {
  static const OpDef d = formula_op("erfc", OpKind::Erfc, {kNonlinear}, vectorized<MathFn::Erfc>(unary_formula<erfc_fn, false>()),
                                    unary_jvp([](Emit& e, const PV& x, const PV&, LocalValueId dx) {
                                      return gaussian_times(e, x, -kTwoOverSqrtPi, dx);
                                    }));
  return d;
}

}  // namespace tenferro::detail
