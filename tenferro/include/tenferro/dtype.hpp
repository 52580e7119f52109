#pragma once
// Element types (docs/design.md, "Tensors and dtypes"): f32, f64, c64, c128, i64, bool.
#include <complex>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <string>

namespace tenferro {

enum class DType : std::uint8_t { F32, F64, C64, C128, I64, Bool };

using c64 = std::complex<float>;
using c128 = std::complex<double>;

constexpr bool is_complex(DType d) { return d == DType::C64 || d == DType::C128; }
constexpr bool is_floating(DType d) { return d == DType::F32 || d == DType::F64; }
/// Float or complex: the dtypes that carry tangents.
constexpr bool is_inexact(DType d) { return is_floating(d) || is_complex(d); }

constexpr std::size_t dtype_size(DType d) {
  switch (d) {
    case DType::F32: return 4;
    case DType::F64: return 8;
    case DType::C64: return 8;
    case DType::C128: return 16;
    case DType::I64: return 8;
    case DType::Bool: return 1;
  }
  return 0;
}

/// The real dtype of the same precision (f32 for c64, f64 for c128; others unchanged).
constexpr DType real_dtype(DType d) {
  return d == DType::C64 ? DType::F32 : d == DType::C128 ? DType::F64 : d;
}
/// The complex dtype of the same precision (c64 for f32, c128 for f64; complex unchanged).
constexpr DType complex_dtype(DType d) {
  return d == DType::F32 ? DType::C64 : d == DType::F64 ? DType::C128 : d;
}

constexpr const char* dtype_name(DType d) {
  switch (d) {
    case DType::F32: return "f32";
    case DType::F64: return "f64";
    case DType::C64: return "c64";
    case DType::C128: return "c128";
    case DType::I64: return "i64";
    case DType::Bool: return "bool";
  }
  return "?";
}

/// The C++ element type of a dtype.
template <DType D> struct element_of;
template <> struct element_of<DType::F32> { using type = float; };
template <> struct element_of<DType::F64> { using type = double; };
template <> struct element_of<DType::C64> { using type = c64; };
template <> struct element_of<DType::C128> { using type = c128; };
template <> struct element_of<DType::I64> { using type = std::int64_t; };
template <> struct element_of<DType::Bool> { using type = bool; };
template <DType D> using element_t = typename element_of<D>::type;

/// Whether T is the element type of a dtype (element_t<D> for some D). Only these six types are
/// stored; Tensor::from converts other arithmetic types (tensor.hpp) or refuses them at compile time.
template <class T> inline constexpr bool is_element_type_v = false;
template <> inline constexpr bool is_element_type_v<float> = true;
template <> inline constexpr bool is_element_type_v<double> = true;
template <> inline constexpr bool is_element_type_v<c64> = true;
template <> inline constexpr bool is_element_type_v<c128> = true;
template <> inline constexpr bool is_element_type_v<std::int64_t> = true;
template <> inline constexpr bool is_element_type_v<bool> = true;

namespace detail {
template <class T>
constexpr DType dtype_of_element() {
  static_assert(is_element_type_v<T>,
                "tenferro: not a tensor element type; the element types are float, double, "
                "std::complex<float>, std::complex<double>, std::int64_t and bool");
  if constexpr (std::is_same_v<T, float>) return DType::F32;
  else if constexpr (std::is_same_v<T, double>) return DType::F64;
  else if constexpr (std::is_same_v<T, c64>) return DType::C64;
  else if constexpr (std::is_same_v<T, c128>) return DType::C128;
  else if constexpr (std::is_same_v<T, std::int64_t>) return DType::I64;
  else return DType::Bool;
}
}  // namespace detail

/// The dtype whose element type is T; any other T is a compile error (never a silent f64).
template <class T> inline constexpr DType dtype_of_v = detail::dtype_of_element<T>();

/// Calls f(T{}) with T the element type of d (a typed dispatch over all dtypes).
template <class F>
decltype(auto) visit_dtype(DType d, F&& f) {
  switch (d) {
    case DType::F32: return f(float{});
    case DType::F64: return f(double{});
    case DType::C64: return f(c64{});
    case DType::C128: return f(c128{});
    case DType::I64: return f(std::int64_t{});
    case DType::Bool: return f(bool{});
  }
  return f(double{});
}

}  // namespace tenferro
