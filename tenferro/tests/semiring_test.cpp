// Tropical semiring contraction: semiring_dot_general against a naive loop written here (every
// semiring, f32 and f64, shapes that cross the kernel's tile and k-block edges, batch and permuted
// axes), the index result (a winner, and the first one at ties), infinite entries under the
// semiring's absorbing rule, tropical einsum against a naive loop, sliced against unsliced, and
// the refusal to differentiate.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <string>

#include "tenferro/tenferro.hpp"

namespace tf = tenferro;
using ::testing::HasSubstr;
using T = tf::Traced;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// The semiring's product and sum, spelled out: -inf absorbs in max-plus, +inf in min-plus, 0 in
/// max-times (as the semiring's zero), whatever IEEE arithmetic says about inf - inf or 0 * inf.
double times(tf::Semiring s, double a, double b) {
  switch (s) {
    case tf::Semiring::MaxPlus: return (a == -kInf || b == -kInf) ? -kInf : a + b;
    case tf::Semiring::MinPlus: return (a == kInf || b == kInf) ? kInf : a + b;
    case tf::Semiring::MaxTimes: return (a == 0 || b == 0) ? 0 : a * b;
    case tf::Semiring::Standard: return a * b;
  }
  return 0;
}
double plus(tf::Semiring s, double a, double b) { return s == tf::Semiring::MinPlus ? std::min(a, b) : std::max(a, b); }

/// C[i, j] and the first winning k of A [m, k] and B [k, n].
std::pair<std::vector<double>, std::vector<std::int64_t>> naive_product(tf::Semiring s, const std::vector<double>& a,
                                                                       const std::vector<double>& b, std::int64_t m,
                                                                       std::int64_t n, std::int64_t k) {
  std::vector<double> c(static_cast<std::size_t>(m * n), tf::semiring_zero(s));
  std::vector<std::int64_t> idx(static_cast<std::size_t>(m * n), 0);
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      auto& cij = c[static_cast<std::size_t>(i * n + j)];
      for (std::int64_t q = 0; q < k; ++q) {
        const double p = times(s, a[static_cast<std::size_t>(i * k + q)], b[static_cast<std::size_t>(q * n + j)]);
        if (plus(s, p, cij) != cij) {
          cij = p;
          idx[static_cast<std::size_t>(i * n + j)] = q;
        }
      }
    }
  }
  return {c, idx};
}

std::vector<double> random_values(std::mt19937_64& rng, std::size_t n, bool nonnegative, bool integers) {
  std::uniform_real_distribution<double> u(nonnegative ? 0.0 : -2.0, 2.0);
  std::vector<double> v(n);
  for (auto& x : v) x = integers ? std::round(u(rng) * 2) : u(rng);  // integers: many ties
  return v;
}

tf::Tensor from_values(const std::vector<double>& v, tf::Shape shape, tf::DType dtype) {
  tf::Tensor t = tf::Tensor::from(v, shape);
  if (dtype == tf::DType::F64) return t;
  std::vector<float> f(v.begin(), v.end());
  return tf::Tensor::from(f, std::move(shape));
}

std::vector<double> as_doubles(const tf::Tensor& t) {
  std::vector<double> v(static_cast<std::size_t>(t.numel()));
  for (std::int64_t i = 0; i < t.numel(); ++i) v[static_cast<std::size_t>(i)] = t.element(i).real();
  return v;
}

/// The naive tropical einsum of an explicit spec without '...': the semiring sum over every
/// assignment of the letters of the semiring product of the operands' elements.
std::vector<double> naive_semiring_einsum(tf::Semiring s, const std::string& spec, const std::vector<tf::Tensor>& xs) {
  std::vector<std::string> terms(1);
  std::string out;
  const std::size_t arrow = spec.find("->");
  for (char c : spec.substr(0, arrow)) {
    if (c == ',') {
      terms.emplace_back();
    } else {
      terms.back() += c;
    }
  }
  out = spec.substr(arrow + 2);
  std::map<char, std::int64_t> size;
  for (std::size_t k = 0; k < terms.size(); ++k) {
    for (std::size_t a = 0; a < terms[k].size(); ++a) size[terms[k][a]] = xs[k].shape()[a];
  }
  std::int64_t out_count = 1;
  for (char c : out) out_count *= size[c];
  std::vector<double> acc(static_cast<std::size_t>(out_count), tf::semiring_zero(s));
  std::map<char, std::int64_t> value;
  for (auto [c, n] : size) value[c] = 0;
  while (true) {
    double term = s == tf::Semiring::MaxTimes ? 1.0 : 0.0;
    for (std::size_t k = 0; k < terms.size(); ++k) {
      std::int64_t flat = 0;
      for (std::size_t a = 0; a < terms[k].size(); ++a) flat = flat * xs[k].shape()[a] + value[terms[k][a]];
      term = times(s, term, xs[k].element(flat).real());
    }
    std::int64_t o = 0;
    for (char c : out) o = o * size[c] + value[c];
    auto& slot = acc[static_cast<std::size_t>(o)];
    slot = plus(s, slot, term);
    auto it = value.rbegin();
    for (; it != value.rend(); ++it) {
      if (++it->second < size[it->first]) break;
      it->second = 0;
    }
    if (it == value.rend()) break;
  }
  return acc;
}

const tf::Semiring kTropical[] = {tf::Semiring::MaxPlus, tf::Semiring::MinPlus, tf::Semiring::MaxTimes};

}  // namespace

TEST(SemiringDot, MatchesTheNaiveProductAcrossTileAndBlockEdges) {
  std::mt19937_64 rng(1);
  struct Size {
    std::int64_t m, n, k;
  };
  for (Size sz : {Size{1, 1, 1}, Size{4, 8, 3}, Size{7, 13, 5}, Size{5, 17, 300}, Size{33, 9, 513}, Size{0, 3, 2},
                  Size{3, 2, 0}}) {
    for (tf::Semiring s : kTropical) {
      for (tf::DType dtype : {tf::DType::F64, tf::DType::F32}) {
        SCOPED_TRACE(std::to_string(sz.m) + "x" + std::to_string(sz.n) + "x" + std::to_string(sz.k) + " " +
                     tf::semiring_name(s) + " " + tf::dtype_name(dtype));
        const bool nonneg = s == tf::Semiring::MaxTimes;
        // f32 holds small integers exactly, so its sums of them compare exactly too.
        const bool ints = dtype == tf::DType::F32;
        auto a = random_values(rng, static_cast<std::size_t>(sz.m * sz.k), nonneg, ints);
        auto b = random_values(rng, static_cast<std::size_t>(sz.k * sz.n), nonneg, ints);
        const auto [want, want_index] = naive_product(s, a, b, sz.m, sz.n, sz.k);
        const tf::Tensor ta = from_values(a, {sz.m, sz.k}, dtype), tb = from_values(b, {sz.k, sz.n}, dtype);
        auto f = [s](T x, T y) {
          auto [v, i] = tf::semiring_dot_general_index(x, y, s, tf::DotDims{{}, {}, {1}, {0}});
          return std::vector<T>{v, i};
        };
        const tf::Tensors got = tf::trace(f, ta, tb).run({ta, tb});
        const auto values = as_doubles(got[0]);
        for (std::size_t e = 0; e < want.size(); ++e) {
          if (std::isinf(want[e]) || dtype == tf::DType::F32) {
            ASSERT_EQ(values[e], want[e]) << "element " << e;
          } else {
            ASSERT_NEAR(values[e], want[e], 1e-12 * std::max(1.0, std::abs(want[e]))) << "element " << e;
          }
        }
        // Exactly representable products (f32 integers): the index is the naive loop's first winner.
        if (ints) {
          EXPECT_EQ(std::vector<std::int64_t>(got[1].values<std::int64_t>().begin(), got[1].values<std::int64_t>().end()),
                    want_index);
        }
      }
    }
  }
}

TEST(SemiringDot, BatchAndPermutedAxesFollowDotGeneralsLayout) {
  std::mt19937_64 rng(2);
  // a [k=5, b=2, m=3], b [n=4, b=2, k=5]: batch (1)(1), contract (0)(2); result [b, m, n].
  const auto av = random_values(rng, 30, false, false), bv = random_values(rng, 40, false, false);
  const tf::Tensor a = tf::Tensor::from(av, {5, 2, 3}), b = tf::Tensor::from(bv, {4, 2, 5});
  auto f = [](T x, T y) { return tf::semiring_dot_general(x, y, tf::Semiring::MaxPlus, tf::DotDims{{1}, {1}, {0}, {2}}); };
  const tf::Tensor c = tf::trace(f, a, b).run({a, b})[0];
  ASSERT_EQ(c.shape(), (tf::Shape{2, 3, 4}));
  for (std::int64_t bt = 0; bt < 2; ++bt) {
    for (std::int64_t i = 0; i < 3; ++i) {
      for (std::int64_t j = 0; j < 4; ++j) {
        double best = -kInf;
        for (std::int64_t q = 0; q < 5; ++q) {
          best = std::max(best, a.at<double>({q, bt, i}) + b.at<double>({j, bt, q}));
        }
        EXPECT_EQ(c.at<double>({bt, i, j}), best);
      }
    }
  }
}

TEST(SemiringDot, InfiniteEntriesFollowTheAbsorbingZero) {
  // Rows mixing -inf, +inf and finite values: -inf + inf is the zero in max-plus (not NaN).
  const std::vector<double> a = {-kInf, 1, kInf, -kInf, 2, 0, -kInf, -kInf, -kInf};
  const std::vector<double> b = {kInf, -kInf, 3, 0, -kInf, kInf, 1, 2, -kInf};
  for (tf::Semiring s : {tf::Semiring::MaxPlus, tf::Semiring::MinPlus}) {
    SCOPED_TRACE(tf::semiring_name(s));
    auto av = a, bv = b;
    if (s == tf::Semiring::MinPlus) {
      for (auto& x : av) x = -x;
      for (auto& x : bv) x = -x;
    }
    const auto want = naive_product(s, av, bv, 3, 3, 3).first;
    const tf::Tensor ta = tf::Tensor::from(av, {3, 3}), tb = tf::Tensor::from(bv, {3, 3});
    auto f = [s](T x, T y) { return tf::semiring_dot_general(x, y, s, tf::DotDims{{}, {}, {1}, {0}}); };
    EXPECT_EQ(as_doubles(tf::trace(f, ta, tb).run({ta, tb})[0]), want);
  }
  // max-times: 0 * inf is the zero, 0.
  const tf::Tensor ta = tf::Tensor::from(std::vector<double>{0, kInf}, {1, 2});
  const tf::Tensor tb = tf::Tensor::from(std::vector<double>{kInf, 0}, {2, 1});
  auto f = [](T x, T y) { return tf::semiring_dot_general(x, y, tf::Semiring::MaxTimes, tf::DotDims{{}, {}, {1}, {0}}); };
  EXPECT_EQ(tf::trace(f, ta, tb).run({ta, tb})[0].at<double>({0, 0}), 0.0);
}

TEST(SemiringEinsum, MatchesTheNaiveTropicalSum) {
  std::mt19937_64 rng(3);
  struct Case {
    const char* spec;
    std::vector<tf::Shape> shapes;
  };
  const Case cases[] = {
      {"ij,jk,kl->il", {{3, 4}, {4, 5}, {5, 2}}},
      {"ij,jk,ki->i", {{3, 4}, {4, 2}, {2, 3}}},
      {"ijk,jl->il", {{2, 3, 4}, {3, 2}}},  // k: one operand's letter, reduced by the semiring sum
      {"ii->i", {{3, 3}}},
      {"ij,ij->i", {{3, 4}, {3, 4}}},
      {"i,j->ij", {{3}, {4}}},
      {"bij,bjk->bik", {{2, 3, 4}, {2, 4, 3}}},
      {"ab,bc,cd,da,ac->", {{2, 3}, {3, 2}, {2, 3}, {3, 2}, {2, 2}}},
  };
  for (tf::Semiring s : kTropical) {
    for (const Case& c : cases) {
      SCOPED_TRACE(std::string(c.spec) + " " + tf::semiring_name(s));
      std::vector<tf::Tensor> xs;
      for (const auto& shape : c.shapes) {
        xs.push_back(tf::Tensor::from(random_values(rng, static_cast<std::size_t>(tf::numel(shape)),
                                                    s == tf::Semiring::MaxTimes, false),
                                      shape));
      }
      tf::tn::Options options;
      options.semiring = s;
      const auto got = as_doubles(tf::einsum(c.spec, std::span<const tf::Tensor>(xs), options));
      const auto want = naive_semiring_einsum(s, c.spec, xs);
      ASSERT_EQ(got.size(), want.size());
      for (std::size_t e = 0; e < got.size(); ++e) EXPECT_NEAR(got[e], want[e], 1e-12 * (1 + std::abs(want[e])));
      // Sliced to the largest input's size (below the largest intermediate where there is one):
      // the same values.
      double largest = 1;
      for (const auto& x : xs) largest = std::max(largest, static_cast<double>(x.numel()));
      options.path.memory_limit = largest;
      EXPECT_EQ(as_doubles(tf::einsum(c.spec, std::span<const tf::Tensor>(xs), options)), got);
    }
  }
}

TEST(SemiringEinsum, DifferentiatingIsRefusedNamingTheOp) {
  const tf::Tensor a = tf::Tensor::ones({2, 3}), b = tf::Tensor::ones({3, 2});
  auto loss = [](T x, T y) {
    tf::tn::Options options;
    options.semiring = tf::Semiring::MaxPlus;
    return tf::sum(tf::einsum("ij,jk->ik", {x, y}, options));
  };
  try {
    tf::grad(loss)(a, b);
    ADD_FAILURE() << "a max-plus einsum was differentiated";
  } catch (const tf::ADRuleError& e) {
    EXPECT_THAT(e.what(), HasSubstr("semiring_dot_general"));
    EXPECT_THAT(e.what(), HasSubstr("max_plus"));
    EXPECT_THAT(e.what(), HasSubstr("not differentiable"));
  }
}

TEST(SemiringDot, BadOperandsThrowErrorsNamingTheOp) {
  const tf::Tensor z = tf::Tensor::zeros({2, 2}, tf::DType::C128), a = tf::Tensor::zeros({2, 3});
  auto dot = [](tf::Semiring s) {
    return [s](T x, T y) { return tf::semiring_dot_general(x, y, s, tf::DotDims{{}, {}, {1}, {0}}); };
  };
  EXPECT_THROW(tf::trace(dot(tf::Semiring::MaxPlus), z, z), tf::DTypeError);
  try {
    tf::trace(dot(tf::Semiring::MinPlus), a, a);
    ADD_FAILURE() << "mismatched contraction accepted";
  } catch (const tf::ShapeError& e) {
    EXPECT_THAT(e.what(), HasSubstr("semiring_dot_general"));
    EXPECT_THAT(e.what(), HasSubstr("f64[2, 3]"));
  }
  EXPECT_THROW(tf::trace(dot(tf::Semiring::Standard), a, tf::Tensor::zeros({3, 2})), tf::ValueError);
}
