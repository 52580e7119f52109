#pragma once
// Internal: running a fused loop kernel (exec_program.hpp's FusedKernel).
//
// The iteration space is cut into blocks of kBlock elements; each block runs the kernel's
// instructions as short loops over scratch registers that stay in L1 cache, so every input is
// read once from memory and every output written once. Blocks are grouped into chunks of
// kChunk elements, the unit of work of the OpenMP threads. A full sum adds each block in a fixed
// order into its chunk's partial sum (in double) and the partial sums in chunk order, so the
// result is the same for every thread count, and the same whether or not the summed values were
// computed in the same kernel.
#include <cstdint>
#include <span>

#include "exec_program.hpp"

namespace tenferro::exec {

inline constexpr std::int64_t kBlock = 256;
inline constexpr std::int64_t kChunk = 16 * kBlock;

/// Runs `k`. `in` is aligned with k.inputs (each of a dtype readable_as the kernel's, shaped as
/// its access requires); `out` with k.outputs: Store outputs hold k.size elements of the kernel's
/// dtype, bool, or f32 in an f64 kernel; SumAll outputs one element. Outputs may share storage with Full inputs of the
/// same dtype (in-place): a block writes its outputs only after its last instruction.
void run_fused(const FusedKernel& k, std::span<const Tensor* const> in, std::span<Tensor* const> out);

/// Runs `op` alone on `in` through its one-instruction kernel (single_op_kernel, sum_all_kernel),
/// filling `out` (one tensor) with a fresh result, and returns true; false, with nothing run, for
/// an op that has no such kernel. Eager mode runs its elementwise ops here: the executor's loops,
/// vectorized math included.
bool run_op_fused(const StdTensorOp& op, std::span<const Tensor* const> in, std::span<Tensor> out);

}  // namespace tenferro::exec
