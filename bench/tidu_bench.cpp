// tidu benchmarks: size and time of linearize and linear_transpose on chains and random DAGs
// (the paper's size preservation), the growth of higher-order derivatives, and the cheap-gradient
// principle (gradient program run time over primal program run time). One DESIGN.md line per case.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <span>
#include <string>
#include <vector>

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

int repetitions_for(std::size_t n) { return n >= 100000 ? 3 : n >= 10000 ? 5 : 9; }

/// x -> sin -> *a -> +a -> sin -> ... (n ops): every op depends on x.
cg::GraphPtr<ScalarOp> chain(std::size_t n) {
  ScalarGraph g;
  auto x = g.input("x"), a = g.input("a");
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

void size_case(const char* shape, const cg::GraphPtr<ScalarOp>& f) {
  const std::size_t n = f->operations().size();
  auto outs = f->output_keys();
  auto wrt = input_keys(f);
  auto view = cg::resolve({f});
  // Every result is kept until all runs are timed: the time is the transform's, not that of
  // freeing the previous run's graph.
  const int reps = repetitions_for(n);
  std::vector<tidu::LinearizedGraph<ScalarOp>> linear, transposed;
  linear.reserve(reps);
  transposed.reserve(reps);
  const double t_lin = bench::median_seconds([&] {
    linear.push_back(tidu::linearize(view, Keys(outs), std::span<const ScalarKey>(wrt)));
  }, reps);
  const double t_tr = bench::median_seconds([&] {
    transposed.push_back(tidu::linear_transpose(linear.front()));
  }, reps);
  const std::size_t n_lin = linear.front().graph->operations().size();
  const std::size_t n_tr = transposed.front().graph->operations().size();
  std::printf("case=linear_size impl=tenferro shape=%s size=%zu primal_ops=%zu linear_ops=%zu ratio=%.3f "
              "median_s=%.6g ns_per_op=%.1f\n",
              shape, n, n, n_lin, double(n_lin) / double(n), t_lin, 1e9 * t_lin / double(n));
  std::printf("case=transpose_size impl=tenferro shape=%s size=%zu linear_ops=%zu transpose_ops=%zu ratio=%.3f "
              "median_s=%.6g ns_per_op=%.1f\n",
              shape, n, n_lin, n_tr, double(n_tr) / double(n_lin), t_tr, 1e9 * t_tr / double(n_lin));
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
    for (std::size_t n : {1000, 10000, 100000}) size_case("chain", chain(n));
    for (std::size_t n : {1000, 10000, 100000}) {
      tidu::testkit::RandomDagOptions opts;
      opts.ops = n;
      opts.inputs = 8;
      opts.outputs = 4;
      opts.seed = 7;
      size_case("random_dag", tidu::testkit::random_scalar_dag(opts).graph);
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
