#pragma once
// Onsager's exact solution of the 2-D Ising model (H = -sum s_i s_j, J = 1, coupling K = J/T) on
// the infinite square lattice, in plain double arithmetic: the free energy per site lnZ/N, the
// energy per site u = -d(lnZ/N)/dK and the specific heat per site c = K^2 d^2(lnZ/N)/dK^2.
//
//   lnZ/N = ln(2 cosh 2K) + (1/pi) int_0^{pi/2} ln((1 + sqrt(cos^2 t + k'^2 sin^2 t)) / 2) dt
//   u     = -coth 2K [1 + (2/pi) q K(k)]
//   c     = K^2 { -(2 / sinh^2 2K) [1 + (2/pi) q K(k)]
//                 + (2/pi) [8 K(k) / cosh^2 2K - (2 cosh^2 2K / sinh^2 2K) (E(k) - k'^2 K(k))] }
// with k = 2 sinh 2K / cosh^2 2K, q = 2 tanh^2 2K - 1 and k' = sqrt(1 - k^2) = |q| (computed as |q|,
// without the cancellation of 1 - k^2 near K_c), and the complete elliptic integrals of the first
// and second kind K(k), E(k) (modulus k) by the arithmetic-geometric mean. c is -K^2 du/dK
// differentiated in closed form (dK/dk = (E - k'^2 K) / (k k'^2), dk/dK = -4 q / cosh 2K). The
// same formulas are in bench/peers/trg_torch.py, checked there against mpmath to 1e-15 (lnZ/N, u)
// and 1e-13 (c).
//
// The integrand is smooth except near t = pi/2 when k -> 1 (K -> K_c), where it has branch points
// at distance k' from the real axis. The quadrature is therefore a 20-point Gauss-Legendre rule on
// panels graded geometrically toward pi/2 (in phi = pi/2 - t: [h/2^(j+1), h/2^j], j = 0..59, and
// [0, h/2^60], h = pi/2): every panel is at least its own width away from the branch points, so
// each is accurate to about 1e-20 and the sum to rounding, for every K > 0.
#include <array>
#include <cmath>
#include <limits>
#include <utility>

namespace ising {

/// ln(1 + sqrt 2) / 2, the critical coupling.
inline const double kCriticalCoupling = 0.5 * std::log(1.0 + std::sqrt(2.0));

/// Nodes (in (-1, 1)) and weights of the N-point Gauss-Legendre rule, by Newton's iteration on
/// the Legendre recurrence from the Chebyshev-like initial guesses.
template <int N>
std::pair<std::array<double, N>, std::array<double, N>> gauss_legendre() {
  std::array<double, N> x{}, w{};
  for (int i = 0; i < (N + 1) / 2; ++i) {
    double z = std::cos(M_PI * (i + 0.75) / (N + 0.5)), dp = 0.0;
    for (int iter = 0; iter < 100; ++iter) {
      double p0 = 1.0, p1 = z;  // P_0, P_1, then P_{n-1}, P_n
      for (int n = 2; n <= N; ++n) {
        const double p2 = ((2.0 * n - 1.0) * z * p1 - (n - 1.0) * p0) / n;
        p0 = p1;
        p1 = p2;
      }
      dp = N * (z * p1 - p0) / (z * z - 1.0);  // P_N'(z)
      const double step = p1 / dp;
      z -= step;
      if (std::abs(step) < 1e-16) break;
    }
    x[i] = -z;
    x[N - 1 - i] = z;
    w[i] = w[N - 1 - i] = 2.0 / ((1.0 - z * z) * dp * dp);
  }
  return {x, w};
}

/// (K(k), E(k)) of modulus k, given k' = sqrt(1 - k^2) > 0: K = pi / (2 AGM(1, k')),
/// E = K (1 - sum_n 2^(n-1) c_n^2) with c_0 = k, c_{n+1} = (a_n - b_n) / 2.
inline std::pair<double, double> elliptic_ke(double kp) {
  double a = 1.0, b = kp, power = 0.5, total = 0.5 * (1.0 - kp * kp);
  for (int i = 0; i < 64 && std::abs(a - b) > 1e-16 * a; ++i) {
    const double c = 0.5 * (a - b), an = 0.5 * (a + b);
    b = std::sqrt(a * b);
    a = an;
    power *= 2.0;
    total += power * c * c;
  }
  const double big_k = M_PI / (2.0 * a);
  return {big_k, big_k * (1.0 - total)};
}

/// lnZ/N, u and c at coupling K > 0.
struct Exact {
  double lnz, u, c;
};

inline Exact onsager(double K) {
  static const auto rule = gauss_legendre<20>();
  const double sh = std::sinh(2 * K), ch = std::cosh(2 * K), th = std::tanh(2 * K);
  const double q = 2.0 * th * th - 1.0, kp = std::abs(q);
  // (1/pi) int_0^{pi/2} ln((1 + sqrt(sin^2 phi + k'^2 cos^2 phi)) / 2) dphi, phi = pi/2 - t.
  double integral = 0.0, hi = 0.5 * M_PI;
  for (int j = 0; j <= 60; ++j) {
    const double lo = j < 60 ? 0.5 * hi : 0.0, half = 0.5 * (hi - lo), mid = 0.5 * (hi + lo);
    for (int i = 0; i < 20; ++i) {
      const double s = std::sin(mid + half * rule.first[i]), s2 = s * s;
      integral += half * rule.second[i] * std::log(0.5 * (1.0 + std::sqrt(s2 + kp * kp * (1.0 - s2))));
    }
    hi = lo;
  }
  Exact e{std::log(2.0 * ch) + integral / M_PI, 0.0, 0.0};
  if (kp == 0.0) {  // K = K_c: q K(k) -> 0 while K(k) diverges, and so does c
    e.u = -1.0 / th;
    e.c = std::numeric_limits<double>::infinity();
    return e;
  }
  const auto [big_k, big_e] = elliptic_ke(kp);
  e.u = -(1.0 + (2.0 / M_PI) * q * big_k) / th;
  e.c = K * K *
        (-(2.0 / (sh * sh)) * (1.0 + (2.0 / M_PI) * q * big_k) +
         (2.0 / M_PI) * (8.0 * big_k / (ch * ch) - (2.0 * ch * ch / (sh * sh)) * (big_e - kp * kp * big_k)));
  return e;
}

}  // namespace ising
