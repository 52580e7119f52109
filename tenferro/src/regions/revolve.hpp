#pragma once
// Internal: binomial checkpointing (Griewank and Walther's "revolve") of a loop's reverse sweep,
// as a schedule of two actions, independent of what a step computes. Used by scan_adjoint
// (ops/scan_adjoint.cpp); tested on its own (tests/revolve_test.cpp).
//
// A loop of n steps maps state_t to state_{t+1}; its reverse sweep must visit the steps in the
// order n-1, ..., 0, and each visit ("turn") needs the state before that step. Keeping every state
// costs n states; keeping none costs n(n-1)/2 recomputed steps. With s snapshots besides the
// initial state, the binomial schedule recomputes the fewest steps possible: with
// beta(S, r) = C(S + r, r) and S = s + 1, if beta(S, r-1) < n <= beta(S, r) it advances
//   r n - beta(S + 1, r - 1)
// steps in all (at most r n), so s = O(log n) snapshots reverse n steps in O(n log n) advances.
//
// The schedule is the recursion: advance from the state held at step a to step a + m, store that
// state in a free snapshot, reverse [a + m, b) with one snapshot fewer, free it, then reverse
// [a, a + m) with the snapshots again. The split m = max(1, beta(S, r - 2), l - beta(S - 1, r))
// for l = b - a steps is optimal (the recomputation count above; the test checks it against an
// exhaustive search for every l <= 200 and s <= 8).
#include <cstdint>
#include <functional>

namespace tenferro::detail {

/// What the schedule asks of the loop. Slots hold states: slot 0 holds the initial state (step
/// 0) and is never written; slots 1 .. snapshots are the snapshots; slot snapshots + 1 is a
/// scratch state for recomputation that is not kept.
struct ReverseSweep {
  /// Computes the state at step `to` from the state at step `from` held in `from_slot` (running
  /// steps from .. to-1), into `into_slot` (never `from_slot`; from < to).
  std::function<void(std::int64_t from_slot, std::int64_t from, std::int64_t to, std::int64_t into_slot)> advance;
  /// Reverses step t from the state before it, held in `slot`.
  std::function<void(std::int64_t slot, std::int64_t t)> turn;
};

/// Runs the reverse sweep of `steps` steps with at most `snapshots` stored states besides the
/// initial one: turn(t) for t = steps-1 down to 0, each exactly once. snapshots >= steps - 1
/// stores every state (one advance per step); snapshots == 0 recomputes each state from the
/// initial one.
void reverse_with_snapshots(std::int64_t steps, std::int64_t snapshots, const ReverseSweep& sweep);

/// The slots besides slot 0 that reverse_with_snapshots writes (snapshots and the scratch
/// state): the states a loop that keeps each slot's state until the sweep ends holds at most.
std::int64_t revolve_slots_used(std::int64_t steps, std::int64_t snapshots);

/// The fewest snapshots (at least 1) with which the schedule recomputes each of `steps` steps at
/// most `repetitions` (>= 1) times: the least s with C(s + 1 + repetitions, repetitions) >= steps.
std::int64_t revolve_snapshots_for(std::int64_t steps, std::int64_t repetitions);

/// The advances reverse_with_snapshots makes for `steps` steps and `snapshots` snapshots (the
/// closed form above; saturates at INT64_MAX).
std::int64_t revolve_advances(std::int64_t steps, std::int64_t snapshots);

}  // namespace tenferro::detail
