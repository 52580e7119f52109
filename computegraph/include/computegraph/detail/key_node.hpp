#pragma once
// Reference-counted, hash-consed key nodes (the storage behind ValueKey and OperationKey).
//
// Every structurally distinct key exists at most once while it is alive, so key equality is pointer
// equality and hashing reads a stored hash: both O(1) whatever the depth of the key.
// Nodes are freed when their last handle goes; freeing a long chain is iterative, never recursive,
// so dropping a 10^6-deep key cannot overflow the stack.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>

#include "computegraph/detail/open_table.hpp"

namespace computegraph::detail {

struct KeyNode {
  std::atomic<std::uint32_t> refs{1};
  bool is_input = false;
  std::size_t hash = 0;
  /// Removes the node from its intern table and deletes it; called once, after refs reached 0.
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

/// A sharded, thread-safe table of live nodes of one type, bucketed by structural hash.
/// The table does not own references: a node in it may be dying (refs == 0); such a node is
/// never returned, only replaced.
template <class Node>
class InternTable {
 public:
  static InternTable& instance() {
    static auto* table = new InternTable();  // never destroyed: keys may outlive static destructors
    return *table;
  }

  /// Returns a retained node equal to the probe (as decided by `matches`), creating it with
  /// `make()` when no live one exists.
  template <class Matches, class Make>
  Node* intern(std::size_t hash, Matches&& matches, Make&& make) {
    Shard& shard = shards_[hash % kShards];
    std::lock_guard lock(shard.mutex);
    Entry* found = shard.nodes.find(hash, [&](const Entry& e) {
      return e.hash == hash && matches(static_cast<const Node&>(*e.node));
    });
    if (found) {
      if (try_retain(found->node)) return found->node;
      shard.nodes.erase(found);  // dying: its disposer will find it gone
    }
    Node* node = make();
    node->hash = hash;
    node->dispose = &InternTable::dispose;
    shard.nodes.insert(Entry{hash, node});
    return node;
  }

  std::size_t size() const {
    std::size_t n = 0;
    for (auto& shard : shards_) {
      std::lock_guard lock(shard.mutex);
      n += shard.nodes.size();
    }
    return n;
  }

 private:
  static constexpr std::size_t kShards = 16;
  /// A live (or dying) node under its structural hash; several nodes may share a hash.
  struct Entry {
    std::size_t hash;
    Node* node;
  };
  struct EntryTraits {
    static bool occupied(const Entry& e) { return e.node != nullptr; }
    static std::size_t hash(const Entry& e) { return e.hash; }
  };
  struct Shard {
    mutable std::mutex mutex;
    OpenTable<Entry, EntryTraits> nodes;
  };

  static void dispose(KeyNode* base) {
    Node* node = static_cast<Node*>(base);
    InternTable& table = instance();
    {
      Shard& shard = table.shards_[node->hash % kShards];
      std::lock_guard lock(shard.mutex);
      Entry* entry = shard.nodes.find(node->hash, [&](const Entry& e) { return e.node == node; });
      if (entry) shard.nodes.erase(entry);
    }
    delete node;  // releases the node's children, which queue behind us in release()
  }

  Shard shards_[kShards];
};

}  // namespace computegraph::detail
