// One-matrix LAPACK routines on row-major storage (lapack.hpp). The type dispatch is a set of
// overloads per routine; each routine is written once as a template over the element type.
// LAPACKE's complex types as std::complex (before any header that includes lapacke.h).
#include <complex>
#define lapack_complex_float std::complex<float>
#define lapack_complex_double std::complex<double>
#include <lapacke.h>
#include <cblas.h>

#include "lapack.hpp"

#include <algorithm>
#include <climits>
#include <vector>

#include "blas_threads.hpp"
#include "tenferro/error.hpp"

namespace tenferro::detail::lapack {

namespace {

using I = lapack_int;
constexpr int kCol = LAPACK_COL_MAJOR;

// ---- overloads per element type ----------------------------------------------------------------
I gesdd(char j, I m, I n, float* a, I lda, float* s, float* u, I ldu, float* vt, I ldvt) {
  return LAPACKE_sgesdd(kCol, j, m, n, a, lda, s, u, ldu, vt, ldvt);
}
I gesdd(char j, I m, I n, double* a, I lda, double* s, double* u, I ldu, double* vt, I ldvt) {
  return LAPACKE_dgesdd(kCol, j, m, n, a, lda, s, u, ldu, vt, ldvt);
}
I gesdd(char j, I m, I n, c64* a, I lda, float* s, c64* u, I ldu, c64* vt, I ldvt) {
  return LAPACKE_cgesdd(kCol, j, m, n, a, lda, s, u, ldu, vt, ldvt);
}
I gesdd(char j, I m, I n, c128* a, I lda, double* s, c128* u, I ldu, c128* vt, I ldvt) {
  return LAPACKE_zgesdd(kCol, j, m, n, a, lda, s, u, ldu, vt, ldvt);
}
I heevd(char j, I n, float* a, float* w) { return LAPACKE_ssyevd(kCol, j, 'U', n, a, n, w); }
I heevd(char j, I n, double* a, double* w) { return LAPACKE_dsyevd(kCol, j, 'U', n, a, n, w); }
I heevd(char j, I n, c64* a, float* w) { return LAPACKE_cheevd(kCol, j, 'U', n, a, n, w); }
I heevd(char j, I n, c128* a, double* w) { return LAPACKE_zheevd(kCol, j, 'U', n, a, n, w); }
I geqrf(I m, I n, float* a, float* tau) { return LAPACKE_sgeqrf(kCol, m, n, a, m, tau); }
I geqrf(I m, I n, double* a, double* tau) { return LAPACKE_dgeqrf(kCol, m, n, a, m, tau); }
I geqrf(I m, I n, c64* a, c64* tau) { return LAPACKE_cgeqrf(kCol, m, n, a, m, tau); }
I geqrf(I m, I n, c128* a, c128* tau) { return LAPACKE_zgeqrf(kCol, m, n, a, m, tau); }
I ungqr(I m, I n, I k, float* a, const float* tau) { return LAPACKE_sorgqr(kCol, m, n, k, a, m, tau); }
I ungqr(I m, I n, I k, double* a, const double* tau) { return LAPACKE_dorgqr(kCol, m, n, k, a, m, tau); }
I ungqr(I m, I n, I k, c64* a, const c64* tau) { return LAPACKE_cungqr(kCol, m, n, k, a, m, tau); }
I ungqr(I m, I n, I k, c128* a, const c128* tau) { return LAPACKE_zungqr(kCol, m, n, k, a, m, tau); }
// The LQ routines, real types only (qr's transpose-free path below).
I gelqf(I m, I n, float* a, float* tau) { return LAPACKE_sgelqf(kCol, m, n, a, m, tau); }
I gelqf(I m, I n, double* a, double* tau) { return LAPACKE_dgelqf(kCol, m, n, a, m, tau); }
I orglq(I m, I n, I k, float* a, const float* tau) { return LAPACKE_sorglq(kCol, m, n, k, a, m, tau); }
I orglq(I m, I n, I k, double* a, const double* tau) { return LAPACKE_dorglq(kCol, m, n, k, a, m, tau); }
I potrf(I n, float* a) { return LAPACKE_spotrf(kCol, 'U', n, a, n); }
I potrf(I n, double* a) { return LAPACKE_dpotrf(kCol, 'U', n, a, n); }
I potrf(I n, c64* a) { return LAPACKE_cpotrf(kCol, 'U', n, a, n); }
I potrf(I n, c128* a) { return LAPACKE_zpotrf(kCol, 'U', n, a, n); }
I gesv(I n, I k, float* a, I* piv, float* b) { return LAPACKE_sgesv(kCol, n, k, a, n, piv, b, n); }
I gesv(I n, I k, double* a, I* piv, double* b) { return LAPACKE_dgesv(kCol, n, k, a, n, piv, b, n); }
I gesv(I n, I k, c64* a, I* piv, c64* b) { return LAPACKE_cgesv(kCol, n, k, a, n, piv, b, n); }
I gesv(I n, I k, c128* a, I* piv, c128* b) { return LAPACKE_zgesv(kCol, n, k, a, n, piv, b, n); }
I geev(I n, c64* a, c64* w, c64* vr) {
  c64 dummy{};
  return LAPACKE_cgeev(kCol, 'N', 'V', n, a, n, w, &dummy, 1, vr, n);
}
I geev(I n, c128* a, c128* w, c128* vr) {
  c128 dummy{};
  return LAPACKE_zgeev(kCol, 'N', 'V', n, a, n, w, &dummy, 1, vr, n);
}
/// The real routines: eigenvalues as (wr, wi), eigenvectors packed as real columns (a complex
/// pair's vector is column j + i column j + 1).
I geev(I n, float* a, float* wr, float* wi, float* vr) {
  float dummy{};
  return LAPACKE_sgeev(kCol, 'N', 'V', n, a, n, wr, wi, &dummy, 1, vr, n);
}
I geev(I n, double* a, double* wr, double* wi, double* vr) {
  double dummy{};
  return LAPACKE_dgeev(kCol, 'N', 'V', n, a, n, wr, wi, &dummy, 1, vr, n);
}
I getrf(I m, I n, float* a, I* piv) { return LAPACKE_sgetrf(kCol, m, n, a, m, piv); }
I getrf(I m, I n, double* a, I* piv) { return LAPACKE_dgetrf(kCol, m, n, a, m, piv); }
I getrf(I m, I n, c64* a, I* piv) { return LAPACKE_cgetrf(kCol, m, n, a, m, piv); }
I getrf(I m, I n, c128* a, I* piv) { return LAPACKE_zgetrf(kCol, m, n, a, m, piv); }

template <class T>
inline constexpr bool is_complex_v = !std::is_same_v<T, Real<T>>;

template <class T>
T conj_of(T x) {
  if constexpr (is_complex_v<T>) {
    return std::conj(x);
  } else {
    return x;
  }
}

/// dst (col-major m x n) = src (row-major m x n), conjugated if asked: dst[i + j m] = src[i n + j].
template <class T>
void to_col_major(const T* src, std::int64_t m, std::int64_t n, T* dst, bool conjugate = false) {
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < n; ++j) dst[i + j * m] = conjugate ? conj_of(src[i * n + j]) : src[i * n + j];
  }
}
/// dst (row-major m x n) = src (col-major m x n, leading dimension ld).
template <class T>
void to_row_major(const T* src, std::int64_t m, std::int64_t n, std::int64_t ld, T* dst) {
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < n; ++j) dst[i * n + j] = src[i + j * ld];
  }
}

}  // namespace

void check_lapack_size(const char* op, std::int64_t m, std::int64_t n) {
  // Products like m * n are array lengths in LAPACK's workspace queries; keep them in range too.
  if (m > INT_MAX || n > INT_MAX || static_cast<double>(m) * static_cast<double>(n) > static_cast<double>(INT_MAX)) {
    throw ShapeError(std::string(op) + ": matrix [" + std::to_string(m) + ", " + std::to_string(n) +
                     "] exceeds LAPACK's 32-bit index range");
  }
}

/// Buffers handed to LAPACK carry slack past their last element. OpenBLAS's vectorized level-2
/// kernels (zgemv_n on Haswell, in gebd2's reflector updates within gesdd) can read a few elements
/// past the last one they use; reading past the end of a heap block is harmless unless the block
/// ends a mapped page, which AddressSanitizer's allocator once made happen (a SEGV inside zgemv).
constexpr std::size_t kLapackSlack = 8;
template <class T>
std::vector<T> lapack_buffer(std::int64_t n, T fill = T(0)) {
  return std::vector<T>(static_cast<std::size_t>(n) + kLapackSlack, fill);
}
template <class T>
std::vector<T> lapack_copy(const T* a, std::int64_t n) {
  std::vector<T> v = lapack_buffer<T>(n);
  std::copy(a, a + n, v.begin());
  return v;
}

template <class T>
int svd(const T* a, std::int64_t m, std::int64_t n, bool full, T* u, Real<T>* s, T* vh) {
  const OneBlasThread one_thread;
  // The row-major buffer of A is the column-major A^T (n x m). With A^T = U' S V'^H:
  // A = conj(V') S U'^T, so A's U (row-major m x k) is the column-major buffer V'^H (k x m) and A's
  // Vh (row-major k x n) is the column-major buffer U' (n x k): LAPACK writes our factors directly,
  // LAPACK's u into vh and its vt into u.
  const std::int64_t k = std::min(m, n);
  std::vector<T> work = lapack_copy(a, m * n);
  if (m == 0 || n == 0) return 0;
  const I M = static_cast<I>(n), N = static_cast<I>(m);
  if (u == nullptr) {
    T dummy{};
    return gesdd('N', M, N, work.data(), M, s, &dummy, 1, &dummy, 1);
  }
  if (full) return gesdd('A', M, N, work.data(), M, s, vh, M, u, N);
  return gesdd('S', M, N, work.data(), M, s, vh, M, u, static_cast<I>(k));
}

template <class T>
int eigh(const T* a, std::int64_t n, Real<T>* w, T* v) {
  const OneBlasThread one_thread;
  // The row-major buffer is A^T = conj(A) column-major; its upper triangle is A's lower one.
  // Eigenvectors Z of conj(A) are conj(V): V = conj(Z), transposed into row-major.
  std::vector<T> z = lapack_copy(a, n * n);
  if (n == 0) return 0;
  const int info = heevd(v ? 'V' : 'N', static_cast<I>(n), z.data(), w);
  if (v && info == 0) {
    for (std::int64_t i = 0; i < n; ++i) {
      for (std::int64_t j = 0; j < n; ++j) v[i * n + j] = conj_of(z[i + j * n]);
    }
  }
  return info;
}

template <class T>
int qr(const T* a, std::int64_t m, std::int64_t n, bool complete, T* q, T* r) {
  const OneBlasThread one_thread;
  const std::int64_t k = std::min(m, n);
  const std::int64_t qcols = complete ? m : k, rrows = complete ? m : k;
  if (m == 0 || n == 0) {
    for (std::int64_t i = 0; i < m * qcols; ++i) q[i] = T(0);
    for (std::int64_t i = 0; i < m; ++i) if (i < qcols) q[i * qcols + i] = T(1);
    return 0;
  }
  if constexpr (std::is_floating_point_v<T>) {
    if (m >= n && !(complete && m > n)) {
      // Tall or square (reduced), real: no transposes. A's row-major buffer is the column-major
      // A^T (n x m), whose LQ factorization A^T = L Q' (the same Householder reflections as
      // geqrf's on A's columns, so the same signs) gives A = Q'^T L^T: R = L^T, and Q'^T (m x n
      // row-major) is the column-major buffer Q' (n x m) that orglq leaves in place.
      std::vector<T> w = lapack_copy(a, m * n);
      std::vector<T> tau = lapack_buffer<T>(n);
      const int lq = gelqf(static_cast<I>(n), static_cast<I>(m), w.data(), tau.data());
      if (lq != 0) return lq;
      for (std::int64_t i = 0; i < n; ++i) {
        for (std::int64_t j = 0; j < n; ++j) r[i * n + j] = j >= i ? w[static_cast<std::size_t>(i * n + j)] : T(0);
      }
      const int info = orglq(static_cast<I>(n), static_cast<I>(m), static_cast<I>(n), w.data(), tau.data());
      if (info == 0) std::copy(w.begin(), w.begin() + m * n, q);
      return info;
    }
  }
  // Column-major m x max(n, qcols) work buffer: A in the first n columns.
  const std::int64_t cols = std::max(n, qcols);
  std::vector<T> w = lapack_buffer<T>(m * cols);
  to_col_major(a, m, n, w.data());
  std::vector<T> tau = lapack_buffer<T>(k);
  int info = geqrf(static_cast<I>(m), static_cast<I>(n), w.data(), tau.data());
  if (info != 0) return info;
  for (std::int64_t i = 0; i < rrows; ++i) {
    for (std::int64_t j = 0; j < n; ++j) r[i * n + j] = (j >= i && i < m) ? w[i + j * m] : T(0);
  }
  info = ungqr(static_cast<I>(m), static_cast<I>(qcols), static_cast<I>(k), w.data(), tau.data());
  if (info != 0) return info;
  to_row_major(w.data(), m, qcols, m, q);
  return 0;
}

template <class T>
int cholesky(const T* a, std::int64_t n, T* l) {
  const OneBlasThread one_thread;
  // Column-major view: A^T = conj(A), whose upper triangle is A's lower one. potrf('U') gives
  // conj(A) = U'^H U'; read back row-major that is L = U'^T, with L L^H = A.
  std::copy(a, a + n * n, l);
  if (n == 0) return 0;
  const int info = potrf(static_cast<I>(n), l);
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t j = i + 1; j < n; ++j) l[i * n + j] = T(0);
  }
  return info;
}

template <class T>
int solve(const T* a, const T* b, std::int64_t n, std::int64_t k, bool adjoint, T* x) {
  const OneBlasThread one_thread;
  if (n == 0 || k == 0) return 0;
  // Column-major op(A): A itself is the transpose of the buffer; A^H is the buffer conjugated.
  std::vector<T> ac = lapack_buffer<T>(n * n);
  if (adjoint) {
    for (std::int64_t i = 0; i < n * n; ++i) ac[static_cast<std::size_t>(i)] = conj_of(a[i]);
  } else {
    to_col_major(a, n, n, ac.data());
  }
  std::vector<T> bc = lapack_buffer<T>(n * k);
  to_col_major(b, n, k, bc.data());
  std::vector<I> piv = lapack_buffer<I>(n);
  const int info = gesv(static_cast<I>(n), static_cast<I>(k), ac.data(), piv.data(), bc.data());
  if (info == 0) to_row_major(bc.data(), n, k, n, x);
  return info;
}

template <class T>
int lu(const T* a, std::int64_t m, std::int64_t n, T* p, T* l, T* u, Real<T>* parity, std::int64_t* pivots) {
  const OneBlasThread one_thread;
  const std::int64_t k = std::min(m, n);
  std::vector<T> w = lapack_buffer<T>(m * n);
  to_col_major(a, m, n, w.data());
  std::vector<I> piv = lapack_buffer<I>(k);
  const int info = k == 0 ? 0 : getrf(static_cast<I>(m), static_cast<I>(n), w.data(), piv.data());
  if (info < 0) return info;
  // Row interchanges in order: row i of P^T A is row perm[i] of A; A = P L U with P[perm[i], i] = 1.
  std::vector<std::int64_t> perm(static_cast<std::size_t>(m));
  for (std::int64_t i = 0; i < m; ++i) perm[static_cast<std::size_t>(i)] = i;
  Real<T> sign = 1;
  for (std::int64_t i = 0; i < k; ++i) {
    pivots[i] = piv[static_cast<std::size_t>(i)];
    const auto j = static_cast<std::int64_t>(piv[static_cast<std::size_t>(i)]) - 1;
    if (j != i) {
      std::swap(perm[static_cast<std::size_t>(i)], perm[static_cast<std::size_t>(j)]);
      sign = -sign;
    }
  }
  *parity = sign;
  std::fill(p, p + m * m, T(0));
  for (std::int64_t i = 0; i < m; ++i) p[perm[static_cast<std::size_t>(i)] * m + i] = T(1);
  // L [m, k]: the strict lower part of the packed factor and a unit diagonal; U [k, n]: its upper part.
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < k; ++j) {
      l[i * k + j] = j < i ? w[static_cast<std::size_t>(i + j * m)] : (j == i ? T(1) : T(0));
    }
  }
  for (std::int64_t i = 0; i < k; ++i) {
    for (std::int64_t j = 0; j < n; ++j) u[i * n + j] = j >= i ? w[static_cast<std::size_t>(i + j * m)] : T(0);
  }
  return info;
}

template <class T>
int eig(const T* a, std::int64_t n, std::complex<Real<T>>* w, std::complex<Real<T>>* v) {
  const OneBlasThread one_thread;
  using C = std::complex<Real<T>>;
  if (n == 0) return 0;
  if constexpr (!is_complex_v<T>) {
    // Real A: the real routine (as NumPy and PyTorch), so the order is LAPACK's real one (from the
    // real Schur form: a complex conjugate pair adjacent, positive imaginary part first), real
    // eigenvalues have imaginary part exactly 0 and pairs are exact conjugates. Its vectors come
    // packed: for a real eigenvalue column j is the vector; for a pair (j, j + 1) the vectors are
    // column j +- i column j + 1 (each of unit 2-norm, as LAPACK normalizes them).
    std::vector<T> ac = lapack_buffer<T>(n * n), vr = lapack_buffer<T>(n * n);
    std::vector<T> wr = lapack_buffer<T>(n), wi = lapack_buffer<T>(n);
    to_col_major(a, n, n, ac.data());
    const int info = geev(static_cast<I>(n), ac.data(), wr.data(), wi.data(), vr.data());
    if (info != 0) return info;
    for (std::int64_t j = 0; j < n; ++j) {
      const auto sj = static_cast<std::size_t>(j);
      w[j] = C(wr[sj], wi[sj]);
      if (wi[sj] == T(0)) {
        for (std::int64_t i = 0; i < n; ++i) v[i * n + j] = C(vr[static_cast<std::size_t>(i + j * n)]);
      } else if (j + 1 < n) {  // the pair (j, j + 1), wi[j] > 0
        w[j + 1] = C(wr[sj + 1], wi[sj + 1]);
        for (std::int64_t i = 0; i < n; ++i) {
          const T re = vr[static_cast<std::size_t>(i + j * n)], im = vr[static_cast<std::size_t>(i + (j + 1) * n)];
          v[i * n + j] = C(re, im);
          v[i * n + j + 1] = C(re, -im);
        }
        ++j;
      }
    }
    return 0;
  }
  std::vector<C> ac = lapack_buffer<C>(n * n), vr = lapack_buffer<C>(n * n);
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t j = 0; j < n; ++j) ac[static_cast<std::size_t>(i + j * n)] = C(a[i * n + j]);
  }
  const int info = geev(static_cast<I>(n), ac.data(), w, vr.data());
  if (info == 0) to_row_major(vr.data(), n, n, n, v);
  return info;
}

template <class T>
void trsm(const T* a, T* x, std::int64_t m, std::int64_t k, const TriangularSolveAttrs& t) {
  const OneBlasThread one_thread;
  if (m == 0 || k == 0) return;
  const auto side = t.left_side ? CblasLeft : CblasRight;
  const auto uplo = t.lower ? CblasLower : CblasUpper;
  const auto trans = t.adjoint ? (is_complex_v<T> ? CblasConjTrans : CblasTrans) : CblasNoTrans;
  const auto diag = t.unit_diagonal ? CblasUnit : CblasNonUnit;
  const auto M = static_cast<blasint>(m), K = static_cast<blasint>(k);
  const blasint lda = t.left_side ? M : K;
  if constexpr (std::is_same_v<T, float>) {
    cblas_strsm(CblasRowMajor, side, uplo, trans, diag, M, K, 1.0f, a, lda, x, K);
  } else if constexpr (std::is_same_v<T, double>) {
    cblas_dtrsm(CblasRowMajor, side, uplo, trans, diag, M, K, 1.0, a, lda, x, K);
  } else if constexpr (std::is_same_v<T, c64>) {
    const c64 one(1);
    cblas_ctrsm(CblasRowMajor, side, uplo, trans, diag, M, K, &one, a, lda, x, K);
  } else {
    const c128 one(1);
    cblas_ztrsm(CblasRowMajor, side, uplo, trans, diag, M, K, &one, a, lda, x, K);
  }
}

#define TENFERRO_LAPACK_INSTANTIATE(T)                                                               \
  template int svd<T>(const T*, std::int64_t, std::int64_t, bool, T*, Real<T>*, T*);                  \
  template int eigh<T>(const T*, std::int64_t, Real<T>*, T*);                                        \
  template int qr<T>(const T*, std::int64_t, std::int64_t, bool, T*, T*);                            \
  template int cholesky<T>(const T*, std::int64_t, T*);                                              \
  template int solve<T>(const T*, const T*, std::int64_t, std::int64_t, bool, T*);                   \
  template int lu<T>(const T*, std::int64_t, std::int64_t, T*, T*, T*, Real<T>*, std::int64_t*);      \
  template int eig<T>(const T*, std::int64_t, std::complex<Real<T>>*, std::complex<Real<T>>*);       \
  template void trsm<T>(const T*, T*, std::int64_t, std::int64_t, const TriangularSolveAttrs&);
TENFERRO_LAPACK_INSTANTIATE(float)
TENFERRO_LAPACK_INSTANTIATE(double)
TENFERRO_LAPACK_INSTANTIATE(c64)
TENFERRO_LAPACK_INSTANTIATE(c128)
#undef TENFERRO_LAPACK_INSTANTIATE

}  // namespace tenferro::detail::lapack

namespace tenferro::detail {

void require_matrix(const char* op, const TensorType& a, bool square) {
  if (!is_inexact(a.dtype)) {
    throw DTypeError(std::string(op) + ": operand " + a.to_string() + " has dtype " + dtype_name(a.dtype) +
                     "; expected f32, f64, c64 or c128");
  }
  if (a.rank() < 2) {
    throw ShapeError(std::string(op) + ": operand " + a.to_string() +
                     " is not a matrix; expected rank >= 2 (a batch of matrices in the last two axes)");
  }
  if (square && a.shape[a.rank() - 1] != a.shape[a.rank() - 2]) {
    throw ShapeError(std::string(op) + ": operand " + a.to_string() + " is not square; expected [.., n, n]");
  }
  lapack::check_lapack_size(op, a.shape[a.rank() - 2], a.shape[a.rank() - 1]);
}

std::int64_t matrix_batch(const Shape& shape) {
  std::int64_t n = 1;
  for (std::size_t k = 0; k + 2 < shape.size(); ++k) n *= shape[k];
  return n;
}

void lapack_failure(const char* op, const TensorType& a, std::int64_t batch_index, int info,
                    const std::string& what) {
  throw LinalgError(std::string(op) + ": " + what + " (LAPACK info " + std::to_string(info) + ") in matrix " +
                        std::to_string(batch_index) + " of operand " + a.to_string(),
                    info);
}

}  // namespace tenferro::detail
