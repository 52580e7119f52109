#pragma once
// Scalar special functions that neither libm nor SLEEF provide.
//
// Every function has a double version and a float overload that evaluates the
// double version and rounds once. Errors are in ulp of the correctly rounded
// result, measured against MPFR (256-400 bit references) by
// tenferro/tests/special_scalar_test.cpp; "bound" is what that test asserts.
//
// digamma(x) = psi(x) = d/dx log Gamma(x)
//   Domain: all x except the poles 0, -1, -2, ...  Special values: psi(+0) = -inf,
//   psi(-0) = +inf, psi(negative integer) = NaN, psi(+inf) = +inf,
//   psi(-inf) = NaN, NaN -> NaN.
//   Method: x >= 10: asymptotic series ln x - 1/(2x) - sum_k B_2k / (2k x^2k).
//   0 < x < 10: psi(x) = (x - x0) * S(x) with x0 = 1.46163... the positive root
//   and S(x) = sum_{k>=0} 1/((x+k)(x0+k)) (all terms positive; the tail from
//   k = 10 on is the asymptotic series' divided difference), so the result has
//   a small *relative* error even at the root. x < 0: reflection
//   psi(x) = psi(1 - x) - pi cot(pi x) with cot(pi x) from x reduced mod 1.
//   Accuracy: x > 0: <= 3 ulp measured 1.6 (double), 0.5 (float), including
//   the neighbourhood of the root. x < 0: the two reflection terms cancel near
//   the negative roots, so the error is bounded by 4 ulp of
//   |psi(1-x)| + |pi cot(pi x)| (measured 1.3).
//
// polygamma(n, x) = d^n/dx^n psi(x) = (-1)^(n+1) n! zeta(n+1, x) (n >= 1)
//   n == 0 is digamma; n < 0 -> NaN. x at a pole (0, -1, ...) or -inf -> NaN,
//   +inf -> +-0 (sign of (-1)^(n+1)), NaN -> NaN.
//   Method: x > 0: Euler-Maclaurin summation of the Hurwitz zeta function: the
//   first N terms (x+k)^-(n+1) summed directly until x + N >= 10 + n, then the
//   integral, the half term and 12 Bernoulli corrections (truncation < 3e-19
//   relative for all n). The power of two of x is factored out and n! is kept
//   as (mantissa, exponent), so nothing overflows or underflows unless the
//   result does (tested n <= 30; valid while (n+1) < 1022, i.e. n <= 1000).
//   x < 0 (non-integer): with r = x - floor(x) in (0, 1) the exact identity
//   psi^(n)(x) = psi^(n)(r) + (-1)^(n+1) [psi^(n)(1-r) - psi^(n)(1-x)]
//   needs only positive arguments (no cot derivatives); for even n the terms
//   cancel near the roots, so the error is bounded relative to
//   n! sum_k |x+k|^-(n+1).
//   Accuracy (n = 1..4, 10): x > 0: <= 4 ulp, measured 2.3; x < 0: <= 6 ulp of
//   the scale above, measured 2.7; float <= 0.51 ulp (x > 0).
//
// erfinv(y): the x with erf(x) = y, y in [-1, 1]. erfinv(+-1) = +-inf,
//   |y| > 1 -> NaN, erfinv(+-0) = +-0, NaN -> NaN.
//   Method: |y| < 2^-30: x = (sqrt(pi)/2) y (the cubic term is < 2^-62
//   relative). Otherwise M. Giles' single precision approximation ("Approximating
//   the erfinv function", GPU Computing Gems, 2011; published coefficients)
//   followed by Halley steps on erf(x) - |y| (|y| < 0.5) or on
//   erfc(x) - (1 - |y|) (|y| >= 0.5, where 1 - |y| is exact), until a step is
//   below 2^-24 relative (normally two steps).
//   Accuracy: <= 2 ulp, measured 1.1 (double), 0.5 (float), including y within
//   1e-16 of +-1 and subnormal y.
//
// bessel_i0(x), bessel_i1(x): modified Bessel functions of the first kind
//   I_nu(x) = sum_k (x/2)^(2k+nu) / (k! (k+nu)!). I0 is even, I1 is odd.
// bessel_i0e(x) = exp(-|x|) I0(x), bessel_i1e(x) = exp(-|x|) I1(x).
//   I0(+-inf) = +inf, I1(+-inf) = +-inf, i0e(+-inf) = +0, i1e(+-inf) = +-0,
//   NaN -> NaN. i0/i1 overflow to inf only where the true value does
//   (|x| > ~713.98); i0e/i1e are finite for every finite x.
//   Method: |x| < 20: the power series (positive terms, no cancellation).
//   |x| >= 20: Hankel's asymptotic expansion
//   I_nu(x) ~ e^x / sqrt(2 pi x) sum_k (-1)^k a_k(nu) / x^k, whose smallest term
//   at x = 20 is ~1e-17 relative (at x = 18 it is 3e-17, too large).
//   Accuracy: <= 3 ulp, measured 1.8 (i0), 1.9 (i0e), 2.0 (i1), 2.0 (i1e) in
//   double; 0.5 in float.
#include <cmath>
#include <limits>
#include <numbers>

namespace tenferro::special {
namespace detail {

inline constexpr double kPi = std::numbers::pi;
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr double kInf = std::numeric_limits<double>::infinity();

// Bernoulli numbers B_2, B_4, ..., B_24 (exact rationals, numerator/denominator).
inline constexpr double kBernoulliNum[12] = {1, -1, 1, -1, 5, -691, 7, -3617, 43867, -174611, 854513, -236364091};
inline constexpr double kBernoulliDen[12] = {6, 30, 42, 30, 66, 2730, 6, 510, 798, 330, 138, 2730};

// Error-free a + b = s + e (Knuth's TwoSum).
inline void two_sum(double a, double b, double& s, double& e) {
  s = a + b;
  const double bb = s - a;
  e = (a - (s - bb)) + (b - bb);
}

// cot(pi r) for r in [-1/2, 1/2], r != 0. sin/cos only ever see arguments in
// [0, pi/4], where both have a small relative error.
inline double cot_pi(double r) {
  const double t = std::fabs(r);
  double c, s;
  if (t <= 0.25) {
    c = std::cos(kPi * t);
    s = std::sin(kPi * t);
  } else {
    const double u = 0.5 - t;  // exact (Sterbenz)
    c = std::sin(kPi * u);
    s = std::cos(kPi * u);
  }
  return std::copysign(c / s, r);
}

// psi(x) for x >= 1e-300 (finite or +inf).
inline double digamma_pos(double x) {
  if (x >= 10) {
    // Asymptotic series; 10 terms reach 3e-19 relative at x = 10.
    const double w = 1.0 / (x * x);
    double s = 0;
    for (int k = 9; k >= 0; --k) s = s * w + kBernoulliNum[k] / (kBernoulliDen[k] * (2 * k + 2));
    return std::log(x) - (0.5 / x + s * w);
  }
  // psi(x) - psi(x0) = (x - x0) S(x), S(x) = sum_{k>=0} 1 / ((x+k)(x0+k)).
  constexpr double x0_hi = 1.4616321449683622, x0_lo = 9.549995429965697e-17;
  constexpr int N = 10;
  const double d = (x - x0_hi) - x0_lo;  // x - x0 to a relative error ~1e-16
  // Tail T = (psi(a) - psi(b)) / d with a = x + N, b = x0 + N >= 10, from the
  // asymptotic series term by term:
  //   (ln a - ln b) / d = log1p(d / b) / d,  -(1/(2a) - 1/(2b)) / d = 1/(2ab),
  //   (a^-2k - b^-2k) / d = -u v h_{2k-1}(u, v), u = 1/a, v = 1/b,
  // where h_m(u, v) = sum_{i=0}^m u^(m-i) v^i (h_m = u h_{m-1} + v^m).
  const double a = x + N, b = x0_hi + N, u = 1.0 / a, v = 1.0 / b;
  double h = 1, vm = 1, bern = 0;
  for (int k = 1; k <= 10; ++k) {
    for (int step = k == 1 ? 1 : 2; step > 0; --step) {  // h_{2k-3} -> h_{2k-1}
      vm *= v;
      h = u * h + vm;
    }
    bern += kBernoulliNum[k - 1] / (kBernoulliDen[k - 1] * (2 * k)) * h;
  }
  double s = std::log1p(d / b) / d + u * v * (0.5 + bern);
  // Direct terms 1/((x+k)(x0+k)), each corrected to first order for the
  // rounding of x + k, x0 + k, their product and the reciprocal (~1e-32).
  for (int k = N - 1; k >= 0; --k) {
    double p, pe, c, ce;
    two_sum(x, k, p, pe);
    two_sum(x0_hi, k, c, ce);
    ce += x0_lo;
    const double m = p * c, me = std::fma(p, c, -m);
    const double t = 1.0 / m, te = std::fma(-t, m, 1.0);  // 1/m = t (1 + te + ...)
    s += std::fma(t, te - me / m - pe / p - ce / c, t);
  }
  return d * s;
}

// n! * zeta(n + 1, x + xlo) for n >= 1, x > 0, |xlo| <= ulp(x) / 2 (xlo lets
// callers pass an argument like 1 - x that is not a double).
inline double zeta_factorial(int n, double x, double xlo) {
  const double s = n + 1.0;
  // Direct terms until z = x + N >= 10 + n; there the 12 Bernoulli terms are
  // enough (the ratio of successive terms is about ((s + 2j) / (2 pi z))^2).
  const double zmin = 10.0 + n;
  const int N = x < zmin ? static_cast<int>(std::ceil(zmin - x)) : 0;
  const int e = std::ilogb(x);  // all powers are taken of v / 2^e (exact)
  double z, zlo;
  two_sum(x, N, z, zlo);
  zlo += xlo;
  // Tail: zeta(s, z) - sum of nothing = z^-n * R,
  // R = 1/n + 1/(2z) + sum_j B_2j / (2j)! (s)_{2j-1} z^-2j.
  const double w = 1.0 / (z * z);
  double poch = s, wj = w, fact2j = 2, corr = 0;
  for (int j = 1; j <= 12; ++j) {
    const double t = kBernoulliNum[j - 1] / (kBernoulliDen[j - 1] * fact2j) * (poch * wj);
    corr += t;
    if (std::fabs(t) < 0x1p-60 / n) break;
    poch *= (s + 2 * j - 1) * (s + 2 * j);
    fact2j *= (2 * j + 1) * (2 * j + 2);
    wj *= w;
  }
  const double R = 1.0 / n + (0.5 / z + corr);
  // (z + zlo)^-n = z^-n (1 - n zlo / z) to first order (zlo / z <= 2^-52).
  double p = std::pow(std::scalbn(z, -e), -n);
  double sum = std::fma(-p, n * zlo / z, p) * R;  // scaled by 2^(e n)
  int shift = -e * n;
  if (N > 0) {
    sum = std::scalbn(sum, e);  // now scaled by 2^(e s)
    shift = -e * (n + 1);
    for (int k = N - 1; k >= 0; --k) {  // smallest terms first
      double v, vlo;
      two_sum(x, k, v, vlo);
      vlo += xlo;
      p = std::pow(std::scalbn(v, -e), -s);
      sum += std::fma(-p, s * vlo / v, p);
    }
  }
  // n! as a double-double (exact for n <= 22, ~1e-32 beyond), rescaled so it
  // cannot overflow for large n.
  double fh = 1, fl = 0;
  int fe = 0;
  for (int k = 2; k <= n; ++k) {
    const double ph = fh * k, pe = std::fma(fh, k, -ph);
    two_sum(ph, fl * k + pe, fh, fl);
    if (fh > 0x1p600) { fh = std::scalbn(fh, -600); fl = std::scalbn(fl, -600); fe += 600; }
  }
  return std::scalbn(fh * sum + fl * sum, shift + fe);
}

// Power series sum_k q^k / (k! (k+nu)!), q = x^2 / 4, for 0 <= x < 20.
inline double bessel_series(int nu, double x) {
  const double q = 0.25 * x * x;
  double term = 1, sum = 1;
  for (int k = 1; term > 0x1p-56 * sum; ++k) {
    term *= q / (k * (k + nu));
    sum += term;
  }
  return sum;
}

// e^-x I_nu(x) for 20 <= x < inf from Hankel's expansion:
// sum_k t_k / sqrt(2 pi x), t_k = t_{k-1} ((2k-1)^2 - 4 nu^2) / (8 k x).
// For nu = 0 all terms are positive, for nu = 1 all terms after the first are
// negative, so the sum has no cancellation.
inline double bessel_asym_scaled(int nu, double x) {
  double term = 1, sum = 1;
  for (int k = 1; k < 40 && std::fabs(term) > 0x1p-56 * sum; ++k) {
    term *= ((2.0 * k - 1) * (2.0 * k - 1) - 4.0 * nu * nu) / (8.0 * k * x);
    sum += term;
  }
  // 2 pi x would overflow beyond ~2.8e307; scale by 1/16 (exact) instead.
  const double root = x > 1e300 ? 4 * std::sqrt(2 * kPi * (x / 16)) : std::sqrt(2 * kPi * x);
  return sum / root;
}

// e^x * r without overflowing early: for x > 700, e^x alone may overflow while
// e^x r is finite (r ~ 1/sqrt(2 pi x)), so multiply by e^(x/2) twice.
inline double times_exp(double r, double x) {
  if (x <= 700) return std::exp(x) * r;
  const double h = std::exp(0.5 * x);
  return (r * h) * h;
}

constexpr double kBesselAsymFrom = 20;

}  // namespace detail

inline double digamma(double x) {
  using namespace detail;
  if (std::isnan(x)) return x;
  // |x| < 1e-300 (and +-0): psi(x) = -1/x - gamma + O(x); gamma |x| is far
  // below half an ulp of 1/x. Also keeps pi x and x x0 below away from subnormals.
  if (std::fabs(x) < 1e-300) return -1.0 / x;
  if (x > 0) return digamma_pos(x);
  if (std::isinf(x) || x == std::floor(x)) return kNaN;  // poles (every |x| >= 2^52 is an integer)
  const double r = x - std::round(x);  // exact, in [-1/2, 1/2], cot(pi x) = cot(pi r)
  double y, ylo;
  two_sum(1.0, -x, y, ylo);  // 1 - x = y + ylo; psi(y + ylo) ~ psi(y) + ylo psi'(y)
  const double trigamma = (1.0 + (0.5 + 1.0 / (6 * y)) / y) / y;  // enough for a ~0.5 ulp correction
  return (digamma_pos(y) + ylo * trigamma) - kPi * cot_pi(r);
}

inline double polygamma(int n, double x) {
  using namespace detail;
  if (n < 0 || std::isnan(x)) return n < 0 ? kNaN : x;
  if (n == 0) return digamma(x);
  const double sign = n % 2 == 1 ? 1.0 : -1.0;  // (-1)^(n+1)
  if (x > 0) return std::isinf(x) ? sign * 0.0 : sign * zeta_factorial(n, x, 0.0);
  if (std::isinf(x) || x == std::floor(x)) return kNaN;  // -inf and the poles
  // r = x - floor(x) in (0, 1), 1 - r and 1 - x as unevaluated sums hi + lo
  // (x - floor(x) rounds for x in (-1/2, 0); 1 - r = (1 + floor(x)) - x).
  const double fl = std::floor(x);
  double r, r_lo, omr, omr_lo, omx, omx_lo;
  two_sum(x, -fl, r, r_lo);
  two_sum(1.0 + fl, -x, omr, omr_lo);
  two_sum(1.0, -x, omx, omx_lo);
  // psi^(n)(x) = (-1)^(n+1) n! [zeta(s, r) + (-1)^(n+1) (zeta(s, 1-r) - zeta(s, 1-x))]
  return sign * zeta_factorial(n, r, r_lo) +
         (zeta_factorial(n, omr, omr_lo) - zeta_factorial(n, omx, omx_lo));
}

inline double erfinv(double y) {
  using namespace detail;
  if (std::isnan(y)) return y;
  const double a = std::fabs(y);
  if (a > 1) return kNaN;
  if (a == 1) return std::copysign(kInf, y);
  if (a == 0) return y;  // keeps the sign of zero
  // erfinv(y) = (sqrt(pi)/2) (y + (pi/12) y^3 + ...); below 2^-30 the cubic term
  // is < 2^-62 relative. Two-term constant so the product is ~correctly rounded.
  constexpr double c_hi = 0.886226925452758, c_lo = -3.8332932499128993e-17;
  if (a < 0x1p-30) return std::fma(y, c_hi, y * c_lo);
  const double q = 1.0 - a;  // exact for a >= 0.5
  double w = -std::log((1.0 - a) * (1.0 + a));
  double x = 0;
  if (w <= 16) {
    // Giles' single precision approximation, relative error ~4e-7 where it was
    // fitted (1 - |y| >= 2^-24, i.e. w <= 16.6).
    static constexpr double p1[9] = {2.81022636e-08,  3.43273939e-07, -3.5233877e-06,
                                     -4.39150654e-06, 0.00021858087,  -0.00125372503,
                                     -0.00417768164,  0.246640727,    1.50140941};
    static constexpr double p2[9] = {-0.000200214257, 0.000100950558, 0.00134934322,
                                     -0.00367342844,  0.00573950773,  -0.0076224613,
                                     0.00943887047,   1.00167406,     2.83297682};
    const double* c = w < 5 ? p1 : p2;
    w = w < 5 ? w - 2.5 : std::sqrt(w) - 3;
    for (int i = 0; i < 9; ++i) x = x * w + c[i];
    x *= a;
  } else {
    // Deep tail (1 - |y| < 6e-8, where the fit above degrades): solve
    // erfc(x) = e^-x^2 / (x sqrt(pi)) (1 - 1/(2x^2) + 3/(4x^4)) = q for x^2 by
    // fixed-point iteration (contraction ~1/(2x^2) < 0.04; error ~1e-4).
    const double L = -std::log(q);
    x = std::sqrt(L);
    for (int i = 0; i < 3; ++i) {
      const double t = 1.0 / (x * x);
      x = std::sqrt(L + std::log(std::numbers::inv_sqrtpi / x) + std::log1p(t * (0.75 * t - 0.5)));
    }
  }
  // Halley on f(x) = erf(x) - a, or on erfc(x) - (1 - a) where the result is
  // ill-conditioned in erf (1 - a is exact for a >= 0.5). Both have
  // f'' = -2x f', so the step is f / (f' + x f). The error cubes per step;
  // after a step below 2^-24 relative the remaining error is < 1e-19.
  const bool tail = a >= 0.5;
  for (int it = 0; it < 5; ++it) {
    const double f = tail ? std::erfc(x) - q : std::erf(x) - a;
    const double fp = (tail ? -1.0 : 1.0) * (2 * std::numbers::inv_sqrtpi) * std::exp(-x * x);
    const double dx = f / (fp + x * f);
    x -= dx;
    if (std::fabs(dx) <= 0x1p-24 * x) break;
  }
  return std::copysign(x, y);
}

inline double bessel_i0(double x) {
  using namespace detail;
  const double ax = std::fabs(x);
  if (!(ax >= kBesselAsymFrom)) return std::isnan(x) ? x : bessel_series(0, ax);
  if (std::isinf(ax)) return kInf;
  return times_exp(bessel_asym_scaled(0, ax), ax);
}

inline double bessel_i0e(double x) {
  using namespace detail;
  const double ax = std::fabs(x);
  if (!(ax >= kBesselAsymFrom)) return std::isnan(x) ? x : std::exp(-ax) * bessel_series(0, ax);
  if (std::isinf(ax)) return 0.0;
  return bessel_asym_scaled(0, ax);
}

inline double bessel_i1(double x) {
  using namespace detail;
  const double ax = std::fabs(x);
  if (std::isnan(x)) return x;
  if (ax < kBesselAsymFrom) return std::copysign(0.5 * ax * bessel_series(1, ax), x);
  if (std::isinf(ax)) return x;
  return std::copysign(times_exp(bessel_asym_scaled(1, ax), ax), x);
}

inline double bessel_i1e(double x) {
  using namespace detail;
  const double ax = std::fabs(x);
  if (std::isnan(x)) return x;
  if (ax < kBesselAsymFrom) return std::copysign(std::exp(-ax) * (0.5 * ax * bessel_series(1, ax)), x);
  if (std::isinf(ax)) return std::copysign(0.0, x);
  return std::copysign(bessel_asym_scaled(1, ax), x);
}

// float overloads: evaluate in double, round once.
inline float digamma(float x) { return static_cast<float>(digamma(static_cast<double>(x))); }
inline float polygamma(int n, float x) { return static_cast<float>(polygamma(n, static_cast<double>(x))); }
inline float erfinv(float y) { return static_cast<float>(erfinv(static_cast<double>(y))); }
inline float bessel_i0(float x) { return static_cast<float>(bessel_i0(static_cast<double>(x))); }
inline float bessel_i0e(float x) { return static_cast<float>(bessel_i0e(static_cast<double>(x))); }
inline float bessel_i1(float x) { return static_cast<float>(bessel_i1(static_cast<double>(x))); }
inline float bessel_i1e(float x) { return static_cast<float>(bessel_i1e(static_cast<double>(x))); }

}  // namespace tenferro::special
