// The pool behind parallel_chunks (see parallel.hpp).
//
// One job at a time: the caller that gets the pool's mutex publishes its job and wakes the
// workers; every thread (caller included) takes a seat and claims chunk indices from its seat's
// share (Share, below), then from the others'. The caller then withdraws the job and waits for two
// things only: every claimed chunk finished, and no worker still between "entered" and "left" (a
// worker that entered may be about to claim; the window is a few instructions, so this wait is
// short unless the worker is preempted exactly there). A worker that never got to run is not
// waited for.
//
// Workers spin for a short while after a job (back-to-back kernels are common: a fused kernel per
// step of a loop), then sleep on the generation counter (C++20 atomic wait, a futex on Linux).
#include "parallel.hpp"

#include <pthread.h>

#include <atomic>
#include <chrono>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define TENFERRO_CPU_RELAX() _mm_pause()
#else
#define TENFERRO_CPU_RELAX() ((void)0)
#endif

namespace tenferro::exec {

namespace {

thread_local bool inside_body = false;

/// Seat s's share of the chunks, [next, end): claimed from the front by its owner first and by
/// the other seats once their own shares are gone. Shares are contiguous and the same for every
/// call with the same counts, so a loop run again and again (a scan's steps) finds each share's
/// data in the cache of the core that ran it last time, as with OpenMP's static schedule; only
/// the chunks of a late seat move.
struct alignas(64) Share {
  std::atomic<std::int64_t> next{0};
  std::int64_t end = 0;
};

struct Job {
  void (*call)(void*, std::int64_t) = nullptr;
  void* context = nullptr;
  std::int64_t chunks = 0;
  int helpers = 0;                     // pool threads allowed to join (threads - 1)
  std::vector<Share> shares;           // one per seat: the caller's is 0
  std::atomic<std::int64_t> done{0};   // chunks finished (run, or skipped after a failure)
  std::atomic<int> joined{0};          // pool threads that took a seat
  std::atomic<bool> failed{false};
  std::exception_ptr error;            // the first exception, written by the thread that set failed

  Job(void (*c)(void*, std::int64_t), void* ctx, std::int64_t n, int threads)
      : call(c), context(ctx), chunks(n), helpers(threads - 1), shares(static_cast<std::size_t>(threads)) {
    for (std::size_t s = 0; s < shares.size(); ++s) {
      const auto t = static_cast<std::int64_t>(shares.size());
      shares[s].next.store(static_cast<std::int64_t>(s) * n / t);
      shares[s].end = (static_cast<std::int64_t>(s) + 1) * n / t;
    }
  }
};

/// Runs every chunk on the calling thread, in order. This is not a parallel body: the chunks
/// have the threads to themselves, so a nested loop may use them.
void run_here(std::int64_t chunks, void (*call)(void*, std::int64_t), void* context) {
  for (std::int64_t c = 0; c < chunks; ++c) call(context, c);
}

/// Claims and runs chunks until none are left: seat `seat`'s own share first, then the others'.
void work_on(Job& job, std::size_t seat) {
  const bool saved = inside_body;
  inside_body = true;
  const std::size_t seats = job.shares.size();
  for (std::size_t k = 0; k < seats; ++k) {
    Share& share = job.shares[(seat + k) % seats];
    for (;;) {
      const std::int64_t c = share.next.fetch_add(1);
      if (c >= share.end) break;
      if (!job.failed.load(std::memory_order_relaxed)) {
        try {
          job.call(job.context, c);
        } catch (...) {
          if (!job.failed.exchange(true)) job.error = std::current_exception();
        }
      }
      job.done.fetch_add(1);
    }
  }
  inside_body = saved;
}

class Pool {
 public:
  /// The pool, created on first use and never destroyed: its threads are detached and sleep in a
  /// futex when idle, and the process may exit while they do. A child process made by fork() has
  /// none of the parent's threads, and maybe a job the parent was running: it starts a new pool.
  static Pool& instance() {
    static const bool registered = [] {
      pthread_atfork(nullptr, nullptr, [] { current().store(new Pool); });
      return true;
    }();
    (void)registered;
    Pool* pool = current().load();
    if (pool == nullptr) {
      Pool* fresh = new Pool;
      if (current().compare_exchange_strong(pool, fresh)) return *fresh;
      delete fresh;  // another thread made one first
    }
    return *pool;
  }

  void run(std::int64_t chunks, int threads, void (*call)(void*, std::int64_t), void* context) {
    std::unique_lock lock(busy_, std::try_to_lock);
    if (!lock.owns_lock()) {  // another thread's loop holds the pool: run alone
      run_here(chunks, call, context);
      return;
    }
    const int helpers = threads - 1;
    ensure_workers(helpers);
    Job job(call, context, chunks, threads);
    job_.store(&job);
    generation_.fetch_add(1);
    if (sleepers_.load() > 0) generation_.notify_all();
    work_on(job, 0);
    job_.store(nullptr);
    wait_until([&] { return job.done.load() == chunks && inside_.load() == 0; });
    if (job.error) std::rethrow_exception(job.error);
  }

 private:
  static std::atomic<Pool*>& current() {
    static std::atomic<Pool*> pool{nullptr};
    return pool;
  }

  /// Spins briefly, then yields the core until `ready()`.
  template <class Ready>
  static void wait_until(Ready ready) {
    for (int spin = 0; !ready(); ++spin) {
      if (spin < 4096) {
        TENFERRO_CPU_RELAX();
      } else {
        std::this_thread::yield();
      }
    }
  }

  void ensure_workers(int count) {
    if (started_.load() >= count) return;
    std::lock_guard guard(grow_);
    while (started_.load() < count) {
      // The worker starts from the generation before the job being published, so it joins it.
      std::thread([this, seen = generation_.load()] { worker(seen); }).detach();
      started_.fetch_add(1);
    }
  }

  void worker(std::uint64_t seen) {
    for (;;) {
      // Spin about 50 microseconds for the next job before sleeping.
      const auto spin_until = std::chrono::steady_clock::now() + std::chrono::microseconds(50);
      for (int k = 0; generation_.load(std::memory_order_relaxed) == seen; ++k) {
        TENFERRO_CPU_RELAX();
        if ((k & 63) == 63 && std::chrono::steady_clock::now() > spin_until) {
          sleepers_.fetch_add(1);
          generation_.wait(seen);
          sleepers_.fetch_sub(1);
        }
      }
      seen = generation_.load();
      inside_.fetch_add(1);
      if (Job* job = job_.load(); job != nullptr) {
        const int seat = job->joined.fetch_add(1) + 1;
        if (seat <= job->helpers) work_on(*job, static_cast<std::size_t>(seat));
      }
      inside_.fetch_sub(1);
    }
  }

  std::mutex busy_;                       // held by the caller whose job is published
  std::mutex grow_;                       // starting workers
  std::atomic<Job*> job_{nullptr};        // the published job, or none
  std::atomic<std::uint64_t> generation_{0};
  std::atomic<int> sleepers_{0};          // workers asleep (or about to be) on generation_
  std::atomic<int> inside_{0};            // workers between entering and leaving a job
  std::atomic<int> started_{0};
};

}  // namespace

bool in_parallel_body() { return inside_body; }

namespace detail {
void parallel_chunks_erased(std::int64_t chunks, int threads, void (*call)(void*, std::int64_t), void* context) {
  if (chunks <= 0) return;
  if (threads <= 1 || chunks == 1 || inside_body) {
    run_here(chunks, call, context);
    return;
  }
  Pool::instance().run(chunks, threads, call, context);
}
}  // namespace detail

}  // namespace tenferro::exec
