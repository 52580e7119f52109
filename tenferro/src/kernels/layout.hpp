#pragma once
// Internal: axis-list validation for the shape rules and strided element copies for the kernels
// of the structural ops, the reductions and dot_general's operand packing.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tenferro/error.hpp"
#include "tenferro/shape.hpp"
#include "tenferro/tensor.hpp"

namespace tenferro::detail {

using Strides = std::vector<std::int64_t>;
using Axes = std::vector<std::int64_t>;

/// Throws ShapeError unless every entry of `axes` is in [0, rank) and none repeats. The message
/// names `op`, the list (`what`: "axes", "perm", ...), the operand types in `operands` and the
/// expectation.
void check_axes(const char* op, const char* what, std::span<const std::int64_t> axes, std::int64_t rank,
                const std::string& operands);

/// Throws ShapeError naming `op` if a dimension of `shape` is negative.
void check_shape(const char* op, const Shape& shape);

/// For every multi-index i of `shape`: dst[sum_k i_k dst_strides[k]] = src[sum_k i_k src_strides[k]],
/// strides counted in elements of `elem_size` bytes (1, 4, 8 or 16). A source stride may be 0
/// (broadcast); destination strides must not alias distinct indices. Dimensions whose strides allow
/// it are merged, so a contiguous copy is one memcpy.
void strided_copy(std::byte* dst, std::span<const std::int64_t> dst_strides, const std::byte* src,
                  std::span<const std::int64_t> src_strides, const Shape& shape, std::size_t elem_size);

/// A new contiguous tensor holding `a` with its axes permuted: result axis k is operand axis perm[k].
Tensor permuted(const Tensor& a, std::span<const std::int64_t> perm);

/// The inverse permutation: inverse[perm[k]] = k.
std::vector<std::int64_t> inverse_permutation(std::span<const std::int64_t> perm);

/// The axes of a rank-`rank` tensor that are not in `axes`, ascending.
std::vector<std::int64_t> complement_axes(std::span<const std::int64_t> axes, std::int64_t rank);

}  // namespace tenferro::detail
