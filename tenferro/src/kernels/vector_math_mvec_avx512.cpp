// glibc's libmvec vector math for CPUs with AVX-512F (compiled with -mavx512f -mfma); see vector_math_mvec.inc. Its lgamma is
// SLEEF's: libmvec has none.
#include <immintrin.h>
#include <sleef.h>

#include <cmath>
#include <cstdint>

#include "vector_math.hpp"

namespace tenferro::exec {

#include "vector_math_isa_avx512.inc"
#define VM_TABLE vector_math_mvec_avx512
#define VM_MVEC_D(fn) _ZGVeN8v_##fn
#define VM_MVEC_F(fn) _ZGVeN16v_##fn##f
#define VM_MVEC_POW_D _ZGVeN8vv_pow
#define VM_MVEC_POW_F _ZGVeN16vv_powf
#define VM_MVEC2_D(fn) _ZGVeN8vv_##fn
#define VM_MVEC2_F(fn) _ZGVeN16vv_##fn##f
#define VM_SLEEF_LGAMMA_D Sleef_lgammad8_u10avx512f
#define VM_SLEEF_LGAMMA_F Sleef_lgammaf16_u10avx512f
#include "vector_math_mvec.inc"

}  // namespace tenferro::exec
