// The choice of GEMM provider per product (kernels/gemm_provider.hpp) and the libxsmm calls.
#include "kernels/gemm_provider.hpp"

#include <cblas.h>
#include <libxsmm.h>

#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cstdlib>
#include <string>
#include <type_traits>

namespace tenferro::detail {

namespace {

/// Products up to this many multiply-adds are "small": split_gemm runs them as one block.
constexpr double kSmallWork = 262144.0;  // 2^18
/// Products above this many multiply-adds go to OpenBLAS's AVX-512 kernels (on AMD: f32 ones).
constexpr double kLargeWork = 16777216.0;  // 2^24
/// On CPUs other than AMD's, products up to this many go to OpenBLAS's AVX-512 kernels too.
constexpr double kTinyWork = 262144.0;  // 2^18
/// One core's L2 cache where the system does not say (a common size of current x86 cores).
constexpr std::int64_t kDefaultL2Bytes = 1 << 20;

std::atomic<GemmProvider> forced{GemmProvider::Auto};

GemmProvider from_environment() {
  const char* v = std::getenv("TENFERRO_GEMM");
  if (v == nullptr) return GemmProvider::Auto;
  const std::string s(v);
  if (s == "openblas") return GemmProvider::OpenBlas;
  if (s == "libxsmm") return GemmProvider::Libxsmm;
  return GemmProvider::Auto;
}

/// Whether OpenBLAS's GEMM kernels are AVX-512 ones (its core names for AVX-512 CPUs).
bool openblas_runs_avx512() {
  std::string core = openblas_get_corename();
  for (char& ch : core) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return core == "skylakex" || core == "cooperlake" || core == "sapphirerapids";
}

struct Policy {
  GemmProvider environment = GemmProvider::Auto;
  bool openblas_avx512 = false;
  bool libxsmm_avx512 = false;
  CpuVendor vendor = CpuVendor::Other;
  std::int64_t l2_bytes = kDefaultL2Bytes;
};

const Policy& policy() {
  static const Policy p = [] {
    libxsmm_init();
    Policy q;
    q.environment = from_environment();
    q.openblas_avx512 = openblas_runs_avx512();
    q.libxsmm_avx512 = libxsmm_get_target_archid() >= LIBXSMM_X86_AVX512;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    q.vendor = __builtin_cpu_is("amd") ? CpuVendor::Amd : CpuVendor::Other;
#endif
    if (const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE); l2 > 0) q.l2_bytes = l2;
    return q;
  }();
  return p;
}

bool picks_libxsmm(bool f64, std::int64_t m, std::int64_t n, std::int64_t k) {
  const Policy& p = policy();
  GemmProvider choice = forced.load(std::memory_order_relaxed);
  if (choice == GemmProvider::Auto) choice = p.environment;
  if (choice != GemmProvider::Auto) return choice == GemmProvider::Libxsmm;
  return policy_picks_libxsmm(f64, m, n, k, p.openblas_avx512, p.libxsmm_avx512, p.vendor, p.l2_bytes);
}

}  // namespace

GemmProvider set_gemm_provider(GemmProvider provider) { return forced.exchange(provider); }

bool libxsmm_takes(bool f64, std::int64_t m, std::int64_t n, std::int64_t k) { return picks_libxsmm(f64, m, n, k); }

bool policy_picks_libxsmm(bool f64, std::int64_t m, std::int64_t n, std::int64_t k, bool openblas_avx512,
                          bool libxsmm_avx512, CpuVendor vendor, std::int64_t l2_bytes) {
  const double work = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  if (libxsmm_avx512 && !openblas_avx512) return true;
  if (libxsmm_avx512 && openblas_avx512) {
    if (vendor == CpuVendor::Amd) return f64 || work <= kLargeWork;
    const double operand_bytes = (static_cast<double>(m) + static_cast<double>(n)) * static_cast<double>(k) * (f64 ? 8 : 4);
    return work > kTinyWork && work <= kLargeWork && operand_bytes <= static_cast<double>(l2_bytes);
  }
  return work <= kSmallWork;
}

template <class T>
bool libxsmm_gemm(bool a_transposed, std::int64_t whole_m, std::int64_t whole_n, std::int64_t whole_k, int M, int N,
                  int K, const T* a, int lda, const T* b, int ldb, bool accumulate, T* c, int ldc) {
  if (M == 0 || N == 0 || K == 0 || !picks_libxsmm(std::is_same_v<T, double>, whole_m, whole_n, whole_k)) return false;
  // Column-major: C^T [N, M] = B^T [N, K] op(A)^T [K, M]. The row-major buffers of B and A read
  // column-major are B^T and A^T (or, for a stored A^T, op(A)^T transposed: the kernel's
  // transposed second operand).
  const libxsmm_blasint m = N, n = M, k = K, la = ldb, lb = lda, lc = ldc;
  const int flags = a_transposed ? LIBXSMM_GEMM_FLAG_TRANS_B : LIBXSMM_GEMM_FLAG_NONE;
  const T alpha = 1, beta = accumulate ? 1 : 0;
  if constexpr (std::is_same_v<T, double>) {
    const libxsmm_dmmfunction kernel = libxsmm_dmmdispatch(m, n, k, &la, &lb, &lc, &alpha, &beta, &flags, nullptr);
    if (kernel == nullptr) return false;
    kernel(b, a, c);
  } else {
    const libxsmm_smmfunction kernel = libxsmm_smmdispatch(m, n, k, &la, &lb, &lc, &alpha, &beta, &flags, nullptr);
    if (kernel == nullptr) return false;
    kernel(b, a, c);
  }
  return true;
}

template bool libxsmm_gemm<float>(bool, std::int64_t, std::int64_t, std::int64_t, int, int, int, const float*, int,
                                  const float*, int, bool, float*, int);
template bool libxsmm_gemm<double>(bool, std::int64_t, std::int64_t, std::int64_t, int, int, int, const double*, int,
                                   const double*, int, bool, double*, int);

}  // namespace tenferro::detail
