// Accuracy tests for ops/special_scalar.hpp and ops/special_erf.hpp against MPFR.
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

#include "ops/special_erf.hpp"
#include "ops/special_scalar.hpp"

namespace sp = tenferro::special;

namespace {

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

// ------------------------------------------------------------------ digamma

// Positive x: relative bound. Near the root x0 = 1.4616... a textbook
// evaluation (recurrence to x >= 10 and the asymptotic series) leaves an
// absolute error of a few ulp of 1, i.e. an unbounded relative error; the
// implementation computes (x - x0) * S(x) with S > 0, so a relative bound holds
// there as well and is asserted (it implies the absolute one).
template <class T>
void digamma_positive(Worst& w, double x) {
  const T xt = to<T>(x);
  Mp ref(256);
  mpfr_set_d(ref.v, static_cast<double>(xt), MPFR_RNDN);
  mpfr_digamma(ref.v, ref.v, MPFR_RNDN);
  w.add(ulp_error(sp::digamma(xt), ref.v), static_cast<double>(xt));
}

// Negative x: psi(x) = psi(1-x) - pi cot(pi x); error in ulp of
// |psi(1-x)| + |pi cot(pi x)| = |psi(1-x)| + |psi(1-x) - psi(x)|.
template <class T>
void digamma_negative(Worst& w, double x) {
  const double xd = static_cast<double>(to<T>(x));
  Mp ref(256), a(256), scale(256);
  mpfr_set_d(ref.v, xd, MPFR_RNDN);
  mpfr_digamma(ref.v, ref.v, MPFR_RNDN);
  mpfr_set_d(a.v, xd, MPFR_RNDN);
  mpfr_ui_sub(a.v, 1, a.v, MPFR_RNDN);  // exact
  mpfr_digamma(a.v, a.v, MPFR_RNDN);
  mpfr_sub(scale.v, a.v, ref.v, MPFR_RNDN);
  mpfr_abs(scale.v, scale.v, MPFR_RNDN);
  mpfr_abs(a.v, a.v, MPFR_RNDN);
  mpfr_add(scale.v, scale.v, a.v, MPFR_RNDN);
  w.add(ulp_error(sp::digamma(to<T>(x)), ref.v, scale.v), xd);
}

TEST(SpecialScalar, DigammaPositive) {
  Rng rng;
  Worst wd("digamma x>0 double"), wf("digamma x>0 float");
  for (int i = 0; i < 10000; ++i) {
    digamma_positive<double>(wd, rng.log_uniform(-300, 300));
    digamma_positive<double>(wd, rng.uniform(0, 30));
    digamma_positive<float>(wf, rng.log_uniform(-44, 38));
    digamma_positive<float>(wf, rng.uniform(0, 30));
  }
  for (double x : {1e-300, 2e-300, 1e-299, 0x1p-1022, 1e-17, 0.5, 1.0, 2.0, 3.0, 9.999999999999998, 10.0, 10.000000000000002, 1e300, 1.7976931348623157e308}) {
    digamma_positive<double>(wd, x);
    digamma_positive<float>(wf, x);
  }
  for (double x = 4.9e-324; x < 1e-300; x *= 7.3) digamma_positive<double>(wd, x);  // subnormal / tiny
  EXPECT_LE(wd.ulp, 2.0);
  EXPECT_LE(wf.ulp, 0.51);
}

// digamma_fast (the fused form under MathAccuracy::Fast): in ULP of max(|psi(x)|, 1), the error
// of the recurrence's terms, so an absolute error near the root.
TEST(SpecialScalar, DigammaFastIsWithinFourUlpOfItsScale) {
  Rng rng;
  Worst w("digamma_fast");
  auto check = [&](double x) {
    Mp ref(256), scale(256);
    mpfr_set_d(ref.v, x, MPFR_RNDN);
    mpfr_digamma(ref.v, ref.v, MPFR_RNDN);
    mpfr_abs(scale.v, ref.v, MPFR_RNDN);
    if (mpfr_cmp_ui(scale.v, 1) < 0) mpfr_set_ui(scale.v, 1, MPFR_RNDN);
    w.add(ulp_error(sp::digamma_fast(x), ref.v, scale.v), x);
  };
  for (int i = 0; i < 20000; ++i) {
    check(rng.uniform(0.5, 12));
    check(std::exp(rng.uniform(std::log(0.5), std::log(1e300))));
  }
  for (double x : {0.5, 1.0, 1.4616321449683622, 2.0, 9.999999999999998, 10.0, 1e300}) check(x);
  EXPECT_LE(w.ulp, 4.0);
  // Below 1/2, at infinity and NaN it is digamma itself.
  for (double x : {0.25, -2.5, 1e-310, 0.0, -0.0, std::numeric_limits<double>::infinity()}) {
    EXPECT_EQ(std::bit_cast<std::uint64_t>(sp::digamma_fast(x)), std::bit_cast<std::uint64_t>(sp::digamma(x))) << x;
  }
  EXPECT_TRUE(std::isnan(sp::digamma_fast(std::numeric_limits<double>::quiet_NaN())));
}

TEST(SpecialScalar, DigammaNearPositiveRoot) {
  const double x0 = 1.4616321449683622;  // nearest double to the root
  Rng rng;
  Worst wd("digamma root double"), wf("digamma root float");
  double x = x0, y = x0;
  for (int i = 0; i < 3000; ++i) {
    digamma_positive<double>(wd, x);
    digamma_positive<double>(wd, y);
    x = std::nextafter(x, 2.0);
    y = std::nextafter(y, 1.0);
  }
  for (int i = 0; i < 5000; ++i) digamma_positive<double>(wd, x0 + rng.uniform(-1e-3, 1e-3));
  for (int i = 0; i < 5000; ++i) digamma_positive<double>(wd, x0 + rng.uniform(-0.3, 0.3));
  float xf = static_cast<float>(x0), yf = xf;
  for (int i = 0; i < 3000; ++i) {
    digamma_positive<float>(wf, xf);
    digamma_positive<float>(wf, yf);
    xf = std::nextafter(xf, 2.0f);
    yf = std::nextafter(yf, 1.0f);
  }
  EXPECT_LE(wd.ulp, 2.0);
  EXPECT_LE(wf.ulp, 0.51);
}

TEST(SpecialScalar, DigammaNegative) {
  Rng rng;
  Worst wd("digamma x<0 double"), wf("digamma x<0 float");
  for (int i = 0; i < 5000; ++i) {
    digamma_negative<double>(wd, -rng.log_uniform(-300, 16));
    digamma_negative<double>(wd, -rng.uniform(0, 20));
    digamma_negative<float>(wf, -rng.log_uniform(-44, 7));
    digamma_negative<float>(wf, -rng.uniform(0, 20));
  }
  for (double x : {-0.5, -1.5, -2.5, -0.25, -0.75, -1e-300, -2e-300, -1e-17, -1 + 0x1p-52, -1 - 0x1p-52, -0x1p51 - 0.5, -0x1p52 + 0.5}) {
    digamma_negative<double>(wd, x);
  }
  EXPECT_LE(wd.ulp, 3.0);
  EXPECT_LE(wf.ulp, 0.51);
}

TEST(SpecialScalar, DigammaSpecialValues) {
  EXPECT_EQ(sp::digamma(0.0), -kInf);
  EXPECT_EQ(sp::digamma(-0.0), kInf);
  EXPECT_EQ(sp::digamma(0.0f), -std::numeric_limits<float>::infinity());
  EXPECT_EQ(sp::digamma(-0.0f), std::numeric_limits<float>::infinity());
  EXPECT_EQ(sp::digamma(kInf), kInf);
  EXPECT_TRUE(std::isnan(sp::digamma(-kInf)));
  EXPECT_TRUE(std::isnan(sp::digamma(kNaN)));
  EXPECT_TRUE(std::isnan(sp::digamma(std::numeric_limits<float>::quiet_NaN())));
  for (double x : {-1.0, -2.0, -3.0, -17.0, -1e6, -0x1p52, -1e300, -std::numeric_limits<double>::max()}) {
    EXPECT_TRUE(std::isnan(sp::digamma(x))) << x;
    EXPECT_TRUE(std::isnan(sp::digamma(static_cast<float>(x)))) << x;
  }
  EXPECT_EQ(sp::digamma(4.9e-324), -kInf);  // -1/x overflows
  EXPECT_EQ(sp::digamma(-4.9e-324), kInf);
}

// ---------------------------------------------------------------- polygamma

template <class T>
void polygamma_point(Worst& w, int n, double x, bool negative_scale) {
  const T xt = to<T>(x);
  const double xd = static_cast<double>(xt);
  if (xd <= 0 && xd == std::floor(xd)) return;  // poles: tested separately
  Mp ref(256), scale(256);
  ref_polygamma(ref.v, scale.v, n, xd);
  w.add(ulp_error(sp::polygamma(n, xt), ref.v, negative_scale ? scale.v : nullptr), xd);
}

TEST(SpecialScalar, PolygammaReferenceSanity) {
  // zeta(s, 1) = zeta(s), psi'(1/2) = pi^2 / 2.
  for (int n : {1, 2, 4, 10}) {
    Mp a(256), b(256);
    ref_zeta_factorial(a.v, nullptr, n, 1.0);
    mpfr_zeta_ui(b.v, n + 1, MPFR_RNDN);
    Mp f(256);
    mpfr_fac_ui(f.v, n, MPFR_RNDN);
    mpfr_mul(b.v, b.v, f.v, MPFR_RNDN);
    mpfr_sub(a.v, a.v, b.v, MPFR_RNDN);
    mpfr_div(a.v, a.v, b.v, MPFR_RNDN);
    EXPECT_LT(std::fabs(mpfr_get_d(a.v, MPFR_RNDN)), 1e-70) << n;
  }
  Mp a(256), b(256);
  ref_zeta_factorial(a.v, nullptr, 1, 0.5);
  mpfr_const_pi(b.v, MPFR_RNDN);
  mpfr_sqr(b.v, b.v, MPFR_RNDN);
  mpfr_div_2ui(b.v, b.v, 1, MPFR_RNDN);
  mpfr_sub(a.v, a.v, b.v, MPFR_RNDN);
  EXPECT_LT(std::fabs(mpfr_get_d(a.v, MPFR_RNDN)), 1e-70);
}

TEST(SpecialScalar, PolygammaPositive) {
  Rng rng;
  for (int n : {1, 2, 3, 4, 10, 30, 100}) {
    char name_d[64], name_f[64];
    std::snprintf(name_d, sizeof name_d, "polygamma n=%d x>0 double", n);
    std::snprintf(name_f, sizeof name_f, "polygamma n=%d x>0 float", n);
    Worst wd(name_d), wf(name_f);
    for (int i = 0; i < 1500; ++i) {
      polygamma_point<double>(wd, n, rng.log_uniform(-300, 300), false);
      polygamma_point<double>(wd, n, rng.uniform(0, 60), false);
      polygamma_point<float>(wf, n, rng.log_uniform(-44, 38), false);
      polygamma_point<float>(wf, n, rng.uniform(0, 60), false);
    }
    // The switch between direct terms and Euler-Maclaurin (x = 10 + n).
    for (double d : {-1e-9, -0x1p-50, 0.0, 0x1p-50, 1e-9}) polygamma_point<double>(wd, n, 10.0 + n + d, false);
    EXPECT_LE(wd.ulp, 2.0) << n;
    EXPECT_LE(wf.ulp, 0.51) << n;
  }
}

TEST(SpecialScalar, PolygammaNegative) {
  Rng rng;
  for (int n : {1, 2, 3, 4, 10}) {
    char name_d[64], name_f[64];
    std::snprintf(name_d, sizeof name_d, "polygamma n=%d x<0 double", n);
    std::snprintf(name_f, sizeof name_f, "polygamma n=%d x<0 float", n);
    Worst wd(name_d), wf(name_f);
    for (int i = 0; i < 400; ++i) {
      polygamma_point<double>(wd, n, -rng.log_uniform(-3, 3.3), true);
      polygamma_point<double>(wd, n, -rng.uniform(0, 10), true);
      polygamma_point<float>(wf, n, -rng.log_uniform(-3, 3.3), true);
    }
    for (double x : {-0.5, -1.5, -2.25, -1e-10, -1 + 0x1p-52, -3 - 0x1p-51}) polygamma_point<double>(wd, n, x, true);
    EXPECT_LE(wd.ulp, 3.0) << n;
    EXPECT_LE(wf.ulp, 0.51) << n;
  }
}

TEST(SpecialScalar, PolygammaSpecialValues) {
  EXPECT_TRUE(std::isnan(sp::polygamma(-1, 1.0)));
  EXPECT_TRUE(std::isnan(sp::polygamma(-1, 1.0f)));
  EXPECT_TRUE(std::isnan(sp::polygamma(1001, 1.0)));  // documented as unsupported
  EXPECT_TRUE(std::isnan(sp::polygamma(std::numeric_limits<int>::max(), 1.0)));
  EXPECT_EQ(sp::polygamma(0, 2.5), sp::digamma(2.5));
  for (int n : {1, 2, 3, 10}) {
    for (double x : {0.0, -0.0, -1.0, -2.0, -1e300, -kInf, kNaN}) {
      EXPECT_TRUE(std::isnan(sp::polygamma(n, x))) << n << " " << x;
      EXPECT_TRUE(std::isnan(sp::polygamma(n, static_cast<float>(x)))) << n << " " << x;
    }
    const double at_inf = sp::polygamma(n, kInf);
    EXPECT_EQ(at_inf, 0.0);
    EXPECT_EQ(std::signbit(at_inf), n % 2 == 0) << n;
  }
  EXPECT_EQ(sp::polygamma(1, 1e-200), kInf);   // 1e400 overflows
  EXPECT_EQ(sp::polygamma(2, 1e-200), -kInf);
  // psi^(30)(1e10) = -(29! 1e-300 + 30!/2 1e-310 + ...): no spurious underflow;
  // psi^(30)(1e-8) = -30! 1e248 (1 + 1e-248 zeta(31)): no spurious overflow.
  EXPECT_NEAR(sp::polygamma(30, 1e10) / (-8.841761993739701e-270 * (1 + 1.5e-9)), 1.0, 1e-14);
  EXPECT_NEAR(sp::polygamma(30, 1e-8) / -2.652528598121910e280, 1.0, 1e-14);
}

// ------------------------------------------------------------------ erfinv

template <class T>
void erfinv_point(Worst& w, double y) {
  const T yt = to<T>(y);
  const double yd = static_cast<double>(yt);
  if (yd == 0 || std::fabs(yd) >= 1) return;
  Mp ref(256);
  ref_erfinv(ref.v, yd);
  w.add(ulp_error(sp::erfinv(yt), ref.v), yd);
}

TEST(SpecialScalar, Erfinv) {
  Rng rng;
  Worst wd("erfinv double"), wf("erfinv float");
  for (int i = 0; i < 3000; ++i) {
    const double s = rng.sign();
    erfinv_point<double>(wd, s * rng.log_uniform(-323, 0));
    erfinv_point<double>(wd, s * rng.uniform(0, 1));
    erfinv_point<double>(wd, s * (1 - rng.log_uniform(-16, 0)));  // approaching +-1
    erfinv_point<float>(wf, s * rng.log_uniform(-45, 0));
    erfinv_point<float>(wf, s * rng.uniform(0, 1));
    erfinv_point<float>(wf, s * (1 - rng.log_uniform(-7.3, 0)));
  }
  for (int k = 1; k <= 300; ++k) {  // the last 300 doubles / floats below 1
    erfinv_point<double>(wd, 1 - k * 0x1p-53);
    erfinv_point<double>(wd, -(1 - k * 0x1p-53));
    erfinv_point<float>(wf, 1 - k * 0x1p-24);
    erfinv_point<float>(wf, -(1 - k * 0x1p-24));
  }
  for (double y : {0.5, 0.49999999999999994, 0.5000000000000001, 0x1p-30, 0x1p-30 * (1 - 0x1p-53), 0x1p-1022,
                   4.9e-324, 1e-310, 0.999999, 0.9999999999, 1e-16, 1e-8}) {
    erfinv_point<double>(wd, y);
    erfinv_point<double>(wd, -y);
    erfinv_point<float>(wf, y);
  }
  // Around the switch from Giles' start to the asymptotic one, (1-y)(1+y) = e^-16.
  double y = std::sqrt(1 - std::exp(-16.0)), z = y;
  for (int k = 0; k < 100; ++k) {
    erfinv_point<double>(wd, y);
    erfinv_point<double>(wd, z);
    y = std::nextafter(y, 0.0);
    z = std::nextafter(z, 1.0);
  }
  EXPECT_LE(wd.ulp, 2.0);
  EXPECT_LE(wf.ulp, 0.51);
}

TEST(SpecialScalar, ErfinvSpecialValues) {
  EXPECT_EQ(sp::erfinv(1.0), kInf);
  EXPECT_EQ(sp::erfinv(-1.0), -kInf);
  EXPECT_EQ(sp::erfinv(1.0f), std::numeric_limits<float>::infinity());
  EXPECT_EQ(sp::erfinv(-1.0f), -std::numeric_limits<float>::infinity());
  for (double y : {std::nextafter(1.0, 2.0), -std::nextafter(1.0, 2.0), 2.0, -1e300, kInf, -kInf, kNaN}) {
    EXPECT_TRUE(std::isnan(sp::erfinv(y))) << y;
  }
  for (float y : {std::nextafter(1.0f, 2.0f), -std::nextafter(1.0f, 2.0f), 2.0f, -1e30f,
                  std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()}) {
    EXPECT_TRUE(std::isnan(sp::erfinv(y))) << y;
  }
  EXPECT_EQ(sp::erfinv(0.0), 0.0);
  EXPECT_FALSE(std::signbit(sp::erfinv(0.0)));
  EXPECT_TRUE(std::signbit(sp::erfinv(-0.0)));
  EXPECT_TRUE(std::signbit(sp::erfinv(-0.0f)));
  EXPECT_EQ(sp::erfinv(-0.0), 0.0);
  // Odd symmetry is exact.
  for (double y : {1e-300, 0.1, 0.5, 0.9, 1 - 0x1p-53}) EXPECT_EQ(sp::erfinv(-y), -sp::erfinv(y));
}

// ----------------------------------------------------------------- erfcinv

// erfcx(x) for x >= 10 at 320 bits by the asymptotic series 1/(x sqrt(pi))
// sum_k (-1)^k (2k-1)!! / (2x^2)^k, summed up to its smallest term, which
// bounds the remainder (erfc's series alternates and encloses the value):
// ~1.4 e^-x^2, below 2^-140 relative at x = 10 and 2^-280 from x = 14.
// (mpfr_erfc takes milliseconds there: 2 ms at x = 27.)
void ref_erfcx_asym(mpfr_ptr out, mpfr_srcptr x) {
  Mp a(320), t(320), w(320), prev(320);
  mpfr_sqr(w.v, x, MPFR_RNDN);
  mpfr_mul_2ui(w.v, w.v, 1, MPFR_RNDN);  // 2 x^2
  mpfr_set_ui(t.v, 1, MPFR_RNDN);
  mpfr_set_ui(a.v, 1, MPFR_RNDN);
  for (long k = 1; k < 100000; ++k) {
    mpfr_abs(prev.v, t.v, MPFR_RNDN);
    mpfr_mul_si(t.v, t.v, -(2 * k - 1), MPFR_RNDN);
    mpfr_div(t.v, t.v, w.v, MPFR_RNDN);
    if (mpfr_cmpabs(t.v, prev.v) >= 0) break;  // past the smallest term
    mpfr_add(a.v, a.v, t.v, MPFR_RNDN);
    if (mpfr_get_exp(t.v) < mpfr_get_exp(a.v) - 340) break;
  }
  mpfr_const_pi(w.v, MPFR_RNDN);
  mpfr_sqrt(w.v, w.v, MPFR_RNDN);
  mpfr_mul(w.v, w.v, x, MPFR_RNDN);
  mpfr_div(out, a.v, w.v, MPFR_RNDN);
}

// erfc(x) at 256+ bits: mpfr_erfc, or exp(-x^2) erfcx(x) for x >= 10.
void ref_erfc(mpfr_ptr out, mpfr_srcptr x) {
  if (mpfr_cmp_ui(x, 10) < 0) {
    mpfr_erfc(out, x, MPFR_RNDN);
    return;
  }
  Mp e(320);
  mpfr_sqr(e.v, x, MPFR_RNDN);
  mpfr_neg(e.v, e.v, MPFR_RNDN);
  mpfr_exp(e.v, e.v, MPFR_RNDN);
  ref_erfcx_asym(out, x);
  mpfr_mul(out, out, e.v, MPFR_RNDN);
}

// erfcinv(q) for 0 < q < 2: x = sign * r with erfc(r) = Q, Q = q (q <= 1) or
// 2 - q (q > 1, r negated; exact in MPFR), by safeguarded Newton in 256 bits
// on the increasing h(r) = log(Q) - log(erfc(r)) with bracket [0, 30] (erfc(30)
// < 1e-392 is below every double), bisection where a step leaves the bracket.
// Converged after a Newton step below 2^-100 relative (the error after it is
// ~ its square). The start is `start` if given (close: it saves steps, each of
// which costs up to a millisecond), else a crude one.
void ref_erfcinv(mpfr_ptr out, double q, double start = kNaN) {
  const bool upper = q > 1;
  Mp Q(256), x(256), h(256), hp(256), lo(256), hi(256), c(256), step(256), cand(256);
  mpfr_set_d(Q.v, q, MPFR_RNDN);
  if (upper) mpfr_ui_sub(Q.v, 2, Q.v, MPFR_RNDN);  // exact
  const double qd = mpfr_get_d(Q.v, MPFR_RNDN);
  mpfr_set_zero(lo.v, 1);
  mpfr_set_ui(hi.v, 30, MPFR_RNDN);
  start = std::fabs(start);
  if (!(start > 0 && start < 30)) start = qd < 0.5 ? std::sqrt(-std::log(qd)) : (1 - qd) * 0.886226925452758;
  mpfr_set_d(x.v, start, MPFR_RNDN);
  mpfr_const_pi(c.v, MPFR_RNDN);
  mpfr_rec_sqrt(c.v, c.v, MPFR_RNDN);
  mpfr_mul_2ui(c.v, c.v, 1, MPFR_RNDN);  // 2 / sqrt(pi)
  for (int it = 0; it < 2000; ++it) {
    mpfr_sqr(hp.v, x.v, MPFR_RNDN);
    mpfr_neg(hp.v, hp.v, MPFR_RNDN);
    mpfr_exp(hp.v, hp.v, MPFR_RNDN);
    mpfr_mul(hp.v, hp.v, c.v, MPFR_RNDN);
    ref_erfc(h.v, x.v);
    mpfr_div(hp.v, hp.v, h.v, MPFR_RNDN);  // h' = -erfc'(r) / erfc(r)
    mpfr_div(h.v, Q.v, h.v, MPFR_RNDN);
    mpfr_log(h.v, h.v, MPFR_RNDN);
    if (mpfr_zero_p(h.v)) break;
    mpfr_set(mpfr_sgn(h.v) > 0 ? hi.v : lo.v, x.v, MPFR_RNDN);
    mpfr_div(step.v, h.v, hp.v, MPFR_RNDN);
    mpfr_sub(cand.v, x.v, step.v, MPFR_RNDN);
    const bool done = mpfr_get_exp(step.v) < mpfr_get_exp(x.v) - 100;
    if (!done && (mpfr_cmp(cand.v, lo.v) <= 0 || mpfr_cmp(cand.v, hi.v) >= 0)) {
      mpfr_add(cand.v, lo.v, hi.v, MPFR_RNDN);
      mpfr_div_2ui(cand.v, cand.v, 1, MPFR_RNDN);
    }
    mpfr_set(x.v, cand.v, MPFR_RNDN);
    if (done) break;
  }
  mpfr_set(out, x.v, MPFR_RNDN);
  if (upper) mpfr_neg(out, out, MPFR_RNDN);
}

template <class T>
void erfcinv_point(Worst& w, double q) {
  const T qt = to<T>(q);
  const double qd = static_cast<double>(qt);
  if (!(qd > 0 && qd < 2)) return;
  Mp ref(256);
  ref_erfcinv(ref.v, qd, sp::erfcinv(qd));  // the double result as the start, also for float
  w.add(ulp_error(sp::erfcinv(qt), ref.v), qd);
}

TEST(SpecialScalar, RefErfcinvAgreesWithRefErfinv) {
  // erfcinv(q) = erfinv(1 - q) where 1 - q is exact (the two solve different equations for q < 1/2).
  for (double q : {0x1p-40, 0x1p-10, 0.25, 0.5, 0.75, 1.25, 2 - 0x1p-40}) {
    Mp a(256), b(256);
    ref_erfcinv(a.v, q);
    ref_erfinv(b.v, 1 - q);
    mpfr_sub(a.v, a.v, b.v, MPFR_RNDN);
    mpfr_div(a.v, a.v, b.v, MPFR_RNDN);
    EXPECT_LT(std::fabs(mpfr_get_d(a.v, MPFR_RNDN)), 0x1p-240) << q;
  }
}

TEST(SpecialScalar, Erfcinv) {
  Rng rng;
  Worst wd("erfcinv double"), wf("erfcinv float");
  for (int i = 0; i < 1500; ++i) {
    erfcinv_point<double>(wd, rng.log_uniform(-323.3, 0.302));  // 1e-323 .. 2
    erfcinv_point<double>(wd, rng.uniform(0, 2));
    erfcinv_point<double>(wd, 2 - rng.log_uniform(-16, 0));     // approaching 2
    erfcinv_point<double>(wd, 1 + rng.sign() * rng.log_uniform(-16, 0));  // around 1
    erfcinv_point<float>(wf, rng.log_uniform(-45.8, 0.302));
    erfcinv_point<float>(wf, rng.uniform(0, 2));
    erfcinv_point<float>(wf, 2 - rng.log_uniform(-7.3, 0));
  }
  for (int k = 1; k <= 100; ++k) {  // the last doubles / floats below 2 and the smallest subnormals
    erfcinv_point<double>(wd, 2 - k * 0x1p-52);
    erfcinv_point<double>(wd, k * 4.9406564584124654e-324);
    erfcinv_point<float>(wf, 2 - k * 0x1p-23);
    erfcinv_point<float>(wf, k * 0x1p-149);
  }
  // Around the switches: q = 1/2, 3/2 (to erfinv), 2^-900 (scaling), and where
  // erfinv's start goes asymptotic (q (2 - q) = e^-16).
  for (double q0 : {0.5, 1.5, 0x1p-900, 1.1253517471925912e-07 / 2}) {
    double lo = q0, hi = q0;
    for (int k = 0; k < 50; ++k) {
      erfcinv_point<double>(wd, lo);
      erfcinv_point<double>(wd, hi);
      lo = std::nextafter(lo, 0.0);
      hi = std::nextafter(hi, 2.0);
    }
  }
  for (double q : {0x1p-1022, 1e-310, 1e-300, 1e-100, 1e-16, 0.1, 0.9, 1.0 - 0x1p-53, 1.0 + 0x1p-52, 1.9, 1.99999999}) {
    erfcinv_point<double>(wd, q);
    erfcinv_point<float>(wf, q);
  }
  EXPECT_LE(wd.ulp, 2.0);
  EXPECT_LE(wf.ulp, 0.51);
}

TEST(SpecialScalar, ErfcinvSpecialValues) {
  constexpr float kInfF = std::numeric_limits<float>::infinity();
  EXPECT_EQ(sp::erfcinv(0.0), kInf);
  EXPECT_EQ(sp::erfcinv(-0.0), kInf);
  EXPECT_EQ(sp::erfcinv(2.0), -kInf);
  EXPECT_EQ(sp::erfcinv(0.0f), kInfF);
  EXPECT_EQ(sp::erfcinv(2.0f), -kInfF);
  EXPECT_EQ(sp::erfcinv(1.0), 0.0);
  EXPECT_FALSE(std::signbit(sp::erfcinv(1.0)));
  EXPECT_FALSE(std::signbit(sp::erfcinv(1.0f)));
  for (double q : {-4.9e-324, -1.0, std::nextafter(2.0, 3.0), 3.0, kInf, -kInf, kNaN}) {
    EXPECT_TRUE(std::isnan(sp::erfcinv(q))) << q;
  }
  for (float q : {-1e-45f, std::nextafter(2.0f, 3.0f), kInfF, std::numeric_limits<float>::quiet_NaN()}) {
    EXPECT_TRUE(std::isnan(sp::erfcinv(q))) << q;
  }
  // erfcinv(2 - q) = -erfcinv(q) exactly where 2 - q is exact (q in [1, 2]), and
  // erfcinv(q) = erfinv(1 - q) on [1/2, 3/2].
  for (double q : {1.0, 1.2, 1.5, 1.5000000000000002, 1.75, 2 - 0x1p-52}) EXPECT_EQ(sp::erfcinv(2 - q), -sp::erfcinv(q)) << q;
  for (double q : {0.5, 0.7, 1 - 0x1p-53, 1.3, 1.5}) EXPECT_EQ(sp::erfcinv(q), sp::erfinv(1 - q)) << q;
  // Finite at the smallest subnormal, where erfinv(1 - q) = erfinv(1) = inf (accuracy: Erfcinv).
  EXPECT_TRUE(std::isfinite(sp::erfcinv(4.9406564584124654e-324)));
  EXPECT_GT(sp::erfcinv(4.9406564584124654e-324), 27.0);
}

// ------------------------------------------------------------------- erfcx

// erfcx(x) = exp(x^2) erfc(x) at 320 bits: x < -1e6: +inf (as a double);
// x >= 10 (unless direct): ref_erfcx_asym; otherwise mpfr_exp(x^2) (x^2 exact)
// times mpfr_erfc (no cancellation: both are correctly rounded in MPFR).
void ref_erfcx(mpfr_ptr out, double x, bool direct = false) {
  Mp xm(320), a(320), b(320);
  mpfr_set_d(xm.v, x, MPFR_RNDN);
  if (x < -1e6) {
    mpfr_set_inf(out, 1);
  } else if (x >= 10 && !direct) {
    ref_erfcx_asym(out, xm.v);
  } else {
    mpfr_erfc(a.v, xm.v, MPFR_RNDN);
    mpfr_sqr(b.v, xm.v, MPFR_RNDN);
    mpfr_exp(b.v, b.v, MPFR_RNDN);
    mpfr_mul(out, a.v, b.v, MPFR_RNDN);
  }
}

TEST(SpecialScalar, RefErfcxPiecesAgree) {
  // The asymptotic series against mpfr_erfc: to its bound 1.4 e^-x^2 (2^-140 at 10).
  for (double x : {10.0, 12.5, 14.0, 27.0, 1e3, 1e6}) {
    Mp a(320), b(320);
    ref_erfcx(a.v, x);
    ref_erfcx(b.v, x, /*direct=*/true);
    mpfr_sub(a.v, a.v, b.v, MPFR_RNDN);
    mpfr_div(a.v, a.v, b.v, MPFR_RNDN);
    EXPECT_LT(std::fabs(mpfr_get_d(a.v, MPFR_RNDN)), x < 14 ? 0x1p-140 : 0x1p-280) << x;
  }
}

// The Taylor nodes erfcx(i/4) (hi + lo) against MPFR.
TEST(SpecialScalar, ErfcxNodeTable) {
  for (int i = -8; i <= 12; ++i) {
    const auto node = tenferro::special::erf_detail::kErfcxNodes[i + 8];
    Mp ref(320), d(320);
    ref_erfcx(ref.v, i / 4.0);
    mpfr_sub_d(d.v, ref.v, node.hi, MPFR_RNDN);
    mpfr_sub_d(d.v, d.v, node.lo, MPFR_RNDN);
    mpfr_div(d.v, d.v, ref.v, MPFR_RNDN);
    EXPECT_LT(std::fabs(mpfr_get_d(d.v, MPFR_RNDN)), 0x1p-104) << i;
  }
}

template <class T>
void erfcx_point(Worst& w, double x) {
  const T xt = to<T>(x);
  if (!std::isfinite(xt)) return;
  Mp ref(320);
  ref_erfcx(ref.v, static_cast<double>(xt));
  w.add(ulp_error(sp::erfcx(xt), ref.v), static_cast<double>(xt));
}

TEST(SpecialScalar, Erfcx) {
  Rng rng;
  // Above -2.125 (Taylor series, continued fraction) and below (2 exp(x^2) - erfcx(-x)).
  Worst wd("erfcx x>-2.125 double"), wn("erfcx x<=-2.125 double"), wf("erfcx float");
  auto point_d = [&](double x) { erfcx_point<double>(x > -2.125 ? wd : wn, x); };
  for (int i = 0; i < 3000; ++i) {
    point_d(rng.log_uniform(-323, 300));
    point_d(-rng.log_uniform(-323, 1.425));  // down to -26.6 (overflow below -26.6287)
    point_d(rng.uniform(-27, 30));
    erfcx_point<float>(wf, rng.sign() * rng.log_uniform(-45, 38));  // float overflows below -9.4
    erfcx_point<float>(wf, rng.uniform(-10, 30));
  }
  // Around the switches (x = 3.125, -2.125, the node boundaries (2i+1)/8) and the overflow.
  for (double x0 : {3.125, -2.125, 0.125, -0.125, 0.375, 1.625, -1.875, 2.875, -26.628, -26.6287}) {
    double lo = x0, hi = x0;
    for (int k = 0; k < 40; ++k) {
      point_d(lo);
      point_d(hi);
      lo = std::nextafter(lo, -kInf);
      hi = std::nextafter(hi, kInf);
    }
  }
  // x < -2.125 where the result lies just below 2^k and 2 exp(x^2) at or above it
  // (libm's rounding of exp then costs up to 1 ulp of the result): the crossing
  // by bisection, then points in the window, whose width is about
  // erfcx(-x) / (2^k 2|x|).
  for (int k = 8; k <= 16; ++k) {
    const double target = std::ldexp(1.0, k);
    double lo = -5, hi = -2.125;  // erfcx(lo) > target >= erfcx(hi)
    for (int it = 0; it < 60; ++it) (sp::erfcx(0.5 * (lo + hi)) > target ? lo : hi) = 0.5 * (lo + hi);
    const double width = sp::erfcx(-hi) / target / (2 * std::fabs(hi));
    for (int i = 0; i < 40; ++i) point_d(hi + rng.uniform(0, width));
  }
  for (double x : {0.0, 4.9e-324, 1e-310, 0x1p-1022, 1e-20, 0.5, 1.0, 3.0, 10.0, 26.0, 27.0, 1e8, 1.3e154, 1e300,
                   1.7976931348623157e308, -0.5, -1.0, -3.0, -10.0, -26.0, -26.6}) {
    point_d(x);
    erfcx_point<float>(wf, x);
  }
  EXPECT_LE(wd.ulp, 1.2);
  EXPECT_LE(wn.ulp, 1.6);
  EXPECT_LE(wf.ulp, 0.51);
}

TEST(SpecialScalar, ErfcxSpecialValues) {
  constexpr float kInfF = std::numeric_limits<float>::infinity();
  EXPECT_EQ(sp::erfcx(kInf), 0.0);
  EXPECT_FALSE(std::signbit(sp::erfcx(kInf)));
  EXPECT_EQ(sp::erfcx(-kInf), kInf);
  EXPECT_EQ(sp::erfcx(kInfF), 0.0f);
  EXPECT_EQ(sp::erfcx(-kInfF), kInfF);
  EXPECT_TRUE(std::isnan(sp::erfcx(kNaN)));
  EXPECT_TRUE(std::isnan(sp::erfcx(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_EQ(sp::erfcx(0.0), 1.0);
  EXPECT_EQ(sp::erfcx(-0.0), 1.0);
  EXPECT_EQ(sp::erfcx(0.0f), 1.0f);
  // Overflow exactly where 2 exp(x^2) passes DBL_MAX (x = -26.6287...), in float below -9.4.
  EXPECT_EQ(sp::erfcx(-26.63), kInf);
  EXPECT_EQ(sp::erfcx(-1e300), kInf);
  EXPECT_TRUE(std::isfinite(sp::erfcx(-26.628)));
  EXPECT_EQ(sp::erfcx(-9.5f), kInfF);
  EXPECT_TRUE(std::isfinite(sp::erfcx(-9.3f)));
  // 1 / (x sqrt(pi)) for huge x, subnormal at DBL_MAX but not zero.
  EXPECT_NEAR(sp::erfcx(1e300) * 1e300 * std::sqrt(std::numbers::pi), 1.0, 1e-15);
  EXPECT_GT(sp::erfcx(std::numeric_limits<double>::max()), 0.0);
}

// --------------------------------------------------------------- bessel i

using BesselFn = double (*)(double);
using BesselFnF = float (*)(float);

struct BesselCase {
  const char* name;
  int nu;
  bool scaled;
  BesselFn fd;
  BesselFnF ff;
};

const BesselCase kBesselCases[] = {
    {"i0", 0, false, sp::bessel_i0, sp::bessel_i0},
    {"i0e", 0, true, sp::bessel_i0e, sp::bessel_i0e},
    {"i1", 1, false, sp::bessel_i1, sp::bessel_i1},
    {"i1e", 1, true, sp::bessel_i1e, sp::bessel_i1e},
};

TEST(SpecialScalar, RefBesselPiecesAgree) {
  for (double x : {200.0, 333.3, 500.0, 750.0}) {
    for (int nu : {0, 1}) {
      Mp a(400), b(400);
      ref_bessel(a.v, nu, x, true);
      ref_bessel(b.v, nu, x, true, /*force_asym=*/true);
      mpfr_sub(a.v, a.v, b.v, MPFR_RNDN);
      mpfr_div(a.v, a.v, b.v, MPFR_RNDN);
      EXPECT_LT(std::fabs(mpfr_get_d(a.v, MPFR_RNDN)), 0x1p-300) << x << " " << nu;
    }
  }
}

TEST(SpecialScalar, BesselI) {
  for (const BesselCase& c : kBesselCases) {
    Rng rng;
    char name_d[64], name_f[64];
    std::snprintf(name_d, sizeof name_d, "bessel_%s double", c.name);
    std::snprintf(name_f, sizeof name_f, "bessel_%s float", c.name);
    Worst wd(name_d), wf(name_f);
    auto point_d = [&](double x) {
      Mp ref(400);
      ref_bessel(ref.v, c.nu, x, c.scaled);
      wd.add(ulp_error(c.fd(x), ref.v), x);
    };
    auto point_f = [&](double xd) {
      const float x = static_cast<float>(xd);
      if (!std::isfinite(x)) return;  // infinities: BesselISpecialValues
      Mp ref(400);
      ref_bessel(ref.v, c.nu, x, c.scaled);
      wf.add(ulp_error(c.ff(x), ref.v), x);
    };
    for (int i = 0; i < 4000; ++i) {
      const double s = rng.sign();
      point_d(s * rng.uniform(0, 60));
      point_d(s * rng.log_uniform(-300, 300));
      point_d(s * rng.uniform(690, 720));  // the overflow region of i0/i1
      point_f(s * rng.uniform(0, 100));
      point_f(s * rng.log_uniform(-45, 38));
    }
    // Around the switch from the series to the asymptotic expansion (x = 20).
    double lo = 20.0, hi = 20.0;
    for (int k = 0; k < 200; ++k) {
      point_d(lo);
      point_d(-hi);
      lo = std::nextafter(lo, 0.0);
      hi = std::nextafter(hi, 100.0);
    }
    for (double x : {4.9e-324, 1e-310, 0x1p-1022, 1e-20, 0.5, 1.0, 713.9, 713.98, 713.99, 714.0, 1e300, 1.7976931348623157e308}) {
      point_d(x);
      point_d(-x);
      point_f(x);
    }
    EXPECT_LE(wd.ulp, 2.0) << c.name;
    EXPECT_LE(wf.ulp, 0.51) << c.name;
  }
}

TEST(SpecialScalar, BesselISpecialValues) {
  EXPECT_EQ(sp::bessel_i0(kInf), kInf);
  EXPECT_EQ(sp::bessel_i0(-kInf), kInf);
  EXPECT_EQ(sp::bessel_i1(kInf), kInf);
  EXPECT_EQ(sp::bessel_i1(-kInf), -kInf);
  EXPECT_EQ(sp::bessel_i0e(kInf), 0.0);
  EXPECT_EQ(sp::bessel_i0e(-kInf), 0.0);
  EXPECT_FALSE(std::signbit(sp::bessel_i0e(-kInf)));
  EXPECT_EQ(sp::bessel_i1e(kInf), 0.0);
  EXPECT_FALSE(std::signbit(sp::bessel_i1e(kInf)));
  EXPECT_TRUE(std::signbit(sp::bessel_i1e(-kInf)));
  EXPECT_EQ(sp::bessel_i0(0.0), 1.0);
  EXPECT_EQ(sp::bessel_i0e(-0.0), 1.0);
  EXPECT_TRUE(std::signbit(sp::bessel_i1(-0.0)));
  EXPECT_TRUE(std::signbit(sp::bessel_i1e(-0.0)));
  EXPECT_FALSE(std::signbit(sp::bessel_i1(0.0)));
  for (BesselFn f : std::initializer_list<BesselFn>{sp::bessel_i0, sp::bessel_i0e, sp::bessel_i1, sp::bessel_i1e}) EXPECT_TRUE(std::isnan(f(kNaN)));
  for (BesselFnF f : std::initializer_list<BesselFnF>{sp::bessel_i0, sp::bessel_i1e}) {
    EXPECT_TRUE(std::isnan(f(std::numeric_limits<float>::quiet_NaN())));
  }
  EXPECT_EQ(sp::bessel_i0(714.5), kInf);  // true overflow
  EXPECT_TRUE(std::isfinite(sp::bessel_i0(713.9)));
  EXPECT_TRUE(std::isfinite(sp::bessel_i1(-713.9)));
  const double big = sp::bessel_i0e(1e300);
  EXPECT_NEAR(big * std::sqrt(2 * std::numbers::pi * 1e300), 1.0, 1e-15);
  EXPECT_EQ(sp::bessel_i1e(-1e300), -sp::bessel_i1e(1e300));
  EXPECT_EQ(sp::bessel_i1(-3.5), -sp::bessel_i1(3.5));
  EXPECT_EQ(sp::bessel_i0(-3.5), sp::bessel_i0(3.5));
}

}  // namespace
