#include <gtest/gtest.h>

#include <cmath>
#include <iostream>

#include "computegraph/computegraph.hpp"
#include "tidu/reference/scalar_graph.hpp"
#include "tidu/tidu.hpp"

using namespace tidu;
using namespace tidu::reference;
namespace cg = computegraph;

TEST(Smoke, ExpAx) {
  ScalarGraph g;
  auto x = g.input("x"), a = g.input("a");
  g.output(g.exp(g.mul(x, a)));
  auto f0 = g.finish();
  auto outs = f0->output_keys();
  std::vector<ScalarKey> wrt{{"x", DType::Real}};
  auto l1 = linearize(cg::resolve({f0}), std::span<const ValueKey<ScalarOp>>(outs),
                      std::span<const ScalarKey>(wrt));
  std::cout << cg::to_string(*l1.graph);
  auto t1 = linear_transpose(l1);
  std::cout << cg::to_string(*t1.graph);
  std::vector<ValueKey<ScalarOp>> want{outs[0], t1.graph->key(*t1.tangent_outputs[0])};
  auto m = cg::materialize_merge(cg::resolve({t1.graph}), std::span<const ValueKey<ScalarOp>>(want));
  std::cout << cg::to_string(m);
  auto p = cg::compile(m);
  std::vector<std::pair<ScalarKey, Number>> bind{{{"x", DType::Real}, 0.5}, {{"a", DType::Real}, 2.0}, {t1.tangent_inputs[0].first, 1.0}};
  auto r = p.run_by_key(std::span<const std::pair<ScalarKey, Number>>(bind));
  EXPECT_NEAR(r[0].z.real(), std::exp(1.0), 1e-12);
  EXPECT_NEAR(r[1].z.real(), 2 * std::exp(1.0), 1e-12);
  // second order
  auto l1o = l1.tangent_output_keys();
  std::vector<ValueKey<ScalarOp>> o2{*l1o[0]};
  auto l2 = linearize(cg::resolve({f0, l1.graph}), std::span<const ValueKey<ScalarOp>>(o2), std::span<const ScalarKey>(wrt));
  std::cout << cg::to_string(*l2.graph);
}

TEST(Smoke, Transforms) {
  ScalarGraph g;
  auto x = g.input("x"), a = g.input("a");
  g.output(g.exp(g.mul(x, a)));
  auto f = g.finish();
  Transforms<ScalarOp> T;
  std::vector<Number> xs{0.5, 2.0};
  auto gr = T.grad(f, xs);
  EXPECT_NEAR(gr[0].z.real(), 2 * std::exp(1.0), 1e-12);
  EXPECT_NEAR(gr[1].z.real(), 0.5 * std::exp(1.0), 1e-12);
  auto H = T.hessian(f, xs);
  EXPECT_NEAR(H(0, 0).real(), 4 * std::exp(1.0), 1e-12);
  EXPECT_NEAR(H(0, 1).real(), std::exp(1.0) * (1 + 1.0), 1e-12);
  auto J = T.jacrev(f, xs);
  EXPECT_NEAR(J(0, 1).real(), 0.5 * std::exp(1.0), 1e-12);
  auto J2 = T.jacfwd(f, xs);
  EXPECT_NEAR(J2(0, 1).real(), 0.5 * std::exp(1.0), 1e-12);
  T.grad(f, xs);
  std::cout << T.cache_stats().hits << " hits " << T.cache_stats().misses << " misses\n";
}
