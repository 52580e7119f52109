#pragma once
// Which vector math library the executor's kernels take exp, log, sin, cos, tanh, expm1, log1p
// and pow from (sqrt and division are correctly rounded either way). Both are well-kept
// libraries; they trade speed for accuracy (docs/tenferro.md, "Vector math"):
//
//   Fast     glibc's libmvec: within 4 ULP (the measured worst case is 3.6 ULP, for cos), about
//            1.6 times as fast as Precise on a sin/cos/exp chain. The default, as in NumPy (SVML)
//            and XLA's CPU backend, whose transcendental functions are also a few ULP.
//   Precise  SLEEF's 1.0-ULP functions (what PyTorch's vectorized CPU kernels use).
//
// The setting is process-wide and read at every kernel call, like set_num_threads. Fused and
// unfused kernels always use the same functions, so results stay bitwise equal with the executor's
// passes off. The scalar path (rank-0 programs) and the reference kernels use the C library's
// scalar functions whatever the setting.
//
// The default comes from the environment variable TENFERRO_MATH_ACCURACY ("fast" or "precise").
//
// Either library is called at the widest vector width the CPU runs: AVX-512 (8 f64 lanes), AVX2
// with FMA (4) or SSE2 (2). The environment variable TENFERRO_VECTOR_ISA ("avx512", "avx2",
// "sse2") names a narrower one, for comparisons; the widths keep the same error bounds but may
// differ in the last bits, so one process uses one width throughout.
#include <cstdint>

namespace tenferro {

enum class MathAccuracy : std::uint8_t { Fast, Precise };

void set_math_accuracy(MathAccuracy accuracy);
MathAccuracy math_accuracy();
/// "fast" or "precise".
const char* to_string(MathAccuracy accuracy);
/// The instruction set the vector math runs in: "avx512", "avx2" or "sse2".
const char* vector_instruction_set();

}  // namespace tenferro
