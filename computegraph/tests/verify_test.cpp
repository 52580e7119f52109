// verify(): passes on every valid Graph, MaterializedGraph and CompiledProgram, and catches
// structures broken by hand, naming the operation and the ids involved (docs/design.md,
// "Printing and verification").
//
// The library's public API cannot build broken structures. These tests reach into them through
// test-only explicit specializations of the class templates that Graph, MaterializedGraph and
// CompiledProgram befriend (GraphBuilder, MaterializeMerge, Compiler), instantiated for an op
// type, TamperOp, that no other code uses.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "random_graph.hpp"
#include "test_graphs.hpp"

namespace cgtest {
/// Behaves exactly like ScalarOp; exists only to name the backdoors below.
struct TamperOp : ScalarOp {
  TamperOp() = default;
  TamperOp(ScalarOp op) : ScalarOp(op) {}  // implicit, so ScalarOp factories can be used as is
};
}  // namespace cgtest

namespace computegraph {

template <>
class GraphBuilder<cgtest::TamperOp> {
 public:
  using G = Graph<cgtest::TamperOp>;
  static auto& values(G& g) { return g.values_; }
  static auto& operations(G& g) { return g.operations_; }
  static auto& inputs(G& g) { return g.inputs_; }
  static auto& outputs(G& g) { return g.outputs_; }
};

template <>
class MaterializeMerge<cgtest::TamperOp> {
 public:
  using M = MaterializedGraph<cgtest::ScalarOp>;
  static auto& values(M& m) { return m.values_; }
  static auto& operations(M& m) { return m.operations_; }
  /// Operand `k` of operation `op`, writable (the operations' input spans are read-only views).
  static auto& operand(M& m, std::size_t op, std::size_t k) {
    const auto offset = m.operations_[op].inputs.data() - m.operands_.data();
    return m.operands_[static_cast<std::size_t>(offset) + k];
  }
  static auto& inputs(M& m) { return m.inputs_; }
  static auto& outputs(M& m) { return m.outputs_; }
};

template <>
class Compiler<cgtest::TamperOp> {
 public:
  using P = CompiledProgram<cgtest::ScalarOp>;
  static auto& instructions(P& p) { return p.instructions_; }
  static auto& input_slots(P& p) { return p.input_slots_; }
  static auto& output_slots(P& p) { return p.output_slots_; }
};

}  // namespace computegraph

namespace cgtest {
namespace {

using computegraph::GraphError;
using computegraph::resolve;
using computegraph::verify;
using testing::HasSubstr;
using TGraph = computegraph::Graph<TamperOp>;
using TKey = computegraph::ValueKey<TamperOp>;
using TRef = computegraph::ValueRef<TamperOp>;
using TOpKey = computegraph::OperationKey<TamperOp>;
using GraphAccess = computegraph::GraphBuilder<TamperOp>;
using MaterializedAccess = computegraph::MaterializeMerge<TamperOp>;
using ProgramAccess = computegraph::Compiler<TamperOp>;

template <class Ir>
std::string verify_error(const Ir& ir) {
  try {
    verify(ir);
  } catch (const GraphError& e) {
    return e.what();
  }
  return "verify passed";
}

// ---------------------------------------------------------------- valid structures pass

TEST(Verify, PassesOnValidGraphsAndEveryStageOfTheirPipeline) {
  std::vector<GraphPtr> graphs{exp_ax_graph(), sincos_graph()};
  graphs.push_back(exp_ax_jvp_graph(graphs[0]));
  {
    // A grandchild that references its grandparent's values through externals only.
    Builder b({graphs[2]});
    b.add_output(b.add(ScalarOp::add(), {X(graphs[2]->output_keys()[0]), X(in("x"))}));
    graphs.push_back(b.finish());
  }
  for (unsigned seed = 0; seed < 30; ++seed) graphs.push_back(random_scalar_graph(seed));
  for (const auto& g : graphs) {
    ASSERT_NO_THROW(verify(*g)) << computegraph::to_string(*g);
    Materialized m = materialize(resolve({g}), g->output_keys());
    ASSERT_NO_THROW(verify(m)) << computegraph::to_string(m);
    Program p = computegraph::compile(m);
    ASSERT_NO_THROW(verify(p)) << computegraph::to_string(p);
  }
  // Degenerate but valid: empty graph, empty materialized graph and program.
  Builder empty;
  EXPECT_NO_THROW(verify(*empty.finish()));
  EXPECT_NO_THROW(verify(Materialized{}));
  EXPECT_NO_THROW(verify(computegraph::compile(Materialized{})));
}

// ---------------------------------------------------------------- Graph

/// By hand, like GraphBuilder would make it:
///   %0 = input x; %1 = input a; %2 = mul(%0, %1); %3, %4 = sincos(%2);
///   %5 = mul(%3, %1) linearized[active, fixed]; return %5, %4
using Producer = std::optional<std::pair<std::uint32_t, std::uint32_t>>;
Producer made_by(std::uint32_t op, std::uint32_t slot) { return std::pair{op, slot}; }

TGraph hand_graph() {
  TGraph g;
  const TKey x = TKey::input("x");
  const TKey a = TKey::input("a");
  const TKey product = TOpKey::make(ScalarOp::mul(), {x, a}, primary()).output(0);
  const TOpKey sc = TOpKey::make(ScalarOp::sincos(), {product}, primary());
  const auto role = linearized({true, false});
  const TKey scaled = TOpKey::make(ScalarOp::mul(), {sc.output(0), a}, role).output(0);
  GraphAccess::values(g) = {{x, std::nullopt},
                            {a, std::nullopt},
                            {product, made_by(0, 0)},
                            {sc.output(0), made_by(1, 0)},
                            {sc.output(1), made_by(1, 1)},
                            {scaled, made_by(2, 0)}};
  GraphAccess::operations(g) = {
      {ScalarOp::mul(), {TRef::local(0), TRef::local(1)}, {2}, primary()},
      {ScalarOp::sincos(), {TRef::local(2)}, {3, 4}, primary()},
      {ScalarOp::mul(), {TRef::local(3), TRef::local(1)}, {5}, role},
  };
  GraphAccess::inputs(g) = {0, 1};
  GraphAccess::outputs(g) = {5, 4};
  return g;
}

TEST(VerifyGraph, HandBuiltGraphIsValid) {
  TGraph g = hand_graph();
  EXPECT_EQ(verify_error(g), "verify passed");
  EXPECT_EQ(computegraph::to_string(g),
            "graph {\n  %0 = input x\n  %1 = input a\n  %2 = mul(%0, %1)\n  %3, %4 = sincos(%2)\n"
            "  %5 = mul(%3, %1) linearized[active, fixed]\n  return %5, %4\n}\n");
}

TEST(VerifyGraph, OperandCountMismatch) {
  TGraph g = hand_graph();
  GraphAccess::operations(g)[0].inputs.pop_back();
  EXPECT_THAT(verify_error(g), HasSubstr("operation #0 (mul) expects 2 inputs, has 1"));
}

TEST(VerifyGraph, OutputCountMismatch) {
  TGraph g = hand_graph();
  GraphAccess::operations(g)[1].outputs.pop_back();
  EXPECT_THAT(verify_error(g), HasSubstr("operation #1 (sincos) expects 2 outputs, has 1"));
}

TEST(VerifyGraph, ActiveMaskSizeMismatch) {
  TGraph g = hand_graph();
  GraphAccess::operations(g)[2].role = linearized({true});
  EXPECT_THAT(verify_error(g),
              HasSubstr("operation #2 (mul) expects 2 active_mask entries, has 1"));
}

TEST(VerifyGraph, OperandReadBeforeItIsDefined) {
  TGraph g = hand_graph();
  GraphAccess::operations(g)[0].inputs[1] = TRef::local(5);
  EXPECT_THAT(verify_error(g), HasSubstr("operation #0 (mul) reads %5 before it is defined"));
  TGraph h = hand_graph();
  GraphAccess::operations(h)[1].inputs[0] = TRef::local(77);
  EXPECT_THAT(verify_error(h), HasSubstr("operation #1 (sincos) reads %77 before it is defined"));
}

TEST(VerifyGraph, ValueAssignedTwice) {
  TGraph g = hand_graph();
  GraphAccess::operations(g)[2].outputs[0] = 3;
  EXPECT_THAT(verify_error(g), HasSubstr("%3 is assigned twice (operation #2, mul)"));
}

TEST(VerifyGraph, ProducerDoesNotMatchOperation) {
  TGraph g = hand_graph();
  GraphAccess::values(g)[4].producer = made_by(1, 0);
  EXPECT_THAT(verify_error(g), HasSubstr("%4 does not name operation #1 slot 1 as producer"));
}

TEST(VerifyGraph, KeyDoesNotMatchOperation) {
  TGraph g = hand_graph();
  GraphAccess::values(g)[2].key =
      TOpKey::make(ScalarOp::mul(), {TKey::input("a"), TKey::input("x")}, primary()).output(0);
  EXPECT_THAT(verify_error(g), HasSubstr("%2 has key mul(a, x), expected mul(x, a)"));
  // The role is part of the key.
  TGraph h = hand_graph();
  GraphAccess::operations(h)[0].role = linearized({false, true});
  EXPECT_THAT(verify_error(h), HasSubstr("%2 has key mul(x, a), expected mul'(x, a)"));
}

TEST(VerifyGraph, ValueNeverDefined) {
  TGraph g = hand_graph();
  GraphAccess::values(g).push_back({TKey::input("orphan"), std::nullopt});
  EXPECT_THAT(verify_error(g), HasSubstr("%6 is never defined"));
}

TEST(VerifyGraph, GraphOutputDoesNotExist) {
  TGraph g = hand_graph();
  GraphAccess::outputs(g).push_back(9);
  EXPECT_THAT(verify_error(g), HasSubstr("graph output %9 does not exist"));
}

TEST(VerifyGraph, BrokenInputs) {
  TGraph with_producer = hand_graph();
  GraphAccess::values(with_producer)[0].producer = made_by(0, 0);
  EXPECT_THAT(verify_error(with_producer), HasSubstr("input %0 has a producer"));

  TGraph derived = hand_graph();
  GraphAccess::values(derived)[1].key = GraphAccess::values(derived)[2].key;
  EXPECT_THAT(verify_error(derived), HasSubstr("input %1 has a derived key"));

  TGraph missing = hand_graph();
  GraphAccess::inputs(missing).push_back(42);
  EXPECT_THAT(verify_error(missing), HasSubstr("input %42 does not exist"));
}

TEST(VerifyGraph, UnresolvableExternalReference) {
  TGraph g = hand_graph();
  GraphAccess::operations(g)[0].inputs[1] = TRef::external(TKey::input("nowhere"));
  EXPECT_THAT(verify_error(g),
              HasSubstr("operation #0 (mul) references external nowhere, which no parent graph "
                        "defines"));

  // Constructible through the public API too: GraphBuilder does not resolve externals.
  GraphPtr primal = exp_ax_graph();
  Builder orphan;  // forgot to name `primal` as a parent
  orphan.add_output(orphan.add(ScalarOp::sin(), {X(primal->output_keys()[0])}));
  EXPECT_THAT(verify_error(*orphan.finish()),
              HasSubstr("operation #0 (sin) references external exp(mul(x, a)), which no parent "
                        "graph defines"));
}

// ---------------------------------------------------------------- MaterializedGraph

/// %0 x; #0: %1, %2 = sincos(%0); #1: %3 = mul(%1, %1); #2: %4, %5 = sincos(%3);
/// #3: %6 = add(%5, %2); return %6, %2, %6
Materialized sincos_materialized() {
  GraphPtr g = sincos_graph();
  return materialize(resolve({g}), g->output_keys());
}

TEST(VerifyMaterialized, InputThatIsNotAnInputValue) {
  Materialized m = sincos_materialized();
  MaterializedAccess::inputs(m)[0] = 3;
  EXPECT_THAT(verify_error(m), HasSubstr("materialized input %3 is not an input value"));
}

TEST(VerifyMaterialized, WrongArity) {
  Materialized m = sincos_materialized();
  auto& mul = MaterializedAccess::operations(m)[1];
  mul.inputs = mul.inputs.first(mul.inputs.size() - 1);  // drops the last operand
  EXPECT_THAT(verify_error(m), HasSubstr("materialized operation #1 (mul) has the wrong arity"));
  Materialized n = sincos_materialized();
  MaterializedAccess::operations(n)[2].output_count = 1;
  EXPECT_THAT(verify_error(n), HasSubstr("materialized operation #2 (sincos) has the wrong arity"));
}

TEST(VerifyMaterialized, ReadBeforeDefinition) {
  Materialized m = sincos_materialized();
  MaterializedAccess::operand(m, 3, 0) = 6;  // its own output
  EXPECT_THAT(verify_error(m),
              HasSubstr("materialized operation #3 (add) reads %6 before it is defined"));
  Materialized n = sincos_materialized();
  MaterializedAccess::operand(n, 1, 0) = 50;
  EXPECT_THAT(verify_error(n),
              HasSubstr("materialized operation #1 (mul) reads %50 before it is defined"));
}

TEST(VerifyMaterialized, OperationsOutOfTopologicalOrder) {
  Materialized m = sincos_materialized();
  auto& ops = MaterializedAccess::operations(m);
  std::swap(ops[1], ops[2]);
  EXPECT_THAT(verify_error(m),
              HasSubstr("materialized operation #1 (sincos) reads %3 before it is defined"));
}

TEST(VerifyMaterialized, OutputsNotASingleAssignment) {
  Materialized m = sincos_materialized();
  MaterializedAccess::operations(m)[1].first_output = 2;  // overwrites cos x
  EXPECT_THAT(verify_error(m),
              HasSubstr("materialized value %2 is not a single assignment of operation #1"));
  Materialized n = sincos_materialized();
  MaterializedAccess::values(n)[3].producer = 0;  // %3 claims the wrong producer
  EXPECT_THAT(verify_error(n),
              HasSubstr("materialized value %3 is not a single assignment of operation #1"));
}

TEST(VerifyMaterialized, UndefinedOutput) {
  Materialized m = sincos_materialized();
  MaterializedAccess::outputs(m).push_back(17);
  EXPECT_THAT(verify_error(m), HasSubstr("materialized output %17 is not defined"));
}

// ---------------------------------------------------------------- CompiledProgram

Program sincos_program() { return computegraph::compile(sincos_materialized()); }

TEST(VerifyProgram, SlotWrittenTwice) {
  Program p = sincos_program();
  ProgramAccess::instructions(p)[1].first_output = 2;
  EXPECT_THAT(verify_error(p),
              HasSubstr("slot s2 written twice or out of range (instruction #1 (mul))"));
  Program q = sincos_program();
  ProgramAccess::input_slots(q).push_back(0);
  EXPECT_THAT(verify_error(q), HasSubstr("slot s0 written twice or out of range (input)"));
}

TEST(VerifyProgram, OutputSlotOutOfRange) {
  Program p = sincos_program();
  ProgramAccess::instructions(p)[3].first_output = 7;
  EXPECT_THAT(verify_error(p),
              HasSubstr("slot s7 written twice or out of range (instruction #3 (add))"));
}

TEST(VerifyProgram, OperandReadBeforeItIsWritten) {
  Program p = sincos_program();
  // Make instruction #0 read the operand list of instruction #1 (s1, s1), written only by #0.
  auto& ins = ProgramAccess::instructions(p);
  ins[0].operand_begin = ins[1].operand_begin;
  EXPECT_THAT(verify_error(p), HasSubstr("instruction #0 (sincos) reads s1 before it is written"));
}

TEST(VerifyProgram, OutputNeverWritten) {
  Program p = sincos_program();
  ProgramAccess::output_slots(p).push_back(40);
  EXPECT_THAT(verify_error(p), HasSubstr("program output s40 is never written"));
}

}  // namespace
}  // namespace cgtest
