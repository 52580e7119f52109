#pragma once
// intern_operation: hash-consing of operations that have operands (see key_node.hpp).
//
// Every live operation node is registered in the user set of exactly one of its operands, its
// owner: the operand with the highest creation serial (the newest). The owner depends only on
// the operands, so equal probes pick the same owner and one set holds every candidate. A lookup
// searches that set under the owner's lock; creation searches it again and registers the new node
// under the same lock, so two threads interning equal operations always get the same node.
// The newest operand is usually a value computed just before (a tangent, a cotangent, the
// previous link of a chain): its set is small and in cache, whereas an old, widely used operand
// (a graph input) would collect a set as large as the graph.
//
// The lock is never held while a key is dropped or a node is built (dropping a key may dispose a
// node, which takes locks).
#include <cstddef>
#include <memory>
#include <mutex>

#include "computegraph/detail/intern_table.hpp"
#include "computegraph/detail/key_node.hpp"

namespace computegraph::detail {

namespace operand_intern {
/// The owner (see the file comment) of an operation with `n` > 0 operands, operand i being
/// `operand_at(i)`.
template <class OperandAt>
KeyNode* owner_of(std::size_t n, OperandAt&& operand_at) {
  KeyNode* owner = operand_at(0);
  for (std::size_t i = 1; i < n; ++i) {
    KeyNode* operand = operand_at(i);
    if (operand->serial > owner->serial) owner = operand;
  }
  return owner;
}

/// A retained live user of `owner` with this hash for which `matches` holds, or nullptr.
/// Precondition: the caller holds owner's lock.
template <class Node, class Matches>
Node* find_user(KeyNode* owner, std::size_t hash, Matches& matches) {
  return static_cast<Node*>(owner->users.find(hash, [&](KeyNode* user) {
    return matches(static_cast<const Node&>(*user)) && try_retain(user);
  }));
}
}  // namespace operand_intern

/// Node: a KeyNode with `operand_count()` (> 0), `operand(i)` (the operand's KeyNode; repeats
/// allowed) and `static destroy(Node*)`, which ends a node made by its `make`.
template <class Node>
void dispose_operation(KeyNode* base) {
  Node* node = static_cast<Node*>(base);
  KeyNode* owner = operand_intern::owner_of(node->operand_count(),
                                            [&](std::size_t i) { return node->operand(i); });
  owner->users_lock.lock();
  owner->users.erase(node->hash, node);
  owner->users_lock.unlock();
  LiveNodes<Node>::count.fetch_sub(1, std::memory_order_relaxed);
  Node::destroy(node);  // releases the operands, which queue behind us in release()
}

/// unique_ptr's deleter for nodes made by `Node::create`.
template <class Node>
struct DestroyNode {
  void operator()(Node* node) const noexcept { Node::destroy(node); }
};

/// Returns a retained operation node equal to the probe (as decided by `matches`), creating it
/// with `make()` when no live one exists. The probe has `n` operands; `operand_at(i)` gives the
/// KeyNode of operand i. Node: a KeyNode with `operand_count()`, `operand(i)`,
/// `same_structure(const Node&)` and `static destroy(Node*)`. Operations without operands go to
/// the global InternTable.
template <class Node, class OperandAt, class Matches, class Make>
Node* intern_operation(std::size_t hash, std::size_t n, OperandAt&& operand_at, Matches&& matches,
                       Make&& make) {
  if (n == 0) return InternTable<Node>::instance().intern(hash, matches, make);
  KeyNode* owner = operand_intern::owner_of(n, operand_at);
  owner->users_lock.lock();
  Node* found = operand_intern::find_user<Node>(owner, hash, matches);
  owner->users_lock.unlock();
  if (found) return found;

  // A miss: build the node before taking the lock, since building copies operand keys and a
  // failure would drop them. Declared before the lock is taken, the node is destroyed (dropping
  // its operands) only after it is released, if another thread won or registering failed.
  std::unique_ptr<Node, DestroyNode<Node>> fresh(make());
  fresh->hash = hash;
  auto same = [&](const Node& x) { return x.same_structure(*fresh); };
  {
    std::lock_guard lock(owner->users_lock);
    found = operand_intern::find_user<Node>(owner, hash, same);
    if (found) return found;
    owner->users.insert(hash, fresh.get());  // on failure, nothing was registered
  }
  fresh->dispose = &dispose_operation<Node>;
  LiveNodes<Node>::count.fetch_add(1, std::memory_order_relaxed);
  return fresh.release();
}

}  // namespace computegraph::detail
