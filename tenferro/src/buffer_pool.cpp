// Size-class buffer pool for tensor storage (see buffer_pool.hpp).
//
// Two levels. Each thread keeps a few free buffers of the sizes it used last in its own cache,
// guarded by its own mutex, which only trim and capacity changes from other threads ever contend
// for: threads that allocate and free at the same time (the columns of a Hessian, OpenMP workers)
// then do not queue on one lock. Behind the caches, one shared pool keeps the rest, bucketed by
// size class, under a global lock. A buffer may be freed by another thread than the one that took
// it; it goes to the freeing thread's cache.
#include "tenferro/buffer_pool.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <new>
#include <thread>
#include <unordered_map>
#include <vector>

#include <sys/mman.h>
#include <unistd.h>

namespace tenferro {

namespace {
constexpr std::size_t kAlign = 64;
constexpr std::size_t kSmall = 4096;  // below: size classes are multiples of kAlign

/// The default capacity: a quarter of physical memory, and at least 1 GiB. Programs whose live
/// tensors peak above what the pool keeps fault their large buffers in anew on every run: the
/// TRG example's gradient and Hessian peak at 3.8 GB, and with 1 GiB kept 8% of each run went
/// to page faults. The pool never holds more than the program once had live.
std::size_t default_capacity() {
#ifdef TENFERRO_SANITIZED_BUILD
  return 0;
#else
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  const std::size_t physical = pages > 0 && page > 0 ? static_cast<std::size_t>(pages) * static_cast<std::size_t>(page) : 0;
  return std::max(std::size_t{1} << 30, physical / 4);
#endif
}

/// Per-thread cache limits: buffers of at most kMaxThreadBuffer bytes, in kBins sizes, kThreadBytes
/// in all; of one size, at most kPerSmallBin buffers below kSmall bytes and kPerBin above. Small
/// buffers come many of one size at once: a loop body's step makes one per value (the ADBench LSTM's
/// backward step, 23 vectors of 14 doubles), and with 4 per size the rest went through the shared
/// pool's lock, 13% of that gradient's time.
constexpr std::size_t kBins = 16;
constexpr std::size_t kPerBin = 4;
constexpr std::size_t kPerSmallBin = 64;
std::size_t per_bin(std::size_t size) { return size < kSmall ? kPerSmallBin : kPerBin; }
constexpr std::size_t kMaxThreadBuffer = std::size_t{1} << 20;
constexpr std::size_t kThreadBytes = std::size_t{4} << 20;

/// The size class of a request: multiples of 64 bytes below 4 KiB; above, the next of the eight
/// evenly spaced sizes between consecutive powers of two (at most 12.5 % slack).
std::size_t size_class(std::size_t bytes) {
  bytes = std::max<std::size_t>(bytes, 1);
  if (bytes < kSmall) return (bytes + kAlign - 1) / kAlign * kAlign;
  std::size_t power = std::size_t{1} << (63 - __builtin_clzll(bytes));
  std::size_t step = power / 8;
  return (bytes + step - 1) / step * step;
}

/// A lock that spins: a thread cache's lock is almost never contended (only trim and capacity
/// changes take another thread's), and a std::mutex's lock and unlock around every allocation and
/// release cost a tenth of a small loop body's step.
class SpinLock {
 public:
  void lock() noexcept {
    while (held_.exchange(true, std::memory_order_acquire)) {
      while (held_.load(std::memory_order_relaxed)) std::this_thread::yield();
    }
  }
  void unlock() noexcept { held_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> held_{false};
};

/// One thread's free buffers (see the file comment).
struct ThreadCache {
  struct Bin {
    std::size_t size = 0;  // meaningful while count > 0
    std::size_t count = 0;
    std::byte* buffers[kPerSmallBin] = {};
  };
  SpinLock mutex;
  Bin bins[kBins];
  std::size_t bytes = 0;
  std::uint64_t hits = 0;

  /// A cached buffer of exactly `size` bytes, or nullptr. Caller holds `mutex`.
  std::byte* take(std::size_t size) {
    for (Bin& bin : bins) {
      if (bin.count > 0 && bin.size == size) {
        bytes -= size;
        ++hits;
        return bin.buffers[--bin.count];
      }
    }
    return nullptr;
  }
  /// Keeps `b` if there is room within `limit` bytes. Caller holds `mutex`.
  bool keep(std::byte* b, std::size_t size, std::size_t limit) {
    if (size > kMaxThreadBuffer || bytes + size > limit) return false;
    Bin* free_bin = nullptr;
    for (Bin& bin : bins) {
      if (bin.count > 0 && bin.size == size) {
        if (bin.count == per_bin(size)) return false;
        bin.buffers[bin.count++] = b;
        bytes += size;
        return true;
      }
      if (bin.count == 0 && free_bin == nullptr) free_bin = &bin;
    }
    if (free_bin == nullptr) return false;
    free_bin->size = size;
    free_bin->buffers[0] = b;
    free_bin->count = 1;
    bytes += size;
    return true;
  }
  /// Hands every buffer to `sink(buffer, size)`. Caller holds `mutex`.
  template <class Sink>
  void drain(Sink&& sink) {
    for (Bin& bin : bins) {
      while (bin.count > 0) sink(bin.buffers[--bin.count], bin.size);
    }
    bytes = 0;
  }
};

struct Pool {
  std::mutex mutex;
  std::unordered_map<std::size_t, std::vector<std::byte*>> free;
  std::size_t cached = 0;
  std::size_t capacity = default_capacity();
  /// The most bytes one thread cache keeps: kThreadBytes, or the capacity if smaller. 0 turns the
  /// caches off, so that with pooling off every release reaches the system (as sanitizers need).
  std::atomic<std::size_t> thread_limit{std::min(kThreadBytes, capacity)};
  std::uint64_t hits = 0, misses = 0;
  /// Live thread caches, and the hits of caches whose threads have ended.
  std::vector<ThreadCache*> caches;
  std::uint64_t retired_hits = 0;

  void drop_all_locked() {
    for (auto& [size, list] : free) {
      for (std::byte* p : list) std::free(p);
    }
    free.clear();
    cached = 0;
  }
  /// Returns every thread cache's buffers to the system. Caller holds `mutex`.
  void drop_thread_caches_locked() {
    for (ThreadCache* cache : caches) {
      std::lock_guard lock(cache->mutex);
      cache->drain([](std::byte* b, std::size_t) { std::free(b); });
    }
  }
};

Pool& pool() {
  // Leaked on purpose: tensors in static storage may be destroyed after any static pool would be.
  static Pool* p = new Pool;
  return *p;
}

/// The calling thread's cache, registered with the pool while the thread lives.
struct ThreadCacheHandle {
  ThreadCache cache;
  ThreadCacheHandle() {
    Pool& p = pool();
    std::lock_guard lock(p.mutex);
    p.caches.push_back(&cache);
  }
  ~ThreadCacheHandle();
};

/// Trivially destructible, so it can be read after the thread's other thread-locals are gone:
/// a tensor dropped then (by a later thread-local or static destructor) bypasses the cache.
thread_local bool thread_cache_gone = false;

ThreadCacheHandle::~ThreadCacheHandle() {
  thread_cache_gone = true;
  Pool& p = pool();
  std::lock_guard lock(p.mutex);
  p.caches.erase(std::find(p.caches.begin(), p.caches.end(), &cache));
  std::lock_guard cache_lock(cache.mutex);
  p.retired_hits += cache.hits;
  cache.drain([&](std::byte* b, std::size_t size) {
    if (p.cached + size <= p.capacity) {
      p.free[size].push_back(b);
      p.cached += size;
    } else {
      std::free(b);
    }
  });
}

/// The calling thread's cache, or nullptr when thread caching is off or the thread is exiting.
ThreadCache* thread_cache() {
  if (thread_cache_gone || pool().thread_limit.load(std::memory_order_relaxed) == 0) return nullptr;
  thread_local ThreadCacheHandle handle;
  return &handle.cache;
}

/// Each block carries kAlign bytes past its granted size that no tensor uses: OpenBLAS's vectorized
/// kernels may read a few elements past the last one they use (seen inside zgesdd's zgemv_n), which
/// is harmless unless the block ends a mapped page.
///
/// Blocks of at least kHugeFrom bytes are aligned to 2 MiB and asked to be backed by transparent
/// huge pages (madvise; Debian's default THP mode honours only such requests). With 4 KiB pages,
/// data beyond the 6 MiB that the second-level TLB covers (1536 entries) takes a page walk on most
/// reads that do not stream: take of 10^6 random rows of a 128 MB table went from 33-35 ms to
/// 25-27 ms on one thread, and a 1024^3 product's time fell by 5% in f64 (three 8 MiB operands);
/// with the threshold at 4 MiB instead of 8, f32's (three 4 MiB operands) fell by 3-7%. Where the
/// kernel has no huge page at hand it falls back to small pages; the pool keeps the block, so the
/// cost of faulting it in is paid once.
constexpr std::size_t kHugePage = std::size_t{2} << 20;
constexpr std::size_t kHugeFrom = std::size_t{4} << 20;

std::byte* system_allocate(std::size_t size) {
  if (size >= kHugeFrom) {
    const std::size_t total = (size + kAlign + kHugePage - 1) / kHugePage * kHugePage;
    auto* p = static_cast<std::byte*>(std::aligned_alloc(kHugePage, total));
    if (!p) throw std::bad_alloc();
    madvise(p, total, MADV_HUGEPAGE);  // advice only: a refusal leaves small pages
    return p;
  }
  auto* p = static_cast<std::byte*>(std::aligned_alloc(kAlign, size + kAlign));
  if (!p) throw std::bad_alloc();
  return p;
}

/// Bytes in use (granted to live tensors) and their high-water mark since the last MemoryMeter
/// reset; relaxed: a meter reads them after the computation it measures has joined its threads.
std::atomic<std::size_t> bytes_in_use{0}, bytes_peak{0};

void count_allocation(std::size_t granted) {
  const std::size_t now = bytes_in_use.fetch_add(granted, std::memory_order_relaxed) + granted;
  std::size_t peak = bytes_peak.load(std::memory_order_relaxed);
  while (now > peak && !bytes_peak.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
}
}  // namespace

std::size_t tensor_bytes_in_use() { return bytes_in_use.load(std::memory_order_relaxed); }

void MemoryMeter::reset() {
  start_ = bytes_in_use.load(std::memory_order_relaxed);
  bytes_peak.store(start_, std::memory_order_relaxed);
}

std::size_t MemoryMeter::peak_bytes() const {
  const std::size_t peak = bytes_peak.load(std::memory_order_relaxed);
  return peak > start_ ? peak - start_ : 0;
}

namespace detail {

std::byte* pool_allocate(std::size_t bytes, std::size_t& granted) {
  granted = size_class(bytes);
  count_allocation(granted);
  if (ThreadCache* cache = thread_cache()) {
    std::lock_guard lock(cache->mutex);
    if (std::byte* b = cache->take(granted)) return b;
  }
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
  bytes_in_use.fetch_sub(granted, std::memory_order_relaxed);
  if (ThreadCache* cache = thread_cache()) {
    std::lock_guard lock(cache->mutex);
    if (cache->keep(b, granted, pool().thread_limit.load(std::memory_order_relaxed))) return;
  }
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
  BufferPoolStats stats{p.hits + p.retired_hits, p.misses, p.cached, p.capacity};
  for (ThreadCache* cache : p.caches) {
    std::lock_guard cache_lock(cache->mutex);
    stats.hits += cache->hits;
    stats.cached_bytes += cache->bytes;
  }
  return stats;
}

void set_buffer_pool_capacity(std::size_t bytes) {
  Pool& p = pool();
  std::lock_guard lock(p.mutex);
  p.capacity = bytes;
  p.thread_limit.store(std::min(kThreadBytes, bytes), std::memory_order_relaxed);
  p.drop_thread_caches_locked();
  if (p.cached > bytes) p.drop_all_locked();
}

void trim_buffer_pool() {
  Pool& p = pool();
  std::lock_guard lock(p.mutex);
  p.drop_thread_caches_locked();
  p.drop_all_locked();
}

}  // namespace tenferro
