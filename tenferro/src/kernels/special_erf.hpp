#pragma once
// The error-function family that libm lacks: erfinv, erfcinv and erfcx; double
// versions plus float overloads that evaluate in double and round once. Errors
// are in ulp of the correctly rounded result, against 256-320 bit MPFR
// references in tests/special_scalar_test.cpp, which asserts the bounds below
// ("measured": worst over its sweeps and over a run with 10x as many points).
// Needs IEEE arithmetic (no -ffast-math).
//
// erfcx(x) = exp(x^2) erfc(x), decreasing from +inf at -inf to +0 at +inf;
//   erfcx(0) = 1, NaN -> NaN; ~ 1 / (x sqrt(pi)) for large x (subnormal beyond
//   3e307, never 0 for finite x); overflows to +inf only where 2 exp(x^2) does
//   (x < -26.6287). y = erfcx solves y' = 2 x y - 2/sqrt(pi), so its Taylor
//   coefficients at x0 obey c_1 = 2 x0 c_0 - 2/sqrt(pi),
//   (n+1) c_{n+1} = 2 x0 c_n + 2 c_{n-1}.
//   -2.125 < x < 3.125: that series around the nearest node x0 = i/4 (h = x - x0
//   exact, |h| <= 1/8), c_0 = erfcx(x0) from a table (MPFR, hi + lo), c_1 in
//   double-double (2 x0 c_0 and 2/sqrt(pi) cancel to ~1/20 near x0 = 3), 18
//   terms (truncation < 2^-60). A rounding error in c_n spreads like the
//   homogeneous solution exp(x^2 - x0^2), by at most e^(2 |x0| / 8): harmless
//   for x0 > 0, and for x0 < 0 (terms alternating, sum up to e^(|x0|/2) times
//   the value) the reason the series stops at -2.125.
//   x >= 3.125: Laplace's continued fraction (even part) erfcx(x) =
//   (1/sqrt(pi)) / (x + (1/2 - t_1) / x), t_k = k (k - 1/2) / (x^2 + 2k + 1/2 -
//   t_(k+1)), 4 + 150/x^2 levels (< 2^-60; measured 2^-60 needs 18 at x = 3).
//   x <= -2.125: 2 exp(x^2) - erfcx(-x) (<= 0.2% of the result) with x^2 = h + l
//   exact (fma) and exp(x^2) = exp(h) (1 + l); libm's rounding of exp(h) is the
//   error, 1 ulp of the result where it and 2 exp(h) straddle a power of two.
//   Accuracy: x > -2.125 <= 1.2 ulp (measured 0.99; 0.54 for x >= 0); x <= -2.125
//   <= 1.6 ulp (measured 1.49 at those power-of-two crossings, 1.0 elsewhere);
//   float <= 0.51 ulp (measured 0.500).
//
// erfinv(y): erf(erfinv(y)) = y on [-1, 1]; +-1 -> +-inf, |y| > 1 -> NaN, +-0 ->
//   +-0. |y| < 2^-30: (sqrt(pi)/2) y (next term < 2^-62 relative). |y| >= 1/2:
//   erfcinv(1 - |y|) (1 - |y| exact). Otherwise a start from M. Giles' single
//   precision polynomials ("Approximating the erfinv function", GPU Computing
//   Gems, 2011; published coefficients), then Halley steps on erf(x) - |y| with
//   erf's power series in double-double (erf_parts).
//   Accuracy: <= 2 ulp (measured 1.24, at |y| just above 3/4: erfcinv's q just
//   below 1/4), subnormal y and y within 1e-16 of +-1 included; float <= 0.51
//   ulp (measured 0.500).
//
// erfcinv(q): erfc(erfcinv(q)) = q on [0, 2]; 0 (and -0) -> +inf, 2 -> -inf,
//   1 -> +0, q < 0, q > 2, NaN -> NaN. q in [1/2, 3/2]: erfinv(1 - q); q > 3/2:
//   -erfcinv(2 - q) (both differences exact, Sterbenz). q < 1/2, where 1 - q is
//   not exact (and for q < 2^-54 not even distinct from 1): the exact q into
//   erfinv's start (Giles' polynomial with w = -log(q (2 - q)), or for w > 16
//   the asymptotic erfc solved for x), then Halley steps on erfc(x) - q with
//   erfc(x) = (1 - q) - erf(x) by the series for q >= 1/4 (x < 0.82), else
//   exp(-x^2) erfcx(x) with x^2 as h + l, both scaled by 2^1000 for q < 2^-900
//   (erfc stays a normal number down to q = 2^-1074; the scaling is exact).
//   Accuracy: <= 2 ulp (measured 1.21, at q just below 1/4, where libm's
//   rounding of exp(-x^2) is the error), subnormal q and q within 1e-16 of 2
//   included; float <= 0.51 ulp (measured 0.500).
#include <cmath>
#include <limits>

namespace tenferro::special {
namespace erf_detail {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr double kInf = std::numeric_limits<double>::infinity();
// 2/sqrt(pi), 1/sqrt(pi), ln 2 as hi + lo.
inline constexpr double kTwoInvSqrtPiHi = 1.1283791670955126, kTwoInvSqrtPiLo = 1.533545961316588e-17;
inline constexpr double kInvSqrtPiHi = 0.5641895835477563, kInvSqrtPiLo = 7.6677298065829406e-18;
inline constexpr double kLn2Hi = 0.6931471805599453, kLn2Lo = 2.3190468138462996e-17;

struct DD { double hi, lo; };  // unevaluated sum hi + lo

// Error-free a + b = hi + lo (Knuth's TwoSum).
inline DD two_sum(double a, double b) {
  const double s = a + b, bb = s - a;
  return {s, (a - (s - bb)) + (b - bb)};
}
inline DD square(double x) {  // x^2 = hi + lo exactly (unless it overflows)
  const double h = x * x;
  return {h, std::fma(x, x, -h)};
}

// erfcx(i/4), i = -8..12: MPFR at 320 bits, rounded to hi, the rest to lo.
inline constexpr DD kErfcxNodes[21] = {
    {108.94090438997797, -7.9772421982943427e-16},    {42.476913283509248, 2.7684640231455411e-15},
    {18.653886256262734, 2.7154698835576695e-16},     {9.1736434474828439, 5.5213281940091452e-16},
    {5.0089800807622833, 1.7287133860002015e-16},     {3.0031716636274521, 1.7166132816177178e-16},
    {1.952360489182557, 9.1478911859592248e-17},      {1.3586423701047221, 7.2281992344841789e-18},
    {1, 0},
    {0.77034654773099676, -1.1815041295276343e-17},   {0.6156903441929259, -2.312175868623341e-17},
    {0.50693765029314486, -5.335681035462232e-17},    {0.427583576155807, 5.2357372833142282e-18},
    {0.36782291645236109, 1.387401093925035e-19},     {0.32158541645431749, 1.7007985607722196e-17},
    {0.28497223473743638, 8.539813023973122e-18},     {0.25539567631050575, -4.2760222901659459e-18},
    {0.23108725873039188, -5.74762364596782e-18},     {0.21080636406114359, -5.6277259093102524e-18},
    {0.19366209627906869, -1.2015846532739174e-17},   {0.17900115118138996, -5.4272175920200274e-18},
};

// erfcx(x) for -2.125 < x < 3.125 by the Taylor series at the nearest node.
inline double erfcx_taylor(double x) {
  const int i = static_cast<int>(std::lround(4 * x));  // -8..12
  const double x0 = 0.25 * i, h = x - x0, m = 2 * x0;  // h exact: Sterbenz, or x0 = 0
  const DD y0 = kErfcxNodes[i + 8];
  // c_1 = m y0 - 2/sqrt(pi) as c1 + c1lo.
  const double p = m * y0.hi;
  const DD d = two_sum(p, -kTwoInvSqrtPiHi);
  const double dlo = d.lo + (std::fma(m, y0.hi, -p) + m * y0.lo - kTwoInvSqrtPiLo);
  const double c1 = d.hi + dlo, c1lo = dlo - (c1 - d.hi);
  // sum_{n>=2} c_n h^n; the c_n decrease fast enough that the order does not matter.
  double prev = y0.hi, cur = c1, hn = h, sum = 0;
  for (int n = 1; n < 18; ++n) {
    const double next = (m * cur + 2 * prev) / (n + 1);
    prev = cur;
    cur = next;
    hn *= h;
    sum += cur * hn;
  }
  const double t = c1 * h, te = std::fma(c1, h, -t);
  const DD s = two_sum(y0.hi, t);
  return s.hi + (s.lo + (te + y0.lo + c1lo * h + sum));
}

// erfcx(x) for 3.125 <= x < inf by the continued fraction; the final division
// corrected for the rounding of the quotient and of 1/sqrt(pi).
inline double erfcx_cf(double x) {
  const double x2 = x * x;  // may overflow: the levels then vanish, as they should
  const int n = 4 + static_cast<int>(150 / x2);
  double t = 0;
  for (int k = n; k >= 1; --k) t = k * (k - 0.5) / (x2 + (2 * k + 0.5) - t);
  const DD d = two_sum(x, (0.5 - t) / x);
  const double r = kInvSqrtPiHi / d.hi;
  return r + (std::fma(-r, d.hi, kInvSqrtPiHi) + (kInvSqrtPiLo - r * d.lo)) / d.hi;
}

inline double erfcx_nonneg(double x) { return x < 3.125 ? erfcx_taylor(x) : erfcx_cf(x); }

// Starting value for erfinv(a) (0 <= a < 1, q = 1 - a, exact or not): Giles'
// single precision fit (~4e-7 relative for q >= 2^-24, w = -log(q (1 + a)) <=
// 16.6) or, beyond w = 16, the asymptotic erfc(x) ~ e^-x^2 / (x sqrt(pi)) (1 -
// 1/(2x^2) + 3/(4x^4)) = q solved for x^2 by fixed-point iteration (contracts
// by < 0.04; q only enters through log q, so it may be subnormal).
inline double erfinv_start(double a, double q) {
  double w = -std::log(q * (1.0 + a));
  double x = 0;
  if (w <= 16) {
    static constexpr double p1[9] = {2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                                     0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941};
    static constexpr double p2[9] = {-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
                                     0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682};
    const double* c = w < 5 ? p1 : p2;
    w = w < 5 ? w - 2.5 : std::sqrt(w) - 3;
    for (int i = 0; i < 9; ++i) x = x * w + c[i];
    return x * a;
  }
  const double L = -std::log(q);
  x = std::sqrt(L);
  for (int i = 0; i < 3; ++i) {
    const double t = 1.0 / (x * x);
    x = std::sqrt(L + std::log(kInvSqrtPiHi / x) + std::log1p(t * (0.75 * t - 0.5)));
  }
  return x;
}

// erf(x) = p + (pq + rest) for 0 <= x < 0.82: erf(x) = K x (1 + Q), K = 2/sqrt(pi),
// Q = -x^2/3 + sum_{k>=2} (-x^2)^k / (k! (2k+1)) (-0.19 < Q <= 0; 18 terms: < 1e-20),
// p = K x rounded, pq = p Q rounded; K, x^2/3 and the products are carried in
// double-double, so only the sum (|.| < x^4/10) rounds in double: ~2^-60 of erf.
// Near a root of erf(x) - a or erfc(x) - q the differences with p and pq below
// are exact or nearly so: better than std::erf/erfc's ~1 ulp, which can be 2 ulp
// of x (x's binade may be narrower than a's or q's).
struct ErfParts { double p, pq, rest; };
inline ErfParts erf_parts(double x) {
  const DD x2 = square(x);
  double term = 0.5 * x2.hi * x2.hi, sum = term / 5;
  for (int k = 3; k <= 18; ++k) {
    term *= -x2.hi / k;
    sum += term / (2 * k + 1);
  }
  const double third = x2.hi / 3, third_lo = (std::fma(-third, 3, x2.hi) + x2.lo) / 3;
  const DD q = two_sum(-third, sum);  // Q = q.hi + (q.lo - third_lo)
  const double p = kTwoInvSqrtPiHi * x, pe = std::fma(kTwoInvSqrtPiHi, x, -p) + kTwoInvSqrtPiLo * x;
  const double pq = p * q.hi;
  return {p, pq, (std::fma(p, q.hi, -pq) + pe) + p * (q.lo - third_lo)};
}
// erf(x) - a, 0 < a < 1/2 (p - a and its sum with pq exact, Sterbenz).
inline double erf_minus(double x, double a) {
  const ErfParts e = erf_parts(x);
  return ((e.p - a) + e.pq) + e.rest;
}
// erfc(x) - q = (1 - q) - erf(x), 1/4 <= q <= 1/2 (x < 0.82): p - 1 is exact (p in
// [1/2, 1]), its sum with q is carried as hi + lo, and adding pq is exact near
// the root (Sterbenz).
inline double erfc_minus(double x, double q) {
  const ErfParts e = erf_parts(x);
  const DD s = two_sum(e.p - 1, q);
  return -((s.hi + e.pq) + (s.lo + e.rest));
}

// erfcinv(q) for 0 < q <= 1/2 (x >= 0.4769). Halley on f = 2^s (erfc(x) - q):
// erfc_minus for q >= 1/4, else 2^s exp(-x^2) erfcx(x) - 2^s q; f'' = -2x f'
// gives the step f / (f' + x f); the error cubes per step: after a step below
// 2^-24 relative what remains is < 1e-19.
inline double erfcinv_small(double q) {
  const int s = q < 0x1p-900 ? 1000 : 0;
  const double qs = std::ldexp(q, s);                                  // exact
  const double p = s * kLn2Hi, pe = std::fma(s, kLn2Hi, -p) + s * kLn2Lo;  // s ln 2 = p + pe
  double x = erfinv_start(1.0 - q, q);
  for (int it = 0; it < 5; ++it) {
    const DD x2 = square(x);
    const DD e = two_sum(p, -x2.hi);
    const double ex = std::exp(e.hi) * (1 + ((e.lo + pe) - x2.lo));  // 2^s exp(-x^2)
    const double f = q >= 0.25 ? erfc_minus(x, q) : std::fma(ex, erfcx_nonneg(x), -qs);
    const double dx = f / (-kTwoInvSqrtPiHi * ex + x * f);
    x -= dx;
    if (std::fabs(dx) <= 0x1p-24 * x) break;
  }
  return x;
}

}  // namespace erf_detail

inline double erfcx(double x) {
  using namespace erf_detail;
  if (std::isnan(x)) return x;
  if (std::isinf(x)) return x > 0 ? 0.0 : kInf;
  if (x > -2.125) return x < 3.125 ? erfcx_taylor(x) : erfcx_cf(x);
  const DD x2 = square(x);
  const double e = 2 * std::exp(x2.hi);
  if (std::isinf(e)) return e;  // x < -26.63 (2 exp(x^2) > DBL_MAX), -inf handled above
  return e + std::fma(e, x2.lo, -erfcx_nonneg(-x));
}

inline double erfinv(double y) {
  using namespace erf_detail;
  const double a = std::fabs(y);
  if (!(a <= 1)) return std::isnan(y) ? y : kNaN;
  if (a == 1) return std::copysign(kInf, y);
  if (a == 0) return y;  // keeps the sign of zero
  // (sqrt(pi)/2) (y + (pi/12) y^3 + ...), constant as hi + lo for a ~0.5 ulp product.
  constexpr double c_hi = 0.886226925452758, c_lo = -3.8332932499128993e-17;
  if (a < 0x1p-30) return std::fma(y, c_hi, y * c_lo);
  if (a >= 0.5) return std::copysign(erfcinv_small(1.0 - a), y);  // 1 - a exact
  // Halley on f = erf(x) - a (f'' = -2x f' as for erfc).
  double x = erfinv_start(a, 1.0 - a);
  for (int it = 0; it < 5; ++it) {
    const double f = erf_minus(x, a);
    const double dx = f / (kTwoInvSqrtPiHi * std::exp(-x * x) + x * f);
    x -= dx;
    if (std::fabs(dx) <= 0x1p-24 * x) break;
  }
  return std::copysign(x, y);
}

inline double erfcinv(double q) {
  using namespace erf_detail;
  if (!(q >= 0 && q <= 2)) return std::isnan(q) ? q : kNaN;
  if (q == 0) return kInf;
  if (q == 2) return -kInf;
  if (q < 0.5) return erfcinv_small(q);
  if (q > 1.5) return -erfcinv_small(2.0 - q);  // exact
  return erfinv(1.0 - q);                       // exact; erfcinv(1) = +0
}

// float overloads: evaluate in double, round once.
inline float erfcx(float x) { return static_cast<float>(erfcx(static_cast<double>(x))); }
inline float erfinv(float y) { return static_cast<float>(erfinv(static_cast<double>(y))); }
inline float erfcinv(float q) { return static_cast<float>(erfcinv(static_cast<double>(q))); }

}  // namespace tenferro::special
