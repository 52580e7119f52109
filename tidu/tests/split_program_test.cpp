// Split programs (split_program.hpp): jacfwd, jacrev and hessian run the direction-independent
// part of their programs once and the linear part per direction. The split must not change a
// single bit: each column (row) equals the unsplit jvp (vjp, hvp) run along the same basis
// direction, on random real and complex DAGs and with only some arguments differentiated.
#include <gtest/gtest.h>

#include <functional>

#include "scalar_helpers.hpp"
#include "tidu/testing/random_scalar_dag.hpp"

namespace {

using namespace tidutest;
using Values = std::vector<Number>;
using Transforms = tidu::Transforms<ScalarOp>;
namespace kit = tidu::testkit;
using OperandSpace = tidu::OperandSpace<Number>;

static_assert(tidu::ResidualKeyed<ScalarOp>);

Values basis(const Values& like, std::size_t j) {
  Values v;
  for (const auto& x : like) v.push_back(OperandSpace::zeros_like(x));
  v[j] = OperandSpace::basis_like(like[j], 0);
  return v;
}

// Exact equality, NaN included (the same operations in the same order).
bool same(const cd& a, const cd& b) {
  auto eq = [](double x, double y) { return x == y || (std::isnan(x) && std::isnan(y)); };
  return eq(a.real(), b.real()) && eq(a.imag(), b.imag());
}

std::vector<bool> every_other(std::size_t n, std::uint64_t seed) {
  std::vector<bool> mask(n);
  for (std::size_t j = 0; j < n; ++j) mask[j] = (j + seed) % 2 == 0;
  return mask;
}

class SplitPrograms : public ::testing::TestWithParam<DType> {
 protected:
  // A random 60-op DAG of this test's dtype; `real_loss` makes one real output (outputs unused).
  // Even seeds differentiate only every other argument (set_wrt on `ad`).
  kit::RandomDag make_dag(std::uint64_t seed, std::size_t inputs, std::size_t outputs, bool real_loss,
                           Transforms& ad) const {
    kit::RandomDagOptions opts;
    opts.ops = 60;
    opts.inputs = inputs;
    if (!real_loss) opts.outputs = outputs;
    opts.dtype = GetParam();
    opts.real_loss = real_loss;
    opts.seed = seed;
    auto made = kit::random_scalar_dag(opts);
    if (seed % 2 == 0) ad.set_wrt(made.graph, every_other(made.args.size(), seed));
    return made;
  }
};

TEST_P(SplitPrograms, JacobianColumnsAndRowsEqualUnsplitRuns) {
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Transforms ad;
    auto dag = make_dag(seed, 4, 3, false, ad);
    auto jf = ad.jacfwd(dag.graph, dag.args);
    auto jr = ad.jacrev(dag.graph, dag.args);
    for (std::size_t j = 0; j < dag.args.size(); ++j) {
      auto tangents = ad.jvp(dag.graph, dag.args, basis(dag.args, j)).second;
      for (std::size_t i = 0; i < tangents.size(); ++i) {
        EXPECT_TRUE(same(jf(i, j), tangents[i].z)) << "jacfwd (" << i << ", " << j << ")";
      }
    }
    const Values y = ad.eval(dag.graph, dag.args);
    for (std::size_t i = 0; i < y.size(); ++i) {
      auto cotangents = ad.vjp(dag.graph, dag.args, basis(y, i)).second;
      for (std::size_t j = 0; j < cotangents.size(); ++j) {
        EXPECT_TRUE(same(jr(i, j), std::conj(cotangents[j].z))) << "jacrev (" << i << ", " << j << ")";
      }
    }
  }
}

TEST_P(SplitPrograms, HessianColumnsEqualUnsplitHvps) {
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Transforms ad;
    auto dag = make_dag(seed, 4, 1, true, ad);
    auto H = ad.hessian(dag.graph, dag.args);
    for (std::size_t j = 0; j < dag.args.size(); ++j) {
      auto hv = ad.hvp(dag.graph, dag.args, basis(dag.args, j));
      for (std::size_t i = 0; i < hv.size(); ++i) {
        EXPECT_TRUE(same(H(i, j), hv[i].z)) << "hessian (" << i << ", " << j << ")";
      }
    }
  }
}

// A column schedule that cuts [0, count) into ranges of 1, 1, 2, 3, ... coordinates and runs them
// last range first.
struct ReversedRanges {
  void operator()(std::size_t count, const std::function<void(std::size_t, std::size_t)>& body) const {
    std::vector<std::size_t> cuts{0};
    for (std::size_t c = 1; c < count; c += cuts.size()) cuts.push_back(c);
    cuts.push_back(count);
    for (std::size_t r = cuts.size() - 1; r > 0; --r) body(cuts[r - 1], cuts[r]);
  }
};

// A schedule may split the columns into any ranges and run them in any order: each range starts
// from zero directions and sets its own basis direction, so the columns equal hessian()'s.
TEST_P(SplitPrograms, HessianColumnsDoNotDependOnTheSchedule) {
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Transforms ad;
    auto dag = make_dag(seed, 7, 1, true, ad);
    const auto H = ad.hessian(dag.graph, dag.args);
    std::vector<int> visits(dag.args.size(), 0);
    ad.hessian_columns(dag.graph, dag.args, [&](std::size_t col, const Values& hv) {
      ++visits.at(col);
      for (std::size_t i = 0; i < hv.size(); ++i) EXPECT_TRUE(same(H(i, col), hv[i].z)) << "(" << i << ", " << col << ")";
    }, ReversedRanges{});
    for (std::size_t j = 0; j < visits.size(); ++j) {
      const bool differentiated = seed % 2 == 1 || every_other(dag.args.size(), seed)[j];
      EXPECT_EQ(visits[j], differentiated ? 1 : 0) << "column " << j;
    }
  }
}

// jacfwd's columns and jacrev's rows under ReversedRanges equal the sequential sweep's, bit for
// bit, with several outputs and only some arguments differentiated.
TEST_P(SplitPrograms, JacobiansDoNotDependOnTheSchedule) {
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Transforms ad;
    auto dag = make_dag(seed, 7, 5, false, ad);
    const auto jf = ad.jacfwd(dag.graph, dag.args), jr = ad.jacrev(dag.graph, dag.args);
    const auto jf_ranges = ad.jacfwd(dag.graph, dag.args, ReversedRanges{});
    const auto jr_ranges = ad.jacrev(dag.graph, dag.args, ReversedRanges{});
    ASSERT_EQ(jf_ranges.data.size(), jf.data.size());
    ASSERT_EQ(jr_ranges.data.size(), jr.data.size());
    for (std::size_t k = 0; k < jf.data.size(); ++k) EXPECT_TRUE(same(jf_ranges.data[k], jf.data[k])) << k;
    for (std::size_t k = 0; k < jr.data.size(); ++k) EXPECT_TRUE(same(jr_ranges.data[k], jr.data[k])) << k;
  }
}

// vjp_program_at_values: given the values of f's operations (as a tape holds them), the gradient
// program computes none of them again and gives vjp's outputs bit for bit.
TEST_P(SplitPrograms, VjpAtValuesEqualsVjpWithoutThePrimalPass) {
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Transforms ad;
    auto dag = make_dag(seed, 4, 3, false, ad);
    const auto& f = *dag.graph;
    // The tape: every computed value of f, by a program asked for them as outputs.
    const std::vector<Key> known = Transforms::computed_values(f);
    std::vector<Key> inputs;
    for (auto id : f.inputs()) inputs.push_back(f.key(id));
    const Values tape = computegraph::compile(computegraph::materialize_merge(computegraph::resolve({dag.graph}),
                                                                              std::span<const Key>(known),
                                                                              std::span<const Key>(inputs)))
                            .run(std::span<const Number>(dag.args));
    const auto [whole, whole_layout] = ad.vjp_program_with_layout(dag.graph);
    const auto [bound, layout] = ad.vjp_program_at_values(dag.graph);
    EXPECT_EQ(layout, whole_layout);
    const std::size_t seeds = whole->input_slots().size() - dag.args.size();
    ASSERT_EQ(bound->input_slots().size(), dag.args.size() + seeds + known.size());
    Values in = dag.args;
    for (std::size_t i = 0; i < seeds; ++i) {  // cotangents of the outputs' dtypes
      const double c = 0.5 + 0.25 * static_cast<double>(i);
      const bool real = whole->input_keys()[dag.args.size() + i].dtype == DType::Real;
      in.push_back(real ? Number(c) : Number(cd(c, -c)));
    }
    const Values expected = whole->run(std::span<const Number>(in));
    Values bound_in = in;
    bound_in.insert(bound_in.end(), tape.begin(), tape.end());
    const Values got = bound->run(std::span<const Number>(bound_in));
    ASSERT_EQ(got.size(), expected.size());
    for (std::size_t i = 0; i < got.size(); ++i) EXPECT_TRUE(same(got[i].z, expected[i].z)) << "output " << i;
    // Nothing of the primal pass is left: every operation of f (each one an instruction of the
    // whole program, whose outputs include f's) is gone.
    EXPECT_LE(bound->instructions().size() + f.operations().size(), whole->instructions().size());
  }
}

INSTANTIATE_TEST_SUITE_P(RealAndComplex, SplitPrograms, ::testing::Values(DType::Real, DType::Complex),
                         [](const auto& param_info) { return param_info.param == DType::Real ? "Real" : "Complex"; });

// The jvp program of exp(a x) is split: exp runs once, in the fixed part, and the part run per
// direction holds only the two multiplications that read the tangent. Their composition gives
// the unsplit program's results.
TEST(SplitProgram, PrimalWorkIsInTheFixedPart) {
  ScalarGraph g;
  auto x = g.input("x"), a = g.input("a");
  g.output(g.exp(g.mul(a, x)));
  auto f = g.finish();
  auto lin = linearize_keys({f}, f->output_keys(), {real_key("x")});
  Keys outputs = f->output_keys();
  outputs.push_back(*lin.tangent_output_keys()[0]);
  Keys inputs{f->key(f->inputs()[0]), f->key(f->inputs()[1]), lin.tangent_input_key(0)};
  computegraph::CompileCache<ScalarOp> cache;
  tidu::SplitProgram<ScalarOp> split(cache, computegraph::resolve({lin.graph}), outputs, inputs, 1);
  ASSERT_NE(split.fixed(), nullptr);
  EXPECT_EQ(split.fixed_input_count(), 2u);
  for (const auto& ins : split.varying().instructions()) EXPECT_EQ(ins.operation.name(), "mul");
  EXPECT_EQ(split.varying().instructions().size(), 2u);

  const Values fixed{0.3, 1.7};
  Values in = split.prepare(fixed);
  in.push_back(Number(2.0));
  auto out = split.run(std::span<const Number>(in));
  auto whole = computegraph::compile(computegraph::materialize_merge(
                                         computegraph::resolve({lin.graph}), std::span<const Key>(outputs),
                                         std::span<const Key>(inputs)))
                   .run({0.3, 1.7, 2.0});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0], whole[0]);
  EXPECT_EQ(out[1], whole[1]);
  EXPECT_NEAR(out[1].z.real(), 1.7 * std::exp(1.7 * 0.3) * 2.0, 1e-12);
}

}  // namespace
