#pragma once
// Graph: the unit that build, linearize and linear_transpose produce (docs/design.md,
// "The pipeline").
//
// A graph owns its local values and operations. An operation input is either Local (a value of this
// graph) or External (a ValueKey defined in some other graph, found later through `resolve`).
// Every local value carries its global ValueKey, computed when it is added, so identity never
// depends on local ids. Graphs are immutable once built and shared through shared_ptr.
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <variant>
#include <vector>

#include "computegraph/detail/open_table.hpp"
#include "computegraph/small_vector.hpp"
#include "computegraph/value_key.hpp"

namespace computegraph {

/// Graph-scoped value and operation ids: meaningful only inside one graph.
using LocalValueId = std::uint32_t;
using LocalOperationId = std::uint32_t;

/// An operation input: a local value or an external key.
template <class Op>
class ValueRef {
 public:
  static ValueRef local(LocalValueId id) { return ValueRef(id); }
  static ValueRef external(ValueKey<Op> key) { return ValueRef(std::move(key)); }

  bool is_local() const { return std::holds_alternative<LocalValueId>(ref_); }
  bool is_external() const { return !is_local(); }
  /// Precondition: is_local().
  LocalValueId local_id() const { return std::get<LocalValueId>(ref_); }
  /// Precondition: is_external().
  const ValueKey<Op>& external_key() const { return std::get<ValueKey<Op>>(ref_); }
  bool operator==(const ValueRef&) const = default;

 private:
  explicit ValueRef(LocalValueId id) : ref_(id) {}
  explicit ValueRef(ValueKey<Op> key) : ref_(std::move(key)) {}
  std::variant<LocalValueId, ValueKey<Op>> ref_;
};

template <class Op>
struct ValueNode {
  ValueKey<Op> key;
  /// (operation, output slot) that defines the value; nullopt for a graph input.
  std::optional<std::pair<LocalOperationId, std::uint32_t>> producer;
};

template <class Op>
struct OperationNode {
  Op operation;
  /// Operands and outputs are stored inline up to the common counts (small_vector.hpp).
  SmallVector<ValueRef<Op>, 2> inputs;
  /// Consecutive local ids (output k is outputs[0] + k): GraphBuilder adds them together.
  SmallVector<LocalValueId, 2> outputs;
  OperationRole role;
};

template <class Op>
class GraphBuilder;

namespace detail {
/// Graph's index entry: a value's key identity (node address and output slot) and its local id.
/// The graph keeps its keys alive, so an address names exactly one key while the entry exists,
/// and a structurally equal probe key (hash-consed) has the same address.
struct ValueIndexEntry {
  const void* node;
  std::uint32_t slot;
  std::uint32_t id;
};
struct ValueIndexTraits {
  static bool occupied(const ValueIndexEntry& e) { return e.node != nullptr; }
  static std::size_t hash(const ValueIndexEntry& e) { return address_hash(e.node, e.slot); }
};
}  // namespace detail

template <class Op>
class Graph {
 public:
  using GraphPtr = std::shared_ptr<const Graph>;

  const std::vector<ValueNode<Op>>& values() const { return values_; }
  const std::vector<OperationNode<Op>>& operations() const { return operations_; }
  /// Local ids of the graph's inputs, in declaration order.
  const std::vector<LocalValueId>& inputs() const { return inputs_; }
  /// Local ids of the graph's outputs, in declaration order (may repeat).
  const std::vector<LocalValueId>& outputs() const { return outputs_; }
  /// Operand references of all operations together (the sum of their input counts).
  std::size_t operand_count() const { return operand_locals_.size(); }
  /// Marks an External operand in local_operands().
  static constexpr LocalValueId kExternalOperand = 0xffffffffu;
  /// The operands of operation `op` as local ids (kExternalOperand for External ones): the same
  /// references as operations()[op].inputs, packed in one array for walks over large graphs,
  /// which then read a few bytes per operation instead of its node and operand list.
  std::span<const LocalValueId> local_operands(LocalOperationId op) const {
    const std::uint32_t begin = operand_begin_[op];
    return {operand_locals_.data() + begin, operand_begin_[op + 1] - begin};
  }
  /// Graphs whose values this graph may reference externally; the lookup base of `resolve`.
  const std::vector<GraphPtr>& parents() const { return parents_; }

  const ValueKey<Op>& key(LocalValueId id) const { return values_[id].key; }
  /// The global key of a reference (a local id's key, or the external key itself).
  const ValueKey<Op>& key_of(const ValueRef<Op>& ref) const {
    return ref.is_local() ? values_[ref.local_id()].key : ref.external_key();
  }
  std::vector<ValueKey<Op>> output_keys() const {
    std::vector<ValueKey<Op>> keys;
    keys.reserve(outputs_.size());
    for (LocalValueId id : outputs_) keys.push_back(values_[id].key);
    return keys;
  }
  /// The local value with this key, if this graph defines it (not through parents).
  std::optional<LocalValueId> find(const ValueKey<Op>& key) const {
    return find_identity(key.node_identity(), key.output_slot());
  }

 private:
  friend class GraphBuilder<Op>;

  /// find() by the parts of a key's identity (node address and output slot).
  std::optional<LocalValueId> find_identity(const void* node, std::uint32_t slot) const {
    if (indexed_ < values_.size()) index_values();
    const auto* entry = index_.find(detail::address_hash(node, slot), [&](const auto& e) {
      return e.node == node && e.slot == slot;
    });
    if (!entry) return std::nullopt;
    return entry->id;
  }

  /// Adds the values not yet indexed to index_. The builder defers indexing (it answers its own
  /// membership queries from key nodes, see GraphBuilder::find_operation) and calls this at
  /// finish, or earlier when find() is called during building: so a finished graph's index is
  /// complete and never written again, and a graph under construction is only used by its
  /// builder's thread. Inserting many values at once lets each insertion prefetch the slot of a
  /// later one, instead of waiting for memory at every value.
  void index_values() const {
    constexpr std::size_t kAhead = 8;
    const std::size_t n = values_.size();
    auto hash_of = [&](std::size_t i) {
      return detail::address_hash(values_[i].key.node_identity(), values_[i].key.output_slot());
    };
    index_.reserve(n);
    for (std::size_t i = indexed_; i < n; ++i) {
      if (i + kAhead < n) index_.prefetch(hash_of(i + kAhead));
      const ValueKey<Op>& key = values_[i].key;
      index_.insert({key.node_identity(), key.output_slot(), static_cast<LocalValueId>(i)});
    }
    indexed_ = static_cast<std::uint32_t>(n);
  }

  std::vector<ValueNode<Op>> values_;
  std::vector<OperationNode<Op>> operations_;
  std::vector<LocalValueId> inputs_;
  std::vector<LocalValueId> outputs_;
  std::vector<GraphPtr> parents_;
  /// local_operands(op) is operand_locals_[operand_begin_[op] .. operand_begin_[op + 1]).
  std::vector<std::uint32_t> operand_begin_ = {0};
  std::vector<LocalValueId> operand_locals_;
  /// Key identity -> local id of values_[0 .. indexed_) (keys are unique within a graph); see
  /// index_values().
  mutable detail::OpenTable<detail::ValueIndexEntry, detail::ValueIndexTraits> index_;
  mutable std::uint32_t indexed_ = 0;
};

template <class Op>
using GraphPtr = std::shared_ptr<const Graph<Op>>;

}  // namespace computegraph
