// resolve / ResolvedView: a logical lookup view over graphs and their parents (docs/design.md,
// "The pipeline").
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <unordered_set>

#include "test_graphs.hpp"

namespace cgtest {
namespace {

using computegraph::resolve;

/// Three levels of graphs, each referencing the previous one only through External keys:
///   A: inputs x, a;      u = mul(x, a)                       returns u
///   B: parent A;         v = exp(u), s, c = sincos(u)        returns v, c
///   C: parent B;         w = add(v, c), z = mul(w, x)        returns z
/// C never names A, yet z = (exp(a x) + cos(a x)) * x needs A's definitions.
struct ThreeLevels {
  GraphPtr a, b, c;
  Key u() const { return a->output_keys()[0]; }
  Key v() const { return b->output_keys()[0]; }
  Key cos_u() const { return b->output_keys()[1]; }
  Key sin_u() const { return b->key(b->operations()[1].outputs[0]); }
  Key z() const { return c->output_keys()[0]; }
};

ThreeLevels three_levels() {
  ThreeLevels t;
  {
    Builder builder;
    auto x = builder.add_input("x");
    auto a = builder.add_input("a");
    builder.add_output(builder.add(ScalarOp::mul(), {L(x), L(a)}));
    t.a = finish(builder);
  }
  {
    Builder builder({t.a});
    auto v = builder.add(ScalarOp::exp(), {X(t.u())});
    auto sc = builder.add_operation(ScalarOp::sincos(), {X(t.u())});
    builder.set_outputs({v, sc[1]});
    t.b = finish(builder);
  }
  {
    Builder builder({t.b});
    auto w = builder.add(ScalarOp::add(), {X(t.v()), X(t.cos_u())});
    builder.add_output(builder.add(ScalarOp::mul(), {L(w), X(in("x"))}));
    t.c = finish(builder);
  }
  return t;
}

TEST(Resolve, ViewOverTheLastGraphReachesEveryAncestor) {
  ThreeLevels t = three_levels();
  View view = resolve({t.c});
  ASSERT_EQ(view.graphs().size(), 3u);
  EXPECT_EQ(view.graphs()[0], t.c);
  EXPECT_EQ(view.graphs()[1], t.b);
  EXPECT_EQ(view.graphs()[2], t.a);
  EXPECT_EQ(view.roots().size(), 1u);

  // Each key is found in the graph that defines it.
  auto def_z = view.resolve_value(t.z());
  ASSERT_TRUE(def_z);
  EXPECT_EQ(def_z->graph, t.c.get());
  EXPECT_FALSE(def_z->is_input());
  EXPECT_EQ(def_z->operation(), ScalarOp::mul());
  auto def_v = view.resolve_value(t.v());
  ASSERT_TRUE(def_v);
  EXPECT_EQ(def_v->graph, t.b.get());
  EXPECT_EQ(def_v->operation(), ScalarOp::exp());
  ASSERT_EQ(def_v->inputs().size(), 1u);
  EXPECT_TRUE(def_v->inputs()[0].is_external());
  EXPECT_EQ(def_v->inputs()[0].external_key(), t.u());
  auto def_u = view.resolve_value(t.u());
  ASSERT_TRUE(def_u);
  EXPECT_EQ(def_u->graph, t.a.get());
  EXPECT_EQ(def_u->value, 2u);
  EXPECT_EQ(def_u->output_slot(), 0u);
  auto def_x = view.resolve_value(in("x"));
  ASSERT_TRUE(def_x);
  EXPECT_EQ(def_x->graph, t.a.get());
  EXPECT_TRUE(def_x->is_input());
  EXPECT_TRUE(view.contains(in("a")));
}

TEST(Resolve, ExternalReferencesCanBeFollowedRecursively) {
  // The logical traversal (docs/design.md, "The pipeline"): Local -> local producer,
  // External -> ask the view.
  ThreeLevels t = three_levels();
  View view = resolve({t.c});
  std::vector<const Graph*> graphs_seen;
  std::vector<Key> pending{t.z()};
  std::size_t inputs_seen = 0;
  std::unordered_set<Key> visited;
  while (!pending.empty()) {
    Key key = pending.back();
    pending.pop_back();
    if (!visited.insert(key).second) continue;
    auto def = view.resolve_value(key);
    ASSERT_TRUE(def) << "unresolvable " << computegraph::key_to_string(key);
    if (def->is_input()) {
      ++inputs_seen;
      continue;
    }
    graphs_seen.push_back(def->graph);
    for (const Ref& ref : def->inputs()) pending.push_back(def->graph->key_of(ref));
  }
  EXPECT_EQ(inputs_seen, 2u);         // x, a
  EXPECT_EQ(graphs_seen.size(), 5u);  // mul, add (C); exp, sincos (B); mul (A)
  EXPECT_EQ(std::count(graphs_seen.begin(), graphs_seen.end(), t.a.get()), 1);
  EXPECT_EQ(std::count(graphs_seen.begin(), graphs_seen.end(), t.b.get()), 2);
  EXPECT_EQ(std::count(graphs_seen.begin(), graphs_seen.end(), t.c.get()), 2);
}

TEST(Resolve, ThreeLevelsMaterializeCompileAndRun) {
  ThreeLevels t = three_levels();
  Program program = compile_outputs({t.c}, {t.z()});
  EXPECT_EQ(program.input_keys(), (std::vector<std::string>{"x", "a"}));
  for (double x : {-1.5, -0.25, 0.0, 0.5, 2.0}) {
    for (double a : {-2.0, 0.3, 1.0}) {
      auto out = program.run({x, a});
      ASSERT_EQ(out.size(), 1u);
      EXPECT_DOUBLE_EQ(out[0], (std::exp(x * a) + std::cos(x * a)) * x) << x << ", " << a;
    }
  }
  // The sin output of B's sincos is not needed and not materialized as a separate operation;
  // the sincos itself is, once.
  Materialized m = materialize(resolve({t.c}), {t.z()});
  EXPECT_EQ(m.operations().size(), 5u);
  EXPECT_EQ(m.values().size(), 2u + 6u);  // x, a, u, v, sin u, cos u, w, z
}

TEST(Resolve, ParentsAreVisitedBreadthFirstWithoutRepeats) {
  // Diamond: D has parents B1 and B2, both children of A.
  GraphPtr a = exp_ax_graph();
  auto child = [&](ScalarOp op) {
    Builder builder({a});
    builder.add_output(builder.add(op, {X(a->output_keys()[0])}));
    return finish(builder);
  };
  GraphPtr b1 = child(ScalarOp::sin());
  GraphPtr b2 = child(ScalarOp::cos());
  Builder builder({b1, b2});
  builder.add_output(
      builder.add(ScalarOp::add(), {X(b1->output_keys()[0]), X(b2->output_keys()[0])}));
  GraphPtr d = finish(builder);

  View view = resolve({d});
  EXPECT_EQ(view.graphs(), (std::vector<GraphPtr>{d, b1, b2, a}));
  // A root that is also an ancestor of another root appears once, in root position.
  View two_roots = resolve({b1, a, d});
  EXPECT_EQ(two_roots.graphs(), (std::vector<GraphPtr>{b1, a, d, b2}));
  EXPECT_EQ(two_roots.roots().size(), 3u);
  View repeated = resolve({d, d});
  EXPECT_EQ(repeated.graphs(), (std::vector<GraphPtr>{d, b1, b2, a}));

  Program program = compile_graph(d);
  for (double x : {0.1, 0.7}) {
    double y = std::exp(x * 1.3);
    EXPECT_DOUBLE_EQ(program.run({x, 1.3})[0], std::sin(y) + std::cos(y));
  }
}

TEST(Resolve, RootsComeFirstAndDecideWhereAKeyIsFound) {
  GraphPtr g1 = exp_ax_graph();
  GraphPtr g2 = exp_ax_graph();  // defines the same keys
  Key y = g1->output_keys()[0];
  EXPECT_EQ(resolve({g1, g2}).resolve_value(y)->graph, g1.get());
  EXPECT_EQ(resolve({g2, g1}).resolve_value(y)->graph, g2.get());
}

TEST(Resolve, UnknownKeysAreNotFound) {
  ThreeLevels t = three_levels();
  View view = resolve({t.c});
  EXPECT_FALSE(view.resolve_value(in("dx")));
  EXPECT_FALSE(view.contains(key_of(ScalarOp::neg(), {in("x")})));
  // A view over A alone does not see what its children define.
  View only_a = resolve({t.a});
  EXPECT_EQ(only_a.graphs().size(), 1u);
  EXPECT_FALSE(only_a.contains(t.v()));
  EXPECT_TRUE(only_a.contains(t.u()));
  // The empty view finds nothing.
  View empty;
  EXPECT_TRUE(empty.graphs().empty());
  EXPECT_FALSE(empty.contains(in("x")));
}

TEST(Resolve, MultiOutputValuesResolveToTheirSlot) {
  ThreeLevels t = three_levels();
  View view = resolve({t.c});
  auto def_s = view.resolve_value(t.sin_u());
  auto def_c = view.resolve_value(t.cos_u());
  ASSERT_TRUE(def_s && def_c);
  EXPECT_EQ(def_s->output_slot(), 0u);
  EXPECT_EQ(def_c->output_slot(), 1u);
  EXPECT_EQ(&def_s->operation_node(), &def_c->operation_node());
  EXPECT_EQ(def_c->operation(), ScalarOp::sincos());
  EXPECT_TRUE(def_c->role().is_primary());
}

TEST(Resolve, OverloadsAndNullRootsAgree) {
  ThreeLevels t = three_levels();
  std::vector<GraphPtr> roots{t.c, nullptr, t.a};
  View from_vector = resolve(roots);
  View from_span = resolve(std::span<const GraphPtr>(roots));
  View from_list = resolve({t.c, GraphPtr{}, t.a});
  const std::vector<GraphPtr> expected{t.c, t.a, t.b};
  EXPECT_EQ(from_vector.graphs(), expected);
  EXPECT_EQ(from_span.graphs(), expected);
  EXPECT_EQ(from_list.graphs(), expected);
}

TEST(Resolve, ViewKeepsItsGraphsAlive) {
  View view;
  Key z = [&] {
    ThreeLevels t = three_levels();
    view = resolve({t.c});
    return t.z();
  }();
  // Every graph is now owned by the view alone.
  EXPECT_EQ(view.graphs().size(), 3u);
  auto def = view.resolve_value(z);
  ASSERT_TRUE(def);
  EXPECT_EQ(def->graph, view.graphs()[0].get());
  Program program = compile_outputs(view.graphs(), {z});
  EXPECT_DOUBLE_EQ(program.run({1.0, 1.0})[0], std::exp(1.0) + std::cos(1.0));
}

}  // namespace
}  // namespace cgtest
