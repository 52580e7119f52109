// Elementwise arithmetic: add, mul, neg, div, conj, real, imag, and the shared unary shape rule.
// Order: shape/dtype rules, kernels, JVP rules, transpose rules, definitions.
#include <complex>

#include "ir/elementwise_formulas.hpp"
#include "ir/family.hpp"
#include "ir/vector_blocks.hpp"
#include "tenferro/ops/rule.hpp"

namespace tenferro {

// ---- shape/dtype rules -------------------------------------------------------------------------

namespace detail {
std::string types_string(std::initializer_list<const TensorType*> types) {
  std::string s;
  for (const TensorType* t : types) s += (s.empty() ? "" : ", ") + t->to_string();
  return s;
}

/// Operands of an elementwise op must agree exactly (broadcasting is explicit).
void require_same_type(const char* op, const TensorType& a, const TensorType& b) {
  if (a.shape != b.shape) {
    throw ShapeError(std::string(op) + ": operand shapes differ (" + types_string({&a, &b}) +
                     "); expected equal shapes (broadcast first)");
  }
  if (a.dtype != b.dtype) {
    throw DTypeError(std::string(op) + ": operand dtypes differ (" + types_string({&a, &b}) +
                     "); expected one dtype (convert first)");
  }
}

void require_dtype(const char* op, const TensorType& a, bool ok, const char* expected) {
  if (!ok) {
    throw DTypeError(std::string(op) + ": operand " + a.to_string() + " has the wrong dtype; expected " +
                     expected);
  }
}
}  // namespace detail

namespace ops {
using detail::make;

namespace {
StdTensorOp numeric_binary(OpKind kind, const TensorType& a, const TensorType& b) {
  const char* name = op_def(kind).name.c_str();
  detail::require_same_type(name, a, b);
  detail::require_dtype(name, a, a.dtype != DType::Bool, "a numeric dtype (not bool)");
  return make(kind, a);
}
}  // namespace

StdTensorOp add(const TensorType& a, const TensorType& b) { return numeric_binary(OpKind::Add, a, b); }
StdTensorOp mul(const TensorType& a, const TensorType& b) { return numeric_binary(OpKind::Mul, a, b); }
StdTensorOp div(const TensorType& a, const TensorType& b) {
  detail::require_same_type("div", a, b);
  detail::require_dtype("div", a, is_inexact(a.dtype), "f32, f64, c64 or c128");
  return make(OpKind::Div, a);
}

StdTensorOp unary(OpKind kind, const TensorType& a) {
  const OpDef& def = op_def(kind);
  if (def.arity() != 1 || !def.elementwise || def.outputs != 1) {
    throw Error("ops::unary: " + def.name + " is not an elementwise unary op");
  }
  const char* name = def.name.c_str();
  if (def.formula && def.formula->fast == ElementFast::None) {  // the formula states the dtypes
    detail::require_dtype(name, a, def.formula->covers(a.dtype), detail::covered_dtypes(*def.formula).c_str());
    return make(kind, a);
  }
  if (kind == OpKind::Conj) return make(kind, a);
  if (kind == OpKind::Neg || kind == OpKind::Sign) {
    detail::require_dtype(name, a, a.dtype != DType::Bool, "a numeric dtype (not bool)");
    return make(kind, a);
  }
  if (kind == OpKind::Real || kind == OpKind::Imag || kind == OpKind::Abs) {
    detail::require_dtype(name, a, a.dtype != DType::Bool, "a numeric dtype (not bool)");
    return make(kind, TensorType{real_dtype(a.dtype), a.shape});
  }
  detail::require_dtype(name, a, is_inexact(a.dtype), "f32, f64, c64 or c128");
  return make(kind, a);
}

}  // namespace ops

// ---- kernels -----------------------------------------------------------------------------------

namespace detail {
namespace {
using formulas::is_complex_v;

template <class F>
Tensor map_binary(const StdTensorOp& op, const Tensor& a, const Tensor& b, F&& f) {
  Tensor r(op.out);
  visit_dtype(a.dtype(), [&](auto zero) {
    using T = decltype(zero);
    if constexpr (!std::is_same_v<T, bool>) {
      const T* x = a.data<T>();
      const T* y = b.data<T>();
      T* z = r.data<T>();
      const std::int64_t n = r.numel();
      for (std::int64_t i = 0; i < n; ++i) z[i] = f(x[i], y[i]);
    }
  });
  return r;
}

/// z[i] = f(x[i]) with the result's element type (real for real/imag/abs of complex operands).
template <class F>
Tensor map_unary(const StdTensorOp& op, const Tensor& a, F&& f) {
  Tensor r(op.out);
  visit_dtype(a.dtype(), [&](auto zero) {
    using T = decltype(zero);
    if constexpr (!std::is_same_v<T, bool>) {
      using R = decltype(f(T{}));
      const T* x = a.data<T>();
      R* z = r.data<R>();
      const std::int64_t n = r.numel();
      for (std::int64_t i = 0; i < n; ++i) z[i] = f(x[i]);
    } else {
      r = a.clone();  // conj of bool (the only unary arith op that admits bool) is the identity
    }
  });
  return r;
}

Tensor eval_add(const StdTensorOp& op, Operands in) {
  return map_binary(op, *in[0], *in[1], [](auto x, auto y) { return formulas::wrapping_add(x, y); });
}
Tensor eval_mul(const StdTensorOp& op, Operands in) {
  return map_binary(op, *in[0], *in[1], [](auto x, auto y) { return formulas::wrapping_mul(x, y); });
}
Tensor eval_div(const StdTensorOp& op, Operands in) {
  return map_binary(op, *in[0], *in[1], [](auto x, auto y) { return x / y; });
}
Tensor eval_neg(const StdTensorOp& op, Operands in) {
  return map_unary(op, *in[0], [](auto x) { return formulas::neg_of(x); });
}
Tensor eval_conj(const StdTensorOp& op, Operands in) {
  return map_unary(op, *in[0], [](auto x) {
    if constexpr (is_complex_v<decltype(x)>) {
      return std::conj(x);
    } else {
      return x;
    }
  });
}
Tensor eval_real(const StdTensorOp& op, Operands in) {
  return map_unary(op, *in[0], [](auto x) {
    if constexpr (is_complex_v<decltype(x)>) {
      return x.real();
    } else {
      return x;  // real operand: identity
    }
  });
}
Tensor eval_imag(const StdTensorOp& op, Operands in) {
  return map_unary(op, *in[0], [](auto x) {
    if constexpr (is_complex_v<decltype(x)>) {
      return x.imag();
    } else {
      return decltype(x){};  // real operand: zero
    }
  });
}
}  // namespace

// ---- JVP rules ---------------------------------------------------------------------------------

namespace {
Tangents jvp_add(const StdTensorOp& op, const JvpArgs& a) {
  if (!a.t[0] || !a.t[1]) return {a.t[0] ? a.t[0] : a.t[1]};
  RuleTrace r(a.b);
  return {r.result(r.linear(*a.t[0]) + r.linear(*a.t[1]), op, tidu::RuleKind::Jvp)};
}

Tangents jvp_mul(const StdTensorOp& op, const JvpArgs& a) {  // d(x*y) = y*dx + x*dy
  RuleTrace r(a.b);
  std::optional<Traced> dx, dy;
  if (a.t[0]) dx = r.fixed(a.x[1]) * r.linear(*a.t[0]);
  if (a.t[1]) dy = r.fixed(a.x[0]) * r.linear(*a.t[1]);
  return {r.result(sum_present(dx, dy), op, tidu::RuleKind::Jvp)};
}

/// d(x/y) = r dx - (x r r) dy with r = 1/y. One division serves both terms and, through
/// transpose_mul, the cotangent (ct r), where dx/y, q = (x/y)/y and ct/y would take three; a
/// gradient through a division then costs the one division of a hand-written one. The factors
/// differ from dx/y and (x/y)/y by a rounding or two.
Tangents jvp_div(const StdTensorOp& op, const JvpArgs& a) {
  RuleTrace r(a.b);
  const Traced recip = 1.0 / r.fixed(a.x[1]);
  std::optional<Traced> dx, dy;
  if (a.t[0]) dx = recip * r.linear(*a.t[0]);
  if (a.t[1]) dy = -(r.fixed(a.x[0]) * recip * recip * r.linear(*a.t[1]));
  return {r.result(sum_present(dx, dy), op, tidu::RuleKind::Jvp)};
}

/// op(v) for the unary op `op` applied in a rule.
Traced same_op(const StdTensorOp& op, const Traced& v) { return detail::apply_unary(ops::unary(op.kind, v.type()), v); }

/// neg, conj, real: linear ops whose JVP is the op itself applied to the tangent.
Tangents jvp_self(const StdTensorOp& op, const JvpArgs& a) {
  RuleTrace r(a.b);
  return {r.result(same_op(op, r.linear(*a.t[0])), op, tidu::RuleKind::Jvp)};
}

Tangents jvp_imag(const StdTensorOp& op, const JvpArgs& a) {
  if (!is_complex(type_of(a.x[0]).dtype)) return {std::nullopt};  // imag of a real is 0
  return jvp_self(op, a);
}

// ---- transpose rules ---------------------------------------------------------------------------
// Adjoints for <a, b> = Re(sum conj(a) * b) (docs/design.md, "Complex numbers").

Tangents transpose_add(const StdTensorOp&, const TransposeArgs& a) {
  return {a.role.is_active(0) ? std::optional(a.ct()) : std::nullopt,
          a.role.is_active(1) ? std::optional(a.ct()) : std::nullopt};
}

Tangents transpose_mul(const StdTensorOp& op, const TransposeArgs& a) {  // z -> c*z: ct -> conj(c)*ct
  if (a.role.is_active(0) == a.role.is_active(1)) {
    not_linear(op, "mul is linear only when exactly one operand is active");
  }
  RuleTrace r(a.b);
  const std::size_t active = a.role.is_active(0) ? 0 : 1;
  Tangents cts(2);
  cts[active] = r.result(conj_if_complex(r.fixed(a.x[1 - active])) * r.linear(a.ct()), op, tidu::RuleKind::Transpose);
  return cts;
}

Tangents transpose_div(const StdTensorOp& op, const TransposeArgs& a) {
  if (!a.role.is_active(0) || a.role.is_active(1)) not_linear(op, "div is linear only in its numerator");
  RuleTrace r(a.b);
  return {r.result(r.linear(a.ct()) / conj_if_complex(r.fixed(a.x[1])), op, tidu::RuleKind::Transpose), std::nullopt};
}

/// neg and conj are their own adjoints.
Tangents transpose_self(const StdTensorOp& op, const TransposeArgs& a) {
  RuleTrace r(a.b);
  return {r.result(same_op(op, r.linear(a.ct())), op, tidu::RuleKind::Transpose)};
}

Tangents transpose_real(const StdTensorOp& op, const TransposeArgs& a) {  // adjoint of Re: embed
  const DType in = type_of(a.b.key_of(a.x[0])).dtype;
  if (!is_complex(in)) return {a.ct()};
  RuleTrace r(a.b);
  return {r.result(astype(r.linear(a.ct()), in), op, tidu::RuleKind::Transpose)};
}

Tangents transpose_imag(const StdTensorOp& op, const TransposeArgs& a) {
  // <ct, Im z> = Re(conj(i*ct) z): the adjoint is ct -> i*ct
  RuleTrace r(a.b);
  const TensorType& in = type_of(a.b.key_of(a.x[0]));
  const Traced c = astype(r.linear(a.ct()), in.dtype);
  const Traced i = broadcast_to(constant(c, Tensor::scalar(c128(0.0, 1.0), in.dtype)), in.shape);
  return {r.result(i * c, op, tidu::RuleKind::Transpose)};
}

TensorType unary_type(Types t, const OpAttrs&, OpKind kind) { return ops::unary(kind, t[0]).out; }
}  // namespace

// ---- formulas ----------------------------------------------------------------------------------
// The executor runs these ops through their fast forms (ElementFast); the scalar functions are the
// same arithmetic for one element (ir/elementwise_formulas.hpp).

namespace {
constexpr auto add_fn = [](auto x, auto y) { return formulas::wrapping_add(x, y); };
constexpr auto mul_fn = [](auto x, auto y) { return formulas::wrapping_mul(x, y); };
constexpr auto div_fn = [](auto x, auto y) { return x / y; };
constexpr auto neg_fn = [](auto x) { return formulas::neg_of(x); };
constexpr auto conj_fn = [](auto x) {
  if constexpr (is_complex_v<decltype(x)>) {
    return std::conj(x);
  } else {
    return x;
  }
};
constexpr auto identity_fn = [](auto x) { return x; };  // real, on a real operand
constexpr auto zero_fn = [](auto x) { return decltype(x){}; };  // imag, on a real operand
}  // namespace

// ---- definitions -------------------------------------------------------------------------------

const OpDef& def_Add() {
  static const OpDef d{.name = "add", .kind = OpKind::Add, .operands = {kLinear, kLinear}, .elementwise = true,
                       .shape_rule = single_type(+[](Types t, const OpAttrs&) { return ops::add(t[0], t[1]).out; }),
                       .kernel = single_result(eval_add), .jvp = jvp_add, .transpose = transpose_add,
                       .formula = fast_form(with_i64_binary<add_fn>(binary_formula<add_fn, true>()), ElementFast::Add),
                       .fusion = Fusion::Elementwise};
  return d;
}
const OpDef& def_Mul() {
  static const OpDef d{.name = "mul", .kind = OpKind::Mul, .operands = {kBilinear, kBilinear}, .elementwise = true,
                       .shape_rule = single_type(+[](Types t, const OpAttrs&) { return ops::mul(t[0], t[1]).out; }),
                       .kernel = single_result(eval_mul), .jvp = jvp_mul, .transpose = transpose_mul,
                       .formula = fast_form(with_i64_binary<mul_fn>(binary_formula<mul_fn, true>()), ElementFast::Mul),
                       .fusion = Fusion::Elementwise};
  return d;
}
const OpDef& def_Div() {
  static const OpDef d{.name = "div", .kind = OpKind::Div, .operands = {kLinear, kNonlinear}, .elementwise = true,
                       .shape_rule = single_type(+[](Types t, const OpAttrs&) { return ops::div(t[0], t[1]).out; }),
                       .kernel = single_result(eval_div), .jvp = jvp_div, .transpose = transpose_div,
                       .formula = fast_form(binary_formula<div_fn, true>(), ElementFast::Div),
                       .fusion = Fusion::Elementwise};
  return d;
}
const OpDef& def_Neg() {
  static const OpDef d{.name = "neg", .kind = OpKind::Neg, .operands = {kLinear}, .elementwise = true,
                       .shape_rule = single_type(+[](Types t, const OpAttrs& a) { return unary_type(t, a, OpKind::Neg); }),
                       .kernel = single_result(eval_neg), .jvp = jvp_self, .transpose = transpose_self,
                       .formula = fast_form(with_i64_unary<neg_fn>(unary_formula<neg_fn, true>()), ElementFast::Neg),
                       .fusion = Fusion::Elementwise};
  return d;
}
const OpDef& def_Conj() {
  static const OpDef d{.name = "conj", .kind = OpKind::Conj, .operands = {kLinear}, .elementwise = true,
                       .shape_rule = single_type(+[](Types t, const OpAttrs& a) { return unary_type(t, a, OpKind::Conj); }),
                       .kernel = single_result(eval_conj), .jvp = jvp_self, .transpose = transpose_self,
                       .formula = fast_form(with_i64_unary<conj_fn>(unary_formula<conj_fn, true>()), ElementFast::Identity),
                       .fusion = Fusion::Elementwise};
  return d;
}
const OpDef& def_Real() {
  static const OpDef d{.name = "real", .kind = OpKind::Real, .operands = {kLinear}, .elementwise = true,
                       .shape_rule = single_type(+[](Types t, const OpAttrs& a) { return unary_type(t, a, OpKind::Real); }),
                       .kernel = single_result(eval_real), .jvp = jvp_self, .transpose = transpose_real,
                       .formula = fast_form(with_i64_unary<identity_fn>(unary_formula<identity_fn, false>()), ElementFast::Identity),
                       .fusion = Fusion::Elementwise};
  return d;
}
const OpDef& def_Imag() {
  static const OpDef d{.name = "imag", .kind = OpKind::Imag, .operands = {kLinear}, .elementwise = true,
                       .shape_rule = single_type(+[](Types t, const OpAttrs& a) { return unary_type(t, a, OpKind::Imag); }),
                       .kernel = single_result(eval_imag), .jvp = jvp_imag, .transpose = transpose_imag,
                       .formula = fast_form(with_i64_unary<zero_fn>(unary_formula<zero_fn, false>()), ElementFast::Zero),
                       .fusion = Fusion::Elementwise};
  return d;
}

}  // namespace detail
}  // namespace tenferro
