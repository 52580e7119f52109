// Logarithms and powers in other bases: log2, log10, exp2 (f32, f64, c64, c128), cbrt and hypot
// (f32, f64). Each is given by its formula (ElementFormula): the libm function for one element,
// the vector math library's for fused blocks. Complex log2 and log10 are log(z) / log(b) on the
// principal branch of log; complex exp2 is exp(z log 2).
//
// JVP rules (x the operand, y the result):
//   log2: dx / (x log 2)   log10: dx / (x log 10)   exp2: y log 2 dx   cbrt: dx / (3 y^2)
//   hypot(a, b) = sqrt(a^2 + b^2): (a da + b db) / y (not finite at a = b = 0, where hypot has
//   no derivative: hypot(x, x) = sqrt(2) |x| has a kink, OpDef::discontinuity)
#include <cmath>
#include <complex>
#include <numbers>

#include "ir/elementwise_formulas.hpp"
#include "ir/family.hpp"
#include "ir/vector_blocks.hpp"
#include "tenferro/ops/rule.hpp"

namespace tenferro::detail {

namespace {
using exec::MathFn;
using formulas::is_complex_v;

constexpr auto log2_fn = [](auto x) {
  using T = decltype(x);
  if constexpr (is_complex_v<T>) {
    return std::log(x) / static_cast<typename T::value_type>(std::numbers::ln2);
  } else {
    return std::log2(x);
  }
};
constexpr auto log10_fn = [](auto x) {
  using T = decltype(x);
  if constexpr (is_complex_v<T>) {
    return std::log(x) / static_cast<typename T::value_type>(std::numbers::ln10);
  } else {
    return std::log10(x);
  }
};
constexpr auto exp2_fn = [](auto x) {
  using T = decltype(x);
  if constexpr (is_complex_v<T>) {
    return std::exp(x * static_cast<typename T::value_type>(std::numbers::ln2));
  } else {
    return std::exp2(x);
  }
};
constexpr auto cbrt_fn = [](auto x) { return std::cbrt(x); };
constexpr auto hypot_fn = [](auto a, auto b) { return std::hypot(a, b); };

Tangents jvp_hypot(const StdTensorOp& op, const JvpArgs& args) {
  RuleTrace r(args.b);
  const Traced y = r.fixed(args.y[0]);
  std::optional<Traced> da, db;
  if (args.t[0]) da = r.fixed(args.x[0]) / y * r.linear(*args.t[0]);
  if (args.t[1]) db = r.fixed(args.x[1]) / y * r.linear(*args.t[1]);
  return {r.result(sum_present(da, db), op, tidu::RuleKind::Jvp)};
}
}  // namespace

const OpDef& def_Log2() {
  static const OpDef d = formula_op("log2", OpKind::Log2, {kNonlinear}, vectorized<MathFn::Log2>(unary_formula<log2_fn, true>()),
                                    traced_unary_jvp([](const Traced& x, const Traced&, const Traced& dx) {
                                      return dx / (x * std::numbers::ln2);
                                    }), Domain::Positive, Discontinuity::None, kCutLeftOfZero);
  return d;
}

const OpDef& def_Log10() {
  static const OpDef d = formula_op("log10", OpKind::Log10, {kNonlinear}, vectorized<MathFn::Log10>(unary_formula<log10_fn, true>()),
                                    traced_unary_jvp([](const Traced& x, const Traced&, const Traced& dx) {
                                      return dx / (x * std::numbers::ln10);
                                    }), Domain::Positive, Discontinuity::None, kCutLeftOfZero);
  return d;
}

const OpDef& def_Exp2() {
  static const OpDef d = formula_op("exp2", OpKind::Exp2, {kNonlinear}, vectorized<MathFn::Exp2>(unary_formula<exp2_fn, true>()),
                                    traced_unary_jvp([](const Traced&, const Traced& y, const Traced& dx) {
                                      return y * std::numbers::ln2 * dx;
                                    }));
  return d;
}

const OpDef& def_Cbrt() {
  static const OpDef d = formula_op("cbrt", OpKind::Cbrt, {kNonlinear}, vectorized<MathFn::Cbrt>(unary_formula<cbrt_fn, false>()),
                                    traced_unary_jvp([](const Traced&, const Traced& y, const Traced& dx) {
                                      return dx / (y * y * 3.0);
                                    }), Domain::Positive);
  return d;
}

const OpDef& def_Hypot() {
  static const OpDef d = formula_op("hypot", OpKind::Hypot, {kNonlinear, kNonlinear},
                                    vectorized<exec::MathFn2::Hypot>(binary_formula<hypot_fn>()), jvp_hypot, Domain::Any,
                                    Discontinuity::KinkAtZero);
  return d;
}

}  // namespace tenferro::detail
