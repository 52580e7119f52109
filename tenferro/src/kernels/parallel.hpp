#pragma once
// Internal: the one way our kernels run work on several threads.
//
// parallel_chunks(chunks, threads, body) calls body(c) once for every c in [0, chunks) and returns
// when every call has returned. The caller works too: each thread starts on its own contiguous
// share of the chunks and, when that is done, claims chunks one at a time from the others'. What
// sets it apart from an OpenMP parallel loop is that nobody waits for a thread that has not
// started: when another process keeps a core busy, a pool thread may not run for a whole
// scheduler time slice (milliseconds), and an OpenMP team waits for it at its barrier, every
// region. Here the caller takes the chunks that thread would have taken and returns; the thread,
// when it runs, finds nothing left. (Measured on a 2-core machine beside one busy loop: an LSTM
// layer's gradient, whose steps are many small kernels, slowed 10.7x with OpenMP teams, 1.6x here.)
//
// Contract for bodies: a body must not depend on which thread runs it or in which order chunks run
// (chunk c always covers the same elements; a reduction keeps one partial result per chunk, added in
// chunk order by the caller), so results are the same for any thread count and any timing. The
// first exception a body throws is rethrown to the caller once the chunks already started have
// finished; chunks not yet started are skipped.
//
// It runs everything on the calling thread when threads <= 1 or chunks <= 1, inside a body that
// runs beside others (nested parallelism: the outer loop already uses the threads), and while
// another thread's loop holds the pool (two user threads calling kernels at once: the second runs
// alone rather than queueing).
#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <utility>

namespace tenferro::exec {

namespace detail {
void parallel_chunks_erased(std::int64_t chunks, int threads, void (*call)(void*, std::int64_t), void* context);
}  // namespace detail

template <class Body>
void parallel_chunks(std::int64_t chunks, int threads, Body&& body) {
  using B = std::remove_reference_t<Body>;
  detail::parallel_chunks_erased(
      chunks, threads, [](void* context, std::int64_t c) { (*static_cast<B*>(context))(c); },
      const_cast<void*>(static_cast<const void*>(&body)));
}

/// body(begin, end) over consecutive ranges that cover [0, count): about four per thread, so a thread
/// that starts late leaves its share to the others.
template <class Body>
void parallel_ranges(std::int64_t count, int threads, Body&& body) {
  if (count <= 0) return;
  const std::int64_t ranges = threads <= 1 ? 1 : std::min<std::int64_t>(count, std::int64_t{4} * threads);
  parallel_chunks(ranges, threads, [&](std::int64_t g) { body(g * count / ranges, (g + 1) * count / ranges); });
}

/// Whether the calling thread runs a parallel_chunks body beside other threads (where a nested
/// call runs serially).
bool in_parallel_body();

}  // namespace tenferro::exec
