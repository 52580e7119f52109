// Special functions on f32 and f64: erf, erfc. Each is given by its formula (ElementFormula): the
// libm function for one element, the vector math library's for fused blocks (SLEEF's erfc is its
// 1.5-ULP variant).
//
// JVP rules: erf: 2/sqrt(pi) exp(-x^2) dx; erfc: -2/sqrt(pi) exp(-x^2) dx.
#include <cmath>
#include <numbers>

#include "emit.hpp"
#include "family.hpp"
#include "vector_blocks.hpp"

namespace tenferro::detail {

namespace {
using exec::MathFn;

constexpr auto erf_fn = [](auto x) { return std::erf(x); };
constexpr auto erfc_fn = [](auto x) { return std::erfc(x); };

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
}  // namespace

const OpDef& def_Erf() {
  static const OpDef d = formula_op("erf", OpKind::Erf, {kNonlinear}, vectorized<MathFn::Erf>(unary_formula<erf_fn, false>()),
                                    unary_jvp([](Emit& e, const PV& x, const PV&, LocalValueId dx) {
                                      return gaussian_times(e, x, kTwoOverSqrtPi, dx);
                                    }));
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
