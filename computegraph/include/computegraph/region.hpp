#pragma once
// Region: a closed subgraph carried by an operation (the body of a loop, the branches of a
// conditional). The engine stays agnostic of what the operation does with it; it only needs the
// region's identity, its printing and its verification.
//
// Contract:
// - A region's graph is closed: it has no parents and no External operands. What the body reads
//   from an enclosing graph enters as one of its inputs (the operation passes it as an operand).
// - Identity is structural: two regions are equal when their input keys and output keys are
//   equal. Keys are hash-consed (value_key.hpp), so bodies traced twice from the same code share
//   their keys, equal loops hash-cons to one operation key, and a compile cache reuses the program
//   of an equal loop. hash() is consistent with ==.
// - An operation type exposes its regions through an optional member
//   `std::vector<GraphPtr<Op>> regions() const` (the RegionOperation concept); printing
//   (printer.hpp) shows them nested under the operation and verify (verify.hpp) checks them, to
//   any depth. resolve, materialize_merge and compile treat the operation as opaque: its regions
//   are part of the operation's value, not of the enclosing graph.
#include <cstddef>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "computegraph/error.hpp"
#include "computegraph/graph.hpp"

namespace computegraph {

template <class Op>
concept RegionOperation = requires(const Op& op) {
  { op.regions() } -> std::convertible_to<std::vector<GraphPtr<Op>>>;
};

template <class Op>
class Region {
 public:
  Region() = default;
  /// Throws GraphError naming `owner` if the graph is null, has parents or reads External values.
  Region(GraphPtr<Op> graph, const std::string& owner) : graph_(std::move(graph)) {
    if (!graph_) throw GraphError(owner + ": a region needs a graph");
    if (!graph_->parents().empty()) {
      throw GraphError(owner + ": a region must be closed, but its graph has parent graphs");
    }
    for (const auto& node : graph_->operations()) {
      for (const auto& ref : node.inputs) {
        if (ref.is_external()) {
          throw GraphError(owner + ": a region must be closed, but operation " + std::string(node.operation.name()) +
                           " reads an External value");
        }
      }
    }
    for (LocalValueId id : graph_->inputs()) inputs_.push_back(graph_->key(id));
    outputs_ = graph_->output_keys();
    std::size_t h = inputs_.size() * 0x9e3779b97f4a7c15ULL + outputs_.size();
    for (const auto& k : inputs_) h = mix(h, k.hash());
    for (const auto& k : outputs_) h = mix(h, k.hash());
    hash_ = h;
  }

  const GraphPtr<Op>& graph() const { return graph_; }
  const std::vector<ValueKey<Op>>& input_keys() const { return inputs_; }
  const std::vector<ValueKey<Op>>& output_keys() const { return outputs_; }
  std::size_t input_count() const { return inputs_.size(); }
  std::size_t output_count() const { return outputs_.size(); }

  bool operator==(const Region& other) const {
    return graph_ == other.graph_ || (hash_ == other.hash_ && inputs_ == other.inputs_ && outputs_ == other.outputs_);
  }
  std::size_t hash() const { return hash_; }

 private:
  static std::size_t mix(std::size_t h, std::size_t v) {
    return (h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2))) * 0x100000001b3ULL;
  }
  GraphPtr<Op> graph_;
  std::vector<ValueKey<Op>> inputs_;
  std::vector<ValueKey<Op>> outputs_;
  std::size_t hash_ = 0;
};

/// The regions an operation carries (none for operation types without them).
template <class Op>
std::vector<GraphPtr<Op>> regions_of(const Op& op) {
  if constexpr (RegionOperation<Op>) {
    return op.regions();
  } else {
    return {};
  }
}

}  // namespace computegraph
