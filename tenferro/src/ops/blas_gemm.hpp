#pragma once
// Internal: an f32, f64, c64 or c128 GEMM on row-major operands through CBLAS
// (OpenBLAS), for kernels that multiply matrices they built themselves (conv, expm).
#include <cblas.h>

#include <cstdint>
#include <type_traits>

#include "tenferro/tensor.hpp"

namespace tenferro::detail {

/// C = A B for row-major A [m, k] and B [k, n], or B^T for a B stored [n, k] (`b_transposed`).
template <class T>
void gemm_rows(const T* a, const T* b, T* c, std::int64_t m, std::int64_t n, std::int64_t k, bool b_transposed = false) {
  const auto M = static_cast<blasint>(m), N = static_cast<blasint>(n), K = static_cast<blasint>(k);
  const CBLAS_TRANSPOSE tb = b_transposed ? CblasTrans : CblasNoTrans;
  const blasint ldb = b_transposed ? K : N;
  if constexpr (std::is_same_v<T, float>) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, tb, M, N, K, 1.0f, a, K, b, ldb, 0.0f, c, N);
  } else if constexpr (std::is_same_v<T, double>) {
    cblas_dgemm(CblasRowMajor, CblasNoTrans, tb, M, N, K, 1.0, a, K, b, ldb, 0.0, c, N);
  } else {
    const T one(1), zero(0);
    if constexpr (std::is_same_v<T, c64>) {
      cblas_cgemm(CblasRowMajor, CblasNoTrans, tb, M, N, K, &one, a, K, b, ldb, &zero, c, N);
    } else {
      cblas_zgemm(CblasRowMajor, CblasNoTrans, tb, M, N, K, &one, a, K, b, ldb, &zero, c, N);
    }
  }
}

}  // namespace tenferro::detail
