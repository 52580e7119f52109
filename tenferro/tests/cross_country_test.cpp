// Cross-country Jacobians (tenferro/jacobian.hpp, JacobianMode::CrossCountry): the cost model's
// orders on closed-form examples, every order equal to jacfwd, derivatives of the accumulated
// Jacobian, the automatic choice, and what the mode refuses.
#include <gtest/gtest.h>

#include <cmath>

#include "golden_files.hpp"
#include "op_test_util.hpp"
#include "sparse/elimination.hpp"
#include "tenferro/tenferro.hpp"

namespace tf = tenferro;
namespace sp = tenferro::sparse;
using T = tf::Traced;

namespace {

/// A chain x -> v1 -> ... -> y of dense edges, vertex sizes `sizes` (x first).
sp::JacobianGraph<sp::NoValues::Value> dense_chain(const std::vector<std::int64_t>& sizes) {
  sp::JacobianGraph<sp::NoValues::Value> g;
  sp::NoValues none;
  for (const std::int64_t s : sizes) g.add_vertex(s);
  for (std::size_t v = 0; v + 1 < sizes.size(); ++v) {
    g.add_edge(static_cast<int>(v), static_cast<int>(v + 1), {sp::EdgeKind::Dense, 1, {}}, none);
  }
  return g;
}

// The matrix chain J4 J3 J2 J1 with J1 100 x 10, J2 5 x 100, J3 100 x 5, J4 10 x 100 (x of 10, y of
// 10). Forward elimination is ((J4 (J3 (J2 J1)))): 5000 + 5000 + 10000 multiply-adds; reverse is
// (((J4 J3) J2) J1): the same 20000. Cheapest first eliminates v1 (J2 J1: 5000), then v3 (J4 J3:
// 5000), then v2 ((J4 J3)(J2 J1): 10 x 5 x 10 = 500): 10500, which neither extreme reaches.
TEST(Elimination, CheapestFirstBracketsAMatrixChainBetterThanEitherExtreme) {
  const auto g = dense_chain({10, 100, 5, 100, 10});
  const std::vector<int> middle = {1, 2, 3};
  const double ops = 3 * sp::kOpCost;
  EXPECT_DOUBLE_EQ(sp::plan_order(g, middle, tf::EliminationOrder::Forward).cost, 20000 + ops);
  EXPECT_DOUBLE_EQ(sp::plan_order(g, middle, tf::EliminationOrder::Reverse).cost, 20000 + ops);
  const sp::PlannedOrder markowitz = sp::plan_order(g, middle, tf::EliminationOrder::Markowitz);
  EXPECT_DOUBLE_EQ(markowitz.cost, 10500 + ops);
  EXPECT_EQ(markowitz.vertices, (std::vector<int>{1, 3, 2}));
  EXPECT_LE(sp::plan_order(g, middle, tf::EliminationOrder::Search).cost, markowitz.cost);
  // Edge by edge, cheapest first: J2 J1, J4 J3 (from either side: a tie), then their product.
  const sp::PlannedOrder edges = sp::plan_order(g, middle, tf::EliminationOrder::Edges);
  EXPECT_DOUBLE_EQ(edges.cost, 10500 + ops);
  EXPECT_EQ(edges.edges.size(), 3u);
  EXPECT_DOUBLE_EQ(sp::plan_order(g, middle, tf::EliminationOrder::Best).cost, 10500 + ops);
}

// Edge elimination empties every intermediate vertex and leaves the one edge x -> y; Best is
// never dearer than any order.
TEST(Elimination, FrontAndBackEliminationOfEveryEdgeLeavesTheJacobianEdge) {
  // x -> a -> y and x -> b -> y with a and b also joined: a -> b.
  sp::JacobianGraph<sp::NoValues::Value> g;
  sp::NoValues none;
  for (const std::int64_t size : {4, 3, 5, 2}) g.add_vertex(size);
  for (const auto& [from, to] : std::vector<std::pair<int, int>>{{0, 1}, {0, 2}, {1, 2}, {1, 3}, {2, 3}}) {
    g.add_edge(from, to, {sp::EdgeKind::Dense, 1, {}}, none);
  }
  const sp::PlannedOrder edges = sp::plan_order(g, {1, 2}, tf::EliminationOrder::Edges);
  auto left = g;
  sp::apply_plan(left, edges, none);
  for (const int v : {1, 2}) {
    EXPECT_TRUE(left.in_edges(v).empty() && left.out_edges(v).empty()) << "vertex " << v << " keeps edges";
  }
  EXPECT_EQ(left.out_edges(0).size(), 1u);
  EXPECT_TRUE(left.out_edges(0).contains(3));
  const double best = sp::plan_order(g, {1, 2}, tf::EliminationOrder::Best).cost;
  for (const tf::EliminationOrder o : {tf::EliminationOrder::Forward, tf::EliminationOrder::Reverse, tf::EliminationOrder::Markowitz,
                                       tf::EliminationOrder::Search, tf::EliminationOrder::Edges}) {
    EXPECT_LE(best, sp::plan_order(g, {1, 2}, o).cost) << tf::elimination_order_name(o);
  }
}

// Structured edges: a diagonal times a diagonal is a diagonal (m operations), identities cost
// nothing, and a sum of two paths fills one edge.
TEST(Elimination, StructuredProductsAndSumsCostTheirElements) {
  sp::JacobianGraph<sp::NoValues::Value> g;
  sp::NoValues none;
  for (int v = 0; v < 4; ++v) g.add_vertex(50);
  // x -> a (diag) -> y (diag), x -> b (identity) -> y (identity).
  g.add_edge(0, 1, {sp::EdgeKind::Diagonal, 1, {}}, none);
  g.add_edge(1, 3, {sp::EdgeKind::Diagonal, 1, {}}, none);
  g.add_edge(0, 2, {sp::EdgeKind::Identity, 1, {}}, none);
  g.add_edge(2, 3, {sp::EdgeKind::Identity, -1, {}}, none);
  // Eliminating a: one diagonal product (50). Then b: an identity product (free) added to the
  // diagonal edge x -> y (50).
  EXPECT_DOUBLE_EQ(g.eliminate(1, none), sp::kOpCost + 50);
  EXPECT_DOUBLE_EQ(g.eliminate(2, none), sp::kOpCost + 50);
  ASSERT_EQ(g.out_edges(0).size(), 1u);
  EXPECT_EQ(g.out_edges(0).at(3).kind, sp::EdgeKind::Diagonal);
}

T two_layer(const T& x, const tf::Tensor& w1, const tf::Tensor& w2) {
  // A narrow middle: x [64] -> 8 -> elementwise -> 64.
  const T h = tf::matmul(tf::constant(x, w1), x);
  const T g = tf::tanh(h) * tf::sin(h) + tf::exp(h * 0.1);
  return tf::matmul(tf::constant(x, w2), g);
}

struct Case {
  const char* name;
  std::function<T(const T&)> f;
  tf::Shape shape;
};

std::vector<Case> cases() {
  const tf::Tensor w1 = tf::test::random_tensor({tf::DType::F64, {8, 64}}, 3);
  const tf::Tensor w2 = tf::test::random_tensor({tf::DType::F64, {64, 8}}, 5);
  return {
      {"two layers", [w1, w2](const T& x) { return two_layer(x, w1, w2); }, {64}},
      // x read three times, with reshapes, a transpose, slices, a broadcast and reductions.
      {"fan out and layout",
       [](const T& x) {
         const T m = tf::reshape(x, {3, 4});
         const T s = tf::sum(m * m, {1});  // [3]
         const T t = tf::transpose(m) * tf::broadcast_to(tf::reshape(s, {1, 3}), {4, 3});
         return tf::reshape(tf::sin(t), {12}) + x * tf::exp(tf::slice(x, {0}, {1}));
       },
       {12}},
      // A scan (cumsum), a checkpointed region and a product of two linear values.
      {"regions",
       [](const T& x) {
         const T c = tf::cumsum(tf::sin(x), 0);
         const T k = tf::checkpoint([](const T& a) { return tf::exp(a) * a; })(c);
         return k * c + tf::sum(x * x);
       },
       {6}},
      {"identity", [](const T& x) { return x; }, {5}},
      {"negated reshape", [](const T& x) { return -tf::reshape(x, {6}); }, {2, 3}},
      {"independent of x", [](const T& x) { return tf::full_like(x, 2.0); }, {4}},
      {"scalar result", [](const T& x) { return tf::sum(tf::log1p(x * x)); }, {7}},
  };
}

TEST(CrossCountry, EveryOrderEqualsJacfwd) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    const tf::Tensor x = tf::test::random_tensor({tf::DType::F64, c.shape}, 11);
    const tf::Tensor expected = tf::jacfwd(c.f)(x);
    for (const tf::EliminationOrder order : {tf::EliminationOrder::Best, tf::EliminationOrder::Forward, tf::EliminationOrder::Reverse,
                                             tf::EliminationOrder::Markowitz, tf::EliminationOrder::Search, tf::EliminationOrder::Edges}) {
      SCOPED_TRACE(tf::elimination_order_name(order));
      const auto j = tf::jacobian(c.f, {.mode = tf::JacobianMode::CrossCountry, .order = order});
      const tf::JacobianChoice choice = j.choice(x);
      EXPECT_EQ(choice.mode, tf::JacobianMode::CrossCountry);
      if (order != tf::EliminationOrder::Best) {
        EXPECT_EQ(choice.order, order);
      }
      EXPECT_NE(choice.order, tf::EliminationOrder::Best);
      const tf::Tensor got = j(x);
      EXPECT_EQ(got.shape(), expected.shape());
      EXPECT_TRUE(tf::test::near(got, expected, 1e-12));
    }
  }
}

TEST(CrossCountry, FloatSingleAndOtherArguments) {
  auto f = [](const T& a, const T& b) { return tf::matmul(b, tf::tanh(a)) * 3.0; };
  const tf::Tensor a = tf::test::random_tensor({tf::DType::F32, {5}}, 13);
  const tf::Tensor b = tf::test::random_tensor({tf::DType::F32, {4, 5}}, 17);
  const auto by_a = tf::jacobian(f, {.mode = tf::JacobianMode::CrossCountry});
  EXPECT_TRUE(tf::test::near(by_a(a, b), tf::jacfwd(f)(a, b), 1e-5));
  const auto by_b = tf::jacobian(f, {.argnum = 1, .mode = tf::JacobianMode::CrossCountry});
  EXPECT_TRUE(tf::test::near(by_b(a, b), tf::jacfwd(f, 1)(a, b), 1e-5));
}

// The accumulated Jacobian is a program of tensor operations: differentiated again (inside
// jacfwd), the cross-country gradient of a scalar function gives its Hessian, and the
// cross-country Jacobian of a vector function has central differences for derivative.
TEST(CrossCountry, TheJacobianDifferentiatesAgain) {
  auto loss = [](const T& x) { return tf::sum(tf::exp(x * 0.3) * tf::sin(x)) + tf::sum(x) * tf::sum(x * x); };
  const tf::Tensor x = tf::test::random_tensor({tf::DType::F64, {6}}, 19);
  const auto gradient = tf::jacobian(loss, {.mode = tf::JacobianMode::CrossCountry});
  const auto hessian = tf::jacfwd([&](const T& v) { return tf::reshape(gradient(v), {6}); });
  EXPECT_TRUE(tf::test::near(hessian(x), tf::hessian(loss)(x), 1e-11));

  const tf::Tensor w1 = tf::test::random_tensor({tf::DType::F64, {3, 5}}, 23);
  const tf::Tensor w2 = tf::test::random_tensor({tf::DType::F64, {4, 3}}, 29);
  auto f = [&](const T& v) { return two_layer(v, w1, w2); };
  const auto j = tf::jacobian(f, {.mode = tf::JacobianMode::CrossCountry, .order = tf::EliminationOrder::Markowitz});
  const tf::Tensor v0 = tf::test::random_tensor({tf::DType::F64, {5}}, 31);
  const tf::Tensor dj = tf::jacfwd([&](const T& v) { return j(v); })(v0);  // [4, 5, 5]
  const double h = 1e-5;
  const auto j_of = [&](const tf::Tensor& v) { return j(v); };
  for (std::int64_t k = 0; k < 5; ++k) {
    tf::Tensor plus = v0.clone(), minus = v0.clone();
    plus.data<double>()[k] += h;
    minus.data<double>()[k] -= h;
    const tf::Tensor jp = j_of(plus), jm = j_of(minus);
    for (std::int64_t e = 0; e < 20; ++e) {
      const double fd = (jp.data<double>()[e] - jm.data<double>()[e]) / (2 * h);
      EXPECT_NEAR(dj.data<double>()[e * 5 + k], fd, 1e-6) << "entry " << e << ", direction " << k;
    }
  }
}

// Auto takes cross-country where the cost model predicts it saves a fifth of the better extreme's
// cost (the narrow middle: both extremes multiply the first layer by an identity seed), and keeps
// the compressed mode where the pattern is diagonal.
TEST(CrossCountry, AutoChoosesItWhereTheModelPredictsASaving) {
  const tf::Tensor w1 = tf::test::random_tensor({tf::DType::F64, {8, 64}}, 3);
  const tf::Tensor w2 = tf::test::random_tensor({tf::DType::F64, {64, 8}}, 5);
  auto f = [&](const T& x) { return two_layer(x, w1, w2); };
  const tf::Tensor x = tf::test::random_tensor({tf::DType::F64, {64}}, 37);
  const auto j = tf::jacobian(f);
  const tf::JacobianChoice choice = j.choice(x);
  EXPECT_EQ(choice.mode, tf::JacobianMode::CrossCountry) << choice.explain;
  EXPECT_NE(choice.explain.find("cross_country"), std::string::npos);
  EXPECT_LE(choice.predicted_cost, 0.8 * 64) << choice.explain;
  EXPECT_TRUE(tf::test::near(j(x), tf::jacfwd(f)(x), 1e-12));

  auto elementwise = [](const T& a) { return tf::exp(a) * 2.0 + tf::sin(a); };
  EXPECT_EQ(tf::jacobian(elementwise).choice(x).mode, tf::JacobianMode::Columns);
}

TEST(CrossCountry, RefusesWhatItCannotDo) {
  auto square = [](const T& a) { return a * a; };
  const tf::Tensor z = tf::test::random_tensor({tf::DType::C128, {4}}, 41);
  EXPECT_THROW(tf::jacobian(square, {.mode = tf::JacobianMode::CrossCountry})(z), tf::DTypeError);
  // A result of another dtype than the argument.
  auto widened = [](const T& a) { return tf::astype(a * a, tf::DType::F64); };
  const tf::Tensor x32 = tf::test::random_tensor({tf::DType::F32, {4}}, 43);
  EXPECT_THROW(tf::jacobian(widened, {.mode = tf::JacobianMode::CrossCountry})(x32), tf::DTypeError);
  // Auto falls back to the other modes for both.
  EXPECT_TRUE(tf::test::near(tf::jacobian(widened)(x32), tf::jacfwd(widened)(x32), 1e-6));
  // Compressed modes read argument values; inside another transform they are refused.
  const tf::Tensor x = tf::test::random_tensor({tf::DType::F64, {4}}, 47);
  const auto rows = tf::jacobian(square, {.mode = tf::JacobianMode::Rows});
  EXPECT_THROW(tf::jacfwd([&](const T& v) { return tf::reshape(rows(v), {16}); })(x), tf::BindingError);
}

}  // namespace

namespace {
// Dense local Jacobians are read off by rows where the result is much smaller than the operand (a
// sum of a large intermediate: 3 pullbacks, not 6000 pushforwards of a 6000 x 6000 identity), and
// refused above 2^24 elements (a transpose of 4900 values would need 4900 x 4900): the forced mode
// throws ValueError naming the op, and Auto takes another mode.
TEST(CrossCountry, LargeIntermediatesAreReadByRowsOrRefused) {
  const tf::Tensor x = tf::test::random_tensor({tf::DType::F64, {3}}, 51);
  auto summed = [](const T& a) { return tf::sum(tf::sin(tf::broadcast_to(tf::reshape(a, {3, 1}), {3, 2000})), {1}); };
  EXPECT_TRUE(tf::test::near(tf::jacobian(summed, {.mode = tf::JacobianMode::CrossCountry})(x), tf::jacfwd(summed)(x), 1e-12));
  auto transposed = [](const T& a) {
    return tf::sum(tf::sin(tf::transpose(tf::broadcast_to(tf::reshape(tf::sum(a), {1, 1}), {70, 70}))) * 2.0);
  };
  EXPECT_THROW(tf::jacobian(transposed, {.mode = tf::JacobianMode::CrossCountry})(x), tf::ValueError);
  EXPECT_TRUE(tf::test::near(tf::jacobian(transposed)(x), tf::jacfwd(transposed)(x), 1e-12));
}
}  // namespace

namespace {
// The recorded program of a cross-country Jacobian, printed: J = W2 diag(1 - tanh(W1 x)^2) W1 for
// x [4], W1 [2, 4], W2 [3, 2]. Its elimination reads W1 and W2 off the contractions as they are
// (no product with an identity, no copy), makes the diagonal from the tanh's derivative (1 - t^2,
// times ones: the linear mul applied to ones), scales W2's columns by it (6 products; W1's rows
// would take 8) and makes one 3 x 2 x 4 product: the golden file shows exactly those operations
// after the primal ones (whose last, the unused primal result, the compiled program drops).
TEST(CrossCountryGolden, ALayerPairIsTwoReadOffsAScalingAndOneProduct) {
  const tf::Tensor w1 = tf::Tensor::from(std::vector<double>{0.1, 0.2, 0.3, 0.4, -0.5, 0.6, -0.7, 0.8}, {2, 4});
  const tf::Tensor w2 = tf::Tensor::from(std::vector<double>{1, 2, 3, 4, 5, 6}, {3, 2});
  auto f = [&](const T& x) { return tf::matmul(tf::constant(x, w2), tf::tanh(tf::matmul(tf::constant(x, w1), x))); };
  const auto j = tf::jacobian(f, {.mode = tf::JacobianMode::CrossCountry, .order = tf::EliminationOrder::Markowitz});
  const tf::Tensor x = tf::Tensor::from({0.5, -1.0, 1.5, 2.0});
  EXPECT_TRUE(tf::test::near(j(x), tf::jacfwd(f)(x), 1e-14));
  EXPECT_TRUE(golden::matches(TENFERRO_GOLDEN_DIR, "cross_country_layer_pair.txt", tf::trace([&](const T& v) { return j(v); }, x).print()));
}
}  // namespace
