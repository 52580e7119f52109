// Tests of the AD test kit itself (tidu/testing/): it passes correct rules, catches wrong ones in
// the check that should catch them (a wrong JVP in check_jvp, a wrong transpose in check_vjp, a
// rule wrong only at second order in FoF/FoR), reports rule errors as failures instead of crashing,
// and its random DAG generator is deterministic, reachable and safe.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "computegraph/computegraph.hpp"
#include "tidu/testing/check.hpp"
#include "tidu/testing/random_scalar_dag.hpp"
#include "tiny_ops.hpp"

namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using tidutest::TinyGraph;
using tidutest::TinyKind;
using tidutest::TinyOp;
namespace kit = tidu::testkit;

/// A one-input function kind(x) (x -> x for scale-like kinds gets the constant c).
computegraph::GraphPtr<TinyOp> unary(TinyKind kind, double c = 0) {
  TinyGraph g;
  auto x = g.input("x");
  g.output(g.op(kind, {x}, c));
  return g.finish();
}

// f(x, y) = [sin(x) y + cos(y), 2.5 x]
TEST(CheckKit, CorrectRulesPassEveryCheckAtOrderThree) {
  TinyGraph g;
  auto x = g.input("x"), y = g.input("y");
  auto s = g.op(TinyKind::Mul, {g.op(TinyKind::Sin, {x}), y});
  g.output(g.op(TinyKind::Add, {s, g.op(TinyKind::Cos, {y})}));
  g.output(g.op(TinyKind::Scale, {x}, 2.5));
  auto f = g.finish();
  const std::vector<double> args{0.4, -1.1};
  auto r = kit::check_grads(f, std::span<const double>(args), 3);
  EXPECT_TRUE(r.ok) << r.message;
  EXPECT_EQ(r.checks.size(), 14u);  // 2 at order 1, 4 at order 2, 8 at order 3
  EXPECT_LT(r.worst_ratio, 1e-2);
}

TEST(CheckKit, ListsTheSecondOrderModesByName) {
  auto f = unary(TinyKind::Sin);
  const std::vector<double> args{0.3};
  auto r = kit::check_grads(f, std::span<const double>(args), 2);
  EXPECT_TRUE(r.ok) << r.message;
  EXPECT_THAT(r.checks, ElementsAre("F", "R", "FoF", "RoF", "FoR", "RoR"));
  auto forward_only = kit::check_grads(f, std::span<const double>(args), 2, {kit::Mode::Forward});
  EXPECT_THAT(forward_only.checks, ElementsAre("F", "FoF"));
}

TEST(CheckKit, WrongJvpFailsCheckJvpButNotTheAdjointIdentity) {
  auto fn = kit::function_of(unary(TinyKind::SquareBadJvp));
  const std::vector<double> args{0.7};
  auto jvp = kit::check_jvp(fn, std::span<const double>(args));
  EXPECT_FALSE(jvp.ok);
  EXPECT_THAT(jvp.message, HasSubstr("F: J t differs from central finite differences"));
  EXPECT_THAT(jvp.message, HasSubstr("--- linear graph ---"));
  EXPECT_GT(jvp.worst_ratio, 1.0);
  // The transpose is consistent with the (wrong) linear graph.
  auto vjp = kit::check_vjp(fn, std::span<const double>(args));
  EXPECT_TRUE(vjp.ok) << vjp.message;
}

TEST(CheckKit, WrongTransposeFailsCheckVjpButNotCheckJvp) {
  auto fn = kit::function_of(unary(TinyKind::ScaleBadTranspose, 2.0));
  const std::vector<double> args{0.7};
  auto jvp = kit::check_jvp(fn, std::span<const double>(args));
  EXPECT_TRUE(jvp.ok) << jvp.message;
  auto vjp = kit::check_vjp(fn, std::span<const double>(args));
  EXPECT_FALSE(vjp.ok);
  EXPECT_THAT(vjp.message, HasSubstr("R: adjoint identity fails"));
  EXPECT_THAT(vjp.message, HasSubstr("--- transposed graph ---"));
}

// SquareViaBadDouble's JVP is BadDouble(x) dx = 2x dx, right; but BadDouble's own JVP is wrong, so
// only the checks that linearize that JVP (FoF, FoR) can see it.
TEST(CheckKit, RuleWrongOnlyAtSecondOrderIsCaughtByTheForwardSecondOrderChecks) {
  auto f = unary(TinyKind::SquareViaBadDouble);
  const std::vector<double> args{0.7};
  auto first = kit::check_grads(f, std::span<const double>(args), 1);
  EXPECT_TRUE(first.ok) << first.message;
  auto second = kit::check_grads(f, std::span<const double>(args), 2);
  EXPECT_FALSE(second.ok);
  EXPECT_THAT(second.message, HasSubstr("FoF: J t differs"));
  EXPECT_THAT(second.message, HasSubstr("FoR: J t differs"));
  EXPECT_THAT(second.message, Not(HasSubstr("RoF:")));
  EXPECT_THAT(second.message, Not(HasSubstr("RoR:")));
}

TEST(CheckKit, MissingRuleIsAFailedCheckNotACrash) {
  auto f = unary(TinyKind::Cube);
  const std::vector<double> args{0.7};
  auto r = kit::check_grads(f, std::span<const double>(args), 2);
  EXPECT_FALSE(r.ok);
  EXPECT_THAT(r.message, HasSubstr("F: threw jvp_rule of tiny.cube: no rule is defined"));
  EXPECT_THAT(r.message, HasSubstr("R: threw jvp_rule of tiny.cube"));
  auto t = kit::check_vjp(kit::function_of(unary(TinyKind::NoTranspose)), std::span<const double>(args));
  EXPECT_FALSE(t.ok);
  EXPECT_THAT(t.message, HasSubstr("R: threw transpose_rule of tiny.no_transpose"));
}

// A linear function: its first derivative does not depend on x, so the functions two steps away
// have no outputs left, and their checks hold trivially.
TEST(CheckKit, StepsDropResultsThatDoNotDependOnTheArguments) {
  auto f = kit::function_of(unary(TinyKind::Scale, 3.0));
  const std::vector<double> args{0.7};
  std::span<const double> x(args);
  kit::SeedFn<TinyOp> one = [](double) { return 1.0; };
  auto d1 = kit::forward_step(f, x, one);
  EXPECT_EQ(d1.path, "F");
  EXPECT_EQ(d1.outputs.size(), 1u);
  EXPECT_DOUBLE_EQ(kit::evaluate(d1, x)[0], 3.0);
  auto d2 = kit::reverse_step(d1, x, one);
  EXPECT_EQ(d2.path, "RoF");
  EXPECT_TRUE(d2.outputs.empty());
  auto r = kit::check_grads(f, x, 3);
  EXPECT_TRUE(r.ok) << r.message;
}

TEST(CheckKit, ChecksAreDeterministicForASeed) {
  auto f = unary(TinyKind::Sin);
  const std::vector<double> args{0.3};
  kit::CheckOptions a, b;
  b.seed = 99;
  const std::vector<kit::Mode> both{kit::Mode::Forward, kit::Mode::Reverse};
  auto r1 = kit::check_grads(f, std::span<const double>(args), 2, both, a);
  auto r2 = kit::check_grads(f, std::span<const double>(args), 2, both, a);
  auto r3 = kit::check_grads(f, std::span<const double>(args), 2, both, b);
  EXPECT_EQ(r1.worst_ratio, r2.worst_ratio);
  EXPECT_NE(r1.worst_ratio, r3.worst_ratio);
}

// ---- random_scalar_dag ----

using tidu::reference::DType;
using tidu::reference::Kind;
using tidu::reference::Number;
using tidu::reference::ScalarOp;

TEST(RandomScalarDag, IsDeterministicForASeed) {
  kit::RandomDagOptions opts;
  opts.ops = 80;
  opts.dtype = DType::Complex;
  auto a = kit::random_scalar_dag(opts);
  auto b = kit::random_scalar_dag(opts);
  EXPECT_EQ(computegraph::to_string(*a.graph), computegraph::to_string(*b.graph));
  EXPECT_EQ(a.args, b.args);
  opts.seed = 2;
  EXPECT_NE(computegraph::to_string(*kit::random_scalar_dag(opts).graph), computegraph::to_string(*a.graph));
}

TEST(RandomScalarDag, EveryOperationIsReachableAndEveryValueIsSafe) {
  for (DType dtype : {DType::Real, DType::Complex}) {
    for (std::uint64_t seed = 1; seed <= 5; ++seed) {
      kit::RandomDagOptions opts;
      opts.ops = 150;
      opts.seed = seed;
      opts.dtype = dtype;
      auto dag = kit::random_scalar_dag(opts);
      const auto& g = *dag.graph;
      SCOPED_TRACE(computegraph::to_string(g));
      EXPECT_GE(g.operations().size(), opts.ops);
      EXPECT_LE(g.outputs().size(), opts.outputs);
      EXPECT_EQ(g.inputs().size(), opts.inputs);
      // Everything is reachable from the outputs: materializing them keeps every op and input.
      auto outs = g.output_keys();
      auto m = computegraph::materialize_merge(computegraph::resolve({dag.graph}),
                                               std::span<const computegraph::ValueKey<ScalarOp>>(outs));
      EXPECT_EQ(m.operations().size(), g.operations().size());
      EXPECT_EQ(m.inputs().size(), g.inputs().size());
      // Log and div operands are away from zero (and the branch cut) at args.
      std::vector<computegraph::ValueKey<ScalarOp>> all;
      for (const auto& v : g.values()) all.push_back(v.key);
      auto values = computegraph::compile(computegraph::materialize_merge(
                                              computegraph::resolve({dag.graph}),
                                              std::span<const computegraph::ValueKey<ScalarOp>>(all)))
                        .run(std::span<const Number>(dag.args));
      for (const auto& op : g.operations()) {
        if (op.operation.kind != Kind::Log && op.operation.kind != Kind::Div) continue;
        const Number& u = values[op.inputs.back().local_id()];
        EXPECT_GE(std::abs(u.z), 0.5) << op.operation.name();
        EXPECT_TRUE(u.z.real() > 0 || std::abs(u.z.imag()) >= 0.5) << u;
      }
      for (const auto& v : values) EXPECT_TRUE(std::isfinite(std::abs(v.z)));
      if (dtype == DType::Real) {
        for (const auto& op : g.operations()) {
          EXPECT_NE(op.operation.kind, Kind::Conj);
          EXPECT_NE(op.operation.kind, Kind::Real);
        }
      }
    }
  }
}

TEST(RandomScalarDag, OptionsControlConjAndTheRealLoss) {
  kit::RandomDagOptions opts;
  opts.ops = 200;
  opts.dtype = DType::Complex;
  opts.conj = false;
  opts.real_loss = true;
  opts.outputs = 3;
  auto dag = kit::random_scalar_dag(opts);
  for (const auto& op : dag.graph->operations()) EXPECT_NE(op.operation.kind, Kind::Conj);
  ASSERT_EQ(dag.graph->outputs().size(), 1u);
  EXPECT_EQ(tidu::reference::dtype_of(dag.graph->output_keys()[0]), DType::Real);
  opts.conj = true;
  std::size_t conj = 0;
  auto with_conj = kit::random_scalar_dag(opts);
  for (const auto& op : with_conj.graph->operations()) conj += op.operation.kind == Kind::Conj;
  EXPECT_GT(conj, 0u);
}

}  // namespace
