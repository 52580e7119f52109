// SLEEF's 1-ULP vector math for every x86-64 CPU (SSE2); see vector_math_impl.inc.
#include <emmintrin.h>
#include <sleef.h>

#include <cmath>
#include <cstdint>

#include "vector_math.hpp"

namespace tenferro::exec {

#include "vector_math_isa_sse2.inc"
#define VM_LIBRARY "sleef-u10"
#define VM_TABLE vector_math_sleef_sse2
#define VM_MATH_D(fn) Sleef_##fn##d2_u10sse2
#define VM_MATH_F(fn) Sleef_##fn##f4_u10sse2
#define VM_ACCURACY MathAccuracy::Precise
#define VM_MATH2_D(fn) VM_MATH_D(fn)
#define VM_MATH2_F(fn) VM_MATH_F(fn)
#define VM_HYPOT_D Sleef_hypotd2_u05sse2
#define VM_HYPOT_F Sleef_hypotf4_u05sse2
#define VM_ERFC_D(v) Sleef_erfcd2_u15sse2(v)
#define VM_ERFC_F(v) Sleef_erfcf4_u15sse2(v)
#define VM_LGAMMA_D(v) VM_MATH_D(lgamma)(v)
#define VM_LGAMMA_F(v) VM_MATH_F(lgamma)(v)
#define VM_POW_D VM_MATH_D(pow)
#define VM_POW_F VM_MATH_F(pow)
#define VM_SINCOS_D(v) VM_MATH_D(sincos)(v)
#define VM_SINCOS_F(v) VM_MATH_F(sincos)(v)
#include "vector_math_impl.inc"

}  // namespace tenferro::exec
