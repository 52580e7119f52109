#pragma once
// The number of threads tenferro's kernels use. All of them come from one pool of our own: fused
// elementwise kernels, reductions, indexing, convolutions and GEMMs (whose blocks of whole rows or
// columns of the result go to the threads as single-threaded OpenBLAS calls; OpenBLAS's own
// threads are not used). A kernel's caller works too and never waits for a pool thread that has
// not started, so a busy core elsewhere slows a kernel by at most the share it would have run
// (docs/tenferro.md, "Threads").
//
// Results do not depend on the thread count wherever the algorithm allows: reductions split their
// input into fixed-size chunks whatever the number of threads, sum each chunk in a fixed order and
// add the chunk sums in chunk order; a GEMM never splits its contracted dimension.
namespace tenferro {

/// Sets the thread count of our kernels, for the whole process (calls from any thread, started
/// before or after, use it). n >= 1; throws computegraph::Error otherwise.
/// Defaults to OpenMP's default (OMP_NUM_THREADS, else the number of cores).
void set_num_threads(int n);
/// The current setting.
int num_threads();

}  // namespace tenferro
