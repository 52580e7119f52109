// walk_topological against an independent reachability computed from the keys alone, on random
// graphs: a view of one graph (walked in the graph's order) and a view of several (walked
// depth-first) visit exactly the reachable operations and inputs, once each, operands first.
#include "computegraph/traverse.hpp"

#include <gtest/gtest.h>

#include <set>
#include <unordered_map>
#include <vector>

#include "random_graph.hpp"

namespace {

using cgtest::GraphPtr;
using cgtest::ScalarOp;
using Key = computegraph::ValueKey<ScalarOp>;

/// Node identities of every input and operation reachable from `outputs`, from the keys' own
/// structure (producer inputs), without any graph.
std::set<const void*> reachable_from(const std::vector<Key>& outputs) {
  std::set<const void*> seen;
  std::vector<Key> stack(outputs.begin(), outputs.end());
  while (!stack.empty()) {
    const Key key = stack.back();
    stack.pop_back();
    if (!seen.insert(key.node_identity()).second) continue;
    if (key.is_input()) continue;
    for (const Key& operand : key.producer_inputs()) stack.push_back(operand);
  }
  return seen;
}

struct WalkRecord {
  std::set<const void*> visited;
  int repeats = 0;
  int operands_not_ready = 0;
  std::vector<bool> id_used;
  std::vector<Key> key_of_id;  // the key each walk id was given to
  std::vector<std::uint32_t> output_ids;
};

WalkRecord record_walk(const computegraph::ResolvedView<ScalarOp>& view,
                       const std::vector<Key>& outputs) {
  WalkRecord r;
  auto give = [&](std::uint32_t id, const Key& key) {
    if (r.id_used.size() <= id) {
      r.id_used.resize(id + 1, false);
      r.key_of_id.resize(id + 1, key);
    }
    if (r.id_used[id]) ++r.repeats;
    r.id_used[id] = true;
    r.key_of_id[id] = key;
  };
  auto on_input = [&](const Key& key, std::uint32_t id) {
    if (!r.visited.insert(key.node_identity()).second) ++r.repeats;
    give(id, key);
  };
  auto on_operation = [&](const computegraph::WalkStep<ScalarOp>& step) {
    for (std::uint32_t operand : step.operands) {
      if (operand >= r.id_used.size() || !r.id_used[operand]) ++r.operands_not_ready;
    }
    const Key out0 = step.graph.key(step.first_output_value);
    if (!r.visited.insert(out0.node_identity()).second) ++r.repeats;
    for (std::uint32_t k = 0; k < step.node.outputs.size(); ++k) {
      give(step.first_output + k, step.graph.key(step.first_output_value + k));
    }
  };
  r.output_ids = computegraph::walk_topological(view, std::span<const Key>(outputs), on_input,
                                                on_operation);
  return r;
}

void expect_sound(const WalkRecord& r, const std::vector<Key>& outputs, const char* what) {
  EXPECT_EQ(r.visited, reachable_from(outputs)) << what << ": not exactly the reachable part";
  EXPECT_EQ(r.repeats, 0) << what;
  EXPECT_EQ(r.operands_not_ready, 0) << what << ": an operation came before its operands";
  for (std::size_t id = 0; id < r.id_used.size(); ++id) {
    EXPECT_TRUE(r.id_used[id]) << what << ": walk id " << id << " was skipped";
  }
  ASSERT_EQ(r.output_ids.size(), outputs.size());
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    ASSERT_LT(r.output_ids[i], r.key_of_id.size());
    EXPECT_EQ(r.key_of_id[r.output_ids[i]], outputs[i]) << what << ": output " << i;
  }
}

TEST(WalkTopological, OneGraphAndSeveralGraphsVisitExactlyTheReachablePart) {
  // A graph with nothing in common with the random ones: adding it to the view makes the walk
  // take its several-graph (depth-first) path.
  computegraph::GraphBuilder<ScalarOp> other;
  other.set_outputs({other.add(ScalarOp::neg(), {computegraph::ValueRef<ScalarOp>::local(
                                                    other.add_input("unrelated"))})});
  const GraphPtr unrelated = other.finish();
  for (unsigned seed = 0; seed < 100; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const GraphPtr g = cgtest::random_scalar_graph(seed, {.inputs = 3, .operations = 60, .outputs = 3});
    const std::vector<Key> outputs = g->output_keys();
    const WalkRecord one = record_walk(computegraph::resolve({g}), outputs);
    const WalkRecord several = record_walk(computegraph::resolve({g, unrelated}), outputs);
    expect_sound(one, outputs, "one graph");
    expect_sound(several, outputs, "several graphs");
  }
}

TEST(WalkTopological, AnExternalReferenceToTheGraphsOwnValueIsFollowed) {
  // External operands make a one-graph walk fall back to the depth-first walk, which resolves
  // them through the view: here to a value of the same graph.
  using Ref = computegraph::ValueRef<ScalarOp>;
  computegraph::GraphBuilder<ScalarOp> b;
  const auto x = b.add_input("x");
  const auto s = b.add(ScalarOp::sin(), {Ref::local(x)});
  const auto dead = b.add(ScalarOp::cos(), {Ref::local(x)});
  const auto y = b.add(ScalarOp::mul(), {Ref::external(b.key(s)), Ref::local(x)});
  b.set_outputs({y});
  const GraphPtr g = b.finish();
  const std::vector<Key> outputs = g->output_keys();
  const WalkRecord r = record_walk(computegraph::resolve({g}), outputs);
  expect_sound(r, outputs, "external to own value");
  EXPECT_FALSE(r.visited.count(g->key(dead).node_identity()));
  EXPECT_EQ(r.visited.size(), 3u);  // x, sin, mul

  computegraph::GraphBuilder<ScalarOp> other;
  const auto z = other.add_input("z");
  const Key elsewhere = other.key(other.add(ScalarOp::neg(), {Ref::local(z)}));
  computegraph::GraphBuilder<ScalarOp> dangling;
  dangling.set_outputs({dangling.add(ScalarOp::sin(), {Ref::external(elsewhere)})});
  const GraphPtr d = dangling.finish();
  const std::vector<Key> d_outputs = d->output_keys();
  EXPECT_THROW(record_walk(computegraph::resolve({d}), d_outputs), computegraph::GraphError);
}

TEST(WalkTopological, AnOutputNoGraphDefinesIsAGraphError) {
  const GraphPtr g = cgtest::random_scalar_graph(3);
  computegraph::GraphBuilder<ScalarOp> b;
  b.set_outputs({b.add_input("elsewhere")});
  const std::vector<Key> missing = b.finish()->output_keys();
  auto ignore_input = [](const Key&, std::uint32_t) {};
  auto ignore_op = [](const computegraph::WalkStep<ScalarOp>&) {};
  EXPECT_THROW(computegraph::walk_topological(computegraph::resolve({g}),
                                              std::span<const Key>(missing), ignore_input, ignore_op),
               computegraph::GraphError);
}

}  // namespace
