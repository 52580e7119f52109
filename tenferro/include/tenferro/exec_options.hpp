#pragma once
// Switches of the executor's passes (docs/tenferro.md, "Execution"). Every compiled tenferro
// program runs through the executor: lowered once per program and option set, then run many
// times. Switching a pass off never changes a result beyond the documented tolerance: results
// are bitwise equal for the same thread count, except that folding a transpose into a GEMM may
// let BLAS sum a product in another order, and narrowing slices may compute a product on other
// shapes or in another order.
//
// The process-wide defaults come from the environment variable TENFERRO_PASSES_OFF, a comma
// separated list of "fold_transpose", "fuse_elementwise", "dce", "scalar_path",
// "compile_arithmetic", "narrow_slices", "run_concurrently" (or "all").
namespace tenferro {

struct ExecOptions {
  bool fold_transpose = true;      // transpose -> dot_general becomes strided GEMM operands
  bool fuse_elementwise = true;    // elementwise chains and trees become one loop kernel
  bool eliminate_dead_code = true; // drop steps and kernel outputs nobody reads
  bool scalar_path = true;         // all-rank-0 programs run on the compact scalar interpreter
  bool compile_arithmetic = true;  // runs of arithmetic in fused kernels become vector machine code
  bool narrow_slices = true;       // values read only through slices are computed only there
  bool run_concurrently = true;    // independent decompositions run at the same time, one per thread
  bool operator==(const ExecOptions&) const = default;
};

/// The options new runs use (process-wide).
ExecOptions exec_options();
void set_exec_options(const ExecOptions& options);

}  // namespace tenferro
