#pragma once
// Internal: straight runs of a fused kernel compiled to machine code.
//
// The block interpreter (fused_kernel.cpp) runs one instruction at a time over a 256-element
// block, so every value goes to L1 and back between instructions, and each instruction is a
// separate loop. For a run of adds, multiplies and divides that traffic is most of the cost (the
// gradient of an elementwise chain is a dozen or two of them per element), and separate loops keep
// the CPU from overlapping a division with the polynomial of the next sine. A run of consecutive
// compilable instructions (arithmetic, and the math functions whose vector-math entry has a
// per-vector form) is therefore compiled into one vector loop: arithmetic values live in vector
// registers, a math function is a call per vector (every value still needed is spilled to the
// loop's frame first, since the call clobbers every vector register), values live into the run
// are read from their blocks, and only the values read after the run are stored.
//
// Bits: each arithmetic instruction is the single IEEE-rounded vector instruction that the
// vector-math table's loop for it uses (add, mul, div and sqrt round once; neg and abs flip or
// clear the sign bit; no contraction into FMA), and each call is the per-vector body of the table's
// array function, so a compiled run gives the interpreter's bits and the executor's fused and
// unfused programs still agree bit for bit. Where both operands of an add or multiply are NaN,
// which NaN comes out is unspecified, as it is for the interpreter's compiled loops.
//
// Width: the code is generated for the vector-math table of the moment the executor prepares the
// program: AVX-512F (8 f64 lanes, 32 registers) or AVX2 (4 lanes, 16 registers). A run covers the
// whole vectors of a block; the last partial vector of a block goes through the interpreter. With
// the SSE2 table, or when the table changed after the program was prepared (another width or
// math accuracy), the interpreter runs every instruction.
#include <cstdint>
#include <memory>
#include <vector>

#include "exec_program.hpp"
#include "kernels/vector_math.hpp"

namespace tenferro::exec {

/// One compiled run: instructions [begin, end) of its kernel's code.
struct CompiledRun {
  /// The entry point: in[k] points at the block of live_in[k], out[k] at the block live_out[k] is
  /// stored into; n (a positive multiple of `lanes`) elements from each.
  using Entry = void (*)(const void* const* in, void* const* out, std::int64_t n);
  std::uint32_t begin = 0, end = 0;
  std::vector<std::uint16_t> live_in;   // registers read before the run writes them
  std::vector<std::uint16_t> live_out;  // registers whose value at the run's end is read later
  /// Per live-out, the kernel output (position in FusedKernel::outputs) it may be stored into
  /// directly instead of its block, or -1; empty when none may. Only the run that ends the code
  /// has any: a stored output element is never read again, the output's register is stored
  /// (not summed) once, and no output reads an input register, whose storage an output may share.
  std::vector<int> direct;
  Entry entry = nullptr;
};

/// A kernel's compiled runs, in code order, and the machine code they live in.
struct CompiledRuns {
  /// The vector-math table whose functions the runs call and whose width they have: where the
  /// current table is another (set_math_accuracy, set_vector_isa), the interpreter runs them.
  const VectorMathTable* table = nullptr;
  std::int64_t lanes = 1;  // elements per vector
  std::vector<CompiledRun> runs;
  std::shared_ptr<const void> code;  // owns the executable memory
};

/// Whether a run may hold instruction `ins` of a kernel of `dtype` under `table`: arithmetic
/// (add, mul, div, neg, abs, sqrt, identity), and the math functions whose table entry has a
/// per-vector form (VectorMathTable::vector_f64), called from the loop.
bool compilable(const FusedInstr& ins, const VectorMathTable& table, DType dtype);

/// The runs of `k` for `table` (of instruction set `isa`): maximal stretches of compilable
/// instructions, cut where their live values would need more vector registers than the
/// instruction set has, and kept when at least two instructions long. Null when there are none,
/// for SSE2, and for kernels of fewer than 64 elements.
std::shared_ptr<const CompiledRuns> compile_runs(const FusedKernel& k, const VectorMathTable& table, VectorIsa isa);

}  // namespace tenferro::exec
