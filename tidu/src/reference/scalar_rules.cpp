// Reference scalar set: JVP and transpose rules. Every rule emits only ops of the set (closure).
//
// Complex convention (docs/design.md, "Complex numbers"): a transpose is the adjoint for
// <a, b> = Re(sum conj(a) * b), so the transpose of z -> c*z is ct -> conj(c)*ct. Conj is emitted
// only by transposes, and only for complex fixed operands.
#include <algorithm>

#include "tidu/reference/scalar.hpp"

namespace tidu::reference {

namespace {
using PV = PrimitiveValue<ScalarOp>;
using Builder = PrimitiveBuilder<ScalarOp>;

PV ext(const ValueKey<ScalarOp>& key) { return PV::external(key); }
PV loc(LocalValueId id) { return PV::local(id); }

LocalValueId emit(Builder& b, Kind kind, std::vector<PV> inputs, OperationRole role) {
  return b.add(ScalarOp::make(kind), std::move(inputs), std::move(role));
}
LocalValueId primal(Builder& b, Kind kind, std::vector<PV> inputs) {
  return emit(b, kind, std::move(inputs), OperationRole::primary());
}
/// fixed * tangent, the one linear use of mul.
LocalValueId scale(Builder& b, PV fixed, LocalValueId tangent) {
  return emit(b, Kind::Mul, {std::move(fixed), loc(tangent)}, linear_role({false, true}));
}
/// Sum of the present terms (nullopt if none). The operands are ordered by their keys' structural
/// hashes (ties, which need equal hashes of different keys, by local id): add commutes, and one
/// order for equal terms lets the graph merge them (d(p*q) reached along two paths of a higher
/// derivative gives the same terms in both orders). The hash depends only on structure, so the
/// order is the same in every pass, whatever order a transform visits operations in.
std::optional<LocalValueId> sum(Builder& b, std::optional<LocalValueId> x,
                                std::optional<LocalValueId> y) {
  if (x && y) {
    const std::size_t hx = b.key_of(loc(*x)).hash(), hy = b.key_of(loc(*y)).hash();
    const bool x_first = hx != hy ? hx < hy : *x < *y;
    return emit(b, Kind::Add, {loc(x_first ? *x : *y), loc(x_first ? *y : *x)},
                linear_role({true, true}));
  }
  return x ? x : y;
}
/// conj(v) for a complex fixed operand, v itself for a real one.
PV conj_fixed(Builder& b, const PV& v) {
  if (dtype_of(b.key_of(v)) == DType::Real) return v;
  return loc(primal(b, Kind::Conj, {v}));
}
}  // namespace

Tangents ScalarOp::jvp_rule(Builder& b, std::span<const ValueKey<ScalarOp>> x,
                            std::span<const ValueKey<ScalarOp>> y,
                            std::span<const std::optional<LocalValueId>> t, ADContext&) const {
  auto unary_linear = [&](Kind k) { return Tangents{emit(b, k, {loc(*t[0])}, linear_role({true}))}; };
  switch (kind) {
    case Kind::Add: return {sum(b, t[0], t[1])};
    case Kind::Mul: {  // d(a*b) = b*da + a*db
      std::optional<LocalValueId> da, db;
      if (t[0]) da = scale(b, ext(x[1]), *t[0]);
      if (t[1]) db = scale(b, ext(x[0]), *t[1]);
      return {sum(b, da, db)};
    }
    case Kind::Div: {
      // d(a/b) = (da - y*db)/b with y = a/b the quotient itself: a higher derivative then
      // differentiates y again rather than a new quotient y/b, so no chain of divisions grows.
      std::optional<LocalValueId> numerator = t[0];
      if (t[1]) {
        numerator = sum(b, numerator,
                        emit(b, Kind::Neg, {loc(scale(b, ext(y[0]), *t[1]))}, linear_role({true})));
      }
      return {emit(b, Kind::Div, {loc(*numerator), ext(x[1])}, linear_role({true, false}))};
    }
    case Kind::Neg:
    case Kind::Conj:
    case Kind::Real:
    case Kind::ToComplex: return unary_linear(kind);
    case Kind::Exp: return {scale(b, ext(y[0]), *t[0])};  // d exp(x) = exp(x) dx
    case Kind::Log:  // d log(x) = dx / x
      return {emit(b, Kind::Div, {loc(*t[0]), ext(x[0])}, linear_role({true, false}))};
    case Kind::Sin: return {scale(b, loc(primal(b, Kind::Cos, {ext(x[0])})), *t[0])};
    case Kind::Cos: {
      LocalValueId s = primal(b, Kind::Sin, {ext(x[0])});
      return {scale(b, loc(primal(b, Kind::Neg, {loc(s)})), *t[0])};
    }
    case Kind::Const: return {std::nullopt};
  }
  throw ADRuleError::missing(name(), RuleKind::Jvp);
}

Tangents ScalarOp::transpose_rule(Builder& b, std::span<const std::optional<LocalValueId>> ct_out,
                                  std::span<const PV> in, const OperationRole& role,
                                  ADContext&) const {
  const LocalValueId ct = *ct_out[0];
  auto unary = [&](Kind k) { return Tangents{emit(b, k, {loc(ct)}, linear_role({true}))}; };
  switch (kind) {
    case Kind::Add:
      return {role.is_active(0) ? std::optional(ct) : std::nullopt,
              role.is_active(1) ? std::optional(ct) : std::nullopt};
    case Kind::Mul: {
      if (role.is_active(0) == role.is_active(1)) {
        throw ADRuleError(name(), RuleKind::Transpose,
                          "mul is linear only when exactly one operand is active (" +
                              role.to_string() + ")");
      }
      const std::size_t active = role.is_active(0) ? 0 : 1;
      Tangents result(2);
      result[active] = scale(b, conj_fixed(b, in[1 - active]), ct);
      return result;
    }
    case Kind::Div:
      if (!role.is_active(0) || role.is_active(1)) {
        throw ADRuleError(name(), RuleKind::Transpose,
                          "div is linear only in its numerator (" + role.to_string() + ")");
      }
      return {emit(b, Kind::Div, {loc(ct), conj_fixed(b, in[1])}, linear_role({true, false})),
              std::nullopt};
    case Kind::Neg: return unary(Kind::Neg);
    case Kind::Conj: return unary(Kind::Conj);
    case Kind::Real: return unary(Kind::ToComplex);  // adjoint of Re: embed the real cotangent
    case Kind::ToComplex: return unary(Kind::Real);   // adjoint of the embedding: real part
    case Kind::Exp:
    case Kind::Log:
    case Kind::Sin:
    case Kind::Cos:
    case Kind::Const:
      throw ADRuleError(name(), RuleKind::Transpose,
                        "the op is not linear; only linear ops have a transpose rule");
  }
  throw ADRuleError::missing(name(), RuleKind::Transpose);
}

}  // namespace tidu::reference
