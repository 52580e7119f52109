// Higher derivatives along one direction: linearize_along (linearize.hpp) and
// Transforms::derivative. f^(k)(x)[v, ..., v] against closed forms, against central finite
// differences of the order k - 1, and against the nested linearization with a fresh seed per pass
// evaluated with every seed equal to v; real and complex DAGs, orders 1 to 4. Also: the shared
// seed keeps the materialized op count polynomial in k, and linearize_along's argument checks.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "scalar_helpers.hpp"
#include "tidu/testing/random_scalar_dag.hpp"

namespace {

using namespace tidutest;
using Values = std::vector<Number>;
using Transforms = tidu::Transforms<ScalarOp>;
namespace kit = tidu::testkit;
namespace cg = computegraph;

TEST(Derivative, ExpOfAxMatchesTheClosedFormUpToOrderSix) {
  ScalarGraph g;
  auto x = g.input("x"), a = g.input("a");
  g.output(g.exp(g.mul(a, x)));
  auto f = g.finish();
  Transforms ad;
  const double X = 0.4, A = -1.7, V = 0.8;
  const Values args{X, A}, dir{V, 0.0};
  for (std::size_t k = 0; k <= 6; ++k) {
    auto d = ad.derivative(f, args, dir, k);
    ASSERT_EQ(d.size(), 1u);
    EXPECT_TRUE(near(d[0], std::pow(A * V, double(k)) * std::exp(A * X))) << "k=" << k;
  }
}

TEST(Derivative, SinAlongBothArgumentsMatchesTheClosedForm) {
  // f(x, y) = sin(x y): along (v, w) at t = 0, d^k/dt^k sin((x + tv)(y + tw)).
  ScalarGraph g;
  auto x = g.input("x"), y = g.input("y");
  g.output(g.sin(g.mul(x, y)));
  auto f = g.finish();
  Transforms ad;
  const double X = 0.3, Y = 1.1, V = 0.7, W = -0.4;
  // u(t) = XY + (XW + YV) t + VW t^2; derivatives of sin(u(t)) at t = 0 by Faa di Bruno, up to 3.
  const double u1 = X * W + Y * V, u2 = 2 * V * W, s = std::sin(X * Y), c = std::cos(X * Y);
  const double expected[4] = {s, c * u1, -s * u1 * u1 + c * u2, -c * u1 * u1 * u1 - 3 * s * u1 * u2};
  for (std::size_t k = 0; k <= 3; ++k) {
    auto d = ad.derivative(f, Values{X, Y}, Values{V, W}, k);
    EXPECT_TRUE(near(d[0], expected[k])) << "k=" << k;
  }
}

TEST(Derivative, OutputsThatDoNotDependOnTheArgumentsGetZeros) {
  ScalarGraph g;
  auto x = g.input("x"), a = g.input("a");
  g.output(g.mul(x, x));
  g.output(g.sin(a));
  auto f = g.finish();
  Transforms ad;
  ad.set_wrt(f, {true, false});
  for (std::size_t k = 1; k <= 3; ++k) {
    auto d = ad.derivative(f, Values{1.5, 0.2}, Values{1.0, 1.0}, k);
    EXPECT_TRUE(near(d[0], k == 1 ? 3.0 : k == 2 ? 2.0 : 0.0)) << "k=" << k;
    EXPECT_TRUE(near(d[1], 0.0)) << "k=" << k;
  }
}

kit::RandomDag dag_of(DType dtype, std::uint64_t seed, std::size_t ops) {
  kit::RandomDagOptions opts;
  opts.ops = ops;
  opts.inputs = 3;
  opts.outputs = 2;
  opts.dtype = dtype;
  opts.seed = seed;
  return kit::random_scalar_dag(opts);
}

Values random_direction(const Values& like, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Values v;
  for (const auto& x : like) v.push_back(tidu::OperandSpace<Number>::random_like(x, rng));
  return v;
}

/// f^(k)(x)[v, ..., v] from k nested linearize calls, each with its own fresh seed, every seed
/// bound to v at run time.
Values distinct_seed_derivative(const GraphPtr& f, const Values& x, const Values& v, std::size_t k) {
  std::vector<ScalarKey> wrt;
  std::map<std::string, Number> values;
  for (std::size_t i = 0; i < f->inputs().size(); ++i) {
    wrt.push_back(f->key(f->inputs()[i]).input_key());
    values[wrt.back().name] = x[i];
  }
  std::vector<GraphPtr> roots{f};
  Keys outs = f->output_keys();
  std::vector<std::size_t> present{0, 1};
  for (std::size_t j = 1; j <= k; ++j) {
    auto lin = linearize_keys(roots, outs, wrt);
    std::vector<std::size_t> next;
    for (std::size_t i = 0; i < lin.tangent_outputs.size(); ++i) {
      if (lin.tangent_outputs[i]) next.push_back(present[i]);
    }
    present = next;
    for (std::size_t i = 0; i < wrt.size(); ++i) values[lin.tangent_input_key(i).input_key().name] = v[i];
    outs = outputs_of(lin);
    roots.push_back(lin.graph);
  }
  Values result(2, Number(0.0));
  if (outs.empty()) return result;
  auto got = run_named(roots, outs, values);
  for (std::size_t i = 0; i < present.size(); ++i) result[present[i]] = got[i];
  return result;
}

struct DagCase {
  DType dtype;
  std::uint64_t seed;
};

class RandomDagDerivative : public ::testing::TestWithParam<DagCase> {};

TEST_P(RandomDagDerivative, MatchesDistinctSeedsWithEqualDirectionsAndFiniteDifferences) {
  auto dag = dag_of(GetParam().dtype, GetParam().seed, 40);
  const Values& x = dag.args;
  const Values v = random_direction(x, GetParam().seed + 100);
  Transforms ad;
  const double h = 1e-5;
  for (std::size_t k = 1; k <= 4; ++k) {
    const Values d = ad.derivative(dag.graph, x, v, k);
    ASSERT_EQ(d.size(), 2u);
    const Values reference = distinct_seed_derivative(dag.graph, x, v, k);
    // Central difference of the order k - 1 along v: error O(h^2 |f^(k+2)|) + O(eps |f^(k-1)| / h).
    Values xp = x, xm = x;
    for (std::size_t i = 0; i < x.size(); ++i) {
      xp[i] = tidu::OperandSpace<Number>::add_scaled(x[i], h, v[i]);
      xm[i] = tidu::OperandSpace<Number>::add_scaled(x[i], -h, v[i]);
    }
    const Values dp = ad.derivative(dag.graph, xp, v, k - 1), dm = ad.derivative(dag.graph, xm, v, k - 1);
    for (std::size_t o = 0; o < 2; ++o) {
      EXPECT_EQ(d[o].dtype, reference[o].dtype);
      EXPECT_TRUE(near(d[o], reference[o].z, 1e-10)) << "k=" << k << " output " << o;
      EXPECT_TRUE(near(d[o], (dp[o].z - dm[o].z) / (2 * h), 1e-5)) << "k=" << k << " output " << o;
    }
  }
}

std::string dag_case_name(const ::testing::TestParamInfo<DagCase>& info) {
  return std::string(info.param.dtype == DType::Real ? "Real" : "Complex") + "Seed" +
         std::to_string(info.param.seed);
}

INSTANTIATE_TEST_SUITE_P(Dags, RandomDagDerivative,
                         ::testing::Values(DagCase{DType::Real, 1}, DagCase{DType::Real, 2},
                                           DagCase{DType::Real, 3}, DagCase{DType::Complex, 1},
                                           DagCase{DType::Complex, 2}, DagCase{DType::Complex, 3}),
                         dag_case_name);

/// Materialized op counts of the k-th derivative along x0, k = 1..max_k, with fresh seeds
/// (linearize) or one shared seed (linearize_along).
std::vector<std::size_t> op_counts(const GraphPtr& f, std::size_t max_k, bool shared) {
  const std::vector<ScalarKey> wrt{f->key(f->inputs()[0]).input_key()};
  std::vector<GraphPtr> roots{f};
  Keys outs = f->output_keys();
  std::vector<ScalarKey> directions;
  std::vector<std::size_t> counts;
  for (std::size_t k = 1; k <= max_k; ++k) {
    auto view = cg::resolve(roots);
    auto lin = shared && k > 1
                   ? tidu::linearize_along(view, std::span<const Key>(outs), std::span<const ScalarKey>(wrt),
                                           std::span<const ScalarKey>(directions))
                   : tidu::linearize(view, std::span<const Key>(outs), std::span<const ScalarKey>(wrt));
    if (k == 1) directions = lin.tangent_input_keys();
    outs = outputs_of(lin);
    roots.push_back(lin.graph);
    counts.push_back(materialize({lin.graph}, outs).operations().size());
  }
  return counts;
}

TEST(LinearizeAlong, OpCountGrowsPolynomiallyWithTheOrder) {
  kit::RandomDagOptions opts;
  opts.ops = 50;
  opts.inputs = 3;
  opts.outputs = 1;
  opts.seed = 5;
  auto f = kit::random_scalar_dag(opts).graph;
  const auto shared = op_counts(f, 6, true);
  const auto fresh = op_counts(f, 6, false);
  EXPECT_EQ(shared[0], fresh[0]);
  for (std::size_t k = 1; k <= 6; ++k) {
    // O(k^2 n): at most k^2 times the first order's count (fresh seeds exceed it from k = 4 on).
    EXPECT_LE(shared[k - 1], k * k * shared[0]) << "k=" << k;
    EXPECT_LE(shared[k - 1], fresh[k - 1]) << "k=" << k;
  }
  EXPECT_GT(fresh[5], 36 * fresh[0]);  // the exponential growth the shared seed avoids
}

TEST(LinearizeAlong, RejectsBadDirections) {
  ScalarGraph g;
  auto x = g.input("x"), y = g.input("y");
  g.output(g.mul(x, y));
  auto f = g.finish();
  auto view = cg::resolve({f});
  const Keys outs = f->output_keys();
  const std::vector<ScalarKey> wrt{real_key("x"), real_key("y")};
  auto call = [&](std::vector<ScalarKey> dirs) {
    return tidu::linearize_along(view, std::span<const Key>(outs), std::span<const ScalarKey>(wrt),
                                 std::span<const ScalarKey>(dirs));
  };
  EXPECT_THROW(call({real_key("v")}), cg::GraphError);                     // one per wrt key
  EXPECT_THROW(call({real_key("v"), real_key("v")}), cg::GraphError);      // repeated
  EXPECT_THROW(call({real_key("v"), real_key("x")}), cg::GraphError);      // a wrt key
  auto lin = call({real_key("v"), real_key("w")});
  EXPECT_EQ(lin.pass, 0u);
  EXPECT_EQ(lin.tangent_input_key(1).input_key(), real_key("w"));
  // d(x y)[v, w] = y v + x w
  auto got = run_named({lin.graph}, outputs_of(lin), {{"x", 2.0}, {"y", 3.0}, {"v", 0.5}, {"w", -1.0}});
  EXPECT_TRUE(near(got[0], 3.0 * 0.5 - 2.0));
}

}  // namespace
