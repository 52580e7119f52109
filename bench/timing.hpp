#pragma once
// Wall-clock medians for the plain-line benchmarks (docs/design.md, "Benchmark output").
#include <algorithm>
#include <chrono>
#include <functional>
#include <utility>
#include <vector>

namespace bench {

inline double seconds(const std::function<void()>& run) {
  auto start = std::chrono::steady_clock::now();
  run();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

inline double median(std::vector<double> times) {
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

/// Median of `repetitions` timed runs, after one untimed run when `warm_up` (tracing, compiling,
/// first-touch allocation).
inline double median_seconds(const std::function<void()>& run, int repetitions, bool warm_up = false) {
  if (warm_up) run();
  std::vector<double> times;
  for (int r = 0; r < repetitions; ++r) times.push_back(seconds(run));
  return median(std::move(times));
}

/// Medians of two alternatives timed in alternation (after one warm-up run each), so drift on a
/// shared machine hits both alike.
inline std::pair<double, double> median_seconds_interleaved(const std::function<void()>& a,
                                                            const std::function<void()>& b,
                                                            int repetitions) {
  a();
  b();
  std::vector<double> ta, tb;
  for (int r = 0; r < repetitions; ++r) {
    ta.push_back(seconds(a));
    tb.push_back(seconds(b));
  }
  return {median(std::move(ta)), median(std::move(tb))};
}

}  // namespace bench
