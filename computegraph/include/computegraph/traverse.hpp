#pragma once
// walk_topological: visit the logical DAG of a resolved view (docs/design.md, "The pipeline").
//
// Local references are followed inside their graph; External ones are resolved through the view.
// Every operation reachable from `outputs` is visited exactly once, deduplicated by key, in
// topological order: on a view of one graph, in the graph's own order (which GraphBuilder keeps
// topological), each reachable input in that order too; on several graphs, or when a reachable
// operation has an External operand, depth-first post-order from the outputs in the given order,
// operands left to right, each reachable input key when first reached. No node is copied.
// Throws GraphError if an output or an External reference is not defined by any graph of the view.
// Iterative: safe on 10^6-deep chains.
//
// Walk ids number the reached values densely in the order the walk completes them: an input gets
// the next id when it is reached, an operation's outputs the next output_count() ids when it is
// visited. Callers keep per-value state in arrays indexed by walk id instead of hash maps keyed
// by ValueKey, which on graphs larger than the cache cost a miss per lookup.
#include <cstdint>
#include <span>
#include <vector>

#include "computegraph/detail/topological_walk.hpp"

namespace computegraph {

/// `on_input(const ValueKey<Op>& key, std::uint32_t walk_id)` for each reachable input;
/// `on_operation(const WalkStep<Op>&)` (the operation, its operands' walk ids and its outputs';
/// defined with the walk in detail/topological_walk.hpp) for each reachable operation, after all
/// of its operands' producers. `stage` names the caller in error messages. Returns the walk ids of `outputs`.
template <GraphOperation Op, class OnInput, class OnOperation>
std::vector<std::uint32_t> walk_topological(const ResolvedView<Op>& view,
                                            std::span<const ValueKey<Op>> outputs,
                                            OnInput&& on_input, OnOperation&& on_operation,
                                            const char* stage = "walk_topological") {
  auto no_hint = [](std::span<const std::uint32_t>) {};
  return detail::TopologicalWalk<Op>(view).run(outputs, on_input, on_operation, no_hint, stage);
}

/// walk_topological with a cache hint: on a one-graph view, `on_ahead(operand walk ids)` is called
/// for the operation that will be visited a few steps later (its operands' walk ids are final, but
/// their on_operation may not have run yet), so the caller can prefetch its own per-value state.
/// Hints must not change results.
template <GraphOperation Op, class OnInput, class OnOperation, class OnAhead>
std::vector<std::uint32_t> walk_topological(const ResolvedView<Op>& view,
                                            std::span<const ValueKey<Op>> outputs,
                                            OnInput&& on_input, OnOperation&& on_operation,
                                            OnAhead&& on_ahead, const char* stage) {
  return detail::TopologicalWalk<Op>(view).run(outputs, on_input, on_operation, on_ahead, stage);
}

/// The depth-first post-order walk from `outputs` (in the given order, operands left to right)
/// on every view, one graph or several, after reaching `leading_inputs` first: they get walk ids
/// 0, 1, ... in the given order (a repeated key once), whether or not an output depends on them or
/// a graph declares them. materialize_merge's walk: its result order is this walk's. Throws
/// GraphError as walk_topological, and if a leading input is not an input key.
template <GraphOperation Op, class OnInput, class OnOperation>
std::vector<std::uint32_t> walk_depth_first(const ResolvedView<Op>& view,
                                            std::span<const ValueKey<Op>> outputs,
                                            std::span<const ValueKey<Op>> leading_inputs,
                                            OnInput&& on_input, OnOperation&& on_operation,
                                            const char* stage) {
  return detail::TopologicalWalk<Op>(view).run_depth_first(outputs, leading_inputs, on_input,
                                                           on_operation, stage);
}

}  // namespace computegraph
