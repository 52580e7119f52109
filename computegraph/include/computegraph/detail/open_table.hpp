#pragma once
// OpenTable: a small open-addressing hash table of trivially copyable entries, for the engine's
// hot lookups (intern tables, graph value indexes, materialize_merge's key map).
//
// Those lookups are keyed by node pointers or stored structural hashes. std::unordered_map
// allocates one node per entry and follows a pointer per lookup, which made hashing the dominant
// cost of building and transforming 10^6-operation graphs. Here entries lie inline in one array
// (linear probing, power-of-two capacity, load factor at most 1/2), so a lookup usually reads one
// cache line and an insertion allocates nothing except when the table grows. Deletion shifts
// later entries back (no tombstones), so lookups never slow down after many erasures.
//
// The table is a multiset: it never compares entries itself. `Traits` says which entries are
// occupied and what an entry's hash is; callers look entries up with a hash and a predicate.
//   struct Traits {
//     static bool occupied(const Entry&);       // a value-initialized Entry must be unoccupied
//     static std::size_t hash(const Entry&);    // the hash the entry was inserted under
//   };
#include <bit>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

namespace computegraph::detail {

/// Hash of an object address (and an output slot): addresses are unique while the object lives.
/// The low bits of heap addresses are always zero, so they are dropped.
inline std::size_t address_hash(const void* address, std::uint32_t slot = 0) {
  return (reinterpret_cast<std::uintptr_t>(address) >> 4) ^
         (static_cast<std::size_t>(slot) * 0xc2b2ae3d27d4eb4fULL);
}

template <class Entry, class Traits>
class OpenTable {
  static_assert(std::is_trivially_copyable_v<Entry>, "OpenTable moves entries with plain copies");

 public:
  std::size_t size() const { return size_; }
  std::size_t capacity() const { return slots_.size(); }

  /// Makes room for `n` entries without growing.
  void reserve(std::size_t n) {
    if (n * 2 > slots_.size()) rehash(std::bit_ceil(n * 2));
  }

  /// The first entry on `hash`'s probe run for which `match(entry)` holds, or nullptr. The pointer
  /// stays valid until the next insert or erase.
  template <class Match>
  Entry* find(std::size_t hash, Match&& match) {
    if (size_ == 0) return nullptr;
    for (std::size_t i = home(hash);; i = (i + 1) & mask_) {
      Entry& entry = slots_[i];
      if (!Traits::occupied(entry)) return nullptr;
      if (match(static_cast<const Entry&>(entry))) return &entry;
    }
  }
  template <class Match>
  const Entry* find(std::size_t hash, Match&& match) const {
    return const_cast<OpenTable*>(this)->find(hash, std::forward<Match>(match));
  }

  /// Hints that an entry with this hash will be looked up or inserted soon (no effect on results).
  void prefetch(std::size_t hash) const {
    if (!slots_.empty()) __builtin_prefetch(&slots_[home(hash)], 1);
  }

  /// Adds an occupied entry; does not look for an equal one.
  void insert(const Entry& entry) {
    if ((size_ + 1) * 2 > slots_.size()) rehash(slots_.empty() ? kMinCapacity : slots_.size() * 2);
    place(entry);
    ++size_;
  }

  /// Removes the entry at `entry` (a pointer returned by find).
  void erase(Entry* entry) {
    std::size_t hole = static_cast<std::size_t>(entry - slots_.data());
    // Backward shift: move each later entry of the run into the hole when its home position does
    // not lie strictly between the hole and itself, so every entry stays reachable from its home.
    for (std::size_t j = (hole + 1) & mask_; Traits::occupied(slots_[j]); j = (j + 1) & mask_) {
      const std::size_t from_home = (j - home(Traits::hash(slots_[j]))) & mask_;
      if (from_home >= ((j - hole) & mask_)) {
        slots_[hole] = slots_[j];
        hole = j;
      }
    }
    slots_[hole] = Entry{};
    --size_;
  }

 private:
  static constexpr std::size_t kMinCapacity = 16;

  /// Fibonacci hashing: the high bits of hash * 2^64/phi are well mixed even for sequential hashes.
  std::size_t home(std::size_t hash) const {
    return static_cast<std::size_t>((hash * 0x9e3779b97f4a7c15ULL) >> shift_);
  }

  void place(const Entry& entry) {
    std::size_t i = home(Traits::hash(entry));
    while (Traits::occupied(slots_[i])) i = (i + 1) & mask_;
    slots_[i] = entry;
  }

  void rehash(std::size_t capacity) {
    std::vector<Entry> old(capacity);
    old.swap(slots_);
    mask_ = capacity - 1;
    shift_ = 64 - static_cast<unsigned>(std::countr_zero(capacity));
    for (const Entry& entry : old) {
      if (Traits::occupied(entry)) place(entry);
    }
  }

  std::vector<Entry> slots_;
  std::size_t size_ = 0;
  std::size_t mask_ = 0;
  unsigned shift_ = 64;
};

}  // namespace computegraph::detail
