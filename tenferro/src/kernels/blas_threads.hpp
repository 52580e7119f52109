#pragma once
// Internal: OpenBLAS on the calling thread alone.
//
// Debian's OpenBLAS is its OpenMP build, which sizes each call's team from the calling thread's
// OpenMP thread count (omp_get_max_threads), whatever openblas_set_num_threads said before. Our
// threads come from our own pool (kernels/parallel.hpp), which shares out the blocks of a GEMM
// (kernels/blas_gemm.hpp), so every call of ours into OpenBLAS or LAPACK runs under this guard: the
// calling thread's OpenMP count is 1 for the call and restored after it (a user's OpenMP loops on
// that thread keep their setting).
#include <omp.h>

namespace tenferro::detail {

class OneBlasThread {
 public:
  OneBlasThread() : saved_(omp_get_max_threads()) {
    if (saved_ != 1) omp_set_num_threads(1);
  }
  ~OneBlasThread() {
    if (saved_ != 1) omp_set_num_threads(saved_);
  }
  OneBlasThread(const OneBlasThread&) = delete;
  OneBlasThread& operator=(const OneBlasThread&) = delete;

 private:
  int saved_;
};

}  // namespace tenferro::detail
