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
// Cost: O(reachable values) time plus O(values of the graphs touched) memory; iterative (no
// recursion), so 10^6-deep chains are fine.
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "computegraph/detail/open_table.hpp"
#include "computegraph/dump.hpp"
#include "computegraph/error.hpp"
#include "computegraph/key_printer.hpp"
#include "computegraph/materialized_graph.hpp"
#include "computegraph/resolve.hpp"

namespace computegraph {

namespace detail {
/// MaterializeMerge's key map entry: key node address -> value id (inputs) or operation index
/// (derived values; a slot's value is first_output + slot).
struct MergedKeyEntry {
  const void* node;
  std::uint32_t id;
};
struct MergedKeyTraits {
  static bool occupied(const MergedKeyEntry& e) { return e.node != nullptr; }
  static std::size_t hash(const MergedKeyEntry& e) { return address_hash(e.node); }
};
}  // namespace detail

template <GraphOperation Op>
class MaterializeMerge {
 public:
  explicit MaterializeMerge(const ResolvedView<Op>& view)
      : view_(view), local_ids_(view.graphs().size()), multi_graph_(view.graphs().size() > 1) {}

  MaterializedGraph<Op> run(std::span<const ValueKey<Op>> outputs,
                            std::span<const ValueKey<Op>> leading_inputs) {
    for (const auto& key : leading_inputs) {
      if (!key.is_input()) {
        throw GraphError("materialize_merge: leading input " + key_to_string(key) +
                         " is not an input key");
      }
      if (!find_key(key)) add_input(key);
    }
    for (const auto& key : outputs) {
      auto def = locate(key);
      if (!def) {
        throw GraphError("materialize_merge: output " + key_to_string(key) +
                         " is not defined by any graph of the view (" +
                         std::to_string(view_.graphs().size()) + " graphs)");
      }
      result_.outputs_.push_back(visit(*def, key));
    }
    return std::move(result_);
  }

 private:
  static constexpr std::uint32_t kUnset = std::numeric_limits<std::uint32_t>::max();
  static constexpr std::uint32_t kLookahead = 8;

  /// A value of the view: local value `value` of graph number `graph` (an index into
  /// view_.graphs()).
  struct Def {
    std::uint32_t graph;
    LocalValueId value;
  };
  struct Frame {
    Def def;
    std::uint32_t next_input = 0;
  };

  // Lookup structure. Every key is defined at most once per graph (GraphBuilder deduplicates), so
  // a per-graph array indexed by local id (local_ids_) records which values are done; it is read
  // in the walk order, which follows the graphs' own order, instead of hashing. The key map
  // (by_key_) is what merges equal keys across graphs. It holds every input (leading inputs need
  // not be defined by any graph) and, when the view has several graphs, every operation.

  const Graph<Op>& graph(std::uint32_t g) const { return *view_.graphs()[g]; }

  bool is_input(Def d) const { return !graph(d.graph).values()[d.value].producer.has_value(); }

  /// The view's definition of `key`: the first graph in view order defining it (as resolve_value).
  std::optional<Def> locate(const ValueKey<Op>& key) const {
    const auto& graphs = view_.graphs();
    for (std::uint32_t g = 0; g < graphs.size(); ++g) {
      if (auto id = graphs[g]->find(key)) return Def{g, *id};
    }
    return std::nullopt;
  }

  std::vector<std::uint32_t>& ids_of(std::uint32_t g) {
    auto& ids = local_ids_[g];
    if (ids.empty()) ids.assign(graph(g).values().size(), kUnset);
    return ids;
  }

  /// Value id of an already merged key, or nullopt.
  std::optional<MaterializedValueId> find_key(const ValueKey<Op>& key) const {
    const void* node = key.node_identity();
    const auto* entry = by_key_.find(detail::address_hash(node),
                                     [&](const detail::MergedKeyEntry& e) { return e.node == node; });
    if (!entry) return std::nullopt;
    if (key.is_input()) return entry->id;
    return result_.operations_[entry->id].first_output + key.output_slot();
  }

  /// Value id of an already merged value, or kUnset.
  std::uint32_t known(Def d, const ValueKey<Op>& key) {
    auto& ids = ids_of(d.graph);
    if (ids[d.value] != kUnset) return ids[d.value];
    if (multi_graph_ || is_input(d)) {
      if (auto id = find_key(key)) return ids[d.value] = *id;
    }
    return kUnset;
  }

  MaterializedValueId add_input(const ValueKey<Op>& key) {
    auto id = static_cast<MaterializedValueId>(result_.values_.size());
    result_.values_.push_back({key, std::nullopt, 0});
    result_.inputs_.push_back(id);
    by_key_.insert({key.node_identity(), id});
    return id;
  }

  /// Depth-first post-order walk from `root`. Operand ids are pushed on operands_ as they become
  /// known; an operation's are the top input_count() entries when it is emitted.
  MaterializedValueId visit(Def root, const ValueKey<Op>& root_key) {
    if (auto id = known(root, root_key); id != kUnset) return id;
    if (is_input(root)) return ids_of(root.graph)[root.value] = add_input(root_key);
    enter(root);
    while (!stack_.empty()) {
      Frame& top = stack_.back();
      const Graph<Op>& g = graph(top.def.graph);
      const OperationNode<Op>& node = g.operations()[g.values()[top.def.value].producer->first];
      if (top.next_input == node.inputs.size()) {
        MaterializedValueId id = emit(top.def, node);
        stack_.pop_back();  // invalidates `top`
        operands_.push_back(id);
        continue;
      }
      const ValueRef<Op>& ref = node.inputs[top.next_input++];
      const ValueKey<Op>& key = g.key_of(ref);
      std::uint32_t id = kUnset;
      Def def{top.def.graph, 0};
      if (ref.is_local()) {
        def.value = ref.local_id();
        id = known(def, key);
      } else if (auto merged = key.is_input() ? find_key(key) : std::nullopt) {
        id = *merged;  // e.g. a leading input that no graph declares
      } else if (auto found = locate(key)) {
        def = *found;
        id = known(def, key);
      } else {
        throw GraphError("materialize_merge: dangling external reference " + key_to_string(key) +
                         " (input of " + std::string(node.operation.name()) +
                         "): no graph of the view defines it");
      }
      if (id == kUnset) {
        if (!is_input(def)) {
          enter(def);  // invalidates `top`
          continue;
        }
        id = ids_of(def.graph)[def.value] = add_input(key);
      }
      operands_.push_back(id);
    }
    MaterializedValueId id = operands_.back();
    operands_.pop_back();
    return id;
  }

  /// Pushes the frame of an operation to walk.
  ///
  /// The walk is a chain of dependent loads through each operation's operand list, a separate
  /// allocation; on graphs much larger than the cache every step would wait for memory. Local ids
  /// follow build order and operands are usually defined shortly before their users, so the
  /// operand list of the operation kLookahead places earlier is prefetched: by the time the walk
  /// gets there it is usually in cache. A wrong guess only costs a prefetch.
  void enter(Def def) {
    stack_.push_back({def});
    const Graph<Op>& g = graph(def.graph);
    const auto op = g.values()[def.value].producer->first;
    if (op >= kLookahead) detail::prefetch(g.operations()[op - kLookahead].inputs.data());
  }

  /// Appends the operation defining `def`, whose operand ids are on top of operands_; returns the
  /// value id of `def`.
  MaterializedValueId emit(Def def, const OperationNode<Op>& node) {
    const Graph<Op>& g = graph(def.graph);
    const std::size_t n_in = node.inputs.size();
    MaterializedOperation<Op> op{node.operation, {}, 0, 0, node.role};
    op.inputs.assign(operands_.end() - static_cast<std::ptrdiff_t>(n_in), operands_.end());
    operands_.resize(operands_.size() - n_in);
    auto op_index = static_cast<std::uint32_t>(result_.operations_.size());
    op.first_output = static_cast<MaterializedValueId>(result_.values_.size());
    op.output_count = static_cast<std::uint32_t>(node.outputs.size());
    auto& ids = ids_of(def.graph);
    if (op.output_count == 1) {  // the common case: the output is `def`, skip reading the list
      result_.values_.push_back({g.key(def.value), op_index, 0});
      ids[def.value] = op.first_output;
    } else {
      for (std::uint32_t slot = 0; slot < op.output_count; ++slot) {
        const LocalValueId local = node.outputs[slot];
        result_.values_.push_back({g.key(local), op_index, slot});
        ids[local] = op.first_output + slot;
      }
    }
    // Copying a key writes its node's reference count. Emission mostly follows build order, so the
    // node of a value kLookahead places later is prefetched for writing (see enter()).
    if (def.value + kLookahead < g.values().size()) {
      detail::prefetch_for_write(g.values()[def.value + kLookahead].key.node_identity());
    }
    if (multi_graph_) by_key_.insert({g.key(def.value).node_identity(), op_index});
    result_.operations_.push_back(std::move(op));
    return ids[def.value];
  }

  const ResolvedView<Op>& view_;
  MaterializedGraph<Op> result_;
  /// Per graph of the view: the value id of each local value, kUnset until merged; sized on first
  /// use, so graphs the walk never enters cost nothing.
  std::vector<std::vector<std::uint32_t>> local_ids_;
  detail::OpenTable<detail::MergedKeyEntry, detail::MergedKeyTraits> by_key_;
  bool multi_graph_;
  std::vector<Frame> stack_;
  std::vector<MaterializedValueId> operands_;
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
