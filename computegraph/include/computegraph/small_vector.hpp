#pragma once
// SmallVector<T, N>: a vector that keeps up to N elements inside itself and only allocates beyond
// that. A graph stores one operand list and one output list per operation; nearly all have at most
// two operands and one output, so inline storage saves two heap blocks per operation, which on
// graphs of 10^5 operations is a large share of the memory a transform touches.
//
// The interface is the part of std::vector that graphs need: element access, iteration, size,
// push_back/pop_back, comparison (also with a std::vector), and construction from a std::vector
// (its elements are moved in). Elements must be nothrow-move-constructible; references and
// iterators are invalidated by growth, as with std::vector.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <memory>
#include <new>
#include <span>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

namespace computegraph {

template <class T, std::size_t N>
class SmallVector {
  static_assert(N > 0, "SmallVector needs room for at least one inline element");
  static_assert(std::is_nothrow_move_constructible_v<T>,
                "SmallVector relocates elements by moving them, which must not throw");

 public:
  using value_type = T;
  using size_type = std::size_t;
  using difference_type = std::ptrdiff_t;
  using reference = T&;
  using const_reference = const T&;
  using pointer = T*;
  using const_pointer = const T*;
  using iterator = T*;
  using const_iterator = const T*;

  SmallVector() noexcept = default;
  SmallVector(std::initializer_list<T> init) { assign_copies(init.begin(), init.end()); }
  template <std::input_iterator It>
  SmallVector(It first, It last) {
    assign_copies(first, last);
  }
  /// Moves the elements of `v` in (implicit, so a std::vector can be passed where a SmallVector is
  /// stored).
  SmallVector(std::vector<T>&& v) {  // NOLINT(google-explicit-constructor)
    reserve(v.size());
    for (T& x : v) unchecked_emplace(std::move(x));
  }
  SmallVector(const SmallVector& other) { assign_copies(other.begin(), other.end()); }
  SmallVector(SmallVector&& other) noexcept { steal(other); }
  SmallVector& operator=(const SmallVector& other) {
    if (this != &other) {
      SmallVector copy(other);
      clear_and_free();
      steal(copy);
    }
    return *this;
  }
  SmallVector& operator=(SmallVector&& other) noexcept {
    if (this != &other) {
      clear_and_free();
      steal(other);
    }
    return *this;
  }
  ~SmallVector() { clear_and_free(); }

  size_type size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  size_type capacity() const noexcept { return capacity_; }
  /// Whether the elements are stored inside the object (no heap block).
  bool is_inline() const noexcept { return capacity_ == N; }

  T* data() noexcept { return is_inline() ? inline_data() : storage_.heap; }
  const T* data() const noexcept { return is_inline() ? inline_data() : storage_.heap; }
  iterator begin() noexcept { return data(); }
  iterator end() noexcept { return data() + size_; }
  const_iterator begin() const noexcept { return data(); }
  const_iterator end() const noexcept { return data() + size_; }
  T& operator[](size_type i) { return data()[i]; }
  const T& operator[](size_type i) const { return data()[i]; }
  T& front() { return data()[0]; }
  const T& front() const { return data()[0]; }
  T& back() { return data()[size_ - 1]; }
  const T& back() const { return data()[size_ - 1]; }

  operator std::span<const T>() const noexcept { return {data(), size_}; }  // NOLINT
  std::vector<T> to_vector() const { return std::vector<T>(begin(), end()); }

  void reserve(size_type wanted) {
    if (wanted > capacity_) grow_to(wanted);
  }
  void push_back(const T& x) { emplace_back(x); }
  void push_back(T&& x) { emplace_back(std::move(x)); }
  template <class... Args>
  T& emplace_back(Args&&... args) {
    if (size_ == capacity_) {
      // Build the element first: `args` may refer to an element that growth moves away.
      T element(std::forward<Args>(args)...);
      grow_to(std::max<size_type>(2 * capacity_, size_ + 1));
      return unchecked_emplace(std::move(element));
    }
    return unchecked_emplace(std::forward<Args>(args)...);
  }
  void pop_back() {
    --size_;
    std::destroy_at(data() + size_);
  }
  void clear() noexcept {
    std::destroy(begin(), end());
    size_ = 0;
  }

  friend bool operator==(const SmallVector& a, const SmallVector& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }
  friend bool operator==(const SmallVector& a, const std::vector<T>& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  T* inline_data() noexcept { return std::launder(reinterpret_cast<T*>(storage_.inline_bytes)); }
  const T* inline_data() const noexcept {
    return std::launder(reinterpret_cast<const T*>(storage_.inline_bytes));
  }

  /// Precondition: size_ < capacity_.
  template <class... Args>
  T& unchecked_emplace(Args&&... args) {
    T* slot = std::construct_at(data() + size_, std::forward<Args>(args)...);
    ++size_;
    return *slot;
  }

  template <class It>
  void assign_copies(It first, It last) {
    if constexpr (std::forward_iterator<It>) reserve(static_cast<size_type>(std::distance(first, last)));
    try {
      for (; first != last; ++first) emplace_back(*first);
    } catch (...) {
      clear_and_free();
      throw;
    }
  }

  /// Moves the elements into a heap block of `new_capacity` (> size_) elements.
  void grow_to(size_type new_capacity) {
    if (new_capacity > std::numeric_limits<std::uint32_t>::max()) {
      throw std::length_error("SmallVector: more than 2^32 - 1 elements");
    }
    T* fresh = std::allocator<T>().allocate(new_capacity);
    T* old = data();
    std::uninitialized_move(old, old + size_, fresh);
    std::destroy(old, old + size_);
    if (!is_inline()) std::allocator<T>().deallocate(old, capacity_);
    storage_.heap = fresh;
    capacity_ = static_cast<std::uint32_t>(new_capacity);
  }

  void clear_and_free() noexcept {
    clear();
    if (!is_inline()) std::allocator<T>().deallocate(storage_.heap, capacity_);
    capacity_ = N;
  }

  /// Takes other's elements (moving inline ones, adopting a heap block); leaves `other` empty and
  /// inline. Precondition: *this is empty and inline.
  void steal(SmallVector& other) noexcept {
    if (other.is_inline()) {
      std::uninitialized_move(other.begin(), other.end(), inline_data());
      size_ = other.size_;
      other.clear();
    } else {
      storage_.heap = other.storage_.heap;
      capacity_ = other.capacity_;
      size_ = other.size_;
      other.capacity_ = N;
      other.size_ = 0;
    }
  }

  union Storage {
    alignas(T) unsigned char inline_bytes[N * sizeof(T)];
    T* heap;
  } storage_;
  std::uint32_t size_ = 0;
  std::uint32_t capacity_ = N;
};

}  // namespace computegraph
