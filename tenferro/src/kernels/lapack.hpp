#pragma once
// Internal: one-matrix LAPACK routines on row-major storage, for the kernels of the linear-algebra
// ops. LAPACK is column-major; each routine either reads the row-major buffer as the transpose it
// is (svd swaps its factors, cholesky reads the other triangle) or copies through a transposed
// buffer (O(n^2) beside the O(n^3) factorization). Instantiated for float, double, c64, c128.
//
// Every routine returns LAPACK's info (0 on success); callers turn a nonzero value into a
// LinalgError that names the op and the batch element. Sizes must fit LAPACK's 32-bit integers
// (check_lapack_size).
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "tenferro/dtype.hpp"
#include "tenferro/error.hpp"
#include "kernels/parallel.hpp"
#include "tenferro/ops/linalg_attrs.hpp"
#include "tenferro/threads.hpp"

namespace tenferro::detail::lapack {

template <class T>
struct RealOf {
  using type = T;
};
template <class R>
struct RealOf<std::complex<R>> {
  using type = R;
};
template <class T>
using Real = typename RealOf<T>::type;

/// Throws ShapeError naming `op` if a dimension exceeds LAPACK's integer range.
void check_lapack_size(const char* op, std::int64_t m, std::int64_t n);

/// a [m, n] = u diag(s) vh, s [k] descending, k = min(m, n). Thin: u [m, k], vh [k, n]; full:
/// u [m, m], vh [n, n]; u and vh null: values only.
template <class T>
int svd(const T* a, std::int64_t m, std::int64_t n, bool full, T* u, Real<T>* s, T* vh);

/// Hermitian a [n, n] (lower triangle read) = v diag(w) v^H; w ascending; v written if non-null.
template <class T>
int eigh(const T* a, std::int64_t n, Real<T>* w, T* v);

/// a [m, n] = q r; reduced: q [m, k], r [k, n]; complete: q [m, m], r [m, n].
template <class T>
int qr(const T* a, std::int64_t m, std::int64_t n, bool complete, T* q, T* r);

/// Hermitian positive-definite a [n, n] (lower triangle read) = l l^H; l [n, n] lower (its strict
/// upper triangle zeroed). info > 0: the leading minor of that order is not positive definite.
template <class T>
int cholesky(const T* a, std::int64_t n, T* l);

/// x [n, k] with op(a) x = b, a [n, n], op = identity or adjoint. info > 0: u(info, info) is zero.
template <class T>
int solve(const T* a, const T* b, std::int64_t n, std::int64_t k, bool adjoint, T* x);

/// a [m, n] = p l u with partial pivoting, k = min(m, n); p [m, m] a permutation matrix, l [m, k]
/// unit lower, u [k, n] upper; parity the permutation's sign; pivots [k] LAPACK's 1-based row
/// interchanges. info > 0 (u singular) still gives the factors.
template <class T>
int lu(const T* a, std::int64_t m, std::int64_t n, T* p, T* l, T* u, Real<T>* parity, std::int64_t* pivots);

/// General a [n, n] = v diag(w) v^-1 with complex w [n] and v [n, n] (columns of unit 2-norm,
/// LAPACK's geev). Real a goes through the real routine (sgeev/dgeev), whose order (conjugate
/// pairs adjacent, positive imaginary part first) NumPy and PyTorch return too.
template <class T>
int eig(const T* a, std::int64_t n, std::complex<Real<T>>* w, std::complex<Real<T>>* v);

/// In place, x [m, k] := op(a)^-1 x (left) or x op(a)^-1 (right), a [n, n] triangular (BLAS trsm).
template <class T>
void trsm(const T* a, T* x, std::int64_t m, std::int64_t k, const TriangularSolveAttrs& attrs);

}  // namespace tenferro::detail::lapack

namespace tenferro::detail {

/// Throws ShapeError/DTypeError naming `op` unless `a` is a batch of matrices (rank >= 2, square
/// if asked) of a float or complex dtype.
void require_matrix(const char* op, const TensorType& a, bool square);
/// The number of matrices in a [.., m, n] batch.
std::int64_t matrix_batch(const Shape& shape);
/// infos[b] = one(b) for every matrix b of a batch of `batch` matrices of order about n: on the
/// threads when there are several and enough work (batch n^3 >= 2^15), each matrix one
/// single-threaded LAPACK call on whichever thread takes it. The caller reports failures from the
/// infos in batch order afterwards, so the matrix an error names does not depend on the threads.
template <class One>
std::vector<int> each_matrix(std::int64_t batch, std::int64_t n, One one) {
  std::vector<int> infos(static_cast<std::size_t>(batch), 0);
  const double work = static_cast<double>(batch) * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
  const int threads = batch >= 2 && work >= 32768.0 ? num_threads() : 1;
  exec::parallel_ranges(batch, threads, [&](std::int64_t lo, std::int64_t hi) {
    for (std::int64_t b = lo; b < hi; ++b) infos[static_cast<std::size_t>(b)] = one(b);
  });
  return infos;
}

/// Throws the LinalgError of a failed LAPACK call: names the op, the batch element, the matrix
/// type, LAPACK's info and `what` happened.
[[noreturn]] void lapack_failure(const char* op, const TensorType& a, std::int64_t batch_index, int info,
                                 const std::string& what);

/// Calls f(T{}) with T the element type of a float or complex dtype.
template <class F>
void visit_inexact(DType d, F&& f) {
  switch (d) {
    case DType::F32: f(float{}); return;
    case DType::F64: f(double{}); return;
    case DType::C64: f(c64{}); return;
    case DType::C128: f(c128{}); return;
    case DType::I64:
    case DType::Bool: break;
  }
  throw DTypeError(std::string("linear algebra: dtype ") + dtype_name(d) + " is not float or complex");
}

}  // namespace tenferro::detail
