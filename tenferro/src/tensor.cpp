#include "tenferro/tensor.hpp"

#include "tenferro/buffer_pool.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <stdexcept>

namespace tenferro {

void Shape::grow(size_type n) {
  n = std::max<size_type>(n, kInline);
  if (n > UINT32_MAX) throw std::length_error("Shape: rank " + std::to_string(n) + " is too large");
  auto* block = new std::int64_t[n];
  std::copy(data_, data_ + size_, block);
  if (data_ != inline_) delete[] data_;
  data_ = block;
  capacity_ = static_cast<std::uint32_t>(n);
}

Shape::size_type Shape::make_gap(const_iterator pos, size_type n) {
  const auto at = static_cast<size_type>(pos - data_);
  reserve(size_ + n);
  for (size_type i = size_; i-- > at;) data_[i + n] = data_[i];
  size_ += static_cast<std::uint32_t>(n);
  return at;
}

void Shape::throw_out_of_range(size_type i) const {
  throw std::out_of_range("Shape::at: index " + std::to_string(i) + " of a shape of rank " + std::to_string(size_));
}

std::string shape_to_string(const Shape& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::size_t TensorType::hash() const {
  std::size_t h = static_cast<std::size_t>(dtype) * 0x9e3779b97f4a7c15ULL;
  for (auto d : shape) h = (h ^ static_cast<std::size_t>(d)) * 0x100000001b3ULL;
  return h;
}

std::string TensorType::to_string() const { return std::string(dtype_name(dtype)) + shape_to_string(shape); }

namespace {
std::shared_ptr<std::byte> allocate(std::size_t bytes, bool zero = true) {
  std::size_t granted = 0;
  std::byte* p = detail::pool_allocate(bytes, granted);
  if (zero) std::memset(p, 0, granted);
  return std::shared_ptr<std::byte>(p, [granted](std::byte* q) { detail::pool_release(q, granted); });
}

std::string number(double x) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, x);
  return std::string(buf, r.ptr);
}
}  // namespace

Tensor::Tensor(TensorType type) : type_(std::move(type)) {
  for (auto d : type_.shape) {
    if (d < 0) throw ShapeError("Tensor: negative dimension in shape " + shape_to_string(type_.shape));
  }
  storage_ = allocate(nbytes());
}

void detail::repoint_view(Tensor& view, void* data) {
  // The aliasing move keeps the owner's control block: no reference count changes.
  view.storage_ = std::shared_ptr<std::byte>(std::move(view.storage_), static_cast<std::byte*>(data));
}

Tensor Tensor::wrap(TensorType type, void* data, std::shared_ptr<void> owner) {
  for (auto d : type.shape) {
    if (d < 0) throw ShapeError("Tensor::wrap: negative dimension in shape " + shape_to_string(type.shape));
  }
  const auto address = reinterpret_cast<std::uintptr_t>(data);
  if (data == nullptr && tenferro::numel(type.shape) > 0) throw ValueError("Tensor::wrap: null data for " + type.to_string());
  if (address % dtype_size(type.dtype) != 0) {
    throw ValueError("Tensor::wrap: data for " + type.to_string() + " is not aligned to its element size (" +
                     std::to_string(dtype_size(type.dtype)) + " bytes)");
  }
  Tensor t;
  t.type_ = std::move(type);
  // The aliasing constructor: the storage pointer is `data`, its lifetime that of `owner`.
  t.storage_ = std::shared_ptr<std::byte>(std::move(owner), static_cast<std::byte*>(data));
  return t;
}

Tensor Tensor::uninitialized(TensorType type) {
  Tensor t;
  t.type_ = std::move(type);
  for (auto d : t.type_.shape) {
    if (d < 0) throw ShapeError("Tensor: negative dimension in shape " + shape_to_string(t.type_.shape));
  }
  t.storage_ = allocate(t.nbytes(), /*zero=*/false);
  return t;
}

Tensor Tensor::full(Shape shape, c128 value, DType dtype) {
  if (value.imag() != 0.0 && !is_complex(dtype)) {
    throw DTypeError("Tensor::full: complex value for dtype " + std::string(dtype_name(dtype)));
  }
  Tensor t(TensorType{dtype, std::move(shape)});
  visit_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    T v;
    if constexpr (std::is_same_v<T, c64>) {
      v = c64(static_cast<float>(value.real()), static_cast<float>(value.imag()));
    } else if constexpr (std::is_same_v<T, c128>) {
      v = value;
    } else {
      v = static_cast<T>(value.real());
    }
    std::fill_n(static_cast<T*>(t.raw_data()), t.numel(), v);
  });
  return t;
}

c128 Tensor::element(std::int64_t i) const {
  if (i < 0 || i >= numel()) throw ShapeError("Tensor::element: index " + std::to_string(i) + " out of range for " + type_.to_string());
  return visit_dtype(dtype(), [&](auto zero) -> c128 {
    using T = decltype(zero);
    T v = static_cast<const T*>(raw_data())[i];
    if constexpr (std::is_same_v<T, c64> || std::is_same_v<T, c128>) {
      return c128(v.real(), v.imag());
    } else {
      return c128(static_cast<double>(v), 0.0);
    }
  });
}

Tensor Tensor::clone() const {
  Tensor t(type_);
  std::memcpy(t.raw_data(), raw_data(), nbytes());
  return t;
}

Tensor Tensor::reshaped(Shape shape) const {
  if (tenferro::numel(shape) != numel()) {
    throw ShapeError("Tensor::reshaped: cannot view " + type_.to_string() + " as shape " + shape_to_string(shape));
  }
  Tensor t = *this;
  t.type_.shape = std::move(shape);
  return t;
}

Tensor Tensor::from_elements(DType dtype, const void* values, std::size_t count, Shape shape) {
  if (static_cast<std::int64_t>(count) != tenferro::numel(shape)) {
    throw ShapeError("Tensor::from: " + std::to_string(count) + " values for shape " + shape_to_string(shape) + " (" +
                     std::to_string(tenferro::numel(shape)) + " elements)");
  }
  Tensor t = uninitialized(TensorType{dtype, std::move(shape)});
  if (count != 0) std::memcpy(t.raw_data(), values, count * dtype_size(dtype));
  return t;
}

void Tensor::throw_unsigned_above_i64(unsigned long long value) {
  throw ValueError("Tensor::from: the unsigned value " + std::to_string(value) + " does not fit the i64 dtype (at most " +
                   std::to_string(INT64_MAX) + ")");
}

void Tensor::throw_ragged_rows(std::size_t length, std::size_t cols) {
  throw ShapeError("Tensor::from: ragged rows (" + std::to_string(length) + " vs " + std::to_string(cols) + " columns)");
}

void Tensor::throw_dtype(const char* what, DType requested) const {
  throw DTypeError(std::string("Tensor::") + what + ": tensor has dtype " + dtype_name(dtype()) +
                   ", accessed as " + dtype_name(requested));
}

std::int64_t Tensor::flat_index(std::initializer_list<std::int64_t> index) const {
  if (index.size() != rank()) {
    throw ShapeError("Tensor::at: " + std::to_string(index.size()) + " indices for a rank-" + std::to_string(rank()) + " tensor");
  }
  std::int64_t flat = 0;
  std::size_t axis = 0;
  for (auto i : index) {
    if (i < 0 || i >= shape()[axis]) {
      throw ShapeError("Tensor::at: index " + std::to_string(i) + " out of range for axis " + std::to_string(axis) + " of " + type_.to_string());
    }
    flat = flat * shape()[axis] + i;
    ++axis;
  }
  return flat;
}

namespace {
void print_element(std::ostream& os, const Tensor& t, std::int64_t i) {
  c128 v = t.element(i);
  if (t.dtype() == DType::Bool) {
    os << (v.real() != 0 ? "true" : "false");
  } else if (is_complex(t.dtype())) {
    os << number(v.real()) << (std::signbit(v.imag()) ? "" : "+") << number(v.imag()) << 'i';
  } else {
    os << number(v.real());
  }
}

void print_level(std::ostream& os, const Tensor& t, std::size_t axis, std::int64_t offset,
                 const std::vector<std::int64_t>& strides) {
  if (axis == t.rank()) {
    print_element(os, t, offset);
    return;
  }
  constexpr std::int64_t kEdge = 3;  // long axes print their first and last kEdge entries
  const std::int64_t n = t.shape()[axis];
  const bool elide = n > 2 * kEdge + 1;
  os << '[';
  for (std::int64_t i = 0; i < n; ++i) {
    if (elide && i == kEdge) {
      os << ", ...";
      i = n - kEdge;
    }
    if (i > 0) os << ", ";
    print_level(os, t, axis + 1, offset + i * strides[axis], strides);
  }
  os << ']';
}
}  // namespace

std::ostream& operator<<(std::ostream& os, const Tensor& t) {
  os << "tensor(" << t.type().to_string() << ", ";
  print_level(os, t, 0, 0, row_major_strides(t.shape()));
  return os << ')';
}

std::string to_string(const Tensor& t) {
  std::ostringstream os;
  os << t;
  return os.str();
}

bool allclose(const Tensor& a, const Tensor& b, double rtol, double atol) {
  if (a.type() != b.type()) return false;
  for (std::int64_t i = 0; i < a.numel(); ++i) {
    c128 x = a.element(i), y = b.element(i);
    if (std::isnan(x.real()) || std::isnan(y.real())) {
      if (std::isnan(x.real()) != std::isnan(y.real())) return false;
      continue;
    }
    if (std::abs(x - y) > atol + rtol * std::abs(y)) return false;
  }
  return true;
}

}  // namespace tenferro
