// glibc's libmvec vector math for every x86-64 CPU (SSE2); see vector_math_mvec.inc.
#include <emmintrin.h>

#include <cstdint>

#include "vector_math.hpp"

namespace tenferro::exec {

#include "vector_math_isa_sse2.inc"
#define VM_TABLE vector_math_mvec_sse2
#define VM_MVEC_D(fn) _ZGVbN2v_##fn
#define VM_MVEC_F(fn) _ZGVbN4v_##fn##f
#define VM_MVEC_POW_D _ZGVbN2vv_pow
#define VM_MVEC_POW_F _ZGVbN4vv_powf
#include "vector_math_mvec.inc"

}  // namespace tenferro::exec
