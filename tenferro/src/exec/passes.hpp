#pragma once
// Internal: the executor's rewrite passes over ExecProgram, one file each, each switchable (for
// tests and benchmarks; see tenferro/exec_options.hpp). Every pass keeps the program's results:
// bit for bit, except that folding a transpose into a GEMM may let BLAS sum in another order.
#include "exec_program.hpp"

namespace tenferro::exec {

/// transpose -> dot_general becomes one dot_general reading the transpose's operand with
/// remapped dimension numbers, when the result layout is unchanged (pass_fold_transpose.cpp).
ExecProgram fold_transposes(ExecProgram program);

/// Merges one-instruction fused kernels of one dtype and element count, connected by data edges,
/// into multi-instruction kernels (with full reductions as their last step), absorbing scalar,
/// row and column broadcasts into the kernels' input access (pass_fuse_elementwise.cpp).
ExecProgram fuse_elementwise(ExecProgram program);

/// Drops steps whose results nothing reads, unused outputs of fused kernels and the
/// instructions only they needed (pass_dce.cpp).
ExecProgram eliminate_dead_code(ExecProgram program);

}  // namespace tenferro::exec
