// bench_compare: tenferro's public API on the cases that bench/peers/torch_bench.py runs in
// PyTorch, plus hand-written and BLAS baselines, one result line per case and implementation
// (format and measurement protocol in harness.hpp; the cases in cases.hpp).
//
//   bench_compare [--threads N] [--cases mlp,elem_chain,scalar_chain,hessian,jacobian,matmul,special,...,gmm,lstm_adbench]
//                 [--only key,...] [--budget S]
//
// --threads (default 2) goes to tenferro::set_num_threads and to the baselines: the native OpenMP
// loops and the direct OpenBLAS calls (through omp_set_num_threads: Debian's OpenBLAS is its
// OpenMP build, whose calls size their team from it). --only narrows some families to single instances (harness.hpp,
// selected()). --budget is the timed seconds aimed for per implementation and
// case (default 1.5).
#include <cblas.h>
#include <omp.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>

#include "cases.hpp"
#include "tenferro/threads.hpp"

int main(int argc, char** argv) {
  // The baselines' OpenMP teams (the hand-written loops, direct OpenBLAS calls) spin about 10
  // microseconds after a run, not libgomp's default of about a millisecond, so that they are
  // asleep when tenferro's kernels run next and do not take the cores its own threads need.
  // libgomp reads GOMP_SPINCOUNT when it loads: the program restarts itself once with it set.
  if (std::getenv("GOMP_SPINCOUNT") == nullptr && setenv("GOMP_SPINCOUNT", "10000", 1) == 0) {
    execv("/proc/self/exe", argv);  // returns only on failure: then run with the default
  }
  // OpenBLAS's kernel family, for scripts/bench (which sets OPENBLAS_CORETYPE when OpenBLAS did
  // not recognize the CPU and fell back to a generic family).
  if (argc == 2 && std::strcmp(argv[1], "--blas-core") == 0) {
    std::printf("%s\n", openblas_get_corename());
    return 0;
  }
  std::fprintf(stderr, "bench_compare: OpenBLAS kernels: %s\n", openblas_get_corename());
  bench::Options options;
  try {
    options = bench::parse_options(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_compare: %s\nusage: bench_compare [--threads N] [--cases a,b,...] [--only k,...] [--budget S]\n",
                 e.what());
    return 2;
  }
  tenferro::set_num_threads(options.threads);
  omp_set_num_threads(options.threads);
  if (bench::wants(options, "mlp")) bench::run_mlp(options);
  if (bench::wants(options, "elem_chain")) bench::run_elem_chain(options);
  if (bench::wants(options, "scalar_chain")) bench::run_scalar_chain(options);
  if (bench::wants(options, "linearize")) bench::run_linearize_chain(options);
  if (bench::wants(options, "hessian")) bench::run_hessian(options);
  if (bench::wants(options, "jacobian")) bench::run_jacobian(options);
  if (bench::wants(options, "jacobian")) bench::run_jacobian_auto(options);
  if (bench::wants(options, "jacobian") || bench::wants(options, "sparse")) bench::run_sparse(options);
  if (bench::wants(options, "matmul")) bench::run_matmul(options);
  if (bench::wants(options, "special")) bench::run_special(options);
  if (bench::wants(options, "einsum")) bench::run_einsum(options);
  if (bench::wants(options, "tropical")) bench::run_tropical(options);
  if (bench::wants(options, "linalg")) bench::run_linalg(options);
  if (bench::wants(options, "trg")) bench::run_trg(options);
  if (bench::wants(options, "indexing")) bench::run_indexing(options);
  if (bench::wants(options, "conv")) bench::run_conv(options);
  if (bench::wants(options, "eager")) bench::run_eager(options);
  if (bench::wants(options, "control")) bench::run_control(options);
  if (bench::wants(options, "grad_call")) bench::run_grad_call(options);
  if (bench::wants(options, "vmap")) bench::run_vmap(options);
  if (bench::wants(options, "checkpoint")) bench::run_checkpoint(options);
  if (bench::wants(options, "gmm")) bench::run_gmm(options);
  if (bench::wants(options, "lstm_adbench")) bench::run_lstm_adbench(options);
  if (bench::failed_checks() > 0) {
    std::fprintf(stderr, "bench_compare: %d of the cases' own checks failed (above)\n", bench::failed_checks());
    return 1;
  }
  return 0;
}
