#pragma once
// replay: the one walk that re-records a closed graph's operations somewhere else.
//
// Every interpretation of a graph that handles it operation by operation (building a derived
// body, re-tracing a rule's graph into the graph being transformed, running a gradient program
// eagerly, tracing a region into the trace that encloses it) is this walk with another recorder:
//
//   // record(op, role, operands) -> the operation's results, as the recorder's values
//   std::vector<V> outs = computegraph::replay(graph, args, record);
//
// V is whatever the recorder's values are (a local id of a builder, a traced tensor, a value and
// a flag saying whether it is active). `record` is called once per operation, in the graph's
// topological order, with the values of its operands, and returns exactly one value per output.
//
// The graph can be any of the three forms an op sequence takes: a Graph (closed: every operand is
// local; an External operand is a GraphError), a MaterializedGraph, or a CompiledProgram (its
// instructions over slots). Partial replays (replay_into with a predicate) record only some
// operations into a value table the caller seeds and reads afterwards: the primal or the linear
// half of a JVP, for example. Cost: O(values + operand references) besides the recorder's.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "computegraph/compiled_program.hpp"
#include "computegraph/error.hpp"
#include "computegraph/graph.hpp"
#include "computegraph/materialized_graph.hpp"

namespace computegraph {

namespace replay_detail {

/// What replay reads of one operation, whatever the graph's form.
template <class Op>
struct Node {
  const Op& operation;
  const OperationRole& role;
  std::span<const std::uint32_t> operands;
  std::uint32_t first_output;
  std::uint32_t output_count;
};

// The three forms, each as (value count, input ids, output ids, for_each_node).
template <class Op>
std::size_t value_count(const Graph<Op>& g) { return g.values().size(); }
template <class Op>
std::size_t value_count(const MaterializedGraph<Op>& g) { return g.values().size(); }
template <class Op>
std::size_t value_count(const CompiledProgram<Op>& p) { return p.slot_count(); }

template <class Op>
const std::vector<std::uint32_t>& input_ids(const Graph<Op>& g) { return g.inputs(); }
template <class Op>
const std::vector<std::uint32_t>& input_ids(const MaterializedGraph<Op>& g) { return g.inputs(); }
template <class Op>
const std::vector<std::uint32_t>& input_ids(const CompiledProgram<Op>& p) { return p.input_slots(); }

template <class Op>
const std::vector<std::uint32_t>& output_ids(const Graph<Op>& g) { return g.outputs(); }
template <class Op>
const std::vector<std::uint32_t>& output_ids(const MaterializedGraph<Op>& g) { return g.outputs(); }
template <class Op>
const std::vector<std::uint32_t>& output_ids(const CompiledProgram<Op>& p) { return p.output_slots(); }

template <class Op, class F>
void for_each_node(const Graph<Op>& g, F&& f) {
  const auto& ops = g.operations();
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const auto operands = g.local_operands(static_cast<LocalOperationId>(i));
    for (const auto v : operands) {
      if (v == Graph<Op>::kExternalOperand) {
        throw GraphError("replay: operation " + std::to_string(i) + " (" + ops[i].operation.name() +
                         ") reads a value of another graph; replay takes closed graphs");
      }
    }
    const auto& node = ops[i];
    f(i, Node<Op>{node.operation, node.role, operands, node.outputs.empty() ? 0u : node.outputs[0],
                  static_cast<std::uint32_t>(node.outputs.size())});
  }
}
template <class Op, class F>
void for_each_node(const MaterializedGraph<Op>& g, F&& f) {
  const auto& ops = g.operations();
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const auto& node = ops[i];
    f(i, Node<Op>{node.operation, node.role, node.inputs, node.first_output, node.output_count});
  }
}
template <class Op, class F>
void for_each_node(const CompiledProgram<Op>& p, F&& f) {
  const auto& ins = p.instructions();
  for (std::size_t i = 0; i < ins.size(); ++i) {
    f(i, Node<Op>{ins[i].operation, ins[i].role, p.operands(i), ins[i].first_output, ins[i].output_count});
  }
}

struct KeepAll {
  template <class N>
  bool operator()(std::size_t, const N&) const { return true; }
};

}  // namespace replay_detail

/// Records the operations of `graph` for which keep(index, node) holds (node has .operation,
/// .role, .operands, .first_output, .output_count), in order, into `values` (one entry per value
/// id of the graph): each operation's operands are read from `values`, and its results, from
/// record(operation, role, operand values), are stored there. The caller seeds the entries of the
/// inputs (and of any other value it provides) beforehand. An operand without a value is a
/// GraphError naming the operation: the predicate skipped an operation whose result a kept one
/// reads.
template <class G, class V, class Record, class Keep = replay_detail::KeepAll>
void replay_into(const G& graph, std::vector<std::optional<V>>& values, Record&& record, Keep&& keep = {}) {
  if (values.size() != replay_detail::value_count(graph)) {
    throw BindingError("replay: a table of " + std::to_string(values.size()) + " values for a graph of " +
                       std::to_string(replay_detail::value_count(graph)));
  }
  std::vector<V> operands;
  replay_detail::for_each_node(graph, [&](std::size_t index, const auto& node) {
    if (!keep(index, node)) return;
    operands.clear();
    for (const auto v : node.operands) {
      if (!values[v]) {
        throw GraphError("replay: operation " + std::to_string(index) + " (" + node.operation.name() +
                         ") reads value " + std::to_string(v) + ", which has no value (its producer was not replayed)");
      }
      operands.push_back(*values[v]);
    }
    std::vector<V> results = record(node.operation, node.role, std::span<const V>(operands));
    if (results.size() != node.output_count) {
      throw GraphError("replay: recording operation " + std::to_string(index) + " (" + node.operation.name() +
                       ") gave " + std::to_string(results.size()) + " results for its " +
                       std::to_string(node.output_count) + " outputs");
    }
    for (std::uint32_t k = 0; k < node.output_count; ++k) values[node.first_output + k] = std::move(results[k]);
  });
}

/// The values of every id of `graph` after replaying all of it on `args` (one per input).
template <class G, class V, class Record>
std::vector<std::optional<V>> replay_values(const G& graph, std::span<const V> args, Record&& record) {
  const auto& inputs = replay_detail::input_ids(graph);
  if (args.size() != inputs.size()) {
    throw BindingError("replay: " + std::to_string(args.size()) + " arguments for a graph of " +
                       std::to_string(inputs.size()) + " inputs");
  }
  std::vector<std::optional<V>> values(replay_detail::value_count(graph));
  for (std::size_t i = 0; i < inputs.size(); ++i) values[inputs[i]] = args[i];
  replay_into(graph, values, std::forward<Record>(record));
  return values;
}

/// The graph's outputs, replayed on `args` (one per input) into the recorder.
template <class G, class V, class Record>
std::vector<V> replay(const G& graph, std::span<const V> args, Record&& record) {
  const auto values = replay_values(graph, args, std::forward<Record>(record));
  std::vector<V> outs;
  for (const auto o : replay_detail::output_ids(graph)) outs.push_back(*values[o]);
  return outs;
}

}  // namespace computegraph
