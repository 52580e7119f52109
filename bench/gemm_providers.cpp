// GEMM providers side by side on the shapes tenferro's benchmarks run: OpenBLAS (the provider the
// library links), BLIS and libxsmm (peers here, never dependencies of the library). Every GEMM
// of the library runs as single-threaded blocks on its own thread pool (src/kernels/blas_gemm.hpp),
// so each provider runs on one thread: the comparison is of the per-call kernel.
//
// Providers:
//   openblas  cblas_?gemm of the OpenBLAS the library links (one thread per call).
//   blis      cblas_?gemm of Debian's single-threaded BLIS, loaded with dlopen(RTLD_LOCAL |
//             RTLD_DEEPBIND) so that its BLAS symbols do not replace OpenBLAS's in this process.
//   libxsmm   libxsmm's JIT kernel for the shape (libxsmm_?mmdispatch), the small-matrix code path
//             itself; libxsmm_?gemm would hand shapes above its threshold to the linked BLAS, that
//             is to OpenBLAS again.
//
// Each shape is row-major C[M, N] = op(A) B, in the two layouts libxsmm takes: A B (A stored
// [M, K]) and A^T B (A stored [K, M]). A provider's result is checked against OpenBLAS's before
// timing. Prints one line per shape, layout and provider:
//   case=gemm_provider impl=<provider> size=<dtype>_<M>x<N>x<K> layout=AB|AtB median_s=... gflops=...
//   ratio_vs_openblas=...
#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <cblas.h>
#include <libxsmm.h>

#include "timing.hpp"

extern "C" void openblas_set_num_threads(int);

namespace {

struct Shape {
  const char* dtype;  // "f32" or "f64"
  int m, n, k;
  const char* from;  // which benchmark runs it
};

// The shapes that carry most of the GEMM flops of `scripts/bench compare` (logged from its runs),
// and small squares.
const Shape kShapes[] = {
    {"f32", 256, 512, 784, "mlp, eager (batch 256 x 784 -> 512)"},
    {"f32", 256, 512, 512, "mlp, eager (512 -> 512)"},
    {"f64", 256, 512, 784, "mlp f64"},
    {"f64", 576, 576, 576, "trg chi 24"},
    {"f64", 256, 256, 256, "trg chi 16"},
    {"f64", 1000, 1600, 64, "gmm d 64"},
    {"f64", 1000, 500, 20, "gmm d 20"},
    {"f32", 32, 1024, 256, "control lstm"},
    {"f32", 64, 224, 576, "conv (im2col)"},
    {"f64", 64, 112, 576, "conv f64 (im2col)"},
    {"f32", 128, 128, 128, "vmap rk4"},
    {"f32", 8, 784, 144, "vmap cnn (per example)"},
    {"f32", 32, 896, 144, "cnn step"},
    {"f32", 16, 448, 288, "cnn step"},
    {"f32", 32, 128, 144, "cnn step"},
    {"f64", 64, 64, 64, "small"},
    {"f64", 32, 32, 32, "small"},
    {"f64", 16, 16, 16, "small"},
    {"f64", 8, 8, 8, "small"},
    {"f32", 16, 16, 16, "small"},
};

template <class T>
using Gemm = void (*)(CBLAS_ORDER, CBLAS_TRANSPOSE, CBLAS_TRANSPOSE, int, int, int, T, const T*, int, const T*, int, T, T*, int);

struct Blis {
  Gemm<double> dgemm = nullptr;
  Gemm<float> sgemm = nullptr;
  std::string why_not;
};

Blis load_blis() {
  Blis b;
  const char* path = "/usr/lib/x86_64-linux-gnu/blis-serial/libblis.so.4";
  void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
  if (!h) {
    b.why_not = std::string("dlopen ") + path + ": " + dlerror();
    return b;
  }
  b.dgemm = reinterpret_cast<Gemm<double>>(dlsym(h, "cblas_dgemm"));
  b.sgemm = reinterpret_cast<Gemm<float>>(dlsym(h, "cblas_sgemm"));
  if (!b.dgemm || !b.sgemm) b.why_not = "libblis has no cblas_dgemm/cblas_sgemm";
  return b;
}

template <class T>
T max_relative_difference(const std::vector<T>& a, const std::vector<T>& b) {
  T worst = 0, scale = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    worst = std::max(worst, std::abs(a[i] - b[i]));
    scale = std::max(scale, std::abs(b[i]));
  }
  return scale > 0 ? worst / scale : worst;
}

template <class T>
void run_shape(const Shape& s, bool ta, const Blis& blis, double budget) {
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<T> a(static_cast<std::size_t>(s.m) * s.k), b(static_cast<std::size_t>(s.k) * s.n);
  for (T& x : a) x = static_cast<T>(u(rng));
  for (T& x : b) x = static_cast<T>(u(rng));
  const std::size_t c_size = static_cast<std::size_t>(s.m) * s.n;
  std::vector<T> c_ref(c_size), c(c_size);

  constexpr bool dbl = std::is_same_v<T, double>;
  Gemm<T> openblas_gemm = nullptr;
  if constexpr (dbl) {
    openblas_gemm = cblas_dgemm;
  } else {
    openblas_gemm = cblas_sgemm;
  }
  Gemm<T> blis_gemm = nullptr;
  if constexpr (dbl) {
    blis_gemm = blis.dgemm;
  } else {
    blis_gemm = blis.sgemm;
  }
  // libxsmm's kernels are column-major: C^T[N, M] = B^T[N, K] op(A)^T[K, M], which is row-major
  // C = op(A) B with the operands swapped; A stored [K, M] (ta) is the kernel's transposed second
  // operand.
  const libxsmm_blasint m = s.n, n = s.m, k = s.k, la = s.n, lb = ta ? s.m : s.k, lc = s.n;
  const int flags = ta ? LIBXSMM_GEMM_FLAG_TRANS_B : LIBXSMM_GEMM_FLAG_NONE;
  const int lda = ta ? s.m : s.k;
  const CBLAS_TRANSPOSE op_a = ta ? CblasTrans : CblasNoTrans;
  void (*xsmm)(const T*, const T*, T*, ...) = nullptr;
  if constexpr (dbl) {
    const double alpha = 1, beta = 0;
    xsmm = libxsmm_dmmdispatch(m, n, k, &la, &lb, &lc, &alpha, &beta, &flags, nullptr);
  } else {
    const float alpha = 1, beta = 0;
    xsmm = libxsmm_smmdispatch(m, n, k, &la, &lb, &lc, &alpha, &beta, &flags, nullptr);
  }

  struct Provider {
    const char* name;
    std::function<void()> run;
  };
  std::vector<Provider> providers;
  providers.push_back({"openblas", [&] {
                         openblas_gemm(CblasRowMajor, op_a, CblasNoTrans, s.m, s.n, s.k, T(1), a.data(), lda, b.data(),
                                       s.n, T(0), c.data(), s.n);
                       }});
  if (blis_gemm) {
    providers.push_back({"blis", [&] {
                           blis_gemm(CblasRowMajor, op_a, CblasNoTrans, s.m, s.n, s.k, T(1), a.data(), lda, b.data(),
                                     s.n, T(0), c.data(), s.n);
                         }});
  }
  if (xsmm) providers.push_back({"libxsmm", [&] { xsmm(b.data(), a.data(), c.data()); }});

  openblas_gemm(CblasRowMajor, op_a, CblasNoTrans, s.m, s.n, s.k, T(1), a.data(), lda, b.data(), s.n, T(0), c_ref.data(),
                s.n);
  const double tolerance = dbl ? 1e-12 : 1e-4;
  std::vector<bool> correct;
  for (const Provider& p : providers) {
    std::fill(c.begin(), c.end(), T(7));
    p.run();
    const double diff = static_cast<double>(max_relative_difference(c, c_ref));
    correct.push_back(diff <= tolerance);
    if (diff > tolerance) {
      std::fprintf(stderr, "gemm_providers: %s differs from OpenBLAS by %.3g on %s %dx%dx%d\n", p.name, diff, s.dtype,
                   s.m, s.n, s.k);
    }
  }

  // Repetitions for about `budget` seconds per provider, alternating providers round by round.
  const double one = bench::seconds(providers[0].run);
  const int reps = std::clamp(static_cast<int>(budget / std::max(one, 1e-7) / 5), 3, 2001);
  std::vector<std::vector<double>> times(providers.size());
  for (int round = 0; round < 5; ++round) {
    for (std::size_t i = 0; i < providers.size(); ++i) {
      std::vector<double> t;
      for (int r = 0; r < reps; ++r) t.push_back(bench::seconds(providers[i].run));
      times[i].push_back(bench::median(std::move(t)));
    }
  }
  const double flops = 2.0 * s.m * s.n * s.k;
  const double base = bench::median(times[0]);
  for (std::size_t i = 0; i < providers.size(); ++i) {
    const double t = bench::median(times[i]);
    std::printf("case=gemm_provider impl=%s size=%s_%dx%dx%d layout=%s median_s=%.4g gflops=%.2f ratio_vs_openblas=%.3f%s from=\"%s\"\n",
                providers[i].name, s.dtype, s.m, s.n, s.k, ta ? "AtB" : "AB", t, flops / t * 1e-9, t / base,
                correct[i] ? "" : " wrong=1", s.from);
  }
  if (!blis_gemm) std::printf("case=gemm_provider impl=blis size=%s_%dx%dx%d skipped=1\n", s.dtype, s.m, s.n, s.k);
  if (!xsmm) std::printf("case=gemm_provider impl=libxsmm size=%s_%dx%dx%d skipped=1 why=no_jit_kernel\n", s.dtype, s.m, s.n, s.k);
}

}  // namespace

int main(int argc, char** argv) {
  double budget = 0.2;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--budget") == 0) budget = std::atof(argv[i + 1]);
  }
  openblas_set_num_threads(1);
  libxsmm_init();
  const Blis blis = load_blis();
  if (!blis.why_not.empty()) std::fprintf(stderr, "gemm_providers: no BLIS: %s\n", blis.why_not.c_str());
  for (const Shape& s : kShapes) {
    if (std::strcmp(s.dtype, "f64") == 0) {
      for (const bool ta : {false, true}) run_shape<double>(s, ta, blis, budget);
    } else {
      for (const bool ta : {false, true}) run_shape<float>(s, ta, blis, budget);
    }
  }
  libxsmm_finalize();
}
