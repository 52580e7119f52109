// glibc's libmvec vector math for CPUs with AVX2 and FMA (compiled with -mavx2 -mfma; see vector_math_impl.inc).
// libmvec has no sincos with a vector result, so the sincos pair is its sin and its cos: the halves
// are then the bits of Sin and Cos themselves.
#include <immintrin.h>

#include <cstdint>

#include "vector_math.hpp"

// libmvec's entry points, named by the x86-64 vector function ABI.
extern "C" {
#define VM_DECLARE(fn) __m256d _ZGVdN4v_##fn(__m256d); __m256 _ZGVdN8v_##fn##f(__m256);
VM_DECLARE(exp)
VM_DECLARE(log)
VM_DECLARE(sin)
VM_DECLARE(cos)
VM_DECLARE(tanh)
VM_DECLARE(expm1)
VM_DECLARE(log1p)
#undef VM_DECLARE
__m256d _ZGVdN4vv_pow(__m256d, __m256d);
__m256 _ZGVdN8vv_powf(__m256, __m256);
}

namespace tenferro::exec {

namespace {
struct PairD {
  __m256d x, y;
};
struct PairF {
  __m256 x, y;
};
inline PairD sincos_pair_d(__m256d v) { return {_ZGVdN4v_sin(v), _ZGVdN4v_cos(v)}; }
inline PairF sincos_pair_f(__m256 v) { return {_ZGVdN8v_sinf(v), _ZGVdN8v_cosf(v)}; }
}  // namespace

#define VM_LIBRARY "libmvec"
#define VM_ISA "avx2"
#define VM_TABLE vector_math_mvec_avx2
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
#define VM_MATH_D(fn) _ZGVdN4v_##fn
#define VM_MATH_F(fn) _ZGVdN8v_##fn##f
#define VM_POW_D _ZGVdN4vv_pow
#define VM_POW_F _ZGVdN8vv_powf
#define VM_SINCOS_D(v) sincos_pair_d(v)
#define VM_SINCOS_F(v) sincos_pair_f(v)
#include "vector_math_impl.inc"

}  // namespace tenferro::exec
