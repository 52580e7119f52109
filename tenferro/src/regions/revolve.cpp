// Binomial checkpointing's schedule (revolve.hpp).
#include "regions/revolve.hpp"

#include <algorithm>
#include <limits>
#include <vector>

namespace tenferro::detail {
namespace {

constexpr std::int64_t kSaturated = std::numeric_limits<std::int64_t>::max() / 4;

/// C(s + r, r), saturating at kSaturated; 0 for r < 0.
std::int64_t beta(std::int64_t s, std::int64_t r) {
  if (r < 0) return 0;
  std::int64_t b = 1;
  for (std::int64_t k = 1; k <= r; ++k) {
    // C(s + k, k) = C(s + k - 1, k - 1) (s + k) / k, exact in integers.
    if (b > kSaturated / (s + k)) return kSaturated;
    b = b * (s + k) / k;
  }
  return b;
}

/// The fewest repetitions r with beta(s, r) >= steps.
std::int64_t repetitions(std::int64_t steps, std::int64_t s) {
  std::int64_t r = 0;
  while (beta(s, r) < steps) ++r;
  return r;
}

class Schedule {
 public:
  Schedule(std::int64_t snapshots, const ReverseSweep& sweep) : scratch_(snapshots + 1), sweep_(sweep) {}

  /// Reverses steps [a, b) from the state at a in `held`; slots next .. next + free - 1 are free.
  void reverse(std::int64_t a, std::int64_t b, std::int64_t held, std::int64_t next, std::int64_t free) {
    // The right part of each split recurses with one snapshot fewer, the left part with fewer
    // repetitions, so the depth stays below snapshots + repetitions.
    while (b - a > 1) {
      const std::int64_t l = b - a;
      if (free >= l - 1) {  // every state fits
        std::int64_t from = held;
        for (std::int64_t i = 1; i < l; ++i) {
          sweep_.advance(from, a + i - 1, a + i, next + i - 1);
          from = next + i - 1;
        }
        for (std::int64_t i = l - 1; i >= 1; --i) sweep_.turn(next + i - 1, a + i);
        b = a + 1;
        break;
      }
      if (free == 0) {  // recompute each state from the held one
        for (std::int64_t t = b - 1; t > a; --t) {
          sweep_.advance(held, a, t, scratch_);
          sweep_.turn(scratch_, t);
        }
        b = a + 1;
        break;
      }
      const std::int64_t s = free + 1, r = repetitions(l, s);
      const std::int64_t m = std::min(l - 1, std::max({std::int64_t{1}, beta(s, r - 2), l - beta(s - 1, r)}));
      sweep_.advance(held, a, a + m, next);
      reverse(a + m, b, next, next + 1, free - 1);
      b = a + m;  // then [a, a + m) with every snapshot free again
    }
    if (b - a == 1) sweep_.turn(held, a);
  }

 private:
  std::int64_t scratch_;
  const ReverseSweep& sweep_;
};

}  // namespace

void reverse_with_snapshots(std::int64_t steps, std::int64_t snapshots, const ReverseSweep& sweep) {
  if (steps <= 0) return;
  Schedule(snapshots, sweep).reverse(0, steps, 0, 1, snapshots);
}

std::int64_t revolve_slots_used(std::int64_t steps, std::int64_t snapshots) {
  std::vector<bool> written(static_cast<std::size_t>(std::max<std::int64_t>(snapshots, 0)) + 2, false);
  ReverseSweep count;
  count.advance = [&](std::int64_t, std::int64_t, std::int64_t, std::int64_t into) { written[static_cast<std::size_t>(into)] = true; };
  count.turn = [](std::int64_t, std::int64_t) {};
  reverse_with_snapshots(steps, snapshots, count);
  return std::count(written.begin(), written.end(), true);
}

std::int64_t revolve_snapshots_for(std::int64_t steps, std::int64_t repetitions) {
  std::int64_t lo = 1, hi = std::max<std::int64_t>(steps, 1);  // beta(hi + 1, r) >= steps for r >= 1
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (beta(mid + 1, repetitions) >= steps) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

std::int64_t revolve_advances(std::int64_t steps, std::int64_t snapshots) {
  if (steps <= 1) return 0;
  if (snapshots >= steps - 1) return steps - 1;
  if (snapshots == 0) return steps * (steps - 1) / 2;
  const std::int64_t s = snapshots + 1, r = repetitions(steps, s);
  if (steps > kSaturated / r) return std::numeric_limits<std::int64_t>::max();
  return r * steps - beta(s + 1, r - 1);
}

}  // namespace tenferro::detail
