#pragma once
// CompileCache: compile once per structure, run many times (docs/design.md,
// "Compile once, run many").
//
// The cache key is the list of requested output keys plus the leading inputs. Because keys are
// structural and materialize_merge is deterministic, that list determines the materialized graph
// exactly, so a hit skips materialize_merge and compile altogether: a hit costs one hash of the
// key list and one lock. Thread-safe; bounded with least-recently-used eviction. Cached programs
// keep their keys alive.
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <span>
#include <unordered_map>
#include <vector>

#include "computegraph/compile.hpp"
#include "computegraph/error.hpp"
#include "computegraph/materialize.hpp"

namespace computegraph {

struct CompileCacheStats {
  std::uint64_t hits = 0;
  std::uint64_t misses = 0;
  std::uint64_t evictions = 0;
  std::size_t size = 0;
  std::size_t capacity = 0;
};

template <GraphOperation Op>
class CompileCache {
 public:
  using ProgramPtr = std::shared_ptr<const CompiledProgram<Op>>;

  explicit CompileCache(std::size_t capacity = 256) : capacity_(capacity) {
    if (capacity == 0) throw Error("CompileCache: capacity must be at least 1");
  }

  /// The program for `outputs` (with `leading_inputs` first in its input order), compiled from
  /// `view` on a miss. Concurrent misses on one key may compile twice; one result is kept.
  ProgramPtr get_or_compile(const ResolvedView<Op>& view, std::span<const ValueKey<Op>> outputs,
                            std::span<const ValueKey<Op>> leading_inputs = {}) {
    Key key = make_key(outputs, leading_inputs);
    if (auto hit = lookup(key)) return hit;
    auto program = std::make_shared<const CompiledProgram<Op>>(
        compile(materialize_merge(view, outputs, leading_inputs)));
    return insert(std::move(key), std::move(program));
  }

  /// The cached program, or nullptr (counts as a hit or a miss).
  ProgramPtr find(std::span<const ValueKey<Op>> outputs,
                  std::span<const ValueKey<Op>> leading_inputs = {}) {
    return lookup(make_key(outputs, leading_inputs));
  }

  CompileCacheStats stats() const {
    std::lock_guard lock(mutex_);
    return {hits_, misses_, evictions_, lru_.size(), capacity_};
  }
  void clear() {
    std::lock_guard lock(mutex_);
    index_.clear();
    lru_.clear();
  }

 private:
  struct Key {
    std::vector<ValueKey<Op>> keys;  // outputs, then a separator-free count, then leading inputs
    std::size_t output_count = 0;
    std::size_t hash = 0;
    bool operator==(const Key& other) const {
      return output_count == other.output_count && keys == other.keys;
    }
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const { return k.hash; }
  };
  using Entry = std::pair<Key, ProgramPtr>;

  static Key make_key(std::span<const ValueKey<Op>> outputs,
                      std::span<const ValueKey<Op>> leading_inputs) {
    Key key;
    key.keys.reserve(outputs.size() + leading_inputs.size());
    key.keys.insert(key.keys.end(), outputs.begin(), outputs.end());
    key.keys.insert(key.keys.end(), leading_inputs.begin(), leading_inputs.end());
    key.output_count = outputs.size();
    std::size_t h = detail::hash_mix(0x2545f4914f6cdd1dULL, outputs.size());
    for (const auto& k : key.keys) h = detail::hash_mix(h, k.hash());
    key.hash = h;
    return key;
  }

  ProgramPtr lookup(const Key& key) {
    std::lock_guard lock(mutex_);
    auto it = index_.find(key);
    if (it == index_.end()) {
      ++misses_;
      return nullptr;
    }
    ++hits_;
    lru_.splice(lru_.begin(), lru_, it->second);
    return it->second->second;
  }

  ProgramPtr insert(Key key, ProgramPtr program) {
    std::lock_guard lock(mutex_);
    if (auto it = index_.find(key); it != index_.end()) return it->second->second;
    lru_.emplace_front(std::move(key), std::move(program));
    index_.emplace(lru_.front().first, lru_.begin());
    while (lru_.size() > capacity_) {
      index_.erase(lru_.back().first);
      lru_.pop_back();
      ++evictions_;
    }
    return lru_.front().second;
  }

  mutable std::mutex mutex_;
  std::size_t capacity_;
  std::list<Entry> lru_;  // most recently used first
  std::unordered_map<Key, typename std::list<Entry>::iterator, KeyHash> index_;
  std::uint64_t hits_ = 0;
  std::uint64_t misses_ = 0;
  std::uint64_t evictions_ = 0;
};

}  // namespace computegraph
