#pragma once
// Internal: an f32, f64, c64 or c128 GEMM on row-major operands through CBLAS
// (OpenBLAS) or, for the real products it takes, libxsmm (kernels/gemm_provider.hpp), for kernels that multiply matrices they built themselves (conv, expm), and the
// split of one GEMM over our threads that every GEMM of ours goes through.
//
// OpenBLAS itself runs on one thread (kernels/blas_threads.hpp): a GEMM large enough to share is cut
// into blocks of whole rows of C (or of whole columns, for a wide C), each one single-threaded
// OpenBLAS call, run by parallel_chunks (kernels/parallel.hpp). One pool for all our threads means
// no second pool spinning beside the first, and a GEMM never waits for a thread that another
// process keeps off its core. Every element of C is the same dot product over k whichever block
// it falls in, so the split does not change results.
#include <cblas.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "kernels/blas_threads.hpp"
#include "kernels/gemm_provider.hpp"
#include "kernels/parallel.hpp"
#include "tenferro/tensor.hpp"
#include "tenferro/threads.hpp"

namespace tenferro::detail {

/// The fewest multiply-adds for which a product is split over the threads (split_gemm) and a batch
/// of smaller products is spread over them (dot_general). Waking a pool thread that has gone to
/// sleep costs microseconds, and a product of 2^18 takes about 6 us on one thread: measured on a
/// 2-core Xeon, a 6 x 6 lattice of bond-4 tensors (36 contractions, three of 64^3) took 260-272 us
/// with 2^18 and 231 us with 2^20 on two threads (226-235 us on one), while a 128^3 product
/// (2^21) run in a loop takes 0.56 of its one-thread time on two.
inline constexpr double kGemmSplitWork = 1 << 20;

/// Calls block(i0, i1, j0, j1) for blocks covering C [m, n] of a product with inner size k: one
/// block when the product is small (below kGemmSplitWork multiply-adds) or when called inside a
/// parallel body, else one block per thread, cut along C's longer side (rows when m >= n) unless
/// that side is too short for blocks of kMinWidth.
///
/// Each block is its own OpenBLAS call, which packs the whole operand that the blocks share: all
/// of B [k, n] when the rows are cut, all of A [m, k] when the columns are. Cutting the longer side
/// repacks the smaller operand. Measured against OpenBLAS's own two threads on a 2-core Xeon
/// (f64, row-major): 1024^3 0.92-0.99 by rows and 1.02-1.07 by columns; 4096 x 128 x 1024 0.95
/// and 1.17; 2048 x 64 x 2048 0.96 and 1.33; 128 x 4096 x 1024 1.10 and 0.95 (C is wide: columns).
template <class Block>
void split_gemm(std::int64_t m, std::int64_t n, std::int64_t k, Block block) {
  constexpr std::int64_t kMinWidth = 32;
  const std::int64_t threads = exec::in_parallel_body() ? 1 : num_threads();
  const double work = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  std::int64_t parts = work < kGemmSplitWork ? 1 : threads;
  const bool by_columns = (n > m && n >= 2 * kMinWidth) || m < 2 * kMinWidth;
  const std::int64_t extent = by_columns ? n : m;
  parts = std::min(parts, std::max<std::int64_t>(1, extent / kMinWidth));
  if (parts <= 1) {
    const OneBlasThread one_thread;
    block(0, m, 0, n);
    return;
  }
  // Block edges on multiples of 16, so every block but the last fills whole kernel panels.
  const std::int64_t step = (extent / parts + 15) / 16 * 16;
  const std::int64_t blocks = (extent + step - 1) / step;
  exec::parallel_chunks(blocks, static_cast<int>(threads), [&](std::int64_t b) {
    const OneBlasThread one_thread;
    const std::int64_t lo = b * step, hi = std::min(extent, lo + step);
    if (by_columns) {
      block(0, m, lo, hi);
    } else {
      block(lo, hi, 0, n);
    }
  });
}

/// C = A B (or C += A B with `accumulate`) for row-major A [m, k] and B [k, n], or B^T for a B
/// stored [n, k] (`b_transposed`). A's rows are `lda` elements apart (k when 0) and C's `ldc` (n
/// when 0): either may be a block of columns of a wider matrix.
template <class T>
void gemm_rows(const T* a, const T* b, T* c, std::int64_t m, std::int64_t n, std::int64_t k, bool b_transposed = false,
               std::int64_t lda = 0, bool accumulate = false, std::int64_t ldc = 0) {
  const auto K = static_cast<blasint>(k);
  const auto LDA = static_cast<blasint>(lda == 0 ? k : lda), LDC = static_cast<blasint>(ldc == 0 ? n : ldc);
  const CBLAS_TRANSPOSE tb = b_transposed ? CblasTrans : CblasNoTrans;
  const blasint ldb = b_transposed ? K : static_cast<blasint>(n);
  split_gemm(m, n, k, [&](std::int64_t i0, std::int64_t i1, std::int64_t j0, std::int64_t j1) {
    const auto M = static_cast<blasint>(i1 - i0), N = static_cast<blasint>(j1 - j0);
    const T* ab = a + i0 * LDA;
    const T* bb = b + j0 * (b_transposed ? ldb : 1);
    T* cb = c + i0 * LDC + j0;
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      if (!b_transposed && libxsmm_gemm<T>(false, m, n, k, M, N, K, ab, LDA, bb, ldb, accumulate, cb, LDC)) return;
    }
    if constexpr (std::is_same_v<T, float>) {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, tb, M, N, K, 1.0f, ab, LDA, bb, ldb, accumulate ? 1.0f : 0.0f, cb, LDC);
    } else if constexpr (std::is_same_v<T, double>) {
      cblas_dgemm(CblasRowMajor, CblasNoTrans, tb, M, N, K, 1.0, ab, LDA, bb, ldb, accumulate ? 1.0 : 0.0, cb, LDC);
    } else {
      const T one(1), beta(accumulate ? 1 : 0);
      if constexpr (std::is_same_v<T, c64>) {
        cblas_cgemm(CblasRowMajor, CblasNoTrans, tb, M, N, K, &one, ab, LDA, bb, ldb, &beta, cb, LDC);
      } else {
        cblas_zgemm(CblasRowMajor, CblasNoTrans, tb, M, N, K, &one, ab, LDA, bb, ldb, &beta, cb, LDC);
      }
    }
  });
}

}  // namespace tenferro::detail
