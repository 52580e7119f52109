// SLEEF's 1-ULP vector math for CPUs with AVX2 and FMA (compiled with -mavx2 -mfma); see vector_math_sleef.inc.
#include <immintrin.h>
#include <sleef.h>

#include <cmath>
#include <cstdint>

#include "vector_math.hpp"

namespace tenferro::exec {

#include "vector_math_isa_avx2.inc"
#define VM_TABLE vector_math_sleef_avx2
#define VM_MATH_D(fn) Sleef_##fn##d4_u10avx2
#define VM_MATH_F(fn) Sleef_##fn##f8_u10avx2
#define VM_HYPOT_D Sleef_hypotd4_u05avx2
#define VM_HYPOT_F Sleef_hypotf8_u05avx2
#define VM_ERFC_D(v) Sleef_erfcd4_u15avx2(v)
#define VM_ERFC_F(v) Sleef_erfcf8_u15avx2(v)
#include "vector_math_sleef.inc"

}  // namespace tenferro::exec
