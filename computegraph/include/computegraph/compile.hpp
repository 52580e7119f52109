#pragma once
// compile: MaterializedGraph -> CompiledProgram (spec §VII).
//
// Slot assignment is SSA: materialized value i lives in slot i and is written once. compile also
// computes, for every instruction, which operands are read there for the last time and which slots
// can be released after it, so an executor can free buffers early. Program outputs are never released.
// Cost: O(values + operand references).
#include <cstdint>
#include <vector>

#include "computegraph/compiled_program.hpp"
#include "computegraph/dump.hpp"
#include "computegraph/materialized_graph.hpp"

namespace computegraph {

template <GraphOperation Op>
class Compiler {
 public:
  // Three passes, so that each operation's operand list (a separate allocation, scattered in
  // memory on large graphs) is read exactly once:
  //   1. forward: instructions with their operand ranges (prefix sums of operand counts);
  //   2. backward: operand slots and last-use marks. Walking the operands in reverse, the first
  //      time a slot is met is its last read in program order, including within one instruction;
  //   3. forward: release lists (last-use operands in operand order, then outputs nothing reads).
  static CompiledProgram<Op> run(const MaterializedGraph<Op>& graph) {
    CompiledProgram<Op> program;
    const auto& values = graph.values();
    const auto& ops = graph.operations();
    program.slot_count_ = values.size();

    constexpr std::uint8_t kPinned = 1;  // a program output: never released
    constexpr std::uint8_t kRead = 2;    // read by some instruction
    std::vector<std::uint8_t> flags(values.size(), 0);
    for (auto v : graph.outputs()) flags[v] |= kPinned;

    program.instructions_.reserve(ops.size());
    std::uint32_t operand_total = 0;
    for (const auto& op : ops) {
      typename CompiledProgram<Op>::Instruction ins{op.operation, op.role};
      ins.operand_begin = operand_total;
      ins.operand_count = static_cast<std::uint32_t>(op.inputs.size());
      ins.first_output = op.first_output;
      ins.output_count = op.output_count;
      operand_total += ins.operand_count;
      program.instructions_.push_back(std::move(ins));
    }

    program.operand_slots_.resize(operand_total);
    program.last_use_.resize(operand_total);
    for (std::size_t i = ops.size(); i-- > 0;) {
      const auto& inputs = ops[i].inputs;
      const std::uint32_t begin = program.instructions_[i].operand_begin;
      for (std::size_t k = inputs.size(); k-- > 0;) {
        const auto v = inputs[k];
        program.operand_slots_[begin + k] = v;
        program.last_use_[begin + k] = flags[v] == 0 ? 1 : 0;  // neither pinned nor read later
        flags[v] |= kRead;
      }
    }

    program.release_slots_.reserve(values.size());
    for (auto& ins : program.instructions_) {
      ins.release_begin = static_cast<std::uint32_t>(program.release_slots_.size());
      for (std::uint32_t k = ins.operand_begin; k < ins.operand_begin + ins.operand_count; ++k) {
        if (program.last_use_[k]) program.release_slots_.push_back(program.operand_slots_[k]);
      }
      for (std::uint32_t v = ins.first_output; v < ins.first_output + ins.output_count; ++v) {
        if (flags[v] == 0) program.release_slots_.push_back(v);
      }
      ins.release_count =
          static_cast<std::uint32_t>(program.release_slots_.size()) - ins.release_begin;
    }

    for (std::size_t p = 0; p < graph.inputs().size(); ++p) {
      auto v = graph.inputs()[p];
      program.input_slots_.push_back(v);
      program.input_keys_.push_back(values[v].key.input_key());
      program.input_index_.emplace(values[v].key.input_key(), p);
    }
    const auto& outs = graph.outputs();
    constexpr std::uint8_t kSeenLater = 4;  // the slot occurs later in the output list
    program.output_moves_.assign(outs.size(), 0);
    for (std::size_t i = outs.size(); i-- > 0;) {
      program.output_moves_[i] = (flags[outs[i]] & kSeenLater) ? 0 : 1;
      flags[outs[i]] |= kSeenLater;
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
