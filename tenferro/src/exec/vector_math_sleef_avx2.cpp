// SLEEF's 1-ULP vector math for CPUs with AVX2 and FMA (compiled with -mavx2 -mfma; see vector_math_impl.inc).
#include <immintrin.h>
#include <sleef.h>

#include <cstdint>

#include "vector_math.hpp"

namespace tenferro::exec {

#define VM_LIBRARY "sleef-u10"
#define VM_ISA "avx2"
#define VM_TABLE vector_math_sleef_avx2
#define VM_D __m256d
#define VM_F __m256
#define VM_DN 4
#define VM_FN 8
#define VM_LOAD_D _mm256_loadu_pd
#define VM_LOAD_F _mm256_loadu_ps
#define VM_STORE_D _mm256_storeu_pd
#define VM_STORE_F _mm256_storeu_ps
#define VM_SQRT_D _mm256_sqrt_pd
#define VM_SQRT_F _mm256_sqrt_ps
#define VM_DIV_D _mm256_div_pd
#define VM_DIV_F _mm256_div_ps
#define VM_SET1_D _mm256_set1_pd
#define VM_SET1_F _mm256_set1_ps
#define VM_ADD_D _mm256_add_pd
#define VM_ADD_F _mm256_add_ps
#define VM_MUL_D _mm256_mul_pd
#define VM_MUL_F _mm256_mul_ps
#define VM_MATH_D(fn) Sleef_##fn##d4_u10avx2
#define VM_MATH_F(fn) Sleef_##fn##f8_u10avx2
#define VM_POW_D VM_MATH_D(pow)
#define VM_POW_F VM_MATH_F(pow)
#define VM_SINCOS_D(v) VM_MATH_D(sincos)(v)
#define VM_SINCOS_F(v) VM_MATH_F(sincos)(v)
#include "vector_math_impl.inc"

}  // namespace tenferro::exec
