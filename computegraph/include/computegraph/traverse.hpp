#pragma once
// walk_topological: visit the logical DAG of a resolved view (spec §II "Logical traversal").
//
// Local references are followed inside their graph; External ones are resolved through the view.
// Every operation reachable from `outputs` is visited exactly once, deduplicated by key, in
// topological order (depth-first post-order from the outputs in the given order, operands left to
// right); every reachable input key is visited once, when first reached. No node is copied.
// Throws GraphError if an output or an External reference is not defined by any graph of the view.
// Iterative: safe on 10^6-deep chains.
#include <span>
#include <string>
#include <vector>

#include "computegraph/detail/open_table.hpp"
#include "computegraph/error.hpp"
#include "computegraph/key_printer.hpp"
#include "computegraph/resolve.hpp"

namespace computegraph {

namespace detail {
/// A set of key nodes (by address), without per-entry allocation.
class NodeSet {
 public:
  /// Adds the node; false if it was already present.
  bool insert(const void* node) {
    if (contains(node)) return false;
    table_.insert(Entry{node});
    return true;
  }
  bool contains(const void* node) {
    return table_.find(address_hash(node), [&](const Entry& e) { return e.node == node; }) != nullptr;
  }

 private:
  struct Entry {
    const void* node = nullptr;
  };
  struct Traits {
    static bool occupied(const Entry& e) { return e.node != nullptr; }
    static std::size_t hash(const Entry& e) { return address_hash(e.node); }
  };
  OpenTable<Entry, Traits> table_;
};
}  // namespace detail

/// `on_input(const ValueKey<Op>&)` for each reachable input;
/// `on_operation(const Graph<Op>&, const OperationNode<Op>&)` for each reachable operation, after
/// all of its operands' producers. `stage` names the caller in error messages.
template <GraphOperation Op, class OnInput, class OnOperation>
void walk_topological(const ResolvedView<Op>& view, std::span<const ValueKey<Op>> outputs,
                      OnInput&& on_input, OnOperation&& on_operation,
                      const char* stage = "walk_topological") {
  detail::NodeSet visited;
  struct Frame {
    ValueDef<Op> def;
    std::size_t next_input = 0;
  };
  std::vector<Frame> stack;
  auto enter = [&](const ValueKey<Op>& key, const ValueDef<Op>& def) {
    if (!visited.insert(key.node_identity())) return;
    if (def.is_input()) {
      on_input(key);
    } else {
      stack.push_back({def});
    }
  };
  for (const auto& key : outputs) {
    if (visited.contains(key.node_identity())) continue;
    auto def = view.resolve_value(key);
    if (!def) {
      throw GraphError(std::string(stage) + ": output " + key_to_string(key) +
                       " is not defined by any graph of the view");
    }
    enter(key, *def);
    while (!stack.empty()) {
      Frame& top = stack.back();
      auto inputs = top.def.inputs();
      if (top.next_input == inputs.size()) {
        on_operation(*top.def.graph, top.def.operation_node());
        stack.pop_back();
        continue;
      }
      const ValueRef<Op>& ref = inputs[top.next_input++];
      const ValueKey<Op>& in_key = top.def.graph->key_of(ref);
      if (visited.contains(in_key.node_identity())) continue;
      if (ref.is_local()) {
        enter(in_key, ValueDef<Op>{top.def.graph, ref.local_id()});  // may invalidate `top`
        continue;
      }
      auto def_in = view.resolve_value(in_key);
      if (!def_in) {
        throw GraphError(std::string(stage) + ": dangling external reference " +
                         key_to_string(in_key) + " (input of " +
                         std::string(top.def.operation().name()) +
                         "): no graph of the view defines it");
      }
      enter(in_key, *def_in);
    }
  }
}

}  // namespace computegraph
