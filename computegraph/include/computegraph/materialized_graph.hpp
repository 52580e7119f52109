#pragma once
// MaterializedGraph: one flat, deduplicated, topologically ordered graph (docs/design.md,
// "The pipeline"), the input of compile, serializers and debug printers. Built only by
// materialize_merge (split by unzip, and rewritten by bind_values).
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "computegraph/value_key.hpp"

namespace computegraph {

/// Index of a value in MaterializedGraph::values().
using MaterializedValueId = std::uint32_t;

template <GraphOperation Op>
struct MaterializedValue {
  ValueKey<Op> key;
  /// Index of the producing operation; nullopt for inputs.
  std::optional<std::uint32_t> producer;
  /// The producer's output slot (0 for inputs).
  std::uint32_t output_slot = 0;
};

template <GraphOperation Op>
struct MaterializedOperation {
  Op operation;
  /// Operand values, in operand order. The ids live in one array owned by the MaterializedGraph
  /// (valid as long as it is; copies of the graph point into their own array), not in one
  /// allocation per operation: large graphs are read and written at memory speed.
  std::span<const MaterializedValueId> inputs;
  /// Outputs are the consecutive values first_output .. first_output + output_count - 1.
  MaterializedValueId first_output = 0;
  std::uint32_t output_count = 0;
  OperationRole role;
};

template <GraphOperation Op>
class MaterializedGraph {
 public:
  MaterializedGraph() = default;
  /// Moving keeps the operand array, so the operations' input spans stay valid.
  MaterializedGraph(MaterializedGraph&&) noexcept = default;
  MaterializedGraph& operator=(MaterializedGraph&&) noexcept = default;
  /// A copy's input spans point into the copy's own operand array.
  MaterializedGraph(const MaterializedGraph& other)
      : values_(other.values_),
        operations_(other.operations_),
        operands_(other.operands_),
        inputs_(other.inputs_),
        outputs_(other.outputs_) {
    for (auto& op : operations_) {
      if (op.inputs.empty()) continue;
      const auto offset = op.inputs.data() - other.operands_.data();
      op.inputs = {operands_.data() + offset, op.inputs.size()};
    }
  }
  MaterializedGraph& operator=(const MaterializedGraph& other) {
    if (this != &other) *this = MaterializedGraph(other);
    return *this;
  }
  ~MaterializedGraph() = default;

  /// Values in definition order: every operation's inputs precede its outputs.
  const std::vector<MaterializedValue<Op>>& values() const { return values_; }
  /// Operations in one topological order.
  const std::vector<MaterializedOperation<Op>>& operations() const { return operations_; }
  /// Input values in the documented order (see materialize_merge).
  const std::vector<MaterializedValueId>& inputs() const { return inputs_; }
  /// Output values, aligned with the requested output keys (may repeat).
  const std::vector<MaterializedValueId>& outputs() const { return outputs_; }

  std::vector<typename Op::InputKey> input_keys() const {
    std::vector<typename Op::InputKey> keys;
    keys.reserve(inputs_.size());
    for (auto v : inputs_) keys.push_back(values_[v].key.input_key());
    return keys;
  }
  std::vector<ValueKey<Op>> output_keys() const {
    std::vector<ValueKey<Op>> keys;
    keys.reserve(outputs_.size());
    for (auto v : outputs_) keys.push_back(values_[v].key);
    return keys;
  }
  /// Position of the input with this key in inputs(), or nullopt.
  std::optional<std::size_t> input_position(const typename Op::InputKey& key) const {
    for (std::size_t i = 0; i < inputs_.size(); ++i) {
      if (values_[inputs_[i]].key.input_key() == key) return i;
    }
    return std::nullopt;
  }

 private:
  template <GraphOperation O>
  friend class MaterializeMerge;
  template <GraphOperation O>
  friend class Unzipper;
  template <GraphOperation O>
  friend class ValueBinder;
  std::vector<MaterializedValue<Op>> values_;
  std::vector<MaterializedOperation<Op>> operations_;
  /// Every operation's operand ids, back to back. Reserved in full before the first operation is
  /// added and never reallocated while the graph is built, so spans into it stay valid.
  std::vector<MaterializedValueId> operands_;
  std::vector<MaterializedValueId> inputs_;
  std::vector<MaterializedValueId> outputs_;
};

}  // namespace computegraph
