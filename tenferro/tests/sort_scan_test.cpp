// sort (values and permutation), argsort, top_k, take_along_axis, scatter-add by a full-rank index,
// and the scans cumprod, cummax, cummin, logcumsumexp: values against loops written here (stable
// order, ties, NaN, complex order), gradients against closed forms, derivatives to order 2
// (check_grads) in f64 and c128, and the errors.
#include <gmock/gmock.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "linalg_test_util.hpp"
#include "tenferro/sort_scan.hpp"

namespace tf = tenferro;
using namespace tenferro::test;
using ::testing::ElementsAre;

namespace {
std::vector<double> values(const tf::Tensor& t) {
  std::vector<double> v;
  for (std::int64_t i = 0; i < t.numel(); ++i) v.push_back(at(t, i).real());
  return v;
}
std::vector<std::int64_t> ints(const tf::Tensor& t) {
  return std::vector<std::int64_t>(t.data<std::int64_t>(), t.data<std::int64_t>() + t.numel());
}
tf::Tensor vec(std::vector<double> v, tf::Shape shape) { return tf::Tensor::from(v, std::move(shape)); }
tf::Tensor index(std::vector<std::int64_t> v, tf::Shape shape) { return tf::Tensor::from(v, std::move(shape)); }
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
}  // namespace

TEST(Sort, MatchesAStableSortAlongEveryAxisWithTiesAndNaN) {
  std::mt19937_64 rng(5);
  std::uniform_int_distribution<int> small(0, 4);  // many ties
  std::vector<double> data(3 * 5 * 4);
  for (double& v : data) v = small(rng);
  data[7] = kNaN;
  data[30] = kNaN;
  const tf::Tensor x = vec(data, {3, 5, 4});
  for (std::int64_t axis = 0; axis < 3; ++axis) {
    for (bool descending : {false, true}) {
      SCOPED_TRACE("axis " + std::to_string(axis) + (descending ? " descending" : " ascending"));
      auto out = run([&](const std::vector<T>& a) {
        auto [v, p] = tf::sort_with_indices(a[0], axis, descending);
        return std::vector<T>{v, p};
      }, {x});
      const tf::Shape& s = x.shape();
      std::int64_t inner = 1;
      for (std::int64_t k = axis + 1; k < 3; ++k) inner *= s[static_cast<std::size_t>(k)];
      const std::int64_t n = s[static_cast<std::size_t>(axis)], outer = x.numel() / (n * inner);
      for (std::int64_t o = 0; o < outer; ++o) {
        for (std::int64_t i = 0; i < inner; ++i) {
          std::vector<std::int64_t> order(static_cast<std::size_t>(n));
          std::iota(order.begin(), order.end(), 0);
          auto key = [&](std::int64_t k) { return data[static_cast<std::size_t>((o * n + k) * inner + i)]; };
          // The reference order: NaN as +infinity and above it; stable.
          auto rank_of = [&](std::int64_t k) { return std::isnan(key(k)) ? 1e300 : key(k); };
          std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
            return descending ? rank_of(a) > rank_of(b) : rank_of(a) < rank_of(b);
          });
          for (std::int64_t k = 0; k < n; ++k) {
            const std::int64_t q = (o * n + k) * inner + i;
            EXPECT_EQ(out[1].data<std::int64_t>()[q], order[static_cast<std::size_t>(k)]);
            const double got = out[0].data<double>()[q], want = key(order[static_cast<std::size_t>(k)]);
            EXPECT_TRUE(got == want || (std::isnan(got) && std::isnan(want)));
          }
        }
      }
    }
  }
}

TEST(Sort, IntegersComplexArgsortAndTopK) {
  auto ints_out = run([](const std::vector<T>& a) { return std::vector<T>{tf::sort(a[0]), tf::argsort(a[0], 0, true)}; },
                      {index({3, -1, 7, 3, 0}, {5})});
  EXPECT_THAT(ints(ints_out[0]), ElementsAre(-1, 0, 3, 3, 7));
  EXPECT_THAT(ints(ints_out[1]), ElementsAre(2, 0, 3, 4, 1));  // equal values keep their order
  // Complex: by real part, then imaginary part.
  tf::Tensor z(tf::TensorType{tf::DType::C128, {4}});
  const tf::c128 zs[] = {{1, 2}, {0, 5}, {1, -1}, {-2, 0}};
  std::copy(std::begin(zs), std::end(zs), z.data<tf::c128>());
  auto zo = run([](const std::vector<T>& a) { return std::vector<T>{tf::argsort(a[0])}; }, {z});
  EXPECT_THAT(ints(zo[0]), ElementsAre(3, 1, 2, 0));
  auto top = run([](const std::vector<T>& a) {
    auto [v, i] = tf::top_k(a[0], 2);
    return std::vector<T>{v, i};
  }, {vec({0.5, 3, -1, 3, 2, 9}, {2, 3})});
  EXPECT_EQ(top[0].shape(), (tf::Shape{2, 2}));
  EXPECT_THAT(values(top[0]), ElementsAre(3, 0.5, 9, 3));
  EXPECT_THAT(ints(top[1]), ElementsAre(1, 0, 2, 0));
}

// d/dx_j of sum(w * sort(x)) is w at x_j's sorted position: the gradient is the weights scattered
// back by the permutation.
TEST(Sort, GradientScattersBackByThePermutation) {
  const tf::Tensor x = vec({0.3, -1.2, 2.5, 0.1}, {4});
  auto g = tf::grad([](T a) {
    return tf::sum(tf::sort(a) * tf::constant(a, vec({1, 10, 100, 1000}, {4})));
  })(x);
  // Sorted: -1.2 (x1), 0.1 (x3), 0.3 (x0), 2.5 (x2).
  EXPECT_THAT(values(g), ElementsAre(100, 1, 1000, 10));
}

TEST(TakeAlongAxis, GathersPerElementAndBroadcasts) {
  const tf::Tensor x = vec({0, 1, 2, 3, 4, 5}, {2, 3});
  auto out = run([](const std::vector<T>& a) {
    const T idx = tf::constant(a[0], index({2, 0, 1, 1}, {2, 2}));
    const T col = tf::constant(a[0], index({-1, 0}, {1, 2}));  // broadcast over rows
    return std::vector<T>{tf::take_along_axis(a[0], idx, 1), tf::take_along_axis(a[0], col, 1),
                          tf::take_along_axis(a[0], tf::argsort(a[0], 0, true), 0)};
  }, {x});
  EXPECT_THAT(values(out[0]), ElementsAre(2, 0, 4, 4));
  EXPECT_THAT(values(out[1]), ElementsAre(2, 0, 5, 3));
  EXPECT_THAT(values(out[2]), ElementsAre(3, 4, 5, 0, 1, 2));
  // Its gradient scatters back and accumulates at repeated positions.
  auto g = tf::grad([](T a) {
    return tf::sum(tf::take_along_axis(a, tf::constant(a, index({2, 2, 1, 1}, {2, 2})), 1));
  })(x);
  EXPECT_THAT(values(g), ElementsAre(0, 0, 2, 0, 2, 0));
}

TEST(IndexAdd, FullRankIndexScattersPerElement) {
  auto out = run([](const std::vector<T>& a) {
    const T idx = tf::constant(a[0], index({0, 0, 2, 1, 1, 1}, {2, 3}));
    return std::vector<T>{tf::index_add(tf::full_like(a[0], 0.0), idx, a[0], 1)};
  }, {vec({1, 2, 3, 4, 5, 6}, {2, 3})});
  EXPECT_THAT(values(out[0]), ElementsAre(3, 0, 3, 0, 15, 0));  // torch.scatter_add's result
}

TEST(Scans, ValuesAgainstLoops) {
  const tf::Tensor x = vec({2, -1, 0, 3, 0.5, 4, -2, 1, 1.5, -3, 2, 0.25, 5}, {13});
  auto out = run([](const std::vector<T>& a) {
    return std::vector<T>{tf::cumprod(a[0], 0), tf::cummax(a[0], 0), tf::cummin(a[0], 0, true), tf::logcumsumexp(a[0], 0)};
  }, {x});
  const std::vector<double> v = values(x);
  double p = 1, mx = -1e300, lse = -1e300;
  for (std::size_t i = 0; i < v.size(); ++i) {
    p *= v[i];
    mx = std::max(mx, v[i]);
    lse = std::max(lse, v[i]) + std::log(std::exp(lse - std::max(lse, v[i])) + std::exp(v[i] - std::max(lse, v[i])));
    EXPECT_EQ(values(out[0])[i], p) << i;
    EXPECT_EQ(values(out[1])[i], mx) << i;
    EXPECT_NEAR(values(out[3])[i], lse, 1e-14) << i;
    double mn = 1e300;
    for (std::size_t j = i; j < v.size(); ++j) mn = std::min(mn, v[j]);
    EXPECT_EQ(values(out[2])[i], mn) << i;
  }
  // i64 and a higher-rank axis.
  auto io = run([](const std::vector<T>& a) { return std::vector<T>{tf::cumprod(a[0], 0), tf::cummax(a[0], 1)}; },
                {index({1, 5, -2, 3, 2, 4}, {2, 3})});
  EXPECT_THAT(ints(io[0]), ElementsAre(1, 5, -2, 3, 10, -8));
  EXPECT_THAT(ints(io[1]), ElementsAre(1, 5, 5, 3, 3, 4));
}

TEST(Scans, LogcumsumexpIsStableAndCumprodDifferentiatesThroughZeros) {
  auto big = run([](const std::vector<T>& a) { return std::vector<T>{tf::logcumsumexp(a[0], 0)}; },
                 {vec({1000, 1000, -1000, 999}, {4})});
  EXPECT_NEAR(values(big[0])[1], 1000 + std::log(2.0), 1e-12);
  EXPECT_NEAR(values(big[0])[3], 1000 + std::log(2 + std::exp(-1.0)), 1e-12);
  // d/dx_j of sum(cumprod(x)) = sum over i >= j of prod_{k <= i, k != j} x_k, exact at a zero.
  const std::vector<double> v = {2, 0, 3, -1};
  auto g = tf::grad([](T a) { return tf::sum(tf::cumprod(a, 0)); })(vec(v, {4}));
  for (std::size_t j = 0; j < v.size(); ++j) {
    double want = 0;
    for (std::size_t i = j; i < v.size(); ++i) {
      double prod = 1;
      for (std::size_t k = 0; k <= i; ++k) prod *= k == j ? 1 : v[k];
      want += prod;
    }
    EXPECT_EQ(values(g)[j], want) << j;
  }
}

TEST(SortScan, SecondDerivativesInRealAndComplex) {
  std::mt19937_64 rng(41);
  for (tf::DType dt : {tf::DType::F64, tf::DType::C128}) {
    SCOPED_TRACE(tf::dtype_name(dt));
    const tf::Tensor x = random_matrix(rng, {3, 5}, dt), y = random_matrix(rng, {3, 5}, dt);
    expect_grads([](const std::vector<T>& v) {
      const T sq = v[0] * v[1];
      // A fixed permutation from a real key, so the complex case sorts too.
      const T perm = tf::argsort(tf::real(v[0] + v[1]), 1);
      const T idx = tf::constant(v[0], index({4, 0, 0, 1, 2, 3, 3, 3, 0, 1, 2, 2, 4, 4, 4}, {3, 5}));
      std::vector<T> out = {tf::cumprod(sq, 1), tf::cumprod(sq, 0, true), tf::take_along_axis(sq, perm, 1),
                            tf::index_add(v[0], idx, sq, 1)};
      if (v[0].dtype() == tf::DType::F64) {
        out.push_back(tf::sort(sq, 1));
        out.push_back(tf::sort(sq, 0, true));
        out.push_back(tf::top_k(sq, 2).first);
        out.push_back(tf::logcumsumexp(sq, 1));
        out.push_back(tf::cummax(sq, 1));
        out.push_back(tf::cummin(sq, 0, true));
      } else {
        out.push_back(tf::sort(sq, 1));  // complex order: by real part (random: no ties)
      }
      return out;
    }, {x, y});
  }
}

TEST(SortScan, BadInputGivesTypedErrors) {
  const tf::Tensor x = vec({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_THROW(tf::trace([](T a) { return tf::sort(tf::astype(a, tf::DType::Bool)); }, x), tf::DTypeError);
  EXPECT_THROW(tf::trace([](T a) { return tf::sort(a, 2); }, x), tf::ShapeError);
  EXPECT_THROW(tf::trace([](T a) { return tf::top_k(a, 4).first; }, x), tf::ValueError);
  EXPECT_THROW(tf::trace([](T a) { return tf::take_along_axis(a, tf::constant(a, index({0, 1}, {2})), 1); }, x),
               tf::ShapeError);
  EXPECT_THROW(tf::trace([](T a) { return tf::take_along_axis(a, a, 1); }, x), tf::DTypeError);
  EXPECT_THROW(tf::trace([](T a) { return tf::take_along_axis(a, tf::constant(a, index({0, 1, 0, 1}, {2, 2, 1})), 1); }, x),
               tf::ShapeError);
  EXPECT_THROW(tf::trace([](T a) { return tf::logcumsumexp(tf::astype(a, tf::DType::C128), 0); }, x), tf::DTypeError);
  EXPECT_THROW(tf::trace([](T a) { return tf::cummax(a, 3); }, x), tf::ShapeError);
  try {
    run([](const std::vector<T>& a) {
      return std::vector<T>{tf::take_along_axis(a[0], tf::constant(a[0], index({0, 3, 0, 1, 1, 1}, {2, 3})), 1)};
    }, {x});
    FAIL() << "expected ValueError";
  } catch (const tf::ValueError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("index 3"));
  }
}
