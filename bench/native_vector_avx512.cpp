// The AVX-512 elem_chain baselines (native_vector.inc; contracts in native.hpp), built with
// -mavx512f -mfma; callers check native::avx512_supported() first.
#include <immintrin.h>
#include <sleef.h>

#include "native.hpp"

// libmvec's AVX-512 entry points (x86-64 vector function ABI names).
extern "C" {
__m512d _ZGVeN8v_sin(__m512d);
__m512d _ZGVeN8v_cos(__m512d);
__m512d _ZGVeN8v_exp(__m512d);
}

namespace {
// Not _mm512_reduce_add_pd: g++ 12 builds its extracts from undefined vectors and then reports them
// as uninitialized.
inline double horizontal_sum(__m512d v) {
  alignas(64) double lanes[8];
  _mm512_store_pd(lanes, v);
  return ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
}
}  // namespace

#define NV_V __m512d
#define NV_N 8
#define NV_PAIR Sleef___m512d_2
#define NV_LOAD _mm512_loadu_pd
#define NV_STORE _mm512_storeu_pd
#define NV_SET1 _mm512_set1_pd
#define NV_ZERO _mm512_setzero_pd
#define NV_ADD _mm512_add_pd
#define NV_MUL _mm512_mul_pd
#define NV_DIV _mm512_div_pd
#define NV_FMADD _mm512_fmadd_pd
#define NV_FMSUB _mm512_fmsub_pd
#define NV_HSUM horizontal_sum
#define NV_SLEEF_SINCOS Sleef_sincosd8_u10avx512f
#define NV_SLEEF_EXP Sleef_expd8_u10avx512f
#define NV_MVEC_SIN _ZGVeN8v_sin
#define NV_MVEC_COS _ZGVeN8v_cos
#define NV_MVEC_EXP _ZGVeN8v_exp
#define NV_NAME(base) base##_avx512
#include "native_vector.inc"
