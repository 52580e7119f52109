// Every misuse throws a typed error (GraphError for malformed graphs, BindingError for run-time
// binding problems, both computegraph::Error) whose message names the key or operation involved
// and what was expected (docs/design.md, "Errors").
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <type_traits>

#include "test_graphs.hpp"

namespace cgtest {
namespace {

using computegraph::BindingError;
using computegraph::Error;
using computegraph::GraphError;
using computegraph::resolve;
using testing::AllOf;
using testing::HasSubstr;

static_assert(std::is_base_of_v<std::runtime_error, Error>);
static_assert(std::is_base_of_v<Error, GraphError>);
static_assert(std::is_base_of_v<Error, BindingError>);
static_assert(!std::is_base_of_v<GraphError, BindingError>);
static_assert(!std::is_base_of_v<BindingError, GraphError>);

/// The message of the `E` that `f` throws; fails the test if it throws nothing or something else.
template <class E, class F>
std::string error_of(F&& f) {
  static_assert(std::is_base_of_v<Error, E>);
  try {
    f();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "threw the wrong type: " << e.what();
    return {};
  }
  ADD_FAILURE() << "threw nothing";
  return {};
}

// ---------------------------------------------------------------- GraphBuilder

TEST(Errors, ArityMismatchAtAddOperation) {
  Builder b;
  auto x = b.add_input("x");
  EXPECT_THAT(error_of<GraphError>([&] { b.add(ScalarOp::mul(), {L(x)}); }),
              HasSubstr("GraphBuilder::add_operation: mul expects 2 inputs, got 1"));
  EXPECT_THAT(error_of<GraphError>([&] {
                b.add(ScalarOp::exp(), {L(x), L(x)});
              }),
              HasSubstr("exp expects 1 inputs, got 2"));
  EXPECT_THAT(error_of<GraphError>([&] {
                b.add(ScalarOp::sum(3), {L(x), L(x)});
              }),
              HasSubstr("sum[3] expects 3 inputs, got 2"));
  EXPECT_THAT(error_of<GraphError>([&] { b.add(ScalarOp::constant(1.0), {L(x)}); }),
              HasSubstr("const[1.000000] expects 0 inputs, got 1"));
  EXPECT_THAT(error_of<GraphError>([&] { b.add_operation(ScalarOp::sincos(), {}); }),
              HasSubstr("sincos expects 1 inputs, got 0"));
  // Nothing was added.
  EXPECT_EQ(b.value_count(), 1u);
  EXPECT_TRUE(b.graph().operations().empty());
}

TEST(Errors, ActiveMaskSizeMismatch) {
  Builder b;
  auto a = b.add_input("a");
  auto dx = b.add_input("dx");
  EXPECT_THAT(
      error_of<GraphError>([&] {
        b.add(ScalarOp::mul(), {L(a), L(dx)}, linearized({true}));
      }),
      HasSubstr("GraphBuilder::add_operation: mul has 2 inputs but its active_mask has 1 entries"));
  EXPECT_THAT(error_of<GraphError>([&] {
                b.add(ScalarOp::neg(), {L(dx)}, linearized({true, false, true}));
              }),
              HasSubstr("neg has 1 inputs but its active_mask has 3 entries"));
  EXPECT_NO_THROW(b.add(ScalarOp::mul(), {L(a), L(dx)}, linearized({false, true})));
}

TEST(Errors, OutOfRangeLocalId) {
  Builder b;
  auto x = b.add_input("x");
  b.add(ScalarOp::neg(), {L(x)});
  EXPECT_THAT(error_of<GraphError>([&] {
                b.add(ScalarOp::mul(), {L(x), L(7)});
              }),
              AllOf(HasSubstr("GraphBuilder::add_operation"), HasSubstr("operand 1 of mul"),
                    HasSubstr("local value %7"), HasSubstr("does not exist (graph has 2 values)")));
  EXPECT_THAT(
      error_of<GraphError>([&] { b.add_output(9); }),
      HasSubstr("GraphBuilder::add_output: local value %9 does not exist (graph has 2 values)"));
  EXPECT_THAT(error_of<GraphError>([&] {
                b.set_outputs({1, 2});
              }),
              HasSubstr("GraphBuilder::set_outputs: local value %2 does not exist"));
  EXPECT_THAT(error_of<GraphError>([&] { b.key(2); }),
              HasSubstr("GraphBuilder::key: local value %2 does not exist"));
  // The failed set_outputs left the outputs alone.
  EXPECT_TRUE(b.graph().outputs().empty());
}

TEST(Errors, SingleOutputShorthandOnAMultiOutputOperation) {
  Builder b;
  auto x = b.add_input("x");
  EXPECT_THAT(error_of<GraphError>([&] { b.add(ScalarOp::sincos(), {L(x)}); }),
              AllOf(HasSubstr("GraphBuilder::add: operation sincos has 2 outputs"),
                    HasSubstr("use add_operation")));
}

TEST(Errors, BuilderUsedAfterFinish) {
  Builder b;
  auto x = b.add_input("x");
  GraphPtr g = b.finish();
  ASSERT_NE(g, nullptr);
  EXPECT_THAT(error_of<GraphError>([&] { b.add_input("y"); }),
              HasSubstr("GraphBuilder::add_input: builder already finished"));
  EXPECT_THAT(error_of<GraphError>([&] { b.add(ScalarOp::neg(), {L(x)}); }),
              HasSubstr("GraphBuilder::add_operation: builder already finished"));
  EXPECT_THAT(error_of<GraphError>([&] { b.add_operation(ScalarOp::constant(1.0), {}); }),
              HasSubstr("builder already finished"));
  EXPECT_THAT(error_of<GraphError>([&] { b.add_output(x); }),
              HasSubstr("GraphBuilder::add_output: builder already finished"));
  EXPECT_THAT(error_of<GraphError>([&] { b.finish(); }),
              HasSubstr("GraphBuilder::finish: builder already finished"));
  EXPECT_THAT(error_of<GraphError>([&] { b.value_count(); }),
              HasSubstr("builder already finished"));
  EXPECT_EQ(g->values().size(), 1u);
}

// ---------------------------------------------------------------- resolve / materialize_merge

TEST(Errors, DanglingExternalReference) {
  GraphPtr primal = exp_ax_graph();
  Builder b;  // does not name `primal` as a parent
  auto y = b.add(ScalarOp::sin(), {X(primal->output_keys()[0])});
  b.add_output(y);
  GraphPtr child = b.finish();
  // A view that lacks the defining graph.
  EXPECT_THAT(error_of<GraphError>([&] { materialize(resolve({child}), child->output_keys()); }),
              AllOf(HasSubstr("materialize_merge: dangling external reference exp(mul(x, a))"),
                    HasSubstr("input of sin"), HasSubstr("no graph of the view defines it")));
  // Deeper: the missing definition is two levels below the output.
  Builder c({child});
  c.add_output(c.add(ScalarOp::neg(), {X(child->output_keys()[0])}));
  GraphPtr grandchild = c.finish();
  EXPECT_THAT(
      error_of<GraphError>([&] { materialize(resolve({grandchild}), grandchild->output_keys()); }),
      HasSubstr("dangling external reference exp(mul(x, a)) (input of sin)"));
  // Through a compile cache: the error propagates and nothing is cached.
  computegraph::CompileCache<ScalarOp> cache;
  const auto outputs = child->output_keys();
  EXPECT_THAT(error_of<GraphError>([&] { cache.get_or_compile(resolve({child}), outputs); }),
              HasSubstr("dangling external reference"));
  EXPECT_EQ(cache.stats().size, 0u);
  // With the defining graph in the view, the same request succeeds.
  EXPECT_NO_THROW(materialize(resolve({child, primal}), child->output_keys()));
}

TEST(Errors, DanglingExternalInputKey) {
  Builder b;
  b.add_output(b.add(ScalarOp::neg(), {X(in("nobody_declares_me"))}));
  GraphPtr g = b.finish();
  EXPECT_THAT(error_of<GraphError>([&] { materialize(resolve({g}), g->output_keys()); }),
              HasSubstr("dangling external reference nobody_declares_me (input of neg)"));
}

TEST(Errors, OutputTheViewCannotResolve) {
  GraphPtr g = exp_ax_graph();
  const Key unknown = key_of(ScalarOp::cos(), {in("x")});
  EXPECT_THAT(
      error_of<GraphError>([&] {
        materialize(resolve({g}), {g->output_keys()[0], unknown});
      }),
      AllOf(HasSubstr("materialize_merge: output cos(x) is not defined by any graph of the view"),
            HasSubstr("(1 graphs)")));
  EXPECT_THAT(error_of<GraphError>([&] { materialize(resolve({g}), {in("dx")}); }),
              HasSubstr("output dx is not defined by any graph of the view"));
  EXPECT_THAT(error_of<GraphError>([&] { materialize(View{}, {in("x")}); }),
              HasSubstr("output x is not defined by any graph of the view (0 graphs)"));
}

TEST(Errors, LeadingInputThatIsNotAnInputKey) {
  GraphPtr g = exp_ax_graph();
  EXPECT_THAT(error_of<GraphError>([&] {
                materialize(resolve({g}), g->output_keys(), {in("x"), g->key(2)});
              }),
              HasSubstr("materialize_merge: leading input mul(x, a) is not an input key"));
}

// ---------------------------------------------------------------- CompiledProgram::run

TEST(Errors, WrongNumberOfInputs) {
  Program program = compile_graph(exp_ax_graph());
  EXPECT_THAT(error_of<BindingError>([&] { program.run({1.0}); }),
              HasSubstr("CompiledProgram::run: expected 2 inputs (x, a), got 1"));
  EXPECT_THAT(error_of<BindingError>([&] {
                program.run({1.0, 2.0, 3.0});
              }),
              HasSubstr("expected 2 inputs (x, a), got 3"));
  EXPECT_THAT(error_of<BindingError>([&] { program.run(std::span<const double>{}); }),
              HasSubstr("expected 2 inputs (x, a), got 0"));
}

TEST(Errors, RunByKeyMissingUnknownAndDuplicateInputs) {
  Program program = compile_graph(exp_ax_jvp_graph(exp_ax_graph()));  // inputs x, a, dx
  using Bindings = std::vector<std::pair<std::string, double>>;
  auto run = [&](const Bindings& bindings) { return program.run_by_key(bindings); };
  EXPECT_THAT(error_of<BindingError>([&] {
                run({{"x", 1.0}, {"dx", 1.0}});
              }),
              HasSubstr("CompiledProgram::run_by_key: missing input a (program inputs: x, a, dx)"));
  EXPECT_THAT(error_of<BindingError>([&] { run({}); }), HasSubstr("missing input x"));
  EXPECT_THAT(error_of<BindingError>([&] {
                run({{"x", 1.0}, {"a", 1.0}, {"dx", 1.0}, {"y", 2.0}});
              }),
              HasSubstr("CompiledProgram::run_by_key: unknown input y (program inputs: x, a, dx)"));
  EXPECT_THAT(error_of<BindingError>([&] {
                run({{"x", 1.0}, {"a", 1.0}, {"a", 2.0}, {"dx", 1.0}});
              }),
              HasSubstr("CompiledProgram::run_by_key: input a is bound twice"));
  // Correct bindings still work afterwards.
  EXPECT_NEAR(run({{"dx", 1.0}, {"a", 2.0}, {"x", 0.5}})[0], 2.0 * std::exp(1.0), 1e-12);
}

// ---------------------------------------------------------------- CompileCache

TEST(Errors, CompileCacheCapacityZero) {
  EXPECT_THAT(error_of<Error>([] { computegraph::CompileCache<ScalarOp> cache(0); }),
              HasSubstr("CompileCache: capacity must be at least 1"));
  EXPECT_NO_THROW(computegraph::CompileCache<ScalarOp>(1));
}

// ---------------------------------------------------------------- one catch for all

TEST(Errors, EveryErrorIsAComputegraphError) {
  Builder b;
  auto x = b.add_input("x");
  Program program = compile_graph(exp_ax_graph());
  const std::vector<std::function<void()>> misuses{
      [&] { b.add(ScalarOp::mul(), {L(x)}); },          [&] { b.add_output(42); },
      [&] { materialize(View{}, {in("x")}); },          [&] { program.run({1.0}); },
      [&] { computegraph::CompileCache<ScalarOp>(0); },
  };
  for (std::size_t i = 0; i < misuses.size(); ++i) {
    EXPECT_FALSE(error_of<Error>(misuses[i]).empty()) << "misuse " << i;
  }
  // And each is of its precise type (error_of fails on any other type).
  for (std::size_t i : {0, 1, 2}) EXPECT_FALSE(error_of<GraphError>(misuses[i]).empty()) << i;
  EXPECT_FALSE(error_of<BindingError>(misuses[3]).empty());
}

}  // namespace
}  // namespace cgtest
