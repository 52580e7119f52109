#pragma once
// Sorting and scans on traced tensors: sort, argsort, top_k, take_along_axis, and the prefix scans
// cumprod, cummax, cummin and logcumsumexp (cumsum, a primitive, is in tenferro/indexing.hpp).
//
// sort is one primitive with two results (the values and the permutation, docs/tenferro.md); its
// derivative gathers the tangent by the permutation, so reverse mode scatters the cotangent back.
// The scans are composites: a log-depth (Hillis-Steele) scan of the binary op, ceil(log2 n)
// levels of slice, pad, select and the op, so their derivatives are exact to every order with no
// division (cumprod through zeros included) and no overflow (logcumsumexp combines with the
// stable logaddexp).
#include <cstdint>
#include <utility>

#include "tenferro/traced.hpp"

namespace tenferro {

/// x sorted along `axis` (may be negative). Stable; NaN counts as the largest value (last when
/// ascending, first when descending); complex values sort by real part, then imaginary part.
Traced sort(const Traced& x, std::int64_t axis = -1, bool descending = false);
/// The sorted values and the i64 positions they came from along the axis (torch.sort).
std::pair<Traced, Traced> sort_with_indices(const Traced& x, std::int64_t axis = -1, bool descending = false);
/// The i64 permutation that sorts x along `axis` (numpy.argsort with kind="stable").
Traced argsort(const Traced& x, std::int64_t axis = -1, bool descending = false);
/// The k largest entries along the last axis, largest first, and their i64 positions
/// (jax.lax.top_k; among equal values the earlier position comes first). 0 <= k <= n.
std::pair<Traced, Traced> top_k(const Traced& x, std::int64_t k);

/// x's entries at the i64 positions idx along `axis`, one per result element (numpy's
/// take_along_axis): idx has x's rank; the other axes broadcast against x's (a length 1 stretches).
/// The derivative scatters back with index_add, accumulating at repeated positions.
Traced take_along_axis(const Traced& x, const Traced& idx, std::int64_t axis);

/// Inclusive prefix products along `axis` (from the end when `reverse`). Any numeric dtype.
Traced cumprod(const Traced& x, std::int64_t axis, bool reverse = false);
/// Inclusive running maximum / minimum along `axis` (real dtypes). At ties (equal values) the
/// derivative is split as maximum's and minimum's are.
Traced cummax(const Traced& x, std::int64_t axis, bool reverse = false);
Traced cummin(const Traced& x, std::int64_t axis, bool reverse = false);
/// log(cumsum(exp(x))) along `axis`, computed stably (real floats).
Traced logcumsumexp(const Traced& x, std::int64_t axis, bool reverse = false);

}  // namespace tenferro
