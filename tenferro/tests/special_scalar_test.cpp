// The scalar special functions of src/kernels/special_scalar.hpp (digamma, polygamma, Bessel) against
// MPFR; the error-function family is in special_erf_test.cpp.
#include "special_test_util.hpp"

namespace {
using namespace tenferro::special_test;

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
