#pragma once
// linear_transpose: linear graph -> linear graph with the flow reversed (docs/design.md,
// "Derivatives"). Not differentiation: it reuses the linear graph's derivative information.
//
// Contract:
// - One fresh seed input per active tangent output of `linear` (keys from Op::cotangent_key).
// - Visits the linear graph's Linearized operations in reverse order and calls transpose_rule;
//   Primary operations in it (fixed values a rule computed) are not part of the flow and are skipped.
// - Cotangents reaching the same value are accumulated by its global ValueKey with Op::add().
// - Output i is the cotangent of linear.tangent_inputs[i], nullopt if none reaches it.
// - The result's parent is linear.graph, so fixed operands resolve through it.
// Errors: ADRuleError if a rule is missing, returns the wrong number of cotangents, or returns a
// cotangent for a fixed input.
#include <string>
#include <unordered_map>

#include "computegraph/detail/key_map.hpp"
#include "computegraph/dump.hpp"
#include "computegraph/resolve.hpp"
#include "tidu/detail/reverse_operations.hpp"
#include "tidu/linearized_graph.hpp"

namespace tidu {

namespace detail {
/// linear_transpose with the cotangents of `targets` (local values of linear.graph) as outputs:
/// the tangent inputs for linear_transpose, a cut's values for partial_transpose. Output i of the
/// result is the cotangent reaching targets[i], nullopt if none does. A target's cotangent flows
/// no further: the operations before a cut are not transposed.
template <Primitive Op>
LinearizedGraph<Op> transpose_onto(const LinearizedGraph<Op>& linear, const std::vector<LocalValueId>& targets,
                                   typename Op::ADContext& ctx) {
  using InputKey = typename Op::InputKey;
  const computegraph::Graph<Op>& source = *linear.graph;
  LinearizedGraph<Op> result;
  auto view = computegraph::resolve({linear.graph});
  result.pass = detail::fresh_pass(view, [&](DiffPassId pass) {
    std::vector<InputKey> keys;
    for (std::size_t i = 0; i < linear.tangent_outputs.size(); ++i) {
      if (linear.tangent_outputs[i]) {
        keys.push_back(Op::cotangent_key(source.key(*linear.tangent_outputs[i]), pass, i));
      }
    }
    return keys;
  });

  computegraph::GraphBuilder<Op> graph({linear.graph});
  PrimitiveBuilder<Op> builder(graph);
  // linear value -> its cotangent, bucketed by global key: a value of `source` by its local id
  // (a key is defined at most once per graph), any other key (an External operand that `source`
  // does not define) in a map. Keys are held by `source`.
  constexpr LocalValueId kNone = computegraph::Graph<Op>::kExternalOperand;
  std::vector<LocalValueId> local_cotangent(source.values().size(), kNone);
  computegraph::detail::KeyMap<LocalValueId> external_cotangent;
  constexpr LocalValueId kExternal = computegraph::Graph<Op>::kExternalOperand;
  /// The cotangent slot of an operand: `local` from local_operands(), `key` its key.
  auto slot_of = [&](LocalValueId local, const ValueKey<Op>& key) -> LocalValueId* {
    if (local != kExternal) return &local_cotangent[local];
    if (auto found = source.find(key)) return &local_cotangent[*found];
    if (LocalValueId* ct = external_cotangent.find(key)) return ct;
    external_cotangent.assign(key, kNone);
    return external_cotangent.find(key);
  };
  auto accumulate = [&](LocalValueId* slot, const ValueKey<Op>& key, LocalValueId ct) {
    if (*slot != kNone) {
      ct = builder.add(detail::accumulation_op<Op>(key),
                       {PrimitiveValue<Op>::local(*slot), PrimitiveValue<Op>::local(ct)},
                       linear_role_all_active());
    }
    *slot = ct;
  };
  for (std::size_t i = 0; i < linear.tangent_outputs.size(); ++i) {
    if (!linear.tangent_outputs[i]) continue;
    const LocalValueId out = *linear.tangent_outputs[i];
    const ValueKey<Op>& out_key = source.key(out);
    InputKey seed_key = Op::cotangent_key(out_key, result.pass, i);
    LocalValueId seed = graph.add_input(seed_key);
    result.tangent_inputs.emplace_back(std::move(seed_key), seed);
    accumulate(&local_cotangent[out], out_key, seed);
  }

  std::vector<bool> is_target(source.values().size(), false);
  for (const LocalValueId t : targets) is_target[t] = true;
  Tangents cotangent_out;
  std::vector<PrimitiveValue<Op>> inputs;
  const detail::ReverseOperations<Op> order(source);
  for (std::size_t i = 0; i < order.size(); ++i) {
    order.prefetch(i, local_cotangent.data(), [&](LocalValueId ct) {
      computegraph::detail::prefetch(graph.key(ct).node_identity());
    });
    const auto [op, v] = order[i];
    const auto& node = source.operations()[op];
    cotangent_out.clear();
    bool any = false;
    for (std::size_t k = 0; k < node.outputs.size(); ++k) {
      const LocalValueId ct = is_target[v + k] ? kNone : local_cotangent[v + k];
      cotangent_out.push_back(ct != kNone ? std::optional(ct) : std::nullopt);
      any |= ct != kNone;
    }
    if (!any) continue;
    const auto locals = source.local_operands(op);
    inputs.clear();
    for (std::size_t k = 0; k < locals.size(); ++k) {
      const ValueKey<Op>& key =
          locals[k] != kExternal ? source.key(locals[k]) : node.inputs[k].external_key();
      inputs.push_back(PrimitiveValue<Op>::external(key));
    }
    Tangents cotangent_in = node.operation.transpose_rule(builder, cotangent_out, inputs, node.role, ctx);
    if (cotangent_in.size() != inputs.size()) {
      throw ADRuleError(node.operation.name(), RuleKind::Transpose,
                        "returned " + std::to_string(cotangent_in.size()) + " cotangents for " +
                            std::to_string(inputs.size()) + " inputs");
    }
    for (std::size_t k = 0; k < inputs.size(); ++k) {
      if (!cotangent_in[k]) continue;
      if (!node.role.is_active(k)) {
        throw ADRuleError(node.operation.name(), RuleKind::Transpose,
                          "returned a cotangent for fixed input " + std::to_string(k) + " (" +
                              node.role.to_string() + ")");
      }
      const ValueKey<Op>& key = inputs[k].external_key();
      accumulate(slot_of(locals[k], key), key, *cotangent_in[k]);
    }
  }

  std::vector<LocalValueId> graph_outputs;
  for (const LocalValueId t : targets) {
    const LocalValueId ct = local_cotangent[t];
    result.tangent_outputs.push_back(ct != kNone ? std::optional(ct) : std::nullopt);
    if (ct != kNone) graph_outputs.push_back(ct);
  }
  graph.set_outputs(std::move(graph_outputs));
  result.graph = graph.finish();
  computegraph::detail::after_stage("transpose", *result.graph);
  return result;
}
}  // namespace detail

template <Primitive Op>
LinearizedGraph<Op> linear_transpose(const LinearizedGraph<Op>& linear, typename Op::ADContext& ctx) {
  std::vector<LocalValueId> targets;
  for (const auto& [primal, t] : linear.tangent_inputs) targets.push_back(t);
  return detail::transpose_onto(linear, targets, ctx);
}

template <Primitive Op>
LinearizedGraph<Op> linear_transpose(const LinearizedGraph<Op>& linear) {
  typename Op::ADContext ctx{};
  return linear_transpose(linear, ctx);
}

/// linear_transpose, returning a rule failure as a value instead of throwing it.
template <Primitive Op>
ADResult<LinearizedGraph<Op>> try_linear_transpose(const LinearizedGraph<Op>& linear,
                                                   typename Op::ADContext& ctx) {
  try {
    return linear_transpose(linear, ctx);
  } catch (const ADRuleError& e) {
    return e;
  }
}

}  // namespace tidu
