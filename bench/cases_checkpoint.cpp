// Checkpointing (cases.hpp, run_checkpoint): each case's gradient plain and with checkpoints
// (tf::checkpoint, ScanOptions::checkpoint_every), one line each. Both lines carry
// peak_tensor_mb, the peak of tensor storage (tf::MemoryMeter, MiB) during one warm call, and
// outputs_mb, the bytes of the results (the gradients), which both peaks include; the
// checkpointed line also carries peak_ratio (its peak over the plain one's), time_ratio (its
// median time over the plain one's) and rel_diff, the largest difference of its results from the
// plain ones, relative to each tensor's largest element. Before timing, the checkpointed results
// are compared with the plain ones (stderr on a mismatch): bit for bit for the MLP and the
// recurrence (1e-12 relative for w, see below), to 1e-10 relative for the TRG, whose second derivative adds its terms up in
// another order through the regions.
//   checkpoint_mlp64        the gradient of sum(h_64^2), h_l = tanh(h_{l-1} W_l), for all 64
//                           weights (width 256, batch 1024, f32): plain (size l64_w256_b1024), in
//                           8 checkpoints of 8 layers (l64_w256_b1024_seg8), and by the automatic
//                           schedule (tf::rematerialize) asked for a quarter of the plain
//                           gradient's measured peak (l64_w256_b1024_auto). torch_bench.py's
//                           run_checkpoint times the same net plain and with
//                           torch.utils.checkpoint.checkpoint_sequential in 8 segments
//                           (ratio_vs_torch).
//   checkpoint_dots         a policy: 16 layers h_l = sin(m) tanh(m) + exp(m / 10), m = h_{l-1} W_l
//                           (width 256, batch 1024, f32), the gradient of sum(h_16^2) for all
//                           weights, plain (l16_w256_b1024) and with the whole net one checkpoint
//                           under CheckpointPolicy::SaveDots (l16_w256_b1024_dots): the products
//                           m are kept, the activations recomputed; compared to 1e-5 relative.
//   checkpoint_recurrence   h <- tanh(w * h + x_t) over 10^5 steps (h, w [4], xs [10^5, 4], f64),
//                           y_t = sum(h): the value and gradient of sum(h_final) + sum(y^2) for w
//                           and xs, one plain scan (1e5), checkpoint_every = 400, a divisor of
//                           n near sqrt(n) (1e5_every400), and binomial checkpointing with
//                           checkpoint_snapshots = 17 (log2 n; 1e5_snapshots17) and 50
//                           (1e5_snapshots50). Under checkpoint_every w's gradient (w is closed
//                           over by the body) differs in the last bits: the blocks add its
//                           per-step cotangents up in another order. (316 ~ sqrt(n) leaves 144
//                           steps after the last full block, which cost a slice of xs and of its
//                           cotangent: more than twice the peak of 400, measured.)
//   checkpoint_lstm         an LSTM layer (hidden = input = 64, batch 16, f32) over 10^4 steps as
//                           one scan, the gradient of sum_t h_t . v in the weights and the bias:
//                           plain (h64_b16_t1e4), checkpoint_every = 100 and binomial
//                           checkpointing with 40 snapshots (~3 log2 n); compared to 1e-4 relative.
//   checkpoint_trg          the TRG's lnZ/N with u and c by reverse mode (value_and_grad and
//                           hessian in K, which keep the residuals checkpoints trade; run_trg
//                           takes forward mode), K = 0.44, niter = 20, at chi 24, each RG step plain (chi24), one
//                           checkpoint (chi24_ckpt) and one checkpoint that keeps the SVDs'
//                           factors (chi24_ckpt_svd; examples/ising_trg_model.hpp's
//                           StepCheckpoint); rel_diff there is the largest relative difference
//                           of lnZ/N, u and c. Below --budget 0.5 (smoke runs) chi is 16.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "cases.hpp"
#include "ising_trg_model.hpp"
#include "tenferro/buffer_pool.hpp"
#include "case_util.hpp"
#include "tenferro/tenferro.hpp"

namespace bench {

namespace tf = tenferro;
using T = tf::Traced;

namespace {

/// Whether a and b hold the same tensors bit for bit.
bool bitwise_equal(const std::vector<tf::Tensor>& a, const std::vector<tf::Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t k = 0; k < a.size(); ++k) {
    if (a[k].type() != b[k].type() || std::memcmp(a[k].raw_data(), b[k].raw_data(), a[k].nbytes()) != 0) return false;
  }
  return true;
}

/// Bit-for-bit equality of the checkpointed results with the plain ones (stderr otherwise); the
/// field rel_diff, their largest relative difference.
std::string check_bitwise(const char* case_name, const std::vector<tf::Tensor>& checkpointed, const std::vector<tf::Tensor>& plain) {
  const double diff = max_relative_difference(checkpointed, plain);
  if (!bitwise_equal(checkpointed, plain)) {
    report_failed_check("%s: checkpointed and plain gradients are not bit for bit equal (largest relative difference %g)",
                 case_name, diff);
  }
  return field("rel_diff", diff);
}

/// Equality up to rounding (relative `tol`; stderr otherwise), for results whose cotangents the
/// checkpointed program sums in another order; the field rel_diff.
std::string check_close_results(const char* case_name, const std::vector<tf::Tensor>& checkpointed,
                                const std::vector<tf::Tensor>& plain, double tol) {
  const double diff = max_relative_difference(checkpointed, plain);
  if (!(diff <= tol)) {
    report_failed_check("%s: checkpointed and plain results differ by %g relative (more than %g)", case_name, diff, tol);
  }
  return field("rel_diff", diff);
}

/// MiB.
double mib(std::size_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

/// One call's results.
using Run = std::function<std::vector<tf::Tensor>()>;

/// The protocol of every case: both variants once (compiling; `check` compares their results and
/// returns fields for the checkpointed line), the peak tensor bytes of one warm call of each
/// (MemoryMeter), then measure() on both. Prints the plain line and the checkpointed one with
/// peak_ratio and time_ratio (and `check`'s fields); both carry outputs_mb, the bytes of the
/// results, which each peak includes.
void compare(const char* case_name, const std::string& plain_size, const std::string& checkpointed_size, const char* dtype,
             const Run& plain, const Run& checkpointed, const Options& options,
             const std::function<std::string(const std::vector<tf::Tensor>&, const std::vector<tf::Tensor>&)>& check,
             bool print_plain = true) {
  const std::vector<tf::Tensor> reference = plain();
  const std::string extra = check(checkpointed(), reference);
  std::size_t output_bytes = 0;
  for (const tf::Tensor& t : reference) output_bytes += t.nbytes();
  const std::string outputs = field("outputs_mb", mib(output_bytes));
  std::size_t peak[2];
  {
    tf::MemoryMeter meter;
    plain();
    peak[0] = meter.peak_bytes();
    meter.reset();
    checkpointed();
    peak[1] = meter.peak_bytes();
  }
  const auto m = measure({{"plain", [&] { plain(); }}, {"checkpointed", [&] { checkpointed(); }}}, options.budget_s);
  if (print_plain) {
    print_line(case_name, "tenferro", plain_size, dtype, m[0].median_s, m[0].memory, m[0].repetitions,
               field("peak_tensor_mb", mib(peak[0])) + outputs);
  }
  const double peak_ratio = static_cast<double>(peak[1]) / static_cast<double>(peak[0]);
  print_line(case_name, "tenferro", checkpointed_size, dtype, m[1].median_s, m[1].memory, m[1].repetitions,
             field("peak_tensor_mb", mib(peak[1])) + outputs + field("peak_ratio", peak_ratio) +
                 field("time_ratio", m[1].median_s / m[0].median_s) + extra);
}

// ---- checkpoint_mlp64 ----

constexpr std::int64_t kLayers = 64, kWidth = 256, kBatch = 1024, kPerSegment = 8;

/// tanh(h W) for each weight in turn.
T tanh_layers(T h, std::vector<T>::const_iterator first, std::vector<T>::const_iterator last) {
  for (; first != last; ++first) h = tf::tanh(tf::matmul(h, *first));
  return h;
}

/// sum(h^2) of the 64-layer net; `checkpointed`: each 8 consecutive layers one checkpoint (whose
/// operands are its input and its 8 weights).
T mlp_loss(const T& x, const std::vector<T>& ws, bool checkpointed) {
  T h = x;
  if (!checkpointed) {
    h = tanh_layers(h, ws.begin(), ws.end());
  } else {
    const tf::Branch segment = [](const tf::TracedList& operands) {
      return tf::TracedList{tanh_layers(operands[0], operands.begin() + 1, operands.end())};
    };
    for (std::int64_t first = 0; first < kLayers; first += kPerSegment) {
      tf::TracedList operands{h};
      operands.insert(operands.end(), ws.begin() + first, ws.begin() + first + kPerSegment);
      h = tf::checkpoint(segment, operands).at(0);
    }
  }
  return tf::sum(h * h);
}

/// The same loss with the automatic schedule: the 64 layers as one function that rematerialize
/// cuts into checkpoints to keep the gradient's planned peak within `limit` bytes.
T mlp_loss_within(const T& x, const std::vector<T>& ws, std::size_t limit) {
  const tf::Branch net = [](const tf::TracedList& operands) {
    return tf::TracedList{tanh_layers(operands[0], operands.begin() + 1, operands.end())};
  };
  tf::TracedList operands{x};
  operands.insert(operands.end(), ws.begin(), ws.end());
  const T h = tf::rematerialize(net, operands, {.memory_limit = limit}).at(0);
  return tf::sum(h * h);
}

void run_checkpoint_mlp64(const Options& options) {
  std::mt19937 rng(5);
  const tf::Tensor x = random_tensor<float>({kBatch, kWidth}, 1.0, rng);
  std::vector<tf::Tensor> ws;
  for (std::int64_t l = 0; l < kLayers; ++l) ws.push_back(random_tensor<float>({kWidth, kWidth}, 1.0 / 16, rng));
  const auto plain = tf::grad([](const T& a, const std::vector<T>& w) { return mlp_loss(a, w, false); }, tf::argnum<1>);
  const auto checkpointed = tf::grad([](const T& a, const std::vector<T>& w) { return mlp_loss(a, w, true); }, tf::argnum<1>);
  compare(
      "checkpoint_mlp64", "l64_w256_b1024", "l64_w256_b1024_seg8", "f32", [&] { return plain(x, ws); },
      [&] { return checkpointed(x, ws); }, options,
      [](const std::vector<tf::Tensor>& c, const std::vector<tf::Tensor>& p) { return check_bitwise("checkpoint_mlp64", c, p); });
  // The automatic schedule, asked for a quarter of the plain gradient's measured tensor peak.
  std::size_t plain_peak = 0;
  {
    tf::MemoryMeter meter;
    plain(x, ws);
    plain_peak = meter.peak_bytes();
  }
  const std::size_t limit = plain_peak / 4;
  const auto automatic =
      tf::grad([limit](const T& a, const std::vector<T>& w) { return mlp_loss_within(a, w, limit); }, tf::argnum<1>);
  compare(
      "checkpoint_mlp64", "l64_w256_b1024", "l64_w256_b1024_auto", "f32", [&] { return plain(x, ws); },
      [&] { return automatic(x, ws); }, options,
      [limit](const std::vector<tf::Tensor>& c, const std::vector<tf::Tensor>& p) {
        return check_bitwise("checkpoint_mlp64", c, p) + field("memory_limit_mb", mib(limit));
      },
      /*print_plain=*/false);
}

// ---- checkpoint_dots ----

constexpr std::int64_t kPolicyLayers = 16;

/// sum(h^2) of the 16-layer net with a three-function activation, under `policy` (none: plain).
T policy_loss(const T& x, const std::vector<T>& ws, std::optional<tf::CheckpointPolicy> policy) {
  auto net = [&ws](const T& h0) {
    T h = h0;
    for (const T& w : ws) {
      const T m = tf::matmul(h, w);
      h = tf::sin(m) * tf::tanh(m) + tf::exp(m * 0.1);
    }
    return h;
  };
  const T h = policy ? tf::checkpoint(net, *policy)(x) : net(x);
  return tf::sum(h * h);
}

void run_checkpoint_dots(const Options& options) {
  std::mt19937 rng(6);
  const tf::Tensor x = random_tensor<float>({kBatch, kWidth}, 1.0, rng);
  std::vector<tf::Tensor> ws;
  for (std::int64_t l = 0; l < kPolicyLayers; ++l) ws.push_back(random_tensor<float>({kWidth, kWidth}, 1.0 / 16, rng));
  const auto plain = tf::grad([](const T& a, const std::vector<T>& w) { return policy_loss(a, w, std::nullopt); }, tf::argnum<1>);
  const auto dots =
      tf::grad([](const T& a, const std::vector<T>& w) { return policy_loss(a, w, tf::CheckpointPolicy::SaveDots); }, tf::argnum<1>);
  compare(
      "checkpoint_dots", "l16_w256_b1024", "l16_w256_b1024_dots", "f32", [&] { return plain(x, ws); }, [&] { return dots(x, ws); },
      options,
      [](const std::vector<tf::Tensor>& c, const std::vector<tf::Tensor>& p) { return check_close_results("checkpoint_dots", c, p, 1e-5); });
}

// ---- checkpoint_recurrence ----

constexpr std::int64_t kSteps = 100000, kState = 4, kEvery = 400;

/// sum(h_final) + sum(y^2) of h <- tanh(w h + x_t), y_t = sum(h), h_0 = 0.
T recurrence_loss(const T& w, const T& xs, tf::ScanOptions options) {
  auto step = [&w](const tf::TracedList& carry, const tf::TracedList& x) {
    const T h = tf::tanh(w * carry[0] + x[0]);
    return std::pair{tf::TracedList{h}, tf::TracedList{tf::sum(h)}};
  };
  const auto result = tf::scan(step, {tf::full_like(w, 0.0)}, {xs}, options);
  return tf::sum(result.first[0]) + tf::sum(result.second[0] * result.second[0]);
}

void run_checkpoint_recurrence(const Options& options) {
  std::mt19937 rng(6);
  const tf::Tensor w = tf::Tensor::from(std::vector<double>{0.5, 0.8, 1.1, -0.7}, {kState});
  const tf::Tensor xs = random_tensor<double>({kSteps, kState}, 0.5, rng);
  const auto plain = tf::value_and_grad([](T a, T b) { return recurrence_loss(a, b, {}); }, {0, 1});
  auto results = [](const std::pair<tf::Tensor, tf::Tensors>& r) {
    std::vector<tf::Tensor> out{r.first};
    out.insert(out.end(), r.second.begin(), r.second.end());
    return out;
  };
  const std::pair<std::string, tf::ScanOptions> variants[] = {
      {"1e5_every" + std::to_string(kEvery), {.checkpoint_every = kEvery}},
      {"1e5_snapshots17", {.checkpoint_snapshots = 17}},
      {"1e5_snapshots50", {.checkpoint_snapshots = 50}}};
  bool first = true;
  for (const auto& [size, scan_options] : variants) {
    const auto checkpointed = tf::value_and_grad([o = scan_options](T a, T b) { return recurrence_loss(a, b, o); }, {0, 1});
    compare(
        "checkpoint_recurrence", "1e5", size, "f64", [&] { return results(plain(w, xs)); },
        [&] { return results(checkpointed(w, xs)); }, options,
        // w is closed over by the body: checkpoint_every sums its per-step cotangents block by block.
        [](const std::vector<tf::Tensor>& c, const std::vector<tf::Tensor>& p) {
          return check_close_results("checkpoint_recurrence", c, p, 1e-12);
        },
        first);
    first = false;
  }
}

// ---- checkpoint_lstm ----

constexpr std::int64_t kLstmSteps = 10000, kLstmBatch = 16, kLstmHidden = 64;

/// sum over the steps of h_t . v for an LSTM layer (input = hidden = 64) over xs [10^4, 16, 64].
T lstm_loss(const T& xs, const T& w, const T& u, const T& b, const T& v, tf::ScanOptions options) {
  auto cell = [&](const tf::TracedList& carry, const tf::TracedList& x) {
    const T gates = tf::matmul(x[0], w) + tf::matmul(carry[0], u) + b;
    auto part = [&](std::int64_t k) { return tf::slice(gates, {0, k * kLstmHidden}, {kLstmBatch, (k + 1) * kLstmHidden}); };
    const T i = tf::sigmoid(part(0)), f = tf::sigmoid(part(1)), g = tf::tanh(part(2)), o = tf::sigmoid(part(3));
    const T c = f * carry[1] + i * g;
    const T h = o * tf::tanh(c);
    return std::pair{tf::TracedList{h, c}, tf::TracedList{tf::sum(tf::matmul(h, v))}};
  };
  const T h0 = tf::broadcast_to(tf::constant(xs, tf::Tensor::scalar(0.0, tf::DType::F32)), {kLstmBatch, kLstmHidden});
  return tf::sum(tf::scan(cell, {h0, h0}, {xs}, options).second[0]);
}

void run_checkpoint_lstm(const Options& options) {
  std::mt19937 rng(8);
  const tf::Tensor xs = random_tensor<float>({kLstmSteps, kLstmBatch, kLstmHidden}, 1.0, rng),
                   w = random_tensor<float>({kLstmHidden, 4 * kLstmHidden}, 0.1, rng),
                   u = random_tensor<float>({kLstmHidden, 4 * kLstmHidden}, 0.1, rng),
                   b = random_tensor<float>({4 * kLstmHidden}, 0.1, rng), v = random_tensor<float>({kLstmHidden, 1}, 0.1, rng);
  auto gradient = [](tf::ScanOptions scan_options) {
    return tf::value_and_grad(
        [scan_options](T a, T bw, T bu, T bb, T bv) { return lstm_loss(a, bw, bu, bb, bv, scan_options); }, {1, 2, 3});
  };
  const auto plain = gradient({});
  auto results = [](const std::pair<tf::Tensor, tf::Tensors>& r) {
    std::vector<tf::Tensor> out{r.first};
    out.insert(out.end(), r.second.begin(), r.second.end());
    return out;
  };
  const std::pair<std::string, tf::ScanOptions> variants[] = {{"h64_b16_t1e4_every100", {.checkpoint_every = 100}},
                                                              {"h64_b16_t1e4_snapshots40", {.checkpoint_snapshots = 40}}};
  bool first = true;
  for (const auto& [size, scan_options] : variants) {
    const auto checkpointed = gradient(scan_options);
    compare(
        "checkpoint_lstm", "h64_b16_t1e4", size, "f32", [&] { return results(plain(xs, w, u, b, v)); },
        [&] { return results(checkpointed(xs, w, u, b, v)); }, options,
        // The weights are closed over by the body: checkpoint_every sums their per-step cotangents
        // block by block (f32 rounding); binomial checkpointing is bit for bit.
        [](const std::vector<tf::Tensor>& c, const std::vector<tf::Tensor>& p) {
          return check_close_results("checkpoint_lstm", c, p, 1e-4);
        },
        first);
    first = false;
  }
}

// ---- checkpoint_trg ----

void run_checkpoint_trg(const Options& options) {
  constexpr double coupling = 0.44;
  constexpr int niter = 20;
  // chi 24 is the case (as run_trg's larger size); a smoke run (--budget below 0.5) takes chi 16.
  const std::int64_t chi = options.budget_s < 0.5 ? 16 : 24;
  const tf::Tensor k = tf::Tensor::scalar(coupling);
  auto variant = [&](ising::StepCheckpoint checkpoint) -> Run {
    auto f = [chi, checkpoint](T K) { return ising::lnz_per_site(K, chi, niter, checkpoint); };
    auto value_and_slope = tf::value_and_grad(f);
    auto curvature = tf::hessian(f);
    return [value_and_slope, curvature, &k] {
      auto [value, slope] = value_and_slope(k);
      return std::vector<tf::Tensor>{value, slope, curvature(k)};
    };
  };
  const std::string size = "chi" + std::to_string(chi);
  auto check = [](const std::vector<tf::Tensor>& c, const std::vector<tf::Tensor>& p) {
    // lnZ/N, u = -d lnZ/N / dK and c = K^2 d^2 lnZ/N / dK^2: each relative to itself.
    double worst = 0;
    for (std::size_t i = 0; i < 3; ++i) {
      const double a = c.at(i).element(0).real(), b = p.at(i).element(0).real();
      worst = std::max(worst, std::abs(a - b) / std::max(std::abs(b), 1e-300));
    }
    if (!(worst <= 1e-10)) {
      report_failed_check("checkpoint_trg: checkpointed and plain lnZ/N, u, c differ by %g relative", worst);
    }
    const double u = -p.at(1).element(0).real(), heat = coupling * coupling * p.at(2).element(0).real();
    char buffer[128];
    std::snprintf(buffer, sizeof buffer, " niter=%d K=%g u=%.12g c=%.12g", niter, coupling, u, heat);
    return buffer + field("rel_diff", worst);
  };
  const Run plain = variant(ising::StepCheckpoint::None);
  compare("checkpoint_trg", size, size + "_ckpt", "f64", plain, variant(ising::StepCheckpoint::Recompute), options, check);
  compare("checkpoint_trg", size, size + "_ckpt_svd", "f64", plain, variant(ising::StepCheckpoint::KeepSvd), options, check, false);
}

}  // namespace

void run_checkpoint(const Options& options) {
  if (selected(options, "checkpoint_mlp64")) run_checkpoint_mlp64(options);
  if (selected(options, "checkpoint_dots")) run_checkpoint_dots(options);
  if (selected(options, "checkpoint_recurrence")) run_checkpoint_recurrence(options);
  if (selected(options, "checkpoint_lstm")) run_checkpoint_lstm(options);
  if (selected(options, "checkpoint_trg")) run_checkpoint_trg(options);
}

}  // namespace bench
