#pragma once
// Attributes and descriptor factories of the data-movement primitives: slice, pad, take,
// index_add, cumsum and reverse (tenferro/indexing.hpp says what they compute).
#include <cstdint>
#include <ostream>
#include <vector>

#include "tenferro/ops/op_attrs.hpp"
#include "tenferro/ops/std_tensor_op.hpp"

namespace tenferro {

/// slice (StableHLO): result axis k takes operand indices start[k], start[k] + stride[k], ... below
/// limit[k].
struct SliceAttrs {
  std::vector<std::int64_t> start, limit, stride;
  bool operator==(const SliceAttrs&) const = default;
  std::size_t hash() const;
  void print(std::ostream& os) const;  // start=[..], limit=[..], stride=[..]
};

/// pad (StableHLO): low[k] and high[k] padding elements before and after axis k (negative values
/// cut), interior[k] >= 0 elements between neighbours.
struct PadAttrs {
  std::vector<std::int64_t> low, high, interior;
  bool operator==(const PadAttrs&) const = default;
  std::size_t hash() const;
  void print(std::ostream& os) const;  // low=[..], high=[..], interior=[..]
};

/// take, index_add, cumsum: the axis they work along (and cumsum's direction).
struct AxisAttrs {
  std::int64_t axis = 0;
  bool reverse = false;  ///< cumsum: from the end of the axis
  bool operator==(const AxisAttrs&) const = default;
  std::size_t hash() const { return hash_mix(static_cast<std::size_t>(axis), reverse ? 1 : 0); }
  void print(std::ostream& os) const;  // axis=k[, reverse]
};

/// reverse: the axes whose order is reversed, ascending.
struct ReverseAxes {
  std::vector<std::int64_t> axes;
  bool operator==(const ReverseAxes&) const = default;
  std::size_t hash() const { return hash_ints(axes); }
  void print(std::ostream& os) const;  // axes=[..]
};

namespace ops {
StdTensorOp slice(const TensorType& a, SliceAttrs attrs);
/// pad(a, value): value is a rank-0 operand of a's dtype.
StdTensorOp pad(const TensorType& a, const TensorType& value, PadAttrs attrs);
/// x with axis `axis` replaced by the entries idx[0..m) of a 1-D i64 idx (negative entries count
/// from the end; out of range: ValueError when the kernel runs).
StdTensorOp take(const TensorType& x, const TensorType& idx, std::int64_t axis);
/// base with updates added at the positions idx along `axis` (repeated indices accumulate);
/// updates has base's shape with that axis of idx's length.
StdTensorOp index_add(const TensorType& base, const TensorType& idx, const TensorType& updates, std::int64_t axis);
/// Inclusive prefix sums along `axis` (from the end when `reverse`).
StdTensorOp cumsum(const TensorType& x, std::int64_t axis, bool reverse);
/// x with the order of `axes` reversed.
StdTensorOp reverse(const TensorType& x, std::vector<std::int64_t> axes);
}  // namespace ops

}  // namespace tenferro
