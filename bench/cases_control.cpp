// Control-flow cases (family control).
//
// lstm_fwd, lstm_grad: an LSTM layer as one scan (hidden 256, input 256, 100 steps, batch 32,
// f32): the loss sum(h_t . v) over the steps, and its gradient with respect to the input weights,
// the recurrent weights and the bias. torch_bench.py's run_control times the same cell written in
// PyTorch operations in a Python loop (impl=torch) and torch.nn.LSTM (impl=torch_nn_lstm).
//
// recurrence_fwd, recurrence_grad: c <- c + 0.001 sin(c) w over 10^4 steps of a rank-0 f64 carry
// (one scan), its value and its gradient with respect to c0 and w; against the same recurrence
// in a Python loop with autograd.
//
// map_rows: tf::map of sin(r) * 2 over the 10^4 rows of xs (rows of 1, 8 and 256 f64), beside the
// same body as a scan with an unused carry and as vmap, in one run: ratio_vs_scan (the one step
// loop both run) and ratio_vs_vmap (one fused kernel over the whole batch, what map trades for
// holding one row's values at a time).
//
// recurrence_compile: the time of the first call of value_and_grad (trace, linearize, transpose,
// compile and one run) minus a steady call, for 10 and 10^4 steps: it must not grow with the
// step count (the body is traced and compiled once). Every repetition changes a constant of the
// body, so that the process-wide compile cache never serves it.
#include <algorithm>
#include <chrono>
#include <random>
#include <string>
#include <vector>

#include "cases.hpp"
#include "tenferro/tenferro.hpp"

namespace bench {

namespace tf = tenferro;

namespace {
using T = tf::Traced;
using tf::TracedList;

tf::Tensor random_f32(std::mt19937_64& rng, tf::Shape shape, double scale) {
  std::normal_distribution<double> normal;
  std::vector<float> v(static_cast<std::size_t>(tf::numel(shape)));
  for (auto& e : v) e = static_cast<float>(scale * normal(rng));
  return tf::Tensor::from(v, std::move(shape));
}

/// The LSTM loss: gates = x_t W + h U + b, split into input, forget, cell and output gates.
T lstm_loss(T xs, T w, T u, T b, T v) {
  const std::int64_t batch = xs.shape()[1], hidden = u.shape()[0];
  auto cell = [&](const TracedList& carry, const TracedList& x) {
    const T& h = carry[0];
    const T& c = carry[1];
    const T gates = tf::matmul(x[0], w) + tf::matmul(h, u) + b;
    auto part = [&](std::int64_t k) { return tf::slice(gates, {0, k * hidden}, {batch, (k + 1) * hidden}); };
    const T i = tf::sigmoid(part(0)), f = tf::sigmoid(part(1)), g = tf::tanh(part(2)), o = tf::sigmoid(part(3));
    const T c_next = f * c + i * g;
    const T h_next = o * tf::tanh(c_next);
    return std::pair{TracedList{h_next, c_next}, TracedList{tf::sum(tf::matmul(h_next, v))}};
  };
  const T h0 = tf::broadcast_to(tf::constant(xs, tf::Tensor::scalar(0.0, tf::DType::F32)), {batch, hidden});
  auto [carry, ys] = tf::scan(cell, {h0, h0}, {xs});
  return tf::sum(ys[0]);
}

T recurrence(T c0, T w, std::int64_t steps, double scale) {
  auto step = [&](const TracedList& c, const TracedList&) {
    return std::pair{TracedList{c[0] + tf::sin(c[0]) * w * scale}, TracedList{}};
  };
  return tf::scan(step, {c0}, {}, {.length = steps}).first[0];
}
}  // namespace

void run_control(const Options& options) {
  if (selected(options, "lstm")) {
    constexpr std::int64_t steps = 100, batch = 32, input = 256, hidden = 256;
    std::mt19937_64 rng(11);
    const tf::Tensor xs = random_f32(rng, {steps, batch, input}, 1.0), w = random_f32(rng, {input, 4 * hidden}, 0.05),
                     u = random_f32(rng, {hidden, 4 * hidden}, 0.05), b = random_f32(rng, {4 * hidden}, 0.1),
                     v = random_f32(rng, {hidden, 1}, 0.1);
    tf::Program forward = tf::trace(lstm_loss, xs, w, u, b, v);
    auto grad = tf::value_and_grad(lstm_loss, {1, 2, 3});
    const auto f = measure({{"tenferro", [&] { forward.run({xs, w, u, b, v}); }}}, options.budget_s);
    const auto g = measure({{"tenferro", [&] { grad(xs, w, u, b, v); }}}, options.budget_s);
    const std::string size = "h256_t100_b32";
    print_line("lstm_fwd", "tenferro", size, "f32", f[0].median_s, f[0].memory, f[0].repetitions);
    print_line("lstm_grad", "tenferro", size, "f32", g[0].median_s, g[0].memory, g[0].repetitions);
  }
  if (selected(options, "map")) {
    constexpr std::int64_t n = 10000;
    for (std::int64_t width : {std::int64_t{1}, std::int64_t{8}, std::int64_t{256}}) {
      const tf::Shape shape = width == 1 ? tf::Shape{n} : tf::Shape{n, width};
      const tf::Tensor xs = tf::Tensor::from(std::vector<double>(static_cast<std::size_t>(n * width), 0.3), shape);
      auto body = [](const TracedList& r) { return TracedList{tf::sin(r[0]) * 2.0}; };
      tf::Program mapped = tf::trace([&](T x) { return tf::map(body, {x})[0]; }, xs);
      tf::Program scanned = tf::trace([&](T x) {
        auto step = [&](const TracedList& c, const TracedList& r) { return std::pair{c, body(r)}; };
        return tf::scan(step, {tf::sum(x) * 0.0}, {x}).second[0];
      }, xs);
      tf::Program vmapped = tf::trace([](T x) { return tf::vmap([](T r) { return tf::sin(r) * 2.0; })(x); }, xs);
      const auto r = measure({{"map", [&] { mapped.run({xs}); }}, {"scan", [&] { scanned.run({xs}); }},
                              {"vmap", [&] { vmapped.run({xs}); }}},
                             options.budget_s);
      print_line("map_rows", "tenferro", "1e4x" + std::to_string(width), "f64", r[0].median_s, r[0].memory, r[0].repetitions,
                 field("ratio_vs_scan", r[0].median_s / r[1].median_s) + field("ratio_vs_vmap", r[0].median_s / r[2].median_s));
    }
  }
  if (selected(options, "recurrence")) {
    constexpr std::int64_t steps = 10000;
    const tf::Tensor c0 = tf::Tensor::scalar(0.3), w = tf::Tensor::scalar(1.1);
    auto f = [](T c, T x) { return recurrence(c, x, steps, 0.001); };
    tf::Program forward = tf::trace(f, c0, w);
    auto grad = tf::value_and_grad(f, {0, 1});
    const auto fr = measure({{"tenferro", [&] { forward.run({c0, w}); }}}, options.budget_s);
    const auto gr = measure({{"tenferro", [&] { grad(c0, w); }}}, options.budget_s);
    print_line("recurrence_fwd", "tenferro", "1e4", "f64", fr[0].median_s, fr[0].memory, fr[0].repetitions);
    print_line("recurrence_grad", "tenferro", "1e4", "f64", gr[0].median_s, gr[0].memory, gr[0].repetitions,
               field("ratio_vs_fwd", gr[0].median_s / fr[0].median_s));

    // The first call of value_and_grad traces, linearizes, transposes and compiles, then runs the
    // program (and, once, the function alone for the shape of its cotangent seed): its time minus
    // a steady call and minus one forward run is the cost of building the programs.
    for (std::int64_t n : {std::int64_t{10}, std::int64_t{10000}}) {
      int round = 0;
      std::vector<double> costs;
      for (int rep = 0; rep < 15; ++rep) {
        const double scale = 0.001 * (1 + 1e-6 * ++round);
        auto g = tf::value_and_grad([n, scale](T c, T x) { return recurrence(c, x, n, scale); }, {0, 1});
        tf::Program p = tf::trace([n, scale](T c, T x) { return recurrence(c, x, n, scale); }, c0, w);
        p.run({c0, w});
        auto t0 = std::chrono::steady_clock::now();
        g(c0, w);
        auto t1 = std::chrono::steady_clock::now();
        g(c0, w);
        auto t2 = std::chrono::steady_clock::now();
        p.run({c0, w});
        auto t3 = std::chrono::steady_clock::now();
        costs.push_back(std::chrono::duration<double>((t1 - t0) - (t2 - t1) - (t3 - t2)).count());
      }
      std::sort(costs.begin(), costs.end());
      print_line("recurrence_compile", "tenferro", std::to_string(n), "f64", costs[costs.size() / 2], {},
                 static_cast<int>(costs.size()));
    }
  }
}

}  // namespace bench
