// vmap (cases.hpp, run_vmap): per-example gradients of the MLP of run_mlp (784-512-512-10,
// tanh, softmax cross-entropy) at batch 256, f32, as vmap(grad(loss of one example)); beside it
// the same per-example gradients written by hand with a batch axis (the backward pass as batched
// outer products), timed in the same run. Before timing, the two are compared (stderr on a
// mismatch), so a wrong batching rule cannot pass for a fast one.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "cases.hpp"
#include "tenferro/tenferro.hpp"

namespace bench {

namespace tf = tenferro;
using T = tf::Traced;

namespace {

tf::Tensor random_f32(tf::Shape shape, double scale, std::mt19937& rng) {
  std::normal_distribution<double> normal(0.0, scale);
  std::vector<float> values(static_cast<std::size_t>(tf::numel(shape)));
  for (auto& v : values) v = static_cast<float>(normal(rng));
  return tf::Tensor::from(values, std::move(shape));
}

/// One example's loss: x [784], y [10] (one-hot).
T example_loss(T w1, T b1, T w2, T b2, T w3, T b3, T x, T y) {
  const T h1 = tf::tanh(tf::matmul(x, w1) + b1);
  const T h2 = tf::tanh(tf::matmul(h1, w2) + b2);
  return -tf::sum(y * tf::log_softmax(tf::matmul(h2, w3) + b3));
}

/// The per-example gradients by hand: with delta3 = softmax(z) - y, a layer's weight gradient is
/// the outer product of its input and its delta, per example ("bi,bj->bij"), and
/// delta_{k-1} = (delta_k W_k^T) (1 - h^2).
std::vector<T> hand_batched(T w1, T b1, T w2, T b2, T w3, T b3, T x, T y) {
  const T h1 = tf::tanh(tf::matmul(x, w1) + b1);
  const T h2 = tf::tanh(tf::matmul(h1, w2) + b2);
  const T delta3 = tf::softmax(tf::matmul(h2, w3) + b3, -1) - y;
  const T delta2 = tf::matmul(delta3, tf::transpose(w3)) * (1.0 - h2 * h2);
  const T delta1 = tf::matmul(delta2, tf::transpose(w2)) * (1.0 - h1 * h1);
  // outer(a, d)[b, i, j] = a[b, i] d[b, j]: a batched product over a contracted axis of length 1.
  auto outer = [](const T& a, const T& d) {
    const std::int64_t n = a.shape()[0];
    return tf::dot_general(tf::reshape(a, {n, a.shape()[1], 1}), tf::reshape(d, {n, 1, d.shape()[1]}),
                           tf::DotDims{{0}, {0}, {2}, {1}});
  };
  return {outer(x, delta1), delta1, outer(h1, delta2), delta2, outer(h2, delta3), delta3};
}

double max_relative_difference(const std::vector<tf::Tensor>& a, const std::vector<tf::Tensor>& b) {
  double worst = 0;
  for (std::size_t k = 0; k < a.size(); ++k) {
    if (a[k].shape() != b[k].shape()) return INFINITY;
    double scale = 0;
    for (std::int64_t i = 0; i < b[k].numel(); ++i) scale = std::max(scale, std::abs(double(b[k].data<float>()[i])));
    for (std::int64_t i = 0; i < a[k].numel(); ++i) {
      worst = std::max(worst, std::abs(double(a[k].data<float>()[i]) - double(b[k].data<float>()[i])) / (scale + 1e-30));
    }
  }
  return worst;
}

}  // namespace

void run_vmap(const Options& options) {
  constexpr std::int64_t kBatch = 256, kIn = 784, kHidden = 512, kOut = 10;
  const char* size = "784-512-512-10x256";
  std::mt19937 rng(1);
  std::vector<tf::Tensor> args = {random_f32({kIn, kHidden}, 0.03, rng),     random_f32({kHidden}, 0.01, rng),
                                  random_f32({kHidden, kHidden}, 0.04, rng), random_f32({kHidden}, 0.01, rng),
                                  random_f32({kHidden, kOut}, 0.04, rng),    random_f32({kOut}, 0.01, rng),
                                  random_f32({kBatch, kIn}, 1.0, rng)};
  std::vector<float> labels(kBatch * kOut, 0.0f);
  for (std::int64_t i = 0; i < kBatch; ++i) labels[static_cast<std::size_t>(i * kOut + i % kOut)] = 1.0f;
  args.push_back(tf::Tensor::from(labels, {kBatch, kOut}));

  const auto gradients = tf::value_and_grad(example_loss, {0, 1, 2, 3, 4, 5});
  auto per_example_gradients = [gradients](T w1, T b1, T w2, T b2, T w3, T b3, T x, T y) {
    return gradients(w1, b1, w2, b2, w3, b3, x, y).second;
  };
  const std::optional<std::int64_t> shared;
  const tf::VmapOptions in{.in_axes = {shared, shared, shared, shared, shared, shared, 0, 0}};
  tf::Program vmapped = tf::trace(
      [&](T w1, T b1, T w2, T b2, T w3, T b3, T x, T y) {
        return tf::vmap(per_example_gradients, in)(w1, b1, w2, b2, w3, b3, x, y);
      },
      args[0], args[1], args[2], args[3], args[4], args[5], args[6], args[7]);
  tf::Program hand = tf::trace(hand_batched, args[0], args[1], args[2], args[3], args[4], args[5], args[6], args[7]);
  const double diff = max_relative_difference(vmapped.run(args), hand.run(args));
  if (!(diff < 1e-4)) std::fprintf(stderr, "bench: vmap_mlp_grad: vmap and the hand-batched gradients differ by %g\n", diff);

  const auto m = measure({{"vmap", [&] { vmapped.run(args); }}, {"hand", [&] { hand.run(args); }}}, options.budget_s);
  print_line("vmap_mlp_grad", "hand_batched", size, "f32", m[1].median_s, m[1].memory, m[1].repetitions);
  print_line("vmap_mlp_grad", "tenferro", size, "f32", m[0].median_s, m[0].memory, m[0].repetitions,
             field("ratio_vs_hand", m[0].median_s / m[1].median_s));
}

}  // namespace bench
