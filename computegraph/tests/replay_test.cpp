// replay: one walk over a closed graph, in any of its three forms (Graph, MaterializedGraph,
// CompiledProgram), into any recorder. Checked on random graphs: replaying into an evaluator gives
// the compiled program's outputs exactly, in every form; replaying into a new builder rebuilds the
// same graph (the same output keys, through hash-consing); a partial replay records only the
// operations its predicate keeps; and misuse (an open graph, a skipped producer, a wrong result
// count) throws naming the operation.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "computegraph/replay.hpp"
#include "random_graph.hpp"

namespace cgtest {
namespace {

/// A recorder that evaluates each operation on doubles (an interpreter is a replay too).
std::vector<double> evaluate(const ScalarOp& op, const OperationRole&, std::span<const double> in) {
  std::vector<const double*> ptrs;
  for (const double& x : in) ptrs.push_back(&x);
  std::vector<double> out(op.output_count());
  ScalarOp::Context ctx;
  op.eval(ctx, ptrs, out);
  return out;
}

TEST(Replay, EveryFormEvaluatesToTheCompiledProgramsOutputs) {
  for (unsigned seed = 0; seed < 40; ++seed) {
    SCOPED_TRACE(seed);
    const GraphPtr graph = random_scalar_graph(seed);
    const auto env = random_inputs(seed, 3);
    std::vector<double> args;
    for (const auto k : graph->inputs()) args.push_back(env.at(graph->key(k).input_key()));
    const Materialized m = materialize(computegraph::resolve({graph}), graph->output_keys(),
                                       std::vector<Key>{in("in0"), in("in1"), in("in2")});
    const Program program = computegraph::compile(m);
    std::vector<double> ordered;  // the materialized graph's and program's input order
    for (const auto& key : m.input_keys()) ordered.push_back(env.at(key));
    const std::vector<double> want = program.run(ordered);
    const auto from_graph = computegraph::replay(*graph, std::span<const double>(args), evaluate);
    const auto from_materialized = computegraph::replay(m, std::span<const double>(ordered), evaluate);
    const auto from_program = computegraph::replay(program, std::span<const double>(ordered), evaluate);
    ASSERT_EQ(from_graph.size(), want.size());
    for (std::size_t i = 0; i < want.size(); ++i) {
      EXPECT_TRUE(same_value(from_graph[i], want[i])) << i << ": " << from_graph[i] << " vs " << want[i];
      EXPECT_TRUE(same_value(from_materialized[i], want[i])) << i;
      EXPECT_TRUE(same_value(from_program[i], want[i])) << i;
    }
  }
}

TEST(Replay, IntoABuilderRebuildsTheSameGraph) {
  for (unsigned seed = 0; seed < 20; ++seed) {
    SCOPED_TRACE(seed);
    const GraphPtr graph = random_scalar_graph(seed);
    Builder b;
    std::vector<computegraph::LocalValueId> args;
    for (const auto k : graph->inputs()) args.push_back(b.add_input(graph->key(k).input_key()));
    const auto outs = computegraph::replay(
        *graph, std::span<const computegraph::LocalValueId>(args),
        [&b](const ScalarOp& op, const OperationRole& role, std::span<const computegraph::LocalValueId> in) {
          std::vector<Ref> refs;
          for (auto v : in) refs.push_back(L(v));
          return b.add_operation(op, std::move(refs), role);
        });
    b.set_outputs(outs);
    const GraphPtr copy = finish(b);
    EXPECT_EQ(copy->output_keys(), graph->output_keys());
    EXPECT_EQ(copy->operations().size(), graph->operations().size());
  }
}

TEST(Replay, APartialReplayRecordsTheKeptOperationsOnly) {
  // y = cos(sin(x)^2) + cos(x): keep the first sincos only; its outputs are filled, the rest not.
  const GraphPtr graph = sincos_graph();
  std::vector<std::optional<double>> values(graph->values().size());
  values[graph->inputs()[0]] = 0.7;
  int recorded = 0;
  computegraph::replay_into(*graph, values,
                            [&](const ScalarOp& op, const OperationRole& role, std::span<const double> in) {
                              ++recorded;
                              return evaluate(op, role, in);
                            },
                            [](std::size_t index, const auto&) { return index == 0; });
  EXPECT_EQ(recorded, 1);
  const auto& first = graph->operations()[0];
  EXPECT_EQ(*values[first.outputs[0]], std::sin(0.7));
  EXPECT_EQ(*values[first.outputs[1]], std::cos(0.7));
  EXPECT_FALSE(values[graph->outputs()[0]].has_value());
}

TEST(Replay, MisuseThrowsNamingTheOperation) {
  const GraphPtr graph = sincos_graph();
  const double x[] = {0.3};
  // A predicate that skips a producer whose result a kept operation reads.
  std::vector<std::optional<double>> values(graph->values().size());
  values[graph->inputs()[0]] = 0.3;
  try {
    computegraph::replay_into(*graph, values, evaluate, [](std::size_t index, const auto&) { return index != 0; });
    ADD_FAILURE() << "expected GraphError";
  } catch (const computegraph::GraphError& e) {
    EXPECT_NE(std::string(e.what()).find("mul"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("no value"), std::string::npos) << e.what();
  }
  // A recorder that returns the wrong number of results.
  auto one_result = [](const ScalarOp&, const OperationRole&, std::span<const double>) { return std::vector<double>{0.0}; };
  EXPECT_THROW(computegraph::replay(*graph, std::span<const double>(x), one_result), computegraph::GraphError);
  // Arguments of another count.
  EXPECT_THROW(computegraph::replay(*graph, std::span<const double>(), evaluate), computegraph::BindingError);
  // An open graph: an operand of another graph.
  Builder b;
  const auto y = b.add_input("y");
  (void)b.add(ScalarOp::mul(), {L(y), X(in("elsewhere"))});
  b.set_outputs({y});
  const GraphPtr open = b.finish();
  try {
    const double y0[] = {1.0};
    computegraph::replay(*open, std::span<const double>(y0), evaluate);
    ADD_FAILURE() << "expected GraphError";
  } catch (const computegraph::GraphError& e) {
    EXPECT_NE(std::string(e.what()).find("closed"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace cgtest
