#pragma once
// Internal: the executor's rewrite passes over ExecProgram, one file each, each switchable (for
// tests and benchmarks; see tenferro/exec_options.hpp). Every pass keeps the program's results:
// bit for bit, except that folding a transpose into a GEMM may let BLAS sum in another order.
#include "exec_program.hpp"

namespace tenferro::exec {

/// The free axes (neither batch nor contracted) of a dot_general operand of rank `rank`, ascending.
std::vector<std::int64_t> free_axes(const std::vector<std::int64_t>& batch, const std::vector<std::int64_t>& contract,
                                    std::size_t rank);

/// Computes a value that is only read through slices only where it is read: the slices sink into
/// elementwise kernels, layout ops and dot_general, and products of matrices reassociate where
/// that saves multiply-adds (pass_narrow_slices.cpp). May change results by rounding (GEMMs on
/// other shapes, products in another order), as fold_transposes may.
ExecProgram narrow_slices(ExecProgram program);

/// transpose -> dot_general becomes one dot_general reading the transpose's operand with
/// remapped dimension numbers, when the result layout is unchanged (pass_fold_transpose.cpp).
ExecProgram fold_transposes(ExecProgram program);

/// Merges one-instruction fused kernels of one dtype and element count, connected by data edges,
/// into multi-instruction kernels (with full reductions as their last step), absorbing scalar,
/// row and column broadcasts into the kernels' input access (pass_fuse_elementwise.cpp).
ExecProgram fuse_elementwise(ExecProgram program);

/// Drops a scan whose results another scan on the same operands also computes (its body returns
/// the same values first), reading them from that one (pass_merge_scans.cpp): reverse mode's
/// primal scan and its residual-stacking scan become one. Not switchable: it runs right after
/// lowering. The stacking scan's body computes more values, and the lowering may then pick
/// another function for them (a sin next to a cos of one value becomes half of a sincos, which
/// SLEEF rounds differently in the last bit), so the primal value of a merged program can differ
/// from the forward program's in the last bit (as it can under any fusion decision); running the
/// merge in every configuration keeps the passes' bitwise checks comparing like with like.
ExecProgram merge_scans(ExecProgram program);

/// Drops steps whose results nothing reads, unused outputs of fused kernels and the
/// instructions only they needed (pass_dce.cpp).
ExecProgram eliminate_dead_code(ExecProgram program);

/// Groups independent applications of ops whose kernels are long single-threaded calls
/// (OpDef::concurrent: LAPACK decompositions) into Concurrent steps that run them at the same
/// time, one per thread; the steps are reordered so that each group's operands come before it
/// (pass_run_concurrently.cpp). Each kernel runs as it would alone: the same bits.
ExecProgram run_concurrently(ExecProgram program);

/// Compiles the runs of arithmetic in every fused kernel to vector loops for the current vector
/// instruction set (arith_jit.hpp, pass_compile_arithmetic.cpp). Last: the kernels are final.
ExecProgram compile_arithmetic(ExecProgram program);

}  // namespace tenferro::exec
