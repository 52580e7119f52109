// Dense Jacobians of small scientific functions (cases.hpp, run_jacobian_auto; part of the
// jacobian family): tf::jacobian's automatic mode against the better of jacfwd and jacrev, and,
// through torch_bench.py, PyTorch's torch.autograd.functional.jacobian (vectorize=True, the better
// of its forward and reverse strategies). Each function is evaluated at a batch of points, as
// scientific codes do; the Jacobian of the whole batch is dense in shape and block-structured in
// content, which neither extreme sees:
//   jacobian_black_scholes  call prices of 64 options from (S, K, T, r, sigma), x [5, 64]
//   jacobian_roe_flux       Roe's flux of the 1-D Euler equations at the 63 interfaces of 64 cells,
//                           U [64, 3] (density, momentum, energy; gamma = 1.4)
//   jacobian_robot_arm      end positions of a 6-joint arm (revolute joints about z, y, z, y, z, y,
//                           links of length 1) in 32 configurations, angles [32, 6]
//   jacobian_helmholtz      the Helmholtz free energy of 32 mixtures of 10 species (Griewank and
//                           Walther's test function; RT = 1, fixed b and symmetric A), x [32, 10]
//   jacobian_exp_sum, jacobian_sin_w_exp, jacobian_tall, jacobian_sorted: small dense Jacobians
//                           of exp(a) sum(a) (a [20]), sin(W exp(a)) (W 12 x 12), tanh^3(B a) (B
//                           200 x 3) and sort(a) sum(a) (a [20]), where the automatic mode weighs
//                           cross-country elimination against the better extreme
//   jacobian_bottleneck     a layer pair with a narrow middle, x [256] -> W1 (16 x 256) -> tanh(h)
//                           sin(h) + exp(h / 10) -> W2 (256 x 16): dense, without structure for
//                           the compressed modes; cross-country accumulation forms W2 D W1 without
//                           pushing a 256 x 256 identity through W1
// Lines: case=jacobian_<fn> impl=tenferro with mode= (the automatic choice; order= for
// cross-country), products=,
// ratio_vs_best_extreme and the extremes' times (jacfwd_s, jacrev_s); all three results are
// compared before timing (stderr on a difference above 1e-12 relative).
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "case_util.hpp"
#include "cases.hpp"
#include "tenferro/tenferro.hpp"

namespace tf = tenferro;
using T = tf::Traced;

namespace bench {
namespace {

T column(const T& m, std::int64_t j) {
  const std::int64_t rows = m.shape()[0];
  return tf::reshape(tf::slice(m, {0, j}, {rows, j + 1}), {rows});
}
T row(const T& m, std::int64_t i) {
  const std::int64_t cols = m.shape()[1];
  return tf::reshape(tf::slice(m, {i, 0}, {i + 1, cols}), {cols});
}
T stack_columns(const std::vector<T>& cols) {
  std::vector<T> parts;
  for (const T& c : cols) parts.push_back(tf::reshape(c, {c.shape()[0], 1}));
  return tf::concatenate(std::span<const T>(parts), 1);
}

T normal_cdf(const T& z) { return 0.5 * tf::erfc(z * (-1.0 / std::sqrt(2.0))); }

T black_scholes(const T& x) {
  const T s = row(x, 0), k = row(x, 1), t = row(x, 2), r = row(x, 3), sigma = row(x, 4);
  const T vol = sigma * tf::sqrt(t);
  const T d1 = (tf::log(s / k) + (r + 0.5 * sigma * sigma) * t) / vol;
  const T d2 = d1 - vol;
  return s * normal_cdf(d1) - k * tf::exp(-(r * t)) * normal_cdf(d2);
}

T roe_flux(const T& u) {
  constexpr double g = 1.4;
  const std::int64_t n = u.shape()[0];
  auto side = [&](std::int64_t from) { return tf::slice(u, {from, 0}, {from + n - 1, 3}); };
  const T l = side(0), r = side(1);
  struct State {
    T rho, m, e, vel, p, h;
  };
  auto state = [&](const T& s) {
    const T rho = column(s, 0), m = column(s, 1), e = column(s, 2);
    const T vel = m / rho;
    const T p = (g - 1.0) * (e - 0.5 * rho * vel * vel);
    return State{rho, m, e, vel, p, (e + p) / rho};
  };
  const State a = state(l), b = state(r);
  const T sa = tf::sqrt(a.rho), sb = tf::sqrt(b.rho);
  const T ut = (sa * a.vel + sb * b.vel) / (sa + sb), ht = (sa * a.h + sb * b.h) / (sa + sb);
  const T ct = tf::sqrt((g - 1.0) * (ht - 0.5 * ut * ut)), rhot = sa * sb;
  const T dp = b.p - a.p, du = b.vel - a.vel, drho = b.rho - a.rho;
  const T a1 = (dp - rhot * ct * du) / (2.0 * ct * ct), a2 = drho - dp / (ct * ct), a3 = (dp + rhot * ct * du) / (2.0 * ct * ct);
  const T w1 = tf::abs(ut - ct) * a1, w2 = tf::abs(ut) * a2, w3 = tf::abs(ut + ct) * a3;
  const T f0 = 0.5 * (a.m + b.m) - 0.5 * (w1 + w2 + w3);
  const T f1 = 0.5 * (a.m * a.vel + a.p + b.m * b.vel + b.p) - 0.5 * (w1 * (ut - ct) + w2 * ut + w3 * (ut + ct));
  const T f2 = 0.5 * (a.vel * (a.e + a.p) + b.vel * (b.e + b.p)) - 0.5 * (w1 * (ht - ut * ct) + w2 * 0.5 * ut * ut + w3 * (ht + ut * ct));
  return stack_columns({f0, f1, f2});
}

T robot_arm(const T& angles) {
  const std::int64_t k = angles.shape()[0];
  // R as nine [k] entries, row-major; p as three.
  std::vector<T> rot;
  const T zero = tf::full_like(column(angles, 0), 0.0), one = tf::full_like(zero, 1.0);
  rot = {one, zero, zero, zero, one, zero, zero, zero, one};
  std::vector<T> p = {zero, zero, zero};
  for (std::int64_t j = 0; j < 6; ++j) {
    const T c = tf::cos(column(angles, j)), s = tf::sin(column(angles, j));
    // Rotation about z (even j) or y (odd j).
    const std::vector<T> q = j % 2 == 0 ? std::vector<T>{c, -s, zero, s, c, zero, zero, zero, one}
                                        : std::vector<T>{c, zero, s, zero, one, zero, -s, zero, c};
    std::vector<T> next;
    for (int a = 0; a < 3; ++a) {
      for (int b = 0; b < 3; ++b) {
        next.push_back(rot[a * 3] * q[b] + rot[a * 3 + 1] * q[3 + b] + rot[a * 3 + 2] * q[6 + b]);
      }
    }
    rot = next;
    for (int a = 0; a < 3; ++a) p[static_cast<std::size_t>(a)] = p[static_cast<std::size_t>(a)] + rot[a * 3];  // R [1, 0, 0]
  }
  (void)k;
  return stack_columns(p);
}

T helmholtz(const T& x, const tf::Tensor& b, const tf::Tensor& a) {
  const T bx = tf::matmul(x, tf::constant(x, b));                      // [k]
  const T xax = tf::sum(tf::matmul(x, tf::constant(x, a)) * x, {1});  // [k]
  const std::int64_t n = x.shape()[1];
  const T denominator = tf::broadcast_to(tf::reshape(1.0 - bx, {x.shape()[0], 1}), {x.shape()[0], n});
  const T entropy = tf::sum(x * tf::log(x / denominator), {1});
  const double s2 = std::sqrt(2.0);
  return entropy - xax / (std::sqrt(8.0) * bx) * tf::log((1.0 + (1.0 + s2) * bx) / (1.0 + (1.0 - s2) * bx));
}

tf::Tensor uniform(tf::Shape shape, double lo, double hi, std::mt19937& rng) {
  std::uniform_real_distribution<double> d(lo, hi);
  std::vector<double> v(static_cast<std::size_t>(tf::numel(shape)));
  for (double& e : v) e = d(rng);
  return tf::Tensor::from(v, std::move(shape));
}

void run_one(const Options& options, const std::string& name, const std::string& size, const std::function<T(const T&)>& f,
             const tf::Tensor& x) {
  const auto fwd = tf::jacfwd(f);
  const auto rev = tf::jacrev(f);
  const auto autoj = tf::jacobian(f);
  const tf::JacobianChoice choice = autoj.choice(x);
  const double diff = std::max(max_relative_difference({autoj(x)}, {fwd(x)}), max_relative_difference({rev(x)}, {fwd(x)}));
  if (!(diff <= 1e-12)) report_failed_check("%s: the Jacobians differ by %.3g relative", name.c_str(), diff);
  const std::vector<Measurement> m =
      measure({{"auto", [&] { autoj(x); }}, {"jacfwd", [&] { fwd(x); }}, {"jacrev", [&] { rev(x); }}}, options.budget_s);
  const double best = std::min(m[1].median_s, m[2].median_s);
  print_line(name, "tenferro", size, "f64", m[0].median_s, m[0].memory, m[0].repetitions,
             std::string(" mode=") + tf::jacobian_mode_name(choice.mode) +
                 (choice.mode == tf::JacobianMode::CrossCountry ? std::string(" order=") + tf::elimination_order_name(choice.order) : "") +
                 field("products", static_cast<double>(choice.products)) +
                 field("ratio_vs_best_extreme", m[0].median_s / best) + field("jacfwd_s", m[1].median_s) + field("jacrev_s", m[2].median_s));
}

}  // namespace

void run_jacobian_auto(const Options& options) {
  std::mt19937 rng(7);
  {
    // S in [80, 120], K in [90, 110], T in [0.25, 2], r in [0.01, 0.05], sigma in [0.1, 0.4].
    std::vector<tf::Tensor> rows = {uniform({1, 64}, 80, 120, rng), uniform({1, 64}, 90, 110, rng), uniform({1, 64}, 0.25, 2, rng),
                                    uniform({1, 64}, 0.01, 0.05, rng), uniform({1, 64}, 0.1, 0.4, rng)};
    std::vector<double> v;
    for (const tf::Tensor& r : rows) v.insert(v.end(), r.data<double>(), r.data<double>() + 64);
    run_one(options, "jacobian_black_scholes", "64", black_scholes, tf::Tensor::from(v, {5, 64}));
  }
  {
    // A smooth subsonic state: density 1 + 0.2 sin, velocity 0.3 + 0.1 cos, pressure 1 + 0.1 sin.
    std::vector<double> v;
    for (int i = 0; i < 64; ++i) {
      const double rho = 1 + 0.2 * std::sin(0.3 * i), vel = 0.3 + 0.1 * std::cos(0.2 * i), p = 1 + 0.1 * std::sin(0.5 * i);
      v.insert(v.end(), {rho, rho * vel, p / 0.4 + 0.5 * rho * vel * vel});
    }
    run_one(options, "jacobian_roe_flux", "64", roe_flux, tf::Tensor::from(v, {64, 3}));
  }
  run_one(options, "jacobian_robot_arm", "32", robot_arm, uniform({32, 6}, -1.5, 1.5, rng));
  {
    const tf::Tensor b = uniform({10}, 0.5, 1.5, rng);
    tf::Tensor a = uniform({10, 10}, 0.0, 1.0, rng);
    double* pa = a.data<double>();
    for (int i = 0; i < 10; ++i) {
      for (int j = 0; j < i; ++j) pa[i * 10 + j] = pa[j * 10 + i];
    }
    const tf::Tensor x = uniform({32, 10}, 0.01, 0.06, rng);  // b^T x < 1
    run_one(options, "jacobian_helmholtz", "32", [&](const T& v) { return helmholtz(v, b, a); }, x);
  }
  {
    const tf::Tensor w1 = uniform({16, 256}, -0.1, 0.1, rng), w2 = uniform({256, 16}, -0.5, 0.5, rng);
    auto bottleneck = [&](const T& x) {
      const T h = tf::matmul(tf::constant(x, w1), x);
      return tf::matmul(tf::constant(x, w2), tf::tanh(h) * tf::sin(h) + tf::exp(h * 0.1));
    };
    run_one(options, "jacobian_bottleneck", "256", bottleneck, uniform({256}, -1, 1, rng));
  }
  // Small dense Jacobians where the choice is between the better extreme and cross-country
  // (docs/tenferro.md, "Cross-country Jacobians"): taken for the first three, not for the sort.
  run_one(options, "jacobian_exp_sum", "20", [](const T& a) { return tf::exp(a) * tf::sum(a); }, uniform({20}, -1, 1, rng));
  {
    const tf::Tensor w = uniform({12, 12}, -0.5, 0.5, rng);
    run_one(options, "jacobian_sin_w_exp", "12", [&](const T& a) { return tf::sin(tf::matmul(tf::constant(a, w), tf::exp(a))); },
            uniform({12}, -1, 1, rng));
  }
  {
    const tf::Tensor b = uniform({200, 3}, -0.5, 0.5, rng);
    run_one(options, "jacobian_tall", "3", [&](const T& a) { return tf::tanh(tf::tanh(tf::tanh(tf::matmul(tf::constant(a, b), a)))); },
            uniform({3}, -1, 1, rng));
  }
  run_one(options, "jacobian_sorted", "20", [](const T& a) { return tf::sort(a, 0) * tf::sum(a); }, uniform({20}, -1, 1, rng));
}

}  // namespace bench
