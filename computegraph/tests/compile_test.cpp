// compile: MaterializedGraph -> CompiledProgram (docs/design.md, "The pipeline"): SSA slots,
// input order, last-use marks and releases.
#include <gtest/gtest.h>

#include <algorithm>

#include "random_graph.hpp"
#include "test_graphs.hpp"

namespace cgtest {
namespace {

using computegraph::resolve;
using Slots = std::vector<std::uint32_t>;

Slots to_vector(std::span<const std::uint32_t> s) { return Slots(s.begin(), s.end()); }
std::vector<int> marks(const Program& p, std::size_t i) {
  auto m = p.last_use(i);
  return std::vector<int>(m.begin(), m.end());
}
Slots sorted_releases(const Program& p, std::size_t i) {
  Slots r = to_vector(p.releases(i));
  std::sort(r.begin(), r.end());
  return r;
}

/// Checks a program against its materialized graph by brute force: one instruction per operation
/// with the same slots, and last-use marks and releases recomputed from the list of every read.
void check_program(const Materialized& m, const Program& p) {
  const std::size_t n = m.values().size();
  ASSERT_EQ(p.slot_count(), n);
  ASSERT_EQ(p.instructions().size(), m.operations().size());
  EXPECT_EQ(p.input_slots(), Slots(m.inputs().begin(), m.inputs().end()));
  EXPECT_EQ(p.output_slots(), Slots(m.outputs().begin(), m.outputs().end()));
  EXPECT_EQ(p.input_keys(), m.input_keys());
  EXPECT_EQ(p.output_keys(), m.output_keys());

  std::vector<std::vector<std::pair<std::size_t, std::size_t>>> reads(n);  // (instruction, operand)
  std::vector<std::uint8_t> pinned(n, 0);
  for (auto v : m.outputs()) pinned[v] = 1;
  for (std::size_t i = 0; i < m.operations().size(); ++i) {
    const auto& op = m.operations()[i];
    const auto& ins = p.instructions()[i];
    EXPECT_EQ(ins.operation, op.operation);
    EXPECT_EQ(ins.role, op.role);
    EXPECT_EQ(ins.first_output, op.first_output);
    EXPECT_EQ(ins.output_count, op.output_count);
    EXPECT_EQ(to_vector(p.operands(i)), Slots(op.inputs.begin(), op.inputs.end()));
    for (std::size_t k = 0; k < op.inputs.size(); ++k) reads[op.inputs[k]].push_back({i, k});
  }

  std::vector<int> released_at(n, -1);
  for (std::size_t i = 0; i < m.operations().size(); ++i) {
    const auto& op = m.operations()[i];
    Slots expected_releases;
    ASSERT_EQ(p.last_use(i).size(), op.inputs.size());
    for (std::size_t k = 0; k < op.inputs.size(); ++k) {
      auto v = op.inputs[k];
      const bool last = !pinned[v] && reads[v].back() == std::pair{i, k};
      EXPECT_EQ(p.last_use(i)[k] != 0, last) << "instruction " << i << " operand " << k;
      if (last) expected_releases.push_back(v);
    }
    for (std::uint32_t o = op.first_output; o < op.first_output + op.output_count; ++o) {
      if (!pinned[o] && reads[o].empty()) expected_releases.push_back(o);  // dropped at once
    }
    std::sort(expected_releases.begin(), expected_releases.end());
    EXPECT_EQ(sorted_releases(p, i), expected_releases) << "instruction " << i;
    for (auto s : p.releases(i)) {
      EXPECT_EQ(released_at[s], -1) << "slot s" << s << " released twice";
      released_at[s] = static_cast<int>(i);
    }
  }
  for (std::uint32_t s = 0; s < n; ++s) {
    if (pinned[s]) {
      EXPECT_EQ(released_at[s], -1) << "output slot s" << s << " released";
    } else if (m.values()[s].producer) {
      EXPECT_NE(released_at[s], -1) << "slot s" << s << " never released";
    } else {
      // An input is released after its last read; an input nothing reads has nothing to release.
      EXPECT_EQ(released_at[s] != -1, !reads[s].empty()) << "input slot s" << s;
    }
    if (released_at[s] != -1 && !reads[s].empty()) {
      EXPECT_EQ(static_cast<std::size_t>(released_at[s]), reads[s].back().first);
    }
  }
}

TEST(Compile, SlotsAreMaterializedValuesInDefinitionOrder) {
  GraphPtr jvp = exp_ax_jvp_graph(exp_ax_graph());
  Materialized m = materialize(resolve({jvp}), jvp->output_keys());
  Program p = computegraph::compile(m);
  check_program(m, p);
  // values: %0 x, %1 a, %2 x*a, %3 exp, %4 dx, %5 a*dx, %6 exp*(a*dx)
  EXPECT_EQ(p.slot_count(), 7u);
  EXPECT_EQ(p.input_slots(), (Slots{0, 1, 4}));
  EXPECT_EQ(p.output_slots(), Slots{6});
  ASSERT_EQ(p.instructions().size(), 4u);
  EXPECT_EQ(to_vector(p.operands(0)), (Slots{0, 1}));
  EXPECT_EQ(to_vector(p.operands(1)), Slots{2});
  EXPECT_EQ(to_vector(p.operands(2)), (Slots{1, 4}));
  EXPECT_EQ(to_vector(p.operands(3)), (Slots{3, 5}));
  EXPECT_EQ(p.instructions()[2].role, linearized({false, true}));
}

TEST(Compile, OperandsAreMarkedExactlyAtTheirLastRead) {
  GraphPtr jvp = exp_ax_jvp_graph(exp_ax_graph());
  Program p = compile_graph(jvp);
  // a (s1) is read by instructions 0 and 2: marked at 2 only.
  EXPECT_EQ(marks(p, 0), (std::vector<int>{1, 0}));
  EXPECT_EQ(marks(p, 1), (std::vector<int>{1}));
  EXPECT_EQ(marks(p, 2), (std::vector<int>{1, 1}));
  EXPECT_EQ(marks(p, 3), (std::vector<int>{1, 1}));
  EXPECT_EQ(sorted_releases(p, 0), Slots{0});
  EXPECT_EQ(sorted_releases(p, 1), Slots{2});
  EXPECT_EQ(sorted_releases(p, 2), (Slots{1, 4}));
  EXPECT_EQ(sorted_releases(p, 3), (Slots{3, 5}));  // never s6, the output
}

TEST(Compile, RepeatedOperandsOutputsAndUnusedOutputs) {
  GraphPtr g = sincos_graph();
  Materialized m = materialize(resolve({g}), g->output_keys());
  Program p = computegraph::compile(m);
  check_program(m, p);
  // s1, s2 = sincos(s0); s3 = mul(s1, s1); s4, s5 = sincos(s3); s6 = add(s5, s2); return s6, s2, s6
  EXPECT_EQ(marks(p, 0), std::vector<int>{1});
  EXPECT_EQ(marks(p, 1), (std::vector<int>{0, 1}));  // a slot read twice is marked once, last
  EXPECT_EQ(marks(p, 2), std::vector<int>{1});
  EXPECT_EQ(marks(p, 3), (std::vector<int>{1, 0}));  // s2 is an output: never marked
  EXPECT_EQ(sorted_releases(p, 0), Slots{0});
  EXPECT_EQ(sorted_releases(p, 1), Slots{1});
  EXPECT_EQ(sorted_releases(p, 2), (Slots{3, 4}));  // s4 (sin) is never read: dropped at once
  EXPECT_EQ(sorted_releases(p, 3), Slots{5});
  EXPECT_EQ(p.output_slots(), (Slots{6, 2, 6}));
}

TEST(Compile, OutputsAndUnreadInputsAreNeverReleased) {
  // Returns x itself, and neg(x) which is also read by a later instruction.
  Builder b;
  auto x = b.add_input("x");
  auto n = b.add(ScalarOp::neg(), {L(x)});
  auto s = b.add(ScalarOp::sin(), {L(n)});
  b.set_outputs({x, n, s});
  GraphPtr g = finish(b);
  Materialized m = materialize(resolve({g}), g->output_keys(), {in("unread")});
  Program p = computegraph::compile(m);
  check_program(m, p);
  EXPECT_EQ(p.input_keys(), (std::vector<std::string>{"unread", "x"}));
  for (std::size_t i = 0; i < p.instructions().size(); ++i) {
    EXPECT_TRUE(sorted_releases(p, i).empty()) << "instruction " << i;
    for (int mark : marks(p, i)) EXPECT_EQ(mark, 0);
  }
  auto out = p.run({99.0, 0.5});
  EXPECT_EQ(out, (std::vector<double>{0.5, -0.5, std::sin(-0.5)}));
}

TEST(Compile, InputOrderAndPositions) {
  GraphPtr g = exp_ax_graph();
  Program natural = compile_outputs({g}, g->output_keys());
  EXPECT_EQ(natural.input_keys(), (std::vector<std::string>{"x", "a"}));
  EXPECT_EQ(natural.input_position("x"), 0u);
  EXPECT_EQ(natural.input_position("a"), 1u);
  EXPECT_EQ(natural.input_position("dx"), std::nullopt);
  EXPECT_EQ(natural.output_keys(), g->output_keys());

  Program leading = compile_outputs({g}, g->output_keys(), {in("a")});
  EXPECT_EQ(leading.input_keys(), (std::vector<std::string>{"a", "x"}));
  EXPECT_EQ(leading.input_position("a"), 0u);
  EXPECT_EQ(leading.input_position("x"), 1u);
  // Same function, arguments in the other order.
  EXPECT_EQ(natural.run({0.5, 3.0}), leading.run({3.0, 0.5}));
  EXPECT_DOUBLE_EQ(leading.run({3.0, 0.5})[0], std::exp(1.5));
}

TEST(Compile, IsDeterministic) {
  GraphPtr g = random_scalar_graph(7);
  Materialized m = materialize(resolve({g}), g->output_keys());
  const std::string text = computegraph::to_string(computegraph::compile(m));
  EXPECT_EQ(computegraph::to_string(computegraph::compile(m)), text);
  EXPECT_EQ(computegraph::to_string(compile_graph(random_scalar_graph(7))), text);
}

TEST(Compile, RandomGraphsSatisfyTheLivenessContract) {
  for (unsigned seed = 0; seed < 60; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    RandomGraphOptions options;
    options.operations = 10 + static_cast<int>(seed % 7) * 10;
    options.outputs = 1 + static_cast<int>(seed % 5);
    GraphPtr g = random_scalar_graph(seed, options);
    std::vector<Key> leading;
    if (seed % 3 == 0) leading = {in("in2"), in("never_used")};
    Materialized m = materialize(resolve({g}), g->output_keys(), leading);
    Program p = computegraph::compile(m);
    computegraph::verify(p);
    check_program(m, p);

    // And the program computes what the keys say.
    auto env = random_inputs(seed, options.inputs);
    env["never_used"] = 0.0;
    std::vector<double> args;
    for (const auto& key : p.input_keys()) args.push_back(env.at(key));
    auto out = p.run(std::span<const double>(args));
    KeyInterpreter reference(env);
    ASSERT_EQ(out.size(), p.output_keys().size());
    for (std::size_t i = 0; i < out.size(); ++i) {
      double expected = reference(p.output_keys()[i]);
      EXPECT_TRUE(same_value(out[i], expected))
          << "output " << i << ": " << out[i] << " vs " << expected;
    }
  }
}

TEST(Compile, EmptyAndInputOnlyPrograms) {
  Program empty = computegraph::compile(Materialized{});
  EXPECT_EQ(empty.slot_count(), 0u);
  EXPECT_TRUE(empty.instructions().empty());
  EXPECT_TRUE(empty.run(std::span<const double>{}).empty());

  GraphPtr g = exp_ax_graph();
  Program passthrough = compile_outputs({g}, {in("a")});
  EXPECT_EQ(passthrough.slot_count(), 1u);
  EXPECT_TRUE(passthrough.instructions().empty());
  EXPECT_EQ(passthrough.run({2.5}), std::vector<double>{2.5});
}

}  // namespace
}  // namespace cgtest
