#pragma once
// Structural identity of values and operations across graphs (docs/design.md, "Identity").
//
//   ValueKey     = Input(InputKey) | Derived{operation: OperationKey, output_slot}
//   OperationKey = (op, input ValueKeys, OperationRole)
//
// Keys are hash-consed (docs/design.md, "Identity"): structurally equal keys share one interned
// node, so `==` compares a pointer and a slot, and `hash()` reads a stored structural hash. Keys
// are cheap handles (one reference count) and are safe to copy, compare and drop from any thread.
//
// The key class templates are unconstrained on purpose: an op type names ValueKey<Self> in its
// own member declarations (AD rules), while it is still incomplete. The GraphOperation concept is
// checked by the functions that use keys.
#include <cstdint>
#include <functional>
#include <new>
#include <span>
#include <utility>
#include <vector>

#include "computegraph/detail/intern_table.hpp"
#include "computegraph/detail/key_node.hpp"
#include "computegraph/detail/operand_intern.hpp"
#include "computegraph/operation.hpp"
#include "computegraph/role.hpp"

namespace computegraph {

template <class Op>
class OperationKey;

template <class Op>
class ValueKey;

namespace detail {

template <class Op>
struct InputNode : KeyNode {
  explicit InputNode(typename Op::InputKey k) : key(std::move(k)) { is_input = true; }
  static void destroy(InputNode* node) noexcept { delete node; }
  typename Op::InputKey key;
};

/// An operation node. Its operand keys are stored right after it, in the same allocation: one
/// allocation per node, and comparing a candidate reads memory next to its node.
template <class Op>
struct OperationNode : KeyNode {
  /// A new node (reference count 1) with operand i copied from `input_at(i)`.
  template <class InputAt>
  static OperationNode* create(const Op& op, std::size_t n, InputAt&& input_at,
                               const OperationRole& role) {
    void* memory = ::operator new(inputs_offset() + n * sizeof(ValueKey<Op>));
    OperationNode* node;
    try {
      node = new (memory) OperationNode(op, role);
    } catch (...) {
      ::operator delete(memory);
      throw;
    }
    // Copying a key cannot fail (it retains a node); n_inputs counts the constructed ones.
    for (std::size_t i = 0; i < n; ++i) {
      new (node->input_data() + i) ValueKey<Op>(input_at(i));
      ++node->n_inputs;
    }
    return node;
  }
  /// Ends a node made by create (dropping its operands).
  static void destroy(OperationNode* node) noexcept {
    for (std::size_t i = node->n_inputs; i-- > 0;) node->input_data()[i].~ValueKey();
    node->~OperationNode();
    ::operator delete(static_cast<void*>(node));
  }

  std::span<const ValueKey<Op>> inputs() const { return {input_data(), n_inputs}; }
  std::size_t operand_count() const { return n_inputs; }
  KeyNode* operand(std::size_t i) const;  // defined after ValueKey
  bool same_structure(const OperationNode& other) const {
    if (!(op == other.op) || !(role == other.role) || n_inputs != other.n_inputs) return false;
    for (std::size_t i = 0; i < n_inputs; ++i) {
      if (!(input_data()[i] == other.input_data()[i])) return false;
    }
    return true;
  }

  Op op;
  OperationRole role;
  std::size_t n_inputs = 0;

 private:
  OperationNode(const Op& o, const OperationRole& r) : op(o), role(r) {}
  static constexpr std::size_t inputs_offset() {
    constexpr std::size_t align = alignof(ValueKey<Op>);
    return (sizeof(OperationNode) + align - 1) / align * align;
  }
  ValueKey<Op>* input_data() const {
    auto* base = reinterpret_cast<char*>(const_cast<OperationNode*>(this));
    return std::launder(reinterpret_cast<ValueKey<Op>*>(base + inputs_offset()));
  }
};

/// An owning handle to a KeyNode (intrusive reference count).
class NodeHandle {
 public:
  NodeHandle() = default;
  /// Adopts a node that was already retained for this handle.
  static NodeHandle adopt(KeyNode* node) {
    NodeHandle h;
    h.node_ = node;
    return h;
  }
  NodeHandle(const NodeHandle& other) noexcept : node_(other.node_) {
    if (node_) retain(node_);
  }
  NodeHandle(NodeHandle&& other) noexcept : node_(std::exchange(other.node_, nullptr)) {}
  NodeHandle& operator=(NodeHandle other) noexcept {
    std::swap(node_, other.node_);
    return *this;
  }
  ~NodeHandle() {
    if (node_) release(node_);
  }
  KeyNode* get() const { return node_; }

 private:
  KeyNode* node_ = nullptr;
};

}  // namespace detail

/// The identity of one operation application: descriptor, input keys and role.
template <class Op>
class OperationKey {
 public:
  /// Interns (op, inputs, role). Structurally equal arguments return the identical key.
  static OperationKey make(Op op, std::vector<ValueKey<Op>> inputs, OperationRole role) {
    return make(
        op, inputs.size(), [&](std::size_t i) -> const ValueKey<Op>& { return inputs[i]; }, role);
  }
  /// As above, with operand i given by `input_at(i)` (a const ValueKey<Op>&): the operand keys
  /// are copied only when the operation is new, and need not lie in one array.
  template <class InputAt>
  static OperationKey make(const Op& op, std::size_t n, InputAt&& input_at,
                           const OperationRole& role) {
    std::size_t h = detail::hash_mix(static_cast<std::size_t>(op.hash()), role.hash());
    for (std::size_t i = 0; i < n; ++i) h = detail::hash_mix(h, input_at(i).hash());
    using Node = detail::OperationNode<Op>;
    Node* node = detail::intern_operation<Node>(
        h, n, [&](std::size_t i) { return input_at(i).node_.get(); },
        [&](const Node& x) {
          if (!(x.op == op) || !(x.role == role) || x.n_inputs != n) return false;
          const auto inputs = x.inputs();
          for (std::size_t i = 0; i < n; ++i) {
            if (!(inputs[i] == input_at(i))) return false;
          }
          return true;
        },
        [&] { return Node::create(op, n, input_at, role); });
    OperationKey key;
    key.node_ = detail::NodeHandle::adopt(node);
    return key;
  }

  const Op& operation() const { return node()->op; }
  std::span<const ValueKey<Op>> inputs() const { return node()->inputs(); }
  const OperationRole& role() const { return node()->role; }
  ValueKey<Op> output(std::uint32_t slot) const { return ValueKey<Op>::derived(*this, slot); }

  std::size_t hash() const { return node_.get()->hash; }
  /// Opaque identity: equal keys have the same pointer while either is alive.
  const void* identity() const { return node_.get(); }
  bool operator==(const OperationKey& other) const { return node_.get() == other.node_.get(); }

 private:
  friend class ValueKey<Op>;
  const detail::OperationNode<Op>* node() const {
    return static_cast<const detail::OperationNode<Op>*>(node_.get());
  }
  detail::NodeHandle node_;
};

/// The identity of one value: a graph input, or one output slot of an operation.
template <class Op>
class ValueKey {
 public:
  using InputKey = typename Op::InputKey;

  static ValueKey input(InputKey k) {
    std::size_t h = detail::hash_mix(0x1b873593, std::hash<InputKey>{}(k));
    using Node = detail::InputNode<Op>;
    Node* node = detail::InternTable<Node>::instance().intern(
        h, [&](const Node& n) { return n.key == k; }, [&] { return new Node(k); });
    ValueKey key;
    key.node_ = detail::NodeHandle::adopt(node);
    return key;
  }
  static ValueKey derived(const OperationKey<Op>& operation, std::uint32_t output_slot) {
    ValueKey key;
    key.node_ = operation.node_;
    key.slot_ = output_slot;
    return key;
  }

  bool is_input() const { return node_.get()->is_input; }
  bool is_derived() const { return !is_input(); }
  /// Precondition: is_input().
  const InputKey& input_key() const {
    return static_cast<const detail::InputNode<Op>*>(node_.get())->key;
  }
  /// Precondition: is_derived().
  OperationKey<Op> operation() const {
    OperationKey<Op> key;
    key.node_ = node_;
    return key;
  }
  /// Precondition: is_derived(). Cheap access to the producer without copying a handle.
  const Op& producer_op() const { return op_node()->op; }
  std::span<const ValueKey> producer_inputs() const { return op_node()->inputs(); }
  const OperationRole& producer_role() const { return op_node()->role; }
  std::uint32_t output_slot() const { return slot_; }

  /// A byte an op set may use to memoize a pure function of this key's node (the input, or the
  /// producing operation with all its output slots), such as a result type: 0 until set. Since
  /// the value depends only on structure, every thread that sets it sets the same value, so
  /// concurrent use is safe. One op set has one meaning for it (nodes are per op set).
  std::uint8_t node_annotation() const {
    return node_.get()->annotation.load(std::memory_order_relaxed);
  }
  void set_node_annotation(std::uint8_t value) const {
    node_.get()->annotation.store(value, std::memory_order_relaxed);
  }

  std::size_t hash() const { return detail::hash_mix(node_.get()->hash, slot_); }
  /// Opaque identity of the input or operation node (shared by all slots of one operation).
  const void* node_identity() const { return node_.get(); }
  bool operator==(const ValueKey& other) const {
    return node_.get() == other.node_.get() && slot_ == other.slot_;
  }

 private:
  friend class OperationKey<Op>;
  friend struct detail::OperationNode<Op>;
  ValueKey() = default;
  const detail::OperationNode<Op>* op_node() const {
    return static_cast<const detail::OperationNode<Op>*>(node_.get());
  }
  detail::NodeHandle node_;
  std::uint32_t slot_ = 0;
};

template <class Op>
detail::KeyNode* detail::OperationNode<Op>::operand(std::size_t i) const {
  return input_data()[i].node_.get();
}

}  // namespace computegraph

// The std::hash specialization is not part of the documented API (Doxygen skips it).
/// \cond
template <class Op>
struct std::hash<computegraph::ValueKey<Op>> {
  std::size_t operator()(const computegraph::ValueKey<Op>& k) const noexcept { return k.hash(); }
};
/// \endcond
// The std::hash specialization is not part of the documented API (Doxygen skips it).
/// \cond
template <class Op>
struct std::hash<computegraph::OperationKey<Op>> {
  std::size_t operator()(const computegraph::OperationKey<Op>& k) const noexcept {
    return k.hash();
  }
};
/// \endcond
