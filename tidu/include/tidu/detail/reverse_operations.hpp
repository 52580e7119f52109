#pragma once
// ReverseOperations: the order in which linear_transpose visits a linear graph, with cache hints.
#include <cstddef>
#include <vector>

#include "computegraph/detail/prefetch.hpp"
#include "computegraph/graph.hpp"

namespace tidu::detail {

/// The Linearized operations of a graph that have outputs, last first, each with the local id of
/// its output 0 (an operation's outputs are consecutive local ids added with it, so the value
/// array read backwards gives them without reading each operation's output list).
///
/// On graphs much larger than the cache the transpose would wait for memory at every operation:
/// the operand values and key nodes of a DAG lie anywhere. But the order is known in advance, so
/// prefetch(i) fetches, in stages, what visiting the operations ahead of position i reads: their
/// nodes, operand lists and value entries, the cotangent slots of local operands, and last the
/// operands' key nodes (the rules copy and hash operand keys). Hints never change results.
template <class Op>
class ReverseOperations {
 public:
  struct Entry {
    computegraph::LocalOperationId op;
    computegraph::LocalValueId first_output;
  };

  explicit ReverseOperations(const computegraph::Graph<Op>& g) : graph_(g) {
    const auto& values = g.values();
    for (std::size_t v = values.size(); v-- > 0;) {
      const auto& producer = values[v].producer;
      if (!producer || producer->second != 0) continue;
      if (!g.operations()[producer->first].role.is_linearized()) continue;
      order_.push_back({producer->first, static_cast<computegraph::LocalValueId>(v)});
    }
  }

  std::size_t size() const { return order_.size(); }
  const Entry& operator[](std::size_t i) const { return order_[i]; }

  /// Hints for the operations after position i; `slots` is the per-local-value cotangent array.
  /// `prefetch_cotangent(ct)` is called with the cotangents already accumulated for the operands
  /// of the operation kDistance ahead (slots not yet set are skipped), so that the caller can
  /// fetch what adding to them reads.
  template <class PrefetchCotangent>
  void prefetch(std::size_t i, const computegraph::LocalValueId* slots,
                PrefetchCotangent&& prefetch_cotangent) const {
    using computegraph::detail::prefetch;
    constexpr computegraph::LocalValueId kExternal = computegraph::Graph<Op>::kExternalOperand;
    const auto& ops = graph_.operations();
    const auto& values = graph_.values();
    if (i + 3 * kDistance < order_.size()) {
      computegraph::detail::prefetch_object(&ops[order_[i + 3 * kDistance].op]);
    }
    if (i + 2 * kDistance < order_.size()) {
      const computegraph::LocalOperationId op = order_[i + 2 * kDistance].op;
      prefetch(ops[op].inputs.data());
      for (computegraph::LocalValueId local : graph_.local_operands(op)) {
        if (local == kExternal) continue;
        prefetch(&values[local]);
        prefetch(&slots[local]);
      }
    }
    if (i + kDistance < order_.size()) {
      const computegraph::LocalOperationId op = order_[i + kDistance].op;
      const auto locals = graph_.local_operands(op);
      for (std::size_t k = 0; k < locals.size(); ++k) {
        prefetch(locals[k] != kExternal ? values[locals[k]].key.node_identity()
                                        : ops[op].inputs[k].external_key().node_identity());
        if (locals[k] != kExternal && slots[locals[k]] != kExternal) {
          prefetch_cotangent(slots[locals[k]]);
        }
      }
    }
  }

 private:
  static constexpr std::size_t kDistance = 4;
  const computegraph::Graph<Op>& graph_;
  std::vector<Entry> order_;
};

}  // namespace tidu::detail
