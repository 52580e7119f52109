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

#include "ir/family.hpp"
#include "ir/vector_blocks.hpp"
#include "tenferro/ops/rule.hpp"

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

Tangents jvp_atan2(const StdTensorOp& op, const JvpArgs& args) {
  RuleTrace r(args.b);
  const Traced a = r.fixed(args.x[0]);
  const Traced b = r.fixed(args.x[1]);
  const Traced a2 = a * a;  // named first: see "Order" in tenferro/ops/rule.hpp
  const Traced r2 = a2 + b * b;
  std::optional<Traced> da, db;
  if (args.t[0]) da = b / r2 * r.linear(*args.t[0]);
  if (args.t[1]) db = -(a / r2) * r.linear(*args.t[1]);
  return {r.result(sum_present(da, db), op, tidu::RuleKind::Jvp)};
}
}  // namespace

const OpDef& def_Tan() {
  static const OpDef d = formula_op("tan", OpKind::Tan, {kNonlinear}, vectorized<MathFn::Tan>(unary_formula<tan_fn, true>()),
                                    traced_unary_jvp([](const Traced&, const Traced& y, const Traced& dx) {
                                      return (1.0 + y * y) * dx;
                                    }), Domain::Centered);
  return d;
}

const OpDef& def_Asin() {
  static const OpDef d = formula_op("asin", OpKind::Asin, {kNonlinear}, vectorized<MathFn::Asin>(unary_formula<asin_fn, true>()),
                                    traced_unary_jvp([](const Traced& x, const Traced&, const Traced& dx) {
                                      return dx / sqrt(1.0 - x * x);
                                    }), Domain::Centered, Discontinuity::None, kCutOutsideUnit);
  return d;
}

const OpDef& def_Acos() {
  static const OpDef d = formula_op("acos", OpKind::Acos, {kNonlinear}, vectorized<MathFn::Acos>(unary_formula<acos_fn, true>()),
                                    traced_unary_jvp([](const Traced& x, const Traced&, const Traced& dx) {
                                      return dx / -sqrt(1.0 - x * x);
                                    }), Domain::Centered, Discontinuity::None, kCutOutsideUnit);
  return d;
}

const OpDef& def_Atan() {
  static const OpDef d = formula_op("atan", OpKind::Atan, {kNonlinear}, vectorized<MathFn::Atan>(unary_formula<atan_fn, true>()),
                                    traced_unary_jvp([](const Traced& x, const Traced&, const Traced& dx) {
                                      return dx / (1.0 + x * x);
                                    }), Domain::Centered, Discontinuity::None,
                                    kCutOutsideUnitImaginary);
  return d;
}

const OpDef& def_Sinh() {
  static const OpDef d = formula_op("sinh", OpKind::Sinh, {kNonlinear}, vectorized<MathFn::Sinh>(unary_formula<sinh_fn, true>()),
                                    traced_unary_jvp([](const Traced& x, const Traced&, const Traced& dx) {
                                      return cosh(x) * dx;
                                    }));
  return d;
}

const OpDef& def_Cosh() {
  static const OpDef d = formula_op("cosh", OpKind::Cosh, {kNonlinear}, vectorized<MathFn::Cosh>(unary_formula<cosh_fn, true>()),
                                    traced_unary_jvp([](const Traced& x, const Traced&, const Traced& dx) {
                                      return sinh(x) * dx;
                                    }));
  return d;
}

const OpDef& def_Asinh() {
  static const OpDef d = formula_op("asinh", OpKind::Asinh, {kNonlinear}, vectorized<MathFn::Asinh>(unary_formula<asinh_fn, true>()),
                                    traced_unary_jvp([](const Traced& x, const Traced&, const Traced& dx) {
                                      return dx / sqrt(x * x + 1.0);
                                    }), Domain::Centered, Discontinuity::None,
                                    kCutOutsideUnitImaginary);
  return d;
}

const OpDef& def_Acosh() {
  static const OpDef d = formula_op("acosh", OpKind::Acosh, {kNonlinear}, vectorized<MathFn::Acosh>(unary_formula<acosh_fn, true>()),
                                    traced_unary_jvp([](const Traced& x, const Traced&, const Traced& dx) {
                                      const Traced below = sqrt(x - 1.0);
                                      return dx / (below * sqrt(x + 1.0));
                                    }), Domain::AboveOne, Discontinuity::None, kCutLeftOfOne);
  return d;
}

const OpDef& def_Atanh() {
  static const OpDef d = formula_op("atanh", OpKind::Atanh, {kNonlinear}, vectorized<MathFn::Atanh>(unary_formula<atanh_fn, true>()),
                                    traced_unary_jvp([](const Traced& x, const Traced&, const Traced& dx) {
                                      return dx / (1.0 - x * x);
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
