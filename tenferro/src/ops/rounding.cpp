// Rounding and remainders on f32 and f64: floor, ceil, round (to nearest, ties to even, as NumPy,
// JAX and PyTorch round), trunc, frac (x - trunc(x), the fractional part with x's sign, as
// torch.frac); fmod (the C remainder, the sign of the dividend) and remainder
// (the floored remainder, the sign of the divisor, Python's % and torch.remainder). Each is given
// by its formula (ElementFormula); all are exact, so the scalar function is also the block form.
// frexp splits x into a mantissa in [1/2, 1) (with x's sign) and an i64 exponent, x = m 2^e (two
// results; x = 0, inf, NaN give m = x, e = 0); its mantissa's JVP is 2^-e dx, the exponent has
// no tangent.
//
// Derivatives: the rounding functions are piecewise constant, so their operand is declared
// non-differentiable and their results carry no tangent (zero, as in the peers; at the jumps the
// derivative does not exist and zero is returned too). frac = x - trunc(x) has derivative 1 (its
// tangent is dx itself, as in PyTorch), also at the jumps. fmod(a, b) = a - trunc(a / b) b and
// remainder(a, b) = a - floor(a / b) b are piecewise linear: da - trunc(a / b) db and
// da - floor(a / b) db.
//
// Where they are not smooth (OpDef::discontinuity): the rounding functions and frac jump at the
// integers (round at the integers plus 1/2), fmod and remainder where a / b crosses an integer;
// tests draw the divisor of fmod and remainder positive (Domain::Positive), away from 0 where the
// jumps crowd together.
#include <cmath>
#include <cstdint>

#include "ir/family.hpp"
#include "ir/vector_blocks.hpp"
#include "tenferro/ops/rule.hpp"

namespace tenferro::detail {

namespace {
constexpr auto floor_fn = [](auto x) { return std::floor(x); };
constexpr auto ceil_fn = [](auto x) { return std::ceil(x); };
// nearbyint rounds in the current rounding mode, which is to nearest, ties to even, unless a
// program changes it (fesetround); it raises no inexact exception.
constexpr auto round_fn = [](auto x) { return std::nearbyint(x); };
constexpr auto trunc_fn = [](auto x) { return std::trunc(x); };
/// x - trunc(x), exact (trunc(x) and x share their sign and |x - trunc(x)| < 1 is a multiple of
/// x's last place); frac(+-inf) = inf - inf = NaN, as torch.frac.
constexpr auto frac_fn = [](auto x) { return x - std::trunc(x); };
constexpr auto fmod_fn = [](auto a, auto b) { return std::fmod(a, b); };
/// a - floor(a / b) b computed exactly: fmod's result, moved by b when its sign differs from b's
/// (a zero result takes b's sign, as in Python and PyTorch).
constexpr auto remainder_fn = [](auto a, auto b) {
  auto r = std::fmod(a, b);
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  if (r == 0) r = std::copysign(decltype(r)(0), b);
  return r;
};

/// The JVP of a - q(a / b) b, q = trunc or floor: da - q(a / b) db.
template <OpKind Quotient>
Tangents jvp_remainder(const StdTensorOp& op, const JvpArgs& args) {
  RuleTrace r(args.b);
  std::optional<Traced> da, db;
  if (args.t[0]) da = r.linear(*args.t[0]);
  if (args.t[1]) {
    const Traced ratio = r.fixed(args.x[0]) / r.fixed(args.x[1]);
    db = -apply_unary(ops::unary(Quotient, ratio.type()), ratio) * r.linear(*args.t[1]);
  }
  return {r.result(sum_present(da, db), op, tidu::RuleKind::Jvp)};
}
std::vector<TensorType> frexp_types(Types t, const OpAttrs&) {
  detail::require_dtype("frexp", t[0], is_floating(t[0].dtype), "f32 or f64");
  return {t[0], TensorType{DType::I64, t[0].shape}};
}

template <class T>
void frexp_into(const Tensor& x, Tensor& mantissa, Tensor& exponent) {
  const T* in = x.data<T>();
  T* m = mantissa.data<T>();
  std::int64_t* e = exponent.data<std::int64_t>();
  for (std::int64_t i = 0; i < x.numel(); ++i) {
    int k = 0;
    m[i] = std::frexp(in[i], &k);
    e[i] = std::isfinite(in[i]) ? k : 0;
  }
}

void eval_frexp(const StdTensorOp& op, Operands in, std::span<Tensor> out) {
  out[0] = Tensor::uninitialized(op.output_type(0));
  out[1] = Tensor::uninitialized(op.output_type(1));
  if (in[0]->dtype() == DType::F64) {
    frexp_into<double>(*in[0], out[0], out[1]);
  } else {
    frexp_into<float>(*in[0], out[0], out[1]);
  }
}

/// dm = 2^-e dx (exact: a power of two), de none.
Tangents jvp_frexp(const StdTensorOp& op, const JvpArgs& a) {
  RuleTrace r(a.b);
  const Traced scale = exp2(-astype(r.fixed(a.y[1]), type_of(a.x[0]).dtype));
  return {r.result(scale * r.linear_or_zeros(a.t[0], type_of(a.x[0])), op, tidu::RuleKind::Jvp), std::nullopt};
}
}  // namespace

const OpDef& def_Frexp() {
  static const OpDef d{.name = "frexp", .kind = OpKind::Frexp, .operands = {kNonlinear}, .outputs = 2,
                       .elementwise = true, .shape_rule = frexp_types, .kernel = eval_frexp, .jvp = jvp_frexp};
  return d;
}

const OpDef& def_Floor() {
  static const OpDef d = formula_op("floor", OpKind::Floor, {kNoGrad}, unary_formula<floor_fn, false>(), {}, Domain::Steps,
                                    Discontinuity::JumpsAtIntegers);
  return d;
}
const OpDef& def_Ceil() {
  static const OpDef d = formula_op("ceil", OpKind::Ceil, {kNoGrad}, unary_formula<ceil_fn, false>(), {}, Domain::Steps,
                                    Discontinuity::JumpsAtIntegers);
  return d;
}
const OpDef& def_Round() {
  static const OpDef d = formula_op("round", OpKind::Round, {kNoGrad}, unary_formula<round_fn, false>(), {}, Domain::Steps,
                                    Discontinuity::JumpsAtHalfIntegers);
  return d;
}
const OpDef& def_Trunc() {
  static const OpDef d = formula_op("trunc", OpKind::Trunc, {kNoGrad}, unary_formula<trunc_fn, false>(), {}, Domain::Steps,
                                    Discontinuity::JumpsAtIntegers);
  return d;
}
const OpDef& def_Frac() {
  static const OpDef d = formula_op("frac", OpKind::Frac, {kNonlinear}, unary_formula<frac_fn, false>(),
                                    [](const StdTensorOp&, const JvpArgs& a) { return Tangents{a.t[0]}; }, Domain::Any,
                                    Discontinuity::JumpsAtIntegers);
  return d;
}
const OpDef& def_Fmod() {
  static const OpDef d = formula_op("fmod", OpKind::Fmod, {kNonlinear, kNonlinear}, binary_formula<fmod_fn>(),
                                    jvp_remainder<OpKind::Trunc>, Domain::Positive, Discontinuity::JumpsAtQuotientIntegers);
  return d;
}
const OpDef& def_Remainder() {
  static const OpDef d = formula_op("remainder", OpKind::Remainder, {kNonlinear, kNonlinear},
                                    binary_formula<remainder_fn>(), jvp_remainder<OpKind::Floor>, Domain::Positive,
                                    Discontinuity::JumpsAtQuotientIntegers);
  return d;
}

}  // namespace tenferro::detail
