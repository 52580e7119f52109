// take, index_add, cumsum, reverse and the composites tril, triu, diagonal, diag, stack, split,
// one_hot: values against loops written here, gradients against closed forms (repeated indices
// accumulate), derivatives to order 2 (check_grads) in f64 and c128, and the errors.
#include <gmock/gmock.h>

#include "linalg_test_util.hpp"

namespace tf = tenferro;
using namespace tenferro::test;
using ::testing::ElementsAre;

namespace {
const tf::DType kDTypes[] = {tf::DType::F64, tf::DType::C128};

std::vector<double> values(const tf::Tensor& t) {
  std::vector<double> v;
  for (std::int64_t i = 0; i < t.numel(); ++i) v.push_back(at(t, i).real());
  return v;
}

const tf::Tensor k3x4 = tf::Tensor::from(std::vector<double>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {3, 4});
}  // namespace

TEST(Take, SelectsAlongAnAxisWithNegativeAndRepeatedIndices) {
  auto out = run([](const std::vector<T>& x) {
    return std::vector<T>{tf::take(x[0], {2, -3, 2}, 0), tf::take(x[0], {3, 0}, -1),
                          tf::take(x[0], tf::constant(x[0], tf::Tensor::from(std::vector<std::int64_t>{1, 0, 1, 1}, {2, 2})), 1)};
  }, {k3x4});
  EXPECT_EQ(out[0].shape(), (tf::Shape{3, 4}));
  EXPECT_THAT(values(out[0]), ElementsAre(8, 9, 10, 11, 0, 1, 2, 3, 8, 9, 10, 11));
  EXPECT_THAT(values(out[1]), ElementsAre(3, 0, 7, 4, 11, 8));
  EXPECT_EQ(out[2].shape(), (tf::Shape{3, 2, 2}));
  EXPECT_THAT(values(out[2]), ElementsAre(1, 0, 1, 1, 5, 4, 5, 5, 9, 8, 9, 9));
  // The gradient of sum(take(x, idx)) counts each row's uses: repeats accumulate.
  auto g = tf::grad([](T x) { return tf::sum(tf::take(x, {2, 0, 2, 2}, 0)); })(tf::Tensor::ones({3, 2}));
  EXPECT_THAT(values(g), ElementsAre(1, 1, 0, 0, 3, 3));
}

TEST(Take, IndexErrorsNameTheEntry) {
  EXPECT_THROW(run([](const std::vector<T>& x) { return std::vector<T>{tf::take(x[0], {0, 3}, 0)}; }, {k3x4}),
               tf::ValueError);
  try {
    run([](const std::vector<T>& x) { return std::vector<T>{tf::take(x[0], std::vector<std::int64_t>{-4}, 0)}; }, {k3x4});
    FAIL() << "expected ValueError";
  } catch (const tf::ValueError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("index -4"));
  }
  EXPECT_THROW(tf::trace([](T x) { return tf::take(x, tf::astype(x, tf::DType::F64), 0); }, k3x4), tf::DTypeError);
  EXPECT_THROW(tf::trace([](T x) { return tf::take(x, std::vector<std::int64_t>{0}, 2); }, k3x4), tf::ShapeError);
}

TEST(IndexAdd, AccumulatesRepeatedIndices) {
  const tf::Tensor u = tf::Tensor::from(std::vector<double>{1, 2, 3, 4, 5, 6}, {3, 2});
  auto out = run([](const std::vector<T>& x) {
    const T idx = tf::constant(x[0], tf::Tensor::from(std::vector<std::int64_t>{1, 1, -1}, {3}));
    return std::vector<T>{tf::index_add(tf::full_like(x[0], 0.0), idx, x[0], 0)};
  }, {u});
  EXPECT_EQ(out[0].shape(), (tf::Shape{3, 2}));
  EXPECT_THAT(values(out[0]), ElementsAre(0, 0, 4, 6, 5, 6));
  EXPECT_THROW(tf::trace([](T b, T x) {
    return tf::index_add(b, tf::constant(b, tf::Tensor::from(std::vector<std::int64_t>{0}, {1})), x, 0);
  }, k3x4, u), tf::ShapeError);
}

TEST(Cumsum, BothDirectionsAlongEitherAxis) {
  auto out = run([](const std::vector<T>& x) {
    return std::vector<T>{tf::cumsum(x[0], 1), tf::cumsum(x[0], 0, true)};
  }, {k3x4});
  EXPECT_THAT(values(out[0]), ElementsAre(0, 1, 3, 6, 4, 9, 15, 22, 8, 17, 27, 38));
  EXPECT_THAT(values(out[1]), ElementsAre(12, 15, 18, 21, 12, 14, 16, 18, 8, 9, 10, 11));
}

TEST(Reverse, FlipsTheGivenAxes) {
  auto out = run([](const std::vector<T>& x) { return std::vector<T>{tf::reverse(x[0], {0, -1}), tf::reverse(x[0], {1})}; },
                 {k3x4});
  EXPECT_THAT(values(out[0]), ElementsAre(11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0));
  EXPECT_THAT(values(out[1]), ElementsAre(3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8));
}

TEST(Triangles, TrilTriuDiagonalDiag) {
  auto out = run([](const std::vector<T>& x) {
    const T d = tf::diagonal(x[0], 1);
    return std::vector<T>{tf::tril(x[0], -1), tf::triu(x[0], 1), d, tf::diagonal(x[0], -1), tf::diag(d, -1)};
  }, {k3x4});
  EXPECT_THAT(values(out[0]), ElementsAre(0, 0, 0, 0, 4, 0, 0, 0, 8, 9, 0, 0));
  EXPECT_THAT(values(out[1]), ElementsAre(0, 1, 2, 3, 0, 0, 6, 7, 0, 0, 0, 11));
  EXPECT_THAT(values(out[2]), ElementsAre(1, 6, 11));
  EXPECT_THAT(values(out[3]), ElementsAre(4, 9));
  EXPECT_EQ(out[4].shape(), (tf::Shape{4, 4}));
  EXPECT_THAT(values(out[4]), ElementsAre(0, 0, 0, 0, 1, 0, 0, 0, 0, 6, 0, 0, 0, 0, 11, 0));
}

TEST(StackSplitOneHot, RoundTripsAndValues) {
  auto out = run([](const std::vector<T>& x) {
    auto parts = tf::split(x[0], {1, 3}, 1);
    const T idx = tf::constant(x[0], tf::Tensor::from(std::vector<std::int64_t>{2, 0, 5}, {3}));
    return std::vector<T>{tf::stack({parts[0], parts[0]}, -1), parts[1], tf::one_hot(idx, 3)};
  }, {k3x4});
  EXPECT_EQ(out[0].shape(), (tf::Shape{3, 1, 2}));
  EXPECT_THAT(values(out[0]), ElementsAre(0, 0, 4, 4, 8, 8));
  EXPECT_THAT(values(out[1]), ElementsAre(1, 2, 3, 5, 6, 7, 9, 10, 11));
  EXPECT_THAT(values(out[2]), ElementsAre(0, 0, 1, 1, 0, 0, 0, 0, 0));  // 5 is out of range: a zero row
  EXPECT_THROW(tf::trace([](T x) { return tf::split(x, {1, 1}, 1)[0]; }, k3x4), tf::ShapeError);
}

TEST(Where, ScalarOnEitherSide) {
  const tf::Tensor x = tf::Tensor::from(std::vector<double>{-1.5, 0.5, 2.0}, {3});
  auto out = run([](const std::vector<T>& v) {
    const T positive = tf::gt(v[0], tf::full_like(v[0], 0.0));
    return std::vector<T>{tf::where(positive, v[0], 0.0), tf::where(positive, -1.0, v[0] * 2.0)};
  }, {x});
  EXPECT_THAT(values(out[0]), ElementsAre(0, 0.5, 2.0));
  EXPECT_THAT(values(out[1]), ElementsAre(-3.0, -1, -1));
  // d/dx sum(where(x > 0, x^2, 0)) = 2x where x > 0, else 0.
  auto g = tf::grad([](T v) { return tf::sum(tf::where(tf::gt(v, tf::full_like(v, 0.0)), v * v, 0.0)); })(x);
  EXPECT_THAT(values(g), ElementsAre(0, 1.0, 4.0));
}

TEST(IndexingOps, SecondDerivativesInRealAndComplex) {
  std::mt19937_64 rng(31);
  for (tf::DType dt : kDTypes) {
    SCOPED_TRACE(tf::dtype_name(dt));
    const tf::Tensor x = random_matrix(rng, {3, 4}, dt), y = random_matrix(rng, {3, 4}, dt);
    expect_grads([](const std::vector<T>& v) {
      const T sq = v[0] * v[1];
      const T idx = tf::constant(v[0], tf::Tensor::from(std::vector<std::int64_t>{1, 1, 0}, {3}));
      return std::vector<T>{tf::take(sq, {2, 0, 2}, 0), tf::index_add(v[0], idx, sq, 0), tf::cumsum(sq, 1),
                            tf::cumsum(sq, 0, true), tf::reverse(sq, {0, 1}), tf::tril(sq, 1), tf::diagonal(sq, -1),
                            tf::diag(tf::diagonal(sq), 1), tf::stack({v[0], sq}, 1), tf::split(sq, {2, 2}, 1)[1]};
    }, {x, y});
  }
}

namespace {
tf::Tensor starts_of(std::vector<std::int64_t> s) {
  const auto n = static_cast<std::int64_t>(s.size());
  return tf::Tensor::from(s, {n});
}
}  // namespace

TEST(DynamicSlice, WindowsAtRunTimeStartsClampedIntoRange) {
  // The starts are program inputs: one compiled program serves every start.
  auto window = [](T x, T s) { return tf::dynamic_slice(x, s, {2, 2}); };
  tf::Program p = tf::trace(window, k3x4, starts_of({0, 0}));
  EXPECT_THAT(values(p.run({k3x4, starts_of({1, 2})}).at(0)), ElementsAre(6, 7, 10, 11));
  EXPECT_THAT(values(p.run({k3x4, starts_of({5, -3})}).at(0)), ElementsAre(4, 5, 8, 9));  // clamped to (1, 0)
  EXPECT_THAT(values(p.run({k3x4, starts_of({0, 3})}).at(0)), ElementsAre(2, 3, 6, 7));   // clamped to (0, 2)
  auto update = [](T x, T u, T s) { return tf::dynamic_update_slice(x, u, s); };
  const tf::Tensor u = tf::Tensor::from(std::vector<double>{-1, -2, -3, -4}, {2, 2});
  tf::Program q = tf::trace(update, k3x4, u, starts_of({0, 0}));
  EXPECT_THAT(values(q.run({k3x4, u, starts_of({2, 3})}).at(0)),  // clamped to (1, 2)
              ElementsAre(0, 1, 2, 3, 4, 5, -1, -2, 8, 9, -3, -4));
}

// d/dx sum(w * dynamic_slice(x, s)) is w placed in the window; d/dx sum(c * dus(x, u, s)) is c with
// the window zeroed (overwritten), and d/du is c's window.
TEST(DynamicSlice, GradientsWriteBackIntoTheWindow) {
  const tf::Tensor s = starts_of({1, 1});
  const tf::Tensor w = tf::Tensor::from(std::vector<double>{1, 2, 3, 4, 5, 6}, {2, 3});
  auto gx = tf::grad([&](T x, T st) { return tf::sum(tf::dynamic_slice(x, st, {2, 3}) * tf::constant(x, w)); })(k3x4, s);
  EXPECT_THAT(values(gx), ElementsAre(0, 0, 0, 0, 0, 1, 2, 3, 0, 4, 5, 6));
  const tf::Tensor u = tf::Tensor::ones({2, 3});
  auto f = [](T x, T up, T st) { return tf::sum(tf::dynamic_update_slice(x, up, st) * x); };
  const std::vector<tf::Tensor> g = {tf::grad(f, 0)(k3x4, u, s), tf::grad(f, 1)(k3x4, u, s)};
  // d/dx sum(dus(x, u) * x) = dus(x, u) + x with the window zeroed (x there was overwritten):
  // outside the window 2x, inside u = 1.
  EXPECT_THAT(values(g[0]), ElementsAre(0, 2, 4, 6, 8, 1, 1, 1, 16, 1, 1, 1));
  EXPECT_THAT(values(g[1]), ElementsAre(5, 6, 7, 9, 10, 11));
}

TEST(DynamicSlice, SecondDerivativesAndErrors) {
  std::mt19937_64 rng(37);
  for (tf::DType dt : kDTypes) {
    SCOPED_TRACE(tf::dtype_name(dt));
    const tf::Tensor x = random_matrix(rng, {3, 4}, dt), y = random_matrix(rng, {2, 3}, dt);
    expect_grads([](const std::vector<T>& v) {
      const T s = tf::constant(v[0], starts_of({1, 5}));
      const T sq = v[0] * v[0];
      return std::vector<T>{tf::dynamic_slice(sq, s, {2, 3}) * v[1], tf::dynamic_update_slice(sq, v[1] * v[1], s)};
    }, {x, y});
  }
  const tf::Tensor s = starts_of({0, 0});
  EXPECT_THROW(tf::trace([](T x, T st) { return tf::dynamic_slice(x, tf::astype(st, tf::DType::F64), {1, 1}); }, k3x4, s),
               tf::DTypeError);
  EXPECT_THROW(tf::trace([](T x, T st) { return tf::dynamic_slice(x, st, {1, 1}); }, k3x4, starts_of({0, 0, 0})),
               tf::DTypeError);
  EXPECT_THROW(tf::trace([](T x, T st) { return tf::dynamic_slice(x, st, {4, 1}); }, k3x4, s), tf::ShapeError);
  EXPECT_THROW(tf::trace([](T x, T st) { return tf::dynamic_slice(x, st, {1}); }, k3x4, s), tf::ShapeError);
  EXPECT_THROW(tf::trace([](T x, T st) { return tf::dynamic_update_slice(x, tf::astype(x, tf::DType::F32), st); }, k3x4, s),
               tf::DTypeError);
  EXPECT_THROW(tf::trace([](T x, T st) { return tf::dynamic_update_slice(x, tf::reshape(x, {4, 3}), st); }, k3x4, s),
               tf::ShapeError);
}

// concatenate and stack join any dtype, as numpy.concatenate and numpy.stack: bool and i64 parts
// too (concatenate pads and adds, which bool cannot do itself).
TEST(Indexing, ConcatenateAndStackJoinBoolAndIntegerParts) {
  const tf::Tensor a = tf::Tensor::from(std::vector<bool>{true, false}, {2});
  const tf::Tensor b = tf::Tensor::from(std::vector<bool>{false, true, true}, {3});
  const tf::Tensor j = tf::trace([](T x, T y) { return tf::concatenate({x, y}, 0); }, a, b).run({a, b})[0];
  ASSERT_EQ(j.dtype(), tf::DType::Bool);
  const std::vector<bool> joined = {true, false, false, true, true};
  for (std::size_t k = 0; k < joined.size(); ++k) EXPECT_EQ(j.data<bool>()[k], joined[k]) << k;
  const tf::Tensor s = tf::trace([](T x) { return tf::stack({x, x}, 1); }, a).run({a})[0];
  ASSERT_EQ(s.shape(), (tf::Shape{2, 2}));
  EXPECT_TRUE(s.data<bool>()[0] && s.data<bool>()[1] && !s.data<bool>()[2] && !s.data<bool>()[3]);
  const tf::Tensor i = tf::Tensor::from(std::vector<std::int64_t>{4, -7}, {2});
  const tf::Tensor ij = tf::trace([](T x) { return tf::concatenate({x, x}, 0); }, i).run({i})[0];
  ASSERT_EQ(ij.dtype(), tf::DType::I64);
  EXPECT_EQ(ij.data<std::int64_t>()[3], -7);
}
