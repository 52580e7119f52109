#pragma once
// KeyMap<V>: a flat hash map from ValueKey to a small trivially copyable value, for transforms
// that bucket by global identity (tidu's tangent and cotangent environments).
//
// It stores the key's node address and slot, not a handle: the caller keeps the keys alive (they
// belong to graphs that outlive the transform). No allocation per entry; see open_table.hpp.
#include <cstdint>
#include <type_traits>

#include "computegraph/detail/open_table.hpp"
#include "computegraph/value_key.hpp"

namespace computegraph::detail {

template <class V>
class KeyMap {
  static_assert(std::is_trivially_copyable_v<V>);

 public:
  template <class Op>
  V* find(const ValueKey<Op>& key) {
    Entry* e = table_.find(hash_of(key), [&](const Entry& x) {
      return x.node == key.node_identity() && x.slot == key.output_slot();
    });
    return e ? &e->value : nullptr;
  }
  template <class Op>
  bool contains(const ValueKey<Op>& key) {
    return find(key) != nullptr;
  }
  /// Sets the value of `key`, adding it if absent.
  template <class Op>
  void assign(const ValueKey<Op>& key, V value) {
    if (V* existing = find(key)) {
      *existing = value;
      return;
    }
    table_.insert(Entry{key.node_identity(), key.output_slot(), value});
  }
  void reserve(std::size_t n) { table_.reserve(n); }
  std::size_t size() const { return table_.size(); }

 private:
  struct Entry {
    const void* node = nullptr;
    std::uint32_t slot = 0;
    V value{};
  };
  struct Traits {
    static bool occupied(const Entry& e) { return e.node != nullptr; }
    static std::size_t hash(const Entry& e) { return address_hash(e.node, e.slot); }
  };
  template <class Op>
  static std::size_t hash_of(const ValueKey<Op>& key) {
    return address_hash(key.node_identity(), key.output_slot());
  }
  OpenTable<Entry, Traits> table_;
};

}  // namespace computegraph::detail
