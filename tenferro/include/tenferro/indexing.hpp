#pragma once
// Data movement on traced tensors: slicing, padding, concatenation (StableHLO's slice and pad),
// take / index_add (index_select / index_add_), dynamic_slice / dynamic_update_slice, cumsum,
// reverse, and composites of them (tril, triu, diagonal, diag, stack, split, one_hot). Each
// primitive is linear in its data and its transpose is another of them (slice <-> pad, take <->
// index_add, dynamic_slice <-> dynamic_update_slice, cumsum <-> reversed cumsum, reverse <->
// reverse), so derivatives of any order pass through. Attributes:
// tenferro/ops/index_attrs.hpp.
#include <cstdint>
#include <span>
#include <vector>

#include "tenferro/dimension_numbers.hpp"
#include "tenferro/traced.hpp"

namespace tenferro {

/// a[start_0:limit_0:stride_0, ...]: one start, limit and (optional, default 1) stride per axis,
/// 0 <= start <= limit <= dim, stride >= 1 (ShapeError otherwise).
Traced slice(const Traced& a, std::vector<std::int64_t> start, std::vector<std::int64_t> limit,
             std::vector<std::int64_t> stride = {});
/// `a` with low[k] / high[k] elements of `value` before / after axis k (negative values cut) and
/// interior[k] (default 0) between neighbours.
Traced pad(const Traced& a, double value, std::vector<std::int64_t> low, std::vector<std::int64_t> high,
           std::vector<std::int64_t> interior = {});
/// The operands joined along `axis` (may be negative); all other axes must agree.
Traced concatenate(std::span<const Traced> parts, std::int64_t axis);
Traced concatenate(std::initializer_list<Traced> parts, std::int64_t axis);

/// x's entries at positions `idx` (an i64 tensor of any shape) along `axis` (may be negative):
/// the result has x's shape with that axis replaced by idx's shape, as numpy.take. Negative
/// entries count from the end; one outside [-n, n) throws ValueError when the program runs. The
/// derivative scatters back (index_add), accumulating at repeated indices.
Traced take(const Traced& x, const Traced& idx, std::int64_t axis);
Traced take(const Traced& x, const std::vector<std::int64_t>& idx, std::int64_t axis);
/// take(x, {2, 0}, 0): a braced list is always indices (never a Traced).
Traced take(const Traced& x, std::initializer_list<std::int64_t> idx, std::int64_t axis);
/// base with updates[.., j, ..] added at position idx[j] along `axis` (1-D i64 idx; repeated
/// entries accumulate), as torch.index_add. An idx of base's rank instead gives one position per
/// update element (idx has updates' shape, equal to base's off the axis), as torch.scatter_add:
/// take_along_axis's transpose.
Traced index_add(const Traced& base, const Traced& idx, const Traced& updates, std::int64_t axis);
/// The window of x of the given sizes (one per axis) starting at `starts`, an i64 tensor of one
/// entry per axis computed in the program (jax.lax.dynamic_slice). Each start is clamped into
/// [0, dim - size], as StableHLO does, so the window always lies inside x. Its derivative writes
/// back into the window (dynamic_update_slice of zeros).
Traced dynamic_slice(const Traced& x, const Traced& starts, std::vector<std::int64_t> sizes);
/// x with `update` written over the window of update's shape at `starts` (clamped as
/// dynamic_slice's). The derivative with respect to x is zero inside the window.
Traced dynamic_update_slice(const Traced& x, const Traced& update, const Traced& starts);
/// StableHLO's gather (jax.lax.gather with mode "clip"): for every batch position of `indices` (i64),
/// the window of x of shape dims.slice_sizes that starts at the position's index vector; starts are
/// clamped so the window lies inside x. tenferro/ops/gather_attrs.hpp explains the dimension
/// numbers. Rows of a matrix by a list of row numbers idx[k, 1]:
///   gather(x, idx, {.offset_dims = {1}, .collapsed_slice_dims = {0}, .start_index_map = {0},
///                   .index_vector_dim = 1, .slice_sizes = {1, x.shape()[1]}})
/// Its derivative scatter-adds back (repeated windows accumulate).
Traced gather(const Traced& x, const Traced& indices, GatherDims dims);
/// StableHLO's scatter with addition: x plus every window of `updates` placed at its batch
/// position's index vector (clamped as gather's); overlapping windows accumulate. With the same
/// dimension numbers it is gather's transpose. dims.mode is ignored.
Traced scatter_add(const Traced& x, const Traced& indices, const Traced& updates, ScatterDims dims);
/// StableHLO's scatter that replaces: x with every window of `updates` written at its batch
/// position's index vector (clamped as gather's). Where windows overlap, the one latest in
/// row-major order of indices' batch positions wins, on every run and thread count. Derivative:
/// linear in x and updates jointly; x's cotangent is zero where it was overwritten, and an update
/// element's cotangent is the result's cotangent at its position if it won there, zero if a later
/// one overwrote it. dims.mode is ignored.
Traced scatter(const Traced& x, const Traced& indices, const Traced& updates, ScatterDims dims);
/// Inclusive prefix sums along `axis` (from the end when `reverse`).
Traced cumsum(const Traced& x, std::int64_t axis, bool reverse = false);
/// x with the order of the given axes reversed (numpy.flip).
Traced reverse(const Traced& x, std::vector<std::int64_t> axes);

/// The lower / upper triangle of the last two axes on and below / above diagonal k (k > 0 above
/// the main diagonal), zeros elsewhere, as numpy.tril / triu.
Traced tril(const Traced& x, std::int64_t k = 0);
Traced triu(const Traced& x, std::int64_t k = 0);
/// The k-th diagonal of the last two axes, [.., length] (numpy.diagonal(x, k, -2, -1)).
Traced diagonal(const Traced& x, std::int64_t k = 0);
/// The square matrix with v [.., n] on its k-th diagonal (numpy.diag for a vector, batched).
Traced diag(const Traced& v, std::int64_t k = 0);
/// The parts (one shape) stacked along a new axis `axis` (numpy.stack).
Traced stack(std::span<const Traced> parts, std::int64_t axis = 0);
Traced stack(std::initializer_list<Traced> parts, std::int64_t axis = 0);
/// x cut along `axis` into pieces of the given lengths (summing to the axis length).
std::vector<Traced> split(const Traced& x, const std::vector<std::int64_t>& lengths, std::int64_t axis = 0);
/// [.., n] one-hot rows of `dtype` for the i64 indices (an index outside [0, n) gives a zero row).
Traced one_hot(const Traced& idx, std::int64_t n, DType dtype = DType::F64);

}  // namespace tenferro
