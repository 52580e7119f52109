// materialize_merge: flatten a resolved view into one deduplicated, topologically ordered graph
// (docs/design.md, "The pipeline"), including cross-graph CSE.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "golden.hpp"
#include "test_graphs.hpp"

namespace cgtest {
namespace {

using computegraph::MaterializedValueId;
using computegraph::resolve;
using computegraph::to_string;

/// A materialized operation's operand ids, as a comparable and printable vector.
std::vector<MaterializedValueId> ids(std::span<const MaterializedValueId> operands) {
  return {operands.begin(), operands.end()};
}

/// `op`(mul(x, a)), built by a graph of its own that declares its inputs in the order `names`.
GraphPtr unary_of_product(ScalarOp op, const std::vector<std::string>& names) {
  Builder b;
  for (const auto& name : names) b.add_input(name);
  auto x = b.add_input("x");
  auto a = b.add_input("a");
  b.add_output(b.add(op, {L(b.add(ScalarOp::mul(), {L(x), L(a)}))}));
  return finish(b);
}

std::string print_graphs(const std::vector<GraphPtr>& graphs) {
  std::string text;
  for (const auto& g : graphs) text += to_string(*g);
  return text;
}

TEST(MaterializeMerge, EqualSubgraphsOfIndependentGraphsBecomeOneNode) {
  GraphPtr g1 = unary_of_product(ScalarOp::exp(), {"x", "a"});
  GraphPtr g2 = unary_of_product(ScalarOp::sin(), {"a", "x"});  // other local ids, same keys
  ASSERT_NE(g1->key(0), g2->key(0));
  ASSERT_EQ(g1->key(2), g2->key(2));  // mul(x, a) in both
  const std::vector<Key> outputs{g1->output_keys()[0], g2->output_keys()[0]};
  Materialized m = materialize(resolve({g1, g2}), outputs);
  EXPECT_TRUE(cgtest::matches_golden("materialize_cse.txt", to_string(m), print_graphs({g1, g2})));

  ASSERT_EQ(m.operations().size(), 3u);  // mul once, exp, sin
  EXPECT_EQ(m.values().size(), 5u);
  EXPECT_EQ(m.input_keys(), (std::vector<std::string>{"x", "a"}));
  EXPECT_EQ(m.operations()[0].operation, ScalarOp::mul());
  EXPECT_EQ(ids(m.operations()[0].inputs), (std::vector<MaterializedValueId>{0, 1}));
  EXPECT_EQ(m.operations()[1].operation, ScalarOp::exp());
  EXPECT_EQ(m.operations()[2].operation, ScalarOp::sin());
  // Both consumers read the one product.
  EXPECT_EQ(ids(m.operations()[1].inputs), (std::vector<MaterializedValueId>{2}));
  EXPECT_EQ(ids(m.operations()[2].inputs), (std::vector<MaterializedValueId>{2}));
  EXPECT_EQ(m.output_keys(), outputs);

  Program program = computegraph::compile(m);
  auto out = program.run({0.75, -1.25});
  EXPECT_DOUBLE_EQ(out[0], std::exp(0.75 * -1.25));
  EXPECT_DOUBLE_EQ(out[1], std::sin(0.75 * -1.25));
}

TEST(MaterializeMerge, CopiesOwnTheirOperands) {
  GraphPtr g = unary_of_product(ScalarOp::sin(), {"x", "a"});
  auto original = std::make_unique<Materialized>(materialize(resolve({g}), g->output_keys()));
  const Materialized copy = *original;
  Materialized assigned = materialize(resolve({g}), std::vector<Key>{});
  assigned = *original;
  const Materialized moved = std::move(*original);
  original.reset();  // the copies must not read the original's operand array
  const std::vector<const Materialized*> all{&copy, &assigned, &moved};
  for (const Materialized* m : all) {
    ASSERT_EQ(m->operations().size(), 2u);
    EXPECT_EQ(ids(m->operations()[0].inputs), (std::vector<MaterializedValueId>{0, 1}));
    EXPECT_EQ(ids(m->operations()[1].inputs), (std::vector<MaterializedValueId>{2}));
  }
  EXPECT_NE(copy.operations()[0].inputs.data(), assigned.operations()[0].inputs.data());
}

TEST(MaterializeMerge, DeepIndependentSubgraphsAreMerged) {
  // Two graphs each build the same 1000-step chain v <- sin(v + x) independently and end it with
  // different operations; a third graph adds their results through External references. Each
  // chain is reached through its own graph's local references, and CSE leaves one chain.
  constexpr int kSteps = 1000;
  auto chain_then = [&](ScalarOp last) {
    Builder b;
    auto x = b.add_input("x");
    auto v = x;
    for (int i = 0; i < kSteps; ++i) {
      v = b.add(ScalarOp::sin(), {L(b.add(ScalarOp::add(), {L(v), L(x)}))});
    }
    b.add_output(b.add(last, {L(v)}));
    return finish(b);
  };
  GraphPtr c1 = chain_then(ScalarOp::neg());
  GraphPtr c2 = chain_then(ScalarOp::cos());
  Builder b({c1, c2});
  b.add_output(b.add(ScalarOp::add(), {X(c1->output_keys()[0]), X(c2->output_keys()[0])}));
  GraphPtr top = finish(b);
  Materialized m = materialize(resolve({top}), top->output_keys());
  EXPECT_EQ(m.operations().size(), 2u * kSteps + 3);  // the chain once, neg, cos, add
  EXPECT_EQ(m.inputs().size(), 1u);
  // neg and cos read the same chain value.
  const auto& ops = m.operations();
  ASSERT_EQ(ops[ops.size() - 3].operation, ScalarOp::neg());
  ASSERT_EQ(ops[ops.size() - 2].operation, ScalarOp::cos());
  EXPECT_EQ(ids(ops[ops.size() - 3].inputs), ids(ops[ops.size() - 2].inputs));

  Program program = computegraph::compile(m);
  for (double x : {0.1, -0.4}) {
    double v = x;
    for (int i = 0; i < kSteps; ++i) v = std::sin(v + x);
    EXPECT_DOUBLE_EQ(program.run({x})[0], -v + std::cos(v));
  }
}

TEST(MaterializeMerge, ChildRecomputingAParentValueLocallyIsDeduplicated) {
  GraphPtr parent = exp_ax_graph();
  Builder b({parent});
  auto x = b.add_input("x");
  auto a = b.add_input("a");
  auto product = b.add(ScalarOp::mul(), {L(x), L(a)});  // also defined in the parent
  b.add_output(b.add(ScalarOp::add(), {X(parent->output_keys()[0]), L(product)}));
  GraphPtr child = finish(b);
  Materialized m = materialize(resolve({child}), child->output_keys());
  ASSERT_EQ(m.operations().size(), 3u);  // mul, exp, add
  EXPECT_EQ(ids(m.operations()[2].inputs), (std::vector<MaterializedValueId>{3, 2}));
  EXPECT_DOUBLE_EQ(computegraph::compile(m).run({2.0, 0.5})[0], std::exp(1.0) + 1.0);
}

TEST(MaterializeMerge, CollectsOnlyReachableDefinitions) {
  Builder b;
  auto x = b.add_input("x");
  auto a = b.add_input("a");
  auto unused_input = b.add_input("unused");
  b.add(ScalarOp::neg(), {L(x)});
  b.add(ScalarOp::cos(), {L(unused_input)});
  auto y = b.add(ScalarOp::mul(), {L(a), L(a)});
  b.add_output(y);
  GraphPtr g = finish(b);
  Materialized m = materialize(resolve({g}), g->output_keys());
  EXPECT_EQ(m.input_keys(), std::vector<std::string>{"a"});
  ASSERT_EQ(m.operations().size(), 1u);
  EXPECT_EQ(ids(m.operations()[0].inputs), (std::vector<MaterializedValueId>{0, 0}));
}

TEST(MaterializeMerge, OrderIsPostOrderFromTheOutputsWithOperandsLeftToRight) {
  Builder b;
  auto pa = b.add_input("a");
  auto pb = b.add_input("b");
  auto pc = b.add_input("c");
  auto m_cb = b.add(ScalarOp::mul(), {L(pc), L(pb)});
  auto n_a = b.add(ScalarOp::neg(), {L(pa)});
  auto sum = b.add(ScalarOp::add(), {L(m_cb), L(n_a)});
  b.set_outputs({sum});
  GraphPtr g = finish(b);

  Materialized m = materialize(resolve({g}), {g->key(sum)});
  // Inputs in the order the walk first reaches them, not in declaration order.
  EXPECT_EQ(m.input_keys(), (std::vector<std::string>{"c", "b", "a"}));
  ASSERT_EQ(m.operations().size(), 3u);
  EXPECT_EQ(m.operations()[0].operation, ScalarOp::mul());
  EXPECT_EQ(m.operations()[1].operation, ScalarOp::neg());
  EXPECT_EQ(m.operations()[2].operation, ScalarOp::add());
  // values: %0 c, %1 b, %2 c*b, %3 a, %4 -a, %5 sum
  EXPECT_EQ(m.inputs(), (std::vector<MaterializedValueId>{0, 1, 3}));
  EXPECT_EQ(ids(m.operations()[1].inputs), (std::vector<MaterializedValueId>{3}));
  EXPECT_EQ(ids(m.operations()[2].inputs), (std::vector<MaterializedValueId>{2, 4}));
  EXPECT_EQ(m.input_position("c"), 0u);
  EXPECT_EQ(m.input_position("b"), 1u);
  EXPECT_EQ(m.input_position("a"), 2u);
  EXPECT_EQ(m.input_position("d"), std::nullopt);

  // The requested output order drives the walk.
  Materialized m2 = materialize(resolve({g}), {g->key(n_a), g->key(m_cb)});
  EXPECT_EQ(m2.input_keys(), (std::vector<std::string>{"a", "c", "b"}));
  EXPECT_EQ(m2.operations()[0].operation, ScalarOp::neg());
  EXPECT_EQ(m2.outputs(), (std::vector<MaterializedValueId>{1, 4}));
}

TEST(MaterializeMerge, IsDeterministic) {
  GraphPtr g1 = sincos_graph();
  const std::string first = to_string(materialize(resolve({g1}), g1->output_keys()));
  EXPECT_EQ(to_string(materialize(resolve({g1}), g1->output_keys())), first);
  GraphPtr g2 = sincos_graph();  // rebuilt from scratch
  EXPECT_EQ(to_string(materialize(resolve({g2}), g2->output_keys())), first);
  // Which of two equal graphs a view searches first does not change the result.
  EXPECT_EQ(to_string(materialize(resolve({g2, g1}), g1->output_keys())), first);
}

TEST(MaterializeMerge, LeadingInputsComeFirstEvenIfUnused) {
  GraphPtr g = exp_ax_graph();
  View view = resolve({g});
  Materialized m = materialize(view, g->output_keys(), {in("a"), in("unused"), in("a")});
  EXPECT_EQ(m.input_keys(), (std::vector<std::string>{"a", "unused", "x"}));
  EXPECT_EQ(m.input_position("a"), 0u);
  EXPECT_EQ(m.input_position("unused"), 1u);
  EXPECT_EQ(m.input_position("x"), 2u);
  ASSERT_EQ(m.operations().size(), 2u);
  // mul(x, a) still reads x first.
  EXPECT_EQ(ids(m.operations()[0].inputs), (std::vector<MaterializedValueId>{2, 0}));

  Program program = computegraph::compile(m);
  EXPECT_EQ(program.input_keys(), (std::vector<std::string>{"a", "unused", "x"}));
  EXPECT_DOUBLE_EQ(program.run({3.0, 123.0, 0.5})[0], std::exp(1.5));

  // Leading inputs alone, without outputs.
  Materialized only_inputs = materialize(view, {}, {in("x")});
  EXPECT_EQ(only_inputs.input_keys(), std::vector<std::string>{"x"});
  EXPECT_TRUE(only_inputs.operations().empty());
  EXPECT_TRUE(only_inputs.outputs().empty());
}

TEST(MaterializeMerge, OutputsAreAlignedWithTheRequestAndMayRepeat) {
  GraphPtr g = sincos_graph();
  const std::vector<Key> outputs = g->output_keys();  // y, cos x, y
  Materialized m = materialize(resolve({g}), outputs);
  EXPECT_EQ(m.outputs(), (std::vector<MaterializedValueId>{6, 2, 6}));
  EXPECT_EQ(m.output_keys(), outputs);

  // An input requested as an output is materialized as an input, with no operation.
  Materialized identity = materialize(resolve({g}), {in("x"), in("x")});
  EXPECT_EQ(identity.input_keys(), std::vector<std::string>{"x"});
  EXPECT_TRUE(identity.operations().empty());
  EXPECT_EQ(identity.outputs(), (std::vector<MaterializedValueId>{0, 0}));
  EXPECT_EQ(computegraph::compile(identity).run({4.5}), (std::vector<double>{4.5, 4.5}));

  Materialized empty = materialize(resolve({g}), {});
  EXPECT_TRUE(empty.values().empty());
  EXPECT_TRUE(computegraph::compile(empty).run({}).empty());
}

TEST(MaterializeMerge, MultiOutputOperationsKeepConsecutiveOutputs) {
  GraphPtr g = sincos_graph();
  Materialized m = materialize(resolve({g}), g->output_keys());
  ASSERT_EQ(m.operations().size(), 4u);
  const auto& first = m.operations()[0];
  EXPECT_EQ(first.operation, ScalarOp::sincos());
  EXPECT_EQ(first.first_output, 1u);
  EXPECT_EQ(first.output_count, 2u);
  const auto& second = m.operations()[2];
  EXPECT_EQ(second.first_output, 4u);
  EXPECT_EQ(second.output_count, 2u);
  for (std::uint32_t slot = 0; slot < 2; ++slot) {
    const auto& value = m.values()[first.first_output + slot];
    EXPECT_EQ(value.producer, 0u);
    EXPECT_EQ(value.output_slot, slot);
    EXPECT_EQ(value.key, key_of(ScalarOp::sincos(), {in("x")}, primary(), slot));
  }
  // Requesting only the unused sin output of the second sincos still materializes the whole op.
  Key unused_sin = g->key(g->operations()[2].outputs[0]);
  Materialized just_sin = materialize(resolve({g}), {unused_sin});
  EXPECT_EQ(just_sin.operations().size(), 3u);
  EXPECT_EQ(just_sin.outputs(), std::vector<MaterializedValueId>{4});
  const double s = std::sin(0.3);
  EXPECT_DOUBLE_EQ(computegraph::compile(just_sin).run({0.3})[0], std::sin(s * s));
}

TEST(MaterializeMerge, RolesAndValuesAreCopied) {
  GraphPtr primal = exp_ax_graph();
  GraphPtr jvp = exp_ax_jvp_graph(primal);
  Materialized m = materialize(resolve({jvp}), jvp->output_keys());
  ASSERT_EQ(m.operations().size(), 4u);
  EXPECT_TRUE(m.operations()[0].role.is_primary());
  EXPECT_TRUE(m.operations()[1].role.is_primary());
  EXPECT_EQ(m.operations()[2].role, linearized({false, true}));
  EXPECT_EQ(m.operations()[3].role, linearized({false, true}));
  for (auto v : m.inputs()) {
    EXPECT_FALSE(m.values()[v].producer.has_value());
    EXPECT_TRUE(m.values()[v].key.is_input());
  }
  EXPECT_EQ(m.input_keys(), (std::vector<std::string>{"x", "a", "dx"}));
  for (std::size_t v = 0; v < m.values().size(); ++v) {
    auto def = resolve({jvp}).resolve_value(m.values()[v].key);
    EXPECT_TRUE(def.has_value()) << "value %" << v << " has a key no graph defines";
  }
}

TEST(MaterializeMerge, ExternalsResolveThroughSiblingRoots) {
  GraphPtr g1 = exp_ax_graph();
  Builder b;  // no parents: g1 must be given to resolve explicitly
  b.add_output(b.add(ScalarOp::neg(), {X(g1->output_keys()[0])}));
  GraphPtr g2 = b.finish();
  Materialized m = materialize(resolve({g2, g1}), g2->output_keys());
  EXPECT_EQ(m.operations().size(), 3u);
  EXPECT_DOUBLE_EQ(computegraph::compile(m).run({0.5, 2.0})[0], -std::exp(1.0));
}

TEST(MaterializeMerge, LongChainsAreMaterializedIteratively) {
  // Recursion over a 200'000-deep chain would overflow the stack.
  constexpr int kDepth = 200'000;
  Builder b;
  auto v = b.add_input("x");
  for (int i = 0; i < kDepth; ++i) v = b.add(ScalarOp::neg(), {L(v)});
  v = b.add(ScalarOp::add(), {L(v), L(b.add(ScalarOp::constant(0.5), {}))});
  b.add_output(v);
  GraphPtr g = finish(b);
  Materialized m = materialize(resolve({g}), g->output_keys());
  EXPECT_EQ(m.operations().size(), kDepth + 2u);
  Program program = computegraph::compile(m);
  EXPECT_DOUBLE_EQ(program.run({1.25})[0], 1.25 + 0.5);  // an even number of negations
}

}  // namespace
}  // namespace cgtest
