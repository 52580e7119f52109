// Partial evaluation of materialized graphs. unzip: splitting a graph into the part that depends
// only on fixed inputs and the part that varies; checked on exp(a*x) (golden IR) and on
// random graphs: running the fixed part once and the varying part on its residuals gives the whole
// graph's outputs exactly. bind_values: values the caller holds become inputs; on random graphs
// the bound graph, given those values, gives the whole graph's outputs exactly and computes none of
// them again.
#include <gtest/gtest.h>

#include <random>

#include "computegraph/bind_values.hpp"
#include "golden.hpp"
#include "random_graph.hpp"
#include "test_graphs.hpp"

namespace cgtest {
namespace {

using computegraph::resolve;
using Unzipped = computegraph::UnzippedGraph<ScalarOp>;

std::string residual_name(const Key&, std::size_t index) { return "res:" + std::to_string(index); }

Unzipped unzip(const Materialized& m, std::vector<std::size_t> varying) {
  auto u = computegraph::unzip(m, std::span<const std::size_t>(varying), residual_name);
  computegraph::verify(u.fixed);
  computegraph::verify(u.varying);
  return u;
}

/// A random graph of 30 to 79 operations over 4 inputs with 5 outputs, materialized with its
/// inputs leading.
struct RandomCase {
  RandomGraphOptions options;
  GraphPtr graph;
  std::vector<Key> leading;
  Materialized materialized;
};
RandomCase random_case(unsigned seed) {
  RandomCase c;
  c.options.inputs = 4;
  c.options.operations = 30 + static_cast<int>(seed % 50);
  c.options.outputs = 5;
  c.graph = random_scalar_graph(seed, c.options);
  for (int i = 0; i < c.options.inputs; ++i) c.leading.push_back(in("in" + std::to_string(i)));
  c.materialized = materialize(resolve({c.graph}), c.graph->output_keys(), c.leading);
  return c;
}

TEST(Unzip, JvpOfExpAxGolden) {
  // Inputs x, a, dx; dx varies. exp(a x) and a are computed once; the two linear products vary.
  GraphPtr primal = exp_ax_graph();
  GraphPtr jvp = exp_ax_jvp_graph(primal);
  auto m = materialize(resolve({jvp}), {primal->output_keys()[0], jvp->output_keys()[0]});
  auto u = unzip(m, {2});
  EXPECT_EQ(u.fixed.operations().size(), 2u);
  EXPECT_EQ(u.varying.operations().size(), 2u);
  EXPECT_EQ(u.residual_count(), 2u);  // a and exp(a x); exp(a x) is also an output
  EXPECT_EQ(u.varying.output_keys()[1], m.output_keys()[1]);
  EXPECT_TRUE(matches_golden("unzip_exp_ax_jvp.txt",
                             "// fixed\n" + to_string(u.fixed) + "// varying\n" + to_string(u.varying),
                             to_string(m)));
}

TEST(Unzip, NothingVariesOrEverythingVaries) {
  GraphPtr g = sincos_graph();
  auto m = materialize(resolve({g}), g->output_keys());
  auto none = unzip(m, {});
  EXPECT_EQ(none.fixed.operations().size(), m.operations().size());
  EXPECT_TRUE(none.varying.operations().empty());
  EXPECT_EQ(none.varying.inputs().size(), none.residual_count());
  auto all = unzip(m, {0});
  EXPECT_TRUE(all.fixed.operations().empty());
  EXPECT_EQ(all.varying.operations().size(), m.operations().size());
  EXPECT_EQ(all.residual_count(), 0u);
  // Either way the composition computes the graph.
  for (const auto* u : {&none, &all}) {
    auto fixed = computegraph::compile(u->fixed);
    auto varying = computegraph::compile(u->varying);
    std::vector<double> fixed_in;
    if (u == &none) fixed_in.push_back(0.7);
    auto residuals = fixed.run(std::span<const double>(fixed_in));
    if (u == &all) residuals.push_back(0.7);
    auto out = varying.run(std::span<const double>(residuals));
    ASSERT_EQ(out.size(), 3u);
    EXPECT_DOUBLE_EQ(out[0], sincos_closed_form(0.7));
  }
}

TEST(Unzip, RecomputedConstantsNeverCross) {
  // x, dx; c = 2, d = c c (constants); outputs y = x d (fixed), t = dx d (varying) and c.
  Builder b;
  const auto x = b.add_input("x"), dx = b.add_input("dx");
  const auto c = b.add(ScalarOp::constant(2.0), {});
  const auto d = b.add(ScalarOp::mul(), {L(c), L(c)});
  const auto y = b.add(ScalarOp::mul(), {L(x), L(d)});
  const auto t = b.add(ScalarOp::mul(), {L(dx), L(d)});
  b.set_outputs({y, t, c});
  const GraphPtr g = finish(b);
  const auto m = materialize(resolve({g}), g->output_keys(), {in("x"), in("dx")});
  const std::vector<std::size_t> varying{1};
  const auto plain = unzip(m, varying);
  EXPECT_EQ(plain.residual_count(), 3u);  // d (read by t), y and c (outputs)
  const auto u = computegraph::unzip(m, std::span<const std::size_t>(varying), residual_name,
                                     computegraph::UnzipOptions{.recompute_constants = true});
  computegraph::verify(u.fixed);
  computegraph::verify(u.varying);
  ASSERT_EQ(u.residual_count(), 1u);  // y only: c and d are computed where they are read
  EXPECT_EQ(u.residual_values, std::vector<computegraph::MaterializedValueId>{m.outputs()[0]});
  EXPECT_EQ(u.fixed.operations().size(), 3u);    // c, d, y
  EXPECT_EQ(u.varying.operations().size(), 3u);  // c, d, t
  const auto residuals = computegraph::compile(u.fixed).run(std::vector<double>{1.5});
  std::vector<double> varying_in = residuals;
  varying_in.push_back(0.25);
  const auto out = computegraph::compile(u.varying).run(std::span<const double>(varying_in));
  EXPECT_EQ(out, (std::vector<double>{6.0, 1.0, 2.0}));
}

TEST(Unzip, RandomGraphsWithRecomputedConstantsComposeToTheWholeGraph) {
  for (unsigned seed = 1; seed <= 60; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const RandomCase c = random_case(seed);
    const Materialized& m = c.materialized;
    std::vector<std::size_t> varying;
    for (std::size_t p = 0; p < m.inputs().size(); p += 2) varying.push_back(p);
    const auto u = computegraph::unzip(m, std::span<const std::size_t>(varying), residual_name,
                                       computegraph::UnzipOptions{.recompute_constants = true});
    computegraph::verify(u.fixed);
    computegraph::verify(u.varying);
    // No residual is a constant: each depends on some input of the graph.
    std::vector<std::uint8_t> depends(m.values().size(), 0);
    for (auto v : m.inputs()) depends[v] = 1;
    for (const auto& op : m.operations()) {
      std::uint8_t any = 0;
      for (auto v : op.inputs) any |= depends[v];
      for (std::uint32_t k = 0; k < op.output_count; ++k) depends[op.first_output + k] = any;
    }
    for (auto v : u.residual_values) EXPECT_TRUE(depends[v]) << "residual " << v << " is a constant";
    auto env = random_inputs(seed, c.options.inputs);
    std::vector<double> all, fixed_in, varying_in;
    for (std::size_t p = 0; p < m.inputs().size(); ++p) {
      const double xv = env.at(m.values()[m.inputs()[p]].key.input_key());
      all.push_back(xv);
      (p % 2 == 0 ? varying_in : fixed_in).push_back(xv);
    }
    const auto whole = computegraph::compile(m).run(std::span<const double>(all));
    auto residuals = computegraph::compile(u.fixed).run(std::span<const double>(fixed_in));
    residuals.insert(residuals.end(), varying_in.begin(), varying_in.end());
    const auto parts = computegraph::compile(u.varying).run(std::span<const double>(residuals));
    ASSERT_EQ(parts.size(), whole.size());
    for (std::size_t i = 0; i < whole.size(); ++i) EXPECT_TRUE(same_value(parts[i], whole[i])) << "output " << i;
  }
}

TEST(Unzip, RejectsAPositionOutOfRange) {
  GraphPtr g = exp_ax_graph();
  auto m = materialize(resolve({g}), g->output_keys());
  try {
    unzip(m, {2});
    FAIL() << "expected BindingError";
  } catch (const computegraph::BindingError& e) {
    EXPECT_NE(std::string(e.what()).find("varying input position 2 is out of range"), std::string::npos);
  }
}

TEST(Unzip, RandomGraphsComposeToTheWholeGraph) {
  for (unsigned seed = 1; seed <= 60; ++seed) {
    const RandomCase c = random_case(seed);
    const Materialized& m = c.materialized;
    std::mt19937 rng(seed);
    std::vector<std::size_t> varying;
    for (std::size_t p = 0; p < m.inputs().size(); ++p) {
      if (rng() % 2) varying.push_back(p);
    }
    auto u = unzip(m, varying);
    SCOPED_TRACE("seed " + std::to_string(seed));

    // Every operation lands in exactly one part, and the varying part holds only operations that
    // read a varying value (so nothing fixed is recomputed per run).
    EXPECT_EQ(u.fixed.operations().size() + u.varying.operations().size(), m.operations().size());
    std::vector<std::uint8_t> varies(u.varying.values().size(), 0);
    for (std::size_t i = u.residual_count(); i < u.varying.inputs().size(); ++i) varies[u.varying.inputs()[i]] = 1;
    for (const auto& op : u.varying.operations()) {
      bool reads_varying = false;
      for (auto v : op.inputs) reads_varying |= varies[v] != 0;
      EXPECT_TRUE(reads_varying) << op.operation.name() << " does not depend on a varying input";
      for (std::uint32_t k = 0; k < op.output_count; ++k) varies[op.first_output + k] = 1;
    }
    // Outputs keep their keys, except fixed ones: those are residual inputs passed through.
    for (std::size_t i = 0; i < m.outputs().size(); ++i) {
      const auto v = u.varying.outputs()[i];
      const bool residual = v < u.residual_count() && !u.varying.values()[v].producer;
      EXPECT_TRUE(residual || u.varying.values()[v].key == m.output_keys()[i]) << "output " << i;
    }

    // Same operations in the same order: results agree exactly.
    auto env = random_inputs(seed, c.options.inputs);
    std::vector<double> all, fixed_in, varying_in;
    for (std::size_t p = 0; p < m.inputs().size(); ++p) {
      const double x = env.at(m.values()[m.inputs()[p]].key.input_key());
      all.push_back(x);
      (std::find(varying.begin(), varying.end(), p) != varying.end() ? varying_in : fixed_in).push_back(x);
    }
    auto whole = computegraph::compile(m).run(std::span<const double>(all));
    auto residuals = computegraph::compile(u.fixed).run(std::span<const double>(fixed_in));
    residuals.insert(residuals.end(), varying_in.begin(), varying_in.end());
    auto split = computegraph::compile(u.varying).run(std::span<const double>(residuals));
    ASSERT_EQ(split.size(), whole.size());
    for (std::size_t i = 0; i < whole.size(); ++i) {
      EXPECT_TRUE(same_value(split[i], whole[i])) << "output " << i << ": " << split[i] << " vs " << whole[i];
    }
  }
}

TEST(BindValues, KnownValuesBecomeInputsAndAreNotRecomputed) {
  // sincos(x) -> (s, c); outputs y = cos(s * s) + c, c, y. With every computed value known no
  // operation remains; with none of them, all do and still compute the outputs.
  GraphPtr g = sincos_graph();
  auto m = materialize(resolve({g}), g->output_keys(), {in("x")});
  std::vector<Key> all_computed;
  for (const auto& v : m.values()) {
    if (v.producer) all_computed.push_back(v.key);
  }
  auto everything = computegraph::bind_values(m, std::span<const Key>(all_computed), residual_name);
  computegraph::verify(everything);
  EXPECT_TRUE(everything.operations().empty());
  EXPECT_EQ(everything.inputs().size(), 1 + all_computed.size());
  // A key the graph does not have, and the input's own key, get inputs that nothing reads.
  const std::vector<Key> strangers = {in("not-in-the-graph"), in("x")};
  auto none = computegraph::bind_values(m, std::span<const Key>(strangers), residual_name);
  computegraph::verify(none);
  EXPECT_EQ(none.operations().size(), m.operations().size());
  EXPECT_EQ(none.inputs().size(), 3u);
  const double x = 0.7;
  auto out = computegraph::compile(none).run({x, 123.0, 456.0});
  EXPECT_DOUBLE_EQ(out[0], sincos_closed_form(x));
}

TEST(BindValues, RandomGraphsGiveTheWholeGraphsOutputs) {
  std::size_t whole_ops = 0, bound_ops = 0;
  for (unsigned seed = 1; seed <= 60; ++seed) {
    const RandomCase c = random_case(seed);
    const GraphPtr& g = c.graph;
    const std::vector<Key>& leading = c.leading;
    const Materialized& m = c.materialized;
    const RandomGraphOptions& options = c.options;
    SCOPED_TRACE("seed " + std::to_string(seed));
    // A random third of the computed values is known (some of them outputs).
    std::mt19937 rng(seed);
    std::vector<Key> known;
    for (const auto& v : m.values()) {
      if (v.producer && rng() % 3 == 0) known.push_back(v.key);
    }
    auto bound = computegraph::bind_values(m, std::span<const Key>(known), residual_name);
    computegraph::verify(bound);
    // No operation of the bound graph computes a known value.
    for (const auto& op : bound.operations()) {
      for (std::uint32_t k = 0; k < op.output_count; ++k) {
        const Key& key = bound.values()[op.first_output + k].key;
        const bool is_known = std::find(known.begin(), known.end(), key) != known.end();
        EXPECT_FALSE(is_known && op.output_count == 1) << op.operation.name() << " recomputes a known value";
      }
    }
    EXPECT_LE(bound.operations().size(), m.operations().size());
    whole_ops += m.operations().size();
    bound_ops += bound.operations().size();

    // The known values, computed by the whole graph (asked for as outputs), fed to the bound one.
    auto env = random_inputs(seed, options.inputs);
    std::vector<double> inputs;
    for (auto v : m.inputs()) inputs.push_back(env.at(m.values()[v].key.input_key()));
    auto whole = computegraph::compile(m).run(std::span<const double>(inputs));
    auto known_values =
        compile_outputs({g}, known, leading).run(std::span<const double>(inputs));
    std::vector<double> bound_in = inputs;
    bound_in.insert(bound_in.end(), known_values.begin(), known_values.end());
    auto got = computegraph::compile(bound).run(std::span<const double>(bound_in));
    ASSERT_EQ(got.size(), whole.size());
    for (std::size_t i = 0; i < whole.size(); ++i) {
      EXPECT_TRUE(same_value(got[i], whole[i])) << "output " << i << ": " << got[i] << " vs " << whole[i];
    }
  }
  EXPECT_LT(bound_ops, whole_ops * 9 / 10) << "known values should spare a good share of the operations";
}

}  // namespace
}  // namespace cgtest
