// glibc's libmvec vector math for CPUs with AVX2 and FMA (compiled with -mavx2 -mfma); see vector_math_mvec.inc. Its lgamma is
// SLEEF's: libmvec has none.
#include <immintrin.h>
#include <sleef.h>

#include <cmath>
#include <cstdint>

#include "vector_math.hpp"

namespace tenferro::exec {

#include "vector_math_isa_avx2.inc"
#define VM_TABLE vector_math_mvec_avx2
#define VM_MVEC_D(fn) _ZGVdN4v_##fn
#define VM_MVEC_F(fn) _ZGVdN8v_##fn##f
#define VM_MVEC_POW_D _ZGVdN4vv_pow
#define VM_MVEC_POW_F _ZGVdN8vv_powf
#define VM_MVEC2_D(fn) _ZGVdN4vv_##fn
#define VM_MVEC2_F(fn) _ZGVdN8vv_##fn##f
#define VM_SLEEF_LGAMMA_D Sleef_lgammad4_u10avx2
#define VM_SLEEF_LGAMMA_F Sleef_lgammaf8_u10avx2
#include "vector_math_mvec.inc"

}  // namespace tenferro::exec
