#pragma once
// The number of threads tenferro's kernels use: OpenMP loops in our kernels and OpenBLAS's own
// threads follow one setting, so a benchmark or an application pins both with one call.
//
// Results do not depend on the thread count wherever the algorithm allows: reductions split their
// input into fixed-size chunks whatever the number of threads, sum each chunk in a fixed order and
// add the chunk sums in chunk order (see docs/tenferro.md, "Threads"). Contractions are OpenBLAS
// GEMMs, which may split a long contracted dimension among threads: their last bits may change.
namespace tenferro {

/// Sets the thread count of our kernels and of OpenBLAS, for the whole process (calls from any
/// thread, started before or after, use it). n >= 1; throws computegraph::Error otherwise.
/// Defaults to OpenMP's default (OMP_NUM_THREADS, else the number of cores).
void set_num_threads(int n);
/// The current setting.
int num_threads();

}  // namespace tenferro
