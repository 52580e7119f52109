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
// Cost: O(reachable values) time plus O(values of the graphs touched) memory, and an operand
// array reserved for the operand_count() of every graph of the view (4 bytes per operand);
// iterative (no recursion), so 10^6-deep chains are fine.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "computegraph/detail/open_table.hpp"
#include "computegraph/detail/prefetch.hpp"
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
      : view_(view),
        local_ids_(view.graphs().size()),
        multi_graph_(view.graphs().size() > 1) {}

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
  static constexpr std::uint32_t kLookahead = 8;  // frames, for prefetch_resumed
  static constexpr std::uint32_t kWindow = 16;    // values, for emit's key prefetch

  /// A value of the view: local value `value` of graph number `graph` (an index into
  /// view_.graphs()).
  struct Def {
    std::uint32_t graph;
    LocalValueId value;
  };
  struct Frame {
    Def def;
    std::uint32_t next_input = 0;
    LocalOperationId op = 0;  // the operation defining def, in its graph
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
    if (ids.empty()) [[unlikely]] ids.assign(graph(g).values().size(), kUnset);
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

  /// Value id of an already merged value, or kUnset. The first test settles nearly every call.
  std::uint32_t known(Def d, const ValueKey<Op>& key) {
    const std::uint32_t id = ids_of(d.graph)[d.value];
    return id != kUnset ? id : known_by_key(d, key);
  }
  std::uint32_t known_by_key(Def d, const ValueKey<Op>& key) {
    if (multi_graph_ || is_input(d)) {
      if (auto id = find_key(key)) return ids_of(d.graph)[d.value] = *id;
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
  /// known; an operation's are the top input_count() entries when it is emitted. Going down reads
  /// only the graphs' packed local_operands() arrays; an operation's node is read when it is
  /// emitted, and for its External operands.
  MaterializedValueId visit(Def root, const ValueKey<Op>& root_key) {
    if (auto id = known(root, root_key); id != kUnset) return id;
    if (is_input(root)) return ids_of(root.graph)[root.value] = add_input(root_key);
    enter(root);
    while (!stack_.empty()) {
      Frame& top = stack_.back();
      const Graph<Op>& g = graph(top.def.graph);
      const std::span<const LocalValueId> locals = g.local_operands(top.op);
      if (top.next_input == locals.size()) {
        MaterializedValueId id = emit(top.def, g.operations()[top.op]);
        stack_.pop_back();  // invalidates `top`
        operands_.push_back(id);
        prefetch_resumed();
        continue;
      }
      const std::uint32_t k = top.next_input++;
      std::uint32_t id = kUnset;
      Def def{top.def.graph, locals[k]};
      const ValueKey<Op>* key = nullptr;
      if (def.value != Graph<Op>::kExternalOperand) {
        key = &g.key(def.value);
        id = known(def, *key);
      } else {
        const OperationNode<Op>& node = g.operations()[top.op];
        key = &node.inputs[k].external_key();
        if (auto merged = key->is_input() ? find_key(*key) : std::nullopt) {
          id = *merged;  // e.g. a leading input that no graph declares
        } else if (auto found = locate(*key)) {
          def = *found;
          id = known(def, *key);
        } else {
          throw GraphError("materialize_merge: dangling external reference " +
                           key_to_string(*key) + " (input of " +
                           std::string(node.operation.name()) +
                           "): no graph of the view defines it");
        }
      }
      if (id == kUnset) {
        if (!is_input(def)) {
          enter(def);  // invalidates `top`
          continue;
        }
        id = ids_of(def.graph)[def.value] = add_input(*key);
      }
      operands_.push_back(id);
    }
    MaterializedValueId id = operands_.back();
    operands_.pop_back();
    return id;
  }

  /// Pushes the frame of an operation to walk.
  void enter(Def def) {
    const Graph<Op>& g = graph(def.graph);
    stack_.push_back({def, 0, g.values()[def.value].producer->first});
  }

  /// On graphs much larger than the cache, emission would wait for memory at every operation: on
  /// a deep graph the walk goes all the way down before it comes back up, by which time the nodes
  /// are no longer cached. But after a frame is popped the walk resumes the frames below it, in
  /// stack order, so those addresses are known: fetch the operation node of the frame kLookahead
  /// pops away, then, half way, the key node that emitting it will write (a reference count).
  /// Hints never change results; a wrong guess only costs the prefetch.
  void prefetch_resumed() const {
    const std::size_t depth = stack_.size();
    if (depth > kLookahead) {
      const Frame& far = stack_[depth - 1 - kLookahead];
      const Graph<Op>& g = graph(far.def.graph);
      detail::prefetch_object(&g.operations()[far.op]);
      detail::prefetch(&g.values()[far.def.value]);
    }
    if (depth > kLookahead / 2) {
      const Frame& near = stack_[depth - 1 - kLookahead / 2];
      detail::prefetch_for_write(graph(near.def.graph).key(near.def.value).node_identity());
    }
  }

  /// Appends the operation defining `def`, whose operand ids are on top of operands_; returns the
  /// value id of `def`.
  MaterializedValueId emit(Def def, const OperationNode<Op>& node) {
    const Graph<Op>& g = graph(def.graph);
    const std::size_t n_in = node.inputs.size();
    auto& pool = result_.operands_;
    if (pool.size() + n_in > pool.capacity()) [[unlikely]] {
      throw GraphError("materialize_merge: operation " + std::string(node.operation.name()) +
                       " has more operands than its graph's operand_count() accounts for");
    }
    const std::size_t begin = pool.size();
    const auto operand_ids = operands_.end() - static_cast<std::ptrdiff_t>(n_in);
    pool.insert(pool.end(), operand_ids, operands_.end());
    operands_.erase(operand_ids, operands_.end());
    MaterializedOperation<Op> op{node.operation, {pool.data() + begin, n_in}, 0, 0, node.role};
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
    // Copying a key writes its node's reference count. Emission mostly goes up in build order,
    // so the key node of the value kWindow places later is prefetched for writing.
    if (def.value + kWindow < g.values().size()) {
      detail::prefetch_for_write(g.key(def.value + kWindow).node_identity());
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
