#pragma once
// Internal: array-at-a-time transcendental functions, from SLEEF (1.0-ULP variants) or glibc's
// libmvec (within 4 ULP) as MathAccuracy says (tenferro/math_accuracy.hpp), and for the CPU: the
// widest of AVX-512F (8 f64 / 16 f32 lanes), AVX2+FMA (4 / 8) and SSE2 (2 / 4, every x86-64 CPU)
// that it runs, unless the environment variable TENFERRO_VECTOR_ISA (sse2, avx2, avx512) or
// set_vector_isa names a narrower one. The widths compute the same functions within the same
// bounds but not always the same bits (libmvec's AVX-512 code is its own), so one process uses
// one width for all its kernels. Each function maps x[0..n) to y[0..n) (y may equal x); a tail shorter than one
// vector is computed in a zero-padded vector, so every element gets the same function whatever
// its position, and results do not depend on how an array is split into blocks or threads.
#include <cstdint>
#include <vector>

#include "tenferro/math_accuracy.hpp"

namespace tenferro::exec {

/// SinOfSinCos and CosOfSinCos are the two halves of the library's sincos. SLEEF's are also within
/// 1 ULP but not always the bits of Sin and Cos (about 3% of inputs differ in the last bit);
/// libmvec's are its Sin and Cos. The executor uses
/// them for every sin and cos of a value that has both (exec_program.hpp, Trig), so that a fused
/// kernel may compute the two with one call (sincos below) and still match unfused kernels.
///
/// The one list of one-argument functions, X(Enum, name): the enum, each table's entries and their
/// order are generated from it (vector_math_impl.inc defines name_d and name_f for every entry).
#define TENFERRO_VECTOR_MATH_UNARY(X)                                                            \
  X(Exp, exp) X(Log, log) X(Sin, sin) X(Cos, cos) X(Tanh, tanh) X(Expm1, expm1) X(Log1p, log1p)  \
  X(Sqrt, sqrt) X(Rsqrt, rsqrt) X(SinOfSinCos, sin_of_sincos) X(CosOfSinCos, cos_of_sincos)      \
  X(Tan, tan) X(Asin, asin) X(Acos, acos) X(Atan, atan) X(Sinh, sinh) X(Cosh, cosh)              \
  X(Asinh, asinh) X(Acosh, acosh) X(Atanh, atanh) X(Erf, erf) X(Erfc, erfc) X(Lgamma, lgamma)    \
  X(Log2, log2) X(Log10, log10) X(Exp2, exp2) X(Cbrt, cbrt)

enum class MathFn : std::uint8_t {
#define TENFERRO_MATH_FN_ENUM(Enum, name) Enum,
  TENFERRO_VECTOR_MATH_UNARY(TENFERRO_MATH_FN_ENUM)
#undef TENFERRO_MATH_FN_ENUM
  kCount
};

/// Two-argument functions besides pow (which keeps its own entry): y = f(x, z).
enum class MathFn2 : std::uint8_t { Atan2, Hypot, kCount };

/// Elementwise arithmetic, IEEE-rounded like the scalar operators (no contraction into FMA), so
/// every table gives the same bits; the tables only differ in vector width.
enum class ArithFn : std::uint8_t { Add, Mul, Div, kCount };

template <class T>
using UnaryArrayFn = void (*)(const T* x, T* y, std::int64_t n);
template <class T>
using BinaryArrayFn = void (*)(const T* x, const T* z, T* y, std::int64_t n);
/// s[0..n) and c[0..n) = the halves of sincos(x[0..n)); s or c may equal x, not each other.
template <class T>
using SinCosArrayFn = void (*)(const T* x, T* s, T* c, std::int64_t n);

/// A function of one vector of the table's width in the System V vector ABI (argument and result
/// in ymm0 or zmm0; every vector register and the caller-saved general registers clobbered), kept
/// typeless here: the per-vector body of one of the table's array functions, for callers that
/// generate code (exec/arith_jit.cpp). A full vector through it gives the array function's bits.
using VectorEntry = void (*)();

struct VectorMathTable {
  const char* library;  // "sleef-u10" or "libmvec"
  const char* isa;      // "avx512", "avx2" or "sse2"
  MathAccuracy accuracy;  // the setting that selects this library
  UnaryArrayFn<double> f64[static_cast<int>(MathFn::kCount)];
  UnaryArrayFn<float> f32[static_cast<int>(MathFn::kCount)];
  /// y[i] = x[i] op z[i]; y may equal x or z.
  BinaryArrayFn<double> arith_f64[static_cast<int>(ArithFn::kCount)];
  BinaryArrayFn<float> arith_f32[static_cast<int>(ArithFn::kCount)];
  BinaryArrayFn<double> math2_f64[static_cast<int>(MathFn2::kCount)];
  BinaryArrayFn<float> math2_f32[static_cast<int>(MathFn2::kCount)];
  BinaryArrayFn<double> pow_f64;
  BinaryArrayFn<float> pow_f32;
  SinCosArrayFn<double> sincos_f64;
  SinCosArrayFn<float> sincos_f32;
  /// The per-vector body of f64[fn] and f32[fn]; null where the array function recomputes
  /// elements outside the vector form's domain (log1p, asinh, acosh, erf, erfc, the f32 tanh and
  /// atanh), and in the SSE2 tables.
  VectorEntry vector_f64[static_cast<int>(MathFn::kCount)];
  VectorEntry vector_f32[static_cast<int>(MathFn::kCount)];
};

/// The instruction sets of the tables, narrowest first.
enum class VectorIsa : std::uint8_t { Sse2, Avx2, Avx512 };
const char* to_string(VectorIsa isa);
/// The instruction set the tables are taken from: the widest the CPU runs, or the one named by
/// TENFERRO_VECTOR_ISA when the process started (an Error if the CPU cannot run it, or for an
/// unknown name).
VectorIsa vector_isa();
/// Uses `isa` from now on (tests and benchmarks compare the widths); an Error if the CPU cannot
/// run it. Not meant to change while kernels run on other threads.
void set_vector_isa(VectorIsa isa);
/// Every instruction set this CPU runs, narrowest first.
std::vector<VectorIsa> runnable_vector_isas();

/// The table for vector_isa() and the current math_accuracy().
const VectorMathTable& vector_math();
/// The table for vector_isa() and the given accuracy.
const VectorMathTable& vector_math_for(MathAccuracy accuracy);
/// Every table this CPU can run (for tests).
std::vector<const VectorMathTable*> runnable_vector_math_tables();

// One table per library and instruction set (vector_math_<library>_<isa>.cpp).
const VectorMathTable& vector_math_sleef_avx512();
const VectorMathTable& vector_math_mvec_avx512();
const VectorMathTable& vector_math_sleef_avx2();
const VectorMathTable& vector_math_sleef_sse2();
const VectorMathTable& vector_math_mvec_avx2();
const VectorMathTable& vector_math_mvec_sse2();

// Array functions of `table` by element type. Callers resolve the table once per kernel run
// (vector_math()), so that a kernel never mixes libraries and the lookup stays off the block loop.
template <class T>
inline void apply(const VectorMathTable& table, MathFn fn, const T* x, T* y, std::int64_t n) {
  if constexpr (sizeof(T) == 8) {
    table.f64[static_cast<int>(fn)](x, y, n);
  } else {
    table.f32[static_cast<int>(fn)](x, y, n);
  }
}
template <class T>
inline void apply_arith(const VectorMathTable& table, ArithFn fn, const T* x, const T* z, T* y, std::int64_t n) {
  if constexpr (sizeof(T) == 8) {
    table.arith_f64[static_cast<int>(fn)](x, z, y, n);
  } else {
    table.arith_f32[static_cast<int>(fn)](x, z, y, n);
  }
}

template <class T>
inline void apply2(const VectorMathTable& table, MathFn2 fn, const T* x, const T* z, T* y, std::int64_t n) {
  if constexpr (sizeof(T) == 8) {
    table.math2_f64[static_cast<int>(fn)](x, z, y, n);
  } else {
    table.math2_f32[static_cast<int>(fn)](x, z, y, n);
  }
}

template <class T>
inline void apply_pow(const VectorMathTable& table, const T* x, const T* z, T* y, std::int64_t n) {
  if constexpr (sizeof(T) == 8) {
    table.pow_f64(x, z, y, n);
  } else {
    table.pow_f32(x, z, y, n);
  }
}

template <class T>
inline void apply_sincos(const VectorMathTable& table, const T* x, T* s, T* c, std::int64_t n) {
  if constexpr (sizeof(T) == 8) {
    table.sincos_f64(x, s, c, n);
  } else {
    table.sincos_f32(x, s, c, n);
  }
}

}  // namespace tenferro::exec
