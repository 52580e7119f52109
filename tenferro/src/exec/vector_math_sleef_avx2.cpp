// SLEEF's 1-ULP vector math for CPUs with AVX2 and FMA (compiled with -mavx2 -mfma); see vector_math_impl.inc.
#include <immintrin.h>
#include <sleef.h>

#include <cstdint>

#include "vector_math.hpp"

namespace tenferro::exec {

#include "vector_math_isa_avx2.inc"
#define VM_LIBRARY "sleef-u10"
#define VM_TABLE vector_math_sleef_avx2
#define VM_MATH_D(fn) Sleef_##fn##d4_u10avx2
#define VM_MATH_F(fn) Sleef_##fn##f8_u10avx2
#define VM_POW_D VM_MATH_D(pow)
#define VM_POW_F VM_MATH_F(pow)
#define VM_SINCOS_D(v) VM_MATH_D(sincos)(v)
#define VM_SINCOS_F(v) VM_MATH_F(sincos)(v)
#include "vector_math_impl.inc"

}  // namespace tenferro::exec
