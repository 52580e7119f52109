// The piecewise (minmax_select.cpp) and analytic (analytic.cpp) op families: kernels against
// std:: closed forms, shape/dtype errors, and AD: JVPs against central finite differences, the
// adjoint identity Re<ct, J t> = Re<J^* ct, t>, and second order (the AD kit's FoF, RoF, FoR, RoR;
// Transforms::hvp against finite differences of Transforms::grad), in f64, c128 and f32.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "computegraph/graph_builder.hpp"
#include "tenferro/operand_space.hpp"
#include "tenferro/ops/make.hpp"
#include "tenferro/ops/record.hpp"
#include "tenferro/program.hpp"
#include "tidu/testing/check.hpp"
#include "tidu/transforms.hpp"

namespace {
using namespace tenferro;
using computegraph::LocalValueId;
using testing::HasSubstr;
using Op = StdTensorOp;
using Graph = computegraph::GraphPtr<Op>;
using Space = tidu::OperandSpace<Tensor>;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// ---- helpers -----------------------------------------------------------------------------------

/// A 1-d tensor of dtype d from complex values (real dtypes take the real part).
Tensor tensor(DType d, const std::vector<c128>& v) {
  Tensor t(TensorType{d, {static_cast<std::int64_t>(v.size())}});
  visit_dtype(d, [&](auto zero) {
    using T = decltype(zero);
    T* p = t.data<T>();
    for (std::size_t i = 0; i < v.size(); ++i) {
      if constexpr (std::is_same_v<T, c64>) {
        p[i] = c64(static_cast<float>(v[i].real()), static_cast<float>(v[i].imag()));
      } else if constexpr (std::is_same_v<T, c128>) {
        p[i] = v[i];
      } else if constexpr (std::is_same_v<T, bool>) {
        p[i] = v[i] != 0.0;
      } else {
        p[i] = static_cast<T>(v[i].real());
      }
    }
  });
  return t;
}
Tensor real_tensor(DType d, const std::vector<double>& v) { return tensor(d, std::vector<c128>(v.begin(), v.end())); }
Tensor bools(const std::vector<bool>& v) {
  std::vector<c128> c;
  for (bool b : v) c.emplace_back(b ? 1.0 : 0.0);
  return tensor(DType::Bool, c);
}
/// A rank-0 tensor.
Tensor scalar(DType d, c128 v) { return tensor(d, {v}).reshaped({}); }

/// n points spread over [lo, hi] (imaginary parts over [im_lo, im_hi] in another order).
std::vector<c128> spread(int n, double lo, double hi, double im_lo = 0, double im_hi = 0) {
  std::vector<c128> v;
  for (int k = 0; k < n; ++k) {
    const double u = (k + 0.5) / n;
    const double w = ((k * 3 + 1) % n + 0.5) / n;
    v.emplace_back(lo + (hi - lo) * u, im_lo + (im_hi - im_lo) * w);
  }
  return v;
}

/// One op applied to tensors.
Tensor run(const StdTensorOp& op, const std::vector<Tensor>& in) {
  std::vector<const Tensor*> ptrs;
  for (const Tensor& t : in) ptrs.push_back(&t);
  ExecContext ctx;
  Tensor out;
  op.eval(ctx, ptrs, std::span<Tensor>(&out, 1));
  return out;
}

/// Builds a primal graph with GraphBuilder; inputs are keyed TensorKey{name, type}.
class Trace {
 public:
  LocalValueId input(const std::string& name, const TensorType& type) { return g_.add_input(TensorKey{name, type}); }
  LocalValueId input(const std::string& name, const Tensor& like) { return input(name, like.type()); }
  const TensorType& type(LocalValueId v) const { return type_of(g_.key(v)); }
  LocalValueId apply(StdTensorOp op, std::initializer_list<LocalValueId> in) {
    std::vector<computegraph::ValueRef<Op>> refs;
    for (auto v : in) refs.push_back(computegraph::ValueRef<Op>::local(v));
    return g_.add(std::move(op), std::move(refs));
  }
  LocalValueId unary(OpKind k, LocalValueId a) { return apply(ops::unary(k, type(a)), {a}); }
  LocalValueId mul(LocalValueId a, LocalValueId b) { return apply(ops::mul(type(a), type(b)), {a, b}); }
  LocalValueId pow(LocalValueId a, LocalValueId b) { return apply(ops::pow(type(a), type(b)), {a, b}); }
  LocalValueId max(LocalValueId a, LocalValueId b) { return apply(ops::maximum(type(a), type(b)), {a, b}); }
  LocalValueId min(LocalValueId a, LocalValueId b) { return apply(ops::minimum(type(a), type(b)), {a, b}); }
  LocalValueId cmp(CompareDir d, LocalValueId a, LocalValueId b) { return apply(ops::compare(d, type(a), type(b)), {a, b}); }
  LocalValueId select(LocalValueId p, LocalValueId a, LocalValueId b) {
    return apply(ops::select(type(p), type(a), type(b)), {p, a, b});
  }
  LocalValueId clamp(LocalValueId lo, LocalValueId x, LocalValueId hi) {
    return apply(ops::clamp(type(lo), type(x), type(hi)), {lo, x, hi});
  }
  Graph finish(std::vector<LocalValueId> outputs) {
    g_.set_outputs(std::move(outputs));
    return g_.finish();
  }

 private:
  computegraph::GraphBuilder<Op> g_;
};

bool low_precision(DType d) { return d == DType::F32 || d == DType::C64; }

/// |got - want| <= tol * max(1, |want|) elementwise (NaN only where want is NaN).
void expect_close(const Tensor& got, const std::vector<c128>& want, double tol) {
  ASSERT_EQ(got.numel(), static_cast<std::int64_t>(want.size()));
  for (std::int64_t i = 0; i < got.numel(); ++i) {
    const c128 g = got.element(i);
    const c128 w = want[static_cast<std::size_t>(i)];
    if (std::isnan(w.real()) || std::isnan(w.imag())) {
      EXPECT_TRUE(std::isnan(g.real()) || std::isnan(g.imag())) << "element " << i << ": " << g;
    } else if (std::isinf(w.real()) || std::isinf(w.imag())) {
      EXPECT_EQ(g, w) << "element " << i;
    } else {
      EXPECT_LE(std::abs(g - w), tol * std::max(1.0, std::abs(w))) << "element " << i << ": got " << g << ", want " << w;
    }
  }
}

// ---- AD check drivers ---------------------------------------------------------------------------

tidu::testkit::CheckOptions options_for(DType d) {
  tidu::testkit::CheckOptions o;
  if (low_precision(d)) {  // f32 rounding (6e-8) over the step dominates the finite differences
    o.step = 1e-2;
    o.rtol = 2e-3;
    o.atol = 1e-4;
    o.adjoint_rtol = 2e-6;
  }
  return o;
}

/// f as a function of the inputs marked in `active`; the others are fixed at their values.
tidu::testkit::AdFunction<Op> function_of(const Graph& f, const std::vector<Tensor>& values,
                                          const std::vector<bool>& active, std::vector<Tensor>& args) {
  auto fn = tidu::testkit::function_of(f);
  fn.args.clear();
  for (std::size_t j = 0; j < values.size(); ++j) {
    const TensorKey& key = f->key(f->inputs()[j]).input_key();
    if (active[j]) {
      fn.args.push_back(key);
      args.push_back(values[j]);
    } else {
      fn.seeds.emplace_back(key, values[j]);
    }
  }
  return fn;
}

/// The AD kit's checks of order 1 and 2 (F, R, FoF, RoF, FoR, RoR).
void expect_grads(const Graph& f, const std::vector<Tensor>& x, DType d, std::vector<bool> active = {}) {
  if (active.empty()) active.assign(x.size(), true);
  std::vector<Tensor> args;
  auto fn = function_of(f, x, active, args);
  auto r = tidu::testkit::check_grads<Op>(fn, args, 2, {tidu::testkit::Mode::Forward, tidu::testkit::Mode::Reverse},
                                          options_for(d));
  EXPECT_TRUE(r.ok) << r.message;
  EXPECT_EQ(r.checks.size(), 6u);
}

/// Through the user-level Transforms: jvp against a central difference (4th order) along a random
/// t, vjp by the adjoint identity, and, for a rank-0 output, hvp against central differences of grad.
void expect_transforms(const Graph& f, const std::vector<Tensor>& x, DType d) {
  const auto o = options_for(d);
  const double h = o.step;
  std::mt19937_64 rng(0xfeed);
  tidu::Transforms<Op> tf;
  std::vector<Tensor> t, ct;
  for (const Tensor& xj : x) t.push_back(Space::random_like(xj, rng));
  auto at = [&](double s) {
    std::vector<Tensor> xs;
    for (std::size_t j = 0; j < x.size(); ++j) xs.push_back(Space::add_scaled(x[j], s, t[j]));
    return xs;
  };
  auto [y, jt] = tf.jvp(f, x, t);
  double err = 0, scale = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    Tensor fd = Space::zeros_like(y[i]);
    for (auto [s, w] : {std::pair{-2.0, 1.0}, {-1.0, -8.0}, {1.0, 8.0}, {2.0, -1.0}}) {
      fd = Space::add_scaled(fd, w / (12 * h), tf.eval(f, at(s * h))[i]);
    }
    Tensor diff = Space::add_scaled(jt[i], -1.0, fd);
    err += Space::inner(diff, diff);
    scale += Space::inner(fd, fd) + Space::inner(y[i], y[i]);
    ct.push_back(Space::random_like(y[i], rng));
  }
  const double f_tol = low_precision(d) ? 1e-3 : 1e-7;
  EXPECT_LE(std::sqrt(err), f_tol * std::max(1.0, std::sqrt(scale))) << "jvp vs finite differences";
  auto [y2, jct] = tf.vjp(f, x, ct);
  double lhs = 0, rhs = 0, norm = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    lhs += Space::inner(ct[i], jt[i]);
    norm += std::abs(Space::inner(ct[i], ct[i]) * Space::inner(jt[i], jt[i]));
  }
  for (std::size_t j = 0; j < x.size(); ++j) rhs += Space::inner(jct[j], t[j]);
  EXPECT_LE(std::abs(lhs - rhs), (low_precision(d) ? 1e-5 : 1e-12) * std::max(1.0, std::sqrt(norm))) << "adjoint identity";
  if (y.size() != 1 || y[0].rank() != 0 || is_complex(y[0].dtype())) return;
  auto hv = tf.hvp(f, x, t);
  auto g_plus = tf.grad(f, at(h));
  auto g_minus = tf.grad(f, at(-h));
  auto g_plus2 = tf.grad(f, at(2 * h));
  auto g_minus2 = tf.grad(f, at(-2 * h));
  for (std::size_t j = 0; j < x.size(); ++j) {
    Tensor fd = Space::add_scaled(Space::add_scaled(Space::zeros_like(x[j]), 8 / (12 * h), g_plus[j]), -8 / (12 * h), g_minus[j]);
    fd = Space::add_scaled(Space::add_scaled(fd, -1 / (12 * h), g_plus2[j]), 1 / (12 * h), g_minus2[j]);
    Tensor diff = Space::add_scaled(hv[j], -1.0, fd);
    EXPECT_LE(std::sqrt(Space::inner(diff, diff)), f_tol * std::max(1.0, std::sqrt(Space::inner(fd, fd))))
        << "hvp vs finite differences of grad, argument " << j;
  }
}

// ---- shape/dtype rules ---------------------------------------------------------------------------

template <class E, class F>
void expect_error(F&& f, std::initializer_list<const char*> parts) {
  try {
    f();
    ADD_FAILURE() << "no exception";
  } catch (const E& e) {
    for (const char* p : parts) EXPECT_THAT(e.what(), HasSubstr(p));
  }
}

TEST(ElementwiseRules, MinmaxSelectTypes) {
  const TensorType f2{DType::F64, {2}}, f3{DType::F64, {3}}, c2{DType::C128, {2}}, b2{DType::Bool, {2}},
      b3{DType::Bool, {3}}, i2{DType::I64, {2}}, s2{DType::F32, {2}};
  EXPECT_EQ(ops::maximum(f2, f2).out, f2);
  EXPECT_EQ(ops::minimum(i2, i2).out, i2);
  EXPECT_EQ(ops::compare(CompareDir::Lt, f2, f2).out, b2);
  EXPECT_EQ(ops::compare(CompareDir::Ne, c2, c2).out, b2);
  EXPECT_EQ(ops::select(b2, c2, c2).out, c2);
  EXPECT_EQ(ops::clamp(f2, f2, f2).out, f2);
  EXPECT_EQ(ops::unary(OpKind::Abs, c2).out, f2);
  EXPECT_EQ(ops::unary(OpKind::Sign, c2).out, c2);
  expect_error<DTypeError>([&] { ops::maximum(c2, c2); }, {"maximum", "c128[2]", "real dtype"});
  expect_error<DTypeError>([&] { ops::minimum(b2, b2); }, {"minimum", "bool[2]", "real dtype"});
  expect_error<ShapeError>([&] { ops::maximum(f2, f3); }, {"maximum", "f64[2]", "f64[3]"});
  expect_error<DTypeError>([&] { ops::maximum(f2, s2); }, {"maximum", "f64[2]", "f32[2]"});
  expect_error<DTypeError>([&] { ops::compare(CompareDir::Lt, c2, c2); }, {"compare[lt]", "c128[2]", "eq and ne"});
  expect_error<ShapeError>([&] { ops::compare(CompareDir::Eq, f2, f3); }, {"compare[eq]", "f64[3]"});
  expect_error<DTypeError>([&] { ops::select(f2, f2, f2); }, {"select", "predicate f64[2]", "bool"});
  expect_error<ShapeError>([&] { ops::select(b3, f2, f2); }, {"select", "bool[3]", "f64[2]"});
  expect_error<DTypeError>([&] { ops::select(b2, f2, c2); }, {"select", "f64[2]", "c128[2]"});
  expect_error<ShapeError>([&] { ops::clamp(f2, f3, f2); }, {"clamp", "f64[3]"});
  expect_error<DTypeError>([&] { ops::clamp(c2, c2, c2); }, {"clamp", "c128[2]", "real dtype"});
  expect_error<DTypeError>([&] { ops::unary(OpKind::Abs, b2); }, {"abs", "bool[2]"});
}

TEST(ElementwiseRules, AnalyticTypes) {
  const TensorType f2{DType::F64, {2}}, f3{DType::F64, {3}}, c2{DType::C64, {2}}, i2{DType::I64, {2}};
  for (OpKind k : {OpKind::Exp, OpKind::Log, OpKind::Sin, OpKind::Cos, OpKind::Tanh, OpKind::Sqrt, OpKind::Rsqrt,
                   OpKind::Expm1, OpKind::Log1p}) {
    EXPECT_EQ(ops::unary(k, c2).out, c2);
    expect_error<DTypeError>([&] { ops::unary(k, i2); }, {op_def(k).name.c_str(), "i64[2]", "f32, f64, c64 or c128"});
  }
  EXPECT_EQ(ops::pow(c2, c2).out, c2);
  expect_error<DTypeError>([&] { ops::pow(i2, i2); }, {"pow", "i64[2]", "f32, f64, c64 or c128"});
  expect_error<DTypeError>([&] { ops::pow(f2, c2); }, {"pow", "f64[2]", "c64[2]"});
  expect_error<ShapeError>([&] { ops::pow(f2, f3); }, {"pow", "f64[3]"});
}

TEST(ElementwiseRules, EvalRefusesOperandsOfAnotherType) {
  const StdTensorOp op = ops::maximum({DType::F64, {2}}, {DType::F64, {2}});
  const Tensor x = real_tensor(DType::F64, {1, 2, 3});
  expect_error<ShapeError>([&] { run(op, {x, x}); }, {"maximum", "f64[3]", "f64[2]"});
  const StdTensorOp sel = ops::select({DType::Bool, {2}}, {DType::F64, {2}}, {DType::F64, {2}});
  const Tensor y = real_tensor(DType::F64, {1, 2});
  expect_error<DTypeError>([&] { run(sel, {y, y, y}); }, {"select", "bool"});
}

// ---- kernels -------------------------------------------------------------------------------------

struct AnalyticCase {
  OpKind kind;
  double lo, hi;  // real parts of the sample points (inside the real domain)
  std::function<double(double)> real;
  std::function<c128(c128)> complex;
};

const std::vector<AnalyticCase>& analytic_cases() {
  static const std::vector<AnalyticCase> cases = {
      {OpKind::Exp, -2, 2, [](double x) { return std::exp(x); }, [](c128 z) { return std::exp(z); }},
      {OpKind::Log, 0.2, 3, [](double x) { return std::log(x); }, [](c128 z) { return std::log(z); }},
      {OpKind::Sin, -3, 3, [](double x) { return std::sin(x); }, [](c128 z) { return std::sin(z); }},
      {OpKind::Cos, -3, 3, [](double x) { return std::cos(x); }, [](c128 z) { return std::cos(z); }},
      {OpKind::Tanh, -2, 2, [](double x) { return std::tanh(x); }, [](c128 z) { return std::tanh(z); }},
      {OpKind::Sqrt, 0.2, 3, [](double x) { return std::sqrt(x); }, [](c128 z) { return std::sqrt(z); }},
      {OpKind::Rsqrt, 0.2, 3, [](double x) { return 1 / std::sqrt(x); }, [](c128 z) { return 1.0 / std::sqrt(z); }},
      {OpKind::Expm1, -1.5, 1.5, [](double x) { return std::expm1(x); }, [](c128 z) { return std::exp(z) - 1.0; }},
      {OpKind::Log1p, -0.6, 2, [](double x) { return std::log1p(x); }, [](c128 z) { return std::log(1.0 + z); }},
  };
  return cases;
}

TEST(ElementwiseKernels, AnalyticMatchesStd) {
  for (const auto& c : analytic_cases()) {
    for (DType d : {DType::F64, DType::F32, DType::C128, DType::C64}) {
      SCOPED_TRACE(std::string(op_def(c.kind).name) + " " + dtype_name(d));
      const Tensor x = tensor(d, spread(7, c.lo, c.hi, -1, 1));
      std::vector<c128> want;
      for (std::int64_t i = 0; i < x.numel(); ++i) {
        const c128 xi = x.element(i);  // the operand as stored (f32 inputs are rounded)
        want.push_back(is_complex(d) ? c.complex(xi) : c128(c.real(xi.real())));
      }
      expect_close(run(ops::unary(c.kind, x.type()), {x}), want, low_precision(d) ? 4e-6 : 1e-14);
    }
  }
}

TEST(ElementwiseKernels, ComplexExpm1AndLog1pAreAccurateNearZero) {
  // Taylor series (the closed form exp(z) - 1 would cancel): exact to ~|z|^4 relative.
  for (c128 z : {c128(1e-9, 2e-9), c128(-3e-8, 1e-8), c128(0, 1e-7), c128(1e-7, 0)}) {
    const Tensor x = tensor(DType::C128, {z});
    const c128 e = run(ops::unary(OpKind::Expm1, x.type()), {x}).element(0);
    EXPECT_LE(std::abs(e - (z + z * z / 2.0 + z * z * z / 6.0)), 1e-15 * std::abs(z));
    const c128 l = run(ops::unary(OpKind::Log1p, x.type()), {x}).element(0);
    EXPECT_LE(std::abs(l - (z - z * z / 2.0 + z * z * z / 3.0)), 1e-15 * std::abs(z));
  }
}

TEST(ElementwiseKernels, Pow) {
  const Tensor x = real_tensor(DType::F64, {2, 0.5, 0, 0, -2, -2, 3});
  const Tensor y = real_tensor(DType::F64, {3, -1.5, 0, 2, 2, 0.5, 0});
  expect_close(run(ops::pow(x.type(), y.type()), {x, y}), {8, std::pow(0.5, -1.5), 1, 0, 4, kNaN, 1}, 1e-15);
  const std::vector<c128> zx = {c128(1, 2), c128(-1, 0.5), c128(0, 0), c128(0, 0), c128(0.3, -2)};
  const std::vector<c128> zy = {c128(2, 0), c128(0.5, -1), c128(0, 0), c128(2, 1), c128(-1, 0)};
  std::vector<c128> want = {c128(-3, 4), std::exp(zy[1] * std::log(zx[1])), 1.0, 0.0, 1.0 / zx[4]};
  for (DType d : {DType::C128, DType::C64}) {
    const Tensor a = tensor(d, zx), b = tensor(d, zy);
    expect_close(run(ops::pow(a.type(), b.type()), {a, b}), want, low_precision(d) ? 4e-6 : 1e-14);
  }
}

TEST(ElementwiseKernels, AbsAndSign) {
  const Tensor x = real_tensor(DType::F64, {-2.5, 0, 3, kNaN, -kInf});
  expect_close(run(ops::unary(OpKind::Abs, x.type()), {x}), {2.5, 0, 3, kNaN, kInf}, 0);
  expect_close(run(ops::unary(OpKind::Sign, x.type()), {x}), {-1, 0, 1, kNaN, -1}, 0);
  const Tensor i = real_tensor(DType::I64, {-7, 0, 9});
  EXPECT_EQ(run(ops::unary(OpKind::Abs, i.type()), {i}).values<std::int64_t>()[0], 7);
  EXPECT_EQ(run(ops::unary(OpKind::Sign, i.type()), {i}).values<std::int64_t>()[0], -1);
  // |z| without overflow in the squares; sign z = z / |z|, 0 at 0.
  const Tensor z = tensor(DType::C128, {c128(3, -4), c128(0, 0), c128(3e300, 4e300)});
  expect_close(run(ops::unary(OpKind::Abs, z.type()), {z}), {5, 0, 5e300}, 1e-15);
  expect_close(run(ops::unary(OpKind::Sign, z.type()), {z}), {c128(0.6, -0.8), 0.0, c128(0.6, 0.8)}, 1e-15);
}

TEST(ElementwiseKernels, MaximumMinimumPropagateNaN) {
  for (DType d : {DType::F64, DType::F32}) {
    const Tensor x = real_tensor(d, {1, 5, kNaN, 2, -1, 3});
    const Tensor y = real_tensor(d, {4, 2, 1, kNaN, -1, -kInf});
    expect_close(run(ops::maximum(x.type(), y.type()), {x, y}), {4, 5, kNaN, kNaN, -1, 3}, 0);
    expect_close(run(ops::minimum(x.type(), y.type()), {x, y}), {1, 2, kNaN, kNaN, -1, -kInf}, 0);
  }
  const Tensor i = real_tensor(DType::I64, {1, -5}), j = real_tensor(DType::I64, {0, 3});
  expect_close(run(ops::maximum(i.type(), j.type()), {i, j}), {1, 3}, 0);
}

TEST(ElementwiseKernels, Compare) {
  const Tensor x = real_tensor(DType::F64, {1, 2, 3, kNaN});
  const Tensor y = real_tensor(DType::F64, {2, 2, 1, kNaN});
  const std::vector<std::pair<CompareDir, std::vector<c128>>> want = {
      {CompareDir::Eq, {0, 1, 0, 0}}, {CompareDir::Ne, {1, 0, 1, 1}}, {CompareDir::Lt, {1, 0, 0, 0}},
      {CompareDir::Le, {1, 1, 0, 0}}, {CompareDir::Gt, {0, 0, 1, 0}}, {CompareDir::Ge, {0, 1, 1, 0}}};
  for (const auto& [dir, w] : want) {
    SCOPED_TRACE(compare_dir_name(dir));
    expect_close(run(ops::compare(dir, x.type(), y.type()), {x, y}), w, 0);
  }
  const Tensor z = tensor(DType::C64, {c128(1, 2), c128(1, 2)}), u = tensor(DType::C64, {c128(1, 2), c128(1, -2)});
  expect_close(run(ops::compare(CompareDir::Eq, z.type(), u.type()), {z, u}), {1, 0}, 0);
  const Tensor b = bools({true, false}), c = bools({true, true});
  expect_close(run(ops::compare(CompareDir::Lt, b.type(), c.type()), {b, c}), {0, 1}, 0);
}

TEST(ElementwiseKernels, SelectAndClamp) {
  const Tensor p = bools({true, false, true});
  const Tensor a = tensor(DType::C128, {c128(1, 1), c128(2, 2), c128(3, 3)});
  const Tensor b = tensor(DType::C128, {c128(kNaN, 0), c128(-2, 0), c128(kInf, 0)});
  expect_close(run(ops::select(p.type(), a.type(), b.type()), {p, a, b}), {c128(1, 1), c128(-2, 0), c128(3, 3)}, 0);
  const Tensor q = bools({false, true, false});
  EXPECT_EQ(to_string(run(ops::select(p.type(), p.type(), q.type()), {p, p, q})), to_string(bools({true, true, true})));
  // clamp(lo, x, hi) = min(max(x, lo), hi): inside, below, above, lo > hi (gives hi), NaN x.
  const Tensor lo = real_tensor(DType::F64, {0, 0, 0, 2, 0});
  const Tensor x = real_tensor(DType::F64, {0.5, -1, 7, 1.5, kNaN});
  const Tensor hi = real_tensor(DType::F64, {1, 1, 1, 1, 1});
  expect_close(run(ops::clamp(lo.type(), x.type(), hi.type()), {lo, x, hi}), {0.5, 0, 1, 1, kNaN}, 0);
}

// ---- AD: finite differences, adjoint identity, second order --------------------------------------

TEST(ElementwiseAD, AnalyticOps) {
  for (const auto& c : analytic_cases()) {
    for (DType d : {DType::F64, DType::C128, DType::F32}) {
      SCOPED_TRACE(std::string(op_def(c.kind).name) + " " + dtype_name(d));
      const Tensor x = tensor(d, spread(5, c.lo, c.hi, -0.8, 0.8));
      Trace tr;
      LocalValueId in = tr.input("x", x);
      expect_grads(tr.finish({tr.unary(c.kind, in)}), {x}, d);
      // A rank-0 loss through the user-level transforms (hvp for real dtypes).
      const Tensor s = scalar(d, x.element(2));
      Trace t0;
      LocalValueId v = t0.input("x", s);
      expect_transforms(t0.finish({t0.mul(t0.unary(c.kind, v), t0.unary(OpKind::Sin, v))}), {s}, d);
    }
  }
}

TEST(ElementwiseAD, PowInBothOperands) {
  for (DType d : {DType::F64, DType::C128, DType::F32}) {
    SCOPED_TRACE(dtype_name(d));
    const Tensor x = tensor(d, spread(5, 0.4, 2.2, -0.7, 0.7)), y = tensor(d, spread(5, -1.5, 2.5, 0.5, -0.5));
    Trace tr;
    LocalValueId a = tr.input("x", x), b = tr.input("y", y);
    expect_grads(tr.finish({tr.pow(a, b)}), {x, y}, d);
    const Tensor sx = scalar(d, x.element(1)), sy = scalar(d, y.element(3));
    Trace t0;
    LocalValueId u = t0.input("x", sx), v = t0.input("y", sy);
    expect_transforms(t0.finish({t0.pow(u, v)}), {sx, sy}, d);
  }
}

TEST(ElementwiseAD, PowConventionsAtZero) {
  // The x-part y x^(y-1) is 0 where y == 0; the y-part log(x) x^y is 0 where x == 0.
  const Tensor x = real_tensor(DType::F64, {0, 2, 0, 2}), y = real_tensor(DType::F64, {0, 0, 2, 3});
  Trace tr;
  LocalValueId a = tr.input("x", x), b = tr.input("y", y);
  const Graph f = tr.finish({tr.pow(a, b)});
  tidu::Transforms<Op> tf;
  const std::vector<Tensor> at{x, y};
  const Tensor one = real_tensor(DType::F64, {1, 1, 1, 1}), zero = Space::zeros_like(x);
  expect_close(tf.jvp(f, at, std::vector<Tensor>{one, zero}).second[0], {0, 0, 0, 12}, 1e-15);
  expect_close(tf.jvp(f, at, std::vector<Tensor>{zero, one}).second[0], {0, std::log(2.0), 0, 8 * std::log(2.0)}, 1e-15);
  // Second order stays finite at x = 0; at (0, 2) it is the limit from x > 0: [[2, 0], [0, 0]].
  Trace t0;
  LocalValueId u = t0.input("x", scalar(DType::F64, 0)), v = t0.input("y", scalar(DType::F64, 0));
  const Graph g = t0.finish({t0.pow(u, v)});
  auto h = tf.hessian(g, std::vector<Tensor>{scalar(DType::F64, 0), scalar(DType::F64, 2)});
  EXPECT_EQ(h.data, (std::vector<c128>{2.0, 0.0, 0.0, 0.0}));
  h = tf.hessian(g, std::vector<Tensor>{scalar(DType::F64, 0), scalar(DType::F64, 0)});
  for (const c128& e : h.data) EXPECT_TRUE(std::isfinite(e.real())) << e;
  // Reverse over reverse sends exact zero cotangents into the unselected expressions; their guarded
  // operands keep 0 * inf out, so the adjoint identity holds (with finite numbers) at x = 0 too.
  for (double y0 : {0.0, 2.0, 3.0}) {  // points where x^y is twice differentiable in x
    SCOPED_TRACE(y0);
    const std::vector<Tensor> p0{scalar(DType::F64, 0), scalar(DType::F64, y0)};
    std::mt19937_64 rng(7);
    auto seed = [&rng](const Tensor& like) { return Space::random_like(like, rng); };
    auto rev = tidu::testkit::reverse_step(tidu::testkit::function_of(g), p0, seed);
    auto r = tidu::testkit::check_vjp(rev, p0);
    EXPECT_TRUE(r.ok) << r.message;
  }
}

TEST(ElementwiseAD, ComplexGradientConvention) {
  // grad of a real loss L(z), z = x + iy, is dL/dx + i dL/dy: against central differences.
  for (c128 z0 : {c128(0.6, -0.8), c128(-1.2, 0.3)}) {
    Trace tr;
    LocalValueId z = tr.input("z", scalar(DType::C128, z0));
    const Graph f = tr.finish({tr.unary(OpKind::Abs, tr.unary(OpKind::Sin, tr.unary(OpKind::Sqrt, z)))});
    tidu::Transforms<Op> tf;
    const double h = 1e-6;
    auto loss = [&](c128 w) { return tf.eval(f, std::vector<Tensor>{scalar(DType::C128, w)})[0].element(0).real(); };
    const c128 fd((loss(z0 + h) - loss(z0 - h)) / (2 * h),
                  (loss(z0 + c128(0, h)) - loss(z0 - c128(0, h))) / (2 * h));
    const c128 g = tf.grad(f, std::vector<Tensor>{scalar(DType::C128, z0)})[0].element(0);
    EXPECT_LE(std::abs(g - fd), 1e-8) << g << " vs " << fd;
  }
}

TEST(ElementwiseAD, AbsAndSign) {
  for (DType d : {DType::F64, DType::C128, DType::F32}) {
    SCOPED_TRACE(dtype_name(d));
    const Tensor x = tensor(d, spread(6, -2, 2, -1, 1));  // no zeros
    Trace tr;
    LocalValueId in = tr.input("x", x);
    expect_grads(tr.finish({tr.unary(OpKind::Abs, in), tr.mul(tr.unary(OpKind::Sign, in), tr.unary(OpKind::Exp, in))}), {x}, d);
    const Tensor s = scalar(d, x.element(1));
    Trace t0;
    LocalValueId v = t0.input("x", s);
    expect_transforms(t0.finish({t0.unary(OpKind::Abs, t0.unary(OpKind::Exp, v))}), {s}, d);
  }
}

TEST(ElementwiseAD, CompareAndRealSignHaveNoTangent) {
  const Tensor x = real_tensor(DType::F64, {1, -2});
  Trace tr;
  LocalValueId a = tr.input("x", x);
  const Graph f = tr.finish({tr.cmp(CompareDir::Lt, a, tr.unary(OpKind::Exp, a)), tr.unary(OpKind::Sign, a)});
  auto lin = tidu::linearize(computegraph::resolve({f}), std::span<const TensorValueKey>(f->output_keys()),
                             std::vector<TensorKey>{f->key(f->inputs()[0]).input_key()});
  EXPECT_EQ(lin.tangent_outputs, (std::vector<std::optional<LocalValueId>>{std::nullopt, std::nullopt}));
}

TEST(ElementwiseAD, MaximumMinimumAwayFromTies) {
  for (DType d : {DType::F64, DType::F32}) {
    SCOPED_TRACE(dtype_name(d));
    const Tensor x = real_tensor(d, {-1, 0.5, 2, 0.3}), y = real_tensor(d, {0.2, -0.4, 1.2, 1.5});
    Trace tr;
    LocalValueId a = tr.input("x", x), b = tr.input("y", y);
    LocalValueId hi = tr.max(a, b), lo = tr.min(a, tr.unary(OpKind::Sin, b));
    expect_grads(tr.finish({hi, lo, tr.mul(hi, lo)}), {x, y}, d);
  }
}

TEST(ElementwiseAD, MaximumMinimumSplitTiesEqually) {
  const Tensor x = real_tensor(DType::F64, {1, -2, 3}), y = real_tensor(DType::F64, {1, -2, 0});
  Trace tr;
  LocalValueId a = tr.input("x", x), b = tr.input("y", y);
  const Graph f = tr.finish({tr.max(a, b), tr.min(a, b)});
  tidu::Transforms<Op> tf;
  const std::vector<Tensor> at{x, y};
  auto [values, tangents] = tf.jvp(f, at, std::vector<Tensor>{real_tensor(DType::F64, {1, 3, 1}), real_tensor(DType::F64, {0, 1, 5})});
  expect_close(tangents[0], {0.5, 2, 1}, 0);  // tie, tie, x wins
  expect_close(tangents[1], {0.5, 2, 5}, 0);  // tie, tie, y wins
  const Tensor ct = real_tensor(DType::F64, {2, 4, 6}), none = Space::zeros_like(x);
  auto [v1, g_max] = tf.vjp(f, at, std::vector<Tensor>{ct, none});
  expect_close(g_max[0], {1, 2, 6}, 0);
  expect_close(g_max[1], {1, 2, 0}, 0);
  auto [v2, g_min] = tf.vjp(f, at, std::vector<Tensor>{none, ct});
  expect_close(g_min[0], {1, 2, 0}, 0);
  expect_close(g_min[1], {1, 2, 6}, 0);
  // The equal split is what a central difference gives at a tie; the adjoint identity holds too.
  auto r = tidu::testkit::check_grads<Op>(f, at, 1);
  EXPECT_TRUE(r.ok) << r.message;
}

TEST(ElementwiseAD, ClampAwayFromBoundaries) {
  for (DType d : {DType::F64, DType::F32}) {
    SCOPED_TRACE(dtype_name(d));
    const Tensor lo = real_tensor(d, {0, 0, 0, 2}), x = real_tensor(d, {0.5, -1, 7, 1.5}), hi = real_tensor(d, {1, 1, 1, 1});
    Trace tr;
    LocalValueId l = tr.input("lo", lo), v = tr.input("x", x), h = tr.input("hi", hi);
    LocalValueId c = tr.clamp(l, v, h);
    expect_grads(tr.finish({c, tr.mul(c, tr.unary(OpKind::Sin, v))}), {lo, x, hi}, d);
  }
}

TEST(ElementwiseAD, ClampTiesGoToX) {
  // x == lo, x == hi, lo == x == hi, and lo > hi (the result is hi).
  const Tensor lo = real_tensor(DType::F64, {0, 0, 1, 2}), x = real_tensor(DType::F64, {0, 1, 1, 1.5});
  const Tensor hi = real_tensor(DType::F64, {1, 1, 1, 1});
  Trace tr;
  LocalValueId l = tr.input("lo", lo), v = tr.input("x", x), h = tr.input("hi", hi);
  const Graph f = tr.finish({tr.clamp(l, v, h)});
  tidu::Transforms<Op> tf;
  const std::vector<Tensor> at{lo, x, hi};
  const auto full = [](double c) { return real_tensor(DType::F64, {c, c, c, c}); };
  expect_close(tf.jvp(f, at, std::vector<Tensor>{full(10), full(1), full(100)}).second[0], {1, 1, 1, 100}, 0);
  auto g = tf.vjp(f, at, std::vector<Tensor>{full(1)}).second;
  expect_close(g[0], {0, 0, 0, 0}, 0);
  expect_close(g[1], {1, 1, 1, 0}, 0);
  expect_close(g[2], {0, 0, 0, 1}, 0);
}

TEST(ElementwiseAD, SelectWithComparePredicate) {
  for (DType d : {DType::F64, DType::C128, DType::F32}) {
    SCOPED_TRACE(dtype_name(d));
    const Tensor a = real_tensor(DType::F64, {1, -1, 0.5, 2}), b = real_tensor(DType::F64, {0, 0, 1.5, -1});
    const Tensor x = tensor(d, spread(4, -1, 1, 0.5, -0.5)), y = tensor(d, spread(4, 0.5, 2, -1, 1));
    Trace tr;
    LocalValueId pa = tr.input("a", a), pb = tr.input("b", b), u = tr.input("x", x), w = tr.input("y", y);
    LocalValueId p = tr.cmp(CompareDir::Gt, pa, pb);
    LocalValueId both = tr.select(p, tr.mul(u, u), tr.unary(OpKind::Sin, w));
    expect_grads(tr.finish({both, tr.select(p, tr.unary(OpKind::Exp, u), w)}), {a, b, x, y}, d);
    // One branch fixed: its tangent is absent and zeros stand in for it.
    Trace t1;
    LocalValueId a1 = t1.input("a", a), b1 = t1.input("b", b), u1 = t1.input("x", x), w1 = t1.input("y", y);
    LocalValueId q = t1.cmp(CompareDir::Gt, a1, b1);
    expect_grads(t1.finish({t1.select(q, t1.unary(OpKind::Exp, u1), w1), t1.select(q, w1, t1.mul(u1, w1))}),
                 {a, b, x, y}, d, {false, false, true, false});
  }
}

TEST(ElementwiseAD, SelectKeepsNaNAndInfOfTheUnselectedBranchOut) {
  const Tensor p = bools({true, false, true, false});
  const Tensor a = real_tensor(DType::F64, {1, 2, 3, 4}), b = real_tensor(DType::F64, {-1, 4, 0, 9});
  tidu::Transforms<Op> tf;
  {  // JVP: NaN/inf tangents of the unselected branch do not reach the result.
    Trace tr;
    LocalValueId q = tr.input("p", p), u = tr.input("a", a), v = tr.input("b", b);
    const Graph f = tr.finish({tr.select(q, u, v)});
    tf.set_wrt(f, {false, true, true});
    auto dy = tf.jvp(f, std::vector<Tensor>{p, a, b},
                     std::vector<Tensor>{p, real_tensor(DType::F64, {1, kNaN, 2, kInf}),
                                         real_tensor(DType::F64, {kNaN, 3, -kInf, 4})}).second[0];
    expect_close(dy, {1, 3, 2, 4}, 0);
  }
  {  // JVP through an op: sqrt(b) at b = -1 and 0 (NaN and inf tangents) is not selected there.
    Trace tr;
    LocalValueId q = tr.input("p", p), u = tr.input("a", a), v = tr.input("b", b);
    const Graph f = tr.finish({tr.select(q, u, tr.unary(OpKind::Sqrt, v))});
    tf.set_wrt(f, {false, true, true});
    const Tensor ones = real_tensor(DType::F64, {1, 1, 1, 1});
    expect_close(tf.jvp(f, std::vector<Tensor>{p, a, b}, std::vector<Tensor>{p, ones, ones}).second[0],
                 {1, 0.25, 1, 1.0 / 6}, 1e-15);
  }
  {  // VJP: where the incoming cotangent is inf or NaN, the unselected operand still gets exactly 0.
    const Tensor c = real_tensor(DType::F64, {kInf, kNaN, 2, 1});
    Trace tr;
    LocalValueId q = tr.input("p", p), u = tr.input("a", a), v = tr.input("b", b), w = tr.input("c", c);
    const Graph f = tr.finish({tr.mul(tr.select(q, u, v), w)});
    tf.set_wrt(f, {false, true, true, false});
    auto g = tf.vjp(f, std::vector<Tensor>{p, a, b, c}, std::vector<Tensor>{real_tensor(DType::F64, {1, 1, 1, 1})}).second;
    expect_close(g[1], {kInf, 0, 2, 0}, 0);
    expect_close(g[2], {0, kNaN, 0, 1}, 0);
  }
  {  // The branch's own rule is not protected (0 * inf inside sqrt's rule); the "double where"
     // idiom, which guards the branch's operand, is.
    const Tensor x = real_tensor(DType::F64, {0, -1, 4}), zero = Space::zeros_like(x);
    const Tensor one = real_tensor(DType::F64, {1, 1, 1});
    auto build = [&](bool guard) {
      Trace tr;
      LocalValueId u = tr.input("x", x), z = tr.input("zero", zero), o = tr.input("one", one);
      LocalValueId pos = tr.cmp(CompareDir::Gt, u, z);
      const Graph f = tr.finish({tr.select(pos, tr.unary(OpKind::Sqrt, guard ? tr.select(pos, u, o) : u), z)});
      tf.set_wrt(f, {true, false, false});
      return f;
    };
    const std::vector<Tensor> at{x, zero, one}, ct{real_tensor(DType::F64, {1, 1, 1})};
    EXPECT_TRUE(std::isnan(tf.vjp(build(false), at, ct).second[0].element(0).real()));
    expect_close(tf.vjp(build(true), at, ct).second[0], {0, 0, 0.25}, 1e-15);
  }
}

}  // namespace
