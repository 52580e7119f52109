// Thread-count setting shared by our OpenMP kernels and OpenBLAS.
#include "tenferro/threads.hpp"

#include <cblas.h>
#include <omp.h>

#include <atomic>
#include <string>

#include "tenferro/error.hpp"

namespace tenferro {

namespace {
// The setting, process-wide (0: never set, OpenMP's default applies). omp_set_num_threads alone
// would only set the calling thread's count: a std::thread started later would begin from the
// default again, while OpenBLAS's count is process-wide.
std::atomic<int> requested_threads{0};
}  // namespace

void set_num_threads(int n) {
  if (n < 1) throw Error("set_num_threads: expected a thread count of at least 1, got " + std::to_string(n));
  requested_threads.store(n, std::memory_order_relaxed);
  omp_set_num_threads(n);
  openblas_set_num_threads(n);
}

int num_threads() {
  const int n = requested_threads.load(std::memory_order_relaxed);
  return n > 0 ? n : omp_get_max_threads();
}

}  // namespace tenferro
