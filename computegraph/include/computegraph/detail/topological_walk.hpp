#pragma once
// TopologicalWalk: walk_topological's implementation (see traverse.hpp for the contract).
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "computegraph/detail/open_table.hpp"
#include "computegraph/detail/prefetch.hpp"
#include "computegraph/error.hpp"
#include "computegraph/key_printer.hpp"
#include "computegraph/resolve.hpp"

namespace computegraph {

/// One operation visited by walk_topological.
template <GraphOperation Op>
struct WalkStep {
  const Graph<Op>& graph;
  const OperationNode<Op>& node;
  /// Walk ids of the operands, in operand order.
  std::span<const std::uint32_t> operands;
  /// The operation's local id in `graph`.
  LocalOperationId op;
  /// Walk id of output 0; output k has first_output + k.
  std::uint32_t first_output;
  /// Local id of output 0 in `graph`; output k is first_output_value + k (node.outputs).
  LocalValueId first_output_value;
};

namespace detail {

template <GraphOperation Op>
class TopologicalWalk {
 public:
  explicit TopologicalWalk(const ResolvedView<Op>& view)
      : view_(view), ids_(view.graphs().size()), multi_graph_(view.graphs().size() > 1) {}

  template <class OnInput, class OnOperation, class OnAhead>
  std::vector<std::uint32_t> run(std::span<const ValueKey<Op>> outputs, OnInput& on_input,
                                 OnOperation& on_operation, OnAhead& on_ahead, const char* stage) {
    if (view_.graphs().size() == 1) {
      if (auto schedule = sweep_schedule(outputs, stage)) {
        return sweep(*schedule, on_input, on_operation, on_ahead);
      }
    }
    return depth_first(outputs, on_input, on_operation, stage);
  }

  /// The depth-first walk whatever the view (walk_depth_first): the `leading` input keys first,
  /// in order (a repeated key once), then the outputs.
  template <class OnInput, class OnOperation>
  std::vector<std::uint32_t> run_depth_first(std::span<const ValueKey<Op>> outputs,
                                             std::span<const ValueKey<Op>> leading,
                                             OnInput& on_input, OnOperation& on_operation,
                                             const char* stage) {
    for (const auto& key : leading) {
      if (!key.is_input()) {
        throw GraphError(std::string(stage) + ": leading input " + key_to_string(key) +
                         " is not an input key");
      }
      if (find_key(key)) continue;
      // A leading input need not be declared by any graph, and a graph's input with its key is
      // the same value: from now on, unreached inputs are looked up by key too.
      keyed_inputs_ = true;
      const std::uint32_t id = next_id_++;
      by_key_.insert({key.node_identity(), id});
      on_input(key, id);
    }
    return depth_first(outputs, on_input, on_operation, stage);
  }

 private:
  static constexpr std::uint32_t kUnset = std::numeric_limits<std::uint32_t>::max();

  template <class OnInput, class OnOperation>
  std::vector<std::uint32_t> depth_first(std::span<const ValueKey<Op>> outputs, OnInput& on_input,
                                         OnOperation& on_operation, const char* stage) {
    std::vector<std::uint32_t> output_ids;
    output_ids.reserve(outputs.size());
    for (const auto& key : outputs) {
      auto def = locate(key);
      if (!def) {
        throw GraphError(std::string(stage) + ": output " + key_to_string(key) +
                         " is not defined by any graph of the view (" +
                         std::to_string(view_.graphs().size()) + " graphs)");
      }
      output_ids.push_back(visit(*def, key, on_input, on_operation, stage));
    }
    return output_ids;
  }

  /// Local value `value` of graph number `graph` (an index into view_.graphs()).
  struct Def {
    std::uint32_t graph;
    LocalValueId value;
  };
  struct Frame {
    Def def;
    std::uint32_t next_input = 0;
    LocalOperationId op = 0;  // the operation defining def, in its graph
    std::uint32_t slot = 0;   // def's output slot
  };
  /// by_key_'s entry: a key node and the walk id of its input value or of its output 0.
  struct KeyEntry {
    const void* node;
    std::uint32_t id;
  };
  struct KeyTraits {
    static bool occupied(const KeyEntry& e) { return e.node != nullptr; }
    static std::size_t hash(const KeyEntry& e) { return address_hash(e.node); }
  };

  const Graph<Op>& graph(std::uint32_t g) const { return *view_.graphs()[g]; }
  bool is_input(Def d) const { return !graph(d.graph).values()[d.value].producer.has_value(); }

  /// The first graph in view order defining `key` (as resolve_value).
  std::optional<Def> locate(const ValueKey<Op>& key) const {
    const auto& graphs = view_.graphs();
    for (std::uint32_t g = 0; g < graphs.size(); ++g) {
      if (auto id = graphs[g]->find(key)) return Def{g, *id};
    }
    return std::nullopt;
  }

  std::vector<std::uint32_t>& ids_of(std::uint32_t g) {
    auto& ids = ids_[g];
    if (ids.empty()) [[unlikely]] ids.assign(graph(g).values().size(), kUnset);
    return ids;
  }

  // Every key is defined at most once per graph, so within one graph the per-graph arrays ids_
  // decide whether a value was reached. A key defined in several graphs of the view is one
  // value: by_key_, kept only when the view has several graphs, merges them.
  std::optional<std::uint32_t> find_key(const ValueKey<Op>& key) const {
    const void* node = key.node_identity();
    const auto* entry =
        by_key_.find(address_hash(node), [&](const KeyEntry& e) { return e.node == node; });
    if (!entry) return std::nullopt;
    return entry->id + key.output_slot();
  }
  /// The walk id of an already reached value, or kUnset.
  std::uint32_t known(Def d, const ValueKey<Op>& key) {
    const std::uint32_t id = ids_of(d.graph)[d.value];
    return id != kUnset || !(multi_graph_ || keyed_inputs_) ? id : known_by_key(d, key);
  }
  std::uint32_t known_by_key(Def d, const ValueKey<Op>& key) {
    if (!multi_graph_ && !is_input(d)) return kUnset;  // only leading inputs are keyed
    const auto found = find_key(key);
    return found ? ids_of(d.graph)[d.value] = *found : kUnset;
  }
  /// The walk ids of a value (n = 1) or of an operation's n outputs; `key`: the value's or output
  /// 0's, read only when the view has several graphs.
  std::uint32_t next_ids(std::size_t n, const ValueKey<Op>& key) {
    const std::uint32_t first = next_id_;
    next_id_ += static_cast<std::uint32_t>(n);
    if (multi_graph_) by_key_.insert({key.node_identity(), first});
    return first;
  }

  template <class OnInput>
  std::uint32_t reach_input(Def d, const ValueKey<Op>& key, OnInput& on_input) {
    const std::uint32_t id = ids_of(d.graph)[d.value] = next_ids(1, key);
    on_input(key, id);
    return id;
  }

  void enter(Def def) {
    const Graph<Op>& g = graph(def.graph);
    const ValueNode<Op>& value = g.values()[def.value];
    const auto& producer = *value.producer;
    stack_.push_back({def, 0, producer.first, producer.second});
  }

  /// On a deep graph the walk goes all the way down before it comes back up, by which time what
  /// it read on the way down is no longer cached. But after a frame is popped the walk resumes the frames
  /// below it in stack order, so their addresses are known: fetch the operation node of the frame
  /// kResumeAhead pops away, then, half way, the key node that visiting it reads (and a caller
  /// copying the key writes: its reference count).
  void prefetch_resumed() const {
    constexpr std::size_t kResumeAhead = 8;
    const std::size_t depth = stack_.size();
    if (depth > kResumeAhead) {
      const Frame& far = stack_[depth - 1 - kResumeAhead];
      const Graph<Op>& g = graph(far.def.graph);
      prefetch_object(&g.operations()[far.op]);
      prefetch(&g.values()[far.def.value]);
    }
    if (depth > kResumeAhead / 2) {
      const Frame& near = stack_[depth - 1 - kResumeAhead / 2];
      prefetch_for_write(graph(near.def.graph).key(near.def.value).node_identity());
    }
  }

  /// Depth-first post-order walk from `root`. Operand walk ids are pushed on operands_ as they
  /// become known; an operation's are the top input_count() entries when it is visited.
  template <class OnInput, class OnOperation>
  std::uint32_t visit(Def root, const ValueKey<Op>& root_key, OnInput& on_input,
                      OnOperation& on_operation, const char* stage) {
    if (auto id = known(root, root_key); id != kUnset) return id;
    if (is_input(root)) return reach_input(root, root_key, on_input);
    enter(root);
    while (!stack_.empty()) {
      Frame& top = stack_.back();
      const Graph<Op>& g = graph(top.def.graph);
      const std::span<const LocalValueId> locals = g.local_operands(top.op);
      if (top.next_input == locals.size()) {
        const computegraph::OperationNode<Op>& node = g.operations()[top.op];
        // An operation's outputs are consecutive local ids (GraphBuilder adds them together), so
        // the output list itself, a separate allocation, is not read.
        const auto n_out = static_cast<std::uint32_t>(node.outputs.size());
        const LocalValueId first_value = top.def.value - top.slot;
        const std::uint32_t first = next_ids(n_out, g.key(top.def.value));
        auto& ids = ids_of(top.def.graph);
        for (std::uint32_t k = 0; k < n_out; ++k) ids[first_value + k] = first + k;
        const std::uint32_t id = first + top.slot;
        const std::span<const std::uint32_t> operands(
            operands_.data() + operands_.size() - locals.size(), locals.size());
        on_operation(WalkStep<Op>{g, node, operands, top.op, first, first_value});
        operands_.resize(operands_.size() - locals.size());
        stack_.pop_back();  // invalidates `top`
        operands_.push_back(id);
        prefetch_resumed();
        continue;
      }
      const std::uint32_t k = top.next_input++;
      Def def{top.def.graph, locals[k]};
      const ValueKey<Op>* key = nullptr;
      std::uint32_t id = kUnset;
      if (def.value != Graph<Op>::kExternalOperand) {
        key = &g.key(def.value);
        id = known(def, *key);
      } else {
        const computegraph::OperationNode<Op>& node = g.operations()[top.op];
        key = &node.inputs[k].external_key();
        const bool by_key = multi_graph_ || (keyed_inputs_ && key->is_input());
        if (auto merged = by_key ? find_key(*key) : std::nullopt) {
          id = *merged;
        } else if (auto found = locate(*key)) {
          def = *found;
          id = known(def, *key);
        } else {
          throw GraphError(std::string(stage) + ": dangling external reference " +
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
        id = reach_input(def, *key, on_input);
      }
      operands_.push_back(id);
    }
    const std::uint32_t id = operands_.back();
    operands_.pop_back();
    return id;
  }

  /// The order of a one-graph view's walk: its operations in the graph's own order, which is
  /// already topological (GraphBuilder appends an operation after its operands), restricted to
  /// those the outputs reach, with walk ids numbered in that order.
  struct Schedule {
    /// Each reached input, and output 0 of each reached operation, in graph order.
    std::vector<LocalValueId> values;
    /// Operand walk ids of values[i]'s operation: operand_ids[operand_begin[i] .. [i + 1]).
    std::vector<std::uint32_t> operand_begin, operand_ids;
    std::vector<LocalValueId> outputs;
  };

  /// The schedule, with walk ids assigned (ids_[0]); nullopt, having assigned nothing, if a
  /// reached operation has an External operand (which the graph may define itself): then the
  /// depth-first walk resolves it. Throws GraphError if the graph does not define an output.
  std::optional<Schedule> sweep_schedule(std::span<const ValueKey<Op>> outputs, const char* stage) {
    const Graph<Op>& g = graph(0);
    const auto& values = g.values();
    const auto& ops = g.operations();
    Schedule s;
    // Backward: a value is reached if it is an output or a reached operation reads it; an
    // operation is reached if one of its outputs is.
    std::vector<std::uint8_t> reached(values.size(), 0);
    s.outputs.reserve(outputs.size());
    for (const auto& key : outputs) {
      const auto id = g.find(key);
      if (!id) {
        throw GraphError(std::string(stage) + ": output " + key_to_string(key) +
                         " is not defined by any graph of the view");
      }
      reached[*id] = 1;
      s.outputs.push_back(*id);
    }
    for (std::size_t op = ops.size(); op-- > 0;) {
      bool any = false;
      for (LocalValueId v : ops[op].outputs) any |= reached[v] != 0;
      if (!any) continue;
      reached[ops[op].outputs[0]] = 1;  // scheduled at output 0, whichever output is reached
      for (LocalValueId local : g.local_operands(static_cast<LocalOperationId>(op))) {
        if (local == Graph<Op>::kExternalOperand) return std::nullopt;
        reached[local] = 1;
      }
    }
    // Forward: walk ids in graph order, and each operation's operand walk ids.
    auto& ids = ids_of(0);
    for (std::size_t v = 0; v < values.size(); ++v) {
      if (!reached[v]) continue;
      const auto& producer = values[v].producer;
      if (producer && producer->second != 0) continue;
      s.values.push_back(static_cast<LocalValueId>(v));
      s.operand_begin.push_back(static_cast<std::uint32_t>(s.operand_ids.size()));
      if (!producer) {
        ids[v] = next_id_++;
        continue;
      }
      for (LocalValueId local : g.local_operands(producer->first)) s.operand_ids.push_back(ids[local]);
      const auto n_out = static_cast<std::uint32_t>(ops[producer->first].outputs.size());
      for (std::uint32_t k = 0; k < n_out; ++k) ids[v + k] = next_id_ + k;
      next_id_ += n_out;
    }
    s.operand_begin.push_back(static_cast<std::uint32_t>(s.operand_ids.size()));
    return s;
  }

  /// Visits a one-graph view in schedule order. The order is known before the first visit, so the
  /// walk fetches ahead what visiting an operation reads: kAhead steps before, the operands' value
  /// entries; kAhead / 2 before, their key nodes, and `on_ahead(operand walk ids)` lets the caller
  /// fetch its own per-value state.
  template <class OnInput, class OnOperation, class OnAhead>
  std::vector<std::uint32_t> sweep(const Schedule& s, OnInput& on_input, OnOperation& on_operation,
                                   OnAhead& on_ahead) {
    const Graph<Op>& g = graph(0);
    const auto& values = g.values();
    const auto& ids = ids_of(0);
    auto operands_of = [&](std::size_t i) {
      return std::span<const std::uint32_t>(s.operand_ids.data() + s.operand_begin[i],
                                            s.operand_ids.data() + s.operand_begin[i + 1]);
    };
    auto locals_of = [&](std::size_t i) {
      const auto& producer = values[s.values[i]].producer;
      return producer ? g.local_operands(producer->first) : std::span<const LocalValueId>();
    };
    constexpr std::size_t kAhead = 16;
    const std::size_t n = s.values.size();
    for (std::size_t i = 0; i < n; ++i) {
      if (i + kAhead < n) {
        for (LocalValueId local : locals_of(i + kAhead)) prefetch(&values[local]);
      }
      if (i + kAhead / 2 < n) {
        for (LocalValueId local : locals_of(i + kAhead / 2)) {
          prefetch(values[local].key.node_identity());
        }
        on_ahead(operands_of(i + kAhead / 2));
      }
      const LocalValueId v = s.values[i];
      const auto& producer = values[v].producer;
      if (!producer) {
        on_input(values[v].key, ids[v]);
        continue;
      }
      const LocalOperationId op = producer->first;
      on_operation(WalkStep<Op>{g, g.operations()[op], operands_of(i), op, ids[v], v});
    }
    std::vector<std::uint32_t> output_ids;
    output_ids.reserve(s.outputs.size());
    for (LocalValueId v : s.outputs) output_ids.push_back(ids[v]);
    return output_ids;
  }

  const ResolvedView<Op>& view_;
  /// Per graph of the view: the walk id of each local value, kUnset until reached; sized on first
  /// use, so graphs the walk never enters cost nothing.
  std::vector<std::vector<std::uint32_t>> ids_;
  OpenTable<KeyEntry, KeyTraits> by_key_;
  bool multi_graph_;
  bool keyed_inputs_ = false;  // by_key_ holds leading inputs (run_depth_first)
  std::uint32_t next_id_ = 0;
  std::vector<Frame> stack_;
  std::vector<std::uint32_t> operands_;
};

}  // namespace detail

}  // namespace computegraph
