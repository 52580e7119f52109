#pragma once
// intern_operation: hash-consing of operations that have operands (see key_node.hpp).
//
// Every live operation node is registered in the user set of each distinct operand node, so the
// set of any one operand holds every candidate: a lookup searches the smallest one under that
// operand's lock. Creation takes the locks of all distinct operands (in address order, so two
// creators cannot deadlock) and searches again before registering the new node everywhere: two
// threads interning equal operations always get the same node.
//
// Locks are never held while a key is dropped or a node is built (dropping a key may dispose a
// node, which takes locks).
#include <algorithm>
#include <cstddef>
#include <memory>
#include <vector>

#include "computegraph/detail/intern_table.hpp"
#include "computegraph/detail/key_node.hpp"

namespace computegraph::detail {

/// Node: a KeyNode with `operand_count()`, `operand(i)` (the operand's KeyNode; repeats
/// allowed) and `static destroy(Node*)`, which ends a node made by its `make`.
template <class Node>
void dispose_operation(KeyNode* base) {
  Node* node = static_cast<Node*>(base);
  // A repeated operand is visited twice; the second erase finds nothing.
  for (std::size_t i = 0; i < node->operand_count(); ++i) {
    KeyNode* operand = node->operand(i);
    operand->users_lock.lock();
    operand->users.erase(node->hash, node);
    operand->users_lock.unlock();
  }
  LiveNodes<Node>::count.fetch_sub(1, std::memory_order_relaxed);
  Node::destroy(node);  // releases the operands, which queue behind us in release()
}

/// unique_ptr's deleter for nodes made by `Node::create`.
template <class Node>
struct DestroyNode {
  void operator()(Node* node) const noexcept { Node::destroy(node); }
};

namespace operand_intern {
/// The distinct operand nodes of one operation in address order, locked for its lifetime.
class LockedOperands {
 public:
  template <class OperandAt>
  LockedOperands(std::size_t n, OperandAt&& operand_at) {
    if (n > kInline) heap_.resize(n);
    KeyNode** nodes = n > kInline ? heap_.data() : inline_;
    for (std::size_t i = 0; i < n; ++i) nodes[i] = operand_at(i);
    std::sort(nodes, nodes + n);
    size_ = static_cast<std::size_t>(std::unique(nodes, nodes + n) - nodes);
    nodes_ = nodes;
    for (std::size_t i = 0; i < size_; ++i) nodes_[i]->users_lock.lock();
  }
  LockedOperands(const LockedOperands&) = delete;
  LockedOperands& operator=(const LockedOperands&) = delete;
  ~LockedOperands() {
    for (std::size_t i = size_; i-- > 0;) nodes_[i]->users_lock.unlock();
  }
  KeyNode* const* begin() const { return nodes_; }
  KeyNode* const* end() const { return nodes_ + size_; }

 private:
  static constexpr std::size_t kInline = 8;
  KeyNode* inline_[kInline];
  std::vector<KeyNode*> heap_;
  KeyNode** nodes_ = nullptr;
  std::size_t size_ = 0;
};

/// A retained live user of `owner` with this hash for which `matches` holds, or nullptr.
/// Precondition: the caller holds owner's lock.
template <class Node, class Matches>
Node* find_user(KeyNode* owner, std::size_t hash, Matches& matches) {
  return static_cast<Node*>(owner->users.find(hash, [&](KeyNode* user) {
    return matches(static_cast<const Node&>(*user)) && try_retain(user);
  }));
}
}  // namespace operand_intern

/// Returns a retained operation node equal to the probe (as decided by `matches`), creating it
/// with `make()` when no live one exists. The probe has `n` operands; `operand_at(i)` gives the
/// KeyNode of operand i. Node: a KeyNode with `operand_count()`, `operand(i)`,
/// `same_structure(const Node&)` and `static destroy(Node*)`. Operations without operands go to
/// the global InternTable.
template <class Node, class OperandAt, class Matches, class Make>
Node* intern_operation(std::size_t hash, std::size_t n, OperandAt&& operand_at, Matches&& matches,
                       Make&& make) {
  if (n == 0) return InternTable<Node>::instance().intern(hash, matches, make);
  KeyNode* smallest = operand_at(0);
  for (std::size_t i = 1; i < n; ++i) {
    KeyNode* operand = operand_at(i);
    if (operand->users.size() < smallest->users.size()) smallest = operand;
  }
  smallest->users_lock.lock();
  Node* found = operand_intern::find_user<Node>(smallest, hash, matches);
  smallest->users_lock.unlock();
  if (found) return found;

  // A miss: build the node before taking any lock, since building copies or moves operand keys
  // and a failure would drop them. From here on the probe's data may have moved into the node,
  // so candidates are compared with the node. Declared before the locks, the node is deleted
  // (dropping its operands) only after they are released, if another thread won or registering
  // failed.
  std::unique_ptr<Node, DestroyNode<Node>> fresh(make());
  fresh->hash = hash;
  auto same = [&](const Node& x) { return x.same_structure(*fresh); };
  operand_intern::LockedOperands locked(n, [&](std::size_t i) { return fresh->operand(i); });
  found = operand_intern::find_user<Node>(smallest, hash, same);
  if (found) return found;
  std::size_t registered = 0;
  try {
    for (KeyNode* operand : locked) {
      operand->users.insert(hash, fresh.get());
      ++registered;
    }
  } catch (...) {
    for (KeyNode* operand : locked) {
      if (registered-- == 0) break;
      operand->users.erase(hash, fresh.get());
    }
    throw;
  }
  fresh->dispose = &dispose_operation<Node>;
  LiveNodes<Node>::count.fetch_add(1, std::memory_order_relaxed);
  return fresh.release();
}

}  // namespace computegraph::detail
