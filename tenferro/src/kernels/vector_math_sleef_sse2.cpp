// SLEEF's 1-ULP vector math for every x86-64 CPU (SSE2); see vector_math_sleef.inc.
#include <emmintrin.h>
#include <sleef.h>

#include <cmath>
#include <cstdint>

#include "vector_math.hpp"

namespace tenferro::exec {

#include "vector_math_isa_sse2.inc"
#define VM_TABLE vector_math_sleef_sse2
#define VM_MATH_D(fn) Sleef_##fn##d2_u10sse2
#define VM_MATH_F(fn) Sleef_##fn##f4_u10sse2
#define VM_HYPOT_D Sleef_hypotd2_u05sse2
#define VM_HYPOT_F Sleef_hypotf4_u05sse2
#define VM_ERFC_D(v) Sleef_erfcd2_u15sse2(v)
#define VM_ERFC_F(v) Sleef_erfcf4_u15sse2(v)
#include "vector_math_sleef.inc"

}  // namespace tenferro::exec
