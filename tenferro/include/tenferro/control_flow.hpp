#pragma once
// Control flow on traced tensors: scan, fori_loop, cond, switch_case, while_loop, map, and
// fixed_point and root with implicit differentiation.
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
#include <cstddef>
#include <cstdint>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "tenferro/function.hpp"
#include "tenferro/op_list.hpp"
#include "tenferro/traced.hpp"

namespace tenferro {

using TracedList = std::vector<Traced>;

/// A scan body: (carry, x_t) -> (carry', y_t). carry' must have carry's types; every y_t has a
/// fixed type (stacked into ys along a new leading axis).
using ScanBody = Function<std::pair<TracedList, TracedList>(const TracedList& carry, const TracedList& x)>;

struct ScanOptions {
  /// The trip count; required when there are no xs, else it must equal their leading extent.
  std::optional<std::int64_t> length = std::nullopt;
  /// Scan from the last step to the first (ys are still stored at their step's index).
  bool reverse = false;
  /// Reverse mode's memory over the steps: 0 keeps every step's residuals (the default); k >= 1
  /// runs the steps in blocks of k, each block a checkpoint, so that the gradient keeps the carry
  /// at every k-th step (and the xs) and recomputes each block's steps once in the backward pass:
  /// k = sqrt(length) gives the classic sqrt(n) memory for about one extra forward sweep. The
  /// steps after the last full block (fewer than k) run as a plain scan; cutting them off copies
  /// the xs once, so prefer a k that divides the length. Values and the carry's and xs'
  /// cotangents are the plain scan's bit for bit; a value the body closes over gets its per-step
  /// cotangents summed block by block (equal up to rounding).
  std::int64_t checkpoint_every = 0;
  /// Reverse mode's memory as a budget of s stored carries (instead of checkpoint_every):
  /// binomial checkpointing (Griewank and Walther's revolve). The gradient keeps no step's
  /// residuals; its reverse sweep recomputes the carries it needs from the initial one, storing at
  /// most s of them, with the fewest recomputed steps any schedule with s stored carries can have:
  /// about r * length steps in all, for the least r with C(s + 1 + r, r) >= length. 10^5 steps:
  /// s = 50 recomputes each step about 4 times, s = 17 (log2 of the length) about 6 times. Values
  /// and the carry's and xs' cotangents equal the plain scan's; forward mode and second and higher
  /// derivatives are exact too, with the plain scan's memory.
  std::int64_t checkpoint_snapshots = 0;
};

/// (final carry, stacked ys): for t = 0 .. length-1 (reversed if `reverse`),
/// (carry, y_t) = f(carry, {xs_j[t]...}). Errors (ShapeError, DTypeError naming scan): a carry'
/// whose types differ from the carry's, xs of different leading extents, a length that disagrees
/// with the xs, a negative length.
std::pair<TracedList, TracedList> scan(const ScanBody& f, const TracedList& init, const TracedList& xs,
                                       ScanOptions options = {});

/// A fori_loop body: (i, carry) -> carry' with i an i64 scalar.
using ForiBody = Function<TracedList(const Traced& i, const TracedList& carry)>;
/// Reverse mode's memory over a fori_loop's steps: ScanOptions' checkpoint_every and
/// checkpoint_snapshots, with their meaning there.
struct LoopCheckpointing {
  std::int64_t every = 0;      ///< blocks of k steps, each a checkpoint (ScanOptions::checkpoint_every)
  std::int64_t snapshots = 0;  ///< binomial checkpointing with s stored carries (checkpoint_snapshots)
};
/// carry after body(i, carry) for i = lower .. upper-1 (static bounds: lowers to a scan over
/// the i64 steps). upper < lower is an error.
TracedList fori_loop(std::int64_t lower, std::int64_t upper, const ForiBody& body, const TracedList& init,
                     LoopCheckpointing checkpointing = {});

/// A branch: operands -> results (every branch returns results of the same types).
using Branch = Function<TracedList(const TracedList& operands)>;

/// on_true(operands) if `pred` (a bool or i64 scalar, nonzero meaning true) else
/// on_false(operands). Only the chosen branch runs.
TracedList cond(const Traced& pred, const Branch& on_true, const Branch& on_false, const TracedList& operands);
/// branches[index](operands) for an integer scalar index, clamped into [0, branches.size()) as
/// jax.lax.switch does.
TracedList switch_case(const Traced& index, const std::vector<Branch>& branches, const TracedList& operands);

// The region ops of the op list (its R entries, tenferro/op_list.hpp), one declaration each:
// TracedList name(const Branch& f, const TracedList& operands), f traced once into the op's body.
// - map(f, xs): f applied to the slices xs_j[t] of every x along its leading axis (all of one
//   length L), one step after another; the results are stacked: result_k[t] = f({xs_j[t]...})[k],
//   shape [L, ...] (jax.lax.map). Values f reads from the enclosing function are passed whole to
//   every step. Unlike vmap, the steps run one at a time, so memory holds one step's values.
//   Derivatives of every order, in both modes, and vmap of a map are maps again.
#define TENFERRO_DECLARE_REGION(X, kind, name) TracedList name(const Branch& f, const TracedList& operands);
TENFERRO_OP_LIST(TENFERRO_OP_LIST_NONE, TENFERRO_OP_LIST_SKIP, TENFERRO_OP_LIST_SKIP, TENFERRO_OP_LIST_SKIP_M,
                 TENFERRO_DECLARE_REGION)
#undef TENFERRO_DECLARE_REGION

/// f(operands), whose values reverse mode recomputes from `operands` instead of keeping them
/// (JAX's checkpoint, PyTorch's torch.utils.checkpoint): a gradient program keeps only the
/// operands of a checkpoint for its backward pass, and runs f again there. Values and
/// derivatives are those of f itself (bit for bit at the same thread count), to any order, and
/// under vmap and inside loop bodies. Recorded as a one-branch cond marked as a checkpoint.
TracedList checkpoint(const Branch& f, const TracedList& operands);

/// What a checkpoint keeps for the backward pass besides its operands (JAX's checkpoint
/// policies).
enum class CheckpointPolicy : std::uint8_t {
  SaveNothing,     ///< recompute everything inside (checkpoint(f) itself)
  SaveDots,        ///< keep the results of contractions (dot_general: matmul, einsum) and
                   ///< recompute only what lies between them
  SaveNamed,       ///< keep the values named by checkpoint_name (CheckpointOptions::names)
  SaveEverything,  ///< no checkpoint: f as it is
};
struct CheckpointOptions {
  CheckpointPolicy policy = CheckpointPolicy::SaveNothing;
  /// SaveNamed: the names whose values are kept; empty: every named value.
  std::vector<std::string> names = {};
};
/// checkpoint(f) under a policy. SaveDots and SaveNamed trace f once (values of enclosing traces
/// it reads become operands), cut its operations after each contraction (after each named value)
/// and record each range as a checkpoint: the gradient keeps the range boundaries, i.e. the kept
/// values (and any value read across one), and the backward pass recomputes the operations
/// between them. A contraction that ends a range is not recomputed: no derivative reads its
/// result, so the backward pass drops it. Values and derivatives are those of f, to any order and
/// under vmap. With nothing to keep it is checkpoint(f).
TracedList checkpoint(const Branch& f, const TracedList& operands, const CheckpointOptions& options);
TracedList checkpoint(const Branch& f, const TracedList& operands, CheckpointPolicy policy);

/// x, named for CheckpointPolicy::SaveNamed (jax.ad_checkpoint.checkpoint_name): the identity,
/// derivatives included, recorded as an op `checkpoint_name["name"]` that the executor reads
/// through (no copy).
Traced checkpoint_name(const Traced& x, std::string name);

namespace detail {
/// f, a function of N Traced values returning a Traced or a list, as a Branch over a list of N
/// (the callable forms of checkpoint and rematerialize).
template <std::size_t N, class F>
Branch as_branch(const F& f) {
  return [&f](const TracedList& xs) {
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      auto r = f(xs[I]...);
      if constexpr (std::is_same_v<decltype(r), Traced>) {
        return TracedList{r};
      } else {
        return TracedList(r.begin(), r.end());
      }
    }(std::make_index_sequence<N>{});
  };
}
/// A branch's results as f returned them: one Traced, or the list.
template <class R>
auto as_returned(TracedList out) {
  if constexpr (std::is_same_v<R, Traced>) {
    return out.at(0);
  } else {
    return out;
  }
}
}  // namespace detail

/// The callable form: checkpoint(f)(x, y, ...) for a function of Traced values returning a
/// Traced or a TracedList.
template <class F>
auto checkpoint(F f) {
  return [f = std::move(f)](const auto&... args) {
    static_assert((std::is_same_v<std::remove_cvref_t<decltype(args)>, Traced> && ...),
                  "tenferro::checkpoint(f): call it on Traced values");
    using R = std::invoke_result_t<const F&, decltype(args)...>;
    return detail::as_returned<R>(checkpoint(detail::as_branch<sizeof...(args)>(f), TracedList{args...}));
  };
}
/// The callable form under a policy: checkpoint(f, CheckpointPolicy::SaveDots)(x, w), or
/// checkpoint(f, {.policy = CheckpointPolicy::SaveNamed, .names = {"h"}})(x).
template <class F>
auto checkpoint(F f, CheckpointOptions options) {
  return [f = std::move(f), options](const auto&... args) {
    static_assert((std::is_same_v<std::remove_cvref_t<decltype(args)>, Traced> && ...),
                  "tenferro::checkpoint(f, policy): call it on Traced values");
    using R = std::invoke_result_t<const F&, decltype(args)...>;
    return detail::as_returned<R>(checkpoint(detail::as_branch<sizeof...(args)>(f), TracedList{args...}, options));
  };
}
template <class F>
auto checkpoint(F f, CheckpointPolicy policy) {
  return checkpoint(std::move(f), CheckpointOptions{.policy = policy});
}

struct RematOptions {
  /// The most bytes of tensor storage the gradient program may plan to hold at once (its planned
  /// peak, Program::planned_peak_bytes); 0: no limit (f is recorded as it is).
  std::size_t memory_limit = 0;
  /// Instead of a limit: exactly this many ranges (1: no checkpoint), without planning. For
  /// callers that know the cut they want, and for the tests that exercise every cut.
  std::size_t checkpoints = 0;
};

/// f(operands) with its operations cut into consecutive checkpoints, as few as keep the planned
/// peak of the gradient program within options.memory_limit (the automatic schedule): f is
/// traced once on its own, its operations (in topological order) are cut into ranges of about
/// equal bytes of results, and counts of 1 (no checkpoint), 2, 3, 4, 6, 9, ... ranges are tried
/// until the plan fits. The plan is that of the gradient of the sum of f's float results with
/// respect to the float operands. Every checkpoint is recomputed once in the backward pass, so any
/// count costs about one extra forward pass; fewer ranges mean fewer region launches. A scan is
/// one operation to the cuts; when no count of ranges fits, f's scans are given binomial
/// checkpointing (ScanOptions::checkpoint_snapshots) with the fewest snapshots that recompute
/// each step at most r = 2, 3, 4, 6, 8 times, alone and with up to 4 ranges, in that order.
/// Guarantee: the chosen plan is within the limit; ValueError when no candidate fits (naming the
/// lowest plan found). f must read only its operands (not values of an enclosing trace).
TracedList rematerialize(const Branch& f, const TracedList& operands, RematOptions options);

/// The callable form, as checkpoint(f).
template <class F>
auto rematerialize(F f, RematOptions options) {
  return [f = std::move(f), options](const auto&... args) {
    static_assert((std::is_same_v<std::remove_cvref_t<decltype(args)>, Traced> && ...),
                  "tenferro::rematerialize(f, options): call it on Traced values");
    using R = std::invoke_result_t<const F&, decltype(args)...>;
    return detail::as_returned<R>(rematerialize(detail::as_branch<sizeof...(args)>(f), TracedList{args...}, options));
  };
}

namespace detail {
/// switch_case, recording a cond marked as a checkpoint when `checkpoint`, whose derivative reads
/// its results instead of recomputing them when `reads_results` (CondAttrs; vmap's rule for cond
/// keeps both marks).
TracedList switch_case_op(const Traced& index, const std::vector<Branch>& branches, const TracedList& operands, bool checkpoint,
                          bool reads_results = false);
/// checkpoint(f) whose derivative reads its results (the values a checkpoint policy or the
/// automatic schedule keeps) instead of recomputing them.
TracedList checkpoint_reading_results(const Branch& f, const TracedList& operands);
}  // namespace detail

/// The condition of a while_loop: carry -> a bool scalar.
using LoopCondition = Function<Traced(const TracedList& carry)>;
/// The body of a while_loop: carry -> carry' (of the same types).
using LoopBody = Function<TracedList(const TracedList& carry)>;

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

/// The map of a fixed-point problem: (x, params) -> f(x, params), of x's types.
using FixedPointMap = Function<TracedList(const TracedList& x, const TracedList& params)>;

struct FixedPointOptions {
  /// The iteration stops when no element of x moves by more than tol in one step...
  double tol = 1e-12;
  /// ... or after max_iter steps.
  std::int64_t max_iter = 1000;
  /// Richardson iterations of the tangent's linear system (see fixed_point): its error shrinks
  /// like rho^derivative_steps, rho the spectral radius of the map's Jacobian in x.
  std::int64_t derivative_steps = 100;
};

/// x* = f(x*, params), by iterating x <- f(x, params) from x0 (a while_loop on values detached
/// from differentiation). Its derivative comes from the implicit-function theorem, not from the
/// iterations: the tangent t solves (I - df/dx) t = df/dparams dparams at x*, here by
/// Richardson iteration t <- (df/dx) t + df/dparams dparams, matrix-free: a scan of
/// `derivative_steps` applications of f starting at the detached x*, whose value stays x* and
/// whose derivative is that iteration (reverse mode transposes it: the adjoint iteration with
/// VJPs). x0 carries no derivative; derivatives of every order work. The solution's value is
/// bitwise the while_loop's. The iteration converges when f is a contraction in x near x*
/// (rho < 1), the same condition under which the forward iteration converges.
TracedList fixed_point(const FixedPointMap& f, const TracedList& x0, const TracedList& params,
                       FixedPointOptions options = {});

/// The residual of a root problem: (x, params) -> g(x, params), one value per unknown, of its type.
using RootFunction = Function<TracedList(const TracedList& x, const TracedList& params)>;

struct RootOptions {
  /// Newton stops when no element of x moves by more than tol in one step...
  double tol = 1e-12;
  /// ... or after max_iter steps.
  std::int64_t max_iter = 50;
  /// Newton steps from the detached root that carry the derivative: k steps give exact
  /// derivatives up to order k (Newton's map has zero derivative in x at a root).
  std::int64_t derivative_steps = 2;
};

/// x* with g(x*, params) = 0, by Newton's method from x0 with the dense Jacobian dg/dx (one JVP of
/// g per unknown element; for systems of up to a few hundred unknowns) and an LU solve, on values
/// detached from differentiation. Derivatives come from the implicit-function theorem, not from
/// the iterations: dx* = -(dg/dx)^{-1} (dg/dparams) dparams, obtained as the tangent of Newton
/// steps taken from the detached root with live parameters (derivative_steps of them; their
/// value change is dropped, so the result is bitwise the solve's). The unknowns share one float or
/// complex dtype; x0 carries no derivative.
TracedList root(const RootFunction& g, const TracedList& x0, const TracedList& params, RootOptions options = {});

}  // namespace tenferro
