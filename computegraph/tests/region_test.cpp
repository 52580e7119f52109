// Regions: operations that carry subgraphs (region.hpp). A small op set whose `call` op runs a
// body graph exercises what the engine owes such operations without knowing what they do:
// structural identity (equal bodies built twice give one key, and CSE merges equal calls), nested
// printing, verification to any depth, resolve / materialize_merge / compile with the op opaque,
// and the compile cache across equal bodies.
#include <gmock/gmock.h>

#include <cmath>
#include <memory>

#include "computegraph/computegraph.hpp"
#include "computegraph/region.hpp"

namespace {

namespace cg = computegraph;

/// add, mul, sin, and call[body](operands...) = body(operands...).
struct CallOp {
  using Operand = double;
  struct Context {};
  using InputKey = std::string;
  enum class Kind : std::uint8_t { Add, Mul, Sin, Call };

  Kind kind = Kind::Add;
  std::shared_ptr<const cg::Region<CallOp>> body;  // Call only

  static CallOp add() { return {Kind::Add, nullptr}; }
  static CallOp mul() { return {Kind::Mul, nullptr}; }
  static CallOp sin() { return {Kind::Sin, nullptr}; }
  static CallOp call(cg::GraphPtr<CallOp> graph) {
    return {Kind::Call, std::make_shared<const cg::Region<CallOp>>(std::move(graph), "call")};
  }

  std::size_t input_count() const {
    switch (kind) {
      case Kind::Add:
      case Kind::Mul: return 2;
      case Kind::Sin: return 1;
      case Kind::Call: return body->input_count();
    }
    return 0;
  }
  std::size_t output_count() const { return kind == Kind::Call ? body->output_count() : 1; }
  bool operator==(const CallOp& o) const {
    return kind == o.kind && (kind != Kind::Call || *body == *o.body);
  }
  std::size_t hash() const { return static_cast<std::size_t>(kind) * 31 + (body ? body->hash() : 0); }
  std::string name() const {
    switch (kind) {
      case Kind::Add: return "add";
      case Kind::Mul: return "mul";
      case Kind::Sin: return "sin";
      case Kind::Call: return "call";
    }
    return "?";
  }
  std::vector<cg::GraphPtr<CallOp>> regions() const {
    if (kind != Kind::Call) return {};
    return {body->graph()};
  }
  void eval(Context&, std::span<const double* const> in, std::span<double> out) const {
    switch (kind) {
      case Kind::Add: out[0] = *in[0] + *in[1]; return;
      case Kind::Mul: out[0] = *in[0] * *in[1]; return;
      case Kind::Sin: out[0] = std::sin(*in[0]); return;
      case Kind::Call: {
        const auto& g = body->graph();
        std::vector<cg::ValueKey<CallOp>> leading(body->input_keys());
        const auto outputs = g->output_keys();
        const auto program = cg::compile(cg::materialize_merge(cg::resolve({g}), std::span<const cg::ValueKey<CallOp>>(outputs),
                                                               std::span<const cg::ValueKey<CallOp>>(leading)));
        std::vector<double> args;
        for (const double* x : in) args.push_back(*x);
        const auto results = program.run(std::span<const double>(args));
        for (std::size_t k = 0; k < out.size(); ++k) out[k] = results[k];
        return;
      }
    }
  }
};
static_assert(cg::RegionOperation<CallOp>);

using Builder = cg::GraphBuilder<CallOp>;
using Ref = cg::ValueRef<CallOp>;
Ref L(cg::LocalValueId id) { return Ref::local(id); }

/// (a, b) -> sin(a * b) + a, built afresh on every call.
cg::GraphPtr<CallOp> body_graph() {
  Builder b;
  auto a = b.add_input("a");
  auto x = b.add_input("b");
  auto prod = b.add(CallOp::mul(), {L(a), L(x)});
  b.add_output(b.add(CallOp::add(), {L(b.add(CallOp::sin(), {L(prod)})), L(a)}));
  return b.finish();
}

/// (x, y) -> call[body](x, y) * call[body](y, x), the bodies built separately.
cg::GraphPtr<CallOp> caller() {
  Builder b;
  auto x = b.add_input("x");
  auto y = b.add_input("y");
  auto c1 = b.add(CallOp::call(body_graph()), {L(x), L(y)});
  auto c2 = b.add(CallOp::call(body_graph()), {L(y), L(x)});
  b.add_output(b.add(CallOp::mul(), {L(c1), L(c2)}));
  return b.finish();
}

double body_value(double a, double b) { return std::sin(a * b) + a; }

}  // namespace

TEST(Region, EqualBodiesGiveOneKeyAndCseMergesEqualCalls) {
  const cg::Region<CallOp> r1(body_graph(), "test"), r2(body_graph(), "test");
  EXPECT_NE(r1.graph(), r2.graph());
  EXPECT_EQ(r1, r2);
  EXPECT_EQ(r1.hash(), r2.hash());
  // A different body: another output key.
  Builder b;
  auto a = b.add_input("a");
  auto x = b.add_input("b");
  b.add_output(b.add(CallOp::mul(), {L(a), L(x)}));
  const cg::Region<CallOp> r3(b.finish(), "test");
  EXPECT_FALSE(r1 == r3);

  // Two calls with equal bodies on equal operands are one operation.
  Builder g;
  auto u = g.add_input("u");
  auto v = g.add_input("v");
  auto c1 = g.add(CallOp::call(body_graph()), {L(u), L(v)});
  auto c2 = g.add(CallOp::call(body_graph()), {L(u), L(v)});
  EXPECT_EQ(c1, c2);
  EXPECT_EQ(g.graph().operations().size(), 1u);
}

TEST(Region, ClosedGraphsOnly) {
  const auto parent = body_graph();
  Builder b({parent});
  auto a = b.add_input("z");
  b.add_output(b.add(CallOp::add(), {L(a), Ref::external(parent->key(parent->outputs()[0]))}));
  const auto open = b.finish();
  EXPECT_THROW(cg::Region<CallOp>(open, "call"), cg::GraphError);
  EXPECT_THROW(cg::Region<CallOp>(nullptr, "call"), cg::GraphError);
}

TEST(Region, PrintsNestedRegionsAtEveryStage) {
  // Depth two: the outer body calls the inner one.
  Builder outer;
  auto p = outer.add_input("p");
  auto q = outer.add_input("q");
  outer.add_output(outer.add(CallOp::sin(), {L(outer.add(CallOp::call(body_graph()), {L(q), L(p)}))}));
  Builder top;
  auto x = top.add_input("x");
  top.add_output(top.add(CallOp::call(outer.finish()), {L(x), L(x)}));
  const auto graph = top.finish();
  cg::verify(*graph);
  EXPECT_EQ(cg::to_string(*graph),
            "graph {\n"
            "  %0 = input x\n"
            "  %1 = call(%0, %0)\n"
            "    region 0 {\n"
            "      %0 = input p\n"
            "      %1 = input q\n"
            "      %2 = call(%1, %0)\n"
            "        region 0 {\n"
            "          %0 = input a\n"
            "          %1 = input b\n"
            "          %2 = mul(%0, %1)\n"
            "          %3 = sin(%2)\n"
            "          %4 = add(%3, %0)\n"
            "          return %4\n"
            "        }\n"
            "      %3 = sin(%2)\n"
            "      return %3\n"
            "    }\n"
            "  return %1\n"
            "}\n");
  const auto outputs = graph->output_keys();
  const auto materialized = cg::materialize_merge(cg::resolve({graph}), std::span<const cg::ValueKey<CallOp>>(outputs));
  cg::verify(materialized);
  EXPECT_THAT(cg::to_string(materialized), ::testing::HasSubstr("        region 0 {\n          %0 = input a\n"));
  const auto program = cg::compile(materialized);
  cg::verify(program);
  EXPECT_THAT(cg::to_string(program), ::testing::HasSubstr("    region 0 {\n      %0 = input p\n"));
  EXPECT_NEAR(program.run({0.7})[0], std::sin(body_value(0.7, 0.7)), 1e-15);
}

TEST(Region, PipelineTreatsTheOperationAsOpaqueAndTheCacheSharesEqualBodies) {
  cg::CompileCache<CallOp> cache(8);
  const auto g1 = caller(), g2 = caller();
  const auto out1 = g1->output_keys(), out2 = g2->output_keys();
  EXPECT_EQ(out1, out2);  // two graphs, built separately, one structure
  const auto p1 = cache.get_or_compile(cg::resolve({g1}), std::span<const cg::ValueKey<CallOp>>(out1));
  const auto p2 = cache.get_or_compile(cg::resolve({g2}), std::span<const cg::ValueKey<CallOp>>(out2));
  EXPECT_EQ(p1, p2);
  EXPECT_EQ(cache.stats().hits, 1u);
  const double x = 0.3, y = -1.2;
  EXPECT_NEAR(p1->run({x, y})[0], body_value(x, y) * body_value(y, x), 1e-15);

  // A graph that references the call's result from another graph resolves through it.
  Builder b({g1});
  auto z = b.add_input("z");
  b.add_output(b.add(CallOp::add(), {L(z), Ref::external(out1[0])}));
  const auto g3 = b.finish();
  cg::verify(*g3);
  const auto out3 = g3->output_keys();
  const std::vector<cg::ValueKey<CallOp>> leading = {cg::ValueKey<CallOp>::input("x"), cg::ValueKey<CallOp>::input("y"),
                                                     cg::ValueKey<CallOp>::input("z")};
  const auto p3 = cg::compile(cg::materialize_merge(cg::resolve({g3}), std::span<const cg::ValueKey<CallOp>>(out3),
                                                    std::span<const cg::ValueKey<CallOp>>(leading)));
  EXPECT_NEAR(p3.run({x, y, 2.0})[0], 2.0 + body_value(x, y) * body_value(y, x), 1e-15);
}
