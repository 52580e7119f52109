#pragma once
// Attributes and descriptor factories of gather and scatter, with StableHLO's dimension numbers
// (tenferro/indexing.hpp shows them at work; src/ops/gather_scatter.cpp implements them).
//
// Both ops read "index vectors" out of an i64 `indices` tensor: the entries along its axis
// `index_vector_dim` (when that equals indices' rank, every entry is a vector of length 1). The other
// axes of indices are the batch axes: one window per batch position. An index vector gives the start
// of a window in the operand along the operand axes it maps to; the window's start on the other axes
// is 0. Starts are clamped into [0, dim - window size] per axis, as StableHLO's gather does, so a
// window always lies inside the operand. Scatter clamps the same way (StableHLO leaves scatter's out
// of range behavior to the implementation; JAX calls this mode "clip"), which makes scatter-add
// exactly gather's transpose.
#include <cstdint>
#include <ostream>
#include <vector>

#include "tenferro/ops/op_attrs.hpp"
#include "tenferro/ops/std_tensor_op.hpp"

namespace tenferro {

/// gather(operand, indices): for every batch position b of indices, the window of the operand of
/// shape `slice_sizes` starting at b's index vector.
/// - start_index_map[k]: the operand axis that entry k of an index vector starts.
/// - slice_sizes: the window's size along every operand axis (0 <= size <= dim).
/// - collapsed_slice_dims: operand axes (ascending, window size 1) that the result drops.
/// - offset_dims: the result axes (ascending) that run over the window's remaining axes, in order;
///   the result's other axes are indices' batch axes, in order.
/// The result's rank is offset_dims.size() plus the number of batch axes.
struct GatherDims {
  std::vector<std::int64_t> offset_dims;
  std::vector<std::int64_t> collapsed_slice_dims;
  std::vector<std::int64_t> start_index_map;
  std::int64_t index_vector_dim = 0;
  std::vector<std::int64_t> slice_sizes;
  bool operator==(const GatherDims&) const = default;
  std::size_t hash() const;
  void print(std::ostream& os) const;  // offset_dims=[..], collapsed=[..], start_index_map=[..], index_vector_dim=k, slice_sizes=[..]
};

/// How scatter combines an update with the value already at its position.
enum class ScatterMode : std::uint8_t {
  Add,      ///< operand + every update landing there (repeats accumulate)
  Replace,  ///< the update; where windows overlap, the last in row-major batch order wins
};

/// scatter(operand, indices, updates): for every batch position b of indices, the window of
/// updates at b lands in the operand starting at b's index vector.
/// - scatter_dims_to_operand_dims[k]: the operand axis that entry k of an index vector starts.
/// - update_window_dims: the axes of updates (ascending) that run over a window; they map in order
///   onto the operand axes not in inserted_window_dims. updates' other axes are indices' batch
///   axes, in order.
/// - inserted_window_dims: operand axes (ascending) along which a window has size 1 and no axis in
///   updates.
struct ScatterDims {
  std::vector<std::int64_t> update_window_dims;
  std::vector<std::int64_t> inserted_window_dims;
  std::vector<std::int64_t> scatter_dims_to_operand_dims;
  std::int64_t index_vector_dim = 0;
  ScatterMode mode = ScatterMode::Add;
  bool operator==(const ScatterDims&) const = default;
  std::size_t hash() const;
  void print(std::ostream& os) const;  // mode=add, update_window_dims=[..], inserted=[..], to_operand=[..], index_vector_dim=k
};

namespace ops {
/// gather's shape rule: ShapeError / DTypeError naming the dimension number that does not fit.
/// Any operand dtype; indices i64.
StdTensorOp gather(const TensorType& operand, const TensorType& indices, GatherDims dims);
/// scatter's shape rule: updates of the operand's dtype (not bool for Add), indices i64.
StdTensorOp scatter(const TensorType& operand, const TensorType& indices, const TensorType& updates, ScatterDims dims);
}  // namespace ops

}  // namespace tenferro
