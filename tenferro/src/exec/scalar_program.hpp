#pragma once
// The fast scalar path: programs whose values are all rank-0 run through a compact interpreter
// with no per-instruction allocation.
//
// lower() turns a CompiledProgram<StdTensorOp> into a flat register program: one 8-byte register
// per distinct value, instructions {opcode, dst, a, b, c} with a dense typed opcode (f64.add,
// f32.sin, i64.max, ...), dispatched by threaded code (scalar_execute.cpp). At lower time
//   - constants and zeros become registers prefilled in a template register file;
//   - instructions whose operands are all constants are evaluated (by the same interpreter code)
//     into the template, so they cost nothing per run;
//   - rank-0 reshape / transpose / broadcast_in_dim / reduce_* (over zero axes), convert to the
//     same dtype, real/conj of a real value alias their operand's register (no instruction);
//   - imag of a real value is the constant +0.
// Every instruction computes exactly what the tensor kernel (src/ops/*.cpp) computes for one
// element, with the same formula, the same libm function and in the same precision (f32 in
// float), so results are bitwise identical to CompiledProgram::run.
//
// Supported: dtypes f64, f32, i64 and bool (complex -> nullopt). Ops: every elementwise op of
// op_kind.hpp on the dtypes its shape rule admits (those given by a formula through its scalar
// functions), dot_general, reduce_*, transpose, reshape,
// broadcast_in_dim, convert between supported dtypes, constant, zeros. Any other op whose
// operands and results are all rank-0 values of these dtypes (multi-output ops, registered ops)
// runs its tensor kernel through a Kernel instruction (ScalarKernelCall).
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "computegraph/compiled_program.hpp"
#include "tenferro/ops/std_tensor_op.hpp"
#include "tenferro/tensor.hpp"
#include "tenferro/ops/make.hpp"

namespace tenferro::exec {

/// One register: the value of one rank-0 f64, f32, i64 or bool. Each register has one static
/// dtype; only the member of that dtype is ever written or read (copies move the whole object).
union ScalarReg {
  double f64;
  float f32;
  std::int64_t i64;
  bool b;
};

/// Typed scalar opcodes, listed once: X(Enum, "printed name", arity).
#define TENFERRO_SCALAR_OPCODES(X)                                                              \
  X(F64Add, "f64.add", 2) X(F64Mul, "f64.mul", 2) X(F64Neg, "f64.neg", 1)                      \
  X(F64Div, "f64.div", 2) X(F64Abs, "f64.abs", 1) X(F64Sign, "f64.sign", 1)                    \
  X(F64Max, "f64.maximum", 2) X(F64Min, "f64.minimum", 2) X(F64Clamp, "f64.clamp", 3)          \
  X(F64Exp, "f64.exp", 1) X(F64Log, "f64.log", 1) X(F64Sin, "f64.sin", 1)                      \
  X(F64Cos, "f64.cos", 1) X(F64Tanh, "f64.tanh", 1) X(F64Sqrt, "f64.sqrt", 1)                  \
  X(F64Rsqrt, "f64.rsqrt", 1) X(F64Pow, "f64.pow", 2) X(F64Expm1, "f64.expm1", 1)              \
  X(F64Log1p, "f64.log1p", 1) X(F64Dot, "f64.dot", 2)                                          \
  X(F64Call, "f64.call", 2) /* r[dst] = formula_c(r[a], r[b]): an op given by its formula */ \
  X(F64SinCos, "f64.sincos", 1) /* r[dst] = sin(r[a]), r[c] = cos(r[a]) */                   \
  X(F64Eq, "f64.eq", 2) X(F64Ne, "f64.ne", 2) X(F64Lt, "f64.lt", 2)                            \
  X(F64Le, "f64.le", 2) X(F64Gt, "f64.gt", 2) X(F64Ge, "f64.ge", 2)                            \
  X(F32Add, "f32.add", 2) X(F32Mul, "f32.mul", 2) X(F32Neg, "f32.neg", 1)                      \
  X(F32Div, "f32.div", 2) X(F32Abs, "f32.abs", 1) X(F32Sign, "f32.sign", 1)                    \
  X(F32Max, "f32.maximum", 2) X(F32Min, "f32.minimum", 2) X(F32Clamp, "f32.clamp", 3)          \
  X(F32Exp, "f32.exp", 1) X(F32Log, "f32.log", 1) X(F32Sin, "f32.sin", 1)                      \
  X(F32Cos, "f32.cos", 1) X(F32Tanh, "f32.tanh", 1) X(F32Sqrt, "f32.sqrt", 1)                  \
  X(F32Rsqrt, "f32.rsqrt", 1) X(F32Pow, "f32.pow", 2) X(F32Expm1, "f32.expm1", 1)              \
  X(F32Log1p, "f32.log1p", 1) X(F32Dot, "f32.dot", 2) X(F32Call, "f32.call", 2)               \
  X(F32Eq, "f32.eq", 2) X(F32Ne, "f32.ne", 2) X(F32Lt, "f32.lt", 2)                            \
  X(F32Le, "f32.le", 2) X(F32Gt, "f32.gt", 2) X(F32Ge, "f32.ge", 2)                            \
  X(I64Add, "i64.add", 2) X(I64Mul, "i64.mul", 2) X(I64Neg, "i64.neg", 1)                      \
  X(I64Abs, "i64.abs", 1) X(I64Sign, "i64.sign", 1) X(I64Max, "i64.maximum", 2)                \
  X(I64Min, "i64.minimum", 2) X(I64Clamp, "i64.clamp", 3) X(I64Dot, "i64.dot", 2)              \
  X(I64Eq, "i64.eq", 2) X(I64Ne, "i64.ne", 2) X(I64Lt, "i64.lt", 2)                            \
  X(I64Le, "i64.le", 2) X(I64Gt, "i64.gt", 2) X(I64Ge, "i64.ge", 2)                            \
  X(BoolEq, "bool.eq", 2) X(BoolNe, "bool.ne", 2) X(BoolLt, "bool.lt", 2)                      \
  X(BoolLe, "bool.le", 2) X(BoolGt, "bool.gt", 2) X(BoolGe, "bool.ge", 2)                      \
  X(Select, "select", 3)                                                                        \
  X(F64ToF32, "f64.to_f32", 1) X(F64ToI64, "f64.to_i64", 1) X(F64ToBool, "f64.to_bool", 1)     \
  X(F32ToF64, "f32.to_f64", 1) X(F32ToI64, "f32.to_i64", 1) X(F32ToBool, "f32.to_bool", 1)     \
  X(I64ToF64, "i64.to_f64", 1) X(I64ToF32, "i64.to_f32", 1) X(I64ToBool, "i64.to_bool", 1)     \
  X(BoolToF64, "bool.to_f64", 1) X(BoolToF32, "bool.to_f32", 1) X(BoolToI64, "bool.to_i64", 1)     \
  X(Kernel, "kernel", 0) /* runs kernel call number c (ScalarKernelCall) on its registers */

enum class ScalarOpcode : std::uint8_t {
#define TENFERRO_SCALAR_ENUM(name, str, arity) name,
  TENFERRO_SCALAR_OPCODES(TENFERRO_SCALAR_ENUM)
#undef TENFERRO_SCALAR_ENUM
};

/// One instruction: r[dst] = op(r[a], r[b], r[c]) (unused operands are 0). `chain` bit k set:
/// operand k is the previous instruction's f64 result, read from the interpreter's accumulator.
/// F64Call and F32Call evaluate the scalar function number `c` of the program's ScalarFunctions
/// (an op's formula, OpDef::formula) on r[a] and r[b] (r[b] = r[a] for unary ops).
struct ScalarInstruction {
  ScalarOpcode op;
  std::uint8_t chain = 0;
  std::uint32_t dst, a, b, c;
};

/// An op the interpreter has no opcode for (a multi-output op such as reduce_max_index or frexp, a
/// registered op, a formula op on i64): its tensor kernel runs on rank-0 tensors made from the
/// registers `in` and writes the registers `out`, one per result. Slower than an opcode (a few
/// allocations), but the rest of the program stays on the scalar path, and the results are the
/// kernel's own, so bitwise equal to the tensor path by construction.
struct ScalarKernelCall {
  StdTensorOp op;
  std::vector<std::uint32_t> in, out;
  std::vector<DType> in_dtypes;
  /// Reads the operands from r, runs the kernel, writes the results to r.
  void run(ScalarReg* r) const;
};

/// The formulas' scalar functions that a program's F64Call and F32Call instructions index, and
/// the ops they come from (for printing).
struct ScalarFunctions {
  std::vector<double (*)(double, double)> f64;
  std::vector<float (*)(float, float)> f32;
  std::vector<const OpDef*> defs;
  /// The number of def's formula, added on first use.
  std::uint32_t index_of(const OpDef* def);
};

/// Runs the instructions [begin, end) over the register file r (scalar_execute.cpp): the hot
/// loop of the scalar path, also used by lower() to fold instructions on constants. `calls`: the
/// table that Kernel instructions index; `functions`: the one that F64Call and F32Call index.
void execute(const ScalarInstruction* begin, const ScalarInstruction* end, ScalarReg* r,
             const ScalarKernelCall* calls, const ScalarFunctions& functions);

class ScalarProgram {
 public:
  /// The compact form of `program`, or nullopt unless every value (inputs, intermediates and
  /// outputs) is rank-0 and every op and dtype is supported.
  static std::optional<ScalarProgram> lower(const computegraph::CompiledProgram<StdTensorOp>& program);

  /// Same contract as CompiledProgram::run (inputs by position; throws BindingError on a count
  /// mismatch and DTypeError/ShapeError naming the input if an input's type differs from the
  /// program's). Thread-safe: per-run registers live in a per-thread buffer.
  std::vector<Tensor> run(std::span<const Tensor> inputs) const;
  std::vector<Tensor> run(std::initializer_list<Tensor> inputs) const {
    return run(std::span<const Tensor>(inputs.begin(), inputs.size()));
  }

  /// run() for a caller that runs the program many times on values it holds itself (a loop body,
  /// src/ops/scan.cpp): inputs[i] and outputs[k] point at one element of input i's and output
  /// k's dtype. No checks (the caller guarantees the dtypes) and no Tensor per value. Inputs are
  /// all read before any output is written, so an output may point at an input.
  void run_raw(std::span<const void* const> inputs, std::span<void* const> outputs) const;
  /// The dtype of input i and of output k.
  DType input_dtype(std::size_t i) const { return dtypes_[input_regs_[i]]; }
  DType output_dtype(std::size_t k) const { return dtypes_[output_regs_[k]]; }

  /// Deterministic text form (one instruction per line), for golden tests and debugging.
  std::string print() const;

  std::size_t instruction_count() const { return code_.size(); }
  std::size_t register_count() const { return dtypes_.size(); }

 private:
  ScalarProgram() = default;

  std::vector<ScalarInstruction> code_;
  std::vector<ScalarKernelCall> calls_;
  ScalarFunctions functions_;
  /// Registers [0, constants_.size()) hold constants; they are copied into each run's registers.
  std::vector<ScalarReg> constants_;
  std::vector<DType> dtypes_;  // per register
  std::vector<TensorKey> input_keys_;
  std::vector<std::uint32_t> input_regs_;
  std::vector<std::uint32_t> output_regs_;
};

}  // namespace tenferro::exec
