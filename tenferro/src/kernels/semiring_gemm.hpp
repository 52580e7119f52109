#pragma once
// Internal: the tropical matrix products behind semiring_dot_general (semiring_dot.cpp).
//
// C[i, j] = sum_k A[i, k] (x) B[k, j] in a tropical semiring, for row-major A [M, K], B [K, N]
// and C [M, N] (C is overwritten). When `index` is given it receives, per element of C, the first
// k whose product attains C[i, j] (0 if none does). The kernel packs panels of A and B, keeps a
// 4-row tile of C in registers across a block of k and updates it with vector add-and-compare (or
// multiply-and-compare); rows of tiles are shared among `threads` OpenMP threads. One source
// (semiring_gemm_impl.inc) is compiled twice: for the baseline x86-64 ISA and for AVX2, chosen at
// run time.
#include <cstdint>

#include "tenferro/semiring.hpp"

namespace tenferro::detail {

struct SemiringGemm {
  void (*f64)(Semiring s, const double* a, const double* b, double* c, std::int64_t* index, std::int64_t m,
              std::int64_t n, std::int64_t k, int threads);
  void (*f32)(Semiring s, const float* a, const float* b, float* c, std::int64_t* index, std::int64_t m,
              std::int64_t n, std::int64_t k, int threads);
};

const SemiringGemm& semiring_gemm_sse2();
const SemiringGemm& semiring_gemm_avx2();
/// The fastest the CPU runs.
const SemiringGemm& semiring_gemm();

}  // namespace tenferro::detail
