// glibc's libmvec vector math for every x86-64 CPU (SSE2); see vector_math_mvec.inc. Its lgamma is
// SLEEF's: libmvec has none.
#include <emmintrin.h>
#include <sleef.h>

#include <cmath>
#include <cstdint>

#include "vector_math.hpp"

namespace tenferro::exec {

#include "vector_math_isa_sse2.inc"
#define VM_TABLE vector_math_mvec_sse2
#define VM_MVEC_D(fn) _ZGVbN2v_##fn
#define VM_MVEC_F(fn) _ZGVbN4v_##fn##f
#define VM_MVEC_POW_D _ZGVbN2vv_pow
#define VM_MVEC_POW_F _ZGVbN4vv_powf
#define VM_MVEC2_D(fn) _ZGVbN2vv_##fn
#define VM_MVEC2_F(fn) _ZGVbN4vv_##fn##f
#define VM_SLEEF_LGAMMA_D Sleef_lgammad2_u10sse2
#define VM_SLEEF_LGAMMA_F Sleef_lgammaf4_u10sse2
#include "vector_math_mvec.inc"

}  // namespace tenferro::exec
