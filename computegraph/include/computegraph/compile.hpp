#pragma once
// compile: MaterializedGraph -> CompiledProgram (docs/design.md, "The pipeline").
//
// Slot assignment is SSA: materialized value i lives in slot i and is written once. compile also
// computes, for every instruction, which operands are read there for the last time and which slots
// can be released after it, so an executor can free buffers early. Program outputs are never released.
// Cost: O(values + operand references).
#include <algorithm>
#include <cstdint>
#include <vector>

#include "computegraph/compiled_program.hpp"
#include "computegraph/dump.hpp"
#include "computegraph/materialized_graph.hpp"

namespace computegraph {

template <GraphOperation Op>
class Compiler {
 public:
  // Two passes over the operations, so that each operand is read once and each instruction is
  // written once:
  //   1. backward: operand slots and last-use marks. Walking the operands in reverse, the first
  //      time a slot is met is its last read in program order, including within one instruction.
  //      They are collected in reverse and the pools flipped at the end;
  //   2. forward: instructions with their operand ranges and release lists (last-use operands in
  //      operand order, then outputs nothing reads).
  static CompiledProgram<Op> run(const MaterializedGraph<Op>& graph) {
    CompiledProgram<Op> program;
    const auto& values = graph.values();
    const auto& ops = graph.operations();
    program.slot_count_ = values.size();

    constexpr std::uint8_t kPinned = 1;  // a program output: never released
    constexpr std::uint8_t kRead = 2;    // read by some instruction
    std::vector<std::uint8_t> flags(values.size(), 0);
    for (auto v : graph.outputs()) flags[v] |= kPinned;

    auto& slots = program.operand_slots_;
    auto& last_use = program.last_use_;
    slots.reserve(2 * ops.size());  // a guess (most operations are unary or binary); may grow
    last_use.reserve(2 * ops.size());
    for (std::size_t i = ops.size(); i-- > 0;) {
      const auto& inputs = ops[i].inputs;
      for (std::size_t k = inputs.size(); k-- > 0;) {
        const auto v = inputs[k];
        slots.push_back(v);
        last_use.push_back(flags[v] == 0 ? 1 : 0);  // neither pinned nor read later
        flags[v] |= kRead;
      }
    }
    std::reverse(slots.begin(), slots.end());
    std::reverse(last_use.begin(), last_use.end());

    program.instructions_.reserve(ops.size());
    program.release_slots_.reserve(values.size());
    std::uint32_t operand_begin = 0;
    for (const auto& op : ops) {
      typename CompiledProgram<Op>::Instruction ins{op.operation, op.role};
      ins.operand_begin = operand_begin;
      ins.operand_count = static_cast<std::uint32_t>(op.inputs.size());
      ins.first_output = op.first_output;
      ins.output_count = op.output_count;
      ins.release_begin = static_cast<std::uint32_t>(program.release_slots_.size());
      for (std::uint32_t k = operand_begin; k < operand_begin + ins.operand_count; ++k) {
        if (last_use[k]) program.release_slots_.push_back(slots[k]);
      }
      for (std::uint32_t v = ins.first_output; v < ins.first_output + ins.output_count; ++v) {
        if (flags[v] == 0) program.release_slots_.push_back(v);
      }
      ins.release_count =
          static_cast<std::uint32_t>(program.release_slots_.size()) - ins.release_begin;
      operand_begin += ins.operand_count;
      program.instructions_.push_back(std::move(ins));
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
