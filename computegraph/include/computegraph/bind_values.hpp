#pragma once
// bind_values: partial evaluation of a materialized graph by values that the caller already holds.
//
// A caller that has computed some values of a graph by other means need not compute them again.
// The typical one is a tape: eager execution runs every primal operation as it is recorded, and
// its backward pass asks for the vjp program of the recorded graph, whose primal part would
// otherwise recompute everything that the tape already holds. bind_values rewrites the graph:
//
//   inputs      the graph's inputs, in their order, then one new input per entry of `known`, in
//               that order, keyed ValueKey::input(input_key(known[i], i));
//   operations  the graph's operations, in their order, except those whose outputs are all known
//               or that only feed known values (nothing reads them any more);
//   outputs     the graph's outputs, aligned with them (a known output is returned as the input
//               that holds it).
//
// An entry of `known` that is not a computed value of the graph (an input's key, or a key the
// graph does not have) still gets its input, unread, so that the positions of the new inputs do
// not depend on which values a particular graph happens to contain. Values keep their keys,
// operations their roles. `input_key` must give keys distinct from every input of the graph and
// from each other (the op set's residual keys, say), carrying the value's type where the op set's
// keys hold one. Cost: O(values + operand references + known), one hash look-up per value.
#include <cstdint>
#include <limits>
#include <span>
#include <unordered_map>
#include <vector>

#include "computegraph/dump.hpp"
#include "computegraph/materialized_graph.hpp"

namespace computegraph {

template <GraphOperation Op>
class ValueBinder {
 public:
  template <class InputKeyFn>
  static MaterializedGraph<Op> run(const MaterializedGraph<Op>& graph, std::span<const ValueKey<Op>> known,
                                   InputKeyFn&& input_key) {
    const auto& values = graph.values();
    const auto& ops = graph.operations();
    std::unordered_map<ValueKey<Op>, std::size_t> known_index;
    known_index.reserve(known.size());
    for (std::size_t i = 0; i < known.size(); ++i) known_index.emplace(known[i], i);

    // 1. Which computed values are known, and by which entry.
    constexpr std::size_t kUnknown = std::numeric_limits<std::size_t>::max();
    std::vector<std::size_t> bound(values.size(), kUnknown);
    for (std::size_t v = 0; v < values.size(); ++v) {
      if (!values[v].producer) continue;
      if (auto it = known_index.find(values[v].key); it != known_index.end()) bound[v] = it->second;
    }

    // 2. Which operations are still needed: walking back from the outputs, a known value stops
    //    the walk (it is read from its input), any other value needs its producer.
    std::vector<std::uint8_t> needed_value(values.size(), 0), needed_op(ops.size(), 0);
    for (auto v : graph.outputs()) needed_value[v] = 1;
    for (std::size_t i = ops.size(); i-- > 0;) {
      const auto& op = ops[i];
      for (std::uint32_t k = 0; k < op.output_count && !needed_op[i]; ++k) {
        const auto v = op.first_output + k;
        needed_op[i] = needed_value[v] && bound[v] == kUnknown;
      }
      if (!needed_op[i]) continue;
      for (auto v : op.inputs) needed_value[v] = 1;
    }

    // 3. The bound graph.
    MaterializedGraph<Op> out;
    constexpr MaterializedValueId kNone = std::numeric_limits<MaterializedValueId>::max();
    std::vector<MaterializedValueId> id(values.size(), kNone);
    for (auto v : graph.inputs()) out.inputs_.push_back(id[v] = add_value(out, values[v].key, std::nullopt, 0));
    std::vector<MaterializedValueId> known_id(known.size());
    for (std::size_t i = 0; i < known.size(); ++i) {
      known_id[i] = add_value(out, ValueKey<Op>::input(input_key(known[i], i)), std::nullopt, 0);
      out.inputs_.push_back(known_id[i]);
    }
    for (std::size_t v = 0; v < values.size(); ++v) {
      if (bound[v] != kUnknown) id[v] = known_id[bound[v]];
    }
    std::size_t operand_count = 0;
    for (std::size_t i = 0; i < ops.size(); ++i) operand_count += needed_op[i] ? ops[i].inputs.size() : 0;
    // The operations' input spans point into out.operands_: reserve it once, never reallocate.
    out.operands_.reserve(operand_count);
    for (std::size_t i = 0; i < ops.size(); ++i) {
      if (!needed_op[i]) continue;
      const auto& op = ops[i];
      const auto begin = out.operands_.size();
      for (auto v : op.inputs) out.operands_.push_back(id[v]);
      const auto producer = static_cast<std::uint32_t>(out.operations_.size());
      const auto first = static_cast<MaterializedValueId>(out.values_.size());
      for (std::uint32_t k = 0; k < op.output_count; ++k) {
        const auto v = op.first_output + k;
        // A known output of a needed operation (a multi-output op with another output needed)
        // keeps reading its input; the operation's own copy is a value nothing reads.
        const auto mine = add_value(out, values[v].key, producer, k);
        if (bound[v] == kUnknown) id[v] = mine;
      }
      out.operations_.push_back({op.operation, {out.operands_.data() + begin, op.inputs.size()}, first,
                                 op.output_count, op.role});
    }
    for (auto v : graph.outputs()) out.outputs_.push_back(id[v]);
    return out;
  }

 private:
  static MaterializedValueId add_value(MaterializedGraph<Op>& g, const ValueKey<Op>& key,
                                       std::optional<std::uint32_t> producer, std::uint32_t slot) {
    g.values_.push_back({key, producer, slot});
    return static_cast<MaterializedValueId>(g.values_.size() - 1);
  }
};

/// `graph` with the values of `known` taken as inputs (see the file comment).
template <GraphOperation Op, class InputKeyFn>
MaterializedGraph<Op> bind_values(const MaterializedGraph<Op>& graph, std::span<const ValueKey<Op>> known,
                                  InputKeyFn&& input_key) {
  auto result = ValueBinder<Op>::run(graph, known, input_key);
  detail::after_stage("bind_values", result);
  return result;
}

}  // namespace computegraph
