#pragma once
// compile: MaterializedGraph -> CompiledProgram (spec §VII).
//
// Slot assignment is SSA: materialized value i lives in slot i and is written once. compile also
// computes, for every instruction, which operands are read there for the last time and which slots
// can be released after it, so an executor can free buffers early. Program outputs are never released.
// Cost: O(values + operand references).
#include <limits>

#include "computegraph/compiled_program.hpp"
#include "computegraph/dump.hpp"
#include "computegraph/materialized_graph.hpp"

namespace computegraph {

template <GraphOperation Op>
class Compiler {
 public:
  static CompiledProgram<Op> run(const MaterializedGraph<Op>& graph) {
    constexpr std::uint32_t kNever = std::numeric_limits<std::uint32_t>::max();
    CompiledProgram<Op> program;
    const auto& values = graph.values();
    const auto& ops = graph.operations();
    program.slot_count_ = values.size();

    // Last instruction reading each slot; outputs are pinned.
    std::vector<std::uint32_t> last_reader(values.size(), kNever);
    std::vector<std::uint8_t> pinned(values.size(), 0);
    for (auto v : graph.outputs()) pinned[v] = 1;
    std::size_t operand_total = 0;
    for (std::uint32_t i = 0; i < ops.size(); ++i) {
      operand_total += ops[i].inputs.size();
      for (auto v : ops[i].inputs) last_reader[v] = i;
    }

    program.instructions_.reserve(ops.size());
    program.operand_slots_.reserve(operand_total);
    program.last_use_.reserve(operand_total);
    program.release_slots_.reserve(values.size());
    for (std::uint32_t i = 0; i < ops.size(); ++i) {
      const auto& op = ops[i];
      typename CompiledProgram<Op>::Instruction ins{op.operation, op.role};
      ins.operand_begin = static_cast<std::uint32_t>(program.operand_slots_.size());
      ins.operand_count = static_cast<std::uint32_t>(op.inputs.size());
      ins.first_output = op.first_output;
      ins.output_count = op.output_count;
      ins.release_begin = static_cast<std::uint32_t>(program.release_slots_.size());
      for (std::size_t k = 0; k < op.inputs.size(); ++k) {
        auto v = op.inputs[k];
        bool later_in_same = false;
        for (std::size_t j = k + 1; j < op.inputs.size(); ++j) later_in_same |= op.inputs[j] == v;
        bool last = !pinned[v] && last_reader[v] == i && !later_in_same;
        program.operand_slots_.push_back(v);
        program.last_use_.push_back(last ? 1 : 0);
        if (last) program.release_slots_.push_back(v);
      }
      for (std::uint32_t k = 0; k < op.output_count; ++k) {
        auto v = op.first_output + k;
        if (!pinned[v] && last_reader[v] == kNever) program.release_slots_.push_back(v);
      }
      ins.release_count = static_cast<std::uint32_t>(program.release_slots_.size()) - ins.release_begin;
      program.instructions_.push_back(std::move(ins));
    }

    for (std::size_t p = 0; p < graph.inputs().size(); ++p) {
      auto v = graph.inputs()[p];
      program.input_slots_.push_back(v);
      program.input_keys_.push_back(values[v].key.input_key());
      program.input_index_.emplace(values[v].key.input_key(), p);
    }
    const auto& outs = graph.outputs();
    std::vector<std::uint8_t> seen_later(values.size(), 0);
    program.output_moves_.assign(outs.size(), 0);
    for (std::size_t i = outs.size(); i-- > 0;) {
      program.output_moves_[i] = seen_later[outs[i]] ? 0 : 1;
      seen_later[outs[i]] = 1;
    }
    program.output_slots_.assign(outs.begin(), outs.end());
    program.output_keys_ = graph.output_keys();
    return program;
  }
};

template <GraphOperation Op>
CompiledProgram<Op> compile(const MaterializedGraph<Op>& graph) {
  auto program = Compiler<Op>::run(graph);
  detail::after_stage("compile", program);
  return program;
}

}  // namespace computegraph
