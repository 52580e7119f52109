// The AVX2 elem_chain baselines (native_vector.inc; contracts in native.hpp). This file alone, with
// native_vector_avx512.cpp, holds vector code: it is built with -mavx2 -mfma, and callers check
// native::avx2_supported() first.
#include <immintrin.h>
#include <sleef.h>

#include "native.hpp"

// libmvec's AVX2 entry points (x86-64 vector function ABI names).
extern "C" {
__m256d _ZGVdN4v_sin(__m256d);
__m256d _ZGVdN4v_cos(__m256d);
__m256d _ZGVdN4v_exp(__m256d);
}

namespace {
inline double horizontal_sum(__m256d v) {
  const __m128d pair = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
  return _mm_cvtsd_f64(_mm_add_sd(pair, _mm_unpackhi_pd(pair, pair)));
}
}  // namespace

#define NV_V __m256d
#define NV_N 4
#define NV_PAIR Sleef___m256d_2
#define NV_LOAD _mm256_loadu_pd
#define NV_STORE _mm256_storeu_pd
#define NV_SET1 _mm256_set1_pd
#define NV_ZERO _mm256_setzero_pd
#define NV_ADD _mm256_add_pd
#define NV_MUL _mm256_mul_pd
#define NV_DIV _mm256_div_pd
#define NV_FMADD _mm256_fmadd_pd
#define NV_FMSUB _mm256_fmsub_pd
#define NV_HSUM horizontal_sum
#define NV_SLEEF_SINCOS Sleef_sincosd4_u10avx2
#define NV_SLEEF_EXP Sleef_expd4_u10avx2
#define NV_MVEC_SIN _ZGVdN4v_sin
#define NV_MVEC_COS _ZGVdN4v_cos
#define NV_MVEC_EXP _ZGVdN4v_exp
#define NV_NAME(base) base
#include "native_vector.inc"
