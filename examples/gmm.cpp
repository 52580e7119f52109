// The log-likelihood of a Gaussian mixture whose covariance factors come from packed parameters,
// its gradient checked against central finite differences, and a few steps of gradient ascent.
//
// Each component k has a mixing logit a_k, a mean m_k and the Cholesky factor L_k of its precision
// (Sigma_k^-1 = L_k L_k^T), packed as D (D + 1) / 2 free numbers q_k: the diagonal of L_k is
// exp(q) (so it stays positive) and the strict lower part is q itself, placed into L_k by index
// (index_add along the flattened D x D axis). With y = (x - m_k) L_k,
//   log p(x | k) = -D/2 log(2 pi) + sum_i log L_k[i, i] - |y|^2 / 2,
// and the mean log-likelihood is mean_n logsumexp_k (log_softmax(a)_k + log p(x_n | k)).
// The data are drawn with tenferro's pure random numbers from a known mixture.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <vector>

#include "tenferro/tenferro.hpp"

namespace tf = tenferro;
using T = tf::Traced;

namespace {

constexpr std::int64_t kComponents = 3, kDim = 3, kPacked = kDim * (kDim + 1) / 2, kSamples = 600;

/// Row-major positions in a D x D matrix of the packed entries (row by row, lower triangle), and
/// which of them lie on the diagonal.
std::vector<std::int64_t> packed_positions() {
  std::vector<std::int64_t> p;
  for (std::int64_t i = 0; i < kDim; ++i) {
    for (std::int64_t j = 0; j <= i; ++j) p.push_back(i * kDim + j);
  }
  return p;
}

/// L [K, D, D] from the packed parameters q [K, P]: exp on the diagonal, placed by index.
T cholesky_factors(const T& q) {
  const std::vector<std::int64_t> pos = packed_positions();
  std::vector<bool> diagonal;
  for (std::int64_t p : pos) diagonal.push_back(p / kDim == p % kDim);
  const T on_diagonal = tf::constant(q, tf::Tensor::from(diagonal, {kPacked}));
  const T entries = tf::where(on_diagonal, tf::exp(q), q);
  const T idx = tf::constant(q, tf::Tensor::from(pos, {kPacked}));
  const T zeros = tf::constant(q, tf::Tensor::zeros({kComponents, kDim * kDim}));
  const T flat = tf::index_add(zeros, idx, entries, 1);
  return tf::reshape(flat, {kComponents, kDim, kDim});
}

/// The mean log-likelihood of the data x [N, D] under the mixture (a [K], m [K, D], q [K, P]).
T mean_log_likelihood(const T& a, const T& m, const T& q, const T& x) {
  const T L = cholesky_factors(q);
  // y[n, k, j] = sum_i (x[n, i] - m[k, i]) L[k, i, j]
  const T y = tf::einsum("ni,kij->nkj", {x, L}) - tf::einsum("ki,kij->kj", {m, L});
  const T log_det = tf::sum(tf::log(tf::diagonal(L)), {1});  // [K]: log |L_k| = half log |Sigma_k^-1|
  const T log_p = tf::sum(y * y, {2}) * -0.5 + log_det - 0.5 * kDim * std::log(2 * std::numbers::pi);  // [N, K]
  return tf::mean(tf::logsumexp(log_p + tf::log_softmax(a), {1}));
}

}  // namespace

int main() {
  // Data: three well separated clusters, drawn from explicit keys (same numbers on every run).
  const std::vector<double> centers = {0, 0, 0, 4, 4, 0, -4, 2, 3};
  auto sample = [&](T key) {
    auto keys = tf::random::split(key, 2);
    const T which = tf::random::categorical(keys[0], tf::constant(key, tf::Tensor::zeros({kSamples, kComponents})));
    const T c = tf::take(tf::constant(key, tf::Tensor::from(centers, {kComponents, kDim})), which, 0);
    return c + tf::random::normal(keys[1], {kSamples, kDim}) * 0.8;
  };
  const tf::Tensor data = tf::trace(sample, tf::random::key(2026)).run({tf::random::key(2026)}).at(0);

  // Start: equal weights, identity precisions, and means at data points far apart (the first
  // point, then each time the point farthest from those chosen).
  tf::Tensor a = tf::Tensor::zeros({kComponents});
  std::vector<double> m0, q0(kComponents * kPacked, 0.0);
  const double* xs = data.data<double>();
  auto distance2 = [&](std::int64_t n, std::size_t k) {
    double d = 0;
    for (std::int64_t i = 0; i < kDim; ++i) d += (xs[n * kDim + i] - m0[k * kDim + static_cast<std::size_t>(i)]) * (xs[n * kDim + i] - m0[k * kDim + static_cast<std::size_t>(i)]);
    return d;
  };
  m0.assign(xs, xs + kDim);
  for (std::int64_t k = 1; k < kComponents; ++k) {
    std::int64_t far = 0;
    double best = -1;
    for (std::int64_t n = 0; n < kSamples; ++n) {
      double nearest = 1e300;
      for (std::size_t j = 0; j < static_cast<std::size_t>(k); ++j) nearest = std::min(nearest, distance2(n, j));
      if (nearest > best) {
        best = nearest;
        far = n;
      }
    }
    m0.insert(m0.end(), xs + far * kDim, xs + (far + 1) * kDim);
  }
  tf::Tensor m = tf::Tensor::from(m0, {kComponents, kDim});
  tf::Tensor q = tf::Tensor::from(q0, {kComponents, kPacked});

  auto objective = tf::value_and_grad(mean_log_likelihood, {0, 1, 2});
  auto value = [&](const tf::Tensor& aa, const tf::Tensor& mm, const tf::Tensor& qq) {
    return objective(aa, mm, qq, data).first.item<double>();
  };

  // The gradient against central differences, every parameter.
  auto [ll, grads] = objective(a, m, q, data);
  double worst = 0;
  const tf::Tensor* params[] = {&a, &m, &q};
  for (int p = 0; p < 3; ++p) {
    for (std::int64_t i = 0; i < params[p]->numel(); ++i) {
      const double h = 1e-6;
      tf::Tensor plus[3] = {a.clone(), m.clone(), q.clone()}, minus[3] = {a.clone(), m.clone(), q.clone()};
      plus[p].data<double>()[i] += h;
      minus[p].data<double>()[i] -= h;
      const double fd = (value(plus[0], plus[1], plus[2]) - value(minus[0], minus[1], minus[2])) / (2 * h);
      const double ad = grads[static_cast<std::size_t>(p)].data<double>()[i];
      worst = std::max(worst, std::abs(fd - ad) / std::max(1.0, std::abs(fd)));
    }
  }
  std::printf("mean log-likelihood at the start: %.6f\n", ll.item<double>());
  std::printf("gradient vs central differences, %lld parameters: max relative error %.2e\n",
              static_cast<long long>(a.numel() + m.numel() + q.numel()), worst);
  if (worst > 1e-6) {
    std::printf("FAILED: the gradient does not match finite differences\n");
    return 1;
  }

  // Gradient ascent.
  const double rate = 0.1;
  double last = ll.item<double>();
  for (int step = 1; step <= 200; ++step) {
    auto [v, g] = objective(a, m, q, data);
    last = v.item<double>();
    tf::Tensor* ps[] = {&a, &m, &q};
    for (int p = 0; p < 3; ++p) {
      for (std::int64_t i = 0; i < ps[p]->numel(); ++i) ps[p]->data<double>()[i] += rate * g[static_cast<std::size_t>(p)].data<double>()[i];
    }
    if (step % 40 == 0) std::printf("step %3d: mean log-likelihood %.6f\n", step, last);
  }
  if (!(last > ll.item<double>())) {
    std::printf("FAILED: the log-likelihood did not increase\n");
    return 1;
  }
  std::printf("fitted means (the data's centers: (0, 0, 0), (4, 4, 0), (-4, 2, 3); noise 0.8, so the best\n"
              "mean log-likelihood is near -1.5 log(2 pi 0.64) - 1.5 + log(1/3) = -4.69):\n");
  for (std::int64_t k = 0; k < kComponents; ++k) {
    std::printf("  %8.3f %8.3f %8.3f\n", m.data<double>()[k * kDim], m.data<double>()[k * kDim + 1],
                m.data<double>()[k * kDim + 2]);
  }
  return 0;
}
