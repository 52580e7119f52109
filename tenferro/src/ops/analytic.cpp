// Analytic elementwise ops: exp, log, sin, cos, tanh, sqrt, rsqrt, pow, expm1, log1p, for f32,
// f64, c64 and c128 (their shape rules: ops::unary in arith.cpp, ops::pow here).
// Order: shape/dtype rules, kernels, JVP rules, definitions. None is linear, so there are no
// transpose rules.
//
// Complex ops are the principal branches of the holomorphic functions (log, sqrt and pow cut
// along the negative real axis, log1p left of -1: OpDef::branch_cut), and their JVP is f'(z) dz;
// tests draw the operands of log, sqrt, rsqrt and log1p positive (Domain::Positive). Rules reuse the primal result where
// the derivative is a function of it: exp: y dx; tanh: (1 - y^2) dx; sqrt: dx / (2y);
// rsqrt: -y^3 dx / 2.
//
// pow(x, y) = exp(y log x) for complex operands; for real operands std::pow (NaN for x < 0 and
// non-integer y). d(x^y) = y x^(y-1) dx + log(x) x^y dy, with two conventions:
// - the x-part is 0 where y == 0 (x^0 = 1 is constant, also at x = 0);
// - the y-part is 0 where x == 0 (log(x) x^y -> 0 as x -> 0 when Re y > 0); it needs x > 0 for
//   real operands (NaN for x < 0, where x^y is not real-differentiable in y).
// Both guard the operand of the unselected expression too ("double where"), so second-order
// derivatives stay finite at those points.
#include <cmath>
#include <complex>
#include <type_traits>

#include "ir/elementwise_formulas.hpp"
#include "ir/family.hpp"
#include "ir/vector_blocks.hpp"
#include "tenferro/ops/rule.hpp"

namespace tenferro {

// ---- shape/dtype rules -------------------------------------------------------------------------

namespace ops {
StdTensorOp pow(const TensorType& a, const TensorType& b) {
  detail::require_same_type("pow", a, b);
  detail::require_dtype("pow", a, is_inexact(a.dtype), "f32, f64, c64 or c128");
  return detail::make(OpKind::Pow, a);
}
}  // namespace ops

// ---- kernels -----------------------------------------------------------------------------------

namespace detail {
namespace {
using formulas::is_complex_v;

/// exp(z) - 1 without cancellation for small |z|: Re = expm1(x) cos y - 2 sin^2(y/2),
/// Im = exp(x) sin y.
template <class R>
std::complex<R> expm1_complex(std::complex<R> z) {
  const R x = z.real();
  const R y = z.imag();
  const R s = std::sin(y / 2);
  return {std::expm1(x) * std::cos(y) - 2 * s * s, std::exp(x) * std::sin(y)};
}

/// log(1 + z) without cancellation for small |z|: |1 + z|^2 = 1 + (x (2 + x) + y^2), so
/// Re = log1p(x (2 + x) + y^2) / 2 and Im = atan2(y, 1 + x). Far from 0, plain log(1 + z).
template <class R>
std::complex<R> log1p_complex(std::complex<R> z) {
  const R x = z.real();
  const R y = z.imag();
  if (std::abs(x) < R(0.5) && std::abs(y) < R(0.5)) {
    return {std::log1p(x * (2 + x) + y * y) / 2, std::atan2(y, 1 + x)};
  }
  return std::log(std::complex<R>(1 + x, y));
}

/// exp(y log x); at x = 0: 1 for y = 0, 0 for Re y > 0 (otherwise not finite).
template <class R>
std::complex<R> pow_complex(std::complex<R> x, std::complex<R> y) {
  using C = std::complex<R>;
  if (x == C{}) {
    if (y == C{}) return C(1);
    if (y.real() > 0) return C{};
  }
  return std::exp(y * std::log(x));
}

/// expm1 and log1p of a real or complex value.
template <class T>
T expm1_of(T x) {
  if constexpr (is_complex_v<T>) {
    return expm1_complex(x);
  } else {
    return std::expm1(x);
  }
}
template <class T>
T log1p_of(T x) {
  if constexpr (is_complex_v<T>) {
    return log1p_complex(x);
  } else {
    return std::log1p(x);
  }
}

template <class T, class F>
void map_unary(const Tensor& a, Tensor& r, F&& f) {
  const T* x = a.data<T>();
  T* z = r.data<T>();
  const std::int64_t n = r.numel();
  for (std::int64_t i = 0; i < n; ++i) z[i] = f(x[i]);
}

/// The kernel of a unary analytic op: z = f(x) elementwise over the float and complex dtypes;
/// `f` is a generic lambda (called with float, double, c64 and c128).
template <class F>
Tensor eval_unary(const StdTensorOp& op, const Tensor& a, F f) {
  Tensor r(op.out);
  visit_dtype(op.out.dtype, [&](auto zero) {
    using T = decltype(zero);
    if constexpr (std::is_floating_point_v<T> || is_complex_v<T>) map_unary<T>(a, r, f);
  });
  return r;
}

Tensor eval_pow(const StdTensorOp& op, Operands in) {
  Tensor r(op.out);
  visit_dtype(op.out.dtype, [&](auto zero) {
    using T = decltype(zero);
    if constexpr (std::is_floating_point_v<T> || is_complex_v<T>) {
      const T* x = in[0]->data<T>();
      const T* y = in[1]->data<T>();
      T* z = r.data<T>();
      const std::int64_t n = r.numel();
      for (std::int64_t i = 0; i < n; ++i) {
        if constexpr (is_complex_v<T>) {
          z[i] = pow_complex(x[i], y[i]);
        } else {
          z[i] = std::pow(x[i], y[i]);
        }
      }
    }
  });
  return r;
}
}  // namespace

/// The kernel of a unary analytic op from its one-element function.
#define TENFERRO_UNARY_KERNEL(expr) \
  single_result(+[](const StdTensorOp& op, Operands in) { return eval_unary(op, *in[0], [](auto x) { return expr; }); })

// ---- JVP rules ---------------------------------------------------------------------------------

namespace {
/// v with its zeros replaced by 1 (mask: v == 0), the guard of pow's rules.
Traced one_where(const Traced& mask, const Traced& v) { return where(mask, full_like(v, 1.0), v); }

Tangents jvp_pow(const StdTensorOp& op, const JvpArgs& a) {  // operands (base, exponent)
  RuleTrace r(a.b);
  const Traced x = r.fixed(a.x[0]);
  const Traced y = r.fixed(a.y[0]);  // base^exponent
  const Traced p = r.fixed(a.x[1]);
  std::optional<Traced> d_base, d_exp;
  if (a.t[0]) {  // p x^(p-1), 0 where p == 0
    const Traced p_zero = eq(p, full_like(p, 0.0));
    const Traced p_safe = one_where(p_zero, p);
    // Operands that record are named first (see "Order" in tenferro/ops/rule.hpp).
    const Traced x_pm1 = pow(x, p_safe - 1.0);
    const Traced nonzero_p = p_safe * x_pm1;
    const Traced zero = full_like(x, 0.0);
    d_base = where(p_zero, zero, nonzero_p) * r.linear(*a.t[0]);
  }
  if (a.t[1]) {  // log(x) x^p, 0 where x == 0
    const Traced log_x = log(one_where(eq(x, full_like(x, 0.0)), x));
    d_exp = log_x * y * r.linear(*a.t[1]);
  }
  return {r.result(sum_present(d_base, d_exp), op, tidu::RuleKind::Jvp)};
}
}  // namespace

// ---- definitions -------------------------------------------------------------------------------

/// A unary analytic op: float or complex operand, result of the same type.
/// Its formula: the same expression on f32, f64, c64 and c128, the vector math tables' function
/// Kind as block form, and the executor's fast form Kind; where tests draw its operands (Domain)
/// and its branch cut (OpDef::branch_cut, std::nullopt for an entire function).
#define TENFERRO_ANALYTIC_DEF(Kind, printed, domain_, cut_, expr, ...)                                         \
  constexpr auto Kind##_fn = [](auto x) { return expr; };                                                      \
  const OpDef& def_##Kind() {                                                                                  \
    static const OpDef d{                                                                                      \
        .name = printed, .kind = OpKind::Kind, .operands = {kNonlinear}, .elementwise = true,                  \
        .shape_rule = single_type(+[](Types t, const OpAttrs&) { return ops::unary(OpKind::Kind, t[0]).out; }), \
        .kernel = TENFERRO_UNARY_KERNEL(expr),                                                                 \
        .jvp = traced_unary_jvp([](const Traced& x, const Traced& y, const Traced& dx) { __VA_ARGS__ }),         \
        .transpose = {},                                                                                       \
        .formula = fast_form(vectorized<exec::MathFn::Kind>(unary_formula<Kind##_fn, true>()), ElementFast::Kind), \
        .domain = domain_, .branch_cut = cut_, .fusion = Fusion::Elementwise};                                 \
    return d;                                                                                                  \
  }

// Rules reuse the primal result y where the derivative is a function of it.
TENFERRO_ANALYTIC_DEF(Exp, "exp", Domain::Any, std::nullopt, std::exp(x), (void)x; return y * dx;)
TENFERRO_ANALYTIC_DEF(Log, "log", Domain::Positive, kCutLeftOfZero, std::log(x), (void)y; return dx / x;)
TENFERRO_ANALYTIC_DEF(Sin, "sin", Domain::Any, std::nullopt, std::sin(x), (void)y; return cos(x) * dx;)
TENFERRO_ANALYTIC_DEF(Cos, "cos", Domain::Any, std::nullopt, std::cos(x), (void)y; return -sin(x) * dx;)
TENFERRO_ANALYTIC_DEF(Tanh, "tanh", Domain::Any, std::nullopt, std::tanh(x), (void)x; return (1.0 - y * y) * dx;)
TENFERRO_ANALYTIC_DEF(Sqrt, "sqrt", Domain::Positive, kCutLeftOfZero, std::sqrt(x), (void)x; return dx / (y + y);)
TENFERRO_ANALYTIC_DEF(Rsqrt, "rsqrt", Domain::Positive, kCutLeftOfZero, decltype(x)(1) / std::sqrt(x), (void)x;
                      return -0.5 * (y * (y * y)) * dx;)
// exp(x), not y + 1, which loses all relative accuracy where exp(x) is tiny.
TENFERRO_ANALYTIC_DEF(Expm1, "expm1", Domain::Any, std::nullopt, expm1_of(x), (void)y; return exp(x) * dx;)
TENFERRO_ANALYTIC_DEF(Log1p, "log1p", Domain::Positive, kCutLeftOfMinusOne, log1p_of(x), (void)y; return dx / (1.0 + x);)

#undef TENFERRO_ANALYTIC_DEF
#undef TENFERRO_UNARY_KERNEL

constexpr auto pow_fn = [](auto x, auto y) { return std::pow(x, y); };
const OpDef& def_Pow() {
  static const OpDef d{
      .name = "pow", .kind = OpKind::Pow, .operands = {kNonlinear, kNonlinear}, .elementwise = true,
      .shape_rule = single_type(+[](Types t, const OpAttrs&) { return ops::pow(t[0], t[1]).out; }),
      .kernel = single_result(eval_pow), .jvp = jvp_pow, .transpose = {},
      .formula = fast_form(binary_formula<pow_fn>(), ElementFast::Pow),
      .fusion = Fusion::Elementwise};
  return d;
}

}  // namespace detail
}  // namespace tenferro
