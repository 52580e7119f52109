#pragma once
// Internal: an f32, f64, c64 or c128 GEMM on row-major operands through CBLAS
// (OpenBLAS), for kernels that multiply matrices they built themselves (conv, expm).
#include <cblas.h>

#include <cstdint>
#include <type_traits>

#include "tenferro/tensor.hpp"

namespace tenferro::detail {

/// C = A B (or C += A B with `accumulate`) for row-major A [m, k] and B [k, n], or B^T for a B
/// stored [n, k] (`b_transposed`). A's rows are `lda` elements apart (k when 0) and C's `ldc` (n
/// when 0): either may be a block of columns of a wider matrix.
template <class T>
void gemm_rows(const T* a, const T* b, T* c, std::int64_t m, std::int64_t n, std::int64_t k, bool b_transposed = false,
               std::int64_t lda = 0, bool accumulate = false, std::int64_t ldc = 0) {
  const auto M = static_cast<blasint>(m), N = static_cast<blasint>(n), K = static_cast<blasint>(k);
  const auto LDA = static_cast<blasint>(lda == 0 ? k : lda), LDC = static_cast<blasint>(ldc == 0 ? n : ldc);
  const CBLAS_TRANSPOSE tb = b_transposed ? CblasTrans : CblasNoTrans;
  const blasint ldb = b_transposed ? K : N;
  if constexpr (std::is_same_v<T, float>) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, tb, M, N, K, 1.0f, a, LDA, b, ldb, accumulate ? 1.0f : 0.0f, c, LDC);
  } else if constexpr (std::is_same_v<T, double>) {
    cblas_dgemm(CblasRowMajor, CblasNoTrans, tb, M, N, K, 1.0, a, LDA, b, ldb, accumulate ? 1.0 : 0.0, c, LDC);
  } else {
    const T one(1), beta(accumulate ? 1 : 0);
    if constexpr (std::is_same_v<T, c64>) {
      cblas_cgemm(CblasRowMajor, CblasNoTrans, tb, M, N, K, &one, a, LDA, b, ldb, &beta, c, LDC);
    } else {
      cblas_zgemm(CblasRowMajor, CblasNoTrans, tb, M, N, K, &one, a, LDA, b, ldb, &beta, c, LDC);
    }
  }
}

}  // namespace tenferro::detail
