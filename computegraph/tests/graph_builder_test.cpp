// GraphBuilder and Graph: local values, global keys, in-graph deduplication, roles, multi-output
// operations (docs/design.md, "Identity" and "The pipeline").
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "test_graphs.hpp"

namespace cgtest {
namespace {

using computegraph::LocalValueId;

TEST(GraphBuilder, InputsGetConsecutiveIdsAndInputKeys) {
  Builder b;
  EXPECT_EQ(b.add_input("x"), 0u);
  EXPECT_EQ(b.add_input("a"), 1u);
  EXPECT_EQ(b.add_input("x"), 0u);  // declaring an input again returns the same value
  EXPECT_EQ(b.value_count(), 2u);
  GraphPtr g = finish(b);
  EXPECT_EQ(g->inputs(), (std::vector<LocalValueId>{0, 1}));
  EXPECT_EQ(g->key(0), in("x"));
  EXPECT_EQ(g->key(1), in("a"));
  EXPECT_FALSE(g->values()[0].producer.has_value());
  EXPECT_TRUE(g->operations().empty());
  EXPECT_TRUE(g->outputs().empty());
  EXPECT_TRUE(g->parents().empty());
}

TEST(GraphBuilder, OperationsRecordInputsOutputsProducersAndKeys) {
  GraphPtr g = exp_ax_graph();
  ASSERT_EQ(g->values().size(), 4u);
  ASSERT_EQ(g->operations().size(), 2u);
  const auto& mul = g->operations()[0];
  EXPECT_EQ(mul.operation, ScalarOp::mul());
  EXPECT_EQ(mul.inputs, (std::vector<Ref>{L(0), L(1)}));
  EXPECT_EQ(mul.outputs, (std::vector<LocalValueId>{2}));
  EXPECT_TRUE(mul.role.is_primary());
  const auto& exp = g->operations()[1];
  EXPECT_EQ(exp.operation, ScalarOp::exp());
  EXPECT_EQ(exp.inputs, (std::vector<Ref>{L(2)}));
  EXPECT_EQ(exp.outputs, (std::vector<LocalValueId>{3}));
  EXPECT_EQ(g->values()[2].producer, (std::pair<std::uint32_t, std::uint32_t>{0, 0}));
  EXPECT_EQ(g->values()[3].producer, (std::pair<std::uint32_t, std::uint32_t>{1, 0}));
  EXPECT_EQ(g->outputs(), (std::vector<LocalValueId>{3}));

  Key product = key_of(ScalarOp::mul(), {in("x"), in("a")});
  Key y = key_of(ScalarOp::exp(), {product});
  EXPECT_EQ(g->key(2), product);
  EXPECT_EQ(g->key(3), y);
  EXPECT_EQ(g->output_keys(), std::vector<Key>{y});
  EXPECT_EQ(g->find(y), LocalValueId{3});
  EXPECT_EQ(g->find(in("a")), LocalValueId{1});
  EXPECT_EQ(g->find(in("dx")), std::nullopt);
  EXPECT_EQ(g->key_of(L(2)), product);
  EXPECT_EQ(g->key_of(X(in("q"))), in("q"));
}

TEST(GraphBuilder, EqualOperationsInOneGraphAreDeduplicated) {
  Builder b;
  auto x = b.add_input("x");
  auto a = b.add_input("a");
  auto m1 = b.add(ScalarOp::mul(), {L(x), L(a)});
  auto m2 = b.add(ScalarOp::mul(), {L(x), L(a)});
  // The same key reached through External references to the local inputs.
  auto m3 = b.add(ScalarOp::mul(), {X(in("x")), X(in("a"))});
  auto swapped = b.add(ScalarOp::mul(), {L(a), L(x)});
  EXPECT_EQ(m1, m2);
  EXPECT_EQ(m1, m3);
  EXPECT_NE(m1, swapped);
  auto sc1 = b.add_operation(ScalarOp::sincos(), {L(m1)});
  auto sc2 = b.add_operation(ScalarOp::sincos(), {L(m2)});
  EXPECT_EQ(sc1, sc2);
  auto c1 = b.add(ScalarOp::constant(1.5), {});
  auto c2 = b.add(ScalarOp::constant(1.5), {});
  auto c3 = b.add(ScalarOp::constant(2.5), {});
  EXPECT_EQ(c1, c2);
  EXPECT_NE(c1, c3);
  GraphPtr g = finish(b);
  EXPECT_EQ(g->operations().size(), 5u);  // mul, mul(a, x), sincos, const 1.5, const 2.5
  EXPECT_EQ(g->values().size(), 8u);
}

TEST(GraphBuilder, RoleSeparatesOtherwiseEqualOperations) {
  Builder b;
  auto a = b.add_input("a");
  auto dx = b.add_input("dx");
  auto primal = b.add(ScalarOp::mul(), {L(a), L(dx)});
  auto fixed_active = b.add(ScalarOp::mul(), {L(a), L(dx)}, linearized({false, true}));
  auto active_fixed = b.add(ScalarOp::mul(), {L(a), L(dx)}, linearized({true, false}));
  auto again = b.add(ScalarOp::mul(), {L(a), L(dx)}, linearized({false, true}));
  EXPECT_EQ(again, fixed_active);
  EXPECT_NE(primal, fixed_active);
  EXPECT_NE(primal, active_fixed);
  EXPECT_NE(fixed_active, active_fixed);
  GraphPtr g = finish(b);
  ASSERT_EQ(g->operations().size(), 3u);
  EXPECT_TRUE(g->operations()[0].role.is_primary());
  EXPECT_EQ(g->operations()[1].role.active_mask(), (std::vector<bool>{false, true}));
  EXPECT_EQ(g->operations()[2].role.active_mask(), (std::vector<bool>{true, false}));
  EXPECT_EQ(g->key(fixed_active),
            key_of(ScalarOp::mul(), {in("a"), in("dx")}, linearized({false, true})));
}

TEST(GraphBuilder, MultiOutputOperation) {
  Builder b;
  auto x = b.add_input("x");
  auto sc = b.add_operation(ScalarOp::sincos(), {L(x)});
  ASSERT_EQ(sc.size(), 2u);
  EXPECT_EQ(sc, (std::vector<LocalValueId>{1, 2}));
  b.set_outputs({sc[1], sc[0]});
  GraphPtr g = finish(b);
  ASSERT_EQ(g->operations().size(), 1u);
  EXPECT_EQ(g->operations()[0].outputs, (std::vector<LocalValueId>{1, 2}));
  EXPECT_EQ(g->values()[1].producer, (std::pair<std::uint32_t, std::uint32_t>{0, 0}));
  EXPECT_EQ(g->values()[2].producer, (std::pair<std::uint32_t, std::uint32_t>{0, 1}));
  OpKey op = OpKey::make(ScalarOp::sincos(), {in("x")}, primary());
  EXPECT_EQ(g->key(1), op.output(0));
  EXPECT_EQ(g->key(2), op.output(1));
  EXPECT_EQ(g->key(1).node_identity(), g->key(2).node_identity());
  EXPECT_EQ(g->output_keys(), (std::vector<Key>{op.output(1), op.output(0)}));
}

TEST(GraphBuilder, OutputsMayRepeatAndIncludeInputs) {
  Builder b;
  auto x = b.add_input("x");
  auto n = b.add(ScalarOp::neg(), {L(x)});
  b.add_output(n);
  b.add_output(x);
  b.add_output(n);
  GraphPtr g = finish(b);
  EXPECT_EQ(g->outputs(), (std::vector<LocalValueId>{1, 0, 1}));
  Key neg_x = key_of(ScalarOp::neg(), {in("x")});
  EXPECT_EQ(g->output_keys(), (std::vector<Key>{neg_x, in("x"), neg_x}));
}

TEST(GraphBuilder, SetOutputsReplacesOutputs) {
  Builder b;
  auto x = b.add_input("x");
  auto n = b.add(ScalarOp::neg(), {L(x)});
  b.add_output(x);
  b.set_outputs({n});
  EXPECT_EQ(finish(b)->outputs(), (std::vector<LocalValueId>{1}));
}

TEST(GraphBuilder, VariadicAndNullaryOperations) {
  Builder b;
  std::vector<Ref> terms;
  for (int i = 0; i < 12; ++i) terms.push_back(L(b.add_input("x" + std::to_string(i))));
  auto s = b.add(ScalarOp::sum(12), terms);
  auto c = b.add(ScalarOp::constant(0.25), {});
  b.add_output(b.add(ScalarOp::mul(), {L(s), L(c)}));
  GraphPtr g = finish(b);
  EXPECT_EQ(g->operations()[0].inputs.size(), 12u);
  EXPECT_TRUE(g->operations()[1].inputs.empty());
  EXPECT_EQ(g->operand_count(), 14u);
  EXPECT_EQ(g->local_operands(0).size(), 12u);
  EXPECT_EQ(g->local_operands(0)[11], 11u);
  EXPECT_TRUE(g->local_operands(1).empty());
  EXPECT_EQ(g->key(c), key_of(ScalarOp::constant(0.25), {}));
}

TEST(GraphBuilder, ExternalReferencesKeepTheirKeysAndParents) {
  GraphPtr primal = exp_ax_graph();
  GraphPtr jvp = exp_ax_jvp_graph(primal);
  ASSERT_EQ(jvp->parents().size(), 1u);
  EXPECT_EQ(jvp->parents()[0], primal);
  EXPECT_EQ(jvp->inputs(), (std::vector<LocalValueId>{0}));
  ASSERT_EQ(jvp->operations().size(), 2u);
  const auto& t = jvp->operations()[0];
  ASSERT_TRUE(t.inputs[0].is_external());
  EXPECT_EQ(t.inputs[0].external_key(), in("a"));
  EXPECT_EQ(t.inputs[1], L(0));
  const auto& out = jvp->operations()[1];
  ASSERT_TRUE(out.inputs[0].is_external());
  EXPECT_EQ(out.inputs[0].external_key(), primal->output_keys()[0]);
  // The packed operand ids mirror the inputs, External ones marked.
  constexpr LocalValueId kExt = computegraph::Graph<ScalarOp>::kExternalOperand;
  EXPECT_EQ(jvp->operand_count(), 4u);
  const auto t_locals = jvp->local_operands(0);
  EXPECT_EQ(std::vector<LocalValueId>(t_locals.begin(), t_locals.end()),
            (std::vector<LocalValueId>{kExt, 0}));
  const auto out_locals = jvp->local_operands(1);
  EXPECT_EQ(std::vector<LocalValueId>(out_locals.begin(), out_locals.end()),
            (std::vector<LocalValueId>{kExt, 1}));
  // The graph defines neither external value itself.
  EXPECT_EQ(jvp->find(in("a")), std::nullopt);
  EXPECT_EQ(jvp->find(primal->output_keys()[0]), std::nullopt);
  // The keys are global: the same structure as a key built without any graph.
  Key y = key_of(ScalarOp::exp(), {key_of(ScalarOp::mul(), {in("x"), in("a")})});
  Key ta = key_of(ScalarOp::mul(), {in("a"), in("dx")}, linearized({false, true}));
  EXPECT_EQ(jvp->output_keys()[0], key_of(ScalarOp::mul(), {y, ta}, linearized({false, true})));
}

TEST(GraphBuilder, EqualStructuresInDifferentGraphsHaveEqualKeys) {
  GraphPtr g1 = exp_ax_graph();
  GraphPtr g2 = exp_ax_graph();
  EXPECT_NE(g1, g2);
  for (LocalValueId v = 0; v < g1->values().size(); ++v) {
    EXPECT_EQ(g1->key(v), g2->key(v));
    EXPECT_EQ(g1->key(v).node_identity(), g2->key(v).node_identity());
  }
  // Declaration order changes local ids, not keys.
  Builder b;
  auto a = b.add_input("a");
  auto x = b.add_input("x");
  b.add_output(b.add(ScalarOp::exp(), {L(b.add(ScalarOp::mul(), {L(x), L(a)}))}));
  GraphPtr g3 = finish(b);
  EXPECT_EQ(g3->key(0), g1->key(1));
  EXPECT_EQ(g3->output_keys(), g1->output_keys());
}

TEST(GraphBuilder, BuilderKeyMatchesFinishedGraph) {
  Builder b;
  auto x = b.add_input("x");
  auto s = b.add(ScalarOp::sin(), {L(x)});
  EXPECT_EQ(b.key(s), key_of(ScalarOp::sin(), {in("x")}));
  EXPECT_EQ(b.graph().values().size(), 2u);
  GraphPtr g = finish(b);
  EXPECT_EQ(g->key(s), key_of(ScalarOp::sin(), {in("x")}));
}

/// Adds sin(x), mul(sin(x), x) and exp of that to `b`, returning the three values.
std::vector<LocalValueId> add_shared_ops(Builder& b, LocalValueId x) {
  auto s = b.add(ScalarOp::sin(), {L(x)});
  auto m = b.add(ScalarOp::mul(), {L(s), L(x)});
  return {s, m, b.add(ScalarOp::exp(), {L(m)})};
}

// A builder answers "is this operation already here?" from a hint in the key node, which only the
// builder that added the node last may hold while it is active. Interleaved builders adding the
// same keys must each still deduplicate exactly (the later one falls back to its index).
TEST(GraphBuilder, InterleavedBuildersSharingKeysDeduplicateEach) {
  Builder first;
  Builder second;
  auto x1 = first.add_input("hint_x");
  auto x2 = second.add_input("hint_x");
  auto ops1 = add_shared_ops(first, x1);
  auto ops2 = add_shared_ops(second, x2);  // the nodes' hints belong to `first`
  EXPECT_EQ(add_shared_ops(first, x1), ops1);
  EXPECT_EQ(add_shared_ops(second, x2), ops2);
  GraphPtr g1 = finish(first);
  EXPECT_EQ(add_shared_ops(second, x2), ops2);  // `first` is done: its hints may be taken
  Builder third;
  auto x3 = third.add_input("hint_x");
  auto ops3 = add_shared_ops(third, x3);
  EXPECT_EQ(add_shared_ops(third, x3), ops3);
  GraphPtr g2 = finish(second);
  GraphPtr g3 = finish(third);
  for (const GraphPtr& g : {g1, g2, g3}) {
    EXPECT_EQ(g->operations().size(), 3u);
    EXPECT_EQ(g->find(key_of(ScalarOp::sin(), {in("hint_x")})), LocalValueId{1});
  }
}

TEST(GraphBuilder, ConcurrentBuildersSharingKeysDeduplicateEach) {
  constexpr int kThreads = 8;
  constexpr int kRounds = 200;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int r = 0; r < kRounds; ++r) {
        Builder b;
        auto x = b.add_input("concurrent_x");
        auto v = x;
        for (int i = 0; i < 20; ++i) v = b.add(ScalarOp::sin(), {L(v)});
        // Again, from the start: every operation is already in this graph.
        auto w = x;
        for (int i = 0; i < 20; ++i) w = b.add(ScalarOp::sin(), {L(w)});
        if (w != v) ++failures;
        if (finish(b)->operations().size() != 20u) ++failures;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
}

}  // namespace
}  // namespace cgtest
