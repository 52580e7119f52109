#pragma once
// MaterializedGraph: one flat, deduplicated, topologically ordered graph (spec §II "Materialized
// graph"), the input of compile, serializers and debug printers. Built only by materialize_merge.
#include <cstdint>
#include <optional>
#include <unordered_map>
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
  std::vector<MaterializedValueId> inputs;
  /// Outputs are the consecutive values first_output .. first_output + output_count - 1.
  MaterializedValueId first_output = 0;
  std::uint32_t output_count = 0;
  OperationRole role;
};

template <GraphOperation Op>
class MaterializedGraph {
 public:
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
  std::vector<MaterializedValue<Op>> values_;
  std::vector<MaterializedOperation<Op>> operations_;
  std::vector<MaterializedValueId> inputs_;
  std::vector<MaterializedValueId> outputs_;
};

}  // namespace computegraph
