// Printed IR of every stage (docs/design.md, "Printing and verification"): golden text for
// Graph (externals, linearized roles, multi-output), MaterializedGraph, CompiledProgram (last-use
// marks, drops) and DOT. The golden files in golden/ were written out by hand from the graphs below and checked
// against the printer's output; see each test for what the text must show.
#include <gtest/gtest.h>

#include "golden.hpp"
#include "test_graphs.hpp"

namespace cgtest {
namespace {

using computegraph::resolve;
using computegraph::to_dot;
using computegraph::to_string;

/// The C graph of three chained graphs: C -> B -> A, C referencing only through externals.
GraphPtr third_level_graph() {
  GraphPtr a = exp_ax_graph();  // x, a; exp(mul(x, a))
  Builder bb({a});
  const Key product = a->key(2);
  auto sc = bb.add_operation(ScalarOp::sincos(), {X(product)});
  bb.add_output(sc[1]);
  GraphPtr b = finish(bb);
  Builder cb({b});
  auto w = cb.add(ScalarOp::add(), {X(a->output_keys()[0]), X(b->output_keys()[0])});
  cb.add_output(cb.add(ScalarOp::mul(), {L(w), X(in("x"))}));
  return finish(cb);
}

TEST(Printer, GraphGolden) {
  EXPECT_TRUE(matches_golden("graph_exp_ax.txt", to_string(*exp_ax_graph())));
}

TEST(Printer, GraphWithExternalsAndLinearizedRolesGolden) {
  GraphPtr primal = exp_ax_graph();
  GraphPtr jvp = exp_ax_jvp_graph(primal);
  EXPECT_TRUE(matches_golden("graph_exp_ax_jvp.txt", to_string(*jvp), to_string(*primal)));
}

TEST(Printer, GraphWithOnlyExternalsGolden) {
  EXPECT_TRUE(matches_golden("graph_third_level.txt", to_string(*third_level_graph())));
}

TEST(Printer, MultiOutputGraphGolden) {
  EXPECT_TRUE(matches_golden("graph_sincos.txt", to_string(*sincos_graph())));
}

TEST(Printer, MaterializedGolden) {
  GraphPtr primal = exp_ax_graph();
  GraphPtr jvp = exp_ax_jvp_graph(primal);
  Materialized m = materialize(resolve({jvp}), jvp->output_keys());
  EXPECT_TRUE(matches_golden("materialize_exp_ax_jvp.txt", to_string(m),
                             to_string(*primal) + to_string(*jvp)));
  GraphPtr third = third_level_graph();
  EXPECT_TRUE(matches_golden("materialize_third_level.txt",
                             to_string(materialize(resolve({third}), third->output_keys())),
                             to_string(*third)));
}

TEST(Printer, MultiOutputMaterializedGolden) {
  GraphPtr g = sincos_graph();
  EXPECT_TRUE(matches_golden("materialize_sincos.txt",
                             to_string(materialize(resolve({g}), g->output_keys())),
                             to_string(*g)));
}

TEST(Printer, CompiledProgramGolden) {
  GraphPtr jvp = exp_ax_jvp_graph(exp_ax_graph());
  Materialized m = materialize(resolve({jvp}), jvp->output_keys());
  EXPECT_TRUE(
      matches_golden("compile_exp_ax_jvp.txt", to_string(computegraph::compile(m)), to_string(m)));
}

TEST(Printer, CompiledProgramWithDropsAndRepeatsGolden) {
  GraphPtr g = sincos_graph();
  Materialized m = materialize(resolve({g}), g->output_keys());
  EXPECT_TRUE(
      matches_golden("compile_sincos.txt", to_string(computegraph::compile(m)), to_string(m)));
}

TEST(Printer, CompiledProgramWithLeadingInputsGolden) {
  GraphPtr g = exp_ax_graph();
  Materialized m = materialize(resolve({g}), g->output_keys(), {in("a"), in("unused")});
  EXPECT_TRUE(matches_golden("compile_leading_inputs.txt", to_string(computegraph::compile(m)),
                             to_string(m)));
}

TEST(Printer, GraphDotGolden) {
  GraphPtr jvp = exp_ax_jvp_graph(exp_ax_graph());
  EXPECT_TRUE(matches_golden("dot_exp_ax_jvp.dot", to_dot(*jvp, "jvp"), to_string(*jvp)));
}

TEST(Printer, MaterializedDotGolden) {
  GraphPtr g = sincos_graph();
  Materialized m = materialize(resolve({g}), g->output_keys());
  EXPECT_TRUE(matches_golden("dot_materialize_sincos.dot", to_dot(m), to_string(m)));
}

TEST(Printer, DotEscapesNames) {
  const std::string dot = to_dot(*exp_ax_graph(), "exp(\"a\\x\")");
  EXPECT_EQ(dot.substr(0, dot.find('\n')), "digraph \"exp(\\\"a\\\\x\\\")\" {");
}

TEST(Printer, EqualStructuresPrintIdentically) {
  EXPECT_EQ(to_string(*sincos_graph()), to_string(*sincos_graph()));
  GraphPtr p1 = exp_ax_graph();
  GraphPtr p2 = exp_ax_graph();
  EXPECT_EQ(to_string(*exp_ax_jvp_graph(p1)), to_string(*exp_ax_jvp_graph(p2)));
  EXPECT_EQ(to_dot(*exp_ax_jvp_graph(p1)), to_dot(*exp_ax_jvp_graph(p2)));
  EXPECT_EQ(to_string(compile_graph(p1)), to_string(compile_graph(p2)));
}

TEST(Printer, ExternalsAreNumberedInOrderOfFirstUse) {
  // Many externals, so that any hash-map order would show: they must print in first-use order.
  constexpr int kCount = 40;
  Builder parent_builder;
  std::vector<Key> keys;
  for (int i = 0; i < kCount; ++i) {
    auto v = parent_builder.add_input("p" + std::to_string(i));
    keys.push_back(parent_builder.key(parent_builder.add(ScalarOp::neg(), {L(v)})));
  }
  GraphPtr parent = finish(parent_builder);
  Builder b({parent});
  auto acc = b.add(ScalarOp::constant(0.0), {});
  for (int i = kCount - 1; i >= 0; --i)
    acc = b.add(ScalarOp::add(), {L(acc), X(keys[static_cast<std::size_t>(i)])});
  auto again = b.add(ScalarOp::add(), {X(keys[kCount - 1]), X(keys[0])});  // reuses $0 and $39
  b.set_outputs({acc, again});
  GraphPtr g = finish(b);
  std::string expected = "graph {\n";
  for (int j = 0; j < kCount; ++j) {
    expected +=
        "  $" + std::to_string(j) + " = external neg(p" + std::to_string(kCount - 1 - j) + ")\n";
  }
  expected += "  %0 = const[0.000000]()\n";
  for (int j = 0; j < kCount; ++j) {
    expected += "  %" + std::to_string(j + 1) + " = add(%" + std::to_string(j) + ", $" +
                std::to_string(j) + ")\n";
  }
  expected += "  %41 = add($0, $39)\n  return %40, %41\n}\n";
  EXPECT_EQ(to_string(*g), expected);
}

TEST(Printer, EmptyStructures) {
  Builder b;
  EXPECT_EQ(to_string(*b.finish()), "graph {\n  return \n}\n");
  EXPECT_EQ(to_string(Materialized{}), "materialized {\n  return \n}\n");
  EXPECT_EQ(to_string(computegraph::compile(Materialized{})), "program slots=0 {\n  return \n}\n");
}

}  // namespace
}  // namespace cgtest
