#pragma once
// Internal: what einsum's lowering (lower.cpp) and its concrete form (einsum_api.cpp) share.
#include <vector>

#include "tenferro/einsum.hpp"

namespace tenferro::tn::detail {

/// The network the path optimizer sees: each operand's labels after its own preprocessing
/// (length-1 broadcast axes dropped, diagonals taken, letters of this operand alone summed), in
/// the axis order the lowering leaves them in; the output; every label's length.
Network network_of(const Subscripts& s, std::span<const Shape> shapes);

/// The path for `net` under `options`: the explicit path if one is given (checked), else the
/// optimizer's, computed once per (network, options) in a process-wide cache.
ContractionPath path_for(const Network& net, const Options& options);

/// The traced einsum of already parsed subscripts, contracted along `steps` (SSA form), in
/// `semiring`.
Traced lower(const Subscripts& s, std::span<const Traced> operands, const std::vector<std::pair<int, int>>& steps,
             Semiring semiring);

}  // namespace tenferro::tn::detail
