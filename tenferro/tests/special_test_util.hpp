#pragma once
// Shared helpers of the MPFR tests of the scalar special functions (special_scalar_test.cpp,
// special_erf_test.cpp): ulp measurement, random points and the MPFR references.
// Accuracy tests for kernels/special_scalar.hpp and kernels/special_erf.hpp against MPFR.
//
// Every reference is computed with 256-400 bits and then rounded to the target
// format (double or float); the error of a computed value is
//   |computed - exact| / ulp(exact),
// ulp(exact) being the spacing of the format at the correctly rounded value
// (2^(ilogb(r) - p + 1), or the smallest subnormal below the normal range).
// Where an implementation adds terms of opposite sign that cancel (digamma and
// polygamma at negative x, near their negative roots), the error is measured
// against ulp(scale) instead, with scale the sum of the magnitudes of the terms
// (documented in the header). The bounds asserted here are the ones stated in
// the header comments.
#include <gtest/gtest.h>
#include <mpfr.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <limits>
#include <memory>
#include <random>
#include <type_traits>
#include <vector>

#include "kernels/special_erf.hpp"
#include "kernels/special_scalar.hpp"

namespace sp = tenferro::special;

namespace tenferro::special_test {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// RAII mpfr_t.
struct Mp {
  mpfr_t v;
  explicit Mp(mpfr_prec_t prec = 256) { mpfr_init2(v, prec); }
  Mp(const Mp&) = delete;
  Mp& operator=(const Mp&) = delete;
  ~Mp() { mpfr_clear(v); }
};

// The references need exponents far outside double range (x^-31 at x = 1e300).
const bool kWideExponents = [] {
  mpfr_set_emin(mpfr_get_emin_min());
  mpfr_set_emax(mpfr_get_emax_max());
  return true;
}();

template <class T>
T round_to(mpfr_srcptr v) {
  if constexpr (std::is_same_v<T, float>) {
    return mpfr_get_flt(v, MPFR_RNDN);
  } else {
    return mpfr_get_d(v, MPFR_RNDN);
  }
}

template <class T>
double ulp_of(T r) {
  using L = std::numeric_limits<T>;
  r = std::fabs(r);
  if (r < L::min()) return static_cast<double>(L::denorm_min());
  return std::ldexp(1.0, std::ilogb(r) - (L::digits - 1));
}

// Error of `computed` in ulp of `exact` (or of `scale`, if given and larger).
template <class T>
double ulp_error(T computed, mpfr_srcptr exact, mpfr_srcptr scale = nullptr) {
  if (mpfr_nan_p(exact)) return std::isnan(computed) ? 0.0 : kInf;
  const T r = round_to<T>(exact);
  if (std::isinf(r) || !std::isfinite(computed)) return computed == r ? 0.0 : kInf;
  double u = ulp_of(r);
  if (scale != nullptr) {
    const T sr = round_to<T>(scale);
    u = std::max(u, std::isinf(sr) ? ulp_of(std::numeric_limits<T>::max()) : ulp_of(sr));
  }
  Mp diff(mpfr_get_prec(exact) + 64);
  mpfr_sub_d(diff.v, exact, static_cast<double>(computed), MPFR_RNDN);
  mpfr_abs(diff.v, diff.v, MPFR_RNDN);
  mpfr_div_d(diff.v, diff.v, u, MPFR_RNDN);
  return mpfr_get_d(diff.v, MPFR_RNDU);
}

// Largest error of a sweep and where it occurred.
struct Worst {
  const char* what;
  double ulp = 0;
  double at = kNaN;
  int count = 0;
  explicit Worst(const char* w) : what(w) {}
  void add(double err, double x) {
    ++count;
    if (!(err <= ulp)) {  // NaN errors must show up as a failure
      ulp = std::isnan(err) ? kInf : err;
      at = x;
    }
  }
  ~Worst() { std::printf("  [worst] %-28s %8.3f ulp at %-24.17g (%d points)\n", what, ulp, at, count); }
};

struct Rng {
  std::mt19937_64 g{0x5eed1234u};
  double uniform(double a, double b) { return std::uniform_real_distribution<double>(a, b)(g); }
  // 10^U(lo, hi)
  double log_uniform(double lo, double hi) { return std::pow(10.0, uniform(lo, hi)); }
  double sign() { return g() & 1 ? 1.0 : -1.0; }
};

// ---------------------------------------------------------------- references

// b_j = B_2j / (2j)! = (-1)^(j+1) 2 zeta(2j) / (2 pi)^(2j), j = 1..40, at 320 bits.
const std::vector<std::unique_ptr<Mp>>& bernoulli_ratios() {
  static const std::vector<std::unique_ptr<Mp>> table = [] {
    std::vector<std::unique_ptr<Mp>> t;
    Mp twopi(320), p(320);
    mpfr_const_pi(twopi.v, MPFR_RNDN);
    mpfr_mul_2ui(twopi.v, twopi.v, 1, MPFR_RNDN);
    for (unsigned j = 1; j <= 40; ++j) {
      auto b = std::make_unique<Mp>(320);
      mpfr_zeta_ui(b->v, 2 * j, MPFR_RNDN);
      mpfr_pow_ui(p.v, twopi.v, 2 * j, MPFR_RNDN);
      mpfr_div(b->v, b->v, p.v, MPFR_RNDN);
      mpfr_mul_si(b->v, b->v, j % 2 ? 2 : -2, MPFR_RNDN);
      t.push_back(std::move(b));
    }
    return t;
  }();
  return table;
}

// out = n! sum_{k>=0} (x+k)^-(n+1) (= (-1)^(n+1) psi^(n)(x)), abs_out = n! sum |x+k|^-(n+1),
// for n >= 1 and x not a non-positive integer, at 256 bits: the terms with
// x + k < z = 100 + 2n are summed directly (exact arguments), the rest by
// Euler-Maclaurin with 40 Bernoulli terms; successive corrections shrink by
// about ((n + 81) / (2 pi z))^2 < 0.02, so the truncation is < 1e-60.
void ref_zeta_factorial(mpfr_ptr out, mpfr_ptr abs_out, int n, double x) {
  const long s = n + 1;
  const double zref = 100.0 + 2 * n;
  const long N = x < zref ? static_cast<long>(std::ceil(zref - x)) : 0;
  Mp xm(256), t(256), sum(256), asum(256), z(256), zp(256), tail(256), poch(256), z2(256);
  mpfr_set_d(xm.v, x, MPFR_RNDN);
  mpfr_set_zero(sum.v, 1);
  mpfr_set_zero(asum.v, 1);
  for (long k = N - 1; k >= 0; --k) {
    mpfr_add_si(t.v, xm.v, k, MPFR_RNDN);  // exact: x has at most 53 significant bits
    mpfr_pow_si(t.v, t.v, -s, MPFR_RNDN);
    mpfr_add(sum.v, sum.v, t.v, MPFR_RNDN);
    mpfr_abs(t.v, t.v, MPFR_RNDN);
    mpfr_add(asum.v, asum.v, t.v, MPFR_RNDN);
  }
  mpfr_add_si(z.v, xm.v, N, MPFR_RNDN);
  mpfr_pow_si(zp.v, z.v, -s, MPFR_RNDN);           // z^-s
  mpfr_mul(tail.v, zp.v, z.v, MPFR_RNDN);          // z^(1-s)
  mpfr_div_si(tail.v, tail.v, s - 1, MPFR_RNDN);   // z^(1-s) / (s-1)
  mpfr_div_2ui(t.v, zp.v, 1, MPFR_RNDN);
  mpfr_add(tail.v, tail.v, t.v, MPFR_RNDN);        // + z^-s / 2
  mpfr_div(zp.v, zp.v, z.v, MPFR_RNDN);            // z^(-s-1)
  mpfr_sqr(z2.v, z.v, MPFR_RNDN);
  mpfr_set_si(poch.v, s, MPFR_RNDN);               // (s)_1
  const auto& b = bernoulli_ratios();
  for (int j = 1; j <= 40; ++j) {
    mpfr_mul(t.v, b[j - 1]->v, poch.v, MPFR_RNDN);
    mpfr_mul(t.v, t.v, zp.v, MPFR_RNDN);           // b_j (s)_{2j-1} z^(-s-2j+1)
    mpfr_add(tail.v, tail.v, t.v, MPFR_RNDN);
    mpfr_mul_si(poch.v, poch.v, (s + 2 * j - 1) * (s + 2 * j), MPFR_RNDN);
    mpfr_div(zp.v, zp.v, z2.v, MPFR_RNDN);
  }
  mpfr_add(sum.v, sum.v, tail.v, MPFR_RNDN);
  mpfr_add(asum.v, asum.v, tail.v, MPFR_RNDN);
  mpfr_fac_ui(t.v, n, MPFR_RNDN);
  mpfr_mul(out, sum.v, t.v, MPFR_RNDN);
  if (abs_out != nullptr) mpfr_mul(abs_out, asum.v, t.v, MPFR_RNDN);
}

// psi^(n)(x) and its scale n! sum |x+k|^-(n+1).
void ref_polygamma(mpfr_ptr out, mpfr_ptr scale, int n, double x) {
  ref_zeta_factorial(out, scale, n, x);
  if (n % 2 == 0) mpfr_neg(out, out, MPFR_RNDN);
}

// erfinv(y) for 0 < |y| < 1: safeguarded Newton in 256 bits on the increasing
// function h(x) = erf(x) - |y| for |y| <= 1/2, or h(x) = log(q) - log(erfc(x))
// with q = 1 - |y| (exact in MPFR) for |y| > 1/2 (log erfc is nearly quadratic,
// so Newton converges fast from any start). A bracket [lo, hi] is kept
// (erfc(10) < 2^-53) and Newton steps leaving it are replaced by bisection.
void ref_erfinv(mpfr_ptr out, double y) {
  const double a = std::fabs(y);
  const bool tail = a > 0.5;
  Mp q(256), x(256), h(256), hp(256), lo(256), hi(256), c(256), step(256), cand(256);
  mpfr_set_d(q.v, a, MPFR_RNDN);
  if (tail) mpfr_ui_sub(q.v, 1, q.v, MPFR_RNDN);
  mpfr_set_zero(lo.v, 1);
  mpfr_set_ui(hi.v, 10, MPFR_RNDN);
  mpfr_set_d(x.v, tail ? std::sqrt(-std::log(1.0 - a)) : a * 0.886226925452758, MPFR_RNDN);
  mpfr_const_pi(c.v, MPFR_RNDN);
  mpfr_rec_sqrt(c.v, c.v, MPFR_RNDN);
  mpfr_mul_2ui(c.v, c.v, 1, MPFR_RNDN);  // 2 / sqrt(pi)
  for (int it = 0; it < 2000; ++it) {
    mpfr_sqr(hp.v, x.v, MPFR_RNDN);
    mpfr_neg(hp.v, hp.v, MPFR_RNDN);
    mpfr_exp(hp.v, hp.v, MPFR_RNDN);
    mpfr_mul(hp.v, hp.v, c.v, MPFR_RNDN);  // erf'(x)
    if (tail) {
      mpfr_erfc(h.v, x.v, MPFR_RNDN);
      mpfr_div(hp.v, hp.v, h.v, MPFR_RNDN);  // h' = erf'(x) / erfc(x)
      mpfr_div(h.v, q.v, h.v, MPFR_RNDN);
      mpfr_log(h.v, h.v, MPFR_RNDN);
    } else {
      mpfr_erf(h.v, x.v, MPFR_RNDN);
      mpfr_sub(h.v, h.v, q.v, MPFR_RNDN);
    }
    if (mpfr_zero_p(h.v)) break;
    mpfr_set(mpfr_sgn(h.v) > 0 ? hi.v : lo.v, x.v, MPFR_RNDN);
    mpfr_div(step.v, h.v, hp.v, MPFR_RNDN);
    mpfr_sub(cand.v, x.v, step.v, MPFR_RNDN);
    // Converged: the Newton step is below 2^-245 relative (quadratic
    // convergence, so the error is far smaller still).
    const bool done = mpfr_get_exp(step.v) < mpfr_get_exp(x.v) - 245;
    if (!done && (mpfr_cmp(cand.v, lo.v) <= 0 || mpfr_cmp(cand.v, hi.v) >= 0)) {
      mpfr_add(cand.v, lo.v, hi.v, MPFR_RNDN);
      mpfr_div_2ui(cand.v, cand.v, 1, MPFR_RNDN);
    }
    mpfr_set(x.v, cand.v, MPFR_RNDN);
    if (done) break;
  }
  mpfr_set(out, x.v, MPFR_RNDN);
  if (y < 0) mpfr_neg(out, out, MPFR_RNDN);
}

// I_nu(x) (scaled: e^-|x| I_nu(x)) at 400 bits. |x| <= 750: the power series
// sum_k (x/2)^(2k+nu) / (k! (k+nu)!) (positive terms; summed until past the
// peak and below 2^-420 of the sum). |x| > 750: Hankel's expansion, whose
// smallest term there (~e^-1500) is far below 2^-400; the two agree to 2^-300
// on [200, 750] (test RefBesselPiecesAgree).
void ref_bessel(mpfr_ptr out, int nu, double x, bool scaled, bool force_asym = false) {
  const double ax = std::fabs(x);
  Mp xm(400), t(400), sum(400), q(400), e(400);
  mpfr_set_d(xm.v, ax, MPFR_RNDN);
  if (ax <= 750 && !force_asym) {
    mpfr_div_2ui(t.v, xm.v, 1, MPFR_RNDN);
    if (nu == 0) mpfr_set_ui(t.v, 1, MPFR_RNDN);  // (x/2)^nu / nu!
    mpfr_set(sum.v, t.v, MPFR_RNDN);
    mpfr_sqr(q.v, xm.v, MPFR_RNDN);
    mpfr_div_2ui(q.v, q.v, 2, MPFR_RNDN);
    for (long k = 1; !mpfr_zero_p(t.v); ++k) {
      mpfr_mul(t.v, t.v, q.v, MPFR_RNDN);
      mpfr_div_ui(t.v, t.v, static_cast<unsigned long>(k * (k + nu)), MPFR_RNDN);
      mpfr_add(sum.v, sum.v, t.v, MPFR_RNDN);
      if (k > ax && mpfr_get_exp(t.v) < mpfr_get_exp(sum.v) - 420) break;
    }
    if (scaled) {
      mpfr_neg(e.v, xm.v, MPFR_RNDN);
      mpfr_exp(e.v, e.v, MPFR_RNDN);
      mpfr_mul(sum.v, sum.v, e.v, MPFR_RNDN);
    }
  } else {
    mpfr_set_ui(t.v, 1, MPFR_RNDN);
    mpfr_set_ui(sum.v, 1, MPFR_RNDN);
    for (long k = 1; k < 2000; ++k) {
      mpfr_mul_si(t.v, t.v, (2 * k - 1) * (2 * k - 1) - 4 * nu * nu, MPFR_RNDN);
      mpfr_div_ui(t.v, t.v, static_cast<unsigned long>(8 * k), MPFR_RNDN);
      mpfr_div(t.v, t.v, xm.v, MPFR_RNDN);
      mpfr_add(sum.v, sum.v, t.v, MPFR_RNDN);
      if (mpfr_zero_p(t.v) || mpfr_get_exp(t.v) < mpfr_get_exp(sum.v) - 420) break;
    }
    mpfr_const_pi(e.v, MPFR_RNDN);
    mpfr_mul_2ui(e.v, e.v, 1, MPFR_RNDN);
    mpfr_mul(e.v, e.v, xm.v, MPFR_RNDN);
    mpfr_sqrt(e.v, e.v, MPFR_RNDN);
    mpfr_div(sum.v, sum.v, e.v, MPFR_RNDN);
    if (!scaled) {
      mpfr_exp(e.v, xm.v, MPFR_RNDN);
      mpfr_mul(sum.v, sum.v, e.v, MPFR_RNDN);
    }
  }
  mpfr_set(out, sum.v, MPFR_RNDN);
  if (nu == 1 && x < 0) mpfr_neg(out, out, MPFR_RNDN);
}

template <class T>
T to(double x) { return static_cast<T>(x); }


}  // namespace tenferro::special_test
