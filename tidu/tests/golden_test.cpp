// The seven golden tests (docs/design.md, "The golden tests"). Each prints the IR of every
// transform (computegraph::to_string) and compares it with tidu/tests/golden/, checks the
// structural facts the design requires (accumulation by global key, Conj only in transposes, no
// physical merge), and checks the numbers against closed forms. The goldens were checked by hand
// against the worked examples of docs/design.md.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "golden.hpp"
#include "scalar_helpers.hpp"
#include "tidu/testing/ad_function.hpp"
#include "tidu/testing/check.hpp"

namespace {

using namespace tidutest;
using ::testing::HasSubstr;
using ::testing::Not;
using tidu::reference::Kind;
namespace cg = computegraph;
namespace kit = tidu::testkit;

std::string ir(const GraphPtr& g) { return cg::to_string(*g); }
std::string ir(const LinearizedGraph<ScalarOp>& g) { return cg::to_string(*g.graph); }
std::string ir(const cg::MaterializedGraph<ScalarOp>& m) { return cg::to_string(m); }

/// True if every operation of `g` is Linearized: a linear graph copies no primal operation.
bool all_linearized(const LinearizedGraph<ScalarOp>& g) {
  for (const auto& op : g.graph->operations()) {
    if (!op.role.is_linearized()) return false;
  }
  return true;
}

/// The four second-order modes FoF, FoR, RoF, RoR (docs/design.md, "Derivatives"): each is the
/// outer step applied to the result of the inner one.
struct SecondOrder {
  LinearizedGraph<ScalarOp> fof, for_, rof, ror;
};
SecondOrder second_order(const GraphPtr& f0, const LinearizedGraph<ScalarOp>& l1,
                         const LinearizedGraph<ScalarOp>& t1, const std::vector<ScalarKey>& wrt) {
  SecondOrder s;
  // FoF: linearize(resolve([F0, L1]), L1's tangent output, wrt). No physical merge before it.
  s.fof = linearize_keys({f0, l1.graph}, outputs_of(l1), wrt);
  // FoR: linearize the transposed graph's output (its parents chain back to L1 and F0).
  s.for_ = linearize_keys({t1.graph}, outputs_of(t1), wrt);
  // RoF: transpose of FoF's linear graph; RoR: transpose of the linearization of the reverse graph.
  s.rof = tidu::linear_transpose(s.fof);
  s.ror = tidu::linear_transpose(s.for_);
  return s;
}

/// Goldens for the four modes (graph and materialized program) and their values with unit seeds.
void expect_second_order(const std::string& prefix, const SecondOrder& s, const LinearizedGraph<ScalarOp>& l1,
                         const LinearizedGraph<ScalarOp>& t1, const std::map<std::string, Number>& primal,
                         cd expected) {
  const std::pair<const char*, const LinearizedGraph<ScalarOp>*> modes[] = {
      {"FoF", &s.fof}, {"FoR", &s.for_}, {"RoF", &s.rof}, {"RoR", &s.ror}};
  const std::string inputs[] = {ir(l1), ir(t1), ir(s.fof), ir(s.for_)};
  for (std::size_t i = 0; i < 4; ++i) {
    const auto& [mode, g] = modes[i];
    SCOPED_TRACE(mode);
    EXPECT_TRUE(matches_golden(prefix + "_" + mode + ".txt", ir(*g), inputs[i]));
    auto m = materialize({g->graph}, outputs_of(*g));
    EXPECT_TRUE(matches_golden(prefix + "_" + mode + "_materialized.txt", ir(m), ir(*g)));
    auto out = run_named({g->graph}, outputs_of(*g), primal);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(near(out[0], expected));
  }
}

// 1. x + x: linear_transpose accumulation buckets by global identity.
TEST(GoldenXPlusX, TransposeAccumulatesCotangentsByGlobalKey) {
  ScalarGraph g;
  auto x = g.input("x");
  g.output(g.add(x, x));
  auto f0 = g.finish();
  EXPECT_TRUE(matches_golden("x_plus_x_F0.txt", ir(f0)));

  auto l1 = linearize_keys({f0}, f0->output_keys(), {real_key("x")});
  EXPECT_TRUE(matches_golden("x_plus_x_L1.txt", ir(l1), ir(f0)));
  auto t1 = tidu::linear_transpose(l1);
  EXPECT_TRUE(matches_golden("x_plus_x_T1.txt", ir(t1), ir(l1)));
  // Both operands of add' are the same tangent: both cotangents land in its bucket, summed once.
  ASSERT_EQ(t1.graph->operations().size(), 1u);
  const auto& acc = t1.graph->operations()[0];
  EXPECT_EQ(acc.operation.kind, Kind::Add);
  EXPECT_TRUE(acc.inputs[0] == acc.inputs[1]);
  Keys vjp{f0->output_keys()[0], outputs_of(t1)[0]};
  EXPECT_TRUE(matches_golden("x_plus_x_vjp_materialized.txt", ir(materialize({t1.graph}, vjp)), ir(t1)));

  // y = 2x, dy = 2 dx, ct_x = 2 ct_y.
  auto out = run_named({t1.graph}, vjp, {{"x", 0.7}}, 0.3);
  EXPECT_TRUE(near(out[0], 1.4));
  EXPECT_TRUE(near(out[1], 0.6));
  EXPECT_TRUE(near(run_named({l1.graph}, outputs_of(l1), {{"x", 0.7}}, 0.3)[0], 0.6));
}

// 2. x * y: binary linearization with distinct reverse sinks.
TEST(GoldenXTimesY, BinaryLinearizationHasDistinctReverseSinks) {
  ScalarGraph g;
  auto x = g.input("x"), y = g.input("y");
  g.output(g.mul(x, y));
  auto f0 = g.finish();
  EXPECT_TRUE(matches_golden("x_times_y_F0.txt", ir(f0)));

  auto l1 = linearize_keys({f0}, f0->output_keys(), {real_key("x"), real_key("y")});
  EXPECT_TRUE(matches_golden("x_times_y_L1.txt", ir(l1), ir(f0)));
  auto t1 = tidu::linear_transpose(l1);
  EXPECT_TRUE(matches_golden("x_times_y_T1.txt", ir(t1), ir(l1)));
  ASSERT_EQ(t1.tangent_outputs.size(), 2u);
  ASSERT_TRUE(t1.tangent_outputs[0] && t1.tangent_outputs[1]);
  EXPECT_NE(*t1.tangent_outputs[0], *t1.tangent_outputs[1]);
  Keys vjp = outputs_of(t1);
  EXPECT_TRUE(matches_golden("x_times_y_vjp_materialized.txt", ir(materialize({t1.graph}, vjp)), ir(t1)));

  const std::map<std::string, Number> at{{"x", 0.7}, {"y", -1.3}, {"t1:x", 0.3}, {"t1:y", -0.5}};
  // dz = y dx + x dy; (ct_x, ct_y) = (y ct, x ct).
  EXPECT_TRUE(near(run_named({l1.graph}, outputs_of(l1), at)[0], -1.3 * 0.3 + 0.7 * -0.5));
  auto ct = run_named({t1.graph}, vjp, at, 1.5);
  EXPECT_TRUE(near(ct[0], -1.3 * 1.5));
  EXPECT_TRUE(near(ct[1], 0.7 * 1.5));
}

// 3. c * z (complex): Conj appears only in linear_transpose.
TEST(GoldenComplexScale, ConjAppearsOnlyInTheTranspose) {
  ScalarGraph g;
  auto c = g.input("c", DType::Complex), z = g.input("z", DType::Complex);
  g.output(g.mul(c, z));
  auto f0 = g.finish();
  EXPECT_TRUE(matches_golden("c_times_z_F0.txt", ir(f0)));

  auto l1 = linearize_keys({f0}, f0->output_keys(), {complex_key("z")});
  EXPECT_TRUE(matches_golden("c_times_z_L1.txt", ir(l1), ir(f0)));
  EXPECT_EQ(count_kind(*l1.graph, Kind::Conj), 0u);
  EXPECT_THAT(ir(l1), Not(HasSubstr("conj")));
  auto t1 = tidu::linear_transpose(l1);
  EXPECT_TRUE(matches_golden("c_times_z_T1.txt", ir(t1), ir(l1)));
  // The transpose of z -> c z is ct -> conj(c) ct; conj(c) is a fixed (Primary) value.
  ASSERT_EQ(count_kind(*t1.graph, Kind::Conj), 1u);
  for (const auto& op : t1.graph->operations()) {
    if (op.operation.kind == Kind::Conj) {
      EXPECT_TRUE(op.role.is_primary());
    }
  }
  Keys vjp = outputs_of(t1);
  EXPECT_TRUE(matches_golden("c_times_z_vjp_materialized.txt", ir(materialize({t1.graph}, vjp)), ir(t1)));

  const cd cv(0.5, 2.0), zv(1.0, -1.0), tz(0.3, 0.4), ctv(1.0, 2.0);
  const std::map<std::string, Number> at{{"c", cv}, {"z", zv}, {"t1:z", tz}, {"ct1:0", ctv}};
  auto jt = run_named({l1.graph}, outputs_of(l1), at)[0];
  auto jct = run_named({t1.graph}, vjp, at)[0];
  EXPECT_TRUE(near(jt, cv * tz));
  EXPECT_TRUE(near(jct, std::conj(cv) * ctv));
  // Adjoint for <a, b> = Re(conj(a) b).
  EXPECT_NEAR((std::conj(ctv) * jt.z).real(), (std::conj(jct.z) * tz).real(), 1e-14);
}

// 4. x^2: higher-order AD without eager physical merge; the four second-order modes give 2.
TEST(GoldenSquare, SecondOrderInAllFourModesWithoutPhysicalMerge) {
  ScalarGraph g;
  auto x = g.input("x");
  g.output(g.mul(x, x));
  auto f0 = g.finish();
  EXPECT_TRUE(matches_golden("x_squared_F0.txt", ir(f0)));
  const std::vector<ScalarKey> wrt{real_key("x")};

  auto l1 = linearize_keys({f0}, f0->output_keys(), wrt);
  EXPECT_TRUE(matches_golden("x_squared_L1.txt", ir(l1), ir(f0)));
  auto t1 = tidu::linear_transpose(l1);
  EXPECT_TRUE(matches_golden("x_squared_T1.txt", ir(t1), ir(l1)));
  Keys vjp{f0->output_keys()[0], outputs_of(t1)[0]};
  EXPECT_TRUE(matches_golden("x_squared_vjp_materialized.txt", ir(materialize({t1.graph}, vjp)), ir(t1)));
  // y = x^2, ct_x = 2 x ct.
  auto out = run_named({t1.graph}, vjp, {{"x", 0.7}}, 1.5);
  EXPECT_TRUE(near(out[0], 0.49));
  EXPECT_TRUE(near(out[1], 2 * 0.7 * 1.5));

  auto s = second_order(f0, l1, t1, wrt);
  // No physical merge: the linear graphs hold only their own linear operations and reach the
  // primal through their parents.
  for (const auto* lg : {&l1, &t1, &s.fof, &s.for_, &s.rof, &s.ror}) EXPECT_TRUE(all_linearized(*lg));
  EXPECT_EQ(f0->operations().size(), 1u);
  ASSERT_EQ(s.fof.graph->parents().size(), 2u);
  EXPECT_EQ(s.fof.graph->parents()[0], f0);
  EXPECT_EQ(s.fof.graph->parents()[1], l1.graph);
  expect_second_order("x_squared", s, l1, t1, {{"x", 0.7}}, 2.0);
}

struct ExpAx {
  GraphPtr f0;
  Key y;  // exp(mul(x, a))
};
ExpAx exp_ax() {
  ScalarGraph g;
  auto x = g.input("x"), a = g.input("a");
  auto y = g.exp(g.mul(x, a));
  g.output(y);
  Key key = g.builder().key(y);
  return {g.finish(), key};
}

// 5. exp(a*x): external refs, resolve-before-linearize, linear_transpose (every step of the scalar
// example, docs/design.md "Worked examples").
TEST(GoldenExpAx, ExternalRefsResolveBeforeLinearizeAndTranspose) {
  auto [f0, y] = exp_ax();
  EXPECT_TRUE(matches_golden("exp_ax_F0.txt", ir(f0)));
  const std::vector<ScalarKey> wrt{real_key("x")};
  const double x = 0.3, a = 1.7, e = std::exp(a * x);
  const std::map<std::string, Number> at{{"x", x}, {"a", a}};

  // Step 2: t1 = mul(External(a), t0), t2 = mul(External(exp(a*x)), t1), both [fixed, active].
  auto l1 = linearize_keys({f0}, {y}, wrt);
  EXPECT_TRUE(matches_golden("exp_ax_L1.txt", ir(l1), ir(f0)));
  ASSERT_EQ(l1.graph->operations().size(), 2u);
  const auto& ops = l1.graph->operations();
  EXPECT_TRUE(ops[0].inputs[0].is_external());
  EXPECT_EQ(ops[0].inputs[0].external_key(), Key::input(real_key("a")));
  EXPECT_TRUE(ops[1].inputs[0].is_external());
  EXPECT_EQ(ops[1].inputs[0].external_key(), y);  // exp's JVP reuses the primal output
  EXPECT_TRUE(all_linearized(l1));
  EXPECT_TRUE(near(run_named({l1.graph}, outputs_of(l1), at, 0.4)[0], a * e * 0.4));

  // Step 3: the output of L1 is only traceable through a view that holds L1.
  EXPECT_THROW(linearize_keys({f0}, outputs_of(l1), wrt), cg::GraphError);

  // Step 4: c1 = mul(External(exp(a*x)), ct_y), c2 = mul(External(a), c1).
  auto t1 = tidu::linear_transpose(l1);
  EXPECT_TRUE(matches_golden("exp_ax_T1.txt", ir(t1), ir(l1)));
  // Step 5: materialize only to compile: seven values.
  Keys vjp{y, outputs_of(t1)[0]};
  auto m = materialize({f0, t1.graph}, vjp);
  EXPECT_TRUE(matches_golden("exp_ax_vjp_materialized.txt", ir(m), ir(t1)));
  EXPECT_EQ(m.values().size(), 7u);
  auto program = cg::compile(m);
  EXPECT_TRUE(matches_golden("exp_ax_vjp_program.txt", cg::to_string(program), ir(m)));
  auto out = run_named({f0, t1.graph}, vjp, at, 0.4);
  EXPECT_TRUE(near(out[0], e));
  EXPECT_TRUE(near(out[1], a * e * 0.4));  // ct_x = a exp(a x) ct_y

  auto s = second_order(f0, l1, t1, wrt);
  expect_second_order("exp_ax", s, l1, t1, at, a * a * e);
}

// 6. Sum(exp(a*x)) over a 2-vector, written with scalars: the transpose of the final add fans the
// cotangent out to both terms (the scalar analogue of BroadcastInDim).
TEST(GoldenSumExpAx, ReductionTransposeFansOut) {
  ScalarGraph g;
  auto x0 = g.input("x0"), x1 = g.input("x1"), a0 = g.input("a0"), a1 = g.input("a1");
  auto term0 = g.exp(g.mul(x0, a0));  // sequenced: argument evaluation order is unspecified
  auto term1 = g.exp(g.mul(x1, a1));
  g.output(g.add(term0, term1));
  auto f0 = g.finish();
  EXPECT_TRUE(matches_golden("sum_exp_ax_F0.txt", ir(f0)));

  auto l1 = linearize_keys({f0}, f0->output_keys(), {real_key("x0"), real_key("x1")});
  EXPECT_TRUE(matches_golden("sum_exp_ax_L1.txt", ir(l1), ir(f0)));
  auto t1 = tidu::linear_transpose(l1);
  EXPECT_TRUE(matches_golden("sum_exp_ax_T1.txt", ir(t1), ir(l1)));
  EXPECT_EQ(count_kind(*t1.graph, Kind::Add), 0u);  // the seed itself reaches both terms
  Keys vjp = f0->output_keys();
  for (const auto& k : outputs_of(t1)) vjp.push_back(k);
  EXPECT_TRUE(matches_golden("sum_exp_ax_vjp_materialized.txt", ir(materialize({t1.graph}, vjp)), ir(t1)));

  const double xv0 = 0.4, xv1 = -0.6, av0 = 1.2, av1 = 0.8, t0 = 0.3, tv1 = -0.2, ct = 1.5;
  const double e0 = std::exp(av0 * xv0), e1 = std::exp(av1 * xv1);
  const std::map<std::string, Number> at{{"x0", xv0}, {"x1", xv1}, {"a0", av0}, {"a1", av1},
                                         {"t1:x0", t0},  {"t1:x1", tv1}, {"ct1:0", ct}};
  EXPECT_TRUE(near(run_named({l1.graph}, outputs_of(l1), at)[0], e0 * av0 * t0 + e1 * av1 * tv1));
  auto out = run_named({t1.graph}, vjp, at);
  EXPECT_TRUE(near(out[0], e0 + e1));
  EXPECT_TRUE(near(out[1], av0 * e0 * ct));
  EXPECT_TRUE(near(out[2], av1 * e1 * ct));
}

// 7. exp(a*x), third order: repeated higher-order closure over graphs.
TEST(GoldenExpAxThirdOrder, RepeatedClosureOverGraphs) {
  auto [f0, y] = exp_ax();
  const std::vector<ScalarKey> wrt{real_key("x")};
  const double x = 0.3, a = 1.7, e = std::exp(a * x);
  const std::map<std::string, Number> at{{"x", x}, {"a", a}};

  auto l1 = linearize_keys({f0}, {y}, wrt);
  auto l2 = linearize_keys({f0, l1.graph}, outputs_of(l1), wrt);
  auto l3 = linearize_keys({f0, l1.graph, l2.graph}, outputs_of(l2), wrt);
  EXPECT_TRUE(matches_golden("exp_ax_L2.txt", ir(l2), ir(l1)));
  EXPECT_TRUE(matches_golden("exp_ax_L3.txt", ir(l3), ir(l2)));
  auto m = materialize({l3.graph}, outputs_of(l3));
  EXPECT_TRUE(matches_golden("exp_ax_L3_materialized.txt", ir(m), ir(l3)));
  for (const auto* lg : {&l1, &l2, &l3}) EXPECT_TRUE(all_linearized(*lg));
  EXPECT_TRUE(near(run_named({l3.graph}, outputs_of(l3), at)[0], a * a * a * e));
  auto l3t = tidu::linear_transpose(l3);
  EXPECT_TRUE(matches_golden("exp_ax_L3_transposed.txt", ir(l3t), ir(l3)));
  EXPECT_TRUE(near(run_named({l3t.graph}, outputs_of(l3t), at)[0], a * a * a * e));

  // All eight compositions of forward and reverse steps, with unit seeds.
  kit::SeedFn<ScalarOp> unit = [](const Number& like) {
    return tidu::OperandSpace<Number>::basis_like(like, 0);
  };
  const std::vector<Number> args{x, a};
  std::vector<std::string> paths;
  for (int mask = 0; mask < 8; ++mask) {
    auto fn = kit::function_of(f0);
    fn.args = {real_key("x")};
    fn.seeds = {{real_key("a"), Number(a)}};
    std::span<const Number> xs(args.data(), 1);
    for (int step = 0; step < 3; ++step) {
      fn = ((mask >> step) & 1) ? kit::reverse_step(fn, xs, unit) : kit::forward_step(fn, xs, unit);
    }
    SCOPED_TRACE(fn.path);
    paths.push_back(fn.path);
    auto value = kit::evaluate(fn, xs);
    ASSERT_EQ(value.size(), 1u);
    EXPECT_TRUE(near(value[0], a * a * a * e));
  }
  EXPECT_THAT(paths, ::testing::UnorderedElementsAre("FoFoF", "FoFoR", "FoRoF", "FoRoR", "RoFoF",
                                                     "RoFoR", "RoRoF", "RoRoR"));
}

// partial_transpose: y = exp(x y') + sin(x y') cut at the tangent of x y' (c = y' dx + x dy'):
// the part before the cut stays forward (J_P = [y', x]), the part after it is transposed
// (J_R^T = exp(x y') + cos(x y')), and ybar (J t) = cbar c.
TEST(GoldenPartialTranspose, TransposesThePartAfterTheCut) {
  ScalarGraph g;
  auto x = g.input("x"), y = g.input("y");
  auto p = g.mul(x, y);
  g.output(g.add(g.exp(p), g.sin(p)));
  auto f0 = g.finish();
  auto l1 = linearize_keys({f0}, f0->output_keys(), {real_key("x"), real_key("y")});
  // The cut: the tangent of x y, the first linear add (y dx + x dy).
  std::optional<tidu::LocalValueId> c;
  for (const auto& op : l1.graph->operations()) {
    if (op.operation.kind == Kind::Add) {
      c = op.outputs[0];
      break;
    }
  }
  ASSERT_TRUE(c);
  const auto pt = tidu::partial_transpose(l1, {*c});
  EXPECT_TRUE(matches_golden("partial_exp_sin_xy_T.txt", ir(pt.transposed), ir(l1)));
  // The forward part is the linear graph itself, read at the cut.
  EXPECT_EQ(pt.forward.graph, l1.graph);
  ASSERT_EQ(pt.forward.tangent_outputs.size(), 1u);
  EXPECT_EQ(pt.forward.tangent_outputs[0], c);
  // No operation before the cut is transposed: the transpose reads exp and cos of x y only.
  EXPECT_EQ(count_kind(*pt.transposed.graph, Kind::Mul), 2u);

  const double xv = 0.7, yv = -1.3, tx = 0.3, ty = -0.5, ybar = 1.5;
  const std::map<std::string, Number> at{{"x", xv}, {"y", yv}, {"t1:x", tx}, {"t1:y", ty}};
  const cd cut_value = run_named({pt.forward.graph}, outputs_of(pt.forward), at)[0].z;
  EXPECT_TRUE(near(cut_value, yv * tx + xv * ty));
  const cd cbar = run_named({pt.transposed.graph}, outputs_of(pt.transposed), at, ybar)[0].z;
  EXPECT_TRUE(near(cbar, (std::exp(xv * yv) + std::cos(xv * yv)) * ybar));
  // The adjoint identity across the cut.
  const cd jt = run_named({l1.graph}, outputs_of(l1), at)[0].z;
  EXPECT_TRUE(near(ybar * jt, cbar * cut_value));

  // Cut at the tangent inputs: the whole graph is transposed, as linear_transpose does.
  std::vector<tidu::LocalValueId> inputs;
  for (const auto& [key, id] : l1.tangent_inputs) inputs.push_back(id);
  EXPECT_EQ(ir(tidu::partial_transpose(l1, inputs).transposed), ir(tidu::linear_transpose(l1)));

  // A cut that the sin branch goes around, and a value that is not linear.
  std::optional<tidu::LocalValueId> exp_branch;
  for (const auto& op : l1.graph->operations()) {
    if (op.operation.kind == Kind::Mul && op.outputs[0] > *c) {
      exp_branch = op.outputs[0];
      break;
    }
  }
  ASSERT_TRUE(exp_branch);
  EXPECT_THROW(tidu::partial_transpose(l1, {*exp_branch}), computegraph::GraphError);
  EXPECT_THROW(tidu::partial_transpose(l1, {static_cast<tidu::LocalValueId>(l1.graph->values().size())}), computegraph::GraphError);
}

// The golden functions also pass the kit's numerical checks at order 3 in every mode.
TEST(GoldenFunctions, PassCheckGradsAtOrderThree) {
  auto [f0, y] = exp_ax();
  std::vector<Number> args{0.3, 1.7};
  auto r = kit::check_grads(f0, std::span<const Number>(args), 3);
  EXPECT_TRUE(r.ok) << r.message;
  EXPECT_EQ(r.checks.size(), 14u);
}

}  // namespace
