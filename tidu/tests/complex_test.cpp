// The complex convention (docs/design.md, "Complex numbers"): a transpose is the adjoint for
// <a, b> = Re(sum conj(a) b), so Conj appears only in transposes, and the gradient of a real loss
// L of z = x + iy is dL/dx + i dL/dy, checked here against finite differences in x and y
// separately.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "scalar_helpers.hpp"
#include "tidu/testing/random_scalar_dag.hpp"

namespace {

using namespace tidutest;
using ::testing::HasSubstr;
using ::testing::Not;
using tidu::reference::Kind;
namespace kit = tidu::testkit;
using Values = std::vector<Number>;

bool has_conj(const std::vector<GraphPtr>& roots) {
  const auto view = computegraph::resolve(roots);
  for (const auto& g : view.graphs()) {
    if (count_kind(*g, Kind::Conj) > 0) return true;
  }
  return false;
}

std::vector<ScalarKey> inputs_of(const GraphPtr& f) {
  std::vector<ScalarKey> keys;
  for (auto id : f->inputs()) keys.push_back(f->key(id).input_key());
  return keys;
}

// Random complex DAGs without conj: no linear graph made by linearize contains conj, at first or
// second order, unless a graph it was linearized from does; the transposes do contain it.
TEST(ComplexConvention, ConjAppearsOnlyInTransposes) {
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    kit::RandomDagOptions opts;
    opts.ops = 60;
    opts.seed = seed;
    opts.dtype = DType::Complex;
    opts.conj = false;
    auto f0 = kit::random_scalar_dag(opts).graph;
    SCOPED_TRACE(computegraph::to_string(*f0));
    const auto wrt = inputs_of(f0);
    ASSERT_FALSE(has_conj({f0}));

    auto l1 = linearize_keys({f0}, f0->output_keys(), wrt);
    EXPECT_EQ(count_kind(*l1.graph, Kind::Conj), 0u);
    EXPECT_THAT(computegraph::to_string(*l1.graph), Not(HasSubstr("conj")));
    auto fof = linearize_keys({l1.graph}, outputs_of(l1), wrt);
    EXPECT_EQ(count_kind(*fof.graph, Kind::Conj), 0u);

    auto t1 = tidu::linear_transpose(l1);
    EXPECT_GT(count_kind(*t1.graph, Kind::Conj), 0u);  // complex fixed operands are conjugated
    // Linearizing a transposed graph may differentiate through its conj(fixed) values.
    auto forr = linearize_keys({t1.graph}, outputs_of(t1), wrt);
    EXPECT_TRUE(count_kind(*forr.graph, Kind::Conj) == 0 || has_conj({t1.graph}));
  }
}

TEST(ComplexConvention, RealGraphsHaveNoConjAnywhere) {
  kit::RandomDagOptions opts;
  opts.ops = 80;
  auto f0 = kit::random_scalar_dag(opts).graph;
  auto l1 = linearize_keys({f0}, f0->output_keys(), inputs_of(f0));
  auto t1 = tidu::linear_transpose(l1);
  auto ror = tidu::linear_transpose(linearize_keys({t1.graph}, outputs_of(t1), inputs_of(f0)));
  EXPECT_FALSE(has_conj({ror.graph}));
}

/// dL/dx + i dL/dy for every complex argument of a real loss, by central differences of order 4
/// in x and y separately.
Values fd_gradient(tidu::Transforms<ScalarOp>& ad, const GraphPtr& f, const Values& z) {
  const double h = 1e-4;
  auto partial = [&](std::size_t j, cd dir) {
    double d = 0;
    constexpr std::pair<double, double> kStencil[] = {{-2, 1}, {-1, -8}, {1, 8}, {2, -1}};
    for (auto [s, w] : kStencil) {
      Values at = z;
      at[j].z += s * h * dir;
      Number loss = ad.eval(f, at)[0];
      EXPECT_EQ(loss.dtype, DType::Real);
      d += w * loss.z.real();
    }
    return d / (12 * h);
  };
  Values g;
  for (std::size_t j = 0; j < z.size(); ++j) {
    g.push_back(z[j].dtype == DType::Real ? Number(partial(j, 1.0))
                                          : Number(cd(partial(j, 1.0), partial(j, cd(0, 1)))));
  }
  return g;
}

void expect_gradient(tidu::Transforms<ScalarOp>& ad, const GraphPtr& f, const Values& z,
                     const std::vector<cd>& closed_form) {
  auto grad = ad.grad(f, z);
  auto fd = fd_gradient(ad, f, z);
  ASSERT_EQ(grad.size(), z.size());
  for (std::size_t j = 0; j < z.size(); ++j) {
    EXPECT_EQ(grad[j].dtype, z[j].dtype);
    EXPECT_TRUE(near(grad[j], fd[j].z, 1e-8)) << "argument " << j << " against finite differences";
    if (!closed_form.empty()) {
      EXPECT_TRUE(near(grad[j], closed_form[j])) << "argument " << j;
    }
  }
}

// L = Re(z conj(z)) = x^2 + y^2: grad = 2x + 2iy = 2z.
TEST(ComplexConvention, GradientOfSquaredModulusIsTwoZ) {
  ScalarGraph g;
  auto z = g.input("z", DType::Complex);
  g.output(g.real(g.mul(z, g.conj(z))));
  tidu::Transforms<ScalarOp> ad;
  const cd zv(0.6, -1.2);
  expect_gradient(ad, g.finish(), {zv}, {2.0 * zv});
}

// L = Re(c e^z) with f = c e^z holomorphic: dL/dx = Re f', dL/dy = Re(i f') = -Im f', so
// grad_z = conj(f'(z)) = conj(c e^z), and grad_c = conj(e^z).
TEST(ComplexConvention, GradientOfRealPartOfHolomorphicFunctionIsConjugateDerivative) {
  ScalarGraph g;
  auto z = g.input("z", DType::Complex), c = g.input("c", DType::Complex);
  g.output(g.real(g.mul(g.exp(z), c)));
  tidu::Transforms<ScalarOp> ad;
  const cd zv(0.3, 0.8), cv(-0.5, 1.5);
  expect_gradient(ad, g.finish(), {zv, cv}, {std::conj(cv * std::exp(zv)), std::conj(std::exp(zv))});
}

// A real loss of a complex and a real argument: L = Re(z)^2 r + Re(conj(z) r) = x^2 r + x r.
TEST(ComplexConvention, MixedRealAndComplexArguments) {
  ScalarGraph g;
  auto z = g.input("z", DType::Complex), r = g.input("r");
  auto re = g.real(z);
  auto term = g.mul(g.mul(re, re), r);
  g.output(g.add(term, g.real(g.mul(g.conj(z), g.to_complex(r)))));
  tidu::Transforms<ScalarOp> ad;
  const cd zv(0.7, -0.4);
  const double rv = 1.3;
  // dL/dx = 2xr + r, dL/dy = 0, dL/dr = x^2 + x.
  const double x = zv.real();
  expect_gradient(ad, g.finish(), {zv, rv}, {cd(2 * x * rv + rv, 0), cd(x * x + x, 0)});
}

TEST(ComplexConvention, GradientOfRandomRealLossMatchesFiniteDifferencesInXAndY) {
  tidu::Transforms<ScalarOp> ad;
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    kit::RandomDagOptions opts;
    opts.ops = 60;
    opts.seed = seed;
    opts.dtype = DType::Complex;
    opts.real_loss = true;
    auto dag = kit::random_scalar_dag(opts);
    SCOPED_TRACE(computegraph::to_string(*dag.graph));
    expect_gradient(ad, dag.graph, dag.args, {});
  }
}

// The adjoints of the dtype-changing and conjugating maps, in closed form.
TEST(ComplexConvention, AdjointsOfConjRealAndEmbedding) {
  tidu::Transforms<ScalarOp> ad;
  const cd ct(0.3, -0.9);
  {
    ScalarGraph g;  // z -> conj(z): adjoint ct -> conj(ct)
    g.output(g.conj(g.input("z", DType::Complex)));
    auto f = g.finish();
    EXPECT_TRUE(near(ad.vjp(f, Values{cd(1, 2)}, Values{ct}).second[0], std::conj(ct)));
  }
  {
    ScalarGraph g;  // z -> Re z: adjoint (real ct) -> ct + 0i
    g.output(g.real(g.input("z", DType::Complex)));
    auto f = g.finish();
    auto v = ad.vjp(f, Values{cd(1, 2)}, Values{0.25}).second[0];
    EXPECT_EQ(v.dtype, DType::Complex);
    EXPECT_TRUE(near(v, cd(0.25, 0)));
  }
  {
    ScalarGraph g;  // x -> x + 0i: adjoint ct -> Re ct
    g.output(g.to_complex(g.input("x")));
    auto f = g.finish();
    auto v = ad.vjp(f, Values{0.5}, Values{ct}).second[0];
    EXPECT_EQ(v.dtype, DType::Real);
    EXPECT_TRUE(near(v, ct.real()));
  }
}

}  // namespace
