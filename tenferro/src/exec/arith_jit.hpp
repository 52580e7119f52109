#pragma once
// Internal: straight runs of arithmetic in a fused kernel, compiled to machine code.
//
// The block interpreter (fused_kernel.cpp) runs one instruction at a time over a 256-element
// block, so every value goes to L1 and back between instructions. For transcendental functions
// that traffic is noise; for a run of adds, multiplies and divides it is most of the cost (the
// gradient of an elementwise chain is a dozen or two of them per element). A run of consecutive
// arithmetic instructions is therefore compiled into one vector loop that keeps its intermediate
// values in vector registers: it reads each value live into the run from its block, and stores
// only the values read after the run.
//
// Bits: each compiled instruction is the single IEEE-rounded vector instruction that the
// vector-math table's loop for it uses (add, mul, div and sqrt round once; neg and abs flip or
// clear the sign bit; no contraction into FMA), so a compiled run gives the interpreter's bits,
// and the executor's fused and unfused programs still agree bit for bit. Where both operands of
// an add or multiply are NaN, which NaN comes out is unspecified, as it is for the interpreter's
// compiled loops.
//
// Width: the code is generated for the instruction set of the vector-math table
// (kernels/vector_math.hpp) when the executor prepares the program: AVX-512F (8 f64 lanes, 32
// registers) or AVX2 (4 lanes, 16 registers). A run covers the whole vectors of a block; the last
// partial vector of a block goes through the interpreter. With the SSE2 table, or when the table's
// instruction set changes after the program was prepared, the interpreter runs every instruction.
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
  Entry entry = nullptr;
};

/// A kernel's compiled runs, in code order, and the machine code they live in.
struct CompiledRuns {
  VectorIsa isa = VectorIsa::Sse2;
  std::int64_t lanes = 1;  // elements per vector
  std::vector<CompiledRun> runs;
  std::shared_ptr<const void> code;  // owns the executable memory
};

/// Whether the compiler takes instruction `ins` into a run.
bool compilable(const FusedInstr& ins);

/// The runs of `k` for `isa`: maximal stretches of compilable instructions, cut where their live
/// values would need more vector registers than the instruction set has, and kept when at least
/// two instructions long. Null when there are none, or for SSE2.
std::shared_ptr<const CompiledRuns> compile_runs(const FusedKernel& k, VectorIsa isa);

}  // namespace tenferro::exec
