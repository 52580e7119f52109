#pragma once
// InternTable: the global tables of leaf key nodes (input keys, operations without operands).
#include <cstddef>
#include <mutex>

#include "computegraph/detail/key_node.hpp"
#include "computegraph/detail/open_table.hpp"

namespace computegraph::detail {

/// A sharded, thread-safe table of live nodes of one type, bucketed by structural hash.
/// The table does not own references: a node in it may be dying (refs == 0); such a node is
/// never returned, only replaced. Node has `static destroy(Node*)`, which ends a node `make()`
/// returned.
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
    LiveNodes<Node>::count.fetch_add(1, std::memory_order_relaxed);
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
    LiveNodes<Node>::count.fetch_sub(1, std::memory_order_relaxed);
    Node::destroy(node);  // releases the node's children, which queue behind us in release()
  }

  Shard shards_[kShards];
};

}  // namespace computegraph::detail
