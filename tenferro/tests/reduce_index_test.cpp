// reduce_max_index / reduce_min_index, the built-in multi-output ops (max_with_index,
// min_with_index, argmax, argmin): values and indices against a plain scan, ties and NaN, shape
// and dtype errors, and derivatives through the values (finite differences and the adjoint
// identity to order 2, and closed forms) while the indices feed other computations.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "op_test_util.hpp"
#include "tenferro/tenferro.hpp"
#include "tenferro/ops/record.hpp"
#include "tenferro/program.hpp"

namespace tf = tenferro;
using testing::HasSubstr;

namespace {

tf::Tensor uniform(tf::Shape shape, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-2.0, 2.0);
  std::vector<double> v(static_cast<std::size_t>(tf::numel(shape)));
  for (auto& x : v) x = u(rng);
  return tf::Tensor::from(v, shape);
}

/// The reference: for each slice along `axis`, the first index whose element is extremal (a NaN
/// counts as extremal), and the element there.
std::pair<std::vector<double>, std::vector<std::int64_t>> scan(const tf::Tensor& x, std::size_t axis, bool max) {
  const tf::Shape& s = x.shape();
  std::int64_t outer = 1, inner = 1;
  for (std::size_t k = 0; k < axis; ++k) outer *= s[k];
  for (std::size_t k = axis + 1; k < s.size(); ++k) inner *= s[k];
  const std::int64_t n = s[axis];
  std::vector<double> values;
  std::vector<std::int64_t> indices;
  for (std::int64_t o = 0; o < outer; ++o) {
    for (std::int64_t i = 0; i < inner; ++i) {
      std::int64_t best = -1;
      double b = 0;
      for (std::int64_t k = 0; k < n; ++k) {
        const double c = x.element(o * n * inner + k * inner + i).real();
        const bool better = best < 0 || std::isnan(c) || (max ? c > b : c < b);
        if (!std::isnan(b) && better) {
          b = c;
          best = k;
        }
      }
      values.push_back(b);
      indices.push_back(best);
    }
  }
  return {values, indices};
}

std::vector<tf::Tensor> run_with_index(const tf::Tensor& x, std::int64_t axis, bool max) {
  auto f = [&](tf::Traced a) {
    auto [v, i] = max ? tf::max_with_index(a, axis) : tf::min_with_index(a, axis);
    return std::vector<tf::Traced>{v, i};
  };
  return tf::trace(f, x).run({x});
}

void expect_matches_scan(const tf::Tensor& x, std::int64_t axis, bool max) {
  const std::size_t k = static_cast<std::size_t>(axis < 0 ? axis + static_cast<std::int64_t>(x.rank()) : axis);
  const auto [values, indices] = scan(x, k, max);
  const auto r = run_with_index(x, axis, max);
  ASSERT_EQ(r.size(), 2u);
  tf::Shape reduced = x.shape();
  reduced.erase(reduced.begin() + static_cast<std::ptrdiff_t>(k));
  EXPECT_EQ(r[0].type(), (tf::TensorType{x.dtype(), reduced}));
  EXPECT_EQ(r[1].type(), (tf::TensorType{tf::DType::I64, reduced}));
  for (std::size_t j = 0; j < values.size(); ++j) {
    const double v = r[0].element(static_cast<std::int64_t>(j)).real();
    if (std::isnan(values[j])) {
      EXPECT_TRUE(std::isnan(v)) << j;
    } else {
      EXPECT_EQ(v, values[j]) << j;
    }
    EXPECT_EQ(r[1].element(static_cast<std::int64_t>(j)).real(), static_cast<double>(indices[j])) << j;
  }
}

}  // namespace

TEST(ReduceIndex, ValuesAndIndicesMatchAScanOnEveryAxis) {
  const tf::Tensor x = uniform({3, 5, 4}, 1);
  for (bool max : {true, false}) {
    for (std::int64_t axis : {0, 1, 2, -1}) {
      SCOPED_TRACE((max ? "max axis " : "min axis ") + std::to_string(axis));
      expect_matches_scan(x, axis, max);
    }
  }
}

TEST(ReduceIndex, TiesPickTheFirstAndNaNIsExtremal) {
  // i64 values in [-2, 2]: many ties.
  std::vector<std::int64_t> ints;
  for (int k = 0; k < 24; ++k) ints.push_back((k * 7) % 5 - 2);
  const tf::Tensor xi = tf::Tensor::from(ints, {4, 6});
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const tf::Tensor xn = tf::Tensor::from({{1.0, nan, 3.0, nan}, {2.0, 2.0, -1.0, 2.0}});
  for (bool max : {true, false}) {
    expect_matches_scan(xi, 1, max);
    expect_matches_scan(xi, 0, max);
    expect_matches_scan(xn, 1, max);
  }
  const auto r = run_with_index(xn, 1, true);
  EXPECT_EQ(r[1].element(0).real(), 1.0);  // the first NaN
  EXPECT_EQ(r[1].element(1).real(), 0.0);  // the first of three 2s
}

TEST(ReduceIndex, SingleSlicesAndScalarResults) {
  // Rank-1 operands reduce to rank-0 results (which the scalar path leaves to the executor).
  const tf::Tensor x = tf::Tensor::from({0.5, 3.0, -1.0, 3.0});
  expect_matches_scan(x, 0, true);
  expect_matches_scan(x, 0, false);
  expect_matches_scan(uniform({1, 3}, 2), 0, true);
}

// An empty axis other than the reduced one: empty results (found by the random-program fuzzer: the
// kernel divided by the empty slices' count).
TEST(ReduceIndex, EmptyAxesBesideTheReducedOneGiveEmptyResults) {
  const tf::Tensor x(tf::TensorType{tf::DType::F64, {3, 0}});
  auto out = tf::trace([](tf::Traced a) {
    auto [v, i] = tf::max_with_index(a, 0);
    return std::vector<tf::Traced>{v, i};
  }, x).run({x});
  EXPECT_EQ(out.at(0).shape(), (tf::Shape{0}));
  EXPECT_EQ(out.at(1).shape(), (tf::Shape{0}));
}

TEST(ReduceIndex, BadOperandsThrowNamingTheOp) {
  auto call = [](tf::TensorType t, std::int64_t axis) { tf::ops::reduce_index(tf::OpKind::ReduceMaxIndex, t, axis); };
  try {
    call({tf::DType::C128, {3}}, 0);
    FAIL() << "complex accepted";
  } catch (const tf::DTypeError& e) {
    EXPECT_THAT(e.what(), HasSubstr("reduce_max_index"));
    EXPECT_THAT(e.what(), HasSubstr("c128[3]"));
  }
  EXPECT_THROW(call({tf::DType::Bool, {3}}, 0), tf::DTypeError);
  try {
    call({tf::DType::F64, {3, 0}}, 1);
    FAIL() << "empty axis accepted";
  } catch (const tf::ShapeError& e) {
    EXPECT_THAT(e.what(), HasSubstr("empty"));
  }
  EXPECT_THROW(call({tf::DType::F64, {3}}, 1), tf::ShapeError);
  auto traced_call = [](tf::Traced a) { return tf::argmax(a, 2); };
  EXPECT_THROW(tf::trace(traced_call, tf::Tensor::from({1.0, 2.0})), tf::ShapeError);
  // A multi-output op is not a single value.
  auto single = [](tf::Traced a) {
    return tf::apply(tf::ops::reduce_index(tf::OpKind::ReduceMinIndex, a.type(), 0), {a});
  };
  EXPECT_THROW(tf::trace(single, tf::Tensor::from({1.0, 2.0})), tf::Error);
}

TEST(ReduceIndex, GradientIsOneHotAtTheChosenElement) {
  const tf::Tensor x = tf::Tensor::from({{1.0, 4.0, 2.0}, {0.5, -1.0, 0.25}});
  auto loss = [](tf::Traced a) { return tf::sum(tf::max_with_index(a, 1).first); };
  const tf::Tensor g = tf::grad(loss)(x);
  const tf::Tensor want = tf::Tensor::from({{0.0, 1.0, 0.0}, {1.0, 0.0, 0.0}});
  EXPECT_TRUE(tf::test::near(g, want, 0.0));
  // At a tie the derivative follows the first maximum (reduce_max splits it instead).
  const tf::Tensor tie = tf::Tensor::from({{2.0, 2.0, 1.0}});
  EXPECT_TRUE(tf::test::near(tf::grad(loss)(tie), tf::Tensor::from({{1.0, 0.0, 0.0}}), 0.0));
}

TEST(ReduceIndex, IndicesFeedOtherValuesWithoutDerivative) {
  // f(x) = sum_i argmin(x_i) * sum_j x_ij: the index is piecewise constant, so the gradient is the
  // index broadcast along each row.
  const tf::Tensor x = tf::Tensor::from({{1.0, 4.0, -2.0}, {0.5, -1.0, 0.25}});
  auto f = [](tf::Traced a) { return tf::sum(tf::astype(tf::argmin(a, 1), tf::DType::F64) * tf::sum(a, {1})); };
  const tf::Tensor g = tf::grad(f)(x);
  EXPECT_TRUE(tf::test::near(g, tf::Tensor::from({{2.0, 2.0, 2.0}, {1.0, 1.0, 1.0}}), 0.0));
}

TEST(ReduceIndex, DerivativesPassCheckGradsToOrderTwo) {
  using T = tf::Traced;
  // Distinct random values: no ties within the finite-difference steps.
  const tf::Tensor x = uniform({3, 4}, 7), w = uniform({3, 4}, 8);
  auto f = [](T a, T b) {
    auto [v, i] = tf::max_with_index(a * b, 1);
    auto [u, j] = tf::min_with_index(tf::sin(a), 0);
    return tf::sum(v * v) + tf::sum(tf::exp(u)) + tf::sum(tf::astype(i, tf::DType::F64)) * 0.0 +
           tf::sum(tf::astype(j, tf::DType::F64) * tf::sum(u));
  };
  auto graph = tf::detail::trace_graph(f, tf::detail::types_of({x, w}));
  const std::vector<tf::Tensor> args = {x, w};
  auto result = tidu::testkit::check_grads(tidu::testkit::function_of(graph), std::span<const tf::Tensor>(args), 2);
  EXPECT_TRUE(result.ok) << result.message;
  EXPECT_FALSE(result.checks.empty());
}

// A bad axis list is a ShapeError before an empty axis is a ValueError, as in NumPy (which reports
// a repeated axis before it looks at the data): max and min of an empty operand over repeated
// axes name the repeat. Found by the random invalid calls (min(f32[0], {0, 0, -1})).
TEST(ReduceIndex, RepeatedAxesAreReportedBeforeEmptyOnes) {
  const tf::Tensor empty = tf::Tensor::zeros({0}, tf::DType::F32);
  for (auto reduce : {+[](tf::Traced a) { return tf::min(a, {0, 0, -1}); }, +[](tf::Traced a) { return tf::max(a, {0, -1}); }}) {
    try {
      tf::trace(reduce, empty);
      FAIL() << "repeated axes accepted";
    } catch (const tf::ShapeError& e) {
      EXPECT_THAT(e.what(), HasSubstr("axes"));
    }
  }
  EXPECT_THROW(tf::trace([](tf::Traced a) { return tf::min(a, {0}); }, empty), tf::ValueError);
}
