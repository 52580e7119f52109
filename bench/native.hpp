#pragma once
// Hand-written C++ baselines for bench_compare: what a fused kernel of the same computation can
// reach, one pass over memory and no graph machinery.
//
// elem_chain: f(x) = sum_i exp(sin(x_i) x_i + cos(x_i)) / (1 + x_i^2), with gradient
//   df/dx_i = exp(u_i) / d_i * (x_i cos(x_i) - 2 x_i / d_i),  u_i = sin(x_i) x_i + cos(x_i),
//   d_i = 1 + x_i^2   (d/dx (sin(x) x + cos(x)) = x cos(x)).
// Each is one OpenMP loop over `threads` threads with a sum reduction.
#include <cstdint>

namespace bench::native {

/// libm (std::sin, std::cos, std::exp), scalar.
double elem_chain(const double* x, std::int64_t n, int threads);
/// Writes df/dx to `grad` (n values) and returns f.
double elem_chain_grad(const double* x, double* grad, std::int64_t n, int threads);

/// Whether this CPU runs the vectorized variants below (AVX2 and FMA); call them only when true.
bool avx2_supported();
/// SLEEF's AVX2 functions (Sleef_sincosd4_u10 for the sin/cos pair, Sleef_expd4_u10), four lanes
/// per step: the math tenferro's kernels use with MathAccuracy::Precise, so the gap to these is
/// executor overhead.
double elem_chain_sleef(const double* x, std::int64_t n, int threads);
double elem_chain_grad_sleef(const double* x, double* grad, std::int64_t n, int threads);
/// The same loop with glibc's libmvec AVX2 sin, cos and exp: the math of MathAccuracy::Fast.
double elem_chain_mvec(const double* x, std::int64_t n, int threads);
double elem_chain_grad_mvec(const double* x, double* grad, std::int64_t n, int threads);

/// Whether this CPU runs the AVX-512 variants below (AVX-512F); call them only when true.
bool avx512_supported();
/// The same two loops, eight lanes per step (SLEEF's and libmvec's AVX-512 functions): the loops
/// to compare with when tenferro's kernels use the AVX-512 tables (its default on such CPUs).
double elem_chain_sleef_avx512(const double* x, std::int64_t n, int threads);
double elem_chain_grad_sleef_avx512(const double* x, double* grad, std::int64_t n, int threads);
double elem_chain_mvec_avx512(const double* x, std::int64_t n, int threads);
double elem_chain_grad_mvec_avx512(const double* x, double* grad, std::int64_t n, int threads);

/// scalar_chain: op k of `ops` is x * mul(k) when k % 3 == 0, x + add(k) when k % 3 == 1 and
/// sin(x) when k % 3 == 2 (torch_bench.py builds the same chain).
double scalar_chain_mul(int k);
double scalar_chain_add(int k);
/// The chain on a plain double.
double scalar_chain(double x, int ops);
/// d chain / dx by a reverse sweep: the forward pass records each sin's input, the backward pass
/// multiplies the adjoint by mul(k) for a mul, by 1 for an add and by cos(input) for a sin.
/// `tape` is scratch space of at least `ops` doubles, so the timed call allocates nothing.
double scalar_chain_grad(double x, int ops, double* tape);

}  // namespace bench::native
