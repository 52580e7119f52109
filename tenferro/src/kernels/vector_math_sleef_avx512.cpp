// SLEEF's 1-ULP vector math for CPUs with AVX-512F (compiled with -mavx512f -mfma); see vector_math_sleef.inc.
#include <immintrin.h>
#include <sleef.h>

#include <cmath>
#include <cstdint>

#include "vector_math.hpp"

namespace tenferro::exec {

#include "vector_math_isa_avx512.inc"
#define VM_TABLE vector_math_sleef_avx512
#define VM_MATH_D(fn) Sleef_##fn##d8_u10avx512f
#define VM_MATH_F(fn) Sleef_##fn##f16_u10avx512f
#define VM_HYPOT_D Sleef_hypotd8_u05avx512f
#define VM_HYPOT_F Sleef_hypotf16_u05avx512f
#define VM_ERFC_D(v) Sleef_erfcd8_u15avx512f(v)
#define VM_ERFC_F(v) Sleef_erfcf16_u15avx512f(v)
#include "vector_math_sleef.inc"

}  // namespace tenferro::exec
