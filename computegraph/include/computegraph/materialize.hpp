#pragma once
// materialize_merge: flatten a resolved view into one MaterializedGraph (spec §III).
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
// Cost: O(reachable values), iterative (no recursion), so 10^6-deep chains are fine.
#include <span>
#include <string>
#include <unordered_map>

#include "computegraph/dump.hpp"
#include "computegraph/error.hpp"
#include "computegraph/key_printer.hpp"
#include "computegraph/materialized_graph.hpp"
#include "computegraph/resolve.hpp"

namespace computegraph {

template <GraphOperation Op>
class MaterializeMerge {
 public:
  explicit MaterializeMerge(const ResolvedView<Op>& view) : view_(view) {
    std::size_t total = 0;
    for (const auto& g : view.graphs()) total += g->values().size();
    visited_.reserve(total);
  }

  MaterializedGraph<Op> run(std::span<const ValueKey<Op>> outputs,
                            std::span<const ValueKey<Op>> leading_inputs) {
    for (const auto& key : leading_inputs) {
      if (!key.is_input()) {
        throw GraphError("materialize_merge: leading input " + key_to_string(key) +
                         " is not an input key");
      }
      if (!visited_.contains(key.node_identity())) add_input(key);
    }
    for (const auto& key : outputs) {
      auto def = view_.resolve_value(key);
      if (!def) {
        throw GraphError("materialize_merge: output " + key_to_string(key) +
                         " is not defined by any graph of the view (" +
                         std::to_string(view_.graphs().size()) + " graphs)");
      }
      result_.outputs_.push_back(visit(key, *def));
    }
    return std::move(result_);
  }

 private:
  struct Frame {
    ValueDef<Op> def;
    std::size_t next_input = 0;
  };

  MaterializedValueId add_input(const ValueKey<Op>& key) {
    auto id = static_cast<MaterializedValueId>(result_.values_.size());
    result_.values_.push_back({key, std::nullopt, 0});
    result_.inputs_.push_back(id);
    visited_.emplace(key.node_identity(), id);
    return id;
  }

  /// Value id of an already visited key.
  MaterializedValueId lookup(const ValueKey<Op>& key) const {
    std::uint32_t entry = visited_.at(key.node_identity());
    if (key.is_input()) return entry;
    return result_.operations_[entry].first_output + key.output_slot();
  }

  /// Definition of an operand reference of `frame`'s operation.
  ValueDef<Op> definition(const Frame& frame, const ValueRef<Op>& ref, const ValueKey<Op>& key) {
    if (ref.is_local()) return ValueDef<Op>{frame.def.graph, ref.local_id()};
    if (auto def = view_.resolve_value(key)) return *def;
    throw GraphError("materialize_merge: dangling external reference " + key_to_string(key) +
                     " (input of " + std::string(frame.def.operation().name()) +
                     "): no graph of the view defines it");
  }

  MaterializedValueId visit(const ValueKey<Op>& root_key, const ValueDef<Op>& root) {
    if (visited_.contains(root_key.node_identity())) return lookup(root_key);
    if (root.is_input()) return add_input(root_key);
    std::vector<Frame> stack;
    stack.push_back({root});
    while (!stack.empty()) {
      Frame& top = stack.back();
      auto inputs = top.def.inputs();
      if (top.next_input < inputs.size()) {
        const ValueRef<Op>& ref = inputs[top.next_input++];
        const ValueKey<Op>& key = top.def.graph->key_of(ref);
        if (visited_.contains(key.node_identity())) continue;
        ValueDef<Op> def = definition(top, ref, key);
        if (def.is_input()) {
          add_input(key);
        } else {
          stack.push_back({def});  // invalidates `top`
        }
        continue;
      }
      emit(top.def);
      stack.pop_back();
    }
    return lookup(root_key);
  }

  void emit(const ValueDef<Op>& def) {
    const auto& node = def.operation_node();
    MaterializedOperation<Op> op{node.operation, {}, 0, 0, node.role};
    op.inputs.reserve(node.inputs.size());
    for (const auto& ref : node.inputs) op.inputs.push_back(lookup(def.graph->key_of(ref)));
    auto op_index = static_cast<std::uint32_t>(result_.operations_.size());
    op.first_output = static_cast<MaterializedValueId>(result_.values_.size());
    op.output_count = static_cast<std::uint32_t>(node.outputs.size());
    for (std::uint32_t slot = 0; slot < op.output_count; ++slot) {
      result_.values_.push_back({def.graph->key(node.outputs[slot]), op_index, slot});
    }
    visited_.emplace(def.graph->key(def.value).node_identity(), op_index);
    result_.operations_.push_back(std::move(op));
  }

  const ResolvedView<Op>& view_;
  MaterializedGraph<Op> result_;
  /// key node -> value id (inputs) or operation index (derived values).
  std::unordered_map<const void*, std::uint32_t> visited_;
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
