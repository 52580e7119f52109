#pragma once
// linearize: resolved view -> new linear graph (JVP); the only derivative-producing transform
// (docs/design.md, "Derivatives").
//
// Contract:
// - Walks the logical DAG reachable from `outputs` in topological order (no physical merge).
// - Seeds one fresh tangent input per `wrt` key, keyed `wrt.tangent_of(pass)` (linearize_along:
//   keyed by the given directions, for higher derivatives along one direction).
// - An operation none of whose inputs is active emits nothing and its outputs have no tangent.
// - Otherwise calls the op's jvp_rule; primal values are referenced through External keys, never
//   copied; emitted linear ops carry Linearized{active_mask}.
// - The returned graph's parents are the view's roots, so resolve([result.graph]) sees everything
//   it references; higher order is resolve-then-linearize again.
// Errors: GraphError if a `wrt` key is not an input of the view or repeats, or the view cannot
// resolve an output; ADRuleError if a rule is missing or returns the wrong number of tangents.
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "computegraph/detail/key_map.hpp"
#include "computegraph/detail/prefetch.hpp"
#include "computegraph/dump.hpp"
#include "computegraph/key_printer.hpp"
#include "computegraph/resolve.hpp"
#include "computegraph/traverse.hpp"
#include "tidu/linearized_graph.hpp"

namespace tidu {

namespace detail {
template <Primitive Op>
void check_wrt(const computegraph::ResolvedView<Op>& view,
               std::span<const typename Op::InputKey> wrt) {
  std::unordered_set<typename Op::InputKey> seen_wrt;
  for (const auto& w : wrt) {
    if (!view.contains(ValueKey<Op>::input(w))) {
      std::ostringstream msg;
      msg << "linearize: wrt key " << w << " is not an input of any graph of the view";
      throw computegraph::GraphError(msg.str());
    }
    if (!seen_wrt.insert(w).second) {
      std::ostringstream msg;
      msg << "linearize: wrt key " << w << " is listed twice";
      throw computegraph::GraphError(msg.str());
    }
  }
}

/// linearize's walk, with the tangent input of wrt[i] keyed `tangent_keys[i]`.
template <Primitive Op>
LinearizedGraph<Op> linearize_seeded(const computegraph::ResolvedView<Op>& view,
                                     std::span<const ValueKey<Op>> outputs,
                                     std::span<const typename Op::InputKey> wrt,
                                     std::span<const typename Op::InputKey> tangent_keys,
                                     DiffPassId pass, typename Op::ADContext& ctx) {
  LinearizedGraph<Op> result;
  result.pass = pass;
  auto roots = view.roots();
  computegraph::GraphBuilder<Op> graph(std::vector<computegraph::GraphPtr<Op>>(roots.begin(), roots.end()));
  PrimitiveBuilder<Op> builder(graph);
  // wrt key -> its tangent input. Keys are held by `wrt_keys`.
  computegraph::detail::KeyMap<LocalValueId> seeds;
  std::vector<ValueKey<Op>> wrt_keys;
  wrt_keys.reserve(wrt.size());
  for (std::size_t i = 0; i < wrt.size(); ++i) {
    LocalValueId t = graph.add_input(tangent_keys[i]);
    wrt_keys.push_back(ValueKey<Op>::input(wrt[i]));
    seeds.assign(wrt_keys.back(), t);
    result.tangent_inputs.emplace_back(wrt[i], t);
  }

  // The tangent of each reached primal value, by walk id (kNoTangent: inactive).
  constexpr LocalValueId kNoTangent = computegraph::Graph<Op>::kExternalOperand;
  std::vector<LocalValueId> tangent;
  auto set_tangent = [&](std::uint32_t id, LocalValueId t) {
    if (tangent.size() <= id) tangent.resize(id + 1, kNoTangent);
    tangent[id] = t;
  };
  auto on_input = [&](const ValueKey<Op>& key, std::uint32_t id) {
    const LocalValueId* t = seeds.find(key);
    set_tangent(id, t ? *t : kNoTangent);
  };
  std::vector<ValueKey<Op>> primal_in;
  std::vector<ValueKey<Op>> primal_out;
  Tangents tangent_in;
  auto on_operation = [&](const computegraph::WalkStep<Op>& step) {
    const computegraph::OperationNode<Op>& node = step.node;
    const std::size_t n_out = node.outputs.size();
    tangent_in.clear();
    bool any_active = false;
    for (std::uint32_t id : step.operands) {
      const LocalValueId t = tangent[id];
      tangent_in.push_back(t != kNoTangent ? std::optional(t) : std::nullopt);
      any_active |= t != kNoTangent;
    }
    if (!any_active) {
      if (n_out > 0) {
        set_tangent(step.first_output + static_cast<std::uint32_t>(n_out - 1), kNoTangent);
      }
      return;
    }
    primal_in.clear();
    primal_out.clear();
    // Operand keys from the packed operand array (node.inputs is read only for External ones).
    const auto locals = step.graph.local_operands(step.op);
    for (std::size_t k = 0; k < locals.size(); ++k) {
      primal_in.push_back(locals[k] != computegraph::Graph<Op>::kExternalOperand
                              ? step.graph.key(locals[k])
                              : node.inputs[k].external_key());
    }
    for (std::size_t k = 0; k < n_out; ++k) {
      primal_out.push_back(step.graph.key(step.first_output_value + static_cast<LocalValueId>(k)));
    }
    Tangents tangent_out = node.operation.jvp_rule(builder, primal_in, primal_out, tangent_in, ctx);
    if (tangent_out.size() != n_out) {
      throw ADRuleError(node.operation.name(), RuleKind::Jvp,
                        "returned " + std::to_string(tangent_out.size()) + " tangents for " +
                            std::to_string(n_out) + " outputs");
    }
    for (std::size_t k = 0; k < n_out; ++k) {
      set_tangent(step.first_output + static_cast<std::uint32_t>(k),
                  tangent_out[k] ? *tangent_out[k] : kNoTangent);
    }
  };
  // Fetches the key nodes of the operands' tangents that are known by now (the rule reads them).
  auto on_ahead = [&](std::span<const std::uint32_t> operands) {
    for (std::uint32_t id : operands) {
      if (id < tangent.size() && tangent[id] != kNoTangent) {
        computegraph::detail::prefetch(graph.key(tangent[id]).node_identity());
      }
    }
  };
  const std::vector<std::uint32_t> output_ids =
      computegraph::walk_topological(view, outputs, on_input, on_operation, on_ahead, "linearize");

  std::vector<LocalValueId> graph_outputs;
  for (std::uint32_t id : output_ids) {
    const LocalValueId t = tangent[id];
    result.tangent_outputs.push_back(t != kNoTangent ? std::optional(t) : std::nullopt);
    if (t != kNoTangent) graph_outputs.push_back(t);
  }
  graph.set_outputs(std::move(graph_outputs));
  result.graph = graph.finish();
  computegraph::detail::after_stage("linearize", *result.graph);
  return result;
}
}  // namespace detail

template <Primitive Op>
LinearizedGraph<Op> linearize(const computegraph::ResolvedView<Op>& view,
                              std::span<const ValueKey<Op>> outputs,
                              std::span<const typename Op::InputKey> wrt,
                              typename Op::ADContext& ctx) {
  using InputKey = typename Op::InputKey;
  detail::check_wrt<Op>(view, wrt);
  auto make_keys = [&](DiffPassId pass) {
    std::vector<InputKey> keys;
    keys.reserve(wrt.size());
    for (const auto& w : wrt) keys.push_back(w.tangent_of(pass));
    return keys;
  };
  const DiffPassId pass = detail::fresh_pass(view, make_keys);
  const std::vector<InputKey> keys = make_keys(pass);
  return detail::linearize_seeded(view, outputs, wrt, std::span<const InputKey>(keys), pass, ctx);
}

/// linearize along given directions: the tangent input of wrt[i] is the input `directions[i]`
/// instead of a fresh key, and the result's `pass` is 0. A direction may already be an input of
/// the view, typically the tangent input of an earlier pass: linearizing L1 = linearize(F, x) again
/// along L1's own tangent key v gives f''(x)[v, v] rather than f''(x)[v, w] with a fresh w, and
/// since the passes share their seed, the terms d_i(d_j u) of different passes have equal keys and
/// materialize_merge merges them (the k-th derivative along one direction costs O(k^2 n) ops,
/// where fresh seeds give 2^k mixed terms). Inside the new graph a direction value is both the
/// tangent input (active operands) and, where earlier passes used it, a fixed operand.
/// Errors: as linearize; GraphError if `directions` and `wrt` differ in length, a direction
/// repeats, or a direction is also a `wrt` key.
template <Primitive Op>
LinearizedGraph<Op> linearize_along(const computegraph::ResolvedView<Op>& view,
                                    std::span<const ValueKey<Op>> outputs,
                                    std::span<const typename Op::InputKey> wrt,
                                    std::span<const typename Op::InputKey> directions,
                                    typename Op::ADContext& ctx) {
  using computegraph::GraphError;
  detail::check_wrt<Op>(view, wrt);
  if (directions.size() != wrt.size()) {
    throw GraphError("linearize_along: " + std::to_string(directions.size()) + " directions for " +
                     std::to_string(wrt.size()) + " wrt keys");
  }
  std::unordered_set<typename Op::InputKey> seen(wrt.begin(), wrt.end());
  for (const auto& d : directions) {
    if (!seen.insert(d).second) {
      std::ostringstream msg;
      msg << "linearize_along: direction " << d << " repeats or is also a wrt key";
      throw GraphError(msg.str());
    }
  }
  return detail::linearize_seeded(view, outputs, wrt, directions, DiffPassId{0}, ctx);
}

template <Primitive Op>
LinearizedGraph<Op> linearize_along(const computegraph::ResolvedView<Op>& view,
                                    std::span<const ValueKey<Op>> outputs,
                                    std::span<const typename Op::InputKey> wrt,
                                    std::span<const typename Op::InputKey> directions) {
  typename Op::ADContext ctx{};
  return linearize_along(view, outputs, wrt, directions, ctx);
}

template <Primitive Op>
LinearizedGraph<Op> linearize(const computegraph::ResolvedView<Op>& view,
                              std::span<const ValueKey<Op>> outputs,
                              std::span<const typename Op::InputKey> wrt) {
  typename Op::ADContext ctx{};
  return linearize(view, outputs, wrt, ctx);
}

/// linearize, returning a rule failure as a value instead of throwing it.
template <Primitive Op>
ADResult<LinearizedGraph<Op>> try_linearize(const computegraph::ResolvedView<Op>& view,
                                            std::span<const ValueKey<Op>> outputs,
                                            std::span<const typename Op::InputKey> wrt,
                                            typename Op::ADContext& ctx) {
  try {
    return linearize(view, outputs, wrt, ctx);
  } catch (const ADRuleError& e) {
    return e;
  }
}

}  // namespace tidu
