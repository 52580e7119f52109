#pragma once
// Internal: the step loop of the ops that run their body once per step along a leading axis
// (ops/scan.cpp, ops/map.cpp). Carries are threaded from step to step through two alternating
// buffers; a stacked operand is read one step at a time in place (a view moved along its storage,
// no copy), and stacked results are written in place into their storage. A body whose values are
// all rank-0 runs on the scalar interpreter's registers, with no Tensor per step.
#include <cstdint>
#include <span>
#include <vector>

#include "regions/region_runner.hpp"

namespace tenferro::detail {

/// Runs `body` for t = 0 .. length-1 (length-1 .. 0 with `reverse`). The body's inputs are
/// [carries..., others...] and its outputs [carries'..., results...], with `n_carry` carries.
/// `in` holds one tensor per body input: the initial carries, then for each other input k either
/// a stacked tensor whose slice t along its leading axis is step t's input (`stacked[k]`) or a
/// value passed whole to every step. `out` receives the final carries (the initial ones, copied,
/// when length is 0), then each result stacked along a new leading axis, of `out_types`.
void run_steps(const BodyExecutable& body, std::int64_t length, bool reverse, std::size_t n_carry,
               const std::vector<bool>& stacked, std::span<const Tensor* const> in,
               std::span<const TensorType> out_types, std::span<Tensor> out);

}  // namespace tenferro::detail
