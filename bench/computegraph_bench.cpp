// Benchmarks of the computegraph pipeline: build -> resolve -> materialize_merge -> compile -> run.
//
// Graph shapes (N = number of operations, 10^3 .. 10^6):
// - chain:   one value threaded through N operations cycling mul(v, y), add(v, x), sin(v);
//            the worst case for depth (materialize_merge walks a 10^6-deep path).
// - lattice: layers of width 4 over 4 inputs; operation j of a layer reads values j and j+1 (mod 4)
//            of the previous layer (mul, add or sin, rotating by layer), so every value feeds two
//            operations of the next layer: a DAG full of shared subexpressions.
// run additionally uses an add/mul-only chain (mul(v, y), add(v, x)) to separate the interpreter's
// per-instruction cost from libm's sin, and a hand-written C++ loop over the same chain as a floor.
//
// Every case is timed with manual timing around the stage alone (setup and destruction of results
// are excluded), repeated, and reported by PlainLineReporter as one result line:
//   case=<stage>_<shape> impl=tenferro size=<N> median_s=<seconds> ns_per_op=<median / N> ...
// The median is taken over repetitions. Google Benchmark's own tables are not printed; pass
// --benchmark_out=<file> for its JSON.
//
// Heap policy (field heap=): by default (--heap=warm) freed memory stays in the process, as in a
// long-running program that transforms graphs repeatedly; each repetition then measures the
// stages, not the kernel handing out and zeroing fresh pages, which glibc's default policy (it
// returns freed memory to the system) makes dominate at these sizes: a page fault costs about
// 3 us per 4 KiB page on a small VM, more than the stages spend per operation.
// --heap=glibc keeps glibc's defaults.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "scalar_ops.hpp"

namespace {

namespace cg = computegraph;
using cgtest::Builder;
using cgtest::GraphPtr;
using cgtest::Key;
using cgtest::L;
using cgtest::ScalarOp;
using Clock = std::chrono::steady_clock;

enum class Shape { Chain, ChainAddMul, Lattice };
constexpr std::size_t kLatticeWidth = 4;

const char* shape_name(Shape shape) {
  switch (shape) {
    case Shape::Chain: return "chain";
    case Shape::ChainAddMul: return "chain_addmul";
    case Shape::Lattice: return "lattice";
  }
  return "?";
}

const char* shape_mix(Shape shape) {
  return shape == Shape::ChainAddMul ? "mul/add" : "mul/add/sin";
}

/// Builds a graph of exactly `n_ops` operations (n_ops is a multiple of kLatticeWidth).
GraphPtr build_graph(Shape shape, std::size_t n_ops) {
  Builder b;
  if (shape == Shape::Lattice) {
    std::vector<cg::LocalValueId> prev(kLatticeWidth), cur(kLatticeWidth);
    for (std::size_t j = 0; j < kLatticeWidth; ++j) prev[j] = b.add_input("x" + std::to_string(j));
    for (std::size_t i = 0; i < n_ops; ++i) {
      const std::size_t layer = i / kLatticeWidth, j = i % kLatticeWidth;
      const auto lhs = L(prev[j]), rhs = L(prev[(j + 1) % kLatticeWidth]);
      switch ((layer + j) % 3) {
        case 0: cur[j] = b.add(ScalarOp::mul(), {lhs, rhs}); break;
        case 1: cur[j] = b.add(ScalarOp::add(), {lhs, rhs}); break;
        default: cur[j] = b.add(ScalarOp::sin(), {lhs}); break;
      }
      if (j + 1 == kLatticeWidth) prev.swap(cur);
    }
    b.set_outputs(prev);
    return b.finish();
  }
  const auto x = b.add_input("x");
  const auto y = b.add_input("y");
  const std::size_t period = shape == Shape::Chain ? 3 : 2;
  cg::LocalValueId v = x;
  for (std::size_t i = 0; i < n_ops; ++i) {
    switch (i % period) {
      case 0: v = b.add(ScalarOp::mul(), {L(v), L(y)}); break;
      case 1: v = b.add(ScalarOp::add(), {L(v), L(x)}); break;
      default: v = b.add(ScalarOp::sin(), {L(v)}); break;
    }
  }
  b.add_output(v);
  return b.finish();
}

std::vector<double> program_inputs(Shape shape) {
  if (shape == Shape::Lattice) return {0.1, 0.2, 0.3, 0.4};
  return {0.3, 0.5};
}

/// The chains written directly in C++: the floor an interpreter is measured against (the sin
/// variant shows how much of a run is libm's sin itself).
double native_chain(Shape shape, double x, double y, std::size_t n_ops) {
  double v = x;
  if (shape == Shape::ChainAddMul) {
    for (std::size_t i = 0; i + 1 < n_ops; i += 2) v = v * y + x;
  } else {
    for (std::size_t i = 0; i + 2 < n_ops; i += 3) v = std::sin(v * y + x);
  }
  return v;
}

/// Per-shape pipeline products of the size being benchmarked, built once and shared by the stages
/// that need them as input. Holding only one size at a time bounds memory at 10^6 operations.
struct Fixture {
  GraphPtr graph;
  std::vector<Key> outputs;
  std::optional<cg::MaterializedGraph<ScalarOp>> materialized;
  std::optional<cg::CompiledProgram<ScalarOp>> program;
};

class FixtureCache {
 public:
  Fixture& get(Shape shape, std::size_t n_ops) {
    if (n_ops != size_) clear();
    size_ = n_ops;
    auto& slot = fixtures_[shape];
    if (!slot) {
      slot = std::make_unique<Fixture>();
      slot->graph = build_graph(shape, n_ops);
      slot->outputs = slot->graph->output_keys();
    }
    return *slot;
  }
  const cg::MaterializedGraph<ScalarOp>& materialized(Shape shape, std::size_t n_ops) {
    Fixture& f = get(shape, n_ops);
    if (!f.materialized) {
      f.materialized = cg::materialize_merge(cg::resolve({f.graph}), std::span<const Key>(f.outputs));
    }
    return *f.materialized;
  }
  const cg::CompiledProgram<ScalarOp>& program(Shape shape, std::size_t n_ops) {
    Fixture& f = get(shape, n_ops);
    if (!f.program) f.program = cg::compile(materialized(shape, n_ops));
    return *f.program;
  }
  /// Drops everything, so that a following build interns its keys from scratch.
  void clear() {
    fixtures_.clear();
    size_ = 0;
  }

 private:
  std::size_t size_ = 0;
  std::map<Shape, std::unique_ptr<Fixture>> fixtures_;
};

FixtureCache& cache() {
  static FixtureCache instance;
  return instance;
}

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

/// Times the stage inside each iteration: wall time becomes the iteration time (manual timing);
/// this thread's CPU time, which leaves out time-slicing by other processes on a busy machine,
/// goes to the cpu_s counter. Reading the CPU clock is a system call (about 1 us here), so the
/// reporter shows CPU time only for cases long enough for that not to matter.
class StageTimer {
 public:
  explicit StageTimer(benchmark::State& state) : state_(state) {}
  void start() {
    cpu_start_ = thread_cpu_seconds();
    wall_start_ = Clock::now();
  }
  void stop() {
    const double wall = seconds_since(wall_start_);
    cpu_total_ += thread_cpu_seconds() - cpu_start_;
    state_.SetIterationTime(wall);
  }
  /// Call after the benchmark loop.
  void finish() {
    state_.counters["cpu_s"] = benchmark::Counter(cpu_total_, benchmark::Counter::kAvgIterations);
  }

 private:
  benchmark::State& state_;
  Clock::time_point wall_start_;
  double cpu_start_ = 0;
  double cpu_total_ = 0;
};

// ---- stages ---------------------------------------------------------------------------------

void bm_build(benchmark::State& state, Shape shape, std::size_t n) {
  cache().clear();  // no live graph of this shape: every key is interned fresh
  StageTimer timer(state);
  for (auto _ : state) {
    timer.start();
    GraphPtr g = build_graph(shape, n);
    timer.stop();
    benchmark::DoNotOptimize(g.get());
  }  // the graph is destroyed here, outside the timed region
  timer.finish();
}

void bm_resolve(benchmark::State& state, Shape shape, std::size_t n) {
  const Fixture& f = cache().get(shape, n);
  StageTimer timer(state);
  for (auto _ : state) {
    timer.start();
    auto view = cg::resolve({f.graph});
    timer.stop();
    benchmark::DoNotOptimize(view.graphs().data());
  }
  timer.finish();
}

void bm_materialize(benchmark::State& state, Shape shape, std::size_t n) {
  const Fixture& f = cache().get(shape, n);
  const auto view = cg::resolve({f.graph});
  StageTimer timer(state);
  for (auto _ : state) {
    timer.start();
    auto m = cg::materialize_merge(view, std::span<const Key>(f.outputs));
    timer.stop();
    benchmark::DoNotOptimize(m.operations().data());
  }
  timer.finish();
}

void bm_compile(benchmark::State& state, Shape shape, std::size_t n) {
  const auto& m = cache().materialized(shape, n);
  StageTimer timer(state);
  for (auto _ : state) {
    timer.start();
    auto program = cg::compile(m);
    timer.stop();
    benchmark::DoNotOptimize(program.instructions().data());
  }
  timer.finish();
}

/// resolve + materialize_merge + compile: everything between a built graph and a runnable program.
void bm_transforms(benchmark::State& state, Shape shape, std::size_t n) {
  const Fixture& f = cache().get(shape, n);
  StageTimer timer(state);
  for (auto _ : state) {
    timer.start();
    auto view = cg::resolve({f.graph});
    auto m = cg::materialize_merge(view, std::span<const Key>(f.outputs));
    auto program = cg::compile(m);
    timer.stop();
    benchmark::DoNotOptimize(program.instructions().data());
  }
  timer.finish();
}

void bm_run(benchmark::State& state, Shape shape, std::size_t n) {
  const auto& program = cache().program(shape, n);
  if (program.instructions().size() != n) {
    state.SkipWithError("compiled program does not have one instruction per operation");
    return;
  }
  const auto inputs = program_inputs(shape);
  StageTimer timer(state);
  for (auto _ : state) {
    timer.start();
    auto out = program.run(std::span<const double>(inputs));
    timer.stop();
    benchmark::DoNotOptimize(out.data());
  }
  timer.finish();
}

void bm_native(benchmark::State& state, Shape shape, std::size_t n) {
  double x = 0.3, y = 0.5;
  StageTimer timer(state);
  for (auto _ : state) {
    benchmark::DoNotOptimize(x);
    benchmark::DoNotOptimize(y);
    timer.start();
    double v = native_chain(shape, x, y, n);
    timer.stop();
    benchmark::DoNotOptimize(v);
  }
  timer.finish();
}

// ---- registration and reporting ---------------------------------------------------------------

std::string& heap_policy() {
  static std::string policy = "warm";
  return policy;
}

/// Applies and removes the --heap=warm|glibc argument (see the top of the file).
bool configure_heap(int& argc, char** argv) {
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--heap=", 7) == 0) {
      heap_policy() = argv[i] + 7;
    } else {
      argv[kept++] = argv[i];
    }
  }
  argc = kept;
  if (heap_policy() == "glibc") return true;
  if (heap_policy() != "warm") {
    std::fprintf(stderr, "unknown --heap=%s (expected warm or glibc)\n", heap_policy().c_str());
    return false;
  }
#if defined(__GLIBC__)
  mallopt(M_MMAP_MAX, 0);                // large blocks come from the heap, so they are reused
  mallopt(M_TRIM_THRESHOLD, 0x7fffffff);  // and freed memory is never returned to the system
#else
  heap_policy() = "default";
#endif
  return true;
}

struct CaseInfo {
  std::string name;  // the result line's case name
  std::string impl;
  std::size_t size;
  std::string extra;  // further key=value fields
};

std::map<std::string, CaseInfo>& case_table() {
  static std::map<std::string, CaseInfo> table;
  return table;
}

/// Repetitions and iterations per repetition: about 2*10^5 operations of work per repetition for
/// graph stages (one iteration at 10^6). Enough repetitions for a stable median on a shared
/// machine, fewer at 10^6 to keep a full run short (about a minute).
int repetitions_for(std::size_t n) { return n >= 1000000 ? 5 : 9; }
benchmark::IterationCount iterations_for(std::size_t n, std::size_t work) {
  return static_cast<benchmark::IterationCount>(std::max<std::size_t>(1, work / n));
}

template <class Fn>
void add_case(const std::string& name, const std::string& impl, std::size_t n, std::size_t work,
              const std::string& extra, Fn&& fn) {
  const std::string id = name + "/" + std::to_string(n);
  case_table()[id] = CaseInfo{name, impl, n, extra};
  benchmark::RegisterBenchmark(id.c_str(), std::forward<Fn>(fn))
      ->UseManualTime()
      ->Iterations(iterations_for(n, work))
      ->Repetitions(repetitions_for(n))
      ->Unit(benchmark::kMillisecond);
}

void register_all() {
  constexpr std::size_t kGraphWork = 200000;  // operations per repetition for graph stages
  constexpr std::size_t kRunWork = 2000000;   // instructions per repetition for runs
  for (std::size_t n : {std::size_t{1000}, std::size_t{10000}, std::size_t{100000},
                        std::size_t{1000000}}) {
    // Sizes outermost, so the fixture cache holds one size at a time.
    for (Shape shape : {Shape::Chain, Shape::Lattice}) {
      const std::string s = shape_name(shape);
      const std::string extra = std::string("mix=") + shape_mix(shape);
      using Stage = void (*)(benchmark::State&, Shape, std::size_t);
      const std::pair<const char*, Stage> stages[] = {
          {"build_", bm_build},       {"resolve_", bm_resolve},       {"materialize_", bm_materialize},
          {"compile_", bm_compile},   {"transforms_", bm_transforms},
      };
      for (const auto& entry : stages) {
        const Stage stage = entry.second;  // clang++ 14 cannot capture structured bindings
        add_case(entry.first + s, "tenferro", n, kGraphWork, extra,
                 [=](benchmark::State& st) { stage(st, shape, n); });
      }
      add_case("run_scalar_" + s, "tenferro", n, kRunWork, extra,
               [=](benchmark::State& st) { bm_run(st, shape, n); });
    }
    add_case("run_scalar_chain_addmul", "tenferro", n, kRunWork, "mix=mul/add",
             [=](benchmark::State& st) { bm_run(st, Shape::ChainAddMul, n); });
    add_case("native_scalar_chain", "cxx", n, kRunWork, "mix=mul/add/sin",
             [=](benchmark::State& st) { bm_native(st, Shape::Chain, n); });
    add_case("native_scalar_chain_addmul", "cxx", n, kRunWork, "mix=mul/add",
             [=](benchmark::State& st) { bm_native(st, Shape::ChainAddMul, n); });
  }
}

/// Prints one result line per case (median over repetitions); everything else goes nowhere.
class PlainLineReporter : public benchmark::BenchmarkReporter {
 public:
  /// Shortest median for which cpu_ns_per_op is printed (see StageTimer).
  static constexpr double kMinCpuReport = 1e-4;

  bool ReportContext(const Context&) override { return true; }

  void ReportRuns(const std::vector<Run>& runs) override {
    struct Samples {
      std::vector<double> wall, cpu;  // seconds per iteration, one entry per repetition
      benchmark::IterationCount iterations = 0;
    };
    std::map<std::string, Samples> cases;
    for (const Run& run : runs) {
      if (run.run_type != Run::RT_Iteration) continue;
      const std::string& id = run.run_name.function_name;
      if (run.error_occurred) {
        std::printf("case=%s error=\"%s\"\n", id.c_str(), run.error_message.c_str());
        continue;
      }
      Samples& s = cases[id];
      s.wall.push_back(run.real_accumulated_time / static_cast<double>(run.iterations));
      if (auto cpu = run.counters.find("cpu_s"); cpu != run.counters.end()) {
        s.cpu.push_back(cpu->second.value);
      }
      s.iterations = run.iterations;
    }
    for (auto& [id, s] : cases) {
      const auto it = case_table().find(id);
      if (it == case_table().end()) continue;
      const CaseInfo& info = it->second;
      const double n = static_cast<double>(info.size);
      const double median = median_of(s.wall);
      std::string cpu;
      if (!s.cpu.empty() && median >= kMinCpuReport) {
        char buf[64];
        std::snprintf(buf, sizeof buf, " cpu_ns_per_op=%.2f", median_of(s.cpu) * 1e9 / n);
        cpu = buf;
      }
      std::printf("case=%s impl=%s size=%zu median_s=%.6g ns_per_op=%.2f%s reps=%zu iters=%lld %s heap=%s\n",
                  info.name.c_str(), info.impl.c_str(), info.size, median, median * 1e9 / n,
                  cpu.c_str(), s.wall.size(), static_cast<long long>(s.iterations),
                  info.extra.c_str(), heap_policy().c_str());
    }
    std::fflush(stdout);
  }

 private:
  static double median_of(std::vector<double>& v) {
    std::sort(v.begin(), v.end());
    const std::size_t mid = v.size() / 2;
    return v.size() % 2 ? v[mid] : 0.5 * (v[mid - 1] + v[mid]);
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (!configure_heap(argc, argv)) return 1;
  register_all();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  PlainLineReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
