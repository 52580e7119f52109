// CompiledProgram::run / run_by_key: compile once, run many times, from many threads, and free
// intermediate operands as the program goes (docs/design.md, "Compile once, run many").
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <memory>
#include <thread>

#include "random_graph.hpp"
#include "test_graphs.hpp"

namespace cgtest {
namespace {

using computegraph::resolve;

TEST(Eval, CompileOnceRunMany) {
  Program program = compile_graph(exp_ax_graph());
  int runs = 0;
  for (int i = 0; i <= 40; ++i) {
    for (int j = 0; j <= 25; ++j) {
      const double x = -2.0 + 0.1 * i;
      const double a = -1.25 + 0.1 * j;
      auto out = program.run({x, a});
      ASSERT_EQ(out.size(), 1u);
      EXPECT_DOUBLE_EQ(out[0], std::exp(a * x)) << "x=" << x << " a=" << a;
      ++runs;
    }
  }
  EXPECT_EQ(runs, 41 * 26);
}

TEST(Eval, LinearizedGraphOverItsPrimal) {
  // d/dx exp(a x) = a exp(a x): the JVP graph evaluated at seed dx.
  GraphPtr primal = exp_ax_graph();
  GraphPtr jvp = exp_ax_jvp_graph(primal);
  Program program = compile_outputs({jvp}, {primal->output_keys()[0], jvp->output_keys()[0]});
  ASSERT_EQ(program.input_keys(), (std::vector<std::string>{"x", "a", "dx"}));
  for (double x : {-1.0, 0.0, 0.3, 1.7}) {
    for (double a : {-0.5, 2.0}) {
      for (double dx : {1.0, -3.0}) {
        auto out = program.run({x, a, dx});
        EXPECT_DOUBLE_EQ(out[0], std::exp(x * a));
        EXPECT_NEAR(out[1], a * std::exp(a * x) * dx, 1e-12 * std::abs(a * std::exp(a * x) * dx));
      }
    }
  }
}

TEST(Eval, MultiOutputOperationsAndRepeatedOutputs) {
  Program program = compile_graph(sincos_graph());
  for (double x = -3.0; x <= 3.0; x += 0.25) {
    auto out = program.run({x});
    ASSERT_EQ(out.size(), 3u);
    EXPECT_DOUBLE_EQ(out[0], sincos_closed_form(x));
    EXPECT_DOUBLE_EQ(out[1], std::cos(x));
    EXPECT_EQ(out[2], out[0]);
  }
  // Both outputs of one sincos as program outputs.
  Builder b;
  auto sc = b.add_operation(ScalarOp::sincos(), {L(b.add_input("t"))});
  b.set_outputs({sc[1], sc[0]});
  Program both = compile_graph(finish(b));
  auto out = both.run({0.6});
  EXPECT_DOUBLE_EQ(out[0], std::cos(0.6));
  EXPECT_DOUBLE_EQ(out[1], std::sin(0.6));
}

TEST(Eval, VariadicOperationsBeyondTheInlineArgumentBuffer) {
  for (std::uint32_t n : {1u, 8u, 9u, 20u}) {
    Builder b;
    std::vector<Ref> terms;
    for (std::uint32_t i = 0; i < n; ++i) terms.push_back(L(b.add_input("t" + std::to_string(i))));
    b.add_output(b.add(ScalarOp::sum(n), terms));
    Program program = compile_graph(finish(b));
    std::vector<double> args;
    double expected = 0;
    for (std::uint32_t i = 0; i < n; ++i) {
      args.push_back(1.0 / (i + 1));
      expected += 1.0 / (i + 1);
    }
    EXPECT_DOUBLE_EQ(program.run(std::span<const double>(args))[0], expected) << n << " terms";
  }
}

TEST(Eval, ProgramsWithoutInputs) {
  Builder b;
  auto two = b.add(ScalarOp::constant(2.0), {});
  auto three = b.add(ScalarOp::constant(3.0), {});
  b.add_output(b.add(ScalarOp::exp(), {L(b.add(ScalarOp::mul(), {L(two), L(three)}))}));
  Program program = compile_graph(finish(b));
  EXPECT_TRUE(program.input_keys().empty());
  EXPECT_DOUBLE_EQ(program.run(std::span<const double>{})[0], std::exp(6.0));
}

TEST(Eval, RunByKeyBindsInAnyOrder) {
  GraphPtr primal = exp_ax_graph();
  Program program = compile_graph(exp_ax_jvp_graph(primal));
  using Binding = std::pair<std::string, double>;
  const std::vector<Binding> in_order{{"x", 0.4}, {"a", 1.5}, {"dx", 2.0}};
  const std::vector<Binding> shuffled{{"dx", 2.0}, {"x", 0.4}, {"a", 1.5}};
  auto positional = program.run({0.4, 1.5, 2.0});
  EXPECT_EQ(program.run_by_key(in_order), positional);
  EXPECT_EQ(program.run_by_key(shuffled), positional);
  EXPECT_NEAR(positional[0], 1.5 * std::exp(0.6) * 2.0, 1e-12);
  ScalarOp::Context ctx;
  EXPECT_EQ(program.run_by_key(shuffled, ctx), positional);
  EXPECT_EQ(program.run(std::span<const double>(std::vector<double>{0.4, 1.5, 2.0}), ctx),
            positional);
}

TEST(Eval, ConcurrentRunsOfOneProgram) {
  const Program program = compile_graph(sincos_graph());
  constexpr int kThreads = 8;
  constexpr int kRuns = 1000;
  std::atomic<int> failures{0};
  std::atomic<int> checked{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRuns; ++r) {
        const double x = 0.001 * r - 0.7 * t;
        auto out = program.run({x});
        const double y = sincos_closed_form(x);
        if (out.size() != 3 || out[0] != y || out[1] != std::cos(x) || out[2] != y) ++failures;
        ++checked;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(checked.load(), kThreads * kRuns);
}

TEST(Eval, ConcurrentRunByKey) {
  const Program program = compile_graph(exp_ax_graph());
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int r = 0; r < 500; ++r) {
        const double x = 0.002 * r;
        const double a = 0.25 * t - 1.0;
        const std::vector<std::pair<std::string, double>> bindings{{"a", a}, {"x", x}};
        if (program.run_by_key(bindings)[0] != std::exp(x * a)) ++failures;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
}

// An operation set whose operands are heap objects, to observe when a run frees them.
// It evaluates like ScalarOp; every value it produces is recorded in the run's context, and each
// evaluation records how many produced values are still alive. Reading a freed slot throws.
struct TrackedOp {
  using Operand = std::shared_ptr<const double>;
  using InputKey = std::string;
  struct Context {
    std::vector<std::weak_ptr<const double>> produced;
    std::size_t max_alive = 0;
  };

  ScalarOp op;

  std::size_t input_count() const { return op.input_count(); }
  std::size_t output_count() const { return op.output_count(); }
  bool operator==(const TrackedOp&) const = default;
  std::size_t hash() const { return op.hash(); }
  std::string name() const { return op.name(); }

  void eval(Context& ctx, std::span<const Operand* const> in, std::span<Operand> out) const {
    std::size_t alive = 0;
    for (const auto& w : ctx.produced) alive += !w.expired();
    ctx.max_alive = std::max(ctx.max_alive, alive);
    std::vector<double> args;
    for (const Operand* operand : in) {
      if (!*operand) throw computegraph::Error("TrackedOp: " + name() + " read a released slot");
      args.push_back(**operand);
    }
    std::vector<const double*> ptrs;
    for (const double& arg : args) ptrs.push_back(&arg);
    std::vector<double> results(out.size());
    ScalarOp::Context scalar_ctx;
    op.eval(scalar_ctx, ptrs, results);
    for (std::size_t k = 0; k < out.size(); ++k) {
      out[k] = std::make_shared<const double>(results[k]);
      ctx.produced.push_back(out[k]);
    }
  }
};
static_assert(computegraph::EvaluableGraphOperation<TrackedOp>);

using TrackedBuilder = computegraph::GraphBuilder<TrackedOp>;
using TrackedRef = computegraph::ValueRef<TrackedOp>;
using TrackedProgram = computegraph::CompiledProgram<TrackedOp>;
using TrackedKey = computegraph::ValueKey<TrackedOp>;
TrackedOp tracked(ScalarOp op) { return TrackedOp{op}; }

TrackedProgram compile_tracked(const computegraph::GraphPtr<TrackedOp>& g) {
  auto outputs = g->output_keys();
  return computegraph::compile(computegraph::materialize_merge(
      computegraph::resolve({g}), std::span<const TrackedKey>(outputs)));
}
std::shared_ptr<const double> box(double v) { return std::make_shared<const double>(v); }

TEST(Eval, IntermediatesAreFreedAfterTheirLastUse) {
  // x -> neg -> neg -> ... (200 times): with releases at most one intermediate is alive whenever an
  // operation starts; without them all 200 would be.
  TrackedBuilder b;
  auto v = b.add_input("x");
  for (int i = 0; i < 200; ++i) v = b.add(tracked(ScalarOp::neg()), {TrackedRef::local(v)});
  b.add_output(v);
  TrackedProgram program = compile_tracked(b.finish());
  TrackedOp::Context ctx;
  std::vector<TrackedOp::Operand> args{box(1.5)};
  auto out = program.run(std::span<const TrackedOp::Operand>(args), ctx);
  ASSERT_EQ(out.size(), 1u);
  ASSERT_TRUE(out[0]);
  EXPECT_EQ(*out[0], 1.5);
  EXPECT_EQ(ctx.produced.size(), 200u);
  EXPECT_EQ(ctx.max_alive, 1u);
  // Once the run is over only the returned value is alive.
  std::size_t alive = 0;
  for (const auto& w : ctx.produced) alive += !w.expired();
  EXPECT_EQ(alive, 1u);
}

TEST(Eval, UnusedOutputsAreDroppedAtOnceAndOutputsSurvive) {
  // y = neg(cos x) via sincos: the sin output is never read. cos x is also returned, so it must
  // survive although neg reads it for the last time.
  TrackedBuilder b;
  auto sc = b.add_operation(tracked(ScalarOp::sincos()), {TrackedRef::local(b.add_input("x"))});
  auto y = b.add(tracked(ScalarOp::neg()), {TrackedRef::local(sc[1])});
  auto z = b.add(tracked(ScalarOp::neg()), {TrackedRef::local(y)});
  b.set_outputs({z, sc[1]});
  TrackedProgram program = compile_tracked(b.finish());
  TrackedOp::Context ctx;
  std::vector<TrackedOp::Operand> args{box(0.8)};
  auto out = program.run(std::span<const TrackedOp::Operand>(args), ctx);
  ASSERT_EQ(out.size(), 2u);
  ASSERT_TRUE(out[0] && out[1]);
  EXPECT_DOUBLE_EQ(*out[0], std::cos(0.8));
  EXPECT_DOUBLE_EQ(*out[1], std::cos(0.8));
  ASSERT_EQ(ctx.produced.size(), 4u);  // sin, cos, neg, neg
  // When the first neg starts, sin x is already gone: only cos x is alive.
  // When the second starts, cos x (an output) and -cos x are alive.
  // Without the drop, sin x would still be alive then: three values.
  EXPECT_EQ(ctx.max_alive, 2u);
}

TEST(Eval, RandomProgramsNeverReadAReleasedSlot) {
  // Released slots are reset; TrackedOp throws if a later instruction reads one. The results must
  // also match the plain scalar evaluation of the same graph.
  for (unsigned seed = 100; seed < 140; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    RandomGraphOptions options;
    options.operations = 30;
    auto tracked_graph = random_graph<TrackedOp>(seed, options, tracked);
    auto scalar_graph = random_scalar_graph(seed, options);
    TrackedProgram tp = compile_tracked(tracked_graph);
    Program sp = compile_graph(scalar_graph);
    ASSERT_EQ(tp.input_keys(), sp.input_keys());
    auto env = random_inputs(seed, options.inputs);
    std::vector<TrackedOp::Operand> targs;
    std::vector<double> sargs;
    for (const auto& key : sp.input_keys()) {
      targs.push_back(box(env.at(key)));
      sargs.push_back(env.at(key));
    }
    TrackedOp::Context ctx;
    std::vector<TrackedOp::Operand> tout;
    ASSERT_NO_THROW(tout = tp.run(std::span<const TrackedOp::Operand>(targs), ctx));
    auto sout = sp.run(std::span<const double>(sargs));
    ASSERT_EQ(tout.size(), sout.size());
    for (std::size_t i = 0; i < tout.size(); ++i) {
      ASSERT_TRUE(tout[i]) << "output " << i << " was released";
      EXPECT_TRUE(same_value(*tout[i], sout[i])) << "output " << i;
    }
  }
}

}  // namespace
}  // namespace cgtest
