// Thread-count setting shared by our OpenMP kernels and OpenBLAS.
#include "tenferro/threads.hpp"

#include <cblas.h>
#include <omp.h>

#include <string>

#include "tenferro/error.hpp"

namespace tenferro {

void set_num_threads(int n) {
  if (n < 1) throw Error("set_num_threads: expected a thread count of at least 1, got " + std::to_string(n));
  omp_set_num_threads(n);
  openblas_set_num_threads(n);
}

int num_threads() { return omp_get_max_threads(); }

}  // namespace tenferro
