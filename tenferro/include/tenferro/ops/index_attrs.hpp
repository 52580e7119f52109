#pragma once
// Attributes and descriptor factories of the data-movement primitives: slice, pad, take,
// index_add, cumsum, reverse, sort, dynamic_slice and dynamic_update_slice (tenferro/indexing.hpp says what they compute).
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

/// sort: the axis sorted along and the order. Ascending puts NaN last, descending first (NaN
/// counts as the largest value, as in NumPy and PyTorch); complex values sort by real part,
/// then imaginary part; equal values keep their order (stable).
struct SortAttrs {
  std::int64_t axis = 0;
  bool descending = false;
  bool operator==(const SortAttrs&) const = default;
  std::size_t hash() const { return hash_mix(static_cast<std::size_t>(axis), descending ? 1 : 0); }
  void print(std::ostream& os) const;  // axis=k[, descending]
};
/// dynamic_slice: the size of the window along each axis (its start is an operand).
struct SliceSizes {
  std::vector<std::int64_t> sizes;
  bool operator==(const SliceSizes&) const = default;
  std::size_t hash() const { return hash_ints(sizes); }
  void print(std::ostream& os) const;  // sizes=[..]
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
/// x gathered along `axis` by an i64 index: a 1-D idx of length m picks the same m positions in
/// every slice (result: x's shape with that axis m); an idx of x's rank, equal to x's shape off the
/// axis, picks one position per result element (take_along_axis; result: idx's shape). Negative
/// entries count from the end; out of range: ValueError when the kernel runs.
StdTensorOp take(const TensorType& x, const TensorType& idx, std::int64_t axis);
/// base with updates added at the positions idx along `axis` (repeated indices accumulate):
/// take's transpose, so updates has the shape take(base, idx, axis) would have.
StdTensorOp index_add(const TensorType& base, const TensorType& idx, const TensorType& updates, std::int64_t axis);
/// Inclusive prefix sums along `axis` (from the end when `reverse`).
StdTensorOp cumsum(const TensorType& x, std::int64_t axis, bool reverse);
/// Two results: x sorted along `axis` (SortAttrs) and the i64 permutation, the position along the
/// axis each sorted value came from (argsort). Any dtype but bool.
StdTensorOp sort(const TensorType& x, std::int64_t axis, bool descending);
/// The window of x of the given sizes starting at `starts`, a 1-D i64 operand with one entry per
/// axis. Each start is clamped into [0, dim - size] when the kernel runs, as StableHLO does, so
/// the window always lies inside x.
StdTensorOp dynamic_slice(const TensorType& x, const TensorType& starts, std::vector<std::int64_t> sizes);
/// x with `update` written over the window of update's shape at `starts` (clamped as
/// dynamic_slice's).
StdTensorOp dynamic_update_slice(const TensorType& x, const TensorType& update, const TensorType& starts);
/// x with the order of `axes` reversed.
StdTensorOp reverse(const TensorType& x, std::vector<std::int64_t> axes);
}  // namespace ops

}  // namespace tenferro
