// glibc's libmvec vector math for every x86-64 CPU (SSE2; see vector_math_impl.inc).
// libmvec has no sincos with a vector result, so the sincos pair is its sin and its cos: the halves
// are then the bits of Sin and Cos themselves.
#include <emmintrin.h>

#include <cstdint>

#include "vector_math.hpp"

// libmvec's entry points, named by the x86-64 vector function ABI.
extern "C" {
#define VM_DECLARE(fn) __m128d _ZGVbN2v_##fn(__m128d); __m128 _ZGVbN4v_##fn##f(__m128);
VM_DECLARE(exp)
VM_DECLARE(log)
VM_DECLARE(sin)
VM_DECLARE(cos)
VM_DECLARE(tanh)
VM_DECLARE(expm1)
VM_DECLARE(log1p)
#undef VM_DECLARE
__m128d _ZGVbN2vv_pow(__m128d, __m128d);
__m128 _ZGVbN4vv_powf(__m128, __m128);
}

namespace tenferro::exec {

namespace {
struct PairD {
  __m128d x, y;
};
struct PairF {
  __m128 x, y;
};
inline PairD sincos_pair_d(__m128d v) { return {_ZGVbN2v_sin(v), _ZGVbN2v_cos(v)}; }
inline PairF sincos_pair_f(__m128 v) { return {_ZGVbN4v_sinf(v), _ZGVbN4v_cosf(v)}; }
}  // namespace

#define VM_LIBRARY "libmvec"
#define VM_ISA "sse2"
#define VM_TABLE vector_math_mvec_sse2
#define VM_D __m128d
#define VM_F __m128
#define VM_DN 2
#define VM_FN 4
#define VM_LOAD_D _mm_loadu_pd
#define VM_LOAD_F _mm_loadu_ps
#define VM_STORE_D _mm_storeu_pd
#define VM_STORE_F _mm_storeu_ps
#define VM_SQRT_D _mm_sqrt_pd
#define VM_SQRT_F _mm_sqrt_ps
#define VM_DIV_D _mm_div_pd
#define VM_DIV_F _mm_div_ps
#define VM_SET1_D _mm_set1_pd
#define VM_SET1_F _mm_set1_ps
#define VM_ADD_D _mm_add_pd
#define VM_ADD_F _mm_add_ps
#define VM_MUL_D _mm_mul_pd
#define VM_MUL_F _mm_mul_ps
#define VM_MATH_D(fn) _ZGVbN2v_##fn
#define VM_MATH_F(fn) _ZGVbN4v_##fn##f
#define VM_POW_D _ZGVbN2vv_pow
#define VM_POW_F _ZGVbN4vv_powf
#define VM_SINCOS_D(v) sincos_pair_d(v)
#define VM_SINCOS_F(v) sincos_pair_f(v)
#include "vector_math_impl.inc"

}  // namespace tenferro::exec
