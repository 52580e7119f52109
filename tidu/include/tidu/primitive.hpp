#pragma once
// The contract a primitive set implements to be differentiated by tidu (docs/design.md,
// "The Primitive contract", for its rules and the reasons; docs/tidu.md for a worked op set).
//
// tidu is generic over any Op satisfying `Primitive`; it never names a concrete primitive.
// The primitive set is responsible for closure: every op its rules emit is itself a Primitive.
#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <vector>

#include "computegraph/graph_builder.hpp"
#include "tidu/ad_error.hpp"

namespace tidu {

using computegraph::LocalValueId;
using computegraph::OperationKey;
using computegraph::OperationRole;
using computegraph::ValueKey;

/// Identifies one linearize or linear_transpose call. tidu picks the smallest id whose fresh keys
/// collide with no input of the transform's view, so repeated transforms of the same structure
/// produce identical keys (and hit compile caches), while nested transforms never clash.
using DiffPassId = std::uint64_t;

/// An input key that can name the tangent of the input it denotes:
/// `k.tangent_of(pass)` must be distinct from every other key for distinct (k, pass).
template <class K>
concept ADKey = computegraph::InputKeyType<K> && requires(const K& key, DiffPassId pass) {
  { key.tangent_of(pass) } -> std::same_as<K>;
};

/// A rule operand: a value of the source graphs (External) or one the rule just emitted (Local).
template <class Op>
using PrimitiveValue = computegraph::ValueRef<Op>;

/// What rules emit into: the graph under construction by linearize or linear_transpose.
template <class Op>
class PrimitiveBuilder {
 public:
  explicit PrimitiveBuilder(computegraph::GraphBuilder<Op>& graph) : graph_(graph) {}

  /// Emits `op(inputs)` with `role` and returns its output values (Local in the new graph).
  std::vector<LocalValueId> add_primitive(Op op, std::vector<PrimitiveValue<Op>> inputs,
                                          OperationRole role) {
    return graph_.add_operation(std::move(op), std::move(inputs), std::move(role));
  }
  /// Single-output shorthand.
  LocalValueId add(Op op, std::vector<PrimitiveValue<Op>> inputs, OperationRole role) {
    return graph_.add(std::move(op), std::move(inputs), std::move(role));
  }
  /// The global key of a value emitted so far.
  const ValueKey<Op>& key(LocalValueId id) const { return graph_.key(id); }
  const ValueKey<Op>& key_of(const PrimitiveValue<Op>& value) const {
    return graph_.graph().key_of(value);
  }

 private:
  computegraph::GraphBuilder<Op>& graph_;
};

/// Role of an emitted linear op from its operands' activeness, e.g. linear_role({false, true}).
inline OperationRole linear_role(const std::vector<bool>& active_mask) {
  return OperationRole::linearized(active_mask);
}
inline OperationRole linear_role(std::initializer_list<bool> active_mask) {
  return OperationRole::linearized(active_mask);
}

/// The role of an accumulation: both operands carry flow.
inline OperationRole linear_role_all_active() { return linear_role({true, true}); }

using Tangents = std::vector<std::optional<LocalValueId>>;

/// The Primitive contract.
///
/// - `Op::add()`: the op linear_transpose uses to accumulate cotangents (its transpose passes the
///   cotangent to both inputs). A typed op set may also define `Op::add_for(value_key)`, the add
///   for values of that value's type, which tidu then prefers.
/// - `jvp_rule(builder, primal_inputs, primal_outputs, tangent_inputs, ctx)`: emits the tangent of
///   each output (nullopt where inactive), linear in the tangent inputs; primal values are used
///   through External keys, and emitted linear ops carry `linear_role(active_mask)`.
///   `tangent_inputs[i]` is nullopt when input i is inactive; at least one is active.
/// - `transpose_rule(builder, cotangent_outputs, inputs, role, ctx)`: for a linear op, emits the
///   cotangent of each active input (nullopt for fixed inputs and where nothing flows).
///   `inputs` are all External: fixed operands are the values to use; active ones only name slots.
/// - `Op::cotangent_key(output, pass, index)`: a fresh InputKey for the cotangent seed of
///   `output` (the index-th output of a linear_transpose call); it may read the output's key (its
///   dtype, say). Deriving seed keys from the output, rather than from some tangent key, makes the
///   seed's type exact.
/// Rules throw ADRuleError (for example ADRuleError::missing) when they cannot apply.
template <class Op>
concept Primitive =
    computegraph::GraphOperation<Op> && ADKey<typename Op::InputKey> &&
    std::default_initializable<typename Op::ADContext> &&
    requires(const Op& op, PrimitiveBuilder<Op>& builder, std::span<const ValueKey<Op>> keys,
             std::span<const std::optional<LocalValueId>> tangents,
             std::span<const PrimitiveValue<Op>> inputs, const OperationRole& role,
             typename Op::ADContext& ctx, const ValueKey<Op>& output, DiffPassId pass,
             std::size_t index) {
      { Op::add() } -> std::same_as<Op>;
      { op.jvp_rule(builder, keys, keys, tangents, ctx) } -> std::same_as<Tangents>;
      { op.transpose_rule(builder, tangents, inputs, role, ctx) } -> std::same_as<Tangents>;
      { Op::cotangent_key(output, pass, index) } -> std::same_as<typename Op::InputKey>;
    };

namespace detail {
/// The op that sums two cotangents of `like`'s type: `Op::add_for(like)` when the op set is typed
/// (its add must know the result type), else the contract's `Op::add()`.
template <class Op>
Op accumulation_op(const ValueKey<Op>& like) {
  if constexpr (requires { { Op::add_for(like) } -> std::same_as<Op>; }) {
    return Op::add_for(like);
  } else {
    return Op::add();
  }
}
}  // namespace detail

/// Calls `op.jvp_rule`, returning its error instead of throwing it.
template <Primitive Op>
ADResult<Tangents> try_jvp_rule(const Op& op, PrimitiveBuilder<Op>& builder,
                                std::span<const ValueKey<Op>> primal_inputs,
                                std::span<const ValueKey<Op>> primal_outputs,
                                std::span<const std::optional<LocalValueId>> tangent_inputs,
                                typename Op::ADContext& ctx) {
  try {
    return op.jvp_rule(builder, primal_inputs, primal_outputs, tangent_inputs, ctx);
  } catch (const ADRuleError& e) {
    return e;
  }
}

/// Calls `op.transpose_rule`, returning its error instead of throwing it.
template <Primitive Op>
ADResult<Tangents> try_transpose_rule(const Op& op, PrimitiveBuilder<Op>& builder,
                                      std::span<const std::optional<LocalValueId>> cotangents,
                                      std::span<const PrimitiveValue<Op>> inputs,
                                      const OperationRole& role, typename Op::ADContext& ctx) {
  try {
    return op.transpose_rule(builder, cotangents, inputs, role, ctx);
  } catch (const ADRuleError& e) {
    return e;
  }
}

}  // namespace tidu
