#pragma once
// The shared plumbing of bench_compare: command-line options, peak-memory measurement, adaptive
// repetition counts and the result line (docs/design.md, "Benchmark output")
//   case=<name> impl=<impl> size=<...> median_s=<seconds> dtype=<...> peak_rss_mb=<...> ...
// bench/peers/torch_bench.py follows the same conventions, so the two outputs join by case, size
// and dtype.
#include <functional>
#include <string>
#include <vector>

namespace bench {

struct Options {
  int threads = 2;
  /// Case families to run (mlp, elem_chain, scalar_chain, hessian, matmul); empty runs all.
  std::vector<std::string> cases;
  /// Instances to run within the chosen families (--only): keys such as mlp_f32,
  /// elem_chain_1000000, linalg_svd_64, lstm, einsum_chain3 (see selected()); empty runs all.
  /// scripts/bench's load family runs its subset through it.
  std::vector<std::string> only;
  /// Timed seconds aimed for per implementation and case; the repetition count follows from it.
  double budget_s = 1.5;
  /// The file where the einsum cases leave their networks and paths for torch_bench.py (empty:
  /// /tmp/tenferro_einsum_networks.txt).
  std::string einsum_networks;
};

/// Reports that a case's own check failed (its result disagrees with a reference, or with the
/// same computation done another way): prints "bench: " and the printf-style message to stderr,
/// and counts it. bench_compare exits with status 1 when any check failed, so the suite's smoke
/// run (bench.smoke) fails on a wrong benchmark result, not only on a crash.
[[gnu::format(printf, 1, 2)]] void report_failed_check(const char* format, ...);
/// The number of failed checks reported so far.
int failed_checks();

/// Parses --threads N, --cases a,b,..., --only k1,k2,..., --budget S and --einsum-networks FILE;
/// throws std::invalid_argument on anything else.
Options parse_options(int argc, char** argv);
bool wants(const Options& options, const std::string& family);
/// Whether an instance of a family runs: --only was not given, or it names `key`. The families
/// that honour it and their keys: mlp (mlp_f32, mlp_f64), elem_chain (elem_chain_<n>), linalg
/// (linalg_<op>_<n>), control (lstm, recurrence), einsum (the network's case name, such as
/// einsum_chain3); the others ignore it.
bool selected(const Options& options, const std::string& key);

/// Resident memory around one measured stretch of a case, in MiB.
struct Memory {
  double base_mb = 0;  ///< VmRSS right after the reset: the process, its libraries and the inputs.
  double peak_mb = 0;  ///< VmHWM after the stretch: the highest resident size reached within it.
};

/// Peak resident memory of `run`: returns freed heap to the system (malloc_trim), writes "5" to
/// /proc/self/clear_refs, which resets the kernel's high-water mark VmHWM to the current resident
/// size, calls `run` and reads VmHWM from /proc/self/status. Where clear_refs cannot be written the
/// peak is the process's lifetime peak (a note goes to stderr once).
template <class F>
Memory measure_memory(F&& run);

/// Repetitions so that `repetitions * one_run_s` is about `budget_s`, within [min, max].
int repetitions_for(double one_run_s, double budget_s, int min = 5, int max = 201);

/// One implementation of a case: a call that computes the case's result once.
struct Impl {
  std::string name;
  std::function<void()> run;
};

struct Measurement {
  double median_s = 0;
  Memory memory;
  int repetitions = 0;
};

/// Measures each implementation of one case, in this order:
///   1. memory: measure_memory over two calls; the first is the warm-up (tracing, compiling and
///      first-touch allocation happen there and are excluded from timing), the second a steady call
///      whose time sets the repetition count (`budget_s` per implementation);
///   2. time: the implementations run in alternation, so drift on a shared machine hits all
///      alike; the median of the timed calls is reported. Where every call takes under
///      kSettleBelow_s, each turn is one untimed settling call and then four timed ones: a thread
///      team keeps spinning for a while after its loop ends (libgomp's for milliseconds), so the
///      call after another implementation's threaded one would otherwise share the cores with
///      those spinning threads. One call per turn, the other team still spinning, measured the
///      elementwise chain at 1.6-1.8x its time in a steady stream of calls. Longer calls run one
///      timed call per turn.
inline constexpr double kSettleBelow_s = 0.05;
std::vector<Measurement> measure(const std::vector<Impl>& impls, double budget_s);

/// One result line on stdout. `extra` is appended as is (" key=value" pairs, each with its
/// leading space).
void print_line(const std::string& case_name, const std::string& impl, const std::string& size,
                const std::string& dtype, double median_s, const Memory& memory, int repetitions,
                const std::string& extra = "");

/// " key=value" with the value printed as %.4g.
std::string field(const char* key, double value);

// ---- implementation details of measure_memory ----
void reset_peak_rss();
Memory read_memory(double base_mb);
double current_rss_mb();

template <class F>
Memory measure_memory(F&& run) {
  reset_peak_rss();
  const double base = current_rss_mb();
  run();
  return read_memory(base);
}

}  // namespace bench
