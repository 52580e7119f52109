// NumPy-style indexing (tenferro/index_expr.hpp): each expression against positions written out
// by hand from NumPy's rules, derivatives to order 2 (check_grads) in f64 and c128, and errors.
#include <gmock/gmock.h>

#include "linalg_test_util.hpp"
#include "tenferro/index_expr.hpp"

namespace tf = tenferro;
using namespace tenferro::test;
using tf::ellipsis;
using tf::newaxis;
using tf::none;
using tf::range;

namespace {
/// 0 .. 59 as [3, 4, 5]: element (i, j, k) holds 20 i + 5 j + k.
const tf::Tensor kX = [] {
  std::vector<double> v(60);
  for (int i = 0; i < 60; ++i) v[static_cast<std::size_t>(i)] = i;
  return tf::Tensor::from(v, {3, 4, 5});
}();

/// The values at every combination of the given positions per axis (row-major), in NumPy's order.
std::vector<double> picked(const std::vector<std::int64_t>& is, const std::vector<std::int64_t>& js,
                           const std::vector<std::int64_t>& ks) {
  std::vector<double> v;
  for (auto i : is) {
    for (auto j : js) {
      for (auto k : ks) v.push_back(static_cast<double>(20 * i + 5 * j + k));
    }
  }
  return v;
}
std::vector<double> values_of(const tf::Tensor& t) {
  std::vector<double> v;
  for (std::int64_t i = 0; i < t.numel(); ++i) v.push_back(at(t, i).real());
  return v;
}
tf::Tensor indexed(const std::function<T(T)>& f) {
  return run([&](const std::vector<T>& a) { return std::vector<T>{f(a[0])}; }, {kX}).at(0);
}
const std::vector<std::int64_t> kI = {0, 1, 2}, kJ = {0, 1, 2, 3}, kK = {0, 1, 2, 3, 4};
}  // namespace

TEST(IndexExpr, IntegersRangesEllipsisAndNewAxesFollowNumPy) {
  struct Case {
    const char* numpy;
    std::function<T(T)> f;
    tf::Shape shape;
    std::vector<double> want;
  };
  const std::vector<Case> cases = {
      {"x[1]", [](T x) { return x[1]; }, {4, 5}, picked({1}, kJ, kK)},
      {"x[-1, ::-1]", [](T x) { return x[{-1, range(none, none, -1)}]; }, {4, 5}, picked({2}, {3, 2, 1, 0}, kK)},
      {"x[0:3:2, ..., 3]", [](T x) { return x[{range(0, 3, 2), ellipsis, 3}]; }, {2, 4}, picked({0, 2}, kJ, {3})},
      {"x[None, 0, 1:3]", [](T x) { return x[{newaxis, 0, range(1, 3)}]; }, {1, 2, 5}, picked({0}, {1, 2}, kK)},
      {"x[..., -1:-4:-2]", [](T x) { return x[{ellipsis, range(-1, -4, -2)}]; }, {3, 4, 2}, picked(kI, kJ, {4, 2})},
      {"x[:, 3:0:-1, None, 1]", [](T x) { return x[{tf::all, range(3, 0, -1), newaxis, 1}]; }, {3, 3, 1},
       picked(kI, {3, 2, 1}, {1})},
      {"x[-10:10, 5:]", [](T x) { return x[{range(-10, 10), range(5, none)}]; }, {3, 0, 5}, {}},
      {"x[2:0]", [](T x) { return x[range(2, 0)]; }, {0, 4, 5}, {}},
      {"x[::-2, 1, ::3]", [](T x) { return x[{range(none, none, -2), 1, range(none, none, 3)}]; }, {2, 2},
       picked({2, 0}, {1}, {0, 3})},
      {"x[..., None]", [](T x) { return x[{ellipsis, newaxis}]; }, {3, 4, 5, 1}, picked(kI, kJ, kK)},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.numpy);
    const tf::Tensor r = indexed(c.f);
    EXPECT_EQ(r.shape(), c.shape);
    EXPECT_EQ(values_of(r), c.want);
  }
}

TEST(IndexExpr, AnIndexTensorTakesAlongItsAxis) {
  const tf::Tensor r = indexed([](T x) {
    const T idx = tf::constant(x, tf::Tensor::from(std::vector<std::int64_t>{3, -4, 1, 1}, {2, 2}));
    return x[{range(1, 3), idx, 2}];
  });
  EXPECT_EQ(r.shape(), (tf::Shape{2, 2, 2}));  // x[1:3, idx, 2]: the index's shape at its axis
  EXPECT_EQ(values_of(r), picked({1, 2}, {3, 0, 1, 1}, {2}));
  // The gradient of a sum over repeated positions counts them.
  const tf::Tensor g = tf::grad([](T x) {
    return tf::sum(x[{0, tf::constant(x, tf::Tensor::from(std::vector<std::int64_t>{2, 2, 0}, {3})), range(none, none, -1)}]);
  })(kX);
  for (std::int64_t j = 0; j < 4; ++j) {
    for (std::int64_t k = 0; k < 5; ++k) EXPECT_EQ(g.data<double>()[5 * j + k], j == 2 ? 2 : j == 0 ? 1 : 0);
  }
  for (std::int64_t e = 20; e < 60; ++e) EXPECT_EQ(g.data<double>()[e], 0);
}

TEST(IndexExpr, SecondDerivativesInRealAndComplex) {
  std::mt19937_64 rng(43);
  for (tf::DType dt : {tf::DType::F64, tf::DType::C128}) {
    SCOPED_TRACE(tf::dtype_name(dt));
    const tf::Tensor x = random_matrix(rng, {3, 4, 5}, dt);
    expect_grads([](const std::vector<T>& v) {
      const T sq = v[0] * v[0];
      const T idx = tf::constant(v[0], tf::Tensor::from(std::vector<std::int64_t>{4, 0, 4}, {3}));
      return std::vector<T>{sq[{range(none, none, -2), newaxis, ellipsis, 3}], sq[{1, range(3, 0, -1), idx}]};
    }, {x});
  }
}

TEST(IndexExpr, BadIndicesGiveTypedErrors) {
  auto trace = [](std::function<T(T)> f) { return tf::trace([&](T x) { return f(x); }, kX); };
  EXPECT_THROW(trace([](T x) { return x[{ellipsis, 0, ellipsis}]; }), tf::ValueError);
  EXPECT_THROW(trace([](T x) { return x[{0, 0, 0, 0}]; }), tf::ShapeError);
  EXPECT_THROW(trace([](T x) { return x[{0, 4}]; }), tf::ValueError);
  EXPECT_THROW(trace([](T x) { return x[-4]; }), tf::ValueError);
  EXPECT_THROW(trace([](T x) { return x[range(0, 3, 0)]; }), tf::ValueError);
  EXPECT_THROW(trace([](T x) { return x[{tf::gt(x, x)}]; }), tf::DTypeError);
  EXPECT_THROW(trace([](T x) {
    const T i = tf::constant(x, tf::Tensor::from(std::vector<std::int64_t>{0}, {1}));
    return x[{i, i}];
  }), tf::ValueError);
  try {
    trace([](T x) { return x[{1, 7}]; });
    FAIL() << "expected ValueError";
  } catch (const tf::ValueError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("out of range for axis 1 of length 4"));
  }
}
