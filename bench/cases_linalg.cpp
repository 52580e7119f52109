// Linear-algebra cases: svd, qr, eigh, cholesky and solve at n = 8, 16, 32, 64, 256, 512 (f64), the
// decomposition alone (linalg_<op>_fwd) and a scalar loss with its gradient (linalg_<op>_grad);
// and the TRG example's lnZ/N with u and c (trg_fwd_grad_hess, chi = 16 and 24, niter = 20).
// bench/peers/linalg_peers.py and trg_torch.py are the PyTorch side; the losses are theirs
// (linalg_peers.py's docstring), on inputs of the same distributions:
//   svd:      sum(c S) + sum(P U^2) + sum(R Vh^2)      qr:    sum(P Q^2) + sum(R R_^2)
//   eigh:     sum(c w) + sum(P V^2)                    cholesky: sum(P L)
//   solve:    sum(P Y), Y = solve(A, B), gradient for A and B
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "cases.hpp"
#include "ising_trg_model.hpp"
#include "tenferro/tenferro.hpp"

namespace bench {

namespace tf = tenferro;
namespace la = tenferro::linalg;

namespace {

using T = tf::Traced;

tf::Tensor random_tensor(std::mt19937& rng, tf::Shape shape, bool normal) {
  std::normal_distribution<double> nd(0.0, 1.0);
  std::uniform_real_distribution<double> ud(0.0, 1.0);
  std::vector<double> v(static_cast<std::size_t>(tf::numel(shape)));
  for (auto& x : v) x = normal ? nd(rng) : ud(rng);
  return tf::Tensor::from(v, std::move(shape));
}

/// The op's input (A) built from X as linalg_peers.py builds it.
tf::Tensor input_for(const std::string& op, const tf::Tensor& x) {
  const std::int64_t n = x.shape()[0];
  if (op == "eigh") return tf::trace([](T v) { return (v + tf::transpose(v)) * 0.5; }, x).run({x})[0];
  if (op == "cholesky") {
    return tf::trace([n](T v) { return tf::matmul(v, tf::transpose(v)) + la::eye(v, n) * static_cast<double>(n); }, x)
        .run({x})[0];
  }
  return x;
}

}  // namespace

void run_linalg(const Options& options) {
  for (const std::string op : {"svd", "qr", "eigh", "cholesky", "solve"}) {
    for (std::int64_t n : {8, 16, 32, 64, 256, 512}) {
      if (!selected(options, "linalg_" + op + "_" + std::to_string(n))) continue;
      std::mt19937 rng(11);
      const tf::Tensor a = input_for(op, random_tensor(rng, {n, n}, true));
      const tf::Tensor b = random_tensor(rng, {n, n}, true);
      const tf::Tensor p = random_tensor(rng, {n, n}, false), r = random_tensor(rng, {n, n}, false);
      const tf::Tensor c = random_tensor(rng, {n}, false);
      auto k = [](const T& like, const tf::Tensor& v) { return tf::constant(like, v); };
      // The decomposition's results (all of them, as PyTorch returns them).
      auto forward = [op](T x, T y) -> std::vector<T> {
        if (op == "svd") {
          auto f = la::svd(x);
          return {f.U, f.S, f.Vh};
        }
        if (op == "qr") {
          auto f = la::qr(x);
          return {f.Q, f.R};
        }
        if (op == "eigh") {
          auto f = la::eigh(x);
          return {f.eigenvalues, f.eigenvectors};
        }
        if (op == "cholesky") return {la::cholesky(x)};
        return {la::solve(x, y)};
      };
      auto loss = [&](T x, T y) {
        if (op == "svd") {
          auto f = la::svd(x);
          return tf::sum(k(x, c) * f.S) + tf::sum(k(x, p) * f.U * f.U) + tf::sum(k(x, r) * f.Vh * f.Vh);
        }
        if (op == "qr") {
          auto f = la::qr(x);
          return tf::sum(k(x, p) * f.Q * f.Q) + tf::sum(k(x, r) * f.R * f.R);
        }
        if (op == "eigh") {
          auto f = la::eigh(x);
          return tf::sum(k(x, c) * f.eigenvalues) + tf::sum(k(x, p) * f.eigenvectors * f.eigenvectors);
        }
        if (op == "cholesky") return tf::sum(k(x, p) * la::cholesky(x));
        return tf::sum(k(x, p) * la::solve(x, y));
      };
      tf::Program fwd = tf::trace(forward, a, b);
      auto grad = tf::value_and_grad(loss, std::vector<std::size_t>{0, 1});
      const auto m = measure({{"tenferro", [&] { fwd.run({a, b}); }}}, options.budget_s);
      const auto g = measure({{"tenferro", [&] { grad(a, b); }}}, options.budget_s);
      const std::string size = std::to_string(n);
      print_line("linalg_" + op + "_fwd", "tenferro", size, "f64", m[0].median_s, m[0].memory, m[0].repetitions);
      print_line("linalg_" + op + "_grad", "tenferro", size, "f64", g[0].median_s, g[0].memory, g[0].repetitions,
                 field("grad_over_fwd", g[0].median_s / m[0].median_s));
    }
  }
}

void run_trg(const Options& options) {
  const double coupling = 0.44;
  for (std::int64_t chi : {16, 24}) {
    // The example's program: value, first and second derivative by forward mode twice, as one
    // program (examples/ising_trg_model.hpp).
    const tf::Tensor k = tf::Tensor::scalar(coupling);
    const tf::Program observables = tf::trace([chi](const T& K) { return ising::lnz_and_derivatives(K, chi, 20); }, k);
    const auto m = measure({{"tenferro", [&] { observables.run({k}); }}}, options.budget_s);
    print_line("trg_fwd_grad_hess", "tenferro", "chi" + std::to_string(chi), "f64", m[0].median_s, m[0].memory,
               m[0].repetitions, " niter=20 K=0.44");
  }
}

}  // namespace bench
