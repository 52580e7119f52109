// vmap (cases.hpp, run_vmap): vmap composed with the transforms, each case against functorch
// (bench/peers/torch_bench.py, run_vmap) and, where there is one, a baseline timed in the same run.
// Before timing, every vmapped result is compared with the baseline or with a loop over the
// examples (stderr on a mismatch), so a wrong batching rule cannot pass for a fast one.
//   vmap_mlp_grad      per-example gradients of run_mlp's MLP (784-512-512-10, tanh, softmax
//                      cross-entropy), batch 256, f32: vmap(value_and_grad(loss of one example)),
//                      against the same gradients written by hand with a batch axis (hand_batched;
//                      ratio_vs_hand).
//   vmap_cnn_grad      per-example gradients of a small CNN (1x28x28 -> conv 3x3 8 -> tanh -> conv
//                      3x3 16 stride 2 -> tanh -> dense 10, log-softmax cross-entropy), batch 64,
//                      f32, checked against a loop of single-example gradients; the baseline is
//                      one ordinary gradient of the mean loss over the batch (batch_grad;
//                      ratio_vs_batch_grad = what per-example gradients cost over a training step).
//   vmap_ode_jacobian  the 32 x 32 Jacobian of one RK4 step of u' = tanh(W u + b) - 0.1 u at 128
//                      states, f64: vmap(jacfwd(step)) over the states, checked against a loop of
//                      jacfwd on each state.
//   vmap_ensemble      an ensemble of 32 MLPs (64-128-128-10, tanh) on one shared batch of 128
//                      inputs, f32: each member's loss gradient by vmap(value_and_grad) over
//                      stacked parameters, against the same written with an ensemble axis
//                      (ensemble_axis; ratio_vs_hand).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "cases.hpp"
#include "case_util.hpp"
#include "tenferro/tenferro.hpp"

namespace bench {

namespace tf = tenferro;
using T = tf::Traced;

namespace {

const std::optional<std::int64_t> shared;  // in_axes of an argument every example shares

tf::Tensor random_f32(tf::Shape shape, double scale, std::mt19937& rng) { return random_tensor<float>(std::move(shape), scale, rng); }

/// f32 one-hot labels [count, classes]: example i has class i % classes.
tf::Tensor one_hot_labels(std::int64_t count, std::int64_t classes) {
  std::vector<float> labels(static_cast<std::size_t>(count * classes), 0.0f);
  for (std::int64_t i = 0; i < count; ++i) labels[static_cast<std::size_t>(i * classes + i % classes)] = 1.0f;
  return tf::Tensor::from(labels, {count, classes});
}

/// batch[i]: the slice at index i of axis 0, as a tensor of the remaining axes.
tf::Tensor example_of(const tf::Tensor& batch, std::int64_t i) {
  tf::Shape shape(batch.shape().begin() + 1, batch.shape().end());
  tf::Tensor slice({batch.dtype(), shape});
  std::memcpy(slice.raw_data(), static_cast<const std::byte*>(batch.raw_data()) + i * slice.nbytes(), slice.nbytes());
  return slice;
}

/// The examples stacked along a new axis 0 (all of one type).
tf::Tensor stack(const std::vector<tf::Tensor>& examples) {
  tf::Shape shape = examples.at(0).shape();
  shape.insert(shape.begin(), static_cast<std::int64_t>(examples.size()));
  tf::Tensor out({examples[0].dtype(), shape});
  for (std::size_t i = 0; i < examples.size(); ++i) {
    std::memcpy(static_cast<std::byte*>(out.raw_data()) + i * examples[i].nbytes(), examples[i].raw_data(), examples[i].nbytes());
  }
  return out;
}

void check(const char* case_name, const char* against, double diff, double tolerance) {
  if (!(diff < tolerance)) report_failed_check("%s: vmap and %s differ by %g", case_name, against, diff);
}

// ---- vmap_mlp_grad ----

/// One example's loss: x [784], y [10] (one-hot).
T mlp_example_loss(T w1, T b1, T w2, T b2, T w3, T b3, T x, T y) {
  const T h1 = tf::tanh(tf::matmul(x, w1) + b1);
  const T h2 = tf::tanh(tf::matmul(h1, w2) + b2);
  return -tf::sum(y * tf::log_softmax(tf::matmul(h2, w3) + b3));
}

/// The per-example gradients by hand: with delta3 = softmax(z) - y, a layer's weight gradient is
/// the outer product of its input and its delta, per example ("bi,bj->bij"), and
/// delta_{k-1} = (delta_k W_k^T) (1 - h^2).
std::vector<T> mlp_hand_batched(T w1, T b1, T w2, T b2, T w3, T b3, T x, T y) {
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

/// The program of the per-example gradients of `loss` (six shared parameters, then one example's
/// x and y): vmap(value_and_grad) over the leading axis of x and y.
template <class Loss>
tf::Program per_example_gradients(Loss loss, const std::vector<tf::Tensor>& args) {
  const auto gradients = tf::value_and_grad(loss, {0, 1, 2, 3, 4, 5});
  auto of_one_example = [gradients](T w1, T b1, T w2, T b2, T w3, T b3, T x, T y) {
    return gradients(w1, b1, w2, b2, w3, b3, x, y).second;
  };
  const tf::VmapOptions in{.in_axes = {shared, shared, shared, shared, shared, shared, 0, 0}};
  return tf::trace(
      [&](T w1, T b1, T w2, T b2, T w3, T b3, T x, T y) { return tf::vmap(of_one_example, in)(w1, b1, w2, b2, w3, b3, x, y); },
      args[0], args[1], args[2], args[3], args[4], args[5], args[6], args[7]);
}

void run_vmap_mlp_grad(const Options& options) {
  constexpr std::int64_t kBatch = 256, kIn = 784, kHidden = 512, kOut = 10;
  const char* size = "784-512-512-10x256";
  std::mt19937 rng(1);
  std::vector<tf::Tensor> args = {random_f32({kIn, kHidden}, 0.03, rng),     random_f32({kHidden}, 0.01, rng),
                                  random_f32({kHidden, kHidden}, 0.04, rng), random_f32({kHidden}, 0.01, rng),
                                  random_f32({kHidden, kOut}, 0.04, rng),    random_f32({kOut}, 0.01, rng),
                                  random_f32({kBatch, kIn}, 1.0, rng),       one_hot_labels(kBatch, kOut)};

  tf::Program vmapped = per_example_gradients(mlp_example_loss, args);
  tf::Program hand = tf::trace(mlp_hand_batched, args[0], args[1], args[2], args[3], args[4], args[5], args[6], args[7]);
  check("vmap_mlp_grad", "the hand-batched gradients", max_relative_difference(vmapped.run(args), hand.run(args)), 1e-4);

  const auto m = measure({{"vmap", [&] { vmapped.run(args); }}, {"hand", [&] { hand.run(args); }}}, options.budget_s);
  print_line("vmap_mlp_grad", "hand_batched", size, "f32", m[1].median_s, m[1].memory, m[1].repetitions);
  print_line("vmap_mlp_grad", "tenferro", size, "f32", m[0].median_s, m[0].memory, m[0].repetitions,
             field("ratio_vs_hand", m[0].median_s / m[1].median_s));
}

// ---- vmap_cnn_grad ----

/// The CNN on images [N, 1, 28, 28]: its logits [N, 10].
T cnn_logits(T w1, T b1, T w2, T b2, T w3, T b3, T images) {
  const std::int64_t n = images.shape()[0];
  const T h1 = tf::tanh(tf::conv(images, w1, {.padding = {1}}) + tf::reshape(b1, {8, 1, 1}));  // [N, 8, 28, 28]
  const T h2 = tf::tanh(tf::conv(h1, w2, {.stride = {2}, .padding = {1}}) + tf::reshape(b2, {16, 1, 1}));  // [N, 16, 14, 14]
  return tf::matmul(tf::reshape(h2, {n, 16 * 14 * 14}), w3) + b3;
}

/// One example's loss: x [1, 28, 28] (channels first), y [10] (one-hot); conv sees a batch of one.
T cnn_example_loss(T w1, T b1, T w2, T b2, T w3, T b3, T x, T y) {
  const T logits = cnn_logits(w1, b1, w2, b2, w3, b3, tf::reshape(x, {1, 1, 28, 28}));
  return -tf::sum(tf::reshape(y, {1, 10}) * tf::log_softmax(logits));
}

/// The usual training step's loss: the mean of the examples' losses over the batch.
T cnn_batch_loss(T w1, T b1, T w2, T b2, T w3, T b3, T x, T y) {
  return -tf::sum(y * tf::log_softmax(cnn_logits(w1, b1, w2, b2, w3, b3, x))) / double(x.shape()[0]);
}

/// The per-example gradients one at a time: single-example value_and_grad on Tensors, stacked.
std::vector<tf::Tensor> cnn_gradients_by_loop(const std::vector<tf::Tensor>& args) {
  const auto gradients = tf::value_and_grad(cnn_example_loss, {0, 1, 2, 3, 4, 5});
  std::vector<std::vector<tf::Tensor>> per_parameter(6);
  for (std::int64_t i = 0; i < args[6].shape()[0]; ++i) {
    const tf::Tensors g =
        gradients(args[0], args[1], args[2], args[3], args[4], args[5], example_of(args[6], i), example_of(args[7], i)).second;
    for (std::size_t k = 0; k < g.size(); ++k) per_parameter[k].push_back(g[k]);
  }
  std::vector<tf::Tensor> out;
  for (const auto& examples : per_parameter) out.push_back(stack(examples));
  return out;
}

void run_vmap_cnn_grad(const Options& options) {
  constexpr std::int64_t kBatch = 64, kFlat = 16 * 14 * 14, kOut = 10;
  const char* size = "1x28x28-c8-c16s2-d10x64";
  std::mt19937 rng(2);
  std::vector<tf::Tensor> args = {random_f32({8, 1, 3, 3}, 0.33, rng),  random_f32({8}, 0.01, rng),
                                  random_f32({16, 8, 3, 3}, 0.12, rng), random_f32({16}, 0.01, rng),
                                  random_f32({kFlat, kOut}, 0.018, rng), random_f32({kOut}, 0.01, rng),
                                  random_f32({kBatch, 1, 28, 28}, 1.0, rng), one_hot_labels(kBatch, kOut)};

  tf::Program vmapped = per_example_gradients(cnn_example_loss, args);
  check("vmap_cnn_grad", "a loop of single-example gradients",
        max_relative_difference(vmapped.run(args), cnn_gradients_by_loop(args)), 1e-4);

  // The baseline: one gradient of the mean loss, all six parameters (a training step's work).
  const auto batch_gradient = tf::value_and_grad(cnn_batch_loss, {0, 1, 2, 3, 4, 5});
  auto run_batch_gradient = [&] {
    return batch_gradient(args[0], args[1], args[2], args[3], args[4], args[5], args[6], args[7]);
  };
  const auto m = measure({{"vmap", [&] { vmapped.run(args); }}, {"batch_grad", run_batch_gradient}}, options.budget_s);
  print_line("vmap_cnn_grad", "batch_grad", size, "f32", m[1].median_s, m[1].memory, m[1].repetitions);
  print_line("vmap_cnn_grad", "tenferro", size, "f32", m[0].median_s, m[0].memory, m[0].repetitions,
             field("ratio_vs_batch_grad", m[0].median_s / m[1].median_s));
}

// ---- vmap_ode_jacobian ----

/// f(u) = tanh(W u + b) - 0.1 u.
T ode_rhs(const T& w, const T& b, const T& u) { return tf::tanh(tf::matmul(w, u) + b) - 0.1 * u; }

/// One classical RK4 step of u' = f(u), h = 0.05.
T rk4_step(T w, T b, T u) {
  constexpr double h = 0.05;
  const T k1 = ode_rhs(w, b, u);
  const T k2 = ode_rhs(w, b, u + (h / 2) * k1);
  const T k3 = ode_rhs(w, b, u + (h / 2) * k2);
  const T k4 = ode_rhs(w, b, u + h * k3);
  return u + (h / 6) * (k1 + 2.0 * k2 + 2.0 * k3 + k4);
}

void run_vmap_ode_jacobian(const Options& options) {
  constexpr std::int64_t kStates = 128, kDim = 32;
  const char* size = "rk4_32x128";
  std::mt19937 rng(3);
  const std::vector<tf::Tensor> args = {random_tensor<double>({kDim, kDim}, 0.3, rng), random_tensor<double>({kDim}, 0.1, rng),
                                        random_tensor<double>({kStates, kDim}, 1.0, rng)};

  // jacfwd on Traced arguments records the Jacobian program into the trace; vmapped over the
  // states: J[s, i, j] = d step(u_s)_i / d u_s[j].
  const auto jacobian_of_step = tf::jacfwd(rk4_step, 2);
  tf::Program vmapped = tf::trace(
      [&](T w, T b, T us) { return tf::vmap(jacobian_of_step, {.in_axes = {shared, shared, 0}})(w, b, us); }, args[0],
      args[1], args[2]);

  std::vector<tf::Tensor> by_loop;
  for (std::int64_t s = 0; s < kStates; ++s) by_loop.push_back(jacobian_of_step(args[0], args[1], example_of(args[2], s)));
  check("vmap_ode_jacobian", "a loop of jacfwd", max_relative_difference(vmapped.run(args), {stack(by_loop)}), 1e-10);

  const auto m = measure({{"vmap", [&] { vmapped.run(args); }}}, options.budget_s);
  print_line("vmap_ode_jacobian", "tenferro", size, "f64", m[0].median_s, m[0].memory, m[0].repetitions);
}

// ---- vmap_ensemble ----

/// One member's mean cross-entropy on the shared batch: x [128, 64], y [128, 10] (one-hot).
T member_loss(T w1, T b1, T w2, T b2, T w3, T b3, T x, T y) {
  const T h1 = tf::tanh(tf::matmul(x, w1) + b1);
  const T h2 = tf::tanh(tf::matmul(h1, w2) + b2);
  return -tf::sum(y * tf::log_softmax(tf::matmul(h2, w3) + b3)) / double(x.shape()[0]);
}

/// The sum of the members' losses, written with a leading ensemble axis E on every parameter
/// (w [E, in, out], b [E, out]); its gradient is each member's gradient, members being independent.
T ensemble_axis_loss(T w1, T b1, T w2, T b2, T w3, T b3, T x, T y) {
  const std::int64_t e = w1.shape()[0];
  auto bias = [e](const T& b) { return tf::reshape(b, {e, 1, b.shape()[1]}); };  // over the batch
  const T h1 = tf::tanh(tf::einsum("bi,eij->ebj", x, w1) + bias(b1));  // the shared x: no copy per member
  const T h2 = tf::tanh(tf::matmul(h1, w2) + bias(b2));
  return -tf::sum(y * tf::log_softmax(tf::matmul(h2, w3) + bias(b3))) / double(x.shape()[0]);
}

void run_vmap_ensemble(const Options& options) {
  constexpr std::int64_t kMembers = 32, kBatch = 128, kIn = 64, kHidden = 128, kOut = 10;
  const char* size = "32x64-128-128-10x128";
  std::mt19937 rng(4);
  std::vector<tf::Tensor> args = {random_f32({kMembers, kIn, kHidden}, 0.125, rng),     random_f32({kMembers, kHidden}, 0.01, rng),
                                  random_f32({kMembers, kHidden, kHidden}, 0.09, rng), random_f32({kMembers, kHidden}, 0.01, rng),
                                  random_f32({kMembers, kHidden, kOut}, 0.09, rng),    random_f32({kMembers, kOut}, 0.01, rng),
                                  random_f32({kBatch, kIn}, 1.0, rng),                 one_hot_labels(kBatch, kOut)};

  const auto gradients = tf::value_and_grad(member_loss, {0, 1, 2, 3, 4, 5});
  auto member_gradients = [gradients](T w1, T b1, T w2, T b2, T w3, T b3, T x, T y) {
    return gradients(w1, b1, w2, b2, w3, b3, x, y).second;
  };
  const tf::VmapOptions in{.in_axes = {0, 0, 0, 0, 0, 0, shared, shared}};
  tf::Program vmapped = tf::trace(
      [&](T w1, T b1, T w2, T b2, T w3, T b3, T x, T y) {
        return tf::vmap(member_gradients, in)(w1, b1, w2, b2, w3, b3, x, y);
      },
      args[0], args[1], args[2], args[3], args[4], args[5], args[6], args[7]);
  const auto ensemble_gradient = tf::value_and_grad(ensemble_axis_loss, {0, 1, 2, 3, 4, 5});
  auto run_ensemble_gradient = [&] {
    return ensemble_gradient(args[0], args[1], args[2], args[3], args[4], args[5], args[6], args[7]);
  };
  check("vmap_ensemble", "the ensemble-axis gradients", max_relative_difference(vmapped.run(args), run_ensemble_gradient().second),
        1e-4);

  const auto m = measure({{"vmap", [&] { vmapped.run(args); }}, {"hand", run_ensemble_gradient}}, options.budget_s);
  print_line("vmap_ensemble", "ensemble_axis", size, "f32", m[1].median_s, m[1].memory, m[1].repetitions);
  print_line("vmap_ensemble", "tenferro", size, "f32", m[0].median_s, m[0].memory, m[0].repetitions,
             field("ratio_vs_hand", m[0].median_s / m[1].median_s));
}

}  // namespace

void run_vmap(const Options& options) {
  run_vmap_mlp_grad(options);
  run_vmap_cnn_grad(options);
  run_vmap_ode_jacobian(options);
  run_vmap_ensemble(options);
}

}  // namespace bench
