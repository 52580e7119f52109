// The fast scalar path against plain C++ doubles: a chain of `size` rank-0 f64 ops alternating
// v*a, v+b, sin(v), as a forward program and as its gradient program (d/dx by reverse mode), both
// run through exec::ScalarProgram; the chain written as plain C++ is timed in the same run.
//
// Against constant folding: the native chain reads x, a, b through volatile loads and writes its
// result to a volatile sink, and is not inlined into the timing loop; every call of either path
// starts from inputs the compiler cannot see. ns_per_op is median_s / size for every case.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <span>
#include <vector>

#include "computegraph/computegraph.hpp"
#include "exec/scalar_program.hpp"
#include "tenferro/ops/make.hpp"
#include "tenferro/program.hpp"
#include "tidu/tidu.hpp"
#include "timing.hpp"

namespace {

using namespace tenferro;
using Compiled = computegraph::CompiledProgram<StdTensorOp>;
using Value = computegraph::ValueRef<StdTensorOp>;
using Keys = std::vector<TensorValueKey>;

constexpr int kSize = 1000;
constexpr int kCallsPerSample = 200;
constexpr int kSamples = 31;

volatile double g_x = 0.3, g_a = 0.999, g_b = 0.01;
volatile double g_sink = 0;

[[gnu::noinline]] double native_chain(double x, double a, double b) {
  double v = x;
  for (int i = 0; i < kSize; ++i) {
    switch (i % 3) {
      case 0: v = v * a; break;
      case 1: v = v + b; break;
      default: v = std::sin(v); break;
    }
  }
  return v;
}

computegraph::GraphPtr<StdTensorOp> chain_graph() {
  const TensorType t{DType::F64, {}};
  computegraph::GraphBuilder<StdTensorOp> b;
  Value x = Value::local(b.add_input(TensorKey{"x", t}));
  Value a = Value::local(b.add_input(TensorKey{"a", t}));
  Value c = Value::local(b.add_input(TensorKey{"b", t}));
  Value v = x;
  for (int i = 0; i < kSize; ++i) {
    switch (i % 3) {
      case 0: v = Value::local(b.add(ops::mul(t, t), {v, a})); break;
      case 1: v = Value::local(b.add(ops::add(t, t), {v, c})); break;
      default: v = Value::local(b.add(ops::unary(OpKind::Sin, t), {v})); break;
    }
  }
  b.set_outputs({v.local_id()});
  return b.finish();
}

Compiled compile_keys(const computegraph::GraphPtr<StdTensorOp>& root, const Keys& outputs, const Keys& leading) {
  return computegraph::compile(computegraph::materialize_merge(computegraph::resolve({root}), std::span<const TensorValueKey>(outputs),
                                                               std::span<const TensorValueKey>(leading)));
}

void report(const char* name, const char* impl, double median_s, double native_s, std::size_t instructions) {
  std::printf("case=%s impl=%s size=%d median_s=%.4e ns_per_op=%.3f ratio_vs_native=%.3f instructions=%zu\n", name,
              impl, kSize, median_s, median_s * 1e9 / kSize, median_s / native_s, instructions);
}

}  // namespace

int main() {
  const auto g = chain_graph();
  Keys inputs;
  for (auto id : g->inputs()) inputs.push_back(g->key(id));
  const Compiled fwd = compile_keys(g, g->output_keys(), inputs);

  // Reverse mode with respect to x only: the program (x, a, b, seed) -> (f, df/dx).
  const std::vector<TensorKey> wrt = {inputs[0].input_key()};
  const auto lin = tidu::linearize(computegraph::resolve({g}), std::span<const TensorValueKey>(g->output_keys()),
                                   std::span<const TensorKey>(wrt));
  const auto tr = tidu::linear_transpose(lin);
  Keys grad_out = g->output_keys(), grad_in = inputs;
  for (const auto& k : tr.tangent_output_keys()) grad_out.push_back(k.value());
  for (std::size_t i = 0; i < tr.tangent_inputs.size(); ++i) grad_in.push_back(tr.tangent_input_key(i));
  const Compiled grad = compile_keys(tr.graph, grad_out, grad_in);

  const auto fwd_s = exec::ScalarProgram::lower(fwd);
  const auto grad_s = exec::ScalarProgram::lower(grad);
  if (!fwd_s || !grad_s) {
    std::fprintf(stderr, "scalar_program_bench: lower() refused the chain\n");
    return 1;
  }

  auto args = [] { return std::vector<Tensor>{Tensor::scalar(g_x), Tensor::scalar(g_a), Tensor::scalar(g_b)}; };
  const std::vector<Tensor> fwd_args = args();
  std::vector<Tensor> grad_args = args();
  grad_args.push_back(Tensor::scalar(1.0));

  // The same value on every path (bitwise), so every path does the same work.
  const double native_v = native_chain(g_x, g_a, g_b);
  const double scalar_v = fwd_s->run(fwd_args)[0].item<double>();
  const double grad_v = grad_s->run(grad_args)[0].item<double>();
  const bool same = std::memcmp(&native_v, &scalar_v, sizeof native_v) == 0 &&
                    std::memcmp(&native_v, &grad_v, sizeof native_v) == 0;
  std::printf("# chain value native=%.17g scalar=%.17g grad_program=%.17g same_bits=%d df/dx=%.17g\n", native_v,
              scalar_v, grad_v, same ? 1 : 0, grad_s->run(grad_args)[1].item<double>());

  auto native = [] {
    for (int k = 0; k < kCallsPerSample; ++k) g_sink = native_chain(g_x, g_a, g_b);
  };
  auto scalar_fwd = [&] {
    for (int k = 0; k < kCallsPerSample; ++k) g_sink = fwd_s->run(fwd_args)[0].item<double>();
  };
  auto scalar_grad = [&] {
    for (int k = 0; k < kCallsPerSample; ++k) g_sink = grad_s->run(grad_args)[1].item<double>();
  };
  auto compiled_fwd = [&] {
    for (int k = 0; k < kCallsPerSample / 10; ++k) g_sink = fwd.run(fwd_args)[0].item<double>();
  };

  const auto [native_fwd_s, scalar_fwd_s] = bench::median_seconds_interleaved(native, scalar_fwd, kSamples);
  const auto [native_fwd_s2, scalar_grad_s] = bench::median_seconds_interleaved(native, scalar_grad, kSamples);
  const double compiled_s = bench::median_seconds(compiled_fwd, 5, true) * 10;
  const double n = kCallsPerSample;
  report("scalar_chain_fwd", "native", native_fwd_s / n, native_fwd_s / n, 0);
  report("scalar_chain_fwd", "tenferro_scalar", scalar_fwd_s / n, native_fwd_s / n, fwd_s->instruction_count());
  report("scalar_chain_fwd", "tenferro_compiled", compiled_s / n, native_fwd_s / n, fwd.instructions().size());
  report("scalar_chain_grad", "tenferro_scalar", scalar_grad_s / n, native_fwd_s2 / n, grad_s->instruction_count());
  return same ? 0 : 2;
}
