// Piecewise elementwise ops: abs, sign, maximum, minimum, compare, select, clamp.
// Order: shape/dtype rules, kernels, JVP rules, transpose rules, definitions.
//
// Derivative conventions (the contracts tests/elementwise_ops_test.cpp checks):
// - abs: real x: sign(x) dx; complex z: Re(conj(z) dz) / |z|, written real(conj(sign z) * dz).
//   Both are 0 at 0 (a subgradient). Real abs has a kink at 0 and real sign a jump
//   (OpDef::discontinuity).
// - sign: real: piecewise constant, so no tangent (absent). Complex z: sign z = z / |z| and
//   d sign z = (w - conj w) / (2 conj z) with w = conj(sign z) dz (the part of dz orthogonal to
//   z, over |z|); 0 at z = 0.
// - maximum/minimum: the tangent of the operand that is the result; at a tie x == y the mean
//   (dx + dy) / 2, so a gradient is split equally between the operands (which is also what a
//   central difference gives there). Where an operand is NaN the result is NaN and the tie rule
//   applies to the tangent.
// - compare: a bool, never active: its tangent is absent (nullopt), not zeros.
// - select(p, a, b): linear in the branches: tangent select(p, da, db), zeros standing in for an
//   absent branch tangent; transpose ct -> (select(p, ct, 0), select(p, 0, ct)). Because it selects
//   (it never multiplies by a 0/1 mask), NaN or inf in the unselected branch's tangent, or in the
//   cotangent where a branch is not selected, never reaches the other side: the unselected operand
//   gets an exact 0. It cannot protect a branch from its own rule: where the unselected branch's
//   derivative is itself infinite (sqrt at 0, say), that branch's zero cotangent meets the inf
//   inside the branch's rule (0 * inf = NaN). Guard the branch's operand with a second select (the
//   "double where" idiom), as pow's rules do (analytic.cpp).
// - clamp(lo, x, hi) = min(max(x, lo), hi): the tangent of x on the closed interval lo <= x <= hi
//   (ties go to x, as in PyTorch), of lo where x < lo, of hi where hi < max(x, lo) (so hi whenever
//   lo > hi, where the result is hi).
#include <cmath>
#include <complex>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>

#include "ir/elementwise_formulas.hpp"
#include "ir/family.hpp"
#include "ir/vector_blocks.hpp"
#include "tenferro/ops/rule.hpp"

namespace tenferro {

// ---- shape/dtype rules -------------------------------------------------------------------------

namespace ops {
using detail::make;

namespace {
constexpr const char* kRealDtypes = "a real dtype (f32, f64 or i64)";
constexpr bool is_real_numeric(DType d) { return d == DType::F32 || d == DType::F64 || d == DType::I64; }

StdTensorOp real_binary(OpKind kind, const TensorType& a, const TensorType& b) {
  const char* name = op_def(kind).name.c_str();
  detail::require_same_type(name, a, b);
  detail::require_dtype(name, a, is_real_numeric(a.dtype), kRealDtypes);
  return make(kind, a);
}
}  // namespace

StdTensorOp maximum(const TensorType& a, const TensorType& b) { return real_binary(OpKind::Maximum, a, b); }
StdTensorOp minimum(const TensorType& a, const TensorType& b) { return real_binary(OpKind::Minimum, a, b); }

/// Operands of one type; complex operands only for eq and ne (complex numbers are unordered).
StdTensorOp compare(CompareDir dir, const TensorType& a, const TensorType& b) {
  const std::string name = std::string("compare[") + compare_dir_name(dir) + "]";
  detail::require_same_type(name.c_str(), a, b);
  if (is_complex(a.dtype) && dir != CompareDir::Eq && dir != CompareDir::Ne) {
    throw DTypeError(name + ": operands " + detail::types_string({&a, &b}) +
                     " are complex; expected a real dtype (complex operands support only eq and ne)");
  }
  return make(OpKind::Compare, TensorType{DType::Bool, a.shape}, OpAttrs(CompareAttrs{dir}));
}

/// A bool predicate and two branches of one type, all of one shape.
StdTensorOp select(const TensorType& pred, const TensorType& on_true, const TensorType& on_false) {
  if (pred.dtype != DType::Bool) {
    throw DTypeError("select: predicate " + pred.to_string() + " has the wrong dtype; expected bool");
  }
  detail::require_same_type("select", on_true, on_false);
  if (pred.shape != on_true.shape) {
    throw ShapeError("select: predicate shape differs from the branches' (" +
                     detail::types_string({&pred, &on_true, &on_false}) +
                     "); expected equal shapes (broadcast first)");
  }
  return make(OpKind::Select, on_true);
}

/// Bounds of x's type (no implicit broadcast of scalar bounds), real dtypes.
StdTensorOp clamp(const TensorType& lo, const TensorType& x, const TensorType& hi) {
  detail::require_same_type("clamp", lo, x);
  detail::require_same_type("clamp", x, hi);
  detail::require_dtype("clamp", x, is_real_numeric(x.dtype), kRealDtypes);
  return make(OpKind::Clamp, x);
}

}  // namespace ops

// ---- kernels -----------------------------------------------------------------------------------

namespace detail {
namespace {
template <class T>
constexpr bool is_real_v = std::is_same_v<T, float> || std::is_same_v<T, double> ||
                           std::is_same_v<T, std::int64_t>;

Tensor eval_select(const StdTensorOp& op, Operands in) {
  Tensor r(op.out);
  const std::int64_t n = r.numel();
  const bool* p = in[0]->data<bool>();
  visit_dtype(op.out.dtype, [&](auto zero) {
    using T = decltype(zero);
    const T* a = in[1]->data<T>();
    const T* b = in[2]->data<T>();
    T* z = r.data<T>();
    for (std::int64_t i = 0; i < n; ++i) z[i] = formulas::select_of(p[i], a[i], b[i]);
  });
  return r;
}

Tensor eval_abs(const StdTensorOp& op, Operands in) {  // complex operands give a real result
  Tensor r(op.out);
  const std::int64_t n = r.numel();
  visit_dtype(in[0]->dtype(), [&](auto zero) {
    using T = decltype(zero);
    if constexpr (!std::is_same_v<T, bool>) {
      const T* x = in[0]->data<T>();
      auto* z = r.data<decltype(formulas::abs_of(T{}))>();
      for (std::int64_t i = 0; i < n; ++i) z[i] = formulas::abs_of(x[i]);
    }
  });
  return r;
}

Tensor eval_sign(const StdTensorOp& op, Operands in) {
  Tensor r(op.out);
  const std::int64_t n = r.numel();
  visit_dtype(in[0]->dtype(), [&](auto zero) {
    using T = decltype(zero);
    if constexpr (!std::is_same_v<T, bool>) {
      const T* x = in[0]->data<T>();
      T* z = r.data<T>();
      for (std::int64_t i = 0; i < n; ++i) z[i] = formulas::sign_of(x[i]);
    }
  });
  return r;
}

Tensor eval_compare(const StdTensorOp& op, Operands in) {
  Tensor r(op.out);
  const std::int64_t n = r.numel();
  const CompareDir dir = op.attrs.get<CompareAttrs>().dir;
  visit_dtype(in[0]->dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T* x = in[0]->data<T>();
    const T* y = in[1]->data<T>();
    bool* z = r.data<bool>();
    for (std::int64_t i = 0; i < n; ++i) z[i] = formulas::compare_of(dir, x[i], y[i]);
  });
  return r;
}

/// z[i] = f(x[i], y[i]) over the real dtypes (maximum, minimum).
template <class F>
Tensor map_real_binary(const StdTensorOp& op, Operands in, F&& f) {
  Tensor r(op.out);
  const std::int64_t n = r.numel();
  visit_dtype(in[0]->dtype(), [&](auto zero) {
    using T = decltype(zero);
    if constexpr (is_real_v<T>) {
      const T* x = in[0]->data<T>();
      const T* y = in[1]->data<T>();
      T* z = r.data<T>();
      for (std::int64_t i = 0; i < n; ++i) z[i] = f(x[i], y[i]);
    }
  });
  return r;
}

Tensor eval_maximum(const StdTensorOp& op, Operands in) {
  return map_real_binary(op, in, [](auto x, auto y) { return formulas::maximum_of(x, y); });
}
Tensor eval_minimum(const StdTensorOp& op, Operands in) {
  return map_real_binary(op, in, [](auto x, auto y) { return formulas::minimum_of(x, y); });
}

Tensor eval_clamp(const StdTensorOp& op, Operands in) {  // operands (lo, v, hi)
  Tensor r(op.out);
  const std::int64_t n = r.numel();
  visit_dtype(in[0]->dtype(), [&](auto zero) {
    using T = decltype(zero);
    if constexpr (is_real_v<T>) {
      const T* lo = in[0]->data<T>();
      const T* v = in[1]->data<T>();
      const T* hi = in[2]->data<T>();
      T* z = r.data<T>();
      for (std::int64_t i = 0; i < n; ++i) z[i] = formulas::clamp_of(lo[i], v[i], hi[i]);
    }
  });
  return r;
}
}  // namespace

// ---- JVP rules ---------------------------------------------------------------------------------

namespace {
/// where(pred, da, db) of the present branch tangents (zeros for an absent one); nullopt when
/// neither is present.
std::optional<Traced> select_tangent(RuleTrace& r, const Traced& pred, const std::optional<Traced>& da,
                                     const std::optional<Traced>& db, const TensorType& type) {
  if (!da && !db) return std::nullopt;
  const Traced on_true = da ? *da : r.zeros(type);
  const Traced on_false = db ? *db : r.zeros(type);
  return where(pred, on_true, on_false);
}

/// The present tangent `t`, as a value of the rule's trace.
std::optional<Traced> tangent(RuleTrace& r, const std::optional<LocalValueId>& t) {
  return t ? std::optional(r.linear(*t)) : std::nullopt;
}

Tangents jvp_select(const StdTensorOp& op, const JvpArgs& a) {
  RuleTrace r(a.b);
  return {r.result(select_tangent(r, r.fixed(a.x[0]), tangent(r, a.t[1]), tangent(r, a.t[2]), op.out), op,
                   tidu::RuleKind::Jvp)};
}

Tangents jvp_abs(const StdTensorOp& op, const JvpArgs& a) {
  RuleTrace r(a.b);
  const Traced s = sign(r.fixed(a.x[0]));
  const Traced dz = r.linear(*a.t[0]);
  if (!is_complex(s.dtype())) return {r.result(s * dz, op, tidu::RuleKind::Jvp)};
  return {r.result(real(conj(s) * dz), op, tidu::RuleKind::Jvp)};
}

Tangents jvp_sign(const StdTensorOp& op, const JvpArgs& a) {
  const TensorType& type = op.out;
  if (!is_complex(type.dtype)) return {std::nullopt};
  RuleTrace r(a.b);
  const Traced z = r.fixed(a.x[0]);
  const Traced w = conj(r.fixed(a.y[0])) * r.linear(*a.t[0]);
  const Traced v = w - conj(w);
  // 2 conj(z), replaced by 1 at z = 0 (where v = 0), so the tangent there is 0, not 0/0.
  const Traced cz = conj(z);
  const Traced two_cz = cz + cz;
  const Traced at_zero = eq(z, r.zeros(type));
  return {r.result(v / where(at_zero, 1.0, two_cz), op, tidu::RuleKind::Jvp)};
}

Tangents jvp_max_min(const StdTensorOp& op, const JvpArgs& a) {
  RuleTrace r(a.b);
  const TensorType& type = op.out;
  const bool is_max = op.kind == OpKind::Maximum;
  const Traced x = r.fixed(a.x[0]);
  const Traced y = r.fixed(a.x[1]);
  const Traced x_wins = is_max ? gt(x, y) : lt(x, y);
  const Traced y_wins = is_max ? lt(x, y) : gt(x, y);
  const std::optional<Traced> dx = tangent(r, a.t[0]), dy = tangent(r, a.t[1]);
  const Traced tie = 0.5 * *sum_present(dx, dy);  // at a tie, the mean of the tangents
  const std::optional<Traced> y_or_tie = select_tangent(r, y_wins, dy, tie, type);
  return {r.result(select_tangent(r, x_wins, dx, y_or_tie, type), op, tidu::RuleKind::Jvp)};
}

Tangents jvp_clamp(const StdTensorOp& op, const JvpArgs& a) {  // operands (lo, x, hi)
  RuleTrace r(a.b);
  const TensorType& type = op.out;
  const Traced lo = r.fixed(a.x[0]);
  const Traced x = r.fixed(a.x[1]);
  const Traced hi = r.fixed(a.x[2]);
  const Traced below = lt(x, lo);
  const Traced above = lt(hi, where(below, lo, x));  // hi < max(x, lo)
  const std::optional<Traced> inner = select_tangent(r, below, tangent(r, a.t[0]), tangent(r, a.t[1]), type);
  return {r.result(select_tangent(r, above, tangent(r, a.t[2]), inner, type), op, tidu::RuleKind::Jvp)};
}

// ---- transpose rules ---------------------------------------------------------------------------
// Adjoints for <a, b> = Re(sum conj(a) * b); select's is real and symmetric, so no conj appears.

Tangents transpose_select(const StdTensorOp& op, const TransposeArgs& a) {
  if (a.role.is_active(0)) not_linear(op, "select is linear only in its branches; the predicate must be fixed");
  RuleTrace r(a.b);
  const Traced pred = r.fixed(a.x[0]);
  const Traced ct = r.linear(a.ct());
  Tangents cts(3);
  if (a.role.is_active(1)) cts[1] = r.result(where(pred, ct, r.zeros(op.out)), op, tidu::RuleKind::Transpose);
  if (a.role.is_active(2)) cts[2] = r.result(where(pred, r.zeros(op.out), ct), op, tidu::RuleKind::Transpose);
  return cts;
}
}  // namespace

// ---- formulas ----------------------------------------------------------------------------------
// The executor runs these ops through their fast forms (ElementFast); the scalar functions are the
// same arithmetic for one element (ir/elementwise_formulas.hpp). compare's direction is its
// formula's parameter; select and clamp take three operands and have their fast form only.

namespace {
constexpr auto abs_fn = [](auto x) { return formulas::abs_of(x); };
constexpr auto sign_fn = [](auto x) { return formulas::sign_of(x); };
constexpr auto maximum_fn = [](auto x, auto y) { return formulas::maximum_of(x, y); };
constexpr auto minimum_fn = [](auto x, auto y) { return formulas::minimum_of(x, y); };
std::uint8_t compare_param(const OpAttrs& a) { return static_cast<std::uint8_t>(a.get<CompareAttrs>().dir); }
}  // namespace

// ---- definitions -------------------------------------------------------------------------------

const OpDef& def_Abs() {
  static const OpDef d{
      .name = "abs", .kind = OpKind::Abs, .operands = {kNonlinear}, .elementwise = true,
      .shape_rule = single_type(+[](Types t, const OpAttrs&) { return ops::unary(OpKind::Abs, t[0]).out; }),
      .kernel = single_result(eval_abs), .jvp = jvp_abs, .transpose = {},
      .formula = fast_form(with_i64_unary<abs_fn>(unary_formula<abs_fn, false>()), ElementFast::Abs),
      .discontinuity = Discontinuity::KinkAtZero, .fusion = Fusion::Elementwise};
  return d;
}
const OpDef& def_Sign() {
  static const OpDef d{
      .name = "sign", .kind = OpKind::Sign, .operands = {kNonlinear}, .elementwise = true,
      .shape_rule = single_type(+[](Types t, const OpAttrs&) { return ops::unary(OpKind::Sign, t[0]).out; }),
      .kernel = single_result(eval_sign), .jvp = jvp_sign, .transpose = {},
      .formula = fast_form(with_i64_unary<sign_fn>(unary_formula<sign_fn, true>()), ElementFast::Sign),
      .discontinuity = Discontinuity::JumpAtZero, .fusion = Fusion::Elementwise};
  return d;
}
const OpDef& def_Maximum() {
  static const OpDef d{
      .name = "maximum", .kind = OpKind::Maximum, .operands = {kNonlinear, kNonlinear}, .elementwise = true,
      .shape_rule = single_type(+[](Types t, const OpAttrs&) { return ops::maximum(t[0], t[1]).out; }),
      .kernel = single_result(eval_maximum), .jvp = jvp_max_min, .transpose = {},
      .formula = fast_form(with_i64_binary<maximum_fn>(binary_formula<maximum_fn>()), ElementFast::Maximum),
      .fusion = Fusion::Elementwise};
  return d;
}
const OpDef& def_Minimum() {
  static const OpDef d{
      .name = "minimum", .kind = OpKind::Minimum, .operands = {kNonlinear, kNonlinear}, .elementwise = true,
      .shape_rule = single_type(+[](Types t, const OpAttrs&) { return ops::minimum(t[0], t[1]).out; }),
      .kernel = single_result(eval_minimum), .jvp = jvp_max_min, .transpose = {},
      .formula = fast_form(with_i64_binary<minimum_fn>(binary_formula<minimum_fn>()), ElementFast::Minimum),
      .fusion = Fusion::Elementwise};
  return d;
}
/// compare's result is a bool: no tangent flows through either operand.
const OpDef& def_Compare() {
  static const OpDef d{.name = "compare", .kind = OpKind::Compare, .operands = {kNoGrad, kNoGrad}, .elementwise = true,
                       .shape_rule = single_type(+[](Types t, const OpAttrs& a) {
                         return ops::compare(a.get<CompareAttrs>().dir, t[0], t[1]).out;
                       }),
                       .kernel = single_result(eval_compare), .jvp = {}, .transpose = {},
      .formula = fast_form({}, ElementFast::Compare, compare_param),
      .fusion = Fusion::Elementwise};
  return d;
}
const OpDef& def_Select() {
  static const OpDef d{
      .name = "select", .kind = OpKind::Select, .operands = {kNoGrad, kLinear, kLinear}, .elementwise = true,
      .shape_rule = single_type(+[](Types t, const OpAttrs&) { return ops::select(t[0], t[1], t[2]).out; }),
      .kernel = single_result(eval_select), .jvp = jvp_select, .transpose = transpose_select,
      .formula = fast_form({}, ElementFast::Select),
      .fusion = Fusion::Elementwise};
  return d;
}
const OpDef& def_Clamp() {
  static const OpDef d{
      .name = "clamp", .kind = OpKind::Clamp, .operands = {kNonlinear, kNonlinear, kNonlinear}, .elementwise = true,
      .shape_rule = single_type(+[](Types t, const OpAttrs&) { return ops::clamp(t[0], t[1], t[2]).out; }),
      .kernel = single_result(eval_clamp), .jvp = jvp_clamp, .transpose = {},
      .formula = fast_form({}, ElementFast::Clamp),
      .fusion = Fusion::Elementwise};
  return d;
}

}  // namespace detail
}  // namespace tenferro
