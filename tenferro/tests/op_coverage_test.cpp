// Exhaustiveness of the op registry, as a test: every registered op has a shape rule, a kernel, a
// JVP rule (or no differentiable operand), a transpose rule if some operand is linear, and a case
// below whose program uses it and passes check_grads (finite differences and the adjoint identity,
// forward and reverse, to order 2) in f64 and, where its dtype rule allows, in c128 (or, for the
// semiring ops, which are not differentiable by design, a gradient that throws ADRuleError naming
// the op). An op added to the list without these fails here, by name.
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <sstream>
#include <limits>
#include <map>

#include "op_test_util.hpp"
#include "tenferro/ops/linalg_attrs.hpp"
#include "tenferro/tenferro.hpp"
#include "tenferro/ops/record.hpp"
#include "tenferro/program.hpp"
#include "tenferro/custom_op.hpp"

namespace tf = tenferro;
using T = tf::Traced;

namespace {

struct Case {
  /// Two arguments of these shapes; the program returns a float or complex value.
  tf::Shape a, b;
  bool complex_ok;
  std::function<T(T, T)> f;
};

T op1(const tf::StdTensorOp& op, const T& x) { return tf::apply(op, {x}); }
T op2(const tf::StdTensorOp& op, const T& x, const T& y) { return tf::apply(op, {x, y}); }
T shifted(const T& x, double s) { return x + s; }  // away from zeros, kinks and branch cuts
/// An op without operands, recorded in `like`'s trace.
T created(const T& like, const tf::StdTensorOp& op) { return T(like.trace(), like.trace()->builder.add(op, {})); }

/// One program per op name, built from the op's own factory (not a composite that might avoid it).
std::map<std::string, Case> cases() {
  namespace ops = tf::ops;
  using K = tf::OpKind;
  auto unary = [](K k) { return [k](T a, T b) { return op1(ops::unary(k, a.type()), a) * b; }; };
  std::map<std::string, Case> c;
  c["add"] = {{3}, {3}, true, [](T a, T b) { return op2(ops::add(a.type(), b.type()), a, b) * a; }};
  c["mul"] = {{3}, {3}, true, [](T a, T b) { return op2(ops::mul(a.type(), b.type()), a, b); }};
  c["neg"] = {{3}, {3}, true, unary(K::Neg)};
  c["div"] = {{3}, {3}, true, [](T a, T b) { return op2(ops::div(a.type(), b.type()), a, shifted(b, 3)); }};
  c["conj"] = {{3}, {3}, true, unary(K::Conj)};
  c["real"] = {{3}, {3}, true, [](T a, T b) { return tf::astype(op1(ops::unary(K::Real, a.type()), a), b.dtype()) * b; }};
  c["imag"] = {{3}, {3}, true, [](T a, T b) { return tf::astype(op1(ops::unary(K::Imag, a.type()), a), b.dtype()) * b; }};
  c["abs"] = {{3}, {3}, true, [](T a, T b) { return tf::astype(op1(ops::unary(K::Abs, a.type()), shifted(a, 3)), b.dtype()) * b; }};
  c["sign"] = {{3}, {3}, true, [](T a, T b) { return op1(ops::unary(K::Sign, a.type()), shifted(a, 3)) * b; }};
  c["maximum"] = {{4}, {4}, false, [](T a, T b) { return op2(ops::maximum(a.type(), b.type()), a, b * 2.0) * a; }};
  c["minimum"] = {{4}, {4}, false, [](T a, T b) { return op2(ops::minimum(a.type(), b.type()), a, b * 2.0) * a; }};
  c["compare"] = {{4}, {4}, true, [](T a, T b) {
    const T p = op2(ops::compare(tf::CompareDir::Ne, a.type(), b.type()), a, b);
    return tf::where(p, a * b, b);
  }};
  c["select"] = {{4}, {4}, true, [](T a, T b) {
    const T p = tf::gt(tf::real(a), tf::real(b));
    return tf::apply(ops::select(p.type(), a.type(), b.type()), {p, a * a, b}) * a;
  }};
  c["clamp"] = {{4}, {4}, false, [](T a, T b) {
    return tf::apply(ops::clamp(b.type(), a.type(), b.type()), {b - 0.6, a * 2.0, b + 0.6}) * a;
  }};
  c["exp"] = {{3}, {3}, true, unary(K::Exp)};
  c["log"] = {{3}, {3}, true, [](T a, T b) { return op1(ops::unary(K::Log, a.type()), shifted(a, 2)) * b; }};
  c["sin"] = {{3}, {3}, true, unary(K::Sin)};
  c["cos"] = {{3}, {3}, true, unary(K::Cos)};
  c["tanh"] = {{3}, {3}, true, unary(K::Tanh)};
  c["sqrt"] = {{3}, {3}, true, [](T a, T b) { return op1(ops::unary(K::Sqrt, a.type()), shifted(a, 2)) * b; }};
  c["rsqrt"] = {{3}, {3}, true, [](T a, T b) { return op1(ops::unary(K::Rsqrt, a.type()), shifted(a, 2)) * b; }};
  c["pow"] = {{3}, {3}, true, [](T a, T b) { return op2(ops::pow(a.type(), b.type()), shifted(a, 2), b); }};
  c["expm1"] = {{3}, {3}, true, unary(K::Expm1)};
  c["log1p"] = {{3}, {3}, true, [](T a, T b) { return op1(ops::unary(K::Log1p, a.type()), a * 0.5) * b; }};
  c["erfcx"] = {{3}, {3}, false, [](T a, T b) { return op1(ops::unary(K::Erfcx, a.type()), a * 3.0) * b; }};
  c["polygamma"] = {{3}, {3}, false, [](T a, T b) {
    const T x = shifted(a, 2);
    return op2(ops::binary(K::Polygamma, x.type(), x.type()), tf::full_like(x, 2.0), x) * b;
  }};
  // frac has derivative 1; operands kept away from the integers (the jumps of its value), also
  // within the single-precision check's larger step.
  c["frac"] = {{3}, {3}, false, [](T a, T b) {
    return op1(ops::unary(K::Frac, a.type()), a * 0.4 + 1.5) * b + op1(ops::unary(K::Frac, a.type()), a * 0.4 - 2.5) * a;
  }};
  c["frexp"] = {{3}, {3}, false, [](T a, T b) {
    const T x = a * 3.0;
    const T operand[] = {x};
    auto r = tf::apply_outputs(tf::make_op(tf::op_def(K::Frexp), {x.type()}), operand);
    return r[0] * tf::astype(r[1], x.dtype()) * b;
  }};
  c["fmod"] = {{3}, {3}, false, [](T a, T b) { return op2(ops::binary(K::Fmod, a.type(), b.type()), a * 3.0, shifted(b, 0.5)) * a; }};
  c["remainder"] = {{3}, {3}, false, [](T a, T b) {
    return op2(ops::binary(K::Remainder, a.type(), b.type()), a * 3.0, shifted(b, 0.5)) * a;
  }};
  c["dot_general"] = {{2, 3}, {3, 2}, true, [](T a, T b) {
    return op2(ops::dot_general(a.type(), b.type(), tf::DotDims{{}, {}, {1}, {0}}), a, b);
  }};
  auto reduce = [](K k) { return [k](T a, T b) { return op1(ops::reduce(k, a.type(), {1}), a * b); }; };
  c["reduce_sum"] = {{2, 3}, {2, 3}, true, reduce(K::ReduceSum)};
  c["reduce_prod"] = {{2, 3}, {2, 3}, true, reduce(K::ReduceProd)};
  c["reduce_max"] = {{2, 3}, {2, 3}, false, reduce(K::ReduceMax)};
  c["reduce_min"] = {{2, 3}, {2, 3}, false, reduce(K::ReduceMin)};
  auto reduce_index = [](K k) {
    return [k](T a, T b) {
      const T x = a * b;
      const T operand[] = {x};
      auto r = tf::apply_outputs(ops::reduce_index(k, x.type(), 1), operand);
      return r[0] * tf::astype(r[1] + 1, x.dtype());
    };
  };
  c["reduce_max_index"] = {{2, 3}, {2, 3}, false, reduce_index(K::ReduceMaxIndex)};
  c["reduce_min_index"] = {{2, 3}, {2, 3}, false, reduce_index(K::ReduceMinIndex)};
  c["transpose"] = {{2, 3}, {3, 2}, true, [](T a, T b) { return op1(ops::transpose(a.type(), {1, 0}), a) * b; }};
  c["reshape"] = {{2, 3}, {3, 2}, true, [](T a, T b) { return op1(ops::reshape(a.type(), {3, 2}), a) * b; }};
  c["broadcast_in_dim"] = {{3}, {2, 3}, true, [](T a, T b) {
    return op1(ops::broadcast_in_dim(a.type(), {2, 3}, {1}), a) * b;
  }};
  // Real to complex (a change of precision would round, which finite differences cannot follow).
  c["convert"] = {{3}, {3}, true, [](T a, T b) {
    const T x = tf::is_complex(a.dtype()) ? tf::imag(a) : a;
    return op1(ops::convert(x.type(), tf::DType::C128), x * x) * tf::astype(b, tf::DType::C128);
  }};
  c["extract_diag"] = {{3, 3}, {3}, true, [](T a, T b) { return op1(ops::extract_diag(a.type(), 0, 1), a * a) * b; }};
  c["embed_diag"] = {{3}, {3, 3}, true, [](T a, T b) { return op1(ops::embed_diag(a.type(), 0, 1), a * a) * b; }};
  // exp(ab - sg(a)) exp(sg(a)) = exp(ab): a detached shift, as in logsumexp, leaves the
  // derivative that finite differences see.
  c["stop_gradient"] = {{3}, {3}, true, [](T a, T b) {
    const T s = op1(ops::stop_gradient(a.type()), a);
    return tf::exp(a * b - s) * tf::exp(s);
  }};
  c["checkpoint_name"] = {{3}, {3}, true, [](T a, T b) { return op1(ops::checkpoint_name(a.type(), "h"), a * a) * b; }};
  c["constant"] = {{3}, {3}, true, [](T a, T b) {
    return created(a, ops::constant(tf::Tensor::scalar(0.5, a.dtype()))) * a * b;
  }};
  c["iota"] = {{3}, {3}, true, [](T a, T b) { return created(a, ops::iota({3}, 0, a.dtype())) * a * b; }};
  c["zeros"] = {{3}, {3}, true, [](T a, T b) { return (created(a, ops::zeros(a.type())) + a) * a * b; }};
  // Linear algebra (tenferro/linalg.hpp; linalg_*_test.cpp test each op in depth): gauge-invariant
  // functions of the factors; Hermitian or well-conditioned operands where the op needs them.
  namespace la = tenferro::linalg;
  auto abs2 = [](T x) { return tf::real(x * tf::conj(x)); };
  auto hermitian = [](T a) { return (a + la::adjoint(a)) * 0.5; };
  c["slice"] = {{3, 3}, {2, 1}, true, [](T a, T b) { return tf::slice(a * a, {1, 0}, {3, 3}, {1, 2}) * b; }};
  c["pad"] = {{2, 2}, {3, 3}, true, [](T a, T b) { return tf::pad(a * a, 0.0, {1, -1}, {0, 1}, {0, 1}) * b; }};
  c["take"] = {{3, 2}, {4, 2}, true, [](T a, T b) { return tf::take(a * a, {2, 0, 2, 1}, 0) * b; }};
  c["index_add"] = {{3, 2}, {2, 2}, true, [](T a, T b) {
    return tf::index_add(a, tf::constant(a, tf::Tensor::from(std::vector<std::int64_t>{2, 2}, {2})), b * b, 0) * a;
  }};
  c["cumsum"] = {{3, 2}, {3, 2}, true, [](T a, T b) { return tf::cumsum(a * a, 0, true) * b; }};
  c["reverse"] = {{3, 2}, {3, 2}, true, [](T a, T b) { return tf::reverse(a * a, {0, 1}) * b; }};
  // A draw is a constant of the derivative: the cases check that it passes through unharmed.
  c["random_bits"] = {{3}, {3}, true, [](T a, T b) {
    const T bits = tf::random::bits(tf::constant(a, tf::random::key(1)), {3});
    return tf::astype(bits, a.dtype()) * 1e-9 * a * b;
  }};
  c["random_uniform"] = {{3}, {3}, true, [](T a, T b) {
    return tf::astype(tf::random::normal(tf::constant(a, tf::random::key(2)), {3}), a.dtype()) * a * b;
  }};
  c["conv"] = {{1, 2, 5}, {3, 2, 2}, true, [](T a, T b) {
    const T y = tf::conv(a * a, b, {.stride = {2}, .padding = {1}, .dilation = {2}});
    return y * y;
  }};
  // Control flow: a scan over b's rows whose body reads a (a captured constant) and stacks
  // outputs; a three-way switch on a fixed index; while_loop is in refusing_cases (forward mode
  // only: control_flow_test.cpp checks it).
  c["scan"] = {{3}, {4, 3}, true, [](T a, T b) {
    auto [last, ys] = tf::scan([&](const tf::TracedList& carry, const tf::TracedList& x) {
      return std::pair{tf::TracedList{tf::sin(carry[0]) * x[0] + a}, tf::TracedList{carry[0] * carry[0]}};
    }, {a}, {b});
    return last[0] * tf::sum(ys[0], {0});
  }};
  // scan_adjoint: the traced gradient of a scan under binomial checkpointing (two snapshots for
  // four steps), so that check_grads differentiates the reverse sweep itself.
  c["scan_adjoint"] = {{3}, {4, 3}, true, [](T a, T b) {
    auto loss = [](T h, T xs) {
      auto [last, ys] = tf::scan([](const tf::TracedList& carry, const tf::TracedList& x) {
        return std::pair{tf::TracedList{tf::sin(carry[0]) * x[0]}, tf::TracedList{carry[0] * carry[0]}};
      }, {h}, {xs}, {.checkpoint_snapshots = 2});
      return tf::sum(last[0] * last[0]) + tf::sum(ys[0]);
    };
    const auto g = tf::vjp(loss, {a, b}, tf::full_like(loss(a, b), 1.0)).second;
    return g[0] * a + tf::sum(g[1] * b, {0});
  }};
  c["map"] = {{3}, {3}, true, [](T a, T b) {
    // b is captured: an unmapped operand, whose cotangent sums over the steps.
    return tf::map([&b](const tf::TracedList& x) { return tf::TracedList{tf::sin(x[0]) * b}; }, {a * b})[0];
  }};
  c["cond"] = {{3}, {3}, true, [](T a, T b) {
    const T index = tf::constant(a, tf::Tensor::from(std::vector<std::int64_t>{1}, {}));
    return tf::switch_case(index, {[](const tf::TracedList& o) { return tf::TracedList{o[0]}; },
                                   [&](const tf::TracedList& o) { return tf::TracedList{tf::exp(o[0]) * b}; },
                                   [](const tf::TracedList& o) { return tf::TracedList{o[1]}; }},
                           {a * a, b})[0];
  }};
  c["dynamic_slice"] = {{3, 4}, {2, 2}, true, [](T a, T b) {
    return tf::dynamic_slice(a * a, tf::constant(a, tf::Tensor::from(std::vector<std::int64_t>{2, -1}, {2})), {2, 2}) * b;
  }};
  c["dynamic_update_slice"] = {{3, 4}, {2, 2}, true, [](T a, T b) {
    return tf::dynamic_update_slice(a * a, b * b, tf::constant(a, tf::Tensor::from(std::vector<std::int64_t>{1, 1}, {2}))) * a;
  }};
  // Rows 2, 0, 2 (a repeat) and 9 (clamped to 2), gathered and scattered back.
  c["gather"] = {{3, 2}, {4, 2}, true, [](T a, T b) {
    const T idx = tf::constant(a, tf::Tensor::from(std::vector<std::int64_t>{2, 0, 2, 9}, {4, 1}));
    return tf::gather(a * a, idx, {{1}, {0}, {0}, 1, {1, 2}}) * b;
  }};
  c["scatter"] = {{3, 2}, {4, 2}, true, [](T a, T b) {
    const T idx = tf::constant(a, tf::Tensor::from(std::vector<std::int64_t>{2, 0, 2, 9}, {4, 1}));
    const tf::ScatterDims dims{{1}, {0}, {0}, 1};
    return (tf::scatter_add(a * a, idx, b * b, dims) + tf::scatter(a * a, idx, b * b * b, dims)) * a;
  }};
  // Random operands: no ties, so the permutation is locally constant (complex: by real part).
  c["sort"] = {{2, 5}, {2, 5}, true, [](T a, T b) {
    auto [values, perm] = tf::sort_with_indices(a * b, 1, true);
    return values * a + tf::take_along_axis(b * b, perm, 1);
  }};
  c["svd"] = {{3, 2}, {2}, true, [abs2](T a, T b) {
    auto r = la::svd(a * b);
    return tf::sum(r.S) + tf::sum(abs2(r.U)) + tf::sum(abs2(tf::matmul(r.U, r.Vh)));
  }};
  c["svdvals"] = {{2, 3}, {3}, true, [](T a, T b) { return tf::sum(la::svdvals(a * b)); }};
  c["eigh"] = {{3, 3}, {3, 3}, true, [abs2, hermitian](T a, T b) {
    auto r = la::eigh(hermitian(a * b));
    return tf::sum(r.eigenvalues * r.eigenvalues) + tf::sum(abs2(r.eigenvectors));
  }};
  c["eig"] = {{3, 3}, {3, 3}, true, [abs2](T a, T b) {
    auto r = la::eig(a * b);
    return tf::sum(r.eigenvalues * r.eigenvalues) + tf::astype(tf::sum(abs2(r.eigenvectors)), r.eigenvalues.dtype());
  }};
  c["eigvalsh"] = {{3, 3}, {3, 3}, true, [hermitian](T a, T b) { return la::eigvalsh(hermitian(a * b)); }};
  c["qr"] = {{3, 2}, {3, 2}, true, [](T a, T b) {
    auto r = la::qr(a * b);
    return tf::sum(r.Q) + tf::sum(r.R);
  }};
  c["polar"] = {{3, 2}, {3, 2}, true, [](T a, T b) {
    auto [u, p] = la::polar(a * b);
    return tf::sum(u * b) + tf::sum(p * p);
  }};
  c["cholesky"] = {{3, 3}, {3, 3}, true, [](T a, T b) {
    const T x = a * b;
    return la::cholesky(tf::matmul(x, la::adjoint(x)) + la::eye(x, 3) * 3.0);
  }};
  c["triangular_solve"] = {{3, 3}, {3, 2}, true, [](T a, T b) { return la::triangular_solve(a + la::eye(a, 3) * 3.0, b); }};
  c["solve"] = {{3, 3}, {3, 2}, true, [](T a, T b) { return la::solve(a + la::eye(a, 3) * 3.0, b); }};
  c["lu"] = {{3, 3}, {3, 3}, true, [](T a, T b) {
    auto r = la::lu(a + b);
    return tf::matmul(r.L, r.U);
  }};
  // A permutation is a constant of the derivative: rows of a * b taken in the order of the pivots
  // (3, 3, 3): row 0 swapped with 2, then row 1 with 2.
  c["lu_pivots_to_permutation"] = {{3, 2}, {3, 2}, true, [](T a, T b) {
    const T pivots = tf::constant(a, tf::Tensor::from(std::vector<std::int64_t>{3, 3, 3}, {3}));
    const T perm = tf::apply(ops::lu_pivots_to_permutation(pivots.type(), tf::LuPermutationAttrs{3}), {pivots});
    return tf::take_along_axis(a * b, tf::reshape(perm, {3, 1}), 0) * a;
  }};
  c["expm"] = {{3, 3}, {3, 3}, true, [](T a, T b) { return la::expm(a * b); }};
  // expm's derivative is expm_frechet; its own derivative (second order) differentiates it in A.
  c["expm_frechet"] = {{3, 3}, {3, 3}, true, [](T a, T b) {
    return tf::apply(ops::expm_frechet(a.type(), b.type()), {a * 0.5, b});
  }};
  // The functions of the op list (U and B entries of tenferro/op_list.hpp) without a case above
  // get one derived from their definition: the op applied to operands in its Domain, in f64
  // and, where its formula covers them, c128 (and f32, c64 below).
  auto in_domain = [](tf::Domain d, const T& x) {
    switch (d) {
      case tf::Domain::Any: return x;
      case tf::Domain::Positive: return shifted(x, 2);
      case tf::Domain::AboveOne: return shifted(x, 3);
      case tf::Domain::Centered: return x * 0.3;
      case tf::Domain::NearOne: return x * 0.5 + 1.0;
      case tf::Domain::Steps: return x * 3.0;
    }
    return x;
  };
  auto derive = [&](K k) {
    const tf::OpDef& d = tf::op_def(k);
    if (c.count(d.name)) return;
    const bool complex_ok = d.formula && d.formula->c128_fn != nullptr;
    if (d.arity() == 1) {
      c[d.name] = {{3}, {3}, complex_ok, [k, in_domain](T a, T b) {
        const tf::Domain dom = tf::op_def(k).domain;
        const T y = op1(ops::unary(k, a.type()), in_domain(dom, a));
        // A piecewise constant y: the program's derivative is that of the other factors (finite
        // differences step far less than the distance to the nearest jump of these inputs).
        return dom == tf::Domain::Steps ? y * a * b : y * b;
      }};
    } else {
      c[d.name] = {{3}, {3}, complex_ok, [k, in_domain](T a, T b) {
        const T y = in_domain(tf::op_def(k).domain, b);
        return op2(ops::binary(k, a.type(), y.type()), a, y) * a;
      }};
    }
  };
#define TENFERRO_DERIVE_CASE(X, kind, name) derive(K::kind);
  TENFERRO_OP_LIST(TENFERRO_OP_LIST_NONE, TENFERRO_DERIVE_CASE, TENFERRO_DERIVE_CASE, TENFERRO_OP_LIST_SKIP_M, TENFERRO_OP_LIST_SKIP)
#undef TENFERRO_DERIVE_CASE
  return c;
}

/// Ops that refuse differentiation by design (custom semiring algebra has no AD): a program using
/// each, whose gradient must throw ADRuleError naming the op instead of passing check_grads.
std::map<std::string, std::function<T(T, T)>> refusing_cases() {
  const tf::DotDims matmul{{}, {}, {1}, {0}};
  std::map<std::string, std::function<T(T, T)>> c;
  c["semiring_dot_general"] = [matmul](T a, T b) {
    return tf::sum(tf::semiring_dot_general(a, b, tf::Semiring::MaxPlus, matmul));
  };
  c["semiring_dot_general_index"] = [matmul](T a, T b) {
    return tf::sum(tf::semiring_dot_general_index(a, b, tf::Semiring::MinPlus, matmul).first);
  };
  // Reverse mode through a while_loop without max_trips (forward mode works).
  c["while_loop"] = [](T a, T b) {
    const T zero = tf::constant(a, tf::Tensor::from(std::vector<std::int64_t>{0}, {}));
    const T three = tf::constant(a, tf::Tensor::from(std::vector<std::int64_t>{3}, {}));
    const T one = tf::constant(a, tf::Tensor::from(std::vector<std::int64_t>{1}, {}));
    auto out = tf::while_loop([&](const tf::TracedList& carry) { return tf::lt(carry[1], three); },
                              [&](const tf::TracedList& carry) { return tf::TracedList{tf::sin(carry[0]) + carry[0], carry[1] + one}; },
                              {a, zero});
    return tf::sum(out[0] * tf::transpose(b));
  };
  return c;
}

bool uses(const computegraph::GraphPtr<tf::StdTensorOp>& g, const tf::OpDef& def) {
  for (const auto& node : g->operations()) {
    if (node.operation.def == &def) return true;
  }
  return false;
}

}  // namespace

TEST(OpCoverage, EveryOpHasItsRules) {
  for (const tf::OpDef* d : tf::registered_ops()) {
    SCOPED_TRACE(d->name);
    EXPECT_FALSE(d->name.empty());
    EXPECT_TRUE(static_cast<bool>(d->shape_rule)) << d->name << " has no shape rule";
    EXPECT_TRUE(static_cast<bool>(d->kernel)) << d->name << " has no kernel";
    EXPECT_TRUE(d->jvp || d->never_differentiable()) << d->name << " has no JVP rule";
    EXPECT_TRUE(d->transpose || !d->has_linear_operand()) << d->name << " has no transpose rule";
    // vmap's loop over the batch (batch_by_loop) is for ops registered by users without a rule.
    EXPECT_TRUE(d->batch || d->elementwise || d->formula || (d->variadic_arity == nullptr && d->operands.empty()))
        << d->name << " has no batching rule";
    // Variadic ops (control flow) take their output count from their shape rule, per application.
    EXPECT_TRUE(d->outputs >= 1u || d->variadic_arity) << d->name << " has no outputs";
    EXPECT_EQ(tf::find_op(d->name), d) << "two ops named " << d->name;
  }
}

TEST(OpCoverage, EveryOpPassesCheckGradsToOrderTwo) {
  auto all = cases();
  auto refusing = refusing_cases();
  for (const tf::OpDef* d : tf::registered_ops()) {
    SCOPED_TRACE(d->name);
    if (auto r = refusing.find(d->name); r != refusing.end()) {
      const std::vector<tf::Tensor> args = {tf::test::random_tensor({tf::DType::F64, {2, 3}}, 1),
                                            tf::test::random_tensor({tf::DType::F64, {3, 2}}, 2)};
      auto f = [&](T a, T b) { return r->second(a, b); };
      EXPECT_TRUE(uses(tf::detail::trace_graph(f, tf::detail::types_of(args)), *d));
      try {
        tf::grad(f)(args[0], args[1]);
        ADD_FAILURE() << d->name << " was differentiated";
      } catch (const tf::ADRuleError& e) {
        EXPECT_NE(std::string(e.what()).find(d->name), std::string::npos) << e.what();
      }
      continue;
    }
    auto it = all.find(d->name);
    if (it == all.end()) {
      ADD_FAILURE() << "op " << d->name << " has no check_grads case in op_coverage_test.cpp";
      continue;
    }
    const Case& c = it->second;
    for (tf::DType dtype : {tf::DType::F64, tf::DType::C128}) {
      if (dtype == tf::DType::C128 && !c.complex_ok) continue;
      SCOPED_TRACE(tf::dtype_name(dtype));
      const std::vector<tf::Tensor> args = {tf::test::random_tensor({dtype, c.a}, 1),
                                            tf::test::random_tensor({dtype, c.b}, 2)};
      auto f = [&](T a, T b) { return c.f(a, b); };
      const auto graph = tf::detail::trace_graph(f, tf::detail::types_of(args));
      EXPECT_TRUE(uses(graph, *d)) << "the case of " << d->name << " does not apply it";
      const auto result = tidu::testkit::check_grads(tidu::testkit::function_of(graph),
                                                     std::span<const tf::Tensor>(args), 2);
      EXPECT_TRUE(result.ok) << d->name << " " << tf::dtype_name(dtype) << "\n" << result.message;
      EXPECT_FALSE(result.checks.empty());
    }
  }
}

// The ops given by a formula carry scalar functions per dtype: their f32 and (where covered) c64
// code paths pass check_grads too, with single-precision tolerances (a larger step, float's
// epsilon and relative tolerances of 1e-2 for the difference quotients, 1e-4 for the adjoint
// identity): a wrong rule or a wrong single-precision constant is off by far more.
TEST(OpCoverage, FormulaOpsPassCheckGradsInSinglePrecision) {
  auto all = cases();
  tidu::testkit::CheckOptions opts;
  opts.step = 1e-2;
  opts.eps = std::numeric_limits<float>::epsilon();
  opts.rtol = 1e-2;
  opts.atol = 1e-4;
  opts.adjoint_rtol = 1e-4;
  int checked = 0;
  for (const tf::OpDef* d : tf::registered_ops()) {
    // Piecewise constant ops (no tangent at all) and the remainders, whose jumps lie within the
    // larger step's reach, are checked in double precision only.
    if (!d->formula || d->never_differentiable() || d->name == "fmod" || d->name == "remainder") continue;
    SCOPED_TRACE(d->name);
    const Case& c = all.at(d->name);
    for (tf::DType dtype : {tf::DType::F32, tf::DType::C64}) {
      if (!d->formula->covers(dtype)) continue;
      SCOPED_TRACE(tf::dtype_name(dtype));
      const std::vector<tf::Tensor> args = {tf::test::random_tensor({dtype, c.a}, 1),
                                            tf::test::random_tensor({dtype, c.b}, 2)};
      auto f = [&](T a, T b) { return c.f(a, b); };
      const auto graph = tf::detail::trace_graph(f, tf::detail::types_of(args));
      const auto result = tidu::testkit::check_grads(tidu::testkit::function_of(graph),
                                                     std::span<const tf::Tensor>(args), 2,
                                                     {tidu::testkit::Mode::Forward, tidu::testkit::Mode::Reverse}, opts);
      EXPECT_TRUE(result.ok) << d->name << " " << tf::dtype_name(dtype) << "\n" << result.message;
      ++checked;
    }
  }
  EXPECT_GT(checked, 30);
}

// The op table of docs/tenferro.md ("The op table") is the registry's: one row per op with its
// operands as differentiation sees them, its results and how the executor runs it. An op added,
// removed or changed without the docs fails here, printing the table to paste.
namespace {
std::string op_table() {
  std::ostringstream t;
  t << "| op | operands | results | executor |\n|---|---|---|---|\n";
  for (const tf::OpDef* d : tf::registered_ops()) {
    std::string operands;
    if (d->variadic_arity) {
      operands = "variadic";
    } else if (d->operands.empty()) {
      operands = "none";
    } else {
      for (std::size_t i = 0; i < d->operands.size(); ++i) {
        const char* code = "?";
        switch (d->operands[i]) {
          case tf::Linearity::Linear: code = "L"; break;
          case tf::Linearity::Bilinear: code = "B"; break;
          case tf::Linearity::Nonlinear: code = "N"; break;
          case tf::Linearity::NonDifferentiable: code = "-"; break;
        }
        operands += (i ? " " : "") + std::string(code);
      }
    }
    const std::string results = d->variadic_arity ? "variadic" : std::to_string(d->outputs);
    std::string executor;
    switch (d->fusion) {
      case tf::Fusion::Elementwise: executor = "fused formula"; break;
      case tf::Fusion::Reduction: executor = "reduction"; break;
      case tf::Fusion::SumReduction: executor = "sum reduction"; break;
      case tf::Fusion::Barrier: {
        const bool in_place = d->layout == tf::Layout::Transpose || d->layout == tf::Layout::Reshape ||
                              d->layout == tf::Layout::Broadcast;
        executor = in_place ? "read in place" : "kernel";
        break;
      }
    }
    t << "| " << d->name << " | " << operands << " | " << results << " | " << executor << " |\n";
  }
  return t.str();
}
}  // namespace

TEST(OpCoverage, TheDocsOpTableIsTheRegistrys) {
  std::ifstream in(std::string(TENFERRO_DOCS_DIR) + "/tenferro.md");
  ASSERT_TRUE(in) << "cannot read docs/tenferro.md";
  const std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string begin = "<!-- op table: generated from the registry, checked by op_coverage_test -->\n";
  const std::string end = "<!-- end of op table -->";
  const auto b = doc.find(begin), e = doc.find(end);
  ASSERT_NE(b, std::string::npos) << "docs/tenferro.md has no op table";
  ASSERT_NE(e, std::string::npos);
  const std::string table = doc.substr(b + begin.size(), e - b - begin.size());
  EXPECT_EQ(table, op_table()) << "docs/tenferro.md's op table differs from the registry; the registry's is:\n"
                               << op_table();
}

// The functions of the op list's U and B entries (tenferro/op_list.hpp) are declared, defined and
// bound from that line alone: each records exactly its op (not a composite), which is what the
// docs' worked example (exp2) claims. Python's bindings of the same entries are checked by
// python/tests/test_parity.py.
TEST(OpCoverage, EachFunctionOfTheOpListRecordsItsOp) {
  const std::vector<tf::Tensor> args = {tf::test::random_tensor({tf::DType::F64, {3}}, 1),
                                        tf::test::random_tensor({tf::DType::F64, {3}}, 2)};
  std::size_t listed = 0;
  auto check = [&](tf::OpKind kind, const char* name, const tf::GraphPtr& graph) {
    ++listed;
    const tf::OpDef& d = tf::op_def(kind);
    EXPECT_TRUE(uses(graph, d)) << "tf::" << name << " does not record " << d.name;
    EXPECT_EQ(graph->operations().size(), 1u) << "tf::" << name << " records more than its op";
    EXPECT_TRUE(d.formula.has_value()) << d.name << " is listed as a function but has no formula";
  };
#define TENFERRO_CHECK_UNARY(X, kind, name)                                                 \
  {                                                                                        \
    auto f = [](T a, T) { return tf::name(a); };                                           \
    check(tf::OpKind::kind, #name, tf::detail::trace_graph(f, tf::detail::types_of(args))); \
  }
#define TENFERRO_CHECK_BINARY(X, kind, name)                                                \
  {                                                                                        \
    auto f = [](T a, T b) { return tf::name(a, b); };                                      \
    check(tf::OpKind::kind, #name, tf::detail::trace_graph(f, tf::detail::types_of(args))); \
  }
  TENFERRO_OP_LIST(TENFERRO_OP_LIST_NONE, TENFERRO_CHECK_UNARY, TENFERRO_CHECK_BINARY, TENFERRO_OP_LIST_SKIP_M, TENFERRO_OP_LIST_SKIP)
#undef TENFERRO_CHECK_UNARY
#undef TENFERRO_CHECK_BINARY
  EXPECT_GE(listed, 40u);
}

// The functions of the op list's M entries likewise: each records exactly its op, with the op's
// number of results, which is what the docs' worked example (polar) claims.
TEST(OpCoverage, EachMatrixFunctionOfTheOpListRecordsItsOp) {
  const tf::Tensor a = tf::test::random_tensor({tf::DType::F64, {3, 3}}, 1);
  std::size_t listed = 0;
#define TENFERRO_CHECK_MATRIX(X, kind, fn, n)                                                    \
  {                                                                                                \
    ++listed;                                                                                      \
    const tf::OpDef& d = tf::op_def(tf::OpKind::kind);                                             \
    EXPECT_EQ(d.outputs, std::size_t{n}) << d.name;                                                \
    auto f = [](T x) {                                                                             \
      const auto r = tf::linalg::fn(x);                                                                  \
      return std::vector<T>(r.begin(), r.end());                                                   \
    };                                                                                             \
    const tf::GraphPtr graph = tf::detail::trace_graph(f, tf::detail::types_of(std::vector{a}));   \
    EXPECT_TRUE(uses(graph, d)) << "linalg::" #fn " does not record " << d.name;                 \
    EXPECT_EQ(graph->operations().size(), 1u) << "linalg::" #fn " records more than its op";     \
    EXPECT_EQ(graph->outputs().size(), std::size_t{n}) << "linalg::" #fn;                        \
  }
  TENFERRO_OP_LIST(TENFERRO_OP_LIST_NONE, TENFERRO_OP_LIST_SKIP, TENFERRO_OP_LIST_SKIP, TENFERRO_CHECK_MATRIX, TENFERRO_OP_LIST_SKIP)
#undef TENFERRO_CHECK_MATRIX
  EXPECT_GE(listed, 1u);
}

namespace {
/// Row `i` of a tensor along axis 0, as a tensor of the remaining axes.
/// The elements of any tensor as complex doubles.
std::vector<tf::c128> values_of(const tf::Tensor& t) {
  std::vector<tf::c128> out(static_cast<std::size_t>(t.numel()));
  tf::visit_dtype(t.dtype(), [&](auto zero) {
    using V = decltype(zero);
    const V* p = static_cast<const V*>(t.raw_data());
    for (std::size_t k = 0; k < out.size(); ++k) {
      if constexpr (std::is_same_v<V, bool>) {
        out[k] = p[k] ? 1.0 : 0.0;
      } else {
        out[k] = tf::c128(p[k]);
      }
    }
  });
  return out;
}

tf::Tensor with_leading(tf::DType dtype, std::int64_t n, const tf::Shape& shape, std::uint64_t seed) {
  tf::Shape s = shape;
  s.insert(s.begin(), n);
  return tf::test::random_tensor({dtype, s}, seed);
}
}  // namespace

// vmap (tenferro/vmap.hpp): every op's case, batched on its first operand, its second and both,
// equals the case applied to each batch element (the same kernels on the same numbers: equal to
// rounding, 1e-12 relative), and the batched program passes check_grads to order 2.
TEST(OpCoverage, EveryOpBatchesLikeALoopOverItsExamples) {
  auto all = cases();
  const std::int64_t n = 3;
  for (const tf::OpDef* d : tf::registered_ops()) {
    auto it = all.find(d->name);
    if (it == all.end()) continue;  // EveryOpPassesCheckGradsToOrderTwo names it
    SCOPED_TRACE(d->name);
    const Case& c = it->second;
    const tf::DType dtype = tf::DType::F64;
    using Axes = std::vector<std::optional<std::int64_t>>;
    for (const Axes& in_axes : {Axes{0, std::nullopt}, Axes{std::nullopt, 0}, Axes{0, 0}}) {
      SCOPED_TRACE(std::string("batched: ") + (in_axes[0] ? "a" : "") + (in_axes[1] ? "b" : ""));
      const tf::Tensor a = in_axes[0] ? with_leading(dtype, n, c.a, 11) : tf::test::random_tensor({dtype, c.a}, 11);
      const tf::Tensor b = in_axes[1] ? with_leading(dtype, n, c.b, 12) : tf::test::random_tensor({dtype, c.b}, 12);
      auto f = [&](T x, T y) { return c.f(x, y); };
      const tf::Tensor batched = tf::vmap(f, {.in_axes = in_axes})(a, b);
      for (std::int64_t i = 0; i < n; ++i) {
        const tf::Tensor ai = in_axes[0] ? tf::test::example(a, 0, i) : a, bi = in_axes[1] ? tf::test::example(b, 0, i) : b;
        const tf::Tensor expected = tf::trace(f, ai, bi).run({ai, bi})[0];
        const tf::Tensor got = tf::test::example(batched, 0, i);
        ASSERT_EQ(got.type(), expected.type());
        const auto gv = values_of(got), ev = values_of(expected);
        for (std::size_t k = 0; k < gv.size(); ++k) {
          EXPECT_LE(std::abs(gv[k] - ev[k]), 1e-12 * (1 + std::abs(ev[k]))) << "example " << i << " element " << k;
        }
      }
      auto vf = [&](T x, T y) { return tf::vmap(f, {.in_axes = in_axes})(x, y); };
      const std::vector<tf::Tensor> args = {a, b};
      const auto result = tidu::testkit::check_grads(
          tidu::testkit::function_of(tf::detail::trace_graph(vf, tf::detail::types_of(args))), std::span<const tf::Tensor>(args), 2);
      EXPECT_TRUE(result.ok) << result.message;
    }
  }
}

// Sparse Jacobians (tenferro/sparse.hpp): for every op's case, the detected pattern of the
// Jacobian with respect to each argument holds every nonzero of jacfwd's dense Jacobian, and
// sparse_jacobian's values equal it to rounding. An op whose Dependence claims less than it
// reads fails here.
/// Calls check(f, args) for every registered op's case (f the case's function of two Traced
/// values, args its random f64 arguments), with the op's name in the trace of any failure. Ops
/// without a case are EveryOpPassesCheckGradsToOrderTwo's to name.
template <class Check>
void for_each_case(Check&& check) {
  auto all = cases();
  for (const tf::OpDef* d : tf::registered_ops()) {
    auto it = all.find(d->name);
    if (it == all.end()) continue;
    SCOPED_TRACE(d->name);
    const Case& c = it->second;
    const std::vector<tf::Tensor> args = {tf::test::random_tensor({tf::DType::F64, c.a}, 1),
                                          tf::test::random_tensor({tf::DType::F64, c.b}, 2)};
    check([&c](T x, T y) { return c.f(x, y); }, args);
  }
}

TEST(OpCoverage, EveryOpsSparsityPatternHoldsItsJacobian) {
  for_each_case([](const auto& f, const std::vector<tf::Tensor>& args) {
    for (std::size_t argnum : {0, 1}) {
      SCOPED_TRACE("argument " + std::to_string(argnum));
      const auto p = tf::jacobian_sparsity(f, args, {.argnum = argnum});
      const tf::Tensor dense = tf::jacfwd(f, argnum)(args[0], args[1]);
      ASSERT_EQ(dense.numel(), p->rows * p->cols);
      const auto dv = values_of(dense);
      for (std::int64_t i = 0; i < p->rows; ++i) {
        for (std::int64_t j = 0; j < p->cols; ++j) {
          if (dv[static_cast<std::size_t>(i * p->cols + j)] != tf::c128(0)) {
            EXPECT_TRUE(p->contains(i, j)) << "J[" << i << ", " << j << "] is nonzero outside the pattern";
          }
        }
      }
      if (tf::is_complex(dense.dtype())) continue;  // sparse_jacobian takes real results (eig's)
      const tf::SparseMatrix m = tf::sparse_jacobian(f, {.argnum = argnum})(args[0], args[1]);
      const auto mv = values_of(m.to_dense());
      for (std::size_t k = 0; k < dv.size(); ++k) {
        EXPECT_LE(std::abs(mv[k] - dv[k]), 1e-12 * (1 + std::abs(dv[k]))) << "element " << k;
      }
    }
  });
}

// Cross-country Jacobians (tenferro/jacobian.hpp): for every op's case, vertex elimination on the
// linearized program gives jacfwd's Jacobian to rounding with respect to each argument, in the
// cost model's order and in Markowitz's. Each op's linear ops are read off here as identities,
// diagonals or dense blocks; a wrong reading fails. Programs with another dtype on their way
// (complex results) are refused with DTypeError, and counted so that the test sees most ops run.
TEST(OpCoverage, EveryOpsCrossCountryJacobianIsJacfwds) {
  int checked = 0, refused = 0;
  for_each_case([&](const auto& f, const std::vector<tf::Tensor>& args) {
    for (std::size_t argnum : {0, 1}) {
      SCOPED_TRACE("argument " + std::to_string(argnum));
      const tf::Tensor dense = tf::jacfwd(f, argnum)(args[0], args[1]);
      const auto dv = values_of(dense);
      for (const tf::EliminationOrder order : {tf::EliminationOrder::Best, tf::EliminationOrder::Markowitz}) {
        const auto j = tf::jacobian(f, {.argnum = argnum, .mode = tf::JacobianMode::CrossCountry, .order = order});
        try {
          (void)j.choice(args[0], args[1]);
        } catch (const tf::DTypeError&) {
          ++refused;
          continue;
        }
        const auto jv = values_of(j(args[0], args[1]));
        ASSERT_EQ(jv.size(), dv.size());
        for (std::size_t k = 0; k < dv.size(); ++k) {
          EXPECT_LE(std::abs(jv[k] - dv[k]), 1e-12 * (1 + std::abs(dv[k]))) << elimination_order_name(order) << ", element " << k;
        }
        ++checked;
      }
    }
  });
  EXPECT_GT(checked, 8 * refused) << checked << " checked, " << refused << " refused";
}

// Every mode of tf::jacobian (tenferro/jacobian.hpp) gives jacfwd's Jacobian for every op's case
// with respect to each argument: the extremes (as the program runs them: batched or swept), the
// compressed modes by columns and by rows (real results; complex ones are refused with
// DTypeError, as documented), and the automatic choice.
TEST(OpCoverage, EveryJacobianModeIsJacfwds) {
  for_each_case([](const auto& f, const std::vector<tf::Tensor>& args) {
    for (std::size_t argnum : {0, 1}) {
      SCOPED_TRACE("argument " + std::to_string(argnum));
      const auto expected = values_of(tf::jacfwd(f, argnum)(args[0], args[1]));
      const bool complex_result = tf::is_complex(tf::jacfwd(f, argnum)(args[0], args[1]).dtype());
      for (const tf::JacobianMode mode : {tf::JacobianMode::Auto, tf::JacobianMode::Forward, tf::JacobianMode::Reverse,
                                          tf::JacobianMode::Columns, tf::JacobianMode::Rows}) {
        SCOPED_TRACE(tf::jacobian_mode_name(mode));
        const auto j = tf::jacobian(f, {.argnum = argnum, .mode = mode});
        if (complex_result && (mode == tf::JacobianMode::Columns || mode == tf::JacobianMode::Rows)) {
          EXPECT_THROW(j(args[0], args[1]), tf::DTypeError);
          continue;
        }
        const auto got = values_of(j(args[0], args[1]));
        ASSERT_EQ(got.size(), expected.size());
        for (std::size_t k = 0; k < got.size(); ++k) {
          EXPECT_LE(std::abs(got[k] - expected[k]), 1e-12 * (1 + std::abs(expected[k]))) << "element " << k;
        }
      }
    }
  });
}
