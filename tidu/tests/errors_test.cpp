// Invalid inputs and broken rules: tidu reports them as errors derived from computegraph::Error,
// naming the op and the rule kind, and never crashes. ADRuleError for missing or contract-breaking
// rules (also as values from try_linearize / try_linear_transpose / try_*_rule), GraphError for
// bad `wrt` keys and untraceable outputs, BindingError for wrong argument counts.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "scalar_helpers.hpp"
#include "tiny_ops.hpp"

namespace {

using namespace tidutest;
using ::testing::HasSubstr;
using tidu::ADRuleError;
using tidu::RuleKind;
using tidu::reference::Kind;
using PV = tidu::PrimitiveValue<ScalarOp>;
using Values = std::vector<Number>;

/// The message of the exception `fn` throws as E (fails the test if it throws nothing or else).
template <class E, class Fn>
std::string message_of(Fn&& fn) {
  try {
    fn();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "threw another exception: " << e.what();
    return {};
  }
  ADD_FAILURE() << "threw nothing";
  return {};
}

/// A hand-built "linear" graph t -> op(t) with the given role (rules would never emit it).
LinearizedGraph<ScalarOp> hand_built(Kind kind, int arity, std::vector<bool> mask) {
  computegraph::GraphBuilder<ScalarOp> b;
  ScalarKey tk{"t", DType::Real};
  auto t = b.add_input(tk);
  std::vector<PV> in(static_cast<std::size_t>(arity), PV::local(t));
  auto out = b.add(ScalarOp::make(kind), std::move(in), tidu::linear_role(std::move(mask)));
  b.add_output(out);
  LinearizedGraph<ScalarOp> lin;
  lin.graph = b.finish();
  lin.tangent_inputs = {{tk, t}};
  lin.tangent_outputs = {out};
  return lin;
}

TEST(ADRuleErrors, TransposingANonLinearOpNamesTheOpAndTheRuleKind) {
  auto lin = hand_built(Kind::Exp, 1, {true});
  auto msg = message_of<ADRuleError>([&] { tidu::linear_transpose(lin); });
  EXPECT_THAT(msg, HasSubstr("transpose_rule of exp"));
  EXPECT_THAT(msg, HasSubstr("not linear"));

  ScalarOp::ADContext ctx;
  auto result = tidu::try_linear_transpose(lin, ctx);
  ASSERT_FALSE(result.ok());
  EXPECT_FALSE(static_cast<bool>(result));
  EXPECT_EQ(result.error().op_name(), "exp");
  EXPECT_EQ(result.error().kind(), RuleKind::Transpose);
  EXPECT_THROW(result.value(), ADRuleError);
  // ADRuleError is a computegraph::Error like every library error.
  EXPECT_THROW(tidu::linear_transpose(lin), computegraph::Error);
}

TEST(ADRuleErrors, LinearOpsWithTheWrongActiveOperandsAreRejected) {
  auto both = hand_built(Kind::Mul, 2, {true, true});
  EXPECT_THAT(message_of<ADRuleError>([&] { tidu::linear_transpose(both); }),
              HasSubstr("transpose_rule of mul: mul is linear only when exactly one operand is active "
                        "(linearized[active, active])"));
  auto denominator = hand_built(Kind::Div, 2, {false, true});
  EXPECT_THAT(message_of<ADRuleError>([&] { tidu::linear_transpose(denominator); }),
              HasSubstr("transpose_rule of div: div is linear only in its numerator"));
}

TEST(ADRuleErrors, TryRuleFunctionsReturnTheError) {
  computegraph::GraphBuilder<ScalarOp> graph;
  tidu::PrimitiveBuilder<ScalarOp> builder(graph);
  auto ct = graph.add_input({"ct", DType::Real});
  ScalarOp::ADContext ctx;
  const std::optional<tidu::LocalValueId> cts[] = {ct};
  const PV inputs[] = {PV::external(computegraph::ValueKey<ScalarOp>::input({"x", DType::Real}))};
  auto r = tidu::try_transpose_rule(ScalarOp::make(Kind::Sin), builder,
                                    std::span<const std::optional<tidu::LocalValueId>>(cts),
                                    std::span<const PV>(inputs),
                                    tidu::linear_role({true}), ctx);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().op_name(), "sin");
  EXPECT_THAT(r.error().what(), HasSubstr("transpose_rule of sin"));
  // A rule that applies returns its tangents.
  auto ok = tidu::try_transpose_rule(ScalarOp::make(Kind::Neg), builder,
                                     std::span<const std::optional<tidu::LocalValueId>>(cts),
                                     std::span<const PV>(inputs),
                                     tidu::linear_role({true}), ctx);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok.value().size(), 1u);
}

// ---- a custom op set with missing and contract-breaking rules ----

computegraph::GraphPtr<TinyOp> tiny(TinyKind kind, int arity = 1) {
  TinyGraph g;
  std::vector<TinyGraph::Id> in;
  for (int i = 0; i < arity; ++i) in.push_back(g.input("x" + std::to_string(i)));
  g.output(g.op(kind, in));
  return g.finish();
}

LinearizedGraph<TinyOp> linearize_tiny(const computegraph::GraphPtr<TinyOp>& f, std::vector<ScalarKey> wrt) {
  auto outs = f->output_keys();
  return tidu::linearize(computegraph::resolve({f}), std::span<const computegraph::ValueKey<TinyOp>>(outs),
                         std::span<const ScalarKey>(wrt));
}

TEST(ADRuleErrors, MissingJvpRuleIsReportedByTryLinearize) {
  auto f = tiny(TinyKind::Cube);
  auto outs = f->output_keys();
  std::vector<ScalarKey> wrt{real_key("x0")};
  TinyOp::ADContext ctx;
  auto r = tidu::try_linearize(computegraph::resolve({f}),
                               std::span<const computegraph::ValueKey<TinyOp>>(outs),
                               std::span<const ScalarKey>(wrt), ctx);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().op_name(), "tiny.cube");
  EXPECT_EQ(r.error().kind(), RuleKind::Jvp);
  EXPECT_STREQ(r.error().what(), "jvp_rule of tiny.cube: no rule is defined for this primitive");
  EXPECT_THROW(linearize_tiny(f, wrt), ADRuleError);
}

TEST(ADRuleErrors, MissingTransposeRuleIsReportedByTryLinearTranspose) {
  auto lin = linearize_tiny(tiny(TinyKind::NoTranspose), {real_key("x0")});
  TinyOp::ADContext ctx;
  auto r = tidu::try_linear_transpose(lin, ctx);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().op_name(), "tiny.no_transpose");
  EXPECT_EQ(r.error().kind(), RuleKind::Transpose);
  EXPECT_THAT(r.error().what(), HasSubstr("transpose_rule of tiny.no_transpose: no rule is defined"));
}

TEST(ADRuleErrors, RuleReturningTheWrongNumberOfTangents) {
  auto msg = message_of<ADRuleError>([] { linearize_tiny(tiny(TinyKind::TwoTangents), {real_key("x0")}); });
  EXPECT_EQ(msg, "jvp_rule of tiny.two_tangents: returned 2 tangents for 1 outputs");
}

TEST(ADRuleErrors, TransposeRuleReturningACotangentForAFixedInput) {
  auto lin = linearize_tiny(tiny(TinyKind::LeakyScale, 2), {real_key("x1")});
  auto msg = message_of<ADRuleError>([&] { tidu::linear_transpose(lin); });
  EXPECT_EQ(msg, "transpose_rule of tiny.leaky_scale: returned a cotangent for fixed input 0 "
                 "(linearized[fixed, active])");
}

TEST(ADRuleErrors, TransformsPropagateRuleErrorsAndStayUsable) {
  tidu::Transforms<TinyOp> ad;
  auto cube = tiny(TinyKind::Cube);
  const std::vector<double> x{0.5};
  EXPECT_THAT(message_of<ADRuleError>([&] { ad.grad(cube, x); }), HasSubstr("jvp_rule of tiny.cube"));
  EXPECT_THROW(ad.grad(cube, x), ADRuleError);  // again, not a half-built state
  auto sin = tiny(TinyKind::Sin);
  EXPECT_NEAR(ad.grad(sin, x)[0], std::cos(0.5), 1e-15);
}

// ---- bad wrt keys and untraceable outputs: GraphError ----

GraphPtr exp_ax() {
  ScalarGraph g;
  auto x = g.input("x"), a = g.input("a");
  g.output(g.exp(g.mul(x, a)));
  return g.finish();
}

TEST(GraphErrors, WrtKeyThatIsNotAnInputOfTheView) {
  auto f = exp_ax();
  auto msg = message_of<computegraph::GraphError>(
      [&] { linearize_keys({f}, f->output_keys(), {real_key("nope")}); });
  EXPECT_EQ(msg, "linearize: wrt key nope is not an input of any graph of the view");
  // Same name, other dtype: a different key.
  EXPECT_THROW(linearize_keys({f}, f->output_keys(), {complex_key("x")}), computegraph::GraphError);
}

TEST(GraphErrors, DuplicateWrtKey) {
  auto f = exp_ax();
  auto msg = message_of<computegraph::GraphError>(
      [&] { linearize_keys({f}, f->output_keys(), {real_key("x"), real_key("a"), real_key("x")}); });
  EXPECT_EQ(msg, "linearize: wrt key x is listed twice");
}

TEST(GraphErrors, OutputNotDefinedByTheView) {
  auto f = exp_ax();
  auto l1 = linearize_keys({f}, f->output_keys(), {real_key("x")});
  // L1's output lives in L1, which resolve([F0]) does not contain.
  auto msg = message_of<computegraph::GraphError>(
      [&] { linearize_keys({f}, outputs_of(l1), {real_key("x")}); });
  EXPECT_THAT(msg, HasSubstr("linearize: output mul'(exp(mul(x, a)), mul'(a, t1:x)) is not defined"));
}

// ---- wrong arity at run time: BindingError ----

TEST(BindingErrors, WrongArgumentCountsInTransforms) {
  tidu::Transforms<ScalarOp> ad;
  auto f = exp_ax();
  const Values two{0.5, 2.0}, one{0.5};
  EXPECT_THAT(message_of<computegraph::BindingError>([&] { ad.eval(f, one); }),
              HasSubstr("expected 2 inputs (x, a), got 1"));
  EXPECT_EQ(message_of<computegraph::BindingError>([&] { ad.jvp(f, two, one); }),
            "jvp: the function has 2 inputs; got 2 primals and 1 tangents");
  EXPECT_EQ(message_of<computegraph::BindingError>([&] { ad.jvp(f, one, two); }),
            "jvp: the function has 2 inputs; got 1 primals and 2 tangents");
  EXPECT_EQ(message_of<computegraph::BindingError>([&] { ad.vjp(f, two, two); }),
            "vjp: expected 1 cotangents (one per output), got 2");
  EXPECT_THAT(message_of<computegraph::BindingError>([&] { ad.vjp(f, one, one); }),
              HasSubstr("vjp: the function has 2 inputs; got 1 primals"));
  EXPECT_THAT(message_of<computegraph::BindingError>([&] { ad.grad(f, one); }), HasSubstr("2 inputs"));
  EXPECT_THAT(message_of<computegraph::BindingError>([&] { ad.hvp(f, two, one); }),
              HasSubstr("hvp: the function has 2 inputs; got 2 primals and 1 directions"));
  EXPECT_THAT(message_of<computegraph::BindingError>([&] { ad.hessian(f, one); }), HasSubstr("2 inputs"));
  EXPECT_THAT(message_of<computegraph::BindingError>([&] { ad.jacfwd(f, one); }), HasSubstr("2 inputs"));
  EXPECT_THAT(message_of<computegraph::BindingError>([&] { ad.jacrev(f, one); }), HasSubstr("2 inputs"));
  // The object is still usable after the errors.
  EXPECT_NEAR(ad.grad(f, two)[0].z.real(), 2 * std::exp(1.0), 1e-12);
}

TEST(BindingErrors, GradOfAFunctionWithSeveralOutputs) {
  ScalarGraph g;
  auto x = g.input("x");
  g.output(g.sin(x));
  g.output(g.cos(x));
  auto f = g.finish();
  tidu::Transforms<ScalarOp> ad;
  const Values one{0.5};
  EXPECT_EQ(message_of<computegraph::BindingError>([&] { ad.grad(f, one); }),
            "grad/hvp: the function must have exactly one output, it has 2");
  EXPECT_THROW(ad.hvp(f, one, one), computegraph::BindingError);
  EXPECT_THROW(ad.hessian(f, one), computegraph::BindingError);
}

// Operands of the wrong dtype are an evaluation error, not undefined behaviour.
TEST(BindingErrors, OperandOfTheWrongDtype) {
  tidu::Transforms<ScalarOp> ad;
  auto f = exp_ax();
  const Values mixed{Number(cd(0.5, 1)), 2.0};
  EXPECT_THAT(message_of<computegraph::Error>([&] { ad.eval(f, mixed); }),
              HasSubstr("eval mul: operands are complex and real"));
}

}  // namespace
