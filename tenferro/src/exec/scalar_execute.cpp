// The interpreter loop of the fast scalar path (scalar_program.hpp). Each opcode evaluates exactly
// what the tensor kernel in src/ops/ computes for one element (the shared formulas of
// ir/elementwise_formulas.hpp, the same libm functions), so that results are bitwise equal.
#include <cmath>
#include <cstdint>

#include "exec/scalar_program.hpp"
#include "ir/elementwise_formulas.hpp"
#include "tenferro/ops/op_def.hpp"

// The dispatch takes handler addresses (labels as values), a GNU extension that g++ and clang++
// both support.
#pragma GCC diagnostic ignored "-Wpedantic"
#ifdef __clang__
#pragma clang diagnostic ignored "-Wgnu-label-as-value"
#endif

namespace tenferro::exec {

namespace {

using Op = ScalarOpcode;

// The formulas shared with the kernels in src/ops/ (ir/elementwise_formulas.hpp), and below the
// forms particular to one rank-0 element.
using namespace formulas;

// Sums and products with two NaN operands: x86 returns the first source operand's NaN, and which
// operand comes first is the compiler's choice, so the kernels' answer depends on their build
// (g++ 12 -O3: x's NaN for add, y's for mul; -O1 differs). The -O3 choice is made explicit here
// (a predictable branch off the common path), so this side does not depend on its build.
template <class T>
T add_of(T x, T y) {
  T r = x + y;
  if (r != r && x != x) r = x + T(0);
  return r;
}
template <class T>
T mul_of(T x, T y) {
  T r = x * y;
  if (r != r && y != y) r = y * T(1);
  return r;
}

// dot_general.cpp on rank-0 operands is a 1x1x1 GEMM with alpha 1, beta 0: the product
// accumulated onto a zero (so a -0 product gives +0); the i64 loop accumulates from 0. When both
// operands are NaN, dgemm returns the left one's payload: chosen explicitly here, because the
// compiler may emit a product's operands in either order.
double dot_f64(double x, double y) { return x != x ? 0.0 + x : 0.0 + x * y; }
float dot_f32(float x, float y) { return 0.0f + x * y; }

/// Runs [ip, end) over the register file r. The hot loop of the scalar path.
///
/// Chaining: every f64 arithmetic or analytic result (f64.add .. f64.dot) is also kept in `acc`,
/// a machine register; an operand flagged in `chain` reads it instead of the register file, so a
/// chain of dependent ops does not wait for a store and reload (store forwarding) per op.
}  // namespace

void execute(const ScalarInstruction* ip, const ScalarInstruction* end, ScalarReg* r,
             const ScalarKernelCall* calls, const ScalarFunctions& functions) {
  // Threaded dispatch: every handler ends in its own indirect jump to the next handler, so the
  // branch predictor learns "what follows a mul" per opcode instead of sharing one jump among all
  // (a single switch's jump mispredicted on a mul/add/sin chain whenever its history was
  // disturbed). The table lists the handlers in opcode order, generated from the opcode list.
#define TENFERRO_SCALAR_HANDLER(name, str, arity) &&handle_##name,
  static const void* const handlers[] = {TENFERRO_SCALAR_OPCODES(TENFERRO_SCALAR_HANDLER)};
#undef TENFERRO_SCALAR_HANDLER
  if (ip == end) return;
  double (*const* f64_fns)(double, double) = functions.f64.data();
  float (*const* f32_fns)(float, float) = functions.f32.data();
  double acc = 0.0;
#define z (r[ip->dst])
#define x (r[ip->a])
#define y (r[ip->b])
#define w (r[ip->c])
#define NEXT                                          \
  if (++ip == end) return;                            \
  goto* handlers[static_cast<std::size_t>(ip->op)]
#define XA ((ip->chain & 1) ? acc : x.f64)
#define YA ((ip->chain & 2) ? acc : y.f64)
#define F64_RESULT(expr)    \
  {                         \
    const double v_ = expr; \
    z.f64 = v_;             \
    acc = v_;               \
    NEXT;                   \
  }
  goto* handlers[static_cast<std::size_t>(ip->op)];
  handle_F64Add: F64_RESULT(add_of(XA, YA));
  handle_F64Mul: F64_RESULT(mul_of(XA, YA));
  handle_F64Neg: F64_RESULT(neg_of(XA));
  handle_F64Div: F64_RESULT(XA / YA);
  handle_F64Abs: F64_RESULT(abs_of(XA));
  handle_F64Sign: F64_RESULT(sign_of(XA));
  handle_F64Max: F64_RESULT(maximum_of(XA, YA));
  handle_F64Min: F64_RESULT(minimum_of(XA, YA));
  handle_F64Clamp: F64_RESULT(clamp_of(XA, YA, w.f64));
  handle_F64Exp: F64_RESULT(std::exp(XA));
  handle_F64Log: F64_RESULT(std::log(XA));
  handle_F64Sin: F64_RESULT(std::sin(XA));
  handle_F64Cos: F64_RESULT(std::cos(XA));
  handle_F64SinCos: {  // glibc's sincos shares sin's and cos's code: the same bits, half the work
    double sn, cs;
    ::sincos(XA, &sn, &cs);
    r[ip->c].f64 = cs;
    F64_RESULT(sn);
  }
  handle_F64Tanh: F64_RESULT(std::tanh(XA));
  handle_F64Sqrt: F64_RESULT(std::sqrt(XA));
  handle_F64Rsqrt: F64_RESULT(1.0 / std::sqrt(XA));
  handle_F64Pow: F64_RESULT(std::pow(XA, YA));
  handle_F64Expm1: F64_RESULT(std::expm1(XA));
  handle_F64Log1p: F64_RESULT(std::log1p(XA));
  handle_F64Dot: F64_RESULT(dot_f64(XA, YA));
  handle_F64Call: F64_RESULT(f64_fns[ip->c](XA, YA));
  handle_F64Eq: z.b = x.f64 == y.f64; NEXT;
  handle_F64Ne: z.b = x.f64 != y.f64; NEXT;
  handle_F64Lt: z.b = x.f64 < y.f64; NEXT;
  handle_F64Le: z.b = x.f64 <= y.f64; NEXT;
  handle_F64Gt: z.b = x.f64 > y.f64; NEXT;
  handle_F64Ge: z.b = x.f64 >= y.f64; NEXT;
  handle_F32Add: z.f32 = add_of(x.f32, y.f32); NEXT;
  handle_F32Mul: z.f32 = mul_of(x.f32, y.f32); NEXT;
  handle_F32Neg: z.f32 = neg_of(x.f32); NEXT;
  handle_F32Div: z.f32 = x.f32 / y.f32; NEXT;
  handle_F32Abs: z.f32 = abs_of(x.f32); NEXT;
  handle_F32Sign: z.f32 = sign_of(x.f32); NEXT;
  handle_F32Max: z.f32 = maximum_of(x.f32, y.f32); NEXT;
  handle_F32Min: z.f32 = minimum_of(x.f32, y.f32); NEXT;
  handle_F32Clamp: z.f32 = clamp_of(x.f32, y.f32, w.f32); NEXT;
  handle_F32Exp: z.f32 = std::exp(x.f32); NEXT;
  handle_F32Log: z.f32 = std::log(x.f32); NEXT;
  handle_F32Sin: z.f32 = std::sin(x.f32); NEXT;
  handle_F32Cos: z.f32 = std::cos(x.f32); NEXT;
  handle_F32Tanh: z.f32 = std::tanh(x.f32); NEXT;
  handle_F32Sqrt: z.f32 = std::sqrt(x.f32); NEXT;
  handle_F32Rsqrt: z.f32 = 1.0f / std::sqrt(x.f32); NEXT;
  handle_F32Pow: z.f32 = std::pow(x.f32, y.f32); NEXT;
  handle_F32Expm1: z.f32 = std::expm1(x.f32); NEXT;
  handle_F32Log1p: z.f32 = std::log1p(x.f32); NEXT;
  handle_F32Dot: z.f32 = dot_f32(x.f32, y.f32); NEXT;
  handle_F32Call: z.f32 = f32_fns[ip->c](x.f32, y.f32); NEXT;
  handle_F32Eq: z.b = x.f32 == y.f32; NEXT;
  handle_F32Ne: z.b = x.f32 != y.f32; NEXT;
  handle_F32Lt: z.b = x.f32 < y.f32; NEXT;
  handle_F32Le: z.b = x.f32 <= y.f32; NEXT;
  handle_F32Gt: z.b = x.f32 > y.f32; NEXT;
  handle_F32Ge: z.b = x.f32 >= y.f32; NEXT;
  handle_I64Add: z.i64 = wrapping_add(x.i64, y.i64); NEXT;
  handle_I64Mul: z.i64 = wrapping_mul(x.i64, y.i64); NEXT;
  handle_I64Neg: z.i64 = neg_of(x.i64); NEXT;
  handle_I64Abs: z.i64 = abs_of(x.i64); NEXT;
  handle_I64Sign: z.i64 = sign_of(x.i64); NEXT;
  handle_I64Max: z.i64 = maximum_of(x.i64, y.i64); NEXT;
  handle_I64Min: z.i64 = minimum_of(x.i64, y.i64); NEXT;
  handle_I64Clamp: z.i64 = clamp_of(x.i64, y.i64, w.i64); NEXT;
  handle_I64Dot: z.i64 = wrapping_add(std::int64_t{0}, wrapping_mul(x.i64, y.i64)); NEXT;
  handle_I64Eq: z.b = x.i64 == y.i64; NEXT;
  handle_I64Ne: z.b = x.i64 != y.i64; NEXT;
  handle_I64Lt: z.b = x.i64 < y.i64; NEXT;
  handle_I64Le: z.b = x.i64 <= y.i64; NEXT;
  handle_I64Gt: z.b = x.i64 > y.i64; NEXT;
  handle_I64Ge: z.b = x.i64 >= y.i64; NEXT;
  handle_BoolEq: z.b = x.b == y.b; NEXT;
  handle_BoolNe: z.b = x.b != y.b; NEXT;
  handle_BoolLt: z.b = x.b < y.b; NEXT;
  handle_BoolLe: z.b = x.b <= y.b; NEXT;
  handle_BoolGt: z.b = x.b > y.b; NEXT;
  handle_BoolGe: z.b = x.b >= y.b; NEXT;
  handle_Select: z = select_of(x.b, y, w); NEXT;
  handle_F64ToF32: z.f32 = convert_of<float>(x.f64); NEXT;
  handle_F64ToI64: z.i64 = convert_of<std::int64_t>(x.f64); NEXT;
  handle_F64ToBool: z.b = convert_of<bool>(x.f64); NEXT;
  handle_F32ToF64: z.f64 = convert_of<double>(x.f32); NEXT;
  handle_F32ToI64: z.i64 = convert_of<std::int64_t>(x.f32); NEXT;
  handle_F32ToBool: z.b = convert_of<bool>(x.f32); NEXT;
  handle_I64ToF64: z.f64 = convert_of<double>(x.i64); NEXT;
  handle_I64ToF32: z.f32 = convert_of<float>(x.i64); NEXT;
  handle_I64ToBool: z.b = convert_of<bool>(x.i64); NEXT;
  handle_BoolToF64: z.f64 = convert_of<double>(x.b); NEXT;
  handle_BoolToF32: z.f32 = convert_of<float>(x.b); NEXT;
  handle_BoolToI64: z.i64 = convert_of<std::int64_t>(x.b); NEXT;
  handle_Kernel: calls[ip->c].run(r); NEXT;
#undef F64_RESULT
#undef YA
#undef XA
#undef NEXT
#undef w
#undef y
#undef x
#undef z
}

}  // namespace tenferro::exec
