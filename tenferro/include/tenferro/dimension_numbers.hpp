#pragma once
// The dimension numbers of the contraction and indexing ops, StableHLO's: plain values that user
// code passes to dot_general, gather and scatter (tenferro/traced.hpp, tenferro/indexing.hpp) and
// that the ops carry as their attributes (hash and print are the attribute contract of
// tenferro/ops/op_attrs.hpp; src/ir/builtin_attrs.cpp and src/ops/gather_scatter.cpp define them).
//
// Gather and scatter read "index vectors" out of an i64 `indices` tensor: the entries along its
// axis `index_vector_dim` (when that equals indices' rank, every entry is a vector of length 1). The
// other axes of indices are the batch axes: one window per batch position. An index vector gives
// the start of a window in the operand along the operand axes it maps to; the window's start on the
// other axes is 0. Starts are clamped into [0, dim - window size] per axis, as StableHLO's gather does, so a
// window always lies inside the operand. Scatter clamps the same way (StableHLO leaves scatter's out
// of range behavior to the implementation; JAX calls this mode "clip"), which makes scatter-add
// exactly gather's transpose.
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <vector>

namespace tenferro {

/// dot_general (StableHLO's dimension numbers): batch dims pair up one to one, contracting dims
/// pair up and are summed. Result dims: batch, then lhs free dims, then rhs free dims.
struct DotDims {
  std::vector<std::int64_t> lhs_batch, rhs_batch, lhs_contract, rhs_contract;
  bool operator==(const DotDims&) const = default;
  std::size_t hash() const;
  void print(std::ostream& os) const;  // batch=[..][..], contract=[..][..]
};

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

}  // namespace tenferro
