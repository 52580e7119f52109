// The thread-count setting of our kernels; OpenBLAS kept on one thread.
#include "tenferro/threads.hpp"

#include <cblas.h>
#include <omp.h>

#include <atomic>
#include <string>

#include "tenferro/error.hpp"

namespace tenferro {

namespace {
// The setting, process-wide (0: never set, OpenMP's default applies: OMP_NUM_THREADS, else the
// number of cores). Our kernels' pool (kernels/parallel.hpp) reads it at every call.
std::atomic<int> requested_threads{0};

// OpenBLAS's own thread count, set once when the library loads: 1, the count every call of ours
// runs with (kernels/blas_threads.hpp), so that OpenBLAS never resizes its buffers between our
// calls. openblas_set_num_threads also sets the calling thread's OpenMP count, restored here.
[[maybe_unused]] const bool blas_on_one_thread = [] {
  const int saved = omp_get_max_threads();
  openblas_set_num_threads(1);
  omp_set_num_threads(saved);
  return true;
}();
}  // namespace

void set_num_threads(int n) {
  if (n < 1) throw Error("set_num_threads: expected a thread count of at least 1, got " + std::to_string(n));
  requested_threads.store(n, std::memory_order_relaxed);
}

int num_threads() {
  const int n = requested_threads.load(std::memory_order_relaxed);
  return n > 0 ? n : omp_get_max_threads();
}

}  // namespace tenferro
