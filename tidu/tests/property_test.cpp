// Property tests on random scalar DAGs of 20 to 200 ops (tidu/testing/random_scalar_dag.hpp), real
// and complex, several fixed seeds: at orders 1 to 3 and in every mode (F, R; FoF, RoF, FoR, RoR;
// and the eight third-order compositions), J t matches central finite differences and every
// transpose satisfies the adjoint identity (tidu/testing/check.hpp).
#include <gtest/gtest.h>

#include "computegraph/printer.hpp"
#include "tidu/testing/check.hpp"
#include "tidu/testing/random_scalar_dag.hpp"

namespace {

using tidu::reference::DType;
using tidu::reference::Number;
namespace kit = tidu::testkit;

struct Case {
  std::uint64_t seed;
  std::size_t ops;
  DType dtype;
  bool real_loss = false;
};

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  const Case& c = info.param;
  return std::string(c.dtype == DType::Real ? "Real" : "Complex") + (c.real_loss ? "Loss" : "") +
         "Ops" + std::to_string(c.ops) + "Seed" + std::to_string(c.seed);
}

kit::RandomDag make_dag(const Case& c) {
  kit::RandomDagOptions opts;
  opts.ops = c.ops;
  opts.seed = c.seed;
  opts.dtype = c.dtype;
  opts.inputs = 2 + c.seed % 3;
  opts.outputs = 1 + c.seed % 3;
  opts.real_loss = c.real_loss;
  return kit::random_scalar_dag(opts);
}

class RandomDagGrads : public ::testing::TestWithParam<Case> {};

TEST_P(RandomDagGrads, MatchFiniteDifferencesAndTheAdjointIdentityUpToOrderThree) {
  auto dag = make_dag(GetParam());
  ASSERT_GE(dag.graph->operations().size(), GetParam().ops);
  auto result = kit::check_grads(dag.graph, std::span<const Number>(dag.args), 3);
  EXPECT_TRUE(result.ok) << "primal:\n" << computegraph::to_string(*dag.graph) << result.message;
  EXPECT_EQ(result.checks.size(), 14u);
}

std::vector<Case> cases() {
  std::vector<Case> all;
  for (DType d : {DType::Real, DType::Complex}) {
    for (std::uint64_t seed : {1, 2, 3}) {
      for (std::size_t ops : {20, 70, 200}) all.push_back({seed, ops, d});
    }
  }
  all.push_back({4, 120, DType::Complex, true});
  all.push_back({5, 120, DType::Complex, true});
  return all;
}

INSTANTIATE_TEST_SUITE_P(Dags, RandomDagGrads, ::testing::ValuesIn(cases()), case_name);

// The tolerances are not tuned to pass barely: the worst error stays far below its tolerance, so a
// failure points at a wrong rule rather than at finite-difference noise.
TEST(RandomDagGrads, ChecksPassWithAWideMargin) {
  auto dag = make_dag({7, 150, DType::Complex});
  auto result = kit::check_grads(dag.graph, std::span<const Number>(dag.args), 2);
  EXPECT_TRUE(result.ok) << result.message;
  EXPECT_LT(result.worst_ratio, 1e-2);
}

}  // namespace
