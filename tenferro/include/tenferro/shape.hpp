#pragma once
// Shapes and static tensor types. Storage is dense row-major (C order); a rank-0 shape is a scalar.
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "tenferro/dtype.hpp"

namespace tenferro {

using Shape = std::vector<std::int64_t>;

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
