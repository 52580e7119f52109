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
        windows_(view.graphs().size()),
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
  static constexpr std::uint32_t kWindow = 16;    // values, for prefetch_around

  /// A value of the view: local value `value` of graph number `graph` (an index into
  /// view_.graphs()).
  struct Def {
    std::uint32_t graph;
    LocalValueId value;
  };
  /// Values [lo, hi) of one graph are prefetched (see prefetch_around).
  struct Window {
    std::uint32_t lo = 0, hi = 0;
    bool active = false;
  };
  struct Frame {
    Def def;
    std::uint32_t next_input = 0;
    const OperationNode<Op>* node = nullptr;  // the operation defining def
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
  /// known; an operation's are the top input_count() entries when it is emitted.
  MaterializedValueId visit(Def root, const ValueKey<Op>& root_key) {
    if (auto id = known(root, root_key); id != kUnset) return id;
    if (is_input(root)) return ids_of(root.graph)[root.value] = add_input(root_key);
    enter(root);
    while (!stack_.empty()) {
      Frame& top = stack_.back();
      const Graph<Op>& g = graph(top.def.graph);
      const OperationNode<Op>& node = *top.node;
      if (top.next_input == node.inputs.size()) {
        MaterializedValueId id = emit(top.def, node);
        stack_.pop_back();  // invalidates `top`
        operands_.push_back(id);
        prefetch_resumed();
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

  // Prefetching. On graphs much larger than the cache, the walk would wait for memory at almost
  // every step: each operation's operand list and each key node is a separate allocation, and on
  // a deep graph the walk goes all the way down before it comes back up to emit, by which time
  // what it read on the way down has left the cache. Two kinds of hints hide that latency
  // (prefetch_around and prefetch_resumed); they never change results, and a wrong guess only
  // costs a prefetch.

  /// Pushes the frame of an operation to walk.
  void enter(Def def) {
    const Graph<Op>& g = graph(def.graph);
    stack_.push_back({def, 0, &g.operations()[g.values()[def.value].producer->first]});
    prefetch_around(def);
  }

  /// Going down is a chain of dependent loads whose addresses cannot be known in advance. But the
  /// walk mostly moves through a graph in (or against) build order, a few values at a time:
  /// operands are usually defined shortly before their users. So the operand lists of a window of
  /// kWindow values on each side of the value being entered are kept prefetched, sliding with the
  /// walk; each is fetched about once per direction, and a jump elsewhere restarts the window.
  void prefetch_around(Def def) {
    const auto& values = graph(def.graph).values();
    const auto n = static_cast<std::uint32_t>(values.size());
    Window& w = windows_[def.graph];
    const std::uint32_t v = def.value;
    if (!w.active || v + kWindow < w.lo || v > w.hi + kWindow) w = {v, v, true};
    const std::uint32_t lo = v > kWindow ? v - kWindow : 0;
    const std::uint32_t hi = std::min(n, v + kWindow + 1);
    while (w.hi < hi) prefetch_value(def.graph, w.hi++);
    while (w.lo > lo) prefetch_value(def.graph, --w.lo);
  }

  void prefetch_value(std::uint32_t g, LocalValueId v) const {
    const Graph<Op>& gr = graph(g);
    const auto& producer = gr.values()[v].producer;
    if (producer) detail::prefetch(gr.operations()[producer->first].inputs.data());
  }

  /// After a frame is popped, the walk resumes the frames below it, in stack order, and those
  /// addresses are known: fetch the operation node of the frame kLookahead pops away, then, half
  /// way, its operand list and the key node that emitting it will write (a reference count).
  void prefetch_resumed() const {
    const std::size_t depth = stack_.size();
    if (depth > kLookahead) {
      const Frame& far = stack_[depth - 1 - kLookahead];
      detail::prefetch_object(far.node);
      detail::prefetch(&graph(far.def.graph).values()[far.def.value]);
    }
    if (depth > kLookahead / 2) {
      const Frame& near = stack_[depth - 1 - kLookahead / 2];
      detail::prefetch(near.node->inputs.data());
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
    pool.insert(pool.end(), operands_.end() - static_cast<std::ptrdiff_t>(n_in), operands_.end());
    operands_.resize(operands_.size() - n_in);
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
  std::vector<Window> windows_;  // per graph of the view
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
