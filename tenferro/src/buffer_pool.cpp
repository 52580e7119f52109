// Size-class buffer pool for tensor storage (see buffer_pool.hpp).
#include "tenferro/buffer_pool.hpp"

#include <cstdlib>
#include <mutex>
#include <new>
#include <unordered_map>
#include <vector>

namespace tenferro {

namespace {
constexpr std::size_t kAlign = 64;
constexpr std::size_t kSmall = 4096;  // below: size classes are multiples of kAlign

#ifdef TENFERRO_SANITIZED_BUILD
constexpr std::size_t kDefaultCapacity = 0;
#else
constexpr std::size_t kDefaultCapacity = std::size_t{1} << 30;
#endif

/// The size class of a request: multiples of 64 bytes below 4 KiB; above, the next of the eight
/// evenly spaced sizes between consecutive powers of two (at most 12.5 % slack).
std::size_t size_class(std::size_t bytes) {
  bytes = std::max<std::size_t>(bytes, 1);
  if (bytes < kSmall) return (bytes + kAlign - 1) / kAlign * kAlign;
  std::size_t power = std::size_t{1} << (63 - __builtin_clzll(bytes));
  std::size_t step = power / 8;
  return (bytes + step - 1) / step * step;
}

struct Pool {
  std::mutex mutex;
  std::unordered_map<std::size_t, std::vector<std::byte*>> free;
  std::size_t cached = 0;
  std::size_t capacity = kDefaultCapacity;
  std::uint64_t hits = 0, misses = 0;

  void drop_all_locked() {
    for (auto& [size, list] : free) {
      for (std::byte* p : list) std::free(p);
    }
    free.clear();
    cached = 0;
  }
};

Pool& pool() {
  // Leaked on purpose: tensors in static storage may be destroyed after any static pool would be.
  static Pool* p = new Pool;
  return *p;
}

std::byte* system_allocate(std::size_t size) {
  auto* p = static_cast<std::byte*>(std::aligned_alloc(kAlign, size));
  if (!p) throw std::bad_alloc();
  return p;
}
}  // namespace

namespace detail {

std::byte* pool_allocate(std::size_t bytes, std::size_t& granted) {
  granted = size_class(bytes);
  {
    Pool& p = pool();
    std::lock_guard lock(p.mutex);
    auto it = p.free.find(granted);
    if (it != p.free.end() && !it->second.empty()) {
      std::byte* b = it->second.back();
      it->second.pop_back();
      p.cached -= granted;
      ++p.hits;
      return b;
    }
    ++p.misses;
  }
  return system_allocate(granted);
}

void pool_release(std::byte* b, std::size_t granted) {
  {
    Pool& p = pool();
    std::lock_guard lock(p.mutex);
    if (p.cached + granted <= p.capacity) {
      p.free[granted].push_back(b);
      p.cached += granted;
      return;
    }
  }
  std::free(b);
}

}  // namespace detail

BufferPoolStats buffer_pool_stats() {
  Pool& p = pool();
  std::lock_guard lock(p.mutex);
  return {p.hits, p.misses, p.cached, p.capacity};
}

void set_buffer_pool_capacity(std::size_t bytes) {
  Pool& p = pool();
  std::lock_guard lock(p.mutex);
  p.capacity = bytes;
  if (p.cached > bytes) p.drop_all_locked();
}

void trim_buffer_pool() {
  Pool& p = pool();
  std::lock_guard lock(p.mutex);
  p.drop_all_locked();
}

}  // namespace tenferro
