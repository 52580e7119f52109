#pragma once
// Control flow on traced tensors: scan, fori_loop, cond, switch_case and while_loop.
//
// Each construct is one primitive that carries its bodies as subgraphs (computegraph regions), so
// a loop of 10^4 steps is one op in the traced graph: it is traced, transformed and compiled once,
// whatever its trip count. Bodies are ordinary C++ callables of Traced values, traced once when
// the construct is recorded. A body may read values of the enclosing function (a closure); they
// become operands of the op, so derivatives flow to them too.
//
//   // y_t = a * c_t,  c_{t+1} = tanh(W c_t + x_t)
//   auto [carry, ys] = tf::scan(
//       [&](const tf::TracedList& c, const tf::TracedList& x) {
//         tf::Traced next = tf::tanh(tf::matmul(W, c[0]) + x[0]);
//         return std::pair{tf::TracedList{next}, tf::TracedList{a * c[0]}};
//       },
//       {c0}, {xs});
//
// Derivatives (docs/tenferro.md, "Control flow"):
// - scan: its JVP is a scan of the body's JVP; for reverse mode the JVP is split into a scan that
//   stacks the carry at every step and a scan linear in the tangents, whose transpose is a
//   reversed scan of the transposed body over the stacked carries. The linear body recomputes the
//   step's intermediate values from the stacked carry (memory: one carry per step, not every
//   intermediate value). Every order works, forward and reverse.
// - cond / switch_case: the JVP and the transpose are conds of the branches' JVPs and transposes.
// - while_loop: forward mode always (the JVP is a while_loop of the body's JVP); reverse mode only
//   with `max_trips`, which makes the loop a scan of max_trips steps that stop changing the carry
//   once the condition fails.
#include <cstdint>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "tenferro/traced.hpp"

namespace tenferro {

using TracedList = std::vector<Traced>;

/// A scan body: (carry, x_t) -> (carry', y_t). carry' must have carry's types; every y_t has a
/// fixed type (stacked into ys along a new leading axis).
using ScanBody = std::function<std::pair<TracedList, TracedList>(const TracedList& carry, const TracedList& x)>;

struct ScanOptions {
  /// The trip count; required when there are no xs, else it must equal their leading extent.
  std::optional<std::int64_t> length = std::nullopt;
  /// Scan from the last step to the first (ys are still stored at their step's index).
  bool reverse = false;
};

/// (final carry, stacked ys): for t = 0 .. length-1 (reversed if `reverse`),
/// (carry, y_t) = f(carry, {xs_j[t]...}). Errors (ShapeError, DTypeError naming scan): a carry'
/// whose types differ from the carry's, xs of different leading extents, a length that disagrees
/// with the xs, a negative length.
std::pair<TracedList, TracedList> scan(const ScanBody& f, const TracedList& init, const TracedList& xs,
                                       ScanOptions options = {});

/// A fori_loop body: (i, carry) -> carry' with i an i64 scalar.
using ForiBody = std::function<TracedList(const Traced& i, const TracedList& carry)>;
/// carry after body(i, carry) for i = lower .. upper-1 (static bounds: lowers to a scan over
/// the i64 steps). upper < lower is an error.
TracedList fori_loop(std::int64_t lower, std::int64_t upper, const ForiBody& body, const TracedList& init);

/// A branch: operands -> results (every branch returns results of the same types).
using Branch = std::function<TracedList(const TracedList& operands)>;

/// on_true(operands) if `pred` (a bool or i64 scalar, nonzero meaning true) else
/// on_false(operands). Only the chosen branch runs.
TracedList cond(const Traced& pred, const Branch& on_true, const Branch& on_false, const TracedList& operands);
/// branches[index](operands) for an integer scalar index, clamped into [0, branches.size()) as
/// jax.lax.switch does.
TracedList switch_case(const Traced& index, const std::vector<Branch>& branches, const TracedList& operands);

/// The condition of a while_loop: carry -> a bool scalar.
using LoopCondition = std::function<Traced(const TracedList& carry)>;
/// The body of a while_loop: carry -> carry' (of the same types).
using LoopBody = std::function<TracedList(const TracedList& carry)>;

struct WhileOptions {
  /// A bound on the trip count, which makes reverse-mode differentiation possible (the loop is
  /// then a scan of max_trips masked steps; it stops after max_trips even if the condition still
  /// holds). Without it the loop runs until the condition fails and only forward mode
  /// differentiates it (reverse mode throws ADRuleError naming while_loop).
  std::optional<std::int64_t> max_trips = std::nullopt;
};

/// Runs carry = body(carry) while cond(carry).
TracedList while_loop(const LoopCondition& cond, const LoopBody& body, const TracedList& init,
                      WhileOptions options = {});

}  // namespace tenferro
