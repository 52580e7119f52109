#pragma once
// Internal: a typed emitter for AD rules. It reads operand types from keys, builds descriptors
// through the ops:: factories (so emitted ops are shape-checked too) and records roles. Rule
// combinators keep rules one line each where the math is one line.
#include <optional>
#include <vector>

#include "family.hpp"

namespace tenferro::detail {

class Emit {
 public:
  explicit Emit(Builder& b) : b_(b) {}

  const TensorType& type(const PV& v) const { return type_of(b_.key_of(v)); }
  static PV local(LocalValueId id) { return PV::local(id); }
  static PV ext(const TensorValueKey& key) { return PV::external(key); }

  /// A primal (Primary) op computing a fixed value the rule needs, e.g. cos(x) for sin's JVP.
  PV primal(StdTensorOp op, std::vector<PV> in) {
    return local(b_.add(std::move(op), std::move(in), computegraph::OperationRole::primary()));
  }
  /// A linear op; `active[i]` marks the operands that carry tangents/cotangents.
  LocalValueId linear(StdTensorOp op, std::vector<PV> in, std::vector<bool> active) {
    return b_.add(std::move(op), std::move(in), tidu::linear_role(std::move(active)));
  }

  /// fixed * tangent (elementwise), the linear use of mul: mul(fixed, t) linearized[fixed, active].
  LocalValueId scale(const PV& fixed, LocalValueId t) {
    return linear(ops::mul(type(fixed), type(local(t))), {fixed, local(t)}, {false, true});
  }
  /// t / fixed: div(t, fixed) linearized[active, fixed].
  LocalValueId divide(LocalValueId t, const PV& fixed) {
    return linear(ops::div(type(local(t)), type(fixed)), {local(t), fixed}, {true, false});
  }
  LocalValueId neg(LocalValueId t) { return unary_linear(OpKind::Neg, t); }
  LocalValueId unary_linear(OpKind kind, LocalValueId t) {
    return linear(ops::unary(kind, type(local(t))), {local(t)}, {true});
  }
  /// Sum of the present tangents (nullopt if none).
  std::optional<LocalValueId> sum(std::optional<LocalValueId> a, std::optional<LocalValueId> c) {
    if (a && c) return linear(ops::add(type(local(*a)), type(local(*c))), {local(*a), local(*c)}, {true, true});
    return a ? a : c;
  }
  /// conj(v) as a fixed value when v is complex, v itself when it is real.
  PV conj_fixed(const PV& v) {
    if (!is_complex(type(v).dtype)) return v;
    return primal(ops::unary(OpKind::Conj, type(v)), {v});
  }

  /// A fixed value of `type` with every element equal to `value` (a scalar constant, broadcast).
  PV full(const TensorType& type, c128 value) {
    PV scalar = primal(ops::constant(Tensor::scalar(value, type.dtype)), {});
    if (type.shape.empty()) return scalar;
    return primal(ops::broadcast_in_dim(TensorType{type.dtype, {}}, type.shape, {}), {scalar});
  }
  /// A fixed zero of `type` (the stand-in for an absent tangent where an op needs a value).
  PV zeros(const TensorType& type) { return primal(ops::zeros(type), {}); }
  /// The fixed bool mask `compare[dir](lhs, rhs)`.
  PV compare(CompareDir dir, const PV& lhs, const PV& rhs) {
    return primal(ops::compare(dir, type(lhs), type(rhs)), {lhs, rhs});
  }

  // Fixed (primal) arithmetic on values, for the factors of JVP rules.
  PV fixed(OpKind unary_kind, const PV& v) { return primal(ops::unary(unary_kind, type(v)), {v}); }
  PV fixed_add(const PV& u, const PV& v) { return primal(ops::add(type(u), type(v)), {u, v}); }
  PV fixed_sub(const PV& u, const PV& v) { return fixed_add(u, fixed(OpKind::Neg, v)); }
  PV fixed_mul(const PV& u, const PV& v) { return primal(ops::mul(type(u), type(v)), {u, v}); }
  PV fixed_div(const PV& u, const PV& v) { return primal(ops::div(type(u), type(v)), {u, v}); }
  /// c * v for a constant c.
  PV fixed_scaled(const PV& v, c128 c) { return fixed_mul(full(type(v), c), v); }

  Builder& builder() { return b_; }

 private:
  Builder& b_;
};

/// The operands of an op a rule emits (a control-flow op's derived loop or branch): their
/// references, types, and which carry tangents or cotangents (the mask of its linear role).
struct EmittedOperands {
  explicit EmittedOperands(Emit& e) : emit(e) {}
  void add(PV v, bool is_active) {
    types.push_back(emit.type(v));
    refs.push_back(std::move(v));
    mask.push_back(is_active);
  }
  Emit& emit;
  std::vector<PV> refs;
  std::vector<bool> mask;
  std::vector<TensorType> types;
};

}  // namespace tenferro::detail
