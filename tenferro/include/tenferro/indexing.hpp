#pragma once
// Slicing, padding and concatenation of traced tensors (StableHLO's slice and pad; see
// tenferro/ops/linalg_attrs.hpp for the attributes). Each is linear, and the transpose of a slice
// is a pad with zeros and vice versa, so derivatives of any order pass through them.
#include <cstdint>
#include <span>
#include <vector>

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

}  // namespace tenferro
