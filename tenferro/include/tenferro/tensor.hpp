#pragma once
// Tensor: a dense, row-major, reference-counted n-d array of one dtype.
//
// Copies are shallow: they share storage (like torch.Tensor); clone() makes a deep copy. Storage is
// 64-byte aligned. A rank-0 tensor is a scalar. Element access checks the dtype and bounds and
// throws DTypeError/ShapeError instead of reading the wrong bytes.
#include <complex>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <iosfwd>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "tenferro/dtype.hpp"
#include "tenferro/error.hpp"
#include "tenferro/shape.hpp"

namespace tenferro {

class Tensor;
namespace detail {
/// Internal (loops over the steps of a stacked tensor): points `view`, a tensor over part of
/// another tensor's storage (Tensor::wrap with that tensor as owner), at `data`, another place in
/// the same storage, keeping its type and owner. What a new wrap would give, without allocating.
void repoint_view(Tensor& view, void* data);
}  // namespace detail

class Tensor {
 public:
  /// A rank-0 f64 zero.
  Tensor() : Tensor(TensorType{DType::F64, {}}) {}
  /// Zero-filled tensor of the given type.
  explicit Tensor(TensorType type);

  /// A tensor whose elements are not initialized: for kernels that write every element.
  static Tensor uninitialized(TensorType type);

  /// A tensor over memory it does not own (NumPy's or another library's through DLPack): `data`
  /// holds the elements row-major and contiguous, aligned to the element size (the 64-byte
  /// alignment of tenferro's own storage is not required: kernels make unaligned accesses).
  /// `owner` keeps the memory alive; the tensor and its copies share it, and it is released with
  /// the last of them. Programs never write to their arguments' storage, so the memory is only
  /// written through data<T>() by the caller.
  static Tensor wrap(TensorType type, void* data, std::shared_ptr<void> owner);

  static Tensor zeros(Shape shape, DType dtype = DType::F64) { return Tensor({dtype, std::move(shape)}); }
  static Tensor ones(Shape shape, DType dtype = DType::F64) { return full(std::move(shape), 1.0, dtype); }
  /// Every element equal to `value` (converted to dtype; the imaginary part needs a complex dtype).
  static Tensor full(Shape shape, c128 value, DType dtype = DType::F64);
  /// Rank-0 tensors.
  static Tensor scalar(double value, DType dtype = DType::F64) { return full({}, value, dtype); }
  static Tensor scalar(c128 value, DType dtype = DType::C128) { return full({}, value, dtype); }

  /// 1-d tensor from values; the dtype follows T: float -> f32, double -> f64, std::complex<float>
  /// -> c64, std::complex<double> -> c128, bool -> bool, and every integer type (int, long long,
  /// unsigned, std::int8_t, ...) -> i64, so `Tensor::from({1, 2, 3})` is an i64 tensor. Unsigned
  /// values above INT64_MAX throw ValueError. Other element types (character types, long double,
  /// std::complex<long double>, ...) do not compile.
  template <class T>
  static Tensor from(std::initializer_list<T> values) {
    return from(std::vector<T>(values), Shape{static_cast<std::int64_t>(values.size())});
  }
  /// 2-d tensor from rows of equal length.
  template <class T>
  static Tensor from(std::initializer_list<std::initializer_list<T>> rows);
  /// Tensor of `shape` from row-major values; throws ShapeError if the count differs.
  template <class T>
  static Tensor from(const std::vector<T>& values, Shape shape);

  const TensorType& type() const { return type_; }
  DType dtype() const { return type_.dtype; }
  const Shape& shape() const { return type_.shape; }
  std::size_t rank() const { return type_.shape.size(); }
  std::int64_t numel() const { return type_.numel(); }
  std::size_t nbytes() const { return static_cast<std::size_t>(numel()) * dtype_size(dtype()); }

  void* raw_data() { return storage_.get(); }
  const void* raw_data() const { return storage_.get(); }
  /// Typed access; throws DTypeError if T is not this tensor's element type.
  template <class T>
  T* data() {
    check_element<T>("data");
    return static_cast<T*>(raw_data());
  }
  template <class T>
  const T* data() const {
    check_element<T>("data");
    return static_cast<const T*>(raw_data());
  }
  template <class T>
  std::span<const T> values() const {
    return {data<T>(), static_cast<std::size_t>(numel())};
  }

  /// Element at a multi-index (bounds checked), as T (dtype checked).
  template <class T>
  T at(std::initializer_list<std::int64_t> index) const {
    return data<T>()[flat_index(index)];
  }
  /// The value of a one-element tensor.
  template <class T>
  T item() const {
    if (numel() != 1) throw ShapeError("Tensor::item: tensor of shape " + shape_to_string(shape()) + " has " + std::to_string(numel()) + " elements, expected 1");
    return data<T>()[0];
  }
  /// Element i (row-major) converted to complex double, whatever the dtype.
  c128 element(std::int64_t i) const;

  /// A deep copy.
  Tensor clone() const;
  /// A tensor of the same storage with another shape of equal element count.
  Tensor reshaped(Shape shape) const;
  bool shares_storage_with(const Tensor& other) const { return storage_ == other.storage_; }
  /// Whether no other Tensor shares this one's storage.
  bool unique_storage() const { return storage_.use_count() == 1; }

 private:
  template <class T>
  void check_element(const char* what) const {
    if (dtype_of_v<T> != dtype()) throw_dtype(what, dtype_of_v<T>);
  }
  [[noreturn]] void throw_dtype(const char* what, DType requested) const;
  /// Tensor::from's shared part: a tensor of `dtype` and `shape` holding a copy of `count`
  /// elements of dtype's element type at `values`; ShapeError if the count is not the shape's.
  static Tensor from_elements(DType dtype, const void* values, std::size_t count, Shape shape);
  [[noreturn]] static void throw_unsigned_above_i64(unsigned long long value);
  [[noreturn]] static void throw_ragged_rows(std::size_t length, std::size_t cols);
  std::int64_t flat_index(std::initializer_list<std::int64_t> index) const;

  friend void detail::repoint_view(Tensor& view, void* data);

  TensorType type_;
  std::shared_ptr<std::byte> storage_;
};

/// "tensor(f64[2], [1, 2])", nested brackets for higher ranks; long tensors are elided.
std::ostream& operator<<(std::ostream& os, const Tensor& t);
std::string to_string(const Tensor& t);

/// Element-wise comparison within rtol/atol (absolute values of complex differences); shapes and
/// dtypes must match.
bool allclose(const Tensor& a, const Tensor& b, double rtol = 1e-10, double atol = 1e-12);

namespace detail {
template <class T>
inline constexpr bool is_character_v = std::is_same_v<T, char> || std::is_same_v<T, wchar_t> ||
                                       std::is_same_v<T, char8_t> || std::is_same_v<T, char16_t> ||
                                       std::is_same_v<T, char32_t>;
/// Integer types Tensor::from stores as i64 (bool and character types are not among them).
template <class T>
inline constexpr bool is_from_integer_v =
    std::is_integral_v<T> && !std::is_same_v<T, bool> && !is_character_v<T>;
/// The element type Tensor::from stores a T as.
template <class T>
using from_stored_t = std::conditional_t<is_element_type_v<T>, T, std::int64_t>;
}  // namespace detail

// Tensor::from's bodies stay small on purpose: the count check, the copy and the error messages
// are out of line (tensor.cpp), so a user file that builds a few tensors compiles no string
// formatting of its own.
template <class T>
Tensor Tensor::from(const std::vector<T>& values, Shape shape) {
  static_assert(is_element_type_v<T> || detail::is_from_integer_v<T>,
                "Tensor::from: unsupported element type; pass float, double, std::complex<float>, "
                "std::complex<double>, bool or an integer type (stored as i64); convert character "
                "and long double values first");
  if constexpr (std::is_same_v<T, bool>) {
    // std::vector<bool> has no data(): copy into bytes of the bool dtype's 0/1 representation.
    const std::vector<unsigned char> bytes(values.begin(), values.end());
    return from_elements(DType::Bool, bytes.data(), bytes.size(), std::move(shape));
  } else if constexpr (is_element_type_v<T>) {
    return from_elements(dtype_of_v<T>, values.data(), values.size(), std::move(shape));
  } else {
    std::vector<std::int64_t> widened(values.size());
    for (std::size_t i = 0; i < values.size(); ++i) {
      if constexpr (std::is_unsigned_v<T> && sizeof(T) >= sizeof(std::int64_t)) {
        if (values[i] > static_cast<T>(INT64_MAX)) throw_unsigned_above_i64(values[i]);
      }
      widened[i] = static_cast<std::int64_t>(values[i]);
    }
    return from_elements(DType::I64, widened.data(), widened.size(), std::move(shape));
  }
}

template <class T>
Tensor Tensor::from(std::initializer_list<std::initializer_list<T>> rows) {
  std::vector<T> values;
  const std::size_t cols = rows.size() ? rows.begin()->size() : 0;
  for (const auto& row : rows) {
    if (row.size() != cols) throw_ragged_rows(row.size(), cols);
    values.insert(values.end(), row.begin(), row.end());
  }
  return from(values, Shape{static_cast<std::int64_t>(rows.size()), static_cast<std::int64_t>(cols)});
}

}  // namespace tenferro
