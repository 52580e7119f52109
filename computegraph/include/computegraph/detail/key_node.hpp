#pragma once
// Reference-counted, hash-consed key nodes (the storage behind ValueKey and OperationKey).
//
// Every structurally distinct key exists at most once while it is alive, so key equality is pointer
// equality and hashing reads a stored hash: both O(1) whatever the depth of the key.
// Nodes are freed when their last handle goes; freeing a long chain is iterative, never recursive,
// so dropping a 10^6-deep key cannot overflow the stack.
//
// Where nodes are interned (looked up by structure):
// - an operation with operands is registered in the user set of one operand node, its owner (the
//   newest operand, by creation serial), and found by searching that set (intern_operation in
//   operand_intern.hpp). The operands were just read to hash the key, so the search stays in
//   memory the caller already touched; a single global table would cost a cache miss per
//   operation once graphs outgrow the cache.
// - input keys and operations without operands live in global sharded tables (InternTable).
//
// Layout: the fields that interning, graph building and the transforms read for every operation
// (count, lock, hash, serial, membership hint, annotation: 40 bytes) come first, so that reading
// an operand's hash brings in the rest; the set of owned operations follows, disposal's fields
// come last.
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "computegraph/detail/user_set.hpp"

namespace computegraph::detail {

/// Serials of KeyNode creation (see KeyNode::serial).
inline std::atomic<std::uint64_t> next_key_node_serial{0};

struct KeyNode {
  std::atomic<std::uint32_t> refs{1};
  /// Guards `users`.
  NodeLock users_lock;
  std::size_t hash = 0;
  /// Unique and increasing in creation order: picks an operation's owner among its operands
  /// (operand_intern.hpp).
  std::uint64_t serial = next_key_node_serial.fetch_add(1, std::memory_order_relaxed);
  /// Graph membership hint (builder_tickets.hpp): the ticket of the last GraphBuilder that added
  /// this operation, and the local id of its output 0 there. Only that builder reads member_local.
  std::atomic<std::uint64_t> member_ticket{0};
  std::atomic<std::uint32_t> member_local{0};
  bool is_input = false;
  /// ValueKey::node_annotation(): a byte an op set may use to memoize a pure function of the
  /// node's structure (0: not computed).
  std::atomic<std::uint8_t> annotation{0};
  /// Operations that this node owns (see the file comment).
  UserSet users;
  /// Unregisters the node from where it is interned and deletes it; called once, after refs
  /// reached 0.
  void (*dispose)(KeyNode*) = nullptr;
  KeyNode* next_pending = nullptr;  // intrusive list of nodes waiting to be disposed
};

inline void retain(KeyNode* node) noexcept { node->refs.fetch_add(1, std::memory_order_relaxed); }

/// Increments the count unless it is already 0 (a dying node is never revived).
inline bool try_retain(KeyNode* node) noexcept {
  std::uint32_t r = node->refs.load(std::memory_order_relaxed);
  while (r != 0) {
    if (node->refs.compare_exchange_weak(r, r + 1, std::memory_order_acq_rel)) return true;
  }
  return false;
}

/// Drops one reference; disposes nodes that reach 0, iteratively (see key_node.cpp).
void release(KeyNode* node) noexcept;

inline std::size_t hash_mix(std::size_t seed, std::size_t value) {
  value *= 0xff51afd7ed558ccdULL;
  value ^= value >> 33;
  return (seed ^ value) * 0x100000001b3ULL + 0x9e3779b97f4a7c15ULL;
}

/// Number of live nodes of one node type (for tests and leak checks).
template <class Node>
struct LiveNodes {
  static inline std::atomic<std::size_t> count{0};
};
template <class Node>
std::size_t live_nodes() {
  return LiveNodes<Node>::count.load(std::memory_order_relaxed);
}

}  // namespace computegraph::detail
