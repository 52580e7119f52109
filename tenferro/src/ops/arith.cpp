// Elementwise arithmetic: add, mul, neg, div, conj, real, imag, and the shared unary shape rule.
// Order: shape/dtype rules, kernels, JVP rules, transpose rules.
#include <complex>

// Family files switch over their own subset of OpKind; exhaustiveness is enforced in dispatch.cpp.
#pragma GCC diagnostic ignored "-Wswitch-enum"

#include "elementwise_formulas.hpp"
#include "emit.hpp"
#include "family.hpp"

namespace tenferro {

// ---- shape/dtype rules -------------------------------------------------------------------------

namespace detail {
std::string types_string(std::initializer_list<const TensorType*> types) {
  std::string s;
  for (const TensorType* t : types) s += (s.empty() ? "" : ", ") + t->to_string();
  return s;
}

/// Operands of an elementwise op must agree exactly (broadcasting is explicit).
void require_same_type(const char* op, const TensorType& a, const TensorType& b) {
  if (a.shape != b.shape) {
    throw ShapeError(std::string(op) + ": operand shapes differ (" + types_string({&a, &b}) +
                     "); expected equal shapes (broadcast first)");
  }
  if (a.dtype != b.dtype) {
    throw DTypeError(std::string(op) + ": operand dtypes differ (" + types_string({&a, &b}) +
                     "); expected one dtype (convert first)");
  }
}

void require_dtype(const char* op, const TensorType& a, bool ok, const char* expected) {
  if (!ok) {
    throw DTypeError(std::string(op) + ": operand " + a.to_string() + " has the wrong dtype; expected " +
                     expected);
  }
}

StdTensorOp make(OpKind kind, TensorType out, OpAttrs attrs) {
  return StdTensorOp{kind, std::move(attrs), std::move(out)};
}
}  // namespace detail

namespace ops {
using detail::make;

namespace {
StdTensorOp numeric_binary(OpKind kind, const TensorType& a, const TensorType& b) {
  const char* name = op_info(kind).name;
  detail::require_same_type(name, a, b);
  detail::require_dtype(name, a, a.dtype != DType::Bool, "a numeric dtype (not bool)");
  return make(kind, a);
}
}  // namespace

StdTensorOp add(const TensorType& a, const TensorType& b) { return numeric_binary(OpKind::Add, a, b); }
StdTensorOp mul(const TensorType& a, const TensorType& b) { return numeric_binary(OpKind::Mul, a, b); }
StdTensorOp div(const TensorType& a, const TensorType& b) {
  detail::require_same_type("div", a, b);
  detail::require_dtype("div", a, is_inexact(a.dtype), "f32, f64, c64 or c128");
  return make(OpKind::Div, a);
}

StdTensorOp unary(OpKind kind, const TensorType& a) {
  const char* name = op_info(kind).name;
  if (op_info(kind).arity != 1 || !op_info(kind).elementwise) {
    throw Error(std::string("ops::unary: ") + name + " is not an elementwise unary op");
  }
  switch (kind) {
    case OpKind::Neg:
      detail::require_dtype(name, a, a.dtype != DType::Bool, "a numeric dtype (not bool)");
      return make(kind, a);
    case OpKind::Conj: return make(kind, a);
    case OpKind::Real:
    case OpKind::Imag:
    case OpKind::Abs:
      detail::require_dtype(name, a, a.dtype != DType::Bool, "a numeric dtype (not bool)");
      return make(kind, TensorType{real_dtype(a.dtype), a.shape});
    case OpKind::Sign:
      detail::require_dtype(name, a, a.dtype != DType::Bool, "a numeric dtype (not bool)");
      return make(kind, a);
    default:
      detail::require_dtype(name, a, is_inexact(a.dtype), "f32, f64, c64 or c128");
      return make(kind, a);
  }
}

}  // namespace ops

// ---- kernels -----------------------------------------------------------------------------------

namespace detail {
namespace {
using formulas::is_complex_v;

template <class F>
Tensor map_binary(const StdTensorOp& op, const Tensor& a, const Tensor& b, F&& f) {
  Tensor r(op.out);
  visit_dtype(a.dtype(), [&](auto zero) {
    using T = decltype(zero);
    if constexpr (!std::is_same_v<T, bool>) {
      const T* x = a.data<T>();
      const T* y = b.data<T>();
      T* z = r.data<T>();
      const std::int64_t n = r.numel();
      for (std::int64_t i = 0; i < n; ++i) z[i] = f(x[i], y[i]);
    }
  });
  return r;
}
}  // namespace

Tensor eval_arith(const StdTensorOp& op, Operands in) {
  switch (op.kind) {
    case OpKind::Add: return map_binary(op, *in[0], *in[1], [](auto x, auto y) { return formulas::wrapping_add(x, y); });
    case OpKind::Mul: return map_binary(op, *in[0], *in[1], [](auto x, auto y) { return formulas::wrapping_mul(x, y); });
    case OpKind::Div: return map_binary(op, *in[0], *in[1], [](auto x, auto y) { return x / y; });
    default: break;
  }
  const Tensor& a = *in[0];
  Tensor r(op.out);
  const std::int64_t n = a.numel();
  visit_dtype(a.dtype(), [&](auto zero) {
    using T = decltype(zero);
    if constexpr (!std::is_same_v<T, bool>) {
      const T* x = a.data<T>();
      if constexpr (is_complex_v<T>) {
        using R = typename T::value_type;
        if (op.kind == OpKind::Real || op.kind == OpKind::Imag) {
          R* z = r.data<R>();
          for (std::int64_t i = 0; i < n; ++i) z[i] = op.kind == OpKind::Real ? x[i].real() : x[i].imag();
          return;
        }
      }
      T* z = r.data<T>();
      for (std::int64_t i = 0; i < n; ++i) {
        switch (op.kind) {
          case OpKind::Neg: z[i] = formulas::neg_of(x[i]); break;
          case OpKind::Conj:
            if constexpr (is_complex_v<T>) z[i] = std::conj(x[i]); else z[i] = x[i];
            break;
          case OpKind::Real: z[i] = x[i]; break;  // real operand: identity
          case OpKind::Imag: z[i] = T{}; break;   // real operand: zero
          default: break;
        }
      }
    } else {
      if (op.kind == OpKind::Conj) r = a.clone();
    }
  });
  return r;
}

// ---- JVP rules ---------------------------------------------------------------------------------

Tangents jvp_arith(const StdTensorOp& op, const JvpArgs& a) {
  Emit e(a.b);
  const auto& t = a.t;
  switch (op.kind) {
    case OpKind::Add: return {e.sum(t[0], t[1])};
    case OpKind::Mul: {  // d(x*y) = y*dx + x*dy
      std::optional<LocalValueId> dx, dy;
      if (t[0]) dx = e.scale(Emit::ext(a.x[1]), *t[0]);
      if (t[1]) dy = e.scale(Emit::ext(a.x[0]), *t[1]);
      return {e.sum(dx, dy)};
    }
    case OpKind::Div: {  // d(x/y) = dx/y - (q)*dy with q = (x/y)/y
      std::optional<LocalValueId> dx, dy;
      if (t[0]) dx = e.divide(*t[0], Emit::ext(a.x[1]));
      if (t[1]) {
        PV q = e.primal(ops::div(op.out, op.out), {Emit::ext(a.y[0]), Emit::ext(a.x[1])});
        dy = e.neg(e.scale(q, *t[1]));
      }
      return {e.sum(dx, dy)};
    }
    case OpKind::Neg:
    case OpKind::Conj:
    case OpKind::Real: return {e.unary_linear(op.kind, *t[0])};
    case OpKind::Imag:
      if (!is_complex(type_of(a.x[0]).dtype)) return {std::nullopt};  // imag of a real is 0
      return {e.unary_linear(op.kind, *t[0])};
    default: break;
  }
  throw tidu::ADRuleError::missing(op.name(), tidu::RuleKind::Jvp);
}

// ---- transpose rules ---------------------------------------------------------------------------
// Adjoints for <a, b> = Re(sum conj(a) * b) (DESIGN.md complex convention).

Tangents transpose_arith(const StdTensorOp& op, const TransposeArgs& a) {
  Emit e(a.b);
  const auto& role = a.role;
  switch (op.kind) {
    case OpKind::Add:
      return {role.is_active(0) ? std::optional(a.ct) : std::nullopt,
              role.is_active(1) ? std::optional(a.ct) : std::nullopt};
    case OpKind::Mul: {  // z -> c*z transposes to ct -> conj(c)*ct
      if (role.is_active(0) == role.is_active(1)) {
        not_linear(op, "mul is linear only when exactly one operand is active");
      }
      const std::size_t active = role.is_active(0) ? 0 : 1;
      Tangents r(2);
      r[active] = e.scale(e.conj_fixed(a.x[1 - active]), a.ct);
      return r;
    }
    case OpKind::Div:
      if (!role.is_active(0) || role.is_active(1)) not_linear(op, "div is linear only in its numerator");
      return {e.divide(a.ct, e.conj_fixed(a.x[1])), std::nullopt};
    case OpKind::Neg:
    case OpKind::Conj: return {e.unary_linear(op.kind, a.ct)};
    case OpKind::Real: {  // adjoint of Re: embed the real cotangent
      const TensorType& in = e.type(a.x[0]);
      if (!is_complex(in.dtype)) return {a.ct};
      return {e.linear(ops::convert(e.type(Emit::local(a.ct)), in.dtype), {Emit::local(a.ct)}, {true})};
    }
    case OpKind::Imag: {  // <ct, Im z> = Re(conj(i*ct) z): the adjoint is ct -> i*ct
      const TensorType& in = e.type(a.x[0]);
      LocalValueId c = e.linear(ops::convert(e.type(Emit::local(a.ct)), in.dtype), {Emit::local(a.ct)}, {true});
      PV i_scalar = e.primal(ops::constant(Tensor::scalar(c128(0.0, 1.0), in.dtype)), {});
      PV i_full = e.primal(ops::broadcast_in_dim(TensorType{in.dtype, {}}, in.shape, {}), {i_scalar});
      return {e.scale(i_full, c)};
    }
    default: break;
  }
  throw tidu::ADRuleError::missing(op.name(), tidu::RuleKind::Transpose);
}

}  // namespace detail
}  // namespace tenferro
