// Pure random numbers (tenferro/random.hpp): Threefry-2x32 against the published known-answer
// vectors, statistics (mean and variance of 10^6 normals within 5 sigma, chi-square tests of
// uniform bins and of categorical draws), bitwise reproducibility across runs and thread counts,
// key derivation, dropout's derivative through its mask, and the errors.
#include <gmock/gmock.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>

#include "tenferro/ops/random_attrs.hpp"
#include "tenferro/random.hpp"
#include "tenferro/tenferro.hpp"
#include "tenferro/ops/record.hpp"

namespace tf = tenferro;
namespace rnd = tenferro::random;
using T = tf::Traced;

namespace {
/// Runs f(key) once and returns its result.
template <class F>
tf::Tensor draw(F f, const tf::Tensor& key) {
  return tf::trace([&](T k) { return f(k); }, key).run({key}).at(0);
}
std::vector<double> as_doubles(const tf::Tensor& t) {
  std::vector<double> v;
  for (std::int64_t i = 0; i < t.numel(); ++i) v.push_back(t.element(i).real());
  return v;
}
bool same_bits(const tf::Tensor& a, const tf::Tensor& b) {
  return a.type() == b.type() && std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0;
}
/// Pearson's chi-square statistic of observed counts against expected ones.
double chi_square(const std::vector<double>& observed, const std::vector<double>& expected) {
  double x2 = 0;
  for (std::size_t i = 0; i < observed.size(); ++i) x2 += (observed[i] - expected[i]) * (observed[i] - expected[i]) / expected[i];
  return x2;
}
/// A loose upper critical value of chi-square with k degrees of freedom (far beyond the 0.999
/// quantile: k + 6 sqrt(2k)), so a correct generator fails with negligible probability.
double chi_square_bound(double k) { return k + 6 * std::sqrt(2 * k); }
}  // namespace

// Random123's known-answer vectors for threefry2x32_20, through random_bits: with stream c0 and
// offset c1, the first two words are Threefry(key, (c0, c1)).
TEST(Random, ThreefryMatchesKnownAnswers) {
  struct Kat {
    std::uint32_t k0, k1, c0, c1, r0, r1;
  };
  const Kat kats[] = {{0, 0, 0, 0, 0x6b200159u, 0x99ba4efeu},
                      {0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu, 0x1cb996fcu, 0xbb002be7u},
                      {0x13198a2eu, 0x03707344u, 0x243f6a88u, 0x85a308d3u, 0xc4923a9cu, 0x483df7a0u}};
  // 37 blocks: the first 32 are computed 16 counters at a time, the last 5 one by one. Each block
  // must equal the draw of that block alone (offset c1 + b, one block), and block 0 the vector.
  auto bits = [](const tf::Tensor& key, std::uint32_t c0, std::uint32_t c1, std::int64_t words) {
    return draw([&](T key_t) {
      return tf::apply(tf::ops::random_bits(key_t.type(), tf::RandomAttrs{{words}, tf::DType::I64, c0, c1}), {key_t});
    }, key);
  };
  for (const Kat& k : kats) {
    const tf::Tensor key = tf::Tensor::from(std::vector<std::int64_t>{k.k0, k.k1}, {2});
    const tf::Tensor w = bits(key, k.c0, k.c1, 2 * 37);
    EXPECT_EQ(w.data<std::int64_t>()[0], k.r0);
    EXPECT_EQ(w.data<std::int64_t>()[1], k.r1);
    for (std::uint32_t b = 0; b < 37; ++b) {
      const tf::Tensor one = bits(key, k.c0, k.c1 + b, 2);  // the counter wraps as a 32-bit word
      EXPECT_EQ(w.data<std::int64_t>()[2 * b], one.data<std::int64_t>()[0]) << "block " << b;
      EXPECT_EQ(w.data<std::int64_t>()[2 * b + 1], one.data<std::int64_t>()[1]) << "block " << b;
    }
  }
}

TEST(Random, NormalMeanAndVarianceWithinFiveSigma) {
  constexpr std::int64_t n = 1000000;
  for (tf::DType dt : {tf::DType::F64, tf::DType::F32}) {
    SCOPED_TRACE(tf::dtype_name(dt));
    const tf::Tensor z = draw([&](T k) { return rnd::normal(k, {n}, dt); }, rnd::key(42));
    double sum = 0, sum2 = 0, sum4 = 0;
    for (double v : as_doubles(z)) {
      ASSERT_TRUE(std::isfinite(v));
      sum += v;
      sum2 += v * v;
      sum4 += v * v * v * v;
    }
    const double mean = sum / n, var = sum2 / n - mean * mean;
    EXPECT_LT(std::abs(mean), 5.0 / std::sqrt(double(n)));            // sd of the mean: 1 / sqrt(n)
    EXPECT_LT(std::abs(var - 1.0), 5.0 * std::sqrt(2.0 / double(n)));  // sd of the variance: sqrt(2 / n)
    EXPECT_NEAR(sum4 / n, 3.0, 5.0 * std::sqrt(96.0 / double(n)));     // E z^4 = 3, Var z^4 = 96
  }
}

TEST(Random, UniformBinsPassChiSquare) {
  constexpr std::int64_t n = 1000000, bins = 100;
  for (tf::DType dt : {tf::DType::F64, tf::DType::F32}) {
    SCOPED_TRACE(tf::dtype_name(dt));
    const tf::Tensor u = draw([&](T k) { return rnd::uniform(k, {n}, dt, -2.0, 3.0); }, rnd::key(7));
    std::vector<double> counts(bins, 0), expected(bins, double(n) / bins);
    for (double v : as_doubles(u)) {
      ASSERT_GE(v, -2.0);
      ASSERT_LT(v, 3.0);
      counts[static_cast<std::size_t>((v + 2.0) / 5.0 * bins)] += 1;
    }
    EXPECT_LT(chi_square(counts, expected), chi_square_bound(bins - 1));
  }
}

TEST(Random, BernoulliCategoricalAndPermutation) {
  constexpr std::int64_t n = 200000;
  const tf::Tensor b = draw([&](T k) { return rnd::bernoulli(k, 0.3, {n}); }, rnd::key(1));
  double ones = 0;
  for (std::int64_t i = 0; i < n; ++i) ones += b.data<bool>()[i];
  EXPECT_NEAR(ones / n, 0.3, 5 * std::sqrt(0.3 * 0.7 / n));
  // Categorical draws from [n, 4] logits follow softmax(logits).
  const std::vector<double> logits = {0.0, 1.0, -1.0, 2.0};
  std::vector<double> rows;
  for (std::int64_t i = 0; i < n; ++i) rows.insert(rows.end(), logits.begin(), logits.end());
  const tf::Tensor l = tf::Tensor::from(rows, {n, 4});
  const tf::Tensor c = tf::trace([](T k, T x) { return rnd::categorical(k, x); }, rnd::key(2), l).run({rnd::key(2), l}).at(0);
  std::vector<double> counts(4, 0), expected(4);
  double z = 0;
  for (double v : logits) z += std::exp(v);
  for (std::size_t j = 0; j < 4; ++j) expected[j] = n * std::exp(logits[j]) / z;
  for (std::int64_t i = 0; i < n; ++i) counts[static_cast<std::size_t>(c.data<std::int64_t>()[i])] += 1;
  EXPECT_LT(chi_square(counts, expected), chi_square_bound(3));
  const tf::Tensor p = draw([](T k) { return rnd::permutation(k, 1000); }, rnd::key(3));
  std::vector<std::int64_t> sorted(p.data<std::int64_t>(), p.data<std::int64_t>() + 1000);
  std::sort(sorted.begin(), sorted.end());
  for (std::int64_t i = 0; i < 1000; ++i) EXPECT_EQ(sorted[static_cast<std::size_t>(i)], i);
  EXPECT_FALSE(std::is_sorted(p.data<std::int64_t>(), p.data<std::int64_t>() + 1000));
}

// The same key gives the same bits on every run and every thread count; different keys, split
// keys and folded keys give different draws.
TEST(Random, ReproducibleAcrossRunsAndThreadCounts) {
  auto many = [](T k) { return rnd::normal(k, {300000}) + tf::astype(rnd::bits(k, {300000}), tf::DType::F64); };
  const int threads = tf::num_threads();
  tf::set_num_threads(1);
  const tf::Tensor one = draw(many, rnd::key(5));
  tf::set_num_threads(2);
  const tf::Tensor two = draw(many, rnd::key(5));
  const tf::Tensor again = draw(many, rnd::key(5));
  tf::set_num_threads(threads);
  EXPECT_TRUE(same_bits(one, two));
  EXPECT_TRUE(same_bits(two, again));
  EXPECT_FALSE(same_bits(one, draw(many, rnd::key(6))));
  const tf::Tensor keys = draw([](T k) {
    auto ks = rnd::split(k, 3);
    return tf::stack({ks[0], ks[1], ks[2], rnd::fold_in(k, 0), rnd::fold_in(k, 1), k});
  }, rnd::key(9));
  std::set<std::pair<std::int64_t, std::int64_t>> distinct;
  for (std::int64_t i = 0; i < 6; ++i) {
    const std::int64_t w0 = keys.data<std::int64_t>()[2 * i], w1 = keys.data<std::int64_t>()[2 * i + 1];
    EXPECT_GE(w0, 0);
    EXPECT_LT(w0, std::int64_t{1} << 32);
    EXPECT_GE(w1, 0);
    EXPECT_LT(w1, std::int64_t{1} << 32);
    distinct.insert({w0, w1});
  }
  EXPECT_EQ(distinct.size(), 6u);
}

// dropout's gradient is its mask scaled by 1 / (1 - p): exactly the forward's kept elements.
TEST(Random, DropoutDifferentiatesThroughItsMask) {
  const tf::Tensor x = tf::Tensor::from(std::vector<double>(1000, 2.0), {1000});
  const tf::Tensor key = rnd::key(11);
  auto f = [](T k, T v) { return tf::dropout(k, v, 0.25); };
  const tf::Tensor y = tf::trace(f, key, x).run({key, x}).at(0);
  const tf::Tensor g = tf::grad([](T k, T v) { return tf::sum(tf::dropout(k, v, 0.25) * v); }, 1)(key, x);
  double kept = 0;
  for (std::int64_t i = 0; i < 1000; ++i) {
    const double yi = y.data<double>()[i];
    ASSERT_TRUE(yi == 0.0 || yi == 2.0 / 0.75);
    kept += yi != 0.0;
    // d/dv sum(dropout(v) v) = 2 m v / (1 - p) with the same mask m.
    EXPECT_DOUBLE_EQ(g.data<double>()[i], yi == 0.0 ? 0.0 : 2 * 2.0 / 0.75);
  }
  EXPECT_NEAR(kept / 1000, 0.75, 5 * std::sqrt(0.75 * 0.25 / 1000));
}

TEST(Random, BadInputGivesTypedErrors) {
  const tf::Tensor key = rnd::key(1);
  EXPECT_THROW(tf::trace([](T k) { return rnd::uniform(tf::astype(k, tf::DType::F64), {2}); }, key), tf::DTypeError);
  // A stack of keys i64[k.., 2] draws for each key (vmap batches keys this way); a key whose last
  // axis is not 2 is refused.
  EXPECT_TRUE(same_bits(draw([](T k) { return rnd::uniform(tf::reshape(k, {1, 2}), {2}); }, key),
                        draw([](T k) { return tf::reshape(rnd::uniform(k, {2}), {1, 2}); }, key)));
  EXPECT_THROW(tf::trace([](T k) { return rnd::uniform(tf::reshape(k, {2, 1}), {2}); }, key), tf::ShapeError);
  EXPECT_THROW(tf::trace([](T k) { return rnd::uniform(k, {2}, tf::DType::I64); }, key), tf::DTypeError);
  EXPECT_THROW(tf::trace([](T k) { return rnd::uniform(k, {-1}); }, key), tf::ShapeError);
  EXPECT_THROW(tf::trace([](T k) { return rnd::uniform(k, {2}, tf::DType::F64, 1.0, 0.0); }, key), tf::ValueError);
  EXPECT_THROW(tf::trace([](T k) { return rnd::bernoulli(k, 1.5, {2}); }, key), tf::ValueError);
  EXPECT_THROW(tf::trace([](T k) { return tf::dropout(k, tf::astype(k, tf::DType::F64), 1.0); }, key), tf::ValueError);
  EXPECT_THROW(tf::trace([](T k) { return rnd::split(k, 0)[0]; }, key), tf::ValueError);
  const tf::Tensor bad = tf::Tensor::from(std::vector<std::int64_t>{-1, 0}, {2});
  try {
    draw([](T k) { return rnd::uniform(k, {2}); }, bad);
    FAIL() << "expected ValueError";
  } catch (const tf::ValueError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("key word 0"));
  }
}
