#pragma once
// materialize_merge: flatten a resolved view into one MaterializedGraph (docs/design.md,
// "The pipeline").
//
// Contract:
// - Collects exactly the definitions reachable from `outputs`, following Local references inside a
//   graph and resolving External ones through the view.
// - Deduplicates by key: structurally equal operations from different graphs become one operation
//   (cross-graph CSE).
// - Order: a depth-first, post-order walk from the outputs in the given order, visiting each
//   operation's inputs left to right. Operations appear in that order, and inputs in the order the
//   walk first reaches them, after any `leading_inputs`, which come first, in the given order, even
//   if no output depends on them.
// - Throws GraphError if an output or an External reference is not defined by any graph of the
//   view, or if a leading input is not an input key.
// Cost: O(reachable values) time plus O(values of the graphs touched) memory, and an operand
// array reserved for the operand_count() of every graph of the view (4 bytes per operand);
// iterative (no recursion), so 10^6-deep chains are fine.
//
// The walk is computegraph's one topological walker (traverse.hpp, walk_depth_first), the same
// that the AD transforms use: its walk ids, dense in the order values are completed, are the
// materialized value ids.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "computegraph/detail/prefetch.hpp"
#include "computegraph/dump.hpp"
#include "computegraph/error.hpp"
#include "computegraph/materialized_graph.hpp"
#include "computegraph/resolve.hpp"
#include "computegraph/traverse.hpp"

namespace computegraph {

template <GraphOperation Op>
class MaterializeMerge {
 public:
  explicit MaterializeMerge(const ResolvedView<Op>& view) : view_(view) {}

  MaterializedGraph<Op> run(std::span<const ValueKey<Op>> outputs,
                            std::span<const ValueKey<Op>> leading_inputs) {
    // Outputs usually come from the root graphs and need most of them: reserving their size
    // avoids regrowing (copying) the result vectors on large graphs.
    std::size_t value_hint = leading_inputs.size(), operation_hint = 0;
    for (const auto& g : view_.roots()) {
      value_hint += g->values().size();
      operation_hint += g->operations().size();
    }
    result_.values_.reserve(value_hint);
    result_.operations_.reserve(operation_hint);
    // The operations' input spans point into result_.operands_, so it must never reallocate:
    // every (graph, operation) pair is emitted at most once, which bounds its size.
    std::size_t operand_bound = 0;
    for (const auto& g : view_.graphs()) operand_bound += g->operand_count();
    result_.operands_.reserve(operand_bound);
    auto on_input = [this](const ValueKey<Op>& key, std::uint32_t id) {
      result_.values_.push_back({key, std::nullopt, 0});
      result_.inputs_.push_back(id);
    };
    auto on_operation = [this](const WalkStep<Op>& step) { emit(step); };
    result_.outputs_ = walk_depth_first(view_, outputs, leading_inputs, on_input, on_operation,
                                        "materialize_merge");
    return std::move(result_);
  }

 private:
  /// Appends the visited operation; its outputs get the next value ids, which are the walk's ids.
  void emit(const WalkStep<Op>& step) {
    const OperationNode<Op>& node = step.node;
    const std::size_t n_in = step.operands.size();
    auto& pool = result_.operands_;
    if (pool.size() + n_in > pool.capacity()) [[unlikely]] {
      throw GraphError("materialize_merge: operation " + std::string(node.operation.name()) +
                       " has more operands than its graph's operand_count() accounts for");
    }
    const std::size_t begin = pool.size();
    pool.insert(pool.end(), step.operands.begin(), step.operands.end());
    const auto op_index = static_cast<std::uint32_t>(result_.operations_.size());
    const auto n_out = static_cast<std::uint32_t>(node.outputs.size());
    const Graph<Op>& g = step.graph;
    for (std::uint32_t slot = 0; slot < n_out; ++slot) {
      result_.values_.push_back({g.key(step.first_output_value + slot), op_index, slot});
    }
    // Copying a key writes its node's reference count. Emission mostly goes up in build order
    // (a chain, and the common case of a graph built operands first), so the key node of the
    // value kWindow places later is fetched for writing now.
    constexpr LocalValueId kWindow = 16;
    if (step.first_output_value + kWindow < g.values().size()) {
      detail::prefetch_for_write(g.key(step.first_output_value + kWindow).node_identity());
    }
    result_.operations_.push_back(
        {node.operation, {pool.data() + begin, n_in}, step.first_output, n_out, node.role});
  }

  const ResolvedView<Op>& view_;
  MaterializedGraph<Op> result_;
};

template <GraphOperation Op>
MaterializedGraph<Op> materialize_merge(const ResolvedView<Op>& view,
                                        std::span<const ValueKey<Op>> outputs,
                                        std::span<const ValueKey<Op>> leading_inputs = {}) {
  auto result = MaterializeMerge<Op>(view).run(outputs, leading_inputs);
  detail::after_stage("materialize", result);
  return result;
}

}  // namespace computegraph
