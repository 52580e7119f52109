// tidu benchmarks: size and time of linearize and linear_transpose on chains and random DAGs
// (the paper's size preservation), the growth of higher-order derivatives, and the cheap-gradient
// principle (gradient program run time over primal program run time). One result line per case.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <span>
#include <string>
#include <vector>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "computegraph/computegraph.hpp"
#include "tidu/reference/scalar_graph.hpp"
#include "tidu/testing/random_scalar_dag.hpp"
#include "tidu/tidu.hpp"
#include "timing.hpp"

namespace cg = computegraph;
using tidu::reference::DType;
using tidu::reference::Number;
using tidu::reference::ScalarGraph;
using tidu::reference::ScalarKey;
using tidu::reference::ScalarOp;
using Key = cg::ValueKey<ScalarOp>;
using Keys = std::span<const Key>;

namespace {

int repetitions_for(std::size_t n) { return n >= 100000 ? 7 : n >= 10000 ? 15 : 41; }

/// Runs `body` in a child process and waits for it. Each size case runs in a fresh process, so
/// that every case allocates from the same empty heap: run in one process, a case would reuse the
/// memory that earlier, larger cases freed (no page faults) or not, depending on the order of the
/// cases, which makes per-op times of different sizes incomparable. Exits if the case fails.
void run_isolated(const std::function<void()>& body) {
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = fork();
  if (pid < 0) {
    body();  // no child: run here, the figures are then only as comparable as the order allows
    return;
  }
  if (pid == 0) {
    body();
    std::fflush(stdout);
    std::_Exit(0);  // the kept graphs die with the process: nothing to free
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "bench_tidu: a size case failed\n");
    std::exit(1);
  }
}

/// Heap bytes in use (glibc), or 0 where unknown.
std::size_t heap_bytes_in_use() {
#ifdef __GLIBC__
  const struct mallinfo2 info = mallinfo2();
  return info.uordblks + info.hblkhd;
#else
  return 0;
#endif
}

/// x -> sin -> *a -> +a -> sin -> ... (n ops): every op depends on x. Chains with different
/// `variant`s have different inputs, hence no key in common.
cg::GraphPtr<ScalarOp> chain(std::size_t n, int variant = 0) {
  ScalarGraph g;
  const std::string suffix = variant == 0 ? "" : std::to_string(variant);
  auto x = g.input("x" + suffix), a = g.input("a" + suffix);
  auto v = x;
  for (std::size_t i = 0; i < n; ++i) v = i % 3 == 0 ? g.sin(v) : i % 3 == 1 ? g.mul(v, a) : g.add(v, a);
  g.output(v);
  return g.finish();
}

std::vector<ScalarKey> input_keys(const cg::GraphPtr<ScalarOp>& f) {
  std::vector<ScalarKey> keys;
  for (auto id : f->inputs()) keys.push_back(f->key(id).input_key());
  return keys;
}

std::vector<Key> present(const std::vector<std::optional<Key>>& keys) {
  std::vector<Key> out;
  for (const auto& k : keys) if (k) out.push_back(*k);
  return out;
}

/// Median over r < reps of the time of `run(r)`. Results are kept until all runs are timed, so
/// that no run is charged for freeing an earlier one's graph, nor for the page faults that follow
/// when the allocator hands memory freed by one large run back to the system and the next run
/// takes it again (small runs would reuse their memory and never pay them). If `first_run_bytes`
/// is given, it receives the heap bytes that run 0 left allocated (read outside the timing).
template <class Run>
double median_kept_seconds(Run run, int reps, std::size_t* first_run_bytes = nullptr) {
  std::vector<decltype(run(0))> kept;
  kept.reserve(reps);
  std::vector<double> times;
  for (int r = 0; r < reps; ++r) {
    const std::size_t before = r == 0 && first_run_bytes ? heap_bytes_in_use() : 0;
    const auto start = std::chrono::steady_clock::now();
    kept.push_back(run(r));
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    if (r == 0 && first_run_bytes) *first_run_bytes = heap_bytes_in_use() - before;
  }
  return bench::median(std::move(times));
}

/// One new key per operation of `f`: the operation itself under a linearized role (hashing,
/// looking up and retaining its operands, and allocating the node, in f's order), and nothing
/// else. Every operation a transform emits pays at least this.
std::vector<cg::OperationKey<ScalarOp>> rekey_operations(const cg::Graph<ScalarOp>& f) {
  std::vector<cg::OperationKey<ScalarOp>> keys;
  keys.reserve(f.operations().size());
  for (const auto& node : f.operations()) {
    std::vector<bool> all_active(node.inputs.size(), true);
    keys.push_back(cg::OperationKey<ScalarOp>::make(
        node.operation, node.inputs.size(),
        [&](std::size_t i) -> const Key& { return f.key_of(node.inputs[i]); },
        cg::OperationRole::linearized(all_active)));
  }
  return keys;
}

using GraphMaker = std::function<cg::GraphPtr<ScalarOp>(int)>;

/// The graphs of one size case: run r gets `make(r)`, built beforehand. The makers give graphs
/// with no key in common, so every run creates its graph and key nodes (as the first transform of
/// a graph does) instead of finding the nodes an earlier run left alive.
struct SizeRuns {
  struct Run {
    cg::GraphPtr<ScalarOp> f;
    std::vector<Key> outs;
    std::vector<ScalarKey> wrt;
    cg::ResolvedView<ScalarOp> view;
  };
  SizeRuns(std::size_t size, const GraphMaker& make) : reps(repetitions_for(size)) {
    for (int r = 0; r < reps; ++r) {
      auto f = make(r);
      runs.push_back({f, f->output_keys(), input_keys(f), cg::resolve({f})});
    }
  }
  std::size_t ops() const { return runs[0].f->operations().size(); }
  int reps;
  std::vector<Run> runs;
};

/// The interning floor on one size case's graphs (rekey_operations): its growth from small to
/// large graphs is the memory hierarchy's (operands that lie anywhere in a graph larger than the
/// caches), not the transforms'.
void floor_case(const char* shape, std::size_t size, const GraphMaker& make) {
  const SizeRuns s(size, make);
  const double t = median_kept_seconds([&](int r) { return rekey_operations(*s.runs[r].f); }, s.reps);
  std::printf("case=interning_floor impl=tenferro shape=%s size=%zu median_s=%.6g ns_per_op=%.1f reps=%d\n",
              shape, s.ops(), t, 1e9 * t / double(s.ops()), s.reps);
}

/// Size ratios, time and heap bytes per op of linearize and linear_transpose on one size case.
void size_case(const char* shape, std::size_t size, const GraphMaker& make) {
  const SizeRuns s(size, make);
  const std::size_t n = s.ops();
  std::vector<tidu::LinearizedGraph<ScalarOp>> linear;
  std::size_t lin_bytes = 0, tr_bytes = 0;
  linear.reserve(s.reps);
  const double t_lin = median_kept_seconds([&](int r) {
    const auto& run = s.runs[r];
    linear.push_back(tidu::linearize(run.view, Keys(run.outs), std::span<const ScalarKey>(run.wrt)));
    return linear.back().graph;
  }, s.reps, &lin_bytes);
  const double t_tr = median_kept_seconds([&](int r) { return tidu::linear_transpose(linear[r]); },
                                          s.reps, &tr_bytes);
  const std::size_t n_lin = linear[0].graph->operations().size();
  const std::size_t n_tr = tidu::linear_transpose(linear[0]).graph->operations().size();
  std::printf("case=linear_size impl=tenferro shape=%s size=%zu primal_ops=%zu linear_ops=%zu ratio=%.3f "
              "median_s=%.6g ns_per_op=%.1f bytes_per_op=%.0f reps=%d\n",
              shape, n, n, n_lin, double(n_lin) / double(n), t_lin, 1e9 * t_lin / double(n),
              double(lin_bytes) / double(n_lin), s.reps);
  std::printf("case=transpose_size impl=tenferro shape=%s size=%zu linear_ops=%zu transpose_ops=%zu ratio=%.3f "
              "median_s=%.6g ns_per_op=%.1f bytes_per_op=%.0f reps=%d\n",
              shape, n, n_lin, n_tr, double(n_tr) / double(n_lin), t_tr, 1e9 * t_tr / double(n_lin),
              double(tr_bytes) / double(n_tr), s.reps);
}

/// Materialized op count of the k-th derivative of f along x, f^(k)(x)[v, ..., v], k = 1..max_k:
/// resolve-then-linearize k times with no physical merge in between, every pass after the first
/// seeded by the first pass's tangent input (linearize_along), then materialize_merge of the k-th
/// graph's outputs (all ops it reaches: primal, and every order's tangent ops, after CSE).
/// `fresh_seed_ops` is the same count when each pass has its own fresh seed (plain linearize):
/// the mixed terms of 2^k distinct seeds, which grow exponentially.
void higher_order_case(const char* fn, const cg::GraphPtr<ScalarOp>& f, std::size_t max_k) {
  const std::vector<ScalarKey> wrt{input_keys(f)[0]};
  std::vector<cg::GraphPtr<ScalarOp>> graphs{f}, fresh_graphs{f};
  std::vector<Key> outs = f->output_keys(), fresh_outs = outs;
  std::vector<ScalarKey> direction;
  for (std::size_t k = 1; k <= max_k; ++k) {
    auto start = std::chrono::steady_clock::now();
    auto view = cg::resolve(graphs);
    auto lin = k == 1 ? tidu::linearize(view, Keys(outs), std::span<const ScalarKey>(wrt))
                      : tidu::linearize_along(view, Keys(outs), std::span<const ScalarKey>(wrt),
                                              std::span<const ScalarKey>(direction));
    if (k == 1) direction = lin.tangent_input_keys();
    outs = present(lin.tangent_output_keys());
    graphs.push_back(lin.graph);
    auto materialized = cg::materialize_merge(cg::resolve({lin.graph}), Keys(outs));
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    auto fresh = tidu::linearize(cg::resolve(fresh_graphs), Keys(fresh_outs), std::span<const ScalarKey>(wrt));
    fresh_outs = present(fresh.tangent_output_keys());
    fresh_graphs.push_back(fresh.graph);
    const std::size_t fresh_ops =
        cg::materialize_merge(cg::resolve({fresh.graph}), Keys(fresh_outs)).operations().size();
    std::printf("case=higher_order impl=tenferro fn=%s size=%zu k=%zu ops=%zu fresh_seed_ops=%zu "
                "median_s=%.6g\n",
                fn, f->operations().size(), k, materialized.operations().size(), fresh_ops, seconds);
  }
}

void grad_cost_case(std::size_t n) {
  tidu::testkit::RandomDagOptions opts;
  opts.ops = n;
  opts.inputs = 8;
  opts.outputs = 1;
  opts.seed = 42;
  auto dag = tidu::testkit::random_scalar_dag(opts);
  tidu::Transforms<ScalarOp> ad;
  const std::vector<Number> ct{1.0};
  ad.eval(dag.graph, dag.args);  // compile both programs before timing
  ad.vjp(dag.graph, dag.args, ct);
  // Interleaved, so that load from other processes on a shared machine hits both alike.
  const auto [primal, grad] = bench::median_seconds_interleaved(
      [&] { ad.eval(dag.graph, dag.args); }, [&] { ad.vjp(dag.graph, dag.args, ct); }, 15);
  std::printf("case=grad_cost impl=tenferro size=%zu primal_ops=%zu primal_s=%.6g median_s=%.6g ratio=%.3f\n", n,
              dag.graph->operations().size(), primal, grad, grad / primal);
}

}  // namespace

/// Optional argument: run only the cases whose name (linear_size, higher_order, grad_cost) it
/// names; linear_size also prints transpose_size.
int main(int argc, char** argv) {
  const std::string only = argc > 1 ? argv[1] : "";
  auto wanted = [&](const char* name) { return only.empty() || only == name; };
  if (wanted("linear_size")) {
    // Each case, and the floor of each, in a process of its own (see run_isolated).
    auto both = [](const char* shape, std::size_t n, const GraphMaker& make) {
      run_isolated([&] { floor_case(shape, n, make); });
      run_isolated([&] { size_case(shape, n, make); });
    };
    for (std::size_t n : {1000, 10000, 100000}) both("chain", n, [n](int r) { return chain(n, r); });
    for (std::size_t n : {1000, 10000, 100000}) {
      both("random_dag", n, [n](int r) {
        tidu::testkit::RandomDagOptions opts;
        opts.ops = n;
        opts.inputs = 8;
        opts.outputs = 4;
        opts.seed = 7 + static_cast<std::uint64_t>(r);
        return tidu::testkit::random_scalar_dag(opts).graph;
      });
    }
  }
  if (wanted("higher_order")) {
    ScalarGraph g;
    auto x = g.input("x"), a = g.input("a");
    g.output(g.exp(g.mul(a, x)));
    higher_order_case("exp_ax", g.finish(), 6);
    tidu::testkit::RandomDagOptions opts;
    opts.ops = 50;
    opts.inputs = 3;
    opts.outputs = 1;
    opts.seed = 5;
    higher_order_case("random_dag50", tidu::testkit::random_scalar_dag(opts).graph, 6);
  }
  if (wanted("grad_cost")) grad_cost_case(100000);
  return 0;
}
