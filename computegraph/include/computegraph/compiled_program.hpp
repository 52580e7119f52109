#pragma once
// CompiledProgram: SSA instructions over slots (docs/design.md, "The pipeline"). Each slot is
// written exactly once.
// Built by `compile`; run many times, concurrently from several threads (run is const and keeps
// all per-run state on its own stack and heap).
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <typeindex>
#include <span>
#include <sstream>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "computegraph/error.hpp"
#include "computegraph/value_key.hpp"

namespace computegraph {

namespace detail {
/// Lowered forms kept with a compiled program (see CompiledProgram::attachment).
struct Attachments {
  struct Entry {
    std::type_index type;
    std::uint64_t tag;
    std::shared_ptr<const void> value;
  };
  std::mutex mutex;
  std::vector<Entry> entries;
};
}  // namespace detail

// Unconstrained so that an op set can name CompiledProgram<Op> inside its own definition; the
// members that need the concepts require them.
template <class Op>
class CompiledProgram {
 public:
  using Operand = typename Op::Operand;
  using Context = typename Op::Context;
  using InputKey = typename Op::InputKey;

  struct Instruction {
    Op operation;
    OperationRole role;
    std::uint32_t operand_begin = 0;  // into the operand pool
    std::uint32_t operand_count = 0;
    std::uint32_t first_output = 0;  // outputs are slots first_output .. + output_count - 1
    std::uint32_t output_count = 0;
    std::uint32_t release_begin = 0;  // into the release pool
    std::uint32_t release_count = 0;
  };

  const std::vector<Instruction>& instructions() const { return instructions_; }
  /// Operand slots of instruction i.
  std::span<const std::uint32_t> operands(std::size_t i) const {
    const auto& ins = instructions_[i];
    return {operand_slots_.data() + ins.operand_begin, ins.operand_count};
  }
  /// last_use(i)[k] != 0: operand k of instruction i is read for the last time there (marked on the
  /// last occurrence only when an instruction reads a slot twice). Output slots are never marked.
  std::span<const std::uint8_t> last_use(std::size_t i) const {
    const auto& ins = instructions_[i];
    return {last_use_.data() + ins.operand_begin, ins.operand_count};
  }
  /// Slots that can be freed once instruction i has run: operands at their last use, and outputs
  /// of i that nothing reads.
  std::span<const std::uint32_t> releases(std::size_t i) const {
    const auto& ins = instructions_[i];
    return {release_slots_.data() + ins.release_begin, ins.release_count};
  }
  const std::vector<std::uint32_t>& input_slots() const { return input_slots_; }
  const std::vector<std::uint32_t>& output_slots() const { return output_slots_; }
  std::size_t slot_count() const { return slot_count_; }
  const std::vector<InputKey>& input_keys() const { return input_keys_; }
  const std::vector<ValueKey<Op>>& output_keys() const { return output_keys_; }
  /// Position of an input in the positional interface of run(), or nullopt.
  std::optional<std::size_t> input_position(const InputKey& key) const {
    auto it = input_index_.find(key);
    if (it == input_index_.end()) return std::nullopt;
    return it->second;
  }

  /// A lowered form of this program kept with it (an op set's own executor plan, say): built by
  /// `make()` (returning std::shared_ptr<const T>) on the first request for (T, tag) and shared by
  /// every later request, so it lives as long as the program, in a CompileCache too. Thread-safe;
  /// concurrent first requests may both build, one result is kept.
  template <class T, class Make>
  std::shared_ptr<const T> attachment(std::uint64_t tag, Make&& make) const {
    const std::type_index type(typeid(T));
    {
      std::lock_guard lock(attachments_->mutex);
      for (const auto& e : attachments_->entries) {
        if (e.type == type && e.tag == tag) return std::static_pointer_cast<const T>(e.value);
      }
    }
    std::shared_ptr<const T> built = make();
    std::lock_guard lock(attachments_->mutex);
    for (const auto& e : attachments_->entries) {
      if (e.type == type && e.tag == tag) return std::static_pointer_cast<const T>(e.value);
    }
    attachments_->entries.push_back({type, tag, built});
    return built;
  }

  /// Runs with inputs by position (the order of input_keys()). Throws BindingError on a count
  /// mismatch; operand errors come from Op::eval.
  std::vector<Operand> run(std::span<const Operand> inputs, Context& ctx) const
    requires EvaluableGraphOperation<Op>
  {
    if (inputs.size() != input_slots_.size()) {
      throw BindingError("CompiledProgram::run: expected " + std::to_string(input_slots_.size()) +
                         " inputs (" + describe_inputs() + "), got " +
                         std::to_string(inputs.size()));
    }
    std::vector<Operand> slots(slot_count_);
    for (std::size_t i = 0; i < inputs.size(); ++i) slots[input_slots_[i]] = inputs[i];
    execute(slots, ctx);
    return collect_outputs(slots);
  }
  std::vector<Operand> run(std::span<const Operand> inputs) const
    requires EvaluableGraphOperation<Op> && std::default_initializable<Context>
  {
    Context ctx{};
    return run(inputs, ctx);
  }
  std::vector<Operand> run(std::initializer_list<Operand> inputs) const
    requires EvaluableGraphOperation<Op> && std::default_initializable<Context>
  {
    return run(std::span<const Operand>(inputs.begin(), inputs.size()));
  }

  /// Runs with inputs bound by key. Every input must be bound exactly once; unknown keys are
  /// rejected. Throws BindingError naming the offending key.
  std::vector<Operand> run_by_key(std::span<const std::pair<InputKey, Operand>> bindings,
                                  Context& ctx) const
    requires EvaluableGraphOperation<Op>
  {
    std::vector<const Operand*> ordered(input_slots_.size(), nullptr);
    for (const auto& [key, value] : bindings) {
      auto pos = input_position(key);
      if (!pos) {
        std::ostringstream msg;
        msg << "CompiledProgram::run_by_key: unknown input " << key << " (program inputs: "
            << describe_inputs() << ")";
        throw BindingError(msg.str());
      }
      if (ordered[*pos]) {
        std::ostringstream msg;
        msg << "CompiledProgram::run_by_key: input " << key << " is bound twice";
        throw BindingError(msg.str());
      }
      ordered[*pos] = &value;
    }
    std::vector<Operand> slots(slot_count_);
    for (std::size_t i = 0; i < ordered.size(); ++i) {
      if (!ordered[i]) {
        std::ostringstream msg;
        msg << "CompiledProgram::run_by_key: missing input " << input_keys_[i]
            << " (program inputs: " << describe_inputs() << ")";
        throw BindingError(msg.str());
      }
      slots[input_slots_[i]] = *ordered[i];
    }
    execute(slots, ctx);
    return collect_outputs(slots);
  }
  std::vector<Operand> run_by_key(std::span<const std::pair<InputKey, Operand>> bindings) const
    requires EvaluableGraphOperation<Op> && std::default_initializable<Context>
  {
    Context ctx{};
    return run_by_key(bindings, ctx);
  }

 private:
  template <GraphOperation O>
  friend class Compiler;

  /// The interpreter loop. Unary and binary instructions (nearly all of them) pass their operand
  /// pointers in a fixed-size local array: once eval is inlined, the compiler keeps the pointers
  /// in registers instead of storing and reloading them through memory for every instruction,
  /// which on a chain of scalar operations roughly triples the speed.
  void execute(std::vector<Operand>& slots, Context& ctx) const {
    constexpr std::size_t kInline = 8;
    std::vector<const Operand*> heap_args;
    Operand* base = slots.data();
    for (const Instruction& ins : instructions_) {
      const std::uint32_t* operand = operand_slots_.data() + ins.operand_begin;
      const std::span<Operand> out(base + ins.first_output, ins.output_count);
      using Args = std::span<const Operand* const>;
      switch (ins.operand_count) {
        case 1: {
          // Two entries, so that inlined code for binary kinds is visibly in bounds.
          const Operand* args[2] = {base + operand[0], nullptr};
          ins.operation.eval(ctx, Args(args, 1), out);
          break;
        }
        case 2: {
          const Operand* args[2] = {base + operand[0], base + operand[1]};
          ins.operation.eval(ctx, Args(args, 2), out);
          break;
        }
        default: {
          const Operand* inline_args[kInline];
          const Operand** args = inline_args;
          if (ins.operand_count > kInline) {
            heap_args.resize(ins.operand_count);
            args = heap_args.data();
          }
          for (std::uint32_t k = 0; k < ins.operand_count; ++k) args[k] = base + operand[k];
          ins.operation.eval(ctx, Args(args, ins.operand_count), out);
        }
      }
      if constexpr (!std::is_trivially_destructible_v<Operand>) {
        const std::uint32_t* release = release_slots_.data() + ins.release_begin;
        for (std::uint32_t k = 0; k < ins.release_count; ++k) base[release[k]] = Operand{};
      }
    }
  }

  std::vector<Operand> collect_outputs(std::vector<Operand>& slots) const {
    std::vector<Operand> out;
    out.reserve(output_slots_.size());
    for (std::size_t i = 0; i < output_slots_.size(); ++i) {
      // Move the last occurrence of each slot, copy earlier ones.
      std::uint32_t s = output_slots_[i];
      out.push_back(output_moves_[i] ? std::move(slots[s]) : slots[s]);
    }
    return out;
  }

  std::string describe_inputs() const {
    std::ostringstream os;
    for (std::size_t i = 0; i < input_keys_.size(); ++i) os << (i ? ", " : "") << input_keys_[i];
    return os.str();
  }

  std::vector<Instruction> instructions_;
  std::vector<std::uint32_t> operand_slots_;
  std::vector<std::uint8_t> last_use_;
  std::vector<std::uint32_t> release_slots_;
  std::vector<std::uint32_t> input_slots_;
  std::vector<std::uint32_t> output_slots_;
  std::vector<std::uint8_t> output_moves_;  // 1 on the last occurrence of each output slot
  std::size_t slot_count_ = 0;
  std::vector<InputKey> input_keys_;
  std::vector<ValueKey<Op>> output_keys_;
  std::unordered_map<InputKey, std::size_t> input_index_;
  std::shared_ptr<detail::Attachments> attachments_ = std::make_shared<detail::Attachments>();
};

/// Runs `program` on inputs by position through the op set's own executor when it has one (a
/// static `Op::run_compiled(program, inputs)`), else through CompiledProgram::run. Generic
/// transforms call this, so an op set can bring a faster executor without changing them.
template <GraphOperation Op>
std::vector<typename Op::Operand> run_compiled(const CompiledProgram<Op>& program,
                                               std::span<const typename Op::Operand> inputs)
  requires EvaluableGraphOperation<Op>
{
  if constexpr (requires { { Op::run_compiled(program, inputs) } -> std::same_as<std::vector<typename Op::Operand>>; }) {
    return Op::run_compiled(program, inputs);
  } else {
    typename Op::Context ctx{};
    return program.run(inputs, ctx);
  }
}

}  // namespace computegraph
