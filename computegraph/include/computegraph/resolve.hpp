#pragma once
// resolve: a logical view over several graphs and, recursively, their parents (docs/design.md,
// "The pipeline").
//
// resolve copies no node: it records which graphs to search, roots first, then parents breadth-first,
// each graph once. `resolve_value` finds the graph that defines a key. Transforms that trace through
// External references (higher-order linearize, materialize_merge) work on a view.
#include <optional>
#include <span>
#include <unordered_set>

#include "computegraph/graph.hpp"

namespace computegraph {

/// Where and how a value is defined: a graph input, or output `output_slot` of a local operation.
template <GraphOperation Op>
struct ValueDef {
  const Graph<Op>* graph;
  LocalValueId value;

  bool is_input() const { return !graph->values()[value].producer.has_value(); }
  /// Preconditions below: !is_input().
  const OperationNode<Op>& operation_node() const {
    return graph->operations()[graph->values()[value].producer->first];
  }
  const Op& operation() const { return operation_node().operation; }
  std::span<const ValueRef<Op>> inputs() const { return operation_node().inputs; }
  const OperationRole& role() const { return operation_node().role; }
  std::uint32_t output_slot() const { return graph->values()[value].producer->second; }
};

template <GraphOperation Op>
class ResolvedView {
 public:
  ResolvedView() = default;
  explicit ResolvedView(std::span<const GraphPtr<Op>> roots) {
    std::unordered_set<const Graph<Op>*> seen;
    for (const auto& g : roots) push(g, seen);
    root_count_ = graphs_.size();
    for (std::size_t i = 0; i < graphs_.size(); ++i) {
      for (const auto& parent : graphs_[i]->parents()) push(parent, seen);
    }
  }

  /// The graph defining `key` (searched in view order), or nullopt if no graph of the view does.
  std::optional<ValueDef<Op>> resolve_value(const ValueKey<Op>& key) const {
    for (const auto& g : graphs_) {
      if (auto id = g->find(key)) return ValueDef<Op>{g.get(), *id};
    }
    return std::nullopt;
  }
  bool contains(const ValueKey<Op>& key) const { return resolve_value(key).has_value(); }

  /// Every graph of the view: roots first, then parents breadth-first, without repeats.
  const std::vector<GraphPtr<Op>>& graphs() const { return graphs_; }
  /// The graphs the view was made from (deduplicated), in the given order.
  std::span<const GraphPtr<Op>> roots() const { return {graphs_.data(), root_count_}; }

 private:
  void push(const GraphPtr<Op>& g, std::unordered_set<const Graph<Op>*>& seen) {
    if (g && seen.insert(g.get()).second) graphs_.push_back(g);
  }
  std::vector<GraphPtr<Op>> graphs_;
  std::size_t root_count_ = 0;
};

/// Makes a logical view over `roots` and their ancestors. Cost: O(number of graphs).
template <GraphOperation Op>
ResolvedView<Op> resolve(std::span<const GraphPtr<Op>> roots) {
  return ResolvedView<Op>(roots);
}
template <GraphOperation Op>
ResolvedView<Op> resolve(const std::vector<GraphPtr<Op>>& roots) {
  return ResolvedView<Op>(std::span<const GraphPtr<Op>>(roots));
}
template <GraphOperation Op>
ResolvedView<Op> resolve(std::initializer_list<GraphPtr<Op>> roots) {
  return ResolvedView<Op>(std::span<const GraphPtr<Op>>(roots.begin(), roots.size()));
}

}  // namespace computegraph
