#pragma once
// Internal: the executor's IR. A compiled program (computegraph::CompiledProgram<StdTensorOp>) is
// lowered into an ExecProgram: SSA values with static types, and steps that each read and write
// values. A step is either one StdTensorOp (run by its kernel) or a fused loop kernel over several
// elementwise ops (fused_kernel.hpp). Passes (passes.hpp) rewrite the step list; the executor
// (executor.hpp) then plans buffer releases and runs it. Every stage prints as deterministic text.
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "computegraph/compiled_program.hpp"
#include "tenferro/ops/std_tensor_op.hpp"
#include "tenferro/ops/make.hpp"

namespace tenferro::exec {

using ValueId = std::uint32_t;

/// How a fused kernel reads an input at flat index i of its iteration space of `size` elements.
enum class Access : std::uint8_t {
  Full,     // x[i]: the input has the iteration shape
  Scalar,   // x[0]: a one-element input broadcast to every element
  Inner,    // x[i % period]: the input fills the trailing axes (a row vector broadcast over rows)
  Outer,    // x[i / period]: the input fills the leading axes (a column broadcast over columns)
  Strided,  // x[sum_d coord_d(i) stride_d]: any other broadcast (axes inserted between the
            // input's), read by stepping the coordinates of i over `extent`
};

struct FusedInput {
  static constexpr std::size_t kMaxStridedRank = 6;
  Access access = Access::Full;
  std::int64_t period = 1;  // Inner: the input's element count; Outer: the broadcast inner extent
  /// Strided: the iteration space as `rank` merged axes, outermost first, and the input's element
  /// stride along each (0 along broadcast axes).
  std::uint8_t rank = 0;
  std::array<std::int64_t, kMaxStridedRank> extent{}, stride{};
};

/// Which function computes a Sin or Cos instruction. SLEEF's sincos gives both values in one call
/// for about two thirds of the cost of sin plus cos, but its results differ from sin's and cos's
/// in the last bit for about 3% of inputs. lower() therefore picks the function per value, before
/// any pass: every sin and cos of a value that has both is a half of sincos (Separate otherwise),
/// so fused and unfused programs agree bit for bit, and fusion only merges a SinCosHalf sin and
/// cos of one register into one SinCosPair call.
enum class Trig : std::uint8_t {
  Separate,    // sin (cos) alone
  SinCosHalf,  // one half of sincos
  SinCosPair,  // kind Sin: r[dst] = the sin half and r[c] = the cos half, from one call
};

/// One instruction of a fused kernel: register `dst` = the formula of `def` (registers a, b, c) (a
/// SinCosPair writes `c` too). Registers 0 .. inputs-1 hold the inputs; the others are scratch,
/// reused once their value is dead.
struct FusedInstr {
  // Read from the op's definition when the instruction is made, so that the interpreter's inner
  // loop (one pass per instruction and 256-element block) looks nothing up.
  ElementFast fast = ElementFast::None;  // the interpreter's own loop, else `formula`'s functions
  std::uint8_t param = 0;                // the formula's parameter (compare: the direction)
  Trig trig = Trig::Separate;            // Sin and Cos only
  std::uint16_t dst = 0, a = 0, b = 0, c = 0;
  DType to = DType::F64;                 // the result's dtype (convert's target)
  std::uint8_t arity = 1;                // operand count
  const ElementFormula* formula = nullptr;
  const OpDef* def = nullptr;   // the op, for printing (a SinCosPair: the sin)
  const OpDef* def2 = nullptr;  // a SinCosPair: the cos
};

struct CompiledRuns;  // arith_jit.hpp

/// What a kernel produces from one register: the elementwise value, or the sum of all elements.
enum class OutputMode : std::uint8_t { Store, SumAll };

struct FusedOutput {
  std::uint16_t reg = 0;
  OutputMode mode = OutputMode::Store;
};

/// A loop kernel over `size` elements computing in `dtype` (f32 or f64). Registers hold every
/// value in that dtype: bools (compare, select, convert) as 0 and 1, and in an f64 kernel the f32
/// results of convert exactly (rounded to f32 by the convert, widened back losslessly).
struct FusedKernel {
  DType dtype = DType::F64;
  std::int64_t size = 0;
  std::vector<FusedInput> inputs;  // aligned with the step's `in`
  std::vector<FusedInstr> code;
  std::vector<FusedOutput> outputs;  // aligned with the step's `out`
  std::uint16_t register_count = 0;  // inputs plus scratch registers
  /// Its runs of arithmetic as machine code (arith_jit.hpp; pass compile_arithmetic), or null:
  /// the interpreter then runs every instruction.
  std::shared_ptr<const CompiledRuns> compiled;
};

enum class StepKind : std::uint8_t { Op, Fused, Concurrent };

struct Step {
  StepKind kind = StepKind::Op;
  StdTensorOp op;                             // kind == Op
  std::shared_ptr<const FusedKernel> fused;   // kind == Fused
  /// kind == Concurrent: independent Op steps run at the same time, one per thread (pass
  /// run_concurrently); `in` and `out` are theirs in order, outputs concatenated.
  std::shared_ptr<const std::vector<Step>> members;
  std::vector<ValueId> in, out;
};

struct ExecProgram {
  std::vector<TensorType> types;  // indexed by ValueId
  std::vector<Step> steps;        // in execution order
  std::vector<ValueId> inputs;    // the program's positional inputs
  std::vector<ValueId> outputs;   // the program's outputs (a value may appear more than once)
};

/// One step per instruction of `program`; elementwise ops and full reductions of f32/f64 values
/// become one-instruction fused kernels, so that fused and unfused programs run the same loops.
/// Sin and cos instructions get their Trig here: SinCosHalf for a value with both, else Separate.
ExecProgram lower(const computegraph::CompiledProgram<StdTensorOp>& program);

/// Whether an elementwise op (or a convert) with operands of these dtypes can be an instruction of
/// a fused kernel.
bool fusible_kind(const StdTensorOp& op, std::span<const DType> operand_dtypes);

/// The one-instruction kernel that runs the elementwise `op` alone (fusible_kind, a non-empty
/// result), written into `k` (whose vectors keep their capacity); false, `k` untouched, otherwise.
/// lower() and eager mode (which runs each op as it is recorded) both build their kernels here, so
/// that an op gives the same bits in a program and eagerly.
bool single_op_kernel(const StdTensorOp& op, std::span<const DType> operand_dtypes, Trig trig, FusedKernel& k);

/// The same for a full sum (every axis) of a non-empty f32/f64 `operand`: a SumAll kernel.
bool sum_all_kernel(const StdTensorOp& op, const TensorType& operand, FusedKernel& k);

/// The dtype a fused kernel computes convert(from -> to) in: the float side, f64 between f32 and
/// f64 (an f32 value is exact in an f64 register).
DType convert_compute_dtype(DType from, DType to);

/// Whether a kernel computing in `kernel` reads an input of dtype `source` (converting on load):
/// its own dtype, bool (as 0 and 1), and f32 in an f64 kernel.
bool readable_as(DType source, DType kernel);

/// Deterministic SSA text: "%3 = fused[f64 x 1000]{...}(%0, %1)" and "%4 = dot_general[...](%3, %2)".
std::string to_string(const ExecProgram& program);

/// Throws computegraph::GraphError unless every value is written once before it is read.
void verify(const ExecProgram& program);

}  // namespace tenferro::exec
