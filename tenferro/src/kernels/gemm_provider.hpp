#pragma once
// Internal: which library multiplies a real matrix block. Every f32/f64 GEMM block of ours (the
// blocks split_gemm hands out, kernels/blas_gemm.hpp and dot_general) is offered to libxsmm's JIT
// kernels first; OpenBLAS runs what libxsmm does not take.
//
// The policy comes from measurements of both libraries on one thread (`scripts/bench gemm`,
// docs/tenferro.md "GEMM providers"), per dtype and size of the whole product (its m n k):
//   - where OpenBLAS runs narrower vector kernels than libxsmm generates (OpenBLAS told to use
//     AVX2 kernels, OPENBLAS_CORETYPE=Haswell, on an AVX-512 CPU): libxsmm, at every size (it
//     took 0.33-0.72x OpenBLAS's time from 8^3 to 576^3);
//   - where both run AVX-512 on an AMD CPU (Zen 4, which runs 512-bit instructions as two
//     halves): libxsmm for f64 at every size (0.60-0.97x) and for f32 up to 2^24 multiply-adds
//     (0.64-1.00x); OpenBLAS for larger f32 products (libxsmm took 1.02-1.29x);
//   - where both run AVX-512 on another CPU (measured on an Intel Xeon): libxsmm for products of
//     more than 2^18 and at most 2^24 multiply-adds, f32 and f64 (0.58-0.84x), whose operands
//     A and B fit in one core's L2 cache together; OpenBLAS above (libxsmm took 0.96-1.05x up to
//     2^27 and 2.3-2.5x for f64 products of 2^26.6 and 2^27.5), below and where the operands
//     overflow L2. Below 2^18 libxsmm's kernel alone took 0.88-1.02x from 2^15 on (1.1-2.1x at
//     8^3 and 16^3), but inside a program it cost time: a 6 x 6 lattice of bond-4 tensors, whose
//     products of 2^16 and 2^18 went to libxsmm, took 229-233 us against 204-211 us with
//     OpenBLAS for all (one thread). Past L2, libxsmm's kernels stream the operands without
//     OpenBLAS's packed panels: f64 64 x 64 x 4096, 4 MiB of operands against a 2 MiB L2, took
//     1.4-2.3x, while 64 x 64 x 2048 and 32 x 32 x 4096, 2 MiB, took 0.47-0.74x;
//   - otherwise (not measured: a CPU without AVX-512): libxsmm for small products only (m n k <=
//     2^18, which split_gemm never splits), what libxsmm is made for.
// The choice depends on the whole product's shape and on the process, never on how the product
// is split over threads, and a libxsmm kernel sums each element over k in order whatever the
// block's width, so results stay independent of the thread count (parallel_test).
//
// Layouts: libxsmm's kernels are column-major and take a transposed second operand only, so of the
// row-major products they run A B and A^T B. dot_general copies a B^T out untransposed when
// libxsmm takes the product and A has enough rows to repay the copy; other A B^T and A^T B^T
// products go to OpenBLAS.
//
// TENFERRO_GEMM=openblas (or libxsmm) in the environment forces one provider for every product
// it can run, for comparisons; set_gemm_provider does the same from a test.
#include <cstdint>

namespace tenferro::detail {

enum class GemmProvider : std::uint8_t { Auto, OpenBlas, Libxsmm };

/// Forces a provider (Auto: the policy above) for the calls that follow; returns the previous
/// setting. For tests and benchmarks.
GemmProvider set_gemm_provider(GemmProvider provider);

/// The CPU's maker, where the measurements differ by it.
enum class CpuVendor : std::uint8_t { Amd, Other };

/// The policy above as a function of what it reads: whether an f64 (else f32) product of m n k
/// multiply-adds goes to libxsmm, given whether OpenBLAS's kernels and libxsmm's generated code
/// are AVX-512 ones, the CPU's maker and the size of one core's L2 cache in bytes.
bool policy_picks_libxsmm(bool f64, std::int64_t m, std::int64_t n, std::int64_t k, bool openblas_avx512,
                          bool libxsmm_avx512, CpuVendor vendor, std::int64_t l2_bytes);

/// Whether the policy (or a forced provider) gives an f64 (else f32) product of whole shape
/// [m, n, k] to libxsmm: a caller whose B is stored transposed, which libxsmm cannot read, may
/// then copy it out untransposed first (dot_general does, for m >= kTransposeCopyMinRows).
bool libxsmm_takes(bool f64, std::int64_t m, std::int64_t n, std::int64_t k);

/// Runs the row-major block C[M, N] = op(A) B (C += op(A) B with `accumulate`), op(A) = A^T when
/// `a_transposed`, of a product whose whole shape is [whole_m, whole_n, whole_k], through a libxsmm
/// kernel when the policy picks libxsmm for it; returns false, having done nothing, otherwise
/// (OpenBLAS's turn). `lda`, `ldb`, `ldc` are the row-major leading dimensions.
template <class T>
bool libxsmm_gemm(bool a_transposed, std::int64_t whole_m, std::int64_t whole_n, std::int64_t whole_k, int M, int N,
                  int K, const T* a, int lda, const T* b, int ldb, bool accumulate, T* c, int ldc);

extern template bool libxsmm_gemm<float>(bool, std::int64_t, std::int64_t, std::int64_t, int, int, int, const float*, int,
                                         const float*, int, bool, float*, int);
extern template bool libxsmm_gemm<double>(bool, std::int64_t, std::int64_t, std::int64_t, int, int, int, const double*,
                                          int, const double*, int, bool, double*, int);

}  // namespace tenferro::detail
