#pragma once
// Internal to the traced API: max and min with the reduction's identity over empty axes.
#include <cstdint>
#include <vector>

#include "tenferro/traced.hpp"

namespace tenferro::detail {

/// The maximum (minimum) over `axes` as the reduce_max (reduce_min) primitive computes it: -inf
/// (+inf), its identity, over an empty axis. tenferro::max and min throw ValueError there instead,
/// as NumPy raises; the composites whose value over nothing that identity defines call these
/// (logsumexp over nothing is -inf, a tropical sum over nothing is the semiring's zero).
Traced max_or_identity(const Traced& a, std::vector<std::int64_t> axes);
Traced min_or_identity(const Traced& a, std::vector<std::int64_t> axes);

}  // namespace tenferro::detail
