// The reference scalar set's rules, op by op (docs/design.md, "Testing derivatives": one table
// drives check_grads): every op, real and complex, passes the finite-difference and adjoint
// checks at orders 1 to 3 in every mode; and the rules have the shapes docs/tidu.md documents.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>

#include "scalar_helpers.hpp"
#include "tidu/testing/check.hpp"

namespace {

using namespace tidutest;
using ::testing::HasSubstr;
using ::testing::Not;
using tidu::reference::Kind;
using Id = ScalarGraph::Id;
namespace kit = tidu::testkit;

struct OpCase {
  const char* name;
  DType dtype;  // of the inputs
  std::function<Id(ScalarGraph&, Id, Id)> body;
  std::vector<Number> args;  // x0, x1
};

std::string cg_ir(const GraphPtr& f) { return computegraph::to_string(*f); }

GraphPtr build(const OpCase& c) {
  ScalarGraph g;
  Id x0 = g.input("x0", c.dtype);
  Id x1 = g.input("x1", c.dtype);
  g.output(c.body(g, x0, x1));
  return g.finish();
}

std::vector<OpCase> op_cases() {
  const std::vector<Number> r{0.8, -1.3};
  const std::vector<Number> z{cd(0.6, 0.7), cd(-0.4, 1.1)};
  std::vector<OpCase> cases;
  for (DType d : {DType::Real, DType::Complex}) {
    const auto& a = d == DType::Real ? r : z;
    const Number two = d == DType::Real ? Number(2.5) : Number(cd(2.5, -1.0));
    cases.insert(cases.end(), {
        {"add", d, [](ScalarGraph& g, Id x, Id y) { return g.add(x, y); }, a},
        {"add_self", d, [](ScalarGraph& g, Id x, Id) { return g.add(x, x); }, a},
        {"mul", d, [](ScalarGraph& g, Id x, Id y) { return g.mul(x, y); }, a},
        {"mul_self", d, [](ScalarGraph& g, Id x, Id) { return g.mul(x, x); }, a},
        {"neg", d, [](ScalarGraph& g, Id x, Id) { return g.neg(x); }, a},
        {"div", d, [](ScalarGraph& g, Id x, Id y) { return g.div(x, y); }, a},
        {"div_self", d, [](ScalarGraph& g, Id x, Id) { return g.div(x, x); }, a},
        {"exp", d, [](ScalarGraph& g, Id x, Id) { return g.exp(x); }, a},
        {"log", d, [](ScalarGraph& g, Id x, Id) { return g.log(x); }, a},
        {"sin", d, [](ScalarGraph& g, Id x, Id) { return g.sin(x); }, a},
        {"cos", d, [](ScalarGraph& g, Id x, Id) { return g.cos(x); }, a},
        {"add_const", d, [two](ScalarGraph& g, Id x, Id) { return g.add(x, g.constant(two)); }, a},
        {"const_times", d, [two](ScalarGraph& g, Id x, Id) { return g.mul(g.constant(two), x); }, a},
        {"const_over", d, [two](ScalarGraph& g, Id, Id y) { return g.div(g.constant(two), y); }, a},
    });
  }
  cases.insert(cases.end(), {
      {"conj", DType::Complex, [](ScalarGraph& g, Id x, Id) { return g.conj(x); }, z},
      {"real", DType::Complex, [](ScalarGraph& g, Id x, Id) { return g.real(x); }, z},
      {"to_complex", DType::Real, [](ScalarGraph& g, Id x, Id) { return g.to_complex(x); }, r},
      {"abs2", DType::Complex, [](ScalarGraph& g, Id x, Id) { return g.real(g.mul(g.conj(x), x)); }, z},
      {"mixed", DType::Real,
       [](ScalarGraph& g, Id x, Id y) {
         Id zx = g.to_complex(x);
         Id w = g.mul(zx, g.exp(g.to_complex(y)));
         return g.real(g.mul(w, g.conj(g.sin(w))));
       },
       r},
  });
  return cases;
}

std::string case_name(const ::testing::TestParamInfo<OpCase>& info) {
  return std::string(info.param.name) + (info.param.dtype == DType::Real ? "Real" : "Complex");
}

class ScalarRules : public ::testing::TestWithParam<OpCase> {};

TEST_P(ScalarRules, PassCheckGradsAtOrderThreeInEveryMode) {
  const OpCase& c = GetParam();
  auto f = build(c);
  auto r = kit::check_grads(f, std::span<const Number>(c.args), 3);
  EXPECT_TRUE(r.ok) << cg_ir(f) << r.message;
  EXPECT_EQ(r.checks.size(), 14u);
}

INSTANTIATE_TEST_SUITE_P(Ops, ScalarRules, ::testing::ValuesIn(op_cases()), case_name);

// Repeated outputs and outputs that are arguments: their cotangent seeds meet in one bucket.
TEST(ScalarRules, RepeatedOutputsAndOutputsThatAreArguments) {
  for (DType d : {DType::Real, DType::Complex}) {
    ScalarGraph g;
    Id x = g.input("x", d), y = g.input("y", d);
    Id s = g.sin(g.mul(x, y));
    for (Id out : {s, x, s, y, x}) g.output(out);
    auto f = g.finish();
    const std::vector<Number> args = d == DType::Real ? std::vector<Number>{0.4, -0.9}
                                                      : std::vector<Number>{cd(0.4, 0.2), cd(-0.9, 0.3)};
    auto r = kit::check_grads(f, std::span<const Number>(args), 2);
    EXPECT_TRUE(r.ok) << r.message;
    EXPECT_EQ(r.checks.size(), 6u);
  }
}

// ---- the shapes of the rules (docs/tidu.md, "Worked example") ----

struct Transformed {
  GraphPtr f0;
  LinearizedGraph<ScalarOp> l1, t1;
  std::string linear, transposed;
};
Transformed transform(DType dtype, const std::function<Id(ScalarGraph&, Id, Id)>& body) {
  ScalarGraph g;
  Id x = g.input("x", dtype), y = g.input("y", dtype);
  g.output(body(g, x, y));
  Transformed t;
  t.f0 = g.finish();
  t.l1 = linearize_keys({t.f0}, t.f0->output_keys(), {{"x", dtype}});
  t.t1 = tidu::linear_transpose(t.l1);
  t.linear = computegraph::to_string(*t.l1.graph);
  t.transposed = computegraph::to_string(*t.t1.graph);
  return t;
}

TEST(ScalarRuleShapes, SinEmitsCosAsAFixedPrimaryValue) {
  auto t = transform(DType::Real, [](ScalarGraph& g, Id x, Id) { return g.sin(x); });
  EXPECT_THAT(t.linear, HasSubstr("%1 = cos($0)\n"));
  EXPECT_THAT(t.linear, HasSubstr("%2 = mul(%1, %0) linearized[fixed, active]"));
}

TEST(ScalarRuleShapes, LogDividesTheTangentByTheFixedOperand) {
  auto t = transform(DType::Real, [](ScalarGraph& g, Id x, Id) { return g.log(x); });
  EXPECT_THAT(t.linear, HasSubstr("div(%0, $0) linearized[active, fixed]"));
  EXPECT_THAT(t.transposed, HasSubstr("div(%0, $0) linearized[active, fixed]"));
}

TEST(ScalarRuleShapes, ComplexDivisionTransposeDividesByTheConjugate) {
  auto t = transform(DType::Complex, [](ScalarGraph& g, Id x, Id y) { return g.div(x, y); });
  EXPECT_THAT(t.linear, Not(HasSubstr("conj")));
  EXPECT_THAT(t.transposed, HasSubstr("%1 = conj($0)"));
  EXPECT_THAT(t.transposed, HasSubstr("div(%0, %1) linearized[active, fixed]"));
}

TEST(ScalarRuleShapes, RealAndToComplexTransposeIntoEachOther) {
  auto re = transform(DType::Complex, [](ScalarGraph& g, Id x, Id) { return g.real(x); });
  EXPECT_THAT(re.linear, HasSubstr("real(%0) linearized[active]"));
  EXPECT_THAT(re.transposed, HasSubstr("to_complex(%0) linearized[active]"));
  auto emb = transform(DType::Real, [](ScalarGraph& g, Id x, Id) { return g.to_complex(x); });
  EXPECT_THAT(emb.transposed, HasSubstr("real(%0) linearized[active]"));
}

TEST(ScalarRuleShapes, ConjIsItsOwnTransposeAndAppearsInALinearGraphOnlyIfThePrimalHasIt) {
  auto t = transform(DType::Complex, [](ScalarGraph& g, Id x, Id) { return g.conj(x); });
  EXPECT_THAT(t.linear, HasSubstr("conj(%0) linearized[active]"));
  EXPECT_THAT(t.transposed, HasSubstr("conj(%0) linearized[active]"));
}

// d(x + c) = dx emits nothing: the linear graph is the identity on its tangent input, and so is
// its transpose. A constant has no tangent and no operation in either graph.
TEST(ScalarRuleShapes, AddingAConstantGivesTheIdentityLinearMap) {
  auto t = transform(DType::Real, [](ScalarGraph& g, Id x, Id) { return g.add(x, g.constant(2.0)); });
  EXPECT_TRUE(t.l1.graph->operations().empty());
  EXPECT_TRUE(t.t1.graph->operations().empty());
  ASSERT_TRUE(t.l1.tangent_outputs[0] && t.t1.tangent_outputs[0]);
  EXPECT_EQ(*t.l1.tangent_outputs[0], t.l1.tangent_inputs[0].second);
  EXPECT_EQ(*t.t1.tangent_outputs[0], t.t1.tangent_inputs[0].second);
  EXPECT_TRUE(near(run_named({t.t1.graph}, outputs_of(t.t1), {{"x", 0.5}, {"y", 0.0}}, 0.7)[0], 0.7));
}

// Only inputs in `wrt` are active: mul(x, y) linearized in x alone scales dx by y and sends no
// cotangent to y.
TEST(ScalarRuleShapes, InactiveInputsEmitNothing) {
  auto t = transform(DType::Real, [](ScalarGraph& g, Id x, Id y) { return g.mul(x, g.exp(y)); });
  EXPECT_EQ(t.l1.graph->operations().size(), 1u);
  EXPECT_THAT(t.linear, HasSubstr("$0 = external exp(y)"));
  EXPECT_EQ(t.t1.tangent_outputs.size(), 1u);
}

}  // namespace
