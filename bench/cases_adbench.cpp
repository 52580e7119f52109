// Two objectives of ADBench (Srajer, Kukelova and Fitzgibbon, "A benchmark of selected algorithmic
// differentiation tools on some problems in computer vision and machine learning", 2018), written
// from the paper's formulas: the Gaussian mixture (family gmm) and the character LSTM (family
// lstm_adbench). Their inputs are closed-form (closed_form below, the same formula in
// torch_bench.py), so both sides compute the same numbers and print them (value=).
//
// gmm_fwd, gmm_grad (size d<D>, f64): n = 1000 points x_i in R^D, K = 25 components (ADBench's
// smaller instances: n = 1000, K among 5 .. 200), D = 2, 10, 20, 64. Component k has a weight
// alpha_k, a mean mu_k and the lower-triangular factor Q_k of its inverse covariance, with
// diagonal exp(q_k) (q_k: D log-diagonal entries) and strictly-lower part l_k (D (D - 1) / 2
// entries, packed column by column as ADBench does: (1,0), (2,0), ..., (D-1,0), (2,1), ...). The
// objective, as ADBench defines it:
//   f = -n D/2 log(2 pi) + sum_i logsumexp_k(alpha_k + sum(q_k) - |Q_k (x_i - mu_k)|^2 / 2)
//       - n logsumexp(alpha) + sum_k (gamma^2/2 (|exp(q_k)|^2 + |l_k|^2) - m sum(q_k)) - K C,
//   C = n' D (log gamma - log(2) / 2) - log Gamma_D(n' / 2),  n' = D + m + 1,
// with Gamma_D the multivariate gamma function; gamma = 1, m = 1. gmm_fwd is f (a traced Program),
// gmm_grad f with its gradient in (alpha, mu, q, l) by value_and_grad, timed interleaved with
// gmm_fwd (ratio_vs_fwd). Before timing, f is checked against a plain-loop implementation in
// double (gmm_reference) and the gradient against central differences on a few coordinates.
//
// lstm_adbench_fwd, lstm_adbench_grad (size l2_c1024_b14, f64): ADBench's LSTM with l = 2 layers,
// c = 1024 characters and an alphabet of b = 14 (its smaller instance). Layer j's cell has
// per-element (diagonal) weights w and biases u, four of each (4 b entries):
//   forget = sigmoid(x w_0 + u_0), in = sigmoid(h w_1 + u_1), out = sigmoid(x w_2 + u_2),
//   change = tanh(h w_3 + u_3);  cell <- cell forget + in change;  h <- out tanh(cell),
// where x is the layer's input and h, cell its state from the previous step. A step feeds
// x_t e_in to layer 0, each layer's new h to the next, and predicts y = h_top e_out + e_bias
// (e: the extra parameters, [3, b]). The loss is -(sum over t = 0 .. c-2 of x_{t+1} .
// log_softmax(y_t)) / ((c - 1) b), with x_t the one-hot characters; its gradient is taken in the
// main parameters [l, 2, 4 b] and the extra ones. One tf::scan over the steps (carry: every
// layer's h and cell); the forward Program and value_and_grad are timed in one measure() call
// (interleaved), ratio_vs_fwd = gradient time / forward time; the gradient is first checked
// against central differences. torch_bench.py runs the same step in a Python loop.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <string>
#include <vector>

#include "cases.hpp"
#include "tenferro/tenferro.hpp"

namespace bench {

namespace tf = tenferro;

namespace {
using T = tf::Traced;
using tf::TracedList;

/// Input element t of a tensor: scale sin(phase + 1.37 t); torch_bench.py's closed_form is the
/// same expression in Python's math.sin (both glibc's sin), so both sides hold the same numbers.
std::vector<double> closed_form(std::int64_t count, double phase, double scale) {
  std::vector<double> v(static_cast<std::size_t>(count));
  for (std::int64_t t = 0; t < count; ++t) v[static_cast<std::size_t>(t)] = scale * std::sin(phase + 1.37 * static_cast<double>(t));
  return v;
}

double relative_gap(double a, double b) { return std::abs(a - b) / std::max(1.0, std::abs(b)); }

/// Compares grads[p] with central differences of `forward` (step h) at elements `at(count)` of
/// each of the first `params` arguments, printing each disagreement beyond `tolerance(ad)` to
/// stderr under `label`.
template <class At, class Tolerance>
void check_central_differences(const std::string& label, tf::Program& forward, const std::vector<tf::Tensor>& args,
                               const std::vector<tf::Tensor>& grads, std::size_t params, double h, At at,
                               Tolerance tolerance) {
  for (std::size_t p = 0; p < params; ++p) {
    for (const std::int64_t i : at(args[p].numel())) {
      std::vector<tf::Tensor> plus = args, minus = args;
      plus[p] = args[p].clone();
      minus[p] = args[p].clone();
      plus[p].data<double>()[i] += h;
      minus[p].data<double>()[i] -= h;
      const double fd = (forward.run(plus).at(0).item<double>() - forward.run(minus).at(0).item<double>()) / (2 * h);
      const double ad = grads[p].data<double>()[i];
      if (!(std::abs(fd - ad) <= tolerance(ad))) {
        report_failed_check("%s: parameter %zu element %lld: gradient %.12g, central differences %.12g",
                     label.c_str(), p, static_cast<long long>(i), ad, fd);
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// GMM

constexpr std::int64_t kGmmPoints = 1000, kGmmComponents = 25;
constexpr double kWishartGamma = 1.0, kWishartM = 1.0;

/// The parts of f that do not depend on the parameters: -n D/2 log(2 pi) - K C.
double gmm_constant(std::int64_t n, std::int64_t k, std::int64_t d) {
  const double dd = static_cast<double>(d), np = dd + kWishartM + 1;
  double log_multigamma = 0.25 * dd * (dd - 1) * std::log(std::numbers::pi);
  for (std::int64_t j = 1; j <= d; ++j) log_multigamma += std::lgamma(0.5 * np + 0.5 * (1.0 - static_cast<double>(j)));
  const double c = np * dd * (std::log(kWishartGamma) - 0.5 * std::log(2.0)) - log_multigamma;
  return -0.5 * static_cast<double>(n) * dd * std::log(2 * std::numbers::pi) - static_cast<double>(k) * c;
}

/// Row-major positions in a D x D matrix of Q's entries in the order [exp(q) (the diagonal), l
/// (strictly lower, column by column)].
std::vector<std::int64_t> gmm_positions(std::int64_t d) {
  std::vector<std::int64_t> pos;
  for (std::int64_t i = 0; i < d; ++i) pos.push_back(i * d + i);
  for (std::int64_t j = 0; j < d; ++j) {
    for (std::int64_t i = j + 1; i < d; ++i) pos.push_back(i * d + j);
  }
  return pos;
}

/// f(alpha [K], mu [K, D], q [K, D], l [K, D(D-1)/2]; x [n, D]) in tenferro: Q placed by index,
/// Q (x - mu) as two contractions (Q x for all points at once, less Q mu).
T gmm_objective(T alpha, T mu, T q, T l, T x) {
  const std::int64_t k = q.shape()[0], d = q.shape()[1], n = x.shape()[0];
  const std::vector<std::int64_t> pos = gmm_positions(d);
  const T entries = tf::concatenate({tf::exp(q), l}, 1);
  const T idx = tf::constant(q, tf::Tensor::from(pos, {static_cast<std::int64_t>(pos.size())}));
  const T Q = tf::reshape(tf::index_add(tf::constant(q, tf::Tensor::zeros({k, d * d})), idx, entries, 1), {k, d, d});
  const T y = tf::einsum("kij,nj->nki", {Q, x}) - tf::einsum("kij,kj->ki", {Q, mu});
  const T inner = alpha + tf::sum(q, {1}) - 0.5 * tf::sum(y * y, {2});
  const T prior = 0.5 * kWishartGamma * kWishartGamma * (tf::sum(tf::exp(2.0 * q)) + tf::sum(l * l)) - kWishartM * tf::sum(q);
  return tf::sum(tf::logsumexp(inner, {1})) - static_cast<double>(n) * tf::logsumexp(alpha, {0}) + prior +
         gmm_constant(n, k, d);
}

/// The same f in plain loops over doubles: the independent reference.
double gmm_reference(const std::vector<double>& alpha, const std::vector<double>& mu, const std::vector<double>& q,
                     const std::vector<double>& l, const std::vector<double>& x, std::int64_t n, std::int64_t k,
                     std::int64_t d) {
  auto at = [](const std::vector<double>& v, std::int64_t i) { return v[static_cast<std::size_t>(i)]; };
  const std::int64_t packed = d * (d - 1) / 2;
  auto lse = [](const std::vector<double>& v) {
    const double top = *std::max_element(v.begin(), v.end());
    double s = 0;
    for (double e : v) s += std::exp(e - top);
    return top + std::log(s);
  };
  std::vector<double> sum_q(static_cast<std::size_t>(k), 0.0), diff(static_cast<std::size_t>(d)),
      inner(static_cast<std::size_t>(k));
  for (std::int64_t c = 0; c < k; ++c) {
    for (std::int64_t i = 0; i < d; ++i) sum_q[static_cast<std::size_t>(c)] += at(q, c * d + i);
  }
  double total = 0;
  for (std::int64_t p = 0; p < n; ++p) {
    for (std::int64_t c = 0; c < k; ++c) {
      for (std::int64_t i = 0; i < d; ++i) diff[static_cast<std::size_t>(i)] = at(x, p * d + i) - at(mu, c * d + i);
      // (Q diff)_i = exp(q_i) diff_i + sum_{j < i} Q_ij diff_j, with Q_ij at l's column-major slot.
      std::vector<double> y(static_cast<std::size_t>(d));
      for (std::int64_t i = 0; i < d; ++i) y[static_cast<std::size_t>(i)] = std::exp(at(q, c * d + i)) * diff[static_cast<std::size_t>(i)];
      std::int64_t slot = c * packed;
      for (std::int64_t j = 0; j < d; ++j) {
        for (std::int64_t i = j + 1; i < d; ++i) y[static_cast<std::size_t>(i)] += at(l, slot++) * diff[static_cast<std::size_t>(j)];
      }
      double norm2 = 0;
      for (double e : y) norm2 += e * e;
      inner[static_cast<std::size_t>(c)] = at(alpha, c) + sum_q[static_cast<std::size_t>(c)] - 0.5 * norm2;
    }
    total += lse(inner);
  }
  double prior = 0;
  for (std::int64_t c = 0; c < k; ++c) {
    double frobenius = 0;
    for (std::int64_t i = 0; i < d; ++i) frobenius += std::exp(2 * at(q, c * d + i));
    for (std::int64_t i = 0; i < packed; ++i) frobenius += at(l, c * packed + i) * at(l, c * packed + i);
    prior += 0.5 * kWishartGamma * kWishartGamma * frobenius - kWishartM * sum_q[static_cast<std::size_t>(c)];
  }
  return total - static_cast<double>(n) * lse(alpha) + prior + gmm_constant(n, k, d);
}

void gmm(const Options& options, std::int64_t d) {
  const std::int64_t n = kGmmPoints, k = kGmmComponents, packed = d * (d - 1) / 2;
  const std::string size = "d" + std::to_string(d);
  const std::vector<double> av = closed_form(k, 0.1, 0.5), mv = closed_form(k * d, 0.2, 1.0),
                            qv = closed_form(k * d, 0.3, 0.2),
                            lv = closed_form(k * packed, 0.4, 0.5 / std::sqrt(static_cast<double>(d))),
                            xv = closed_form(n * d, 0.5, 1.5);
  const std::vector<tf::Tensor> args = {tf::Tensor::from(av, {k}), tf::Tensor::from(mv, {k, d}), tf::Tensor::from(qv, {k, d}),
                                        tf::Tensor::from(lv, {k, packed}), tf::Tensor::from(xv, {n, d})};
  tf::Program forward = tf::trace(gmm_objective, args[0], args[1], args[2], args[3], args[4]);
  auto gradient = tf::value_and_grad(gmm_objective, {0, 1, 2, 3});

  const double value = forward.run(args).at(0).item<double>();
  const double reference = gmm_reference(av, mv, qv, lv, xv, n, k, d);
  if (!(relative_gap(value, reference) <= 1e-10)) {
    report_failed_check("gmm_fwd %s: tenferro gives %.17g, the plain loops %.17g", size.c_str(), value, reference);
  }
  // Central differences on a few coordinates of each parameter, against the reverse-mode gradient.
  const auto [grad_value, grads] = gradient(args[0], args[1], args[2], args[3], args[4]);
  if (!(relative_gap(grad_value.item<double>(), value) <= 1e-12)) {
    report_failed_check("gmm_grad %s: its value %.17g differs from the forward's", size.c_str(), grad_value.item<double>());
  }
  check_central_differences(
      "gmm_grad " + size, forward, args, grads, 4, 1e-5,
      [](std::int64_t count) { return std::vector<std::int64_t>{0, count / 2, count - 1}; },
      // The differences lose about eps |f| / h to rounding.
      [&](double ad) { return 1e-6 * std::max(1.0, std::abs(ad)) + 1e-14 * std::abs(value) / 1e-5; });

  const auto m = measure({{"fwd", [&] { forward.run(args); }},
                          {"grad", [&] { gradient(args[0], args[1], args[2], args[3], args[4]); }}},
                         options.budget_s);
  char shown[48];
  std::snprintf(shown, sizeof shown, " value=%.12g", value);
  print_line("gmm_fwd", "tenferro", size, "f64", m[0].median_s, m[0].memory, m[0].repetitions,
             shown + std::string(" n=1000 K=25"));
  print_line("gmm_grad", "tenferro", size, "f64", m[1].median_s, m[1].memory, m[1].repetitions,
             field("ratio_vs_fwd", m[1].median_s / m[0].median_s));
}

// ---------------------------------------------------------------------------------------------
// LSTM

constexpr std::int64_t kLstmLayers = 2, kLstmChars = 1024, kLstmAlphabet = 14;

/// The character at position t of the sequence (the same formula in torch_bench.py).
std::int64_t lstm_character(std::int64_t t) { return (7 * t + (t * t) / 5) % kLstmAlphabet; }

/// The loss of the header comment. main [l, 2, 4 b] (per layer its weights, then its biases, each
/// four gates of b: forget, in, out, change), extra [3, b] (input weight, output weight, output
/// bias), state [l, 2, b] (per layer h, then cell), sequence [c, b] one-hot.
T lstm_adbench_loss(T main, T extra, T state, T sequence) {
  const std::int64_t layers = main.shape()[0], b = extra.shape()[1], c = sequence.shape()[0];
  auto vec = [b](const T& t) { return tf::reshape(t, {b}); };
  // Each gate's weight and bias as its own [b] vector, cut once outside the scan.
  std::vector<T> w, u;
  for (std::int64_t j = 0; j < layers; ++j) {
    for (std::int64_t g = 0; g < 4; ++g) {
      w.push_back(vec(tf::slice(main, {j, 0, g * b}, {j + 1, 1, (g + 1) * b})));
      u.push_back(vec(tf::slice(main, {j, 1, g * b}, {j + 1, 2, (g + 1) * b})));
    }
  }
  const T in_weight = vec(tf::slice(extra, {0, 0}, {1, b})), out_weight = vec(tf::slice(extra, {1, 0}, {2, b})),
          out_bias = vec(tf::slice(extra, {2, 0}, {3, b}));
  TracedList init;
  for (std::int64_t j = 0; j < layers; ++j) {
    init.push_back(vec(tf::slice(state, {j, 0, 0}, {j + 1, 1, b})));
    init.push_back(vec(tf::slice(state, {j, 1, 0}, {j + 1, 2, b})));
  }
  auto step = [&](const TracedList& carry, const TracedList& xs) {
    TracedList next;
    T input = xs[0] * in_weight;
    for (std::int64_t j = 0; j < layers; ++j) {
      const std::size_t o = static_cast<std::size_t>(4 * j);
      const T& h = carry[static_cast<std::size_t>(2 * j)];
      const T& cell = carry[static_cast<std::size_t>(2 * j + 1)];
      const T forget = tf::sigmoid(input * w[o] + u[o]), in = tf::sigmoid(h * w[o + 1] + u[o + 1]),
              out = tf::sigmoid(input * w[o + 2] + u[o + 2]), change = tf::tanh(h * w[o + 3] + u[o + 3]);
      const T cell_next = cell * forget + in * change;
      const T h_next = out * tf::tanh(cell_next);
      next.push_back(h_next);
      next.push_back(cell_next);
      input = h_next;
    }
    const T prediction = input * out_weight + out_bias;
    const T normalized = prediction - tf::logsumexp(prediction, {0});
    return std::pair{next, TracedList{tf::sum(xs[1] * normalized)}};
  };
  const T inputs = tf::slice(sequence, {0, 0}, {c - 1, b}), targets = tf::slice(sequence, {1, 0}, {c, b});
  const TracedList ys = tf::scan(step, init, {inputs, targets}).second;
  return tf::sum(ys[0]) * (-1.0 / static_cast<double>((c - 1) * b));
}

void lstm_adbench(const Options& options) {
  const std::int64_t l = kLstmLayers, c = kLstmChars, b = kLstmAlphabet;
  std::vector<double> seq(static_cast<std::size_t>(c * b), 0.0);
  for (std::int64_t t = 0; t < c; ++t) seq[static_cast<std::size_t>(t * b + lstm_character(t))] = 1.0;
  const std::vector<tf::Tensor> args = {tf::Tensor::from(closed_form(l * 2 * 4 * b, 0.6, 0.5), {l, 2, 4 * b}),
                                        tf::Tensor::from(closed_form(3 * b, 0.7, 0.8), {3, b}),
                                        tf::Tensor::from(closed_form(l * 2 * b, 0.8, 0.3), {l, 2, b}),
                                        tf::Tensor::from(seq, {c, b})};
  tf::Program forward = tf::trace(lstm_adbench_loss, args[0], args[1], args[2], args[3]);
  auto gradient = tf::value_and_grad(lstm_adbench_loss, {0, 1});
  const double value = forward.run(args).at(0).item<double>();
  const auto [grad_value, grads] = gradient(args[0], args[1], args[2], args[3]);
  if (!(relative_gap(grad_value.item<double>(), value) <= 1e-12)) {
    report_failed_check("lstm_adbench_grad: its value %.17g differs from the forward's %.17g",
                 grad_value.item<double>(), value);
  }
  check_central_differences(
      "lstm_adbench_grad", forward, args, grads, 2, 1e-6,
      [](std::int64_t count) { return std::vector<std::int64_t>{0, count / 3, count / 2 + 1, count - 1}; },
      // The gradients are small (the loss is divided by (c - 1) b): relative, with a floor above the
      // differences' rounding (eps |loss| / h, about 1e-11).
      [](double ad) { return 1e-5 * std::abs(ad) + 1e-10; });
  const auto m = measure({{"fwd", [&] { forward.run(args); }},
                          {"grad", [&] { gradient(args[0], args[1], args[2], args[3]); }}},
                         options.budget_s);
  char shown[48];
  std::snprintf(shown, sizeof shown, " value=%.12g", value);
  const std::string size = "l2_c1024_b14";
  print_line("lstm_adbench_fwd", "tenferro", size, "f64", m[0].median_s, m[0].memory, m[0].repetitions, shown);
  print_line("lstm_adbench_grad", "tenferro", size, "f64", m[1].median_s, m[1].memory, m[1].repetitions,
             field("ratio_vs_fwd", m[1].median_s / m[0].median_s));
}

}  // namespace

void run_gmm(const Options& options) {
  for (std::int64_t d : {2, 10, 20, 64}) gmm(options, d);
}

void run_lstm_adbench(const Options& options) { lstm_adbench(options); }

}  // namespace bench
