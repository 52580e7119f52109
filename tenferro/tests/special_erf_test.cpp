// The error-function family of src/kernels/special_erf.hpp (erfinv, erfcinv, erfcx) against MPFR.
#include "special_test_util.hpp"

namespace {
using namespace tenferro::special_test;

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

}  // namespace
