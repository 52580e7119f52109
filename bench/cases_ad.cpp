// The AD-heavy cases: an elementwise chain on large vectors, a long chain on one scalar, and
// second derivatives. Before timing, each checks tenferro's result against the hand-written one
// (stderr on a mismatch), so a baseline that computes something else cannot go unnoticed.
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "cases.hpp"
#include "native.hpp"
#include "tenferro/program.hpp"
#include "tenferro/tenferro.hpp"

namespace bench {

namespace tf = tenferro;

namespace {

/// Results leave through here, so the compiler cannot drop a baseline's work.
volatile double sink = 0;

void check_close(const std::string& what, double ours, double reference) {
  const double scale = std::max(1.0, std::abs(reference));
  if (!(std::abs(ours - reference) <= 1e-8 * scale)) {
    report_failed_check("%s: tenferro gives %.17g, the reference %.17g", what.c_str(), ours, reference);
  }
}

/// n points evenly spaced in (lo, hi), cell midpoints; torch_bench.py uses the same inputs.
std::vector<double> midpoints(std::int64_t n, double lo, double hi) {
  std::vector<double> values(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    values[static_cast<std::size_t>(i)] = lo + (hi - lo) * (static_cast<double>(i) + 0.5) / static_cast<double>(n);
  }
  return values;
}

void elem_chain(const Options& options, std::int64_t n) {
  const std::string size = std::to_string(n);
  const int threads = options.threads;
  std::vector<double> xs = midpoints(n, -2.0, 2.0), g(xs.size());
  const double* px = xs.data();
  double* pg = g.data();
  tf::Tensor x = tf::Tensor::from(xs, {n});
  auto f = [](tf::Traced t) { return tf::sum(tf::exp(tf::sin(t) * t + tf::cos(t)) / (1.0 + t * t)); };
  tf::Program forward = tf::trace(f, x);
  auto gradient = tf::grad(f);

  const bool avx2 = native::avx2_supported(), avx512 = native::avx512_supported();
  if (!avx2) std::fprintf(stderr, "bench: no AVX2/FMA; elem_chain ratio_vs_native uses the libm loop\n");
  const double reference = native::elem_chain_grad(px, pg, n, threads);
  check_close("elem_chain_fwd " + size, forward.run({x}).at(0).item<double>(), reference);
  check_close("elem_chain_grad " + size + " (last element)", gradient(x).data<double>()[n - 1], g.back());

  // Forward. The native loops' outputs are buffers they are given; tenferro allocates its own.
  std::vector<Impl> fwd = {{"tenferro", [&] { forward.run({x}); }},
                           {"native", [&] { sink = native::elem_chain(px, n, threads); }}};
  std::vector<Impl> bwd = {{"tenferro", [&] { gradient(x); }},
                           {"native", [&] { sink = native::elem_chain_grad(px, pg, n, threads); }}};
  if (avx2) {
    fwd.push_back({"native_sleef", [&] { sink = native::elem_chain_sleef(px, n, threads); }});
    fwd.push_back({"native_mvec", [&] { sink = native::elem_chain_mvec(px, n, threads); }});
    bwd.push_back({"native_sleef", [&] { sink = native::elem_chain_grad_sleef(px, pg, n, threads); }});
    bwd.push_back({"native_mvec", [&] { sink = native::elem_chain_grad_mvec(px, pg, n, threads); }});
  }
  if (avx512) {
    fwd.push_back({"native_sleef_avx512", [&] { sink = native::elem_chain_sleef_avx512(px, n, threads); }});
    fwd.push_back({"native_mvec_avx512", [&] { sink = native::elem_chain_mvec_avx512(px, n, threads); }});
    bwd.push_back({"native_sleef_avx512", [&] { sink = native::elem_chain_grad_sleef_avx512(px, pg, n, threads); }});
    bwd.push_back({"native_mvec_avx512", [&] { sink = native::elem_chain_grad_mvec_avx512(px, pg, n, threads); }});
  }
  // ratio_vs_native compares with the loop in the math library and at the vector width our
  // kernels use now (tenferro/math_accuracy.hpp); without AVX2, with the libm loop.
  const tf::MathAccuracy accuracy = tf::math_accuracy();
  const std::string isa = tf::vector_instruction_set();
  std::string baseline_name = "native";
  if (isa != "sse2") {
    baseline_name = accuracy == tf::MathAccuracy::Fast ? "native_mvec" : "native_sleef";
    if (isa == "avx512") baseline_name += "_avx512";
  }

  for (const auto& [name, impls] : {std::pair{"elem_chain_fwd", &fwd}, std::pair{"elem_chain_grad", &bwd}}) {
    const auto m = measure(*impls, options.budget_s);
    double baseline_s = 0;
    for (std::size_t k = 1; k < m.size(); ++k) {
      print_line(name, (*impls)[k].name, size, "f64", m[k].median_s, m[k].memory, m[k].repetitions);
      if ((*impls)[k].name == baseline_name) baseline_s = m[k].median_s;
    }
    print_line(name, "tenferro", size, "f64", m[0].median_s, m[0].memory, m[0].repetitions,
               " math=" + std::string(tf::to_string(accuracy)) + " isa=" + isa + " baseline=" + baseline_name +
                   field("ratio_vs_native", m[0].median_s / baseline_s));
  }
}

tf::Traced scalar_chain_traced(tf::Traced x, int ops) {
  for (int k = 0; k < ops; ++k) {
    switch (k % 3) {
      case 0: x = x * native::scalar_chain_mul(k); break;
      case 1: x = x + native::scalar_chain_add(k); break;
      default: x = tf::sin(x); break;
    }
  }
  return x;
}

}  // namespace

void run_elem_chain(const Options& options) {
  for (std::int64_t n : {1'000'000, 10'000'000}) {
    if (selected(options, "elem_chain_" + std::to_string(n))) elem_chain(options, n);
  }
}

void run_scalar_chain(const Options& options) {
  constexpr int kOps = 1000;
  // A volatile input: the native chain cannot be folded at compile time or hoisted out of the
  // timing loop, since every call must read it anew.
  static volatile double input = 0.3;
  std::vector<double> tape(kOps);
  auto chain = [](tf::Traced x) { return scalar_chain_traced(x, kOps); };
  tf::Tensor x = tf::Tensor::scalar(input);
  tf::Program forward = tf::trace(chain, x);
  auto gradient = tf::grad(chain);
  check_close("scalar_chain_fwd", forward.run({x}).at(0).item<double>(), native::scalar_chain(input, kOps));
  check_close("scalar_chain_grad", gradient(x).item<double>(), native::scalar_chain_grad(input, kOps, tape.data()));

  const std::vector<Impl> fwd = {{"tenferro", [&] { forward.run({x}); }},
                                 {"native", [&] { sink = native::scalar_chain(input, kOps); }}};
  // The gradient bar is relative to the native forward chain, so it runs alongside too.
  const std::vector<Impl> bwd = {{"tenferro", [&] { gradient(x); }},
                                 {"native", [&] { sink = native::scalar_chain_grad(input, kOps, tape.data()); }},
                                 {"native_fwd", [&] { sink = native::scalar_chain(input, kOps); }}};
  for (const auto& [name, impls] : {std::pair{"scalar_chain_fwd", &fwd}, std::pair{"scalar_chain_grad", &bwd}}) {
    const auto m = measure(*impls, options.budget_s);
    const double per_op = 1e9 / kOps;
    print_line(name, "native", "1000", "f64", m[1].median_s, m[1].memory, m[1].repetitions,
               field("ns_per_op", m[1].median_s * per_op));
    print_line(name, "tenferro", "1000", "f64", m[0].median_s, m[0].memory, m[0].repetitions,
               field("ns_per_op", m[0].median_s * per_op) + field("ratio_vs_native", m[0].median_s / m[1].median_s) +
                   (m.size() > 2 ? field("ratio_vs_native_fwd", m[0].median_s / m[2].median_s) : std::string()));
  }
}

void run_linearize_chain(const Options& options) {
  // The cost of emitting derivatives: tf::linearize (the JVP rule of every op, recorded into the
  // linear graph) of a 1000-op elementwise chain on a vector, cycling through functions whose
  // rules take a few operations each. No program runs.
  constexpr int kOps = 1000;
  auto chain = [](tf::Traced x) {
    for (int i = 0; i < kOps; ++i) {
      switch (i % 10) {
        case 0: x = tf::sin(x); break;
        case 1: x = tf::atan(x); break;
        case 2: x = tf::asinh(x); break;
        case 3: x = tf::sinh(x); break;
        case 4: x = tf::tanh(x); break;
        case 5: x = tf::exp(x); break;
        case 6: x = tf::log1p(x); break;
        case 7: x = tf::tan(x); break;
        case 8: x = tf::sqrt(x); break;
        default: x = tf::asin(x); break;
      }
    }
    return tf::sum(x);
  };
  const tf::Program program = tf::trace(chain, tf::Tensor::zeros({8}));
  const Measurement m = measure({{"tenferro", [&] { sink = static_cast<double>(tf::linearize(program).graph->operations().size()); }}},
                                options.budget_s).at(0);
  print_line("linearize_chain", "tenferro", "1000", "f64", m.median_s, m.memory, m.repetitions,
             field("ns_per_op", m.median_s * 1e9 / kOps));
}

void run_hessian(const Options& options) {
  for (std::int64_t n : {100, 1000}) {
    const std::string size = std::to_string(n);
    auto f = [](tf::Traced x, tf::Traced a) { return tf::sum(tf::exp(a * x)); };
    const std::vector<double> xs = midpoints(n, -1.0, 1.0), as = midpoints(n, 0.5, 1.5), vs = midpoints(n, 1.0, -1.0);
    const tf::Tensor x = tf::Tensor::from(xs, {n}), a = tf::Tensor::from(as, {n}), v = tf::Tensor::from(vs, {n});
    const tf::Tensor no_direction = tf::Tensor::zeros({n});
    auto hessian = tf::hessian(f, 0);
    // The hessian callable traces once and then runs compiled programs. tf::hvp has no such form:
    // it traces f on every call and finds its compiled programs in the process-wide compile cache,
    // so its time includes one trace. It takes a direction per primal; a's is zero.
    auto hvp = [&] { return tf::hvp(f, {x, a}, {v, no_direction}).at(0); };

    const std::int64_t last = n - 1;
    const std::size_t l = static_cast<std::size_t>(last);
    const double h_last = as[l] * as[l] * std::exp(as[l] * xs[l]);  // d^2 f / dx_i^2 = a_i^2 exp(a_i x_i)
    check_close("hessian " + size, hessian(x, a).data<double>()[last * n + last], h_last);
    check_close("hvp " + size, hvp().data<double>()[last], h_last * vs[l]);

    const Measurement h = measure({{"tenferro", [&] { hessian(x, a); }}}, options.budget_s).at(0);
    print_line("hessian", "tenferro", size, "f64", h.median_s, h.memory, h.repetitions);
    const Measurement p = measure({{"tenferro", [&] { hvp(); }}}, options.budget_s).at(0);
    print_line("hvp", "tenferro", size, "f64", p.median_s, p.memory, p.repetitions);
  }
}

void run_jacobian(const Options& options) {
  constexpr std::int64_t n = 1000;
  const std::string size = std::to_string(n);
  // J_ij = exp(x_i) (delta_ij S + 1) with S = sum(x): dense, and the diagonal differs.
  auto f = [](tf::Traced v) { return tf::exp(v) * tf::sum(v); };
  const std::vector<double> xs = midpoints(n, -1.0, 1.0);
  const tf::Tensor x = tf::Tensor::from(xs, {n});
  auto forward = tf::jacfwd(f);
  auto reverse = tf::jacrev(f);
  double total = 0;
  for (double v : xs) total += v;
  const double j00 = std::exp(xs[0]) * (total + 1.0), j01 = std::exp(xs[0]);
  check_close("jacfwd (0, 0)", forward(x).data<double>()[0], j00);
  check_close("jacfwd (0, 1)", forward(x).data<double>()[1], j01);
  check_close("jacrev (0, 0)", reverse(x).data<double>()[0], j00);
  check_close("jacrev (0, 1)", reverse(x).data<double>()[1], j01);
  const Measurement fwd = measure({{"tenferro", [&] { forward(x); }}}, options.budget_s).at(0);
  print_line("jacfwd", "tenferro", size, "f64", fwd.median_s, fwd.memory, fwd.repetitions);
  const Measurement rev = measure({{"tenferro", [&] { reverse(x); }}}, options.budget_s).at(0);
  print_line("jacrev", "tenferro", size, "f64", rev.median_s, rev.memory, rev.repetitions);
}

void run_grad_call(const Options& options) {
  // The per-call cost of a compiled gradient: grad of sum(tanh(w * x) * w) with respect to w, at a
  // small size (call overhead dominates) and a medium one. bench/peers/python_overhead.py makes
  // the same calls from Python through the module, and through PyTorch.
  for (std::int64_t n : {16, 16384}) {
    const std::vector<double> ws = midpoints(n, -1.0, 1.0), xs = midpoints(n, 0.5, 1.5);
    const tf::Tensor w = tf::Tensor::from(ws, {n}), x = tf::Tensor::from(xs, {n});
    auto g = tf::grad([](tf::Traced a, tf::Traced b) { return tf::sum(tf::tanh(a * b) * a); });
    const Measurement m = measure({{"tenferro", [&] { g(w, x); }}}, options.budget_s).at(0);
    print_line("grad_call", "tenferro", std::to_string(n), "f64", m.median_s, m.memory, m.repetitions);
  }
}

}  // namespace bench
