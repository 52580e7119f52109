// The buffer pool under threads: buffers taken and freed by different threads are never handed to
// two owners at once, a thread's cache goes back to the shared pool when the thread ends, and
// trim_buffer_pool and a capacity of 0 empty every thread's cache; large blocks ask for huge pages.
#include "tenferro/buffer_pool.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

namespace tf = tenferro;

namespace {

struct Buffer {
  std::byte* data;
  std::size_t granted;
  std::size_t bytes;
};

Buffer take(std::size_t bytes) {
  std::size_t granted = 0;
  std::byte* p = tf::detail::pool_allocate(bytes, granted);
  EXPECT_GE(granted, bytes);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % 64, 0u) << "storage must be 64-byte aligned";
  return {p, granted, bytes};
}

void give_back(const Buffer& b) { tf::detail::pool_release(b.data, b.granted); }

/// Turns pooling on for one test (sanitizer builds default to off), restoring the capacity after:
/// the pool's own bookkeeping is then checked by AddressSanitizer too.
class BufferPool : public ::testing::Test {
 protected:
  void SetUp() override {
    saved_capacity_ = tf::buffer_pool_stats().capacity;
    tf::set_buffer_pool_capacity(std::size_t{64} << 20);
  }
  void TearDown() override {
    tf::trim_buffer_pool();
    tf::set_buffer_pool_capacity(saved_capacity_);
  }

 private:
  std::size_t saved_capacity_ = 0;
};

TEST_F(BufferPool, ConcurrentOwnersNeverShareABuffer) {
  // Each thread fills every buffer it holds with its own pattern and checks it before freeing:
  // a buffer handed to two owners at once would be overwritten by the other.
  constexpr int kThreads = 4;
  std::atomic<int> corrupted{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &corrupted] {
      std::mt19937 rng(100 + t);
      std::vector<Buffer> held;
      const auto pattern = static_cast<unsigned char>(t + 1);
      for (int step = 0; step < 4000; ++step) {
        if (held.size() < 8 && (held.empty() || rng() % 2 == 0)) {
          // A few sizes, so that threads compete for the same size classes.
          const std::size_t sizes[] = {8, 200, 4096, 9000, 70000};
          Buffer b = take(sizes[rng() % 5]);
          std::memset(b.data, pattern, b.bytes);
          held.push_back(b);
        } else {
          const std::size_t i = rng() % held.size();
          const Buffer b = held[i];
          for (std::size_t k = 0; k < b.bytes; ++k) {
            if (static_cast<unsigned char>(b.data[k]) != pattern) {
              ++corrupted;
              break;
            }
          }
          give_back(b);
          held.erase(held.begin() + static_cast<std::ptrdiff_t>(i));
        }
      }
      for (const Buffer& b : held) give_back(b);
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(corrupted.load(), 0);
}

TEST_F(BufferPool, BuffersFreedOnAnotherThreadAreReused) {
  tf::trim_buffer_pool();
  std::vector<Buffer> taken;
  for (int i = 0; i < 6; ++i) taken.push_back(take(3000));
  std::thread freer([&] {
    for (const Buffer& b : taken) give_back(b);
  });
  freer.join();
  // The freeing thread has ended: its cache went to the shared pool, so every byte is still held.
  const auto after_exit = tf::buffer_pool_stats();
  EXPECT_EQ(after_exit.cached_bytes, 6 * taken[0].granted);
  const auto hits_before = after_exit.hits;
  for (int i = 0; i < 6; ++i) taken[i] = take(3000);
  EXPECT_EQ(tf::buffer_pool_stats().hits, hits_before + 6) << "the freed buffers were not reused";
  for (const Buffer& b : taken) give_back(b);
}

TEST_F(BufferPool, TrimEmptiesEveryThreadsCache) {
  std::atomic<bool> released{false}, trimmed{false};
  std::thread holder([&] {
    for (int i = 0; i < 3; ++i) give_back(take(1000));  // kept in this thread's cache
    released = true;
    while (!trimmed) std::this_thread::yield();
    // The cache was emptied from the other thread: a new request is a miss.
    const auto misses = tf::buffer_pool_stats().misses;
    give_back(take(1000));
    EXPECT_EQ(tf::buffer_pool_stats().misses, misses + 1);
  });
  while (!released) std::this_thread::yield();
  EXPECT_GT(tf::buffer_pool_stats().cached_bytes, 0u);
  tf::trim_buffer_pool();
  EXPECT_EQ(tf::buffer_pool_stats().cached_bytes, 0u);
  trimmed = true;
  holder.join();
}

// The documented default (buffer_pool.hpp): a quarter of physical memory, at least 1 GiB, so that a
// program whose tensors peak at a few GB reuses its buffers instead of faulting them in per run.
TEST(BufferPoolDefault, CapacityIsAQuarterOfMemoryAndAtLeastOneGiB) {
  const std::size_t capacity = tf::buffer_pool_stats().capacity;
  if (capacity == 0) GTEST_SKIP() << "pooling is off in sanitizer builds";
  const auto physical = static_cast<std::size_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  EXPECT_EQ(capacity, std::max(std::size_t{1} << 30, physical / 4));
}

/// The first line of a file, or "" when it cannot be read.
std::string first_line(const char* path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

/// The kernel's THPeligible flag (/proc/self/smaps) of the mapping that holds `p`: 1 when its
/// pages may be huge pages. -1 when no mapping holds `p` or the kernel does not report the flag.
int thp_eligible(const void* p) {
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    std::uintptr_t start = 0, end = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> start >> dash >> end && dash == '-' && line.find(':') > line.find(' ')) {
      inside = start <= at && at < end;
    } else if (inside && line.rfind("THPeligible:", 0) == 0) {
      return std::stoi(line.substr(12));
    }
  }
  return -1;
}

// Blocks of at least 4 MiB are 2 MiB aligned and advised to be huge pages (buffer_pool.cpp,
// kHugeFrom), checked through the kernel's own account of the mapping. (Whether a smaller block is
// eligible depends on where malloc put it: a heap range once advised stays so.)
TEST_F(BufferPool, LargeBlocksAskForHugePages) {
  const std::string mode = first_line("/sys/kernel/mm/transparent_hugepage/enabled");
  if (mode.empty() || mode.find("[never]") != std::string::npos) {
    GTEST_SKIP() << "transparent huge pages are off on this machine (" << mode << ")";
  }
  const Buffer large = take(std::size_t{16} << 20);
  std::memset(large.data, 1, large.bytes);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(large.data) % (std::size_t{2} << 20), 0u);
  const int eligible = thp_eligible(large.data);
  if (eligible == -1) {
    give_back(large);
    GTEST_SKIP() << "this kernel reports no THPeligible in /proc/self/smaps";
  }
  EXPECT_EQ(eligible, 1) << "THP mode " << mode;
  give_back(large);
}

TEST_F(BufferPool, CapacityZeroKeepsNothing) {
  for (int i = 0; i < 10; ++i) give_back(take(512));
  EXPECT_GT(tf::buffer_pool_stats().cached_bytes, 0u);
  tf::set_buffer_pool_capacity(0);
  EXPECT_EQ(tf::buffer_pool_stats().cached_bytes, 0u);
  for (int i = 0; i < 10; ++i) give_back(take(512));
  EXPECT_EQ(tf::buffer_pool_stats().cached_bytes, 0u);
}

}  // namespace
