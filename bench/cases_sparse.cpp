// Sparse Jacobians and Hessians (cases.hpp, run_sparse; part of the jacobian family), against
// ADOL-C's sparse drivers (bench/peers/adolc_sparse.cpp) where it was built:
//   sparse_poisson   the Jacobian of the Bratu residual -laplacian(u) - 0.5 exp(u) on an n x n grid
//                    (5-point stencil, zero boundary), n = 100, 316, 1000 (10^4 to 10^6 unknowns).
//   sparse_banded    the Hessian of sum_i (x_i + x_{i+1} x_{i+2} - 1)^2 + sum_i exp(x_i / 10)
//                    (pentadiagonal), 10^4 to 10^6 unknowns.
// Each size prints three lines: case=<name>_eval impl=tenferro (one compiled evaluation of the
// function), case=<name> impl=tenferro (the sparse derivative on its stored analysis: one run of
// the product program and the read-back) with ratio_vs_eval and ratio_vs_adolc, colors and nnz,
// and analysis_s (the first call: tracing, detection, coloring, compiling); and impl=adolc (the
// driver with repeat = 1: values on its stored pattern and seed) with its own analysis_s
// (repeat = 0, taping excluded). The two results are compared before timing (stderr on a
// mismatch): the same nonzero count and the same sum of |values| to 1e-10 relative.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "cases.hpp"
#include "peers/adolc_sparse.hpp"
#include "tenferro/tenferro.hpp"

namespace tf = tenferro;

namespace bench {
namespace {

tf::Traced laplacian(const tf::Traced& u) {
  const std::int64_t n = u.shape()[0];
  const tf::Traced p = tf::pad(u, 0.0, {1, 1}, {1, 1});
  return tf::slice(p, {0, 1}, {n, n + 1}) + tf::slice(p, {2, 1}, {n + 2, n + 1}) + tf::slice(p, {1, 0}, {n + 1, n}) +
         tf::slice(p, {1, 2}, {n + 1, n + 2}) - 4.0 * u;
}
tf::Traced bratu(const tf::Traced& u) { return -laplacian(u) - 0.5 * tf::exp(u); }

tf::Traced banded(const tf::Traced& x) {
  const std::int64_t n = x.shape()[0];
  const tf::Traced t = tf::slice(x, {0}, {n - 2}) + tf::slice(x, {1}, {n - 1}) * tf::slice(x, {2}, {n}) - 1.0;
  return tf::sum(t * t) + tf::sum(tf::exp(x / 10.0));
}

double seconds_of(const std::function<void()>& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double abs_sum(const double* v, std::int64_t n) {
  double s = 0;
  for (std::int64_t k = 0; k < n; ++k) s += std::abs(v[k]);
  return s;
}

/// One size of one problem: the evaluation, the sparse derivative and ADOL-C's.
void run_case(const Options& options, const std::string& name, const std::string& size, const tf::Tensor& x,
              const std::function<tf::Traced(const tf::Traced&)>& f, const tf::SparseTransformed& derivative,
              const std::function<std::unique_ptr<adolc::SparseDriver>()>& make_adolc) {
  const tf::Program eval = tf::trace(f, x);
  const Measurement e = measure({{"tenferro", [&] { eval.run({x}); }}}, options.budget_s).at(0);
  print_line(name + "_eval", "tenferro", size, "f64", e.median_s, e.memory, e.repetitions);

  tf::SparseMatrix m;
  const double analysis_s = seconds_of([&] { m = derivative(x); });
  const tf::SparseAnalysis a = derivative.analysis(x);
  std::vector<Impl> impls = {{"tenferro", [&] { m = derivative(x); }}};
  std::unique_ptr<adolc::SparseDriver> driver;
  double adolc_analysis_s = 0;
  if (adolc::available()) {
    driver = make_adolc();
    int nnz = 0;
    adolc_analysis_s = seconds_of([&] { nnz = driver->run(true); });
    const double ours = abs_sum(m.values.data<double>(), m.pattern->nnz()), theirs = abs_sum(driver->values(), nnz);
    if (nnz != m.pattern->nnz() || std::abs(ours - theirs) > 1e-10 * theirs) {
      report_failed_check("%s %s: tenferro %lld nonzeros, sum |v| %.17g; ADOL-C %d, %.17g", name.c_str(), size.c_str(),
                   static_cast<long long>(m.pattern->nnz()), ours, nnz, theirs);
    }
    impls.push_back({"adolc", [&] { driver->run(false); }});
  }
  const std::vector<Measurement> r = measure(impls, options.budget_s);
  std::string extra = field("ratio_vs_eval", r[0].median_s / e.median_s) + field("colors", static_cast<double>(a.colors)) +
                      field("nnz", static_cast<double>(a.pattern->nnz())) + field("analysis_s", analysis_s);
  if (driver) extra += field("ratio_vs_adolc", r[0].median_s / r[1].median_s);
  print_line(name, "tenferro", size, "f64", r[0].median_s, r[0].memory, r[0].repetitions, extra);
  if (driver) {
    print_line(name, "adolc", size, "f64", r[1].median_s, r[1].memory, r[1].repetitions, field("analysis_s", adolc_analysis_s));
  }
}

}  // namespace

void run_sparse(const Options& options) {
  // Sizes grow, the two problems alternating: ADOL-C numbers its variables' locations across
  // tapes and its sweeps allocate up to the highest location a tape uses, so a small tape taped
  // after a large one costs as much as the large one (measured: the 10^4 Hessian took 30 times
  // longer after the 10^6 Jacobian's tape). Below --budget 0.5 (smoke runs) only 10^4.
  const std::vector<std::int64_t> grids = options.budget_s < 0.5 ? std::vector<std::int64_t>{100} : std::vector<std::int64_t>{100, 316, 1000};
  for (std::int64_t n : grids) {
    std::vector<double> u(static_cast<std::size_t>(n * n));
    for (std::size_t k = 0; k < u.size(); ++k) u[k] = 0.1 * std::sin(0.37 * static_cast<double>(k));
    const tf::Tensor x = tf::Tensor::from(u, {n, n});
    run_case(options, "sparse_poisson", std::to_string(n * n), x, bratu, tf::sparse_jacobian(bratu),
             [&] { return adolc::bratu_jacobian(static_cast<int>(n), 0.5, u); });
    const std::int64_t length = n == 316 ? 100000 : n * n;
    std::vector<double> v(static_cast<std::size_t>(length));
    for (std::size_t k = 0; k < v.size(); ++k) v[k] = 0.5 * std::cos(0.71 * static_cast<double>(k));
    const tf::Tensor y = tf::Tensor::from(v, {length});
    run_case(options, "sparse_banded", std::to_string(length), y, banded, tf::sparse_hessian(banded),
             [&] { return adolc::banded_hessian(v); });
  }
}

}  // namespace bench
