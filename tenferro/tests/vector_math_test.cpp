// The vector math tables (kernels/vector_math.hpp): every function of every table this CPU
// runs is within its library's documented error of a long double reference, the sincos pair gives
// the bits of its halves, and the accuracy setting picks the table.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/vector_math.hpp"
#include "tenferro/error.hpp"
#include "tenferro/math_accuracy.hpp"
#include "tenferro/tenferro.hpp"

namespace tf = tenferro;
using tf::exec::MathFn;
using tf::exec::VectorMathTable;

namespace {

std::string name_of(const VectorMathTable& table, bool f64) {
  return std::string(table.library) + "_" + table.isa + (f64 ? "_f64" : "_f32");
}

/// Distance in units in the last place between two finite values of one sign, or between
/// two NaNs (0); the maximum for anything else.
template <class T>
std::uint64_t ulp_distance(T a, T b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b) ? 0 : ~std::uint64_t{0};
  if (std::signbit(a) != std::signbit(b)) return a == b ? 0 : ~std::uint64_t{0};
  using U = std::conditional_t<sizeof(T) == 8, std::uint64_t, std::uint32_t>;
  U x, y;
  std::memcpy(&x, &a, sizeof x);
  std::memcpy(&y, &b, sizeof y);
  return x > y ? x - y : y - x;
}

template <class T>
tf::exec::UnaryArrayFn<T> pick(const VectorMathTable& table, MathFn fn) {
  if constexpr (sizeof(T) == 8) {
    return table.f64[static_cast<int>(fn)];
  } else {
    return table.f32[static_cast<int>(fn)];
  }
}

/// Sweeps sincos of one vector-math table: the pair from one call gives exactly the bits of its
/// halves (so fused and unfused kernels agree), and each half is within 2 ULP of sin or cos
/// (SLEEF's halves are within 1 ULP of the true value but not always the bits of sin and cos;
/// libmvec's are its sin and cos).
template <class T>
void check_sincos(const VectorMathTable& table) {
  const std::string name = name_of(table, sizeof(T) == 8);
  SCOPED_TRACE(name);
  std::mt19937_64 rng(17);
  std::vector<T> x = {T(0), -T(0), T(1e-30), T(0.5), T(3.14159265358979), T(1e6), T(1e30),
                      std::numeric_limits<T>::infinity(), -std::numeric_limits<T>::infinity(),
                      std::numeric_limits<T>::quiet_NaN()};
  for (int e = -20; e <= 20; ++e) {
    std::uniform_real_distribution<double> u(-std::ldexp(1.0, e), std::ldexp(1.0, e));
    for (int k = 0; k < 500; ++k) x.push_back(static_cast<T>(u(rng)));
  }
  x.push_back(T(2));  // an odd count: the last elements go through a padded vector
  const std::int64_t n = static_cast<std::int64_t>(x.size());
  std::vector<T> s(x.size()), c(x.size()), sin_half(x.size()), cos_half(x.size()), sin(x.size()), cos(x.size());
  if constexpr (sizeof(T) == 8) {
    table.sincos_f64(x.data(), s.data(), c.data(), n);
  } else {
    table.sincos_f32(x.data(), s.data(), c.data(), n);
  }
  pick<T>(table, MathFn::SinOfSinCos)(x.data(), sin_half.data(), n);
  pick<T>(table, MathFn::CosOfSinCos)(x.data(), cos_half.data(), n);
  pick<T>(table, MathFn::Sin)(x.data(), sin.data(), n);
  pick<T>(table, MathFn::Cos)(x.data(), cos.data(), n);
  std::size_t differ = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    ASSERT_EQ(std::memcmp(&s[i], &sin_half[i], sizeof(T)), 0) << x[i];
    ASSERT_EQ(std::memcmp(&c[i], &cos_half[i], sizeof(T)), 0) << x[i];
    EXPECT_LE(ulp_distance(s[i], sin[i]), 2u) << x[i];
    EXPECT_LE(ulp_distance(c[i], cos[i]), 2u) << x[i];
    differ += std::memcmp(&s[i], &sin[i], sizeof(T)) != 0 || std::memcmp(&c[i], &cos[i], sizeof(T)) != 0;
  }
  ::testing::Test::RecordProperty(name + "_differ_from_sin_cos", static_cast<int>(differ));
}

/// The error of `got` in units in the last place of T at the reference value.
template <class T>
double ulp_error(T got, long double ref) {
  const T r = static_cast<T>(ref);
  if (std::isnan(got) || std::isnan(r)) return std::isnan(got) && std::isnan(r) ? 0 : 1e300;
  if (std::isinf(r) || std::isinf(got)) return got == r ? 0 : 1e300;
  const T magnitude = std::fabs(r);
  T ulp = std::nextafter(magnitude, std::numeric_limits<T>::infinity()) - magnitude;
  if (magnitude < std::numeric_limits<T>::min()) ulp = std::numeric_limits<T>::denorm_min();
  return static_cast<double>(std::fabs(static_cast<long double>(got) - ref) / ulp);
}

struct Case {
  MathFn fn;
  const char* name;
  long double (*reference)(long double);
  double lo, hi;  // inputs are uniform in [lo, hi]
};

/// Every one-argument transcendental of `table` on random inputs against long double libm, within
/// `bound` ULP (SLEEF documents 1.0 ULP for its u10 functions, glibc 4 ULP for libmvec).
template <class T>
void check_accuracy(const VectorMathTable& table, double bound) {
  const bool f64 = sizeof(T) == 8;
  const double big = f64 ? 700 : 85;  // exp stays finite
  const Case cases[] = {
      {MathFn::Exp, "exp", [](long double x) { return expl(x); }, -big, big},
      {MathFn::Exp, "exp", [](long double x) { return expl(x); }, -1, 1},
      {MathFn::Log, "log", [](long double x) { return logl(x); }, 1e-30, 1e30},
      {MathFn::Log, "log", [](long double x) { return logl(x); }, 0.5, 2},
      {MathFn::Sin, "sin", [](long double x) { return sinl(x); }, -10, 10},
      {MathFn::Sin, "sin", [](long double x) { return sinl(x); }, -1e4, 1e4},
      {MathFn::Cos, "cos", [](long double x) { return cosl(x); }, -10, 10},
      {MathFn::Cos, "cos", [](long double x) { return cosl(x); }, -1e4, 1e4},
      {MathFn::SinOfSinCos, "sin_of_sincos", [](long double x) { return sinl(x); }, -10, 10},
      {MathFn::CosOfSinCos, "cos_of_sincos", [](long double x) { return cosl(x); }, -10, 10},
      {MathFn::Tanh, "tanh", [](long double x) { return tanhl(x); }, -20, 20},
      {MathFn::Expm1, "expm1", [](long double x) { return expm1l(x); }, -1, 1},
      {MathFn::Log1p, "log1p", [](long double x) { return log1pl(x); }, -0.9, 10},
  };
  std::mt19937_64 rng(5);
  for (const Case& c : cases) {
    SCOPED_TRACE(name_of(table, f64) + " " + c.name);
    std::uniform_real_distribution<double> u(c.lo, c.hi);
    std::vector<T> x(20001), y(x.size());
    for (auto& v : x) v = static_cast<T>(u(rng));
    pick<T>(table, c.fn)(x.data(), y.data(), static_cast<std::int64_t>(x.size()));
    double worst = 0;
    T worst_at = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      const double e = ulp_error(y[i], c.reference(static_cast<long double>(x[i])));
      if (e > worst) {
        worst = e;
        worst_at = x[i];
      }
    }
    EXPECT_LE(worst, bound) << "at x = " << worst_at;
  }
}

}  // namespace

TEST(VectorMath, SinCosPairGivesTheBitsOfItsHalves) {
  for (const VectorMathTable* table : tf::exec::runnable_vector_math_tables()) {
    check_sincos<double>(*table);
    check_sincos<float>(*table);
  }
}

TEST(VectorMath, EveryFunctionIsWithinItsLibrarysErrorBound) {
  for (const VectorMathTable* table : tf::exec::runnable_vector_math_tables()) {
    // A long double reference is exact to 2^-11 ULP of a double, so the bound needs no slack.
    const double bound = std::string(table->library) == "libmvec" ? 4.0 : 1.0;
    check_accuracy<double>(*table, bound);
    check_accuracy<float>(*table, bound);
  }
}

TEST(VectorMath, AccuracySettingPicksTheLibrary) {
  const tf::MathAccuracy saved = tf::math_accuracy();
  tf::set_math_accuracy(tf::MathAccuracy::Precise);
  EXPECT_STREQ(tf::exec::vector_math().library, "sleef-u10");
  tf::set_math_accuracy(tf::MathAccuracy::Fast);
  EXPECT_STREQ(tf::exec::vector_math().library, "libmvec");
  EXPECT_THROW(tf::set_math_accuracy(static_cast<tf::MathAccuracy>(7)), tf::Error);
  tf::set_math_accuracy(saved);
}

TEST(VectorMath, IsaSettingPicksTheWidthAndRefusesWhatTheCpuCannotRun) {
  const tf::exec::VectorIsa saved = tf::exec::vector_isa();
  const std::vector<tf::exec::VectorIsa> runnable = tf::exec::runnable_vector_isas();
  ASSERT_FALSE(runnable.empty());
  EXPECT_EQ(runnable.front(), tf::exec::VectorIsa::Sse2);  // every x86-64 CPU
  if (std::getenv("TENFERRO_VECTOR_ISA") == nullptr) {
    EXPECT_EQ(saved, runnable.back());  // the widest by default
  }
  for (tf::exec::VectorIsa isa : runnable) {
    tf::exec::set_vector_isa(isa);
    EXPECT_STREQ(tf::exec::vector_math().isa, tf::exec::to_string(isa));
    EXPECT_STREQ(tf::exec::vector_math_for(tf::MathAccuracy::Precise).isa, tf::exec::to_string(isa));
  }
  if (runnable.back() != tf::exec::VectorIsa::Avx512) {
    EXPECT_THROW(tf::exec::set_vector_isa(tf::exec::VectorIsa::Avx512), tf::Error);
  }
  tf::exec::set_vector_isa(saved);
}

// The executor's fused kernels at every width the CPU runs: a chain of library functions and
// arithmetic on 1001 points (not a multiple of any width, so the zero-padded tail is used) agrees
// with a long double evaluation of the same chain to a few ULP, for both accuracies.
TEST(VectorMath, FusedKernelsAgreeWithTheReferenceAtEveryWidth) {
  const tf::exec::VectorIsa saved_isa = tf::exec::vector_isa();
  const tf::MathAccuracy saved_accuracy = tf::math_accuracy();
  constexpr std::int64_t n = 1001;
  std::vector<double> xs(n);
  for (std::int64_t i = 0; i < n; ++i) xs[static_cast<std::size_t>(i)] = -3.0 + 6.0 * (static_cast<double>(i) + 0.5) / n;
  auto f = [](tf::Traced t) { return tf::exp(tf::sin(t) * t + tf::cos(t)) / (1.0 + t * t) + tf::tanh(t) * tf::log1p(t * t); };
  tf::Program program = tf::trace(f, tf::Tensor::from(xs, {n}));
  for (tf::MathAccuracy accuracy : {tf::MathAccuracy::Fast, tf::MathAccuracy::Precise}) {
    tf::set_math_accuracy(accuracy);
    for (tf::exec::VectorIsa isa : tf::exec::runnable_vector_isas()) {
      SCOPED_TRACE(std::string(tf::exec::to_string(isa)) + " " + tf::to_string(accuracy));
      tf::exec::set_vector_isa(isa);
      const tf::Tensor y = program.run({tf::Tensor::from(xs, {n})}).at(0);
      for (std::int64_t i = 0; i < n; ++i) {
        const long double t = xs[static_cast<std::size_t>(i)];
        const long double expected =
            std::exp(std::sin(t) * t + std::cos(t)) / (1.0L + t * t) + std::tanh(t) * std::log1p(t * t);
        const double got = y.data<double>()[i];
        // Each library call is within 4 ULP and the chain amplifies its errors by at most the
        // condition numbers of its steps (below 10 on [-3, 3]); 1e-13 relative covers both.
        EXPECT_NEAR(got, static_cast<double>(expected), 1e-13 * std::max(1.0L, std::fabs(expected))) << "at x = " << t;
      }
    }
  }
  tf::exec::set_vector_isa(saved_isa);
  tf::set_math_accuracy(saved_accuracy);
}

// An element's result does not depend on where it sits: computed alone at the end of an array
// (the tail, loaded and stored lane by lane) it has the bits it has inside a full vector, and
// nothing past the end is written. Every table, every tail length up to four AVX-512 vectors of
// f64, in place (y == x).
TEST(VectorMath, TailsGiveTheBitsOfFullVectors) {
  std::vector<double> xs(64);
  std::vector<float> fs(64);
  for (std::size_t i = 0; i < xs.size(); ++i) {
    xs[i] = -3.0 + 0.097 * static_cast<double>(i);
    fs[i] = static_cast<float>(xs[i]);
  }
  for (const VectorMathTable* table : tf::exec::runnable_vector_math_tables()) {
    SCOPED_TRACE(name_of(*table, true));
    for (const MathFn fn : {MathFn::Exp, MathFn::Tanh, MathFn::Sin, MathFn::Log1p}) {
      std::vector<double> full(xs.size());
      std::vector<float> full_f(fs.size());
      table->f64[static_cast<int>(fn)](xs.data(), full.data(), static_cast<std::int64_t>(xs.size()));
      table->f32[static_cast<int>(fn)](fs.data(), full_f.data(), static_cast<std::int64_t>(fs.size()));
      for (std::int64_t n = 1; n <= 33; ++n) {
        // Sixteen sentinels after the n elements: a tail store must not touch them.
        std::vector<double> part(xs.begin(), xs.begin() + n);
        std::vector<float> part_f(fs.begin(), fs.begin() + n);
        part.resize(static_cast<std::size_t>(n) + 16, 12345.0);
        part_f.resize(static_cast<std::size_t>(n) + 16, 12345.0f);
        table->f64[static_cast<int>(fn)](part.data(), part.data(), n);  // in place
        table->f32[static_cast<int>(fn)](part_f.data(), part_f.data(), n);
        for (std::size_t k = static_cast<std::size_t>(n); k < part.size(); ++k) {
          EXPECT_EQ(part[k], 12345.0) << "n " << n;
          EXPECT_EQ(part_f[k], 12345.0f) << "n " << n;
        }
        for (std::int64_t i = 0; i < n; ++i) {
          const auto k = static_cast<std::size_t>(i);
          EXPECT_EQ(std::memcmp(&part[k], &full[k], sizeof(double)), 0) << "fn " << static_cast<int>(fn) << " n " << n;
          EXPECT_EQ(std::memcmp(&part_f[k], &full_f[k], sizeof(float)), 0) << "fn " << static_cast<int>(fn) << " n " << n;
        }
      }
      // Two-operand arithmetic through the same tails.
      std::vector<double> sum_full(xs.size());
      table->arith_f64[static_cast<int>(tf::exec::ArithFn::Div)](xs.data(), full.data(), sum_full.data(),
                                                                  static_cast<std::int64_t>(xs.size()));
      for (std::int64_t n = 1; n <= 33; ++n) {
        std::vector<double> q(static_cast<std::size_t>(n));
        table->arith_f64[static_cast<int>(tf::exec::ArithFn::Div)](xs.data(), full.data(), q.data(), n);
        EXPECT_EQ(std::memcmp(q.data(), sum_full.data(), static_cast<std::size_t>(n) * sizeof(double)), 0) << n;
      }
    }
  }
}
