#pragma once
// Internal: the one-element formulas of the elementwise ops, the single home shared by the
// reference kernels (src/ops/*.cpp), the fused-kernel interpreter (exec/fused_kernel.cpp) and the
// scalar path (exec/scalar_execute.cpp). The executor's bitwise checks (TENFERRO_CHECK_PASSES=1,
// scalar_program_test) compare these paths element for element, so each formula fixes the exact
// bits of its result: which operand a NaN comes from, the sign of a zero, the i64 wrap-around.
//
// Element types: float, double, std::int64_t, and c64/c128 where a formula says so. Transcendental
// functions are not here: the reference kernels and the scalar path call libm, fused kernels
// call SLEEF (kernels/vector_math.hpp), and neither is a formula of this file.
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "tenferro/dtype.hpp"
#include "tenferro/ops/op_kind.hpp"

namespace tenferro::formulas {

template <class T>
inline constexpr bool is_complex_v = std::is_same_v<T, c64> || std::is_same_v<T, c128>;

// ---- arithmetic: i64 wraps around (two's complement) instead of overflowing (UB) ---------------

template <class T>
T wrapping_add(T x, T y) {
  if constexpr (std::is_same_v<T, std::int64_t>) {
    return static_cast<T>(static_cast<std::uint64_t>(x) + static_cast<std::uint64_t>(y));
  } else {
    return x + y;
  }
}
template <class T>
T wrapping_sub(T x, T y) {
  if constexpr (std::is_same_v<T, std::int64_t>) {
    return static_cast<T>(static_cast<std::uint64_t>(x) - static_cast<std::uint64_t>(y));
  } else {
    return x - y;
  }
}
template <class T>
T wrapping_mul(T x, T y) {
  if constexpr (std::is_same_v<T, std::int64_t>) {
    return static_cast<T>(static_cast<std::uint64_t>(x) * static_cast<std::uint64_t>(y));
  } else {
    return x * y;
  }
}

/// The neg op: IEEE negation for floating and complex values (it flips the sign bit, so neg(+0) is
/// -0 and a NaN keeps its payload, as in NumPy, JAX and PyTorch); integers wrap, so
/// neg(INT64_MIN) is INT64_MIN.
template <class T>
T neg_of(T x) {
  if constexpr (std::is_same_v<T, std::int64_t>) {
    return wrapping_sub(T{}, x);
  } else {
    return -x;
  }
}

// ---- piecewise ops on real values ----------------------------------------------------------------

/// |x|; |INT64_MIN| wraps to INT64_MIN (no UB); |-0.0| is +0 and |NaN| clears the sign bit (fabs).
/// Complex: the real modulus by std::abs (hypot: no overflow for large parts).
template <class T>
auto abs_of(T x) {
  if constexpr (std::is_same_v<T, std::int64_t>) {
    return x < 0 ? wrapping_sub(T{}, x) : x;
  } else if constexpr (is_complex_v<T>) {
    return std::abs(x);
  } else {
    return std::fabs(x);
  }
}

/// -1, 0 or 1 (sign(-0.0) is +0); NaN stays the same NaN. Complex: z / |z|, and 0 at z = 0.
template <class T>
T sign_of(T x) {
  if constexpr (is_complex_v<T>) {
    return x == T{} ? T{} : x / std::abs(x);
  } else {
    if (x != x) return x;
    return static_cast<T>((T{0} < x) - (x < T{0}));
  }
}

/// max/min that return NaN if either operand is NaN (x's NaN when both are); at ties x == y
/// (+0 and -0 included) the second operand.
template <class T>
T maximum_of(T x, T y) {
  return (x > y || x != x) ? x : y;
}
template <class T>
T minimum_of(T x, T y) {
  return (x < y || x != x) ? x : y;
}

/// clamp(lo, v, hi) = min(max(v, lo), hi): a NaN v stays NaN, NaN bounds are ignored, and where
/// lo > hi the result is hi.
template <class T>
T clamp_of(T lo, T v, T hi) {
  const T m = v < lo ? lo : v;
  return hi < m ? hi : m;
}

/// compare[dir](x, y); any comparison with a NaN operand is false except ne. Complex operands
/// admit only eq and ne (their shape rule rejects the ordered directions; false here).
template <class T>
bool compare_of(CompareDir dir, T x, T y) {
  switch (dir) {
    case CompareDir::Eq: return x == y;
    case CompareDir::Ne: return x != y;
    case CompareDir::Lt: if constexpr (!is_complex_v<T>) return x < y; else return false;
    case CompareDir::Le: if constexpr (!is_complex_v<T>) return x <= y; else return false;
    case CompareDir::Gt: if constexpr (!is_complex_v<T>) return x > y; else return false;
    case CompareDir::Ge: if constexpr (!is_complex_v<T>) return x >= y; else return false;
  }
  return false;
}

/// select(p, a, b): a where p, else b, never a blend (so NaN in the unselected branch stays out).
template <class T>
T select_of(bool p, T a, T b) {
  return p ? a : b;
}

// ---- convert -------------------------------------------------------------------------------------

/// One element converted between element types. To bool: x != 0 (NaN gives true). Float to i64
/// truncates toward zero, saturates at the i64 range and maps NaN to 0 (a defined result where a
/// plain cast would be UB). Complex to non-complex is excluded by the shape rule (zero here).
template <class To, class From>
To convert_of(From x) {
  if constexpr (std::is_same_v<To, bool>) {
    return x != From{};
  } else if constexpr (is_complex_v<To>) {
    using R = typename To::value_type;
    if constexpr (is_complex_v<From>) {
      return To(static_cast<R>(x.real()), static_cast<R>(x.imag()));
    } else {
      return To(static_cast<R>(x), R{});
    }
  } else if constexpr (is_complex_v<From>) {
    return To{};  // unreachable: rejected by ops::convert
  } else if constexpr (std::is_same_v<To, std::int64_t> && std::is_floating_point_v<From>) {
    if (std::isnan(x)) return 0;
    constexpr auto lo = static_cast<From>(std::numeric_limits<std::int64_t>::min());  // -2^63, exact
    if (x >= -lo) return std::numeric_limits<std::int64_t>::max();
    if (x <= lo) return std::numeric_limits<std::int64_t>::min();
    return static_cast<std::int64_t>(x);
  } else {
    return static_cast<To>(x);
  }
}

}  // namespace tenferro::formulas
