#pragma once
// The pieces of per-operand interning (see key_node.hpp): a four-byte lock that every key node
// carries, and the set of operations that a node owns.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "computegraph/detail/open_table.hpp"

namespace computegraph::detail {

struct KeyNode;

/// A mutex of four bytes (so that every key node can have one): uncontended lock and unlock are
/// one atomic operation each; a waiter spins briefly, then sleeps in the kernel (futex through
/// std::atomic::wait), so a thread preempted while holding it costs its waiters no CPU.
class NodeLock {
 public:
  void lock() {
    std::uint32_t expected = kFree;
    if (state_.compare_exchange_strong(expected, kHeld, std::memory_order_acquire)) return;
    lock_slow();
  }
  void unlock() {
    if (state_.exchange(kFree, std::memory_order_release) == kContended) state_.notify_one();
  }

 private:
  static constexpr std::uint32_t kFree = 0, kHeld = 1, kContended = 2;
  void lock_slow() {
    for (int spin = 0; spin < 64; ++spin) {
      std::uint32_t expected = kFree;
      if (state_.load(std::memory_order_relaxed) == kFree &&
          state_.compare_exchange_weak(expected, kHeld, std::memory_order_acquire)) {
        return;
      }
    }
    // From here on the lock is marked contended, so that its holder wakes a sleeper on unlock.
    while (state_.exchange(kContended, std::memory_order_acquire) != kFree) {
      state_.wait(kContended, std::memory_order_relaxed);
    }
  }
  std::atomic<std::uint32_t> state_{kFree};
};

/// The operations that a node owns (see operand_intern.hpp), with their structural hashes;
/// guarded by the node's NodeLock. Most nodes own one or two, which are stored inline; more go to
/// an open-addressing table allocated on first need.
class UserSet {
 public:
  UserSet() = default;
  UserSet(const UserSet&) = delete;
  UserSet& operator=(const UserSet&) = delete;
  ~UserSet() { delete table_; }

  /// The first user with this hash for which `match(user)` holds, or nullptr.
  template <class Match>
  KeyNode* find(std::size_t hash, Match&& match) const {
    for (const Entry& e : inline_) {
      if (e.user != nullptr && e.hash == hash && match(e.user)) return e.user;
    }
    if (table_ == nullptr) return nullptr;
    const Entry* e =
        table_->find(hash, [&](const Entry& x) { return x.hash == hash && match(x.user); });
    return e ? e->user : nullptr;
  }

  /// Adds `user`; on failure (allocation) the set is unchanged.
  void insert(std::size_t hash, KeyNode* user) {
    for (Entry& e : inline_) {
      if (e.user == nullptr) {
        e = Entry{hash, user};
        return;
      }
    }
    if (table_ == nullptr) {
      auto table = std::make_unique<Table>();
      table->reserve(4);
      table_ = table.release();
    }
    table_->insert(Entry{hash, user});
  }

  /// Removes `user` (inserted under `hash`); does nothing if it is absent.
  void erase(std::size_t hash, const KeyNode* user) {
    for (Entry& e : inline_) {
      if (e.user == user) {
        e = Entry{};
        return;
      }
    }
    if (table_ == nullptr) return;
    if (Entry* e = table_->find(hash, [&](const Entry& x) { return x.user == user; })) {
      table_->erase(e);
    }
  }

 private:
  struct Entry {
    std::size_t hash = 0;
    KeyNode* user = nullptr;
  };
  struct Traits {
    static bool occupied(const Entry& e) { return e.user != nullptr; }
    static std::size_t hash(const Entry& e) { return e.hash; }
  };
  using Table = OpenTable<Entry, Traits>;
  static constexpr std::size_t kInline = 2;

  Entry inline_[kInline];
  Table* table_ = nullptr;
};

}  // namespace computegraph::detail
