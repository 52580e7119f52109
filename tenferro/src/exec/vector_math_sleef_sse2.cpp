// SLEEF's 1-ULP vector math for every x86-64 CPU (SSE2; see vector_math_impl.inc).
#include <emmintrin.h>
#include <sleef.h>

#include <cstdint>

#include "vector_math.hpp"

namespace tenferro::exec {

#define VM_LIBRARY "sleef-u10"
#define VM_ISA "sse2"
#define VM_TABLE vector_math_sleef_sse2
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
#define VM_MATH_D(fn) Sleef_##fn##d2_u10sse2
#define VM_MATH_F(fn) Sleef_##fn##f4_u10sse2
#define VM_POW_D VM_MATH_D(pow)
#define VM_POW_F VM_MATH_F(pow)
#define VM_SINCOS_D(v) VM_MATH_D(sincos)(v)
#define VM_SINCOS_F(v) VM_MATH_F(sincos)(v)
#include "vector_math_impl.inc"

}  // namespace tenferro::exec
