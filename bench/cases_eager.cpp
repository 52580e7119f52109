// Eager mode (tenferro/eager.hpp): the cost of one operation, of a 100-operation chain with its
// backward(), and of an MLP training step. The same cases run in bench/peers/libtorch_eager.cpp
// (LibTorch, C++) and bench/peers/torch_bench.py's run_eager (PyTorch from Python).
#include <cmath>
#include <random>
#include <vector>

#include "cases.hpp"
#include "tenferro/tenferro.hpp"

namespace bench {

namespace tf = tenferro;
using E = tf::EagerTensor;
using T = tf::Traced;

namespace {
constexpr int kOpsPerRun = 1000;

/// The per-operation time of `op` (c = op(c, b), kOpsPerRun times per timed run) on 2x2 f64.
void per_op(const Options& options, const char* name, T (*op)(const T&, const T&), const tf::Tensor& b0) {
  const E b(b0);
  const tf::Tensor start = tf::Tensor::from(std::vector<double>{1, 0.5, -0.25, 2}, {2, 2});
  const auto m = measure({{"tenferro", [&] {
                            E c(start);
                            for (int i = 0; i < kOpsPerRun; ++i) c = op(c, b);
                          }}},
                         options.budget_s);
  print_line(name, "tenferro", "2x2", "f64", m[0].median_s / kOpsPerRun, m[0].memory, m[0].repetitions);
}

T add_op(const T& a, const T& b) { return a + b; }
T matmul_op(const T& a, const T& b) { return tf::matmul(a, b); }

/// 100 operations on a 2x2 leaf that requires grad (sin, mul by the leaf, add a scalar, tanh,
/// repeated), summed, then backward().
void chain(const Options& options) {
  const tf::Tensor x0 = tf::Tensor::from(std::vector<double>{0.1, 0.2, 0.3, 0.4}, {2, 2});
  const auto m = measure({{"tenferro", [&] {
                            E x(x0, true);
                            T y = x;
                            for (int i = 0; i < 100; ++i) {
                              switch (i % 4) {
                                case 0: y = tf::sin(y); break;
                                case 1: y = y * x; break;
                                case 2: y = y + 0.5; break;
                                default: y = tf::tanh(y); break;
                              }
                            }
                            E(tf::sum(y)).backward();
                          }}},
                         options.budget_s);
  print_line("eager_chain100_fwd_bwd", "tenferro", "2x2", "f64", m[0].median_s, m[0].memory, m[0].repetitions);
}

/// One SGD step of run_mlp's network (784-512-512-10, tanh, softmax cross-entropy, batch 256, f32):
/// forward, backward() into the six parameters, and the update.
void mlp_step(const Options& options) {
  constexpr std::int64_t kBatch = 256, kIn = 784, kHidden = 512, kOut = 10;
  std::mt19937 rng(1);
  auto random = [&](tf::Shape shape, double scale) {
    std::normal_distribution<double> normal(0.0, scale);
    std::vector<float> v(static_cast<std::size_t>(tf::numel(shape)));
    for (auto& e : v) e = static_cast<float>(normal(rng));
    return tf::Tensor::from(v, std::move(shape));
  };
  std::vector<E> params = {E(random({kIn, kHidden}, 0.03), true), E(random({kHidden}, 0.01), true),
                           E(random({kHidden, kHidden}, 0.04), true), E(random({kHidden}, 0.01), true),
                           E(random({kHidden, kOut}, 0.04), true), E(random({kOut}, 0.01), true)};
  const E x(random({kBatch, kIn}, 1.0));
  std::vector<float> labels(kBatch * kOut, 0.0f);
  for (std::int64_t i = 0; i < kBatch; ++i) labels[static_cast<std::size_t>(i * kOut + i % kOut)] = 1.0f;
  const E y(tf::Tensor::from(labels, {kBatch, kOut}));
  const auto m = measure({{"tenferro", [&] {
                            const T h1 = tf::tanh(tf::matmul(x, params[0]) + params[1]);
                            const T h2 = tf::tanh(tf::matmul(h1, params[2]) + params[3]);
                            E(tf::cross_entropy(tf::matmul(h2, params[4]) + params[5], y)).backward();
                            tf::NoGrad scope;
                            for (E& p : params) p = E(E(p - static_cast<T>(p.grad()) * 1e-3).value(), true);
                          }}},
                         options.budget_s);
  print_line("eager_mlp_step", "tenferro", "784-512-512-10x256", "f32", m[0].median_s, m[0].memory, m[0].repetitions);
}
}  // namespace

void run_eager(const Options& options) {
  per_op(options, "eager_add", add_op, tf::Tensor::from(std::vector<double>{1e-3, -2e-3, 3e-3, 0}, {2, 2}));
  const double c = std::cos(0.3), s = std::sin(0.3);  // a rotation: the product stays bounded
  per_op(options, "eager_matmul", matmul_op, tf::Tensor::from(std::vector<double>{c, -s, s, c}, {2, 2}));
  chain(options);
  mlp_step(options);
}

}  // namespace bench
