#pragma once
// Internal: the block forms of ElementFormula (tenferro/ops/op_def.hpp) that call the vector math
// tables (kernels/vector_math.hpp), and the function-pointer forms of one-element functions, for the
// formula definitions of the op family files.
#include <cstdint>

#include "kernels/vector_math.hpp"
#include "tenferro/ops/op_def.hpp"

namespace tenferro::detail {

template <exec::MathFn F>
void vm_block_f64(MathAccuracy accuracy, const double* a, const double*, double* y, std::int64_t n) {
  exec::apply(exec::vector_math_for(accuracy), F, a, y, n);
}
template <exec::MathFn F>
void vm_block_f32(MathAccuracy accuracy, const float* a, const float*, float* y, std::int64_t n) {
  exec::apply(exec::vector_math_for(accuracy), F, a, y, n);
}
template <exec::MathFn2 F>
void vm2_block_f64(MathAccuracy accuracy, const double* a, const double* b, double* y, std::int64_t n) {
  exec::apply2(exec::vector_math_for(accuracy), F, a, b, y, n);
}
template <exec::MathFn2 F>
void vm2_block_f32(MathAccuracy accuracy, const float* a, const float* b, float* y, std::int64_t n) {
  exec::apply2(exec::vector_math_for(accuracy), F, a, b, y, n);
}

/// ElementFormula's scalar signature (second argument ignored) from a one-argument function object.
template <const auto& F, class T>
T unary_call(T x, T) {
  return F(x);
}
template <const auto& F, class T>
T binary_call(T x, T y) {
  return F(x, y);
}

/// The formula of a unary function `F` (a generic function object) on f32 and f64, and on c64
/// and c128 too where Complex.
template <const auto& F, bool Complex>
ElementFormula unary_formula() {
  ElementFormula f{.f32 = unary_call<F, float>, .f64 = unary_call<F, double>};
  if constexpr (Complex) {
    f.c64_fn = unary_call<F, c64>;
    f.c128_fn = unary_call<F, c128>;
  }
  return f;
}
/// The formula of a real binary function `F` on f32 and f64, and on c64 and c128 too where Complex.
template <const auto& F, bool Complex = false>
ElementFormula binary_formula() {
  ElementFormula f{.f32 = binary_call<F, float>, .f64 = binary_call<F, double>};
  if constexpr (Complex) {
    f.c64_fn = binary_call<F, c64>;
    f.c128_fn = binary_call<F, c128>;
  }
  return f;
}
/// `f` with F on i64 as well (unary or binary, as `f`'s other members).
template <const auto& F>
ElementFormula with_i64_unary(ElementFormula f) {
  f.i64 = unary_call<F, std::int64_t>;
  return f;
}
template <const auto& F>
ElementFormula with_i64_binary(ElementFormula f) {
  f.i64 = binary_call<F, std::int64_t>;
  return f;
}
/// `f` run by the executor's dedicated loop `id` (ElementFast), with parameter reader `param`.
inline ElementFormula fast_form(ElementFormula f, ElementFast id, std::uint8_t (*param)(const OpAttrs&) = nullptr) {
  f.fast = id;
  f.param = param;
  return f;
}
/// `f` with the vector math tables' function V as its block form.
template <exec::MathFn V>
ElementFormula vectorized(ElementFormula f) {
  f.f64_block = vm_block_f64<V>;
  f.f32_block = vm_block_f32<V>;
  return f;
}
template <exec::MathFn2 V>
ElementFormula vectorized(ElementFormula f) {
  f.f64_block = vm2_block_f64<V>;
  f.f32_block = vm2_block_f32<V>;
  return f;
}

}  // namespace tenferro::detail
