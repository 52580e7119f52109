// Trigonometric and hyperbolic functions beyond sin, cos and tanh: tan, asin, acos, atan, sinh,
// cosh, asinh, acosh, atanh (f32, f64, c64, c128) and atan2 (f32, f64). Each is given by its
// formula (ElementFormula): the libm function for one element, the vector math library's for
// fused blocks. Complex functions are the principal branches of C99/C++ (std::asin etc.: branch
// cuts on the real axis outside [-1, 1] for asin, acos and atanh, on the imaginary axis outside
// [-i, i] for asinh and atan, and left of 1 for acosh: OpDef::branch_cut), so their JVP is
// f'(z) dz. atan2 jumps across the negative x axis (OpDef::discontinuity).
//
// JVP rules (x the operand, y the result):
//   tan: (1 + y^2) dx          asin: dx / sqrt(1 - x^2)       acos: -dx / sqrt(1 - x^2)
//   atan: dx / (1 + x^2)       sinh: cosh(x) dx               cosh: sinh(x) dx
//   asinh: dx / sqrt(x^2 + 1)  acosh: dx / (sqrt(x - 1) sqrt(x + 1))    atanh: dx / (1 - x^2)
//   atan2(a, b) (the angle of the point (b, a)): (b da - a db) / (a^2 + b^2)
// The product form of acosh's factor is the derivative of the principal branch on the whole
// complex plane (sqrt(x^2 - 1) differs from it in sign left of the imaginary axis).
#include <cmath>
#include <complex>

#include "ir/emit.hpp"
#include "ir/family.hpp"
#include "ir/vector_blocks.hpp"

namespace tenferro::detail {

namespace {
using exec::MathFn;

constexpr auto tan_fn = [](auto x) { return std::tan(x); };
constexpr auto asin_fn = [](auto x) { return std::asin(x); };
constexpr auto acos_fn = [](auto x) { return std::acos(x); };
constexpr auto atan_fn = [](auto x) { return std::atan(x); };
constexpr auto sinh_fn = [](auto x) { return std::sinh(x); };
constexpr auto cosh_fn = [](auto x) { return std::cosh(x); };
constexpr auto asinh_fn = [](auto x) { return std::asinh(x); };
constexpr auto acosh_fn = [](auto x) { return std::acosh(x); };
constexpr auto atanh_fn = [](auto x) { return std::atanh(x); };
constexpr auto atan2_fn = [](auto y, auto x) { return std::atan2(y, x); };

/// The JVP of a unary op y = f(x): `rule(e, x, y, dx)` emits f'(x) dx.
template <class Rule>
JvpRule unary_jvp(Rule rule) {
  return [rule](const StdTensorOp&, const JvpArgs& a) -> Tangents {
    Emit e(a.b);
    return {rule(e, Emit::ext(a.x[0]), Emit::ext(a.y[0]), *a.t[0])};
  };
}

PV one_like(Emit& e, const PV& v) { return e.full(e.type(v), 1.0); }

Tangents jvp_atan2(const StdTensorOp&, const JvpArgs& args) {
  Emit e(args.b);
  const PV a = Emit::ext(args.x[0]);
  const PV b = Emit::ext(args.x[1]);
  PV a2 = e.fixed_mul(a, a);
  PV b2 = e.fixed_mul(b, b);
  const PV r2 = e.fixed_add(a2, b2);
  std::optional<LocalValueId> da, db;
  if (args.t[0]) da = e.scale(e.fixed_div(b, r2), *args.t[0]);
  if (args.t[1]) db = e.scale(e.fixed(OpKind::Neg, e.fixed_div(a, r2)), *args.t[1]);
  return {e.sum(da, db)};
}
}  // namespace

const OpDef& def_Tan() {
  static const OpDef d = formula_op("tan", OpKind::Tan, {kNonlinear}, vectorized<MathFn::Tan>(unary_formula<tan_fn, true>()),
                                    unary_jvp([](Emit& e, const PV&, const PV& y, LocalValueId dx) {
                                      PV y2 = e.fixed_mul(y, y);
                                      return e.scale(e.fixed_add(one_like(e, y), y2), dx);
                                    }), Domain::Centered);
  return d;
}

const OpDef& def_Asin() {
  static const OpDef d = formula_op("asin", OpKind::Asin, {kNonlinear}, vectorized<MathFn::Asin>(unary_formula<asin_fn, true>()),
                                    unary_jvp([](Emit& e, const PV& x, const PV&, LocalValueId dx) {
                                      PV x2 = e.fixed_mul(x, x);
                                      PV root = e.fixed(OpKind::Sqrt, e.fixed_sub(one_like(e, x), x2));
                                      return e.divide(dx, root);
                                    }), Domain::Centered, Discontinuity::None, kCutOutsideUnit);
  return d;
}

const OpDef& def_Acos() {
  static const OpDef d = formula_op("acos", OpKind::Acos, {kNonlinear}, vectorized<MathFn::Acos>(unary_formula<acos_fn, true>()),
                                    unary_jvp([](Emit& e, const PV& x, const PV&, LocalValueId dx) {
                                      PV x2 = e.fixed_mul(x, x);
                                      PV root = e.fixed(OpKind::Sqrt, e.fixed_sub(one_like(e, x), x2));
                                      return e.divide(dx, e.fixed(OpKind::Neg, root));
                                    }), Domain::Centered, Discontinuity::None, kCutOutsideUnit);
  return d;
}

const OpDef& def_Atan() {
  static const OpDef d = formula_op("atan", OpKind::Atan, {kNonlinear}, vectorized<MathFn::Atan>(unary_formula<atan_fn, true>()),
                                    unary_jvp([](Emit& e, const PV& x, const PV&, LocalValueId dx) {
                                      PV x2 = e.fixed_mul(x, x);
                                      return e.divide(dx, e.fixed_add(one_like(e, x), x2));
                                    }), Domain::Centered, Discontinuity::None,
                                    kCutOutsideUnitImaginary);
  return d;
}

const OpDef& def_Sinh() {
  static const OpDef d = formula_op("sinh", OpKind::Sinh, {kNonlinear}, vectorized<MathFn::Sinh>(unary_formula<sinh_fn, true>()),
                                    unary_jvp([](Emit& e, const PV& x, const PV&, LocalValueId dx) {
                                      return e.scale(e.fixed(OpKind::Cosh, x), dx);
                                    }));
  return d;
}

const OpDef& def_Cosh() {
  static const OpDef d = formula_op("cosh", OpKind::Cosh, {kNonlinear}, vectorized<MathFn::Cosh>(unary_formula<cosh_fn, true>()),
                                    unary_jvp([](Emit& e, const PV& x, const PV&, LocalValueId dx) {
                                      return e.scale(e.fixed(OpKind::Sinh, x), dx);
                                    }));
  return d;
}

const OpDef& def_Asinh() {
  static const OpDef d = formula_op("asinh", OpKind::Asinh, {kNonlinear}, vectorized<MathFn::Asinh>(unary_formula<asinh_fn, true>()),
                                    unary_jvp([](Emit& e, const PV& x, const PV&, LocalValueId dx) {
                                      PV x2 = e.fixed_mul(x, x);
                                      return e.divide(dx, e.fixed(OpKind::Sqrt, e.fixed_add(x2, one_like(e, x))));
                                    }), Domain::Centered, Discontinuity::None,
                                    kCutOutsideUnitImaginary);
  return d;
}

const OpDef& def_Acosh() {
  static const OpDef d = formula_op("acosh", OpKind::Acosh, {kNonlinear}, vectorized<MathFn::Acosh>(unary_formula<acosh_fn, true>()),
                                    unary_jvp([](Emit& e, const PV& x, const PV&, LocalValueId dx) {
                                      const PV one = one_like(e, x);
                                      PV below = e.fixed(OpKind::Sqrt, e.fixed_sub(x, one));
                                      PV above = e.fixed(OpKind::Sqrt, e.fixed_add(x, one));
                                      return e.divide(dx, e.fixed_mul(below, above));
                                    }), Domain::AboveOne, Discontinuity::None, kCutLeftOfOne);
  return d;
}

const OpDef& def_Atanh() {
  static const OpDef d = formula_op("atanh", OpKind::Atanh, {kNonlinear}, vectorized<MathFn::Atanh>(unary_formula<atanh_fn, true>()),
                                    unary_jvp([](Emit& e, const PV& x, const PV&, LocalValueId dx) {
                                      PV x2 = e.fixed_mul(x, x);
                                      return e.divide(dx, e.fixed_sub(one_like(e, x), x2));
                                    }), Domain::Centered, Discontinuity::None, kCutOutsideUnit);
  return d;
}

const OpDef& def_Atan2() {
  static const OpDef d = formula_op("atan2", OpKind::Atan2, {kNonlinear, kNonlinear},
                                    vectorized<exec::MathFn2::Atan2>(binary_formula<atan2_fn>()), jvp_atan2, Domain::AboveOne,
                                    Discontinuity::JumpsAtNegativeXAxis);
  return d;
}

}  // namespace tenferro::detail
