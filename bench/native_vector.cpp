// The vectorized elem_chain baselines, in SLEEF and in glibc's libmvec (contracts in native.hpp).
// This file alone is built with -mavx2 -mfma; callers check native::avx2_supported() first. It includes no C++
// standard headers on purpose: an inline library function instantiated here would carry AVX2 code
// and could be the copy the linker keeps for the whole program.
#include <immintrin.h>
#include <sleef.h>

#include "native.hpp"

// libmvec's AVX2 entry points (x86-64 vector function ABI names).
extern "C" {
__m256d _ZGVdN4v_sin(__m256d);
__m256d _ZGVdN4v_cos(__m256d);
__m256d _ZGVdN4v_exp(__m256d);
}

namespace bench::native {

namespace {

/// The math of each library: sincos gives {sin, cos} of a vector.
struct SleefMath {
  // One sincos call for the pair, as a careful hand-written loop would (and as our fused kernel
  // does): cheaper than sin plus cos.
  static Sleef___m256d_2 sincos(__m256d x) { return Sleef_sincosd4_u10(x); }
  static __m256d exp(__m256d x) { return Sleef_expd4_u10(x); }
};
struct MvecMath {
  // libmvec has no sincos with a vector result; our kernels also call its sin and cos.
  static Sleef___m256d_2 sincos(__m256d x) { return {_ZGVdN4v_sin(x), _ZGVdN4v_cos(x)}; }
  static __m256d exp(__m256d x) { return _ZGVdN4v_exp(x); }
};

struct Terms {
  __m256d value;  // exp(u) / d
  __m256d grad;   // value * (x cos(x) - 2 x / d)
};

template <class Math>
inline Terms terms(__m256d x, bool with_grad) {
  const __m256d one = _mm256_set1_pd(1.0);
  const Sleef___m256d_2 sc = Math::sincos(x);
  const __m256d s = sc.x, c = sc.y;
  const __m256d d = _mm256_fmadd_pd(x, x, one);
  const __m256d value = _mm256_div_pd(Math::exp(_mm256_fmadd_pd(s, x, c)), d);
  if (!with_grad) return {value, value};
  const __m256d two_x_over_d = _mm256_div_pd(_mm256_add_pd(x, x), d);
  return {value, _mm256_mul_pd(value, _mm256_fmsub_pd(x, c, two_x_over_d))};
}

double horizontal_sum(__m256d v) {
  const __m128d pair = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
  return _mm_cvtsd_f64(_mm_add_sd(pair, _mm_unpackhi_pd(pair, pair)));
}

/// Sums the terms of x[0, n) and, when grad is set, stores the per-element derivative. The last
/// n % 4 elements go through one zero-padded vector step, so every element sees the same math.
template <class Math>
double run(const double* x, double* grad, std::int64_t n, int threads) {
  const std::int64_t blocks = n / 4;
  double total = 0;
#pragma omp parallel num_threads(threads) reduction(+ : total)
  {
    __m256d acc = _mm256_setzero_pd();
#pragma omp for schedule(static)
    for (std::int64_t b = 0; b < blocks; ++b) {
      const Terms t = terms<Math>(_mm256_loadu_pd(x + 4 * b), grad != nullptr);
      acc = _mm256_add_pd(acc, t.value);
      if (grad != nullptr) _mm256_storeu_pd(grad + 4 * b, t.grad);
    }
    total += horizontal_sum(acc);
  }
  const std::int64_t rest = n - 4 * blocks;
  if (rest > 0) {
    alignas(32) double in[4] = {0, 0, 0, 0}, out[4];
    for (std::int64_t i = 0; i < rest; ++i) in[i] = x[4 * blocks + i];
    const Terms t = terms<Math>(_mm256_load_pd(in), grad != nullptr);
    _mm256_store_pd(out, t.value);
    for (std::int64_t i = 0; i < rest; ++i) total += out[i];
    if (grad != nullptr) {
      _mm256_store_pd(out, t.grad);
      for (std::int64_t i = 0; i < rest; ++i) grad[4 * blocks + i] = out[i];
    }
  }
  return total;
}

}  // namespace

double elem_chain_sleef(const double* x, std::int64_t n, int threads) {
  return run<SleefMath>(x, nullptr, n, threads);
}
double elem_chain_grad_sleef(const double* x, double* grad, std::int64_t n, int threads) {
  return run<SleefMath>(x, grad, n, threads);
}
double elem_chain_mvec(const double* x, std::int64_t n, int threads) { return run<MvecMath>(x, nullptr, n, threads); }
double elem_chain_grad_mvec(const double* x, double* grad, std::int64_t n, int threads) {
  return run<MvecMath>(x, grad, n, threads);
}

}  // namespace bench::native
