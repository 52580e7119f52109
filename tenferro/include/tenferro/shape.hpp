#pragma once
// Shapes and static tensor types. Storage is dense row-major (C order); a rank-0 shape is a scalar.
#include <compare>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <iterator>
#include <string>
#include <vector>

#include "tenferro/dtype.hpp"

namespace tenferro {

/// The dimensions of a tensor: a vector of int64 that keeps up to kInline dimensions inside
/// itself, so that copying the shape of a tensor of rank <= kInline allocates nothing. Tensor
/// copies, kernel results and the steps of a loop copy shapes all the time; with std::vector each
/// copy was a malloc and a free, a fifth of the time of programs made of many small operations.
/// It has the parts of std::vector's interface the library uses and converts to and from
/// std::vector<std::int64_t> implicitly.
class Shape {
 public:
  using value_type = std::int64_t;
  using size_type = std::size_t;
  using difference_type = std::ptrdiff_t;
  using reference = std::int64_t&;
  using const_reference = const std::int64_t&;
  using pointer = std::int64_t*;
  using const_pointer = const std::int64_t*;
  using iterator = std::int64_t*;
  using const_iterator = const std::int64_t*;
  using reverse_iterator = std::reverse_iterator<iterator>;
  using const_reverse_iterator = std::reverse_iterator<const_iterator>;
  static constexpr size_type kInline = 6;

  Shape() noexcept = default;
  explicit Shape(size_type n, std::int64_t value = 0) { assign(n, value); }
  Shape(std::initializer_list<std::int64_t> dims) { assign(dims.begin(), dims.end()); }
  template <std::input_iterator It>
  Shape(It first, It last) {
    assign(first, last);
  }
  Shape(const std::vector<std::int64_t>& dims) { assign(dims.begin(), dims.end()); }  // NOLINT: implicit
  Shape(const Shape& other) { assign(other.begin(), other.end()); }
  Shape(Shape&& other) noexcept { take(other); }
  ~Shape() { release(); }
  Shape& operator=(const Shape& other) {
    if (this != &other) assign(other.begin(), other.end());
    return *this;
  }
  Shape& operator=(Shape&& other) noexcept {
    if (this != &other) {
      release();
      take(other);
    }
    return *this;
  }
  Shape& operator=(std::initializer_list<std::int64_t> dims) {
    assign(dims.begin(), dims.end());
    return *this;
  }
  operator std::vector<std::int64_t>() const { return {begin(), end()}; }  // NOLINT: implicit

  void assign(const std::int64_t* first, const std::int64_t* last) {
    const auto n = static_cast<size_type>(last - first);
    if (n > capacity_) grow(n);
    for (size_type i = 0; i < n; ++i) data_[i] = first[i];  // forward: a subrange of *this is fine
    size_ = static_cast<std::uint32_t>(n);
  }
  template <std::input_iterator It>
  void assign(It first, It last) {
    clear();
    if constexpr (std::forward_iterator<It>) reserve(static_cast<size_type>(std::distance(first, last)));
    for (; first != last; ++first) push_back(static_cast<std::int64_t>(*first));
  }
  void assign(size_type n, std::int64_t value) {
    clear();
    resize(n, value);
  }

  size_type size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  size_type capacity() const noexcept { return capacity_; }
  std::int64_t* data() noexcept { return data_; }
  const std::int64_t* data() const noexcept { return data_; }
  iterator begin() noexcept { return data_; }
  iterator end() noexcept { return data_ + size_; }
  const_iterator begin() const noexcept { return data_; }
  const_iterator end() const noexcept { return data_ + size_; }
  const_iterator cbegin() const noexcept { return data_; }
  const_iterator cend() const noexcept { return data_ + size_; }
  reverse_iterator rbegin() noexcept { return reverse_iterator(end()); }
  reverse_iterator rend() noexcept { return reverse_iterator(begin()); }
  const_reverse_iterator rbegin() const noexcept { return const_reverse_iterator(end()); }
  const_reverse_iterator rend() const noexcept { return const_reverse_iterator(begin()); }
  std::int64_t& operator[](size_type i) noexcept { return data_[i]; }
  const std::int64_t& operator[](size_type i) const noexcept { return data_[i]; }
  /// Bounds-checked access; std::out_of_range past the end, as std::vector::at.
  std::int64_t& at(size_type i) {
    if (i >= size_) throw_out_of_range(i);
    return data_[i];
  }
  const std::int64_t& at(size_type i) const {
    if (i >= size_) throw_out_of_range(i);
    return data_[i];
  }
  std::int64_t& front() noexcept { return data_[0]; }
  const std::int64_t& front() const noexcept { return data_[0]; }
  std::int64_t& back() noexcept { return data_[size_ - 1]; }
  const std::int64_t& back() const noexcept { return data_[size_ - 1]; }

  void reserve(size_type n) {
    if (n > capacity_) grow(n);
  }
  void clear() noexcept { size_ = 0; }
  void push_back(std::int64_t d) {
    if (size_ == capacity_) grow(2 * capacity_);
    data_[size_++] = d;
  }
  std::int64_t& emplace_back(std::int64_t d = 0) {
    push_back(d);
    return back();
  }
  void pop_back() noexcept { --size_; }
  void resize(size_type n, std::int64_t value = 0) {
    reserve(n);
    for (size_type i = size_; i < n; ++i) data_[i] = value;
    size_ = static_cast<std::uint32_t>(n);
  }
  iterator insert(const_iterator pos, std::int64_t d) { return insert(pos, size_type{1}, d); }
  iterator insert(const_iterator pos, size_type n, std::int64_t d) {
    const auto at = make_gap(pos, n);
    for (size_type i = 0; i < n; ++i) data_[at + i] = d;
    return data_ + at;
  }
  template <std::forward_iterator It>
  iterator insert(const_iterator pos, It first, It last) {
    // Copied out first: the range may lie in this shape, which make_gap may move.
    const Shape values(first, last);
    const auto at = make_gap(pos, values.size());
    for (size_type i = 0; i < values.size(); ++i) data_[at + i] = values[i];
    return data_ + at;
  }
  iterator insert(const_iterator pos, std::initializer_list<std::int64_t> dims) {
    return insert(pos, dims.begin(), dims.end());
  }
  iterator erase(const_iterator pos) { return erase(pos, pos + 1); }
  iterator erase(const_iterator first, const_iterator last) {
    const auto at = static_cast<size_type>(first - data_), n = static_cast<size_type>(last - first);
    for (size_type i = at; i + n < size_; ++i) data_[i] = data_[i + n];
    size_ -= static_cast<std::uint32_t>(n);
    return data_ + at;
  }
  void swap(Shape& other) noexcept {
    Shape t(std::move(other));
    other = std::move(*this);
    *this = std::move(t);
  }

  friend bool operator==(const Shape& a, const Shape& b) noexcept {
    if (a.size_ != b.size_) return false;
    for (size_type i = 0; i < a.size_; ++i) {
      if (a.data_[i] != b.data_[i]) return false;
    }
    return true;
  }
  friend std::strong_ordering operator<=>(const Shape& a, const Shape& b) noexcept {
    for (size_type i = 0; i < a.size_ && i < b.size_; ++i) {
      if (a.data_[i] != b.data_[i]) return a.data_[i] <=> b.data_[i];
    }
    return a.size_ <=> b.size_;
  }

 private:
  void grow(size_type n);
  size_type make_gap(const_iterator pos, size_type n);
  [[noreturn]] void throw_out_of_range(size_type i) const;
  void release() noexcept {
    if (data_ != inline_) delete[] data_;
    data_ = inline_;
    size_ = 0;
    capacity_ = kInline;
  }
  /// Takes other's dimensions (its heap block, or a copy of its inline ones) and leaves it empty.
  void take(Shape& other) noexcept {
    if (other.data_ == other.inline_) {
      for (size_type i = 0; i < other.size_; ++i) inline_[i] = other.inline_[i];
      size_ = other.size_;
    } else {
      data_ = other.data_;
      size_ = other.size_;
      capacity_ = other.capacity_;
      other.data_ = other.inline_;
      other.capacity_ = kInline;
    }
    other.size_ = 0;
  }

  std::int64_t* data_ = inline_;
  std::uint32_t size_ = 0;
  std::uint32_t capacity_ = kInline;
  std::int64_t inline_[kInline];
};

inline std::int64_t numel(const Shape& shape) {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

/// Row-major strides in elements.
inline std::vector<std::int64_t> row_major_strides(const Shape& shape) {
  std::vector<std::int64_t> strides(shape.size());
  std::int64_t s = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    strides[i] = s;
    s *= shape[i];
  }
  return strides;
}

/// "[2, 3]"; "[]" for a scalar.
std::string shape_to_string(const Shape& shape);

/// The static type of a value: dtype and shape.
struct TensorType {
  DType dtype = DType::F64;
  Shape shape;
  bool operator==(const TensorType&) const = default;
  std::int64_t numel() const { return tenferro::numel(shape); }
  std::size_t rank() const { return shape.size(); }
  std::size_t hash() const;
  /// "f64[2, 3]".
  std::string to_string() const;
};

}  // namespace tenferro
