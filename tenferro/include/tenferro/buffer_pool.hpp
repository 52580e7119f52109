#pragma once
// The buffer pool behind every tensor's storage.
//
// Tensor storage is taken from a process-wide pool of freed buffers, bucketed by size class
// (multiples of 64 bytes below 4 KiB; above, sizes rounded up to at most 1/8 above the request),
// and goes back to the pool when its last Tensor is dropped. Small buffers are pooled too: a
// 64-byte-aligned allocation from the system costs more than the pool's lock and look-up. A compiled program releases each intermediate at its last use, so
// the next instruction, or the next run of the same program, reuses the buffer instead of asking
// the system for fresh pages: repeated runs allocate nothing from the system once warm.
//
// The pool keeps at most `capacity` bytes of free buffers in its shared part (default a quarter of
// physical memory, at least 1 GiB: what a program keeps is at most what it once had live, and a
// program that peaks above the capacity faults its large buffers in anew on every run; 0 disables
// pooling: sanitizer builds use 0 so that AddressSanitizer sees every use after free).
// Thread-safe. Each thread also keeps a few recently freed buffers of up to 1 MiB in a cache of its
// own (at most 4 MiB, or the capacity if smaller), taken and refilled without the shared lock;
// they count in the stats, and trim_buffer_pool and set_buffer_pool_capacity empty them too.
#include <cstddef>
#include <cstdint>

namespace tenferro {

struct BufferPoolStats {
  std::uint64_t hits = 0;        // allocations served from the pool
  std::uint64_t misses = 0;      // allocations that went to the system
  std::size_t cached_bytes = 0;  // free bytes held now
  std::size_t capacity = 0;
};

BufferPoolStats buffer_pool_stats();
/// Sets the most free bytes the pool keeps (dropping buffers above it now).
void set_buffer_pool_capacity(std::size_t bytes);
/// Returns every free buffer to the system.
void trim_buffer_pool();

/// Bytes of tensor storage in use now, process-wide (the pool's granted sizes of the buffers that
/// tensors hold; free buffers kept by the pool do not count).
std::size_t tensor_bytes_in_use();

/// The peak of tensor storage while a computation runs: peak_bytes() is the most bytes in use at
/// any moment since the meter was made (or reset), less those in use then, so a gradient's peak
/// is measured without the arguments it was given. Every tensor allocated by any thread counts;
/// one meter at a time (a meter made while another lives restarts the common high-water mark).
class MemoryMeter {
 public:
  MemoryMeter() { reset(); }
  /// Starts measuring again from now.
  void reset();
  std::size_t peak_bytes() const;

 private:
  std::size_t start_ = 0;
};

namespace detail {
/// 64-byte aligned storage of at least `bytes` bytes (zeroed if `zero`), returned to the pool when
/// the last owner drops it.
std::byte* pool_allocate(std::size_t bytes, std::size_t& granted);
void pool_release(std::byte* p, std::size_t granted);
}  // namespace detail

}  // namespace tenferro
