#pragma once
// Linear algebra on traced tensors, differentiable to any order.
//
// Every function takes matrices in the last two axes and batches over the leading ones (f32, f64,
// c64, c128). The decompositions are primitives computed by LAPACK (through LAPACKE and
// OpenBLAS); their JVP rules are written with other primitives (dot_general, triangular_solve,
// elementwise ops), so reverse mode comes from transposing them and every rule can be
// differentiated again. The rest (det, inv, lstsq, norms, expm, ...) are compositions of them.
//
// Conventions (docs/linalg.md has the derivations):
// - U, S, Vh = svd(A) with A = U diag(S) Vh, S real, descending. eigh returns ascending eigenvalues.
// - Hermitian inputs (eigh, cholesky) are read from their lower triangle; the derivative is that of
//   the function of (A + A^H)/2, so gradients are Hermitian, as in JAX and PyTorch.
// - Spectral rules contain 1/(s_j - s_i) and 1/(s_j + s_i) (svd) or 1/(w_j - w_i) (eigh). Each is
//   replaced by the Lorentzian x/(x^2 + eps) (eps = `broadening`, absolute, default 1e-12), which
//   equals 1/x up to a relative eps/x^2 and is 0 at x = 0: degenerate spectra give finite
//   derivatives, exact for functions that do not depend on the gauge inside a degenerate subspace
//   (S, projectors onto whole degenerate subspaces). Exactly-zero singular values contribute their
//   1/s terms as 0, not NaN. At an exact degeneracy the Lorentzian's own derivative is 1/eps, so
//   second derivatives there carry rounding errors of order 1e-16/eps.
// - Complex svd/eigh vectors are fixed up to a phase per column; the rules choose the phase
//   derivative that makes diag(V^H dV) = 0 (and, for svd, gives diag(U^H dU) = i Im(diag(U^H dA V))/S).
//   Only gauge-invariant functions (|U|, U diag(S) Vh, projectors U U^H, S) have well-defined
//   derivatives; those are what the tests check.
// - Singular input: solve, inv and triangular_solve with an exactly singular matrix throw
//   LinalgError with LAPACK's info (the first zero pivot); cholesky of a matrix that is not positive
//   definite throws LinalgError naming the order of the failing leading minor. Ill-conditioned
//   input is solved as LAPACK solves it (no condition-number check).
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "tenferro/op_list.hpp"
#include "tenferro/traced.hpp"

namespace tenferro::linalg {

/// Default Lorentzian broadening of the spectral rules (see above).
inline constexpr double kDefaultBroadening = 1e-12;

struct SvdOptions {
  /// false: thin (U [.., m, k], Vh [.., k, n], k = min(m, n)); true: U [.., m, m], Vh [.., n, n].
  /// The derivative of the full decomposition's extra columns is not defined (they are any
  /// orthonormal completion): differentiating full vectors of a non-square matrix throws ADRuleError.
  bool full_matrices = false;
  double broadening = kDefaultBroadening;
};
struct Svd {
  Traced U, S, Vh;
};
Svd svd(const Traced& a, const SvdOptions& options = {});
/// The singular values alone (descending); computed without vectors, differentiable.
Traced svdvals(const Traced& a, double broadening = kDefaultBroadening);

enum class QrMode : std::uint8_t {
  Reduced,   ///< Q [.., m, k], R [.., k, n], k = min(m, n)
  Complete,  ///< Q [.., m, m], R [.., m, n]; differentiable when m <= n (then equal to Reduced)
};
struct Qr {
  Traced Q, R;
};
/// A = Q R, R upper triangular (LAPACK's geqrf sign convention: no sign normalization). Tall, square
/// and wide matrices are differentiable in reduced mode.
Qr qr(const Traced& a, QrMode mode = QrMode::Reduced);

struct Eigh {
  Traced eigenvalues, eigenvectors;  ///< real ascending values; columns are eigenvectors
};
Eigh eigh(const Traced& a, double broadening = kDefaultBroadening);
Traced eigvalsh(const Traced& a, double broadening = kDefaultBroadening);

// The matrix functions that are one op each, without options: one declaration per M entry of the
// op list (tenferro/op_list.hpp), std::array<Traced, n> name(const Traced& a), whose results are
// the op's (docs/linalg.md describes each): polar(a) = {U, P} with a = U P.
#define TENFERRO_DECLARE_MATRIX(X, kind, name, n) std::array<Traced, n> name(const Traced& a);
TENFERRO_OP_LIST(TENFERRO_OP_LIST_NONE, TENFERRO_OP_LIST_SKIP, TENFERRO_OP_LIST_SKIP, TENFERRO_DECLARE_MATRIX, TENFERRO_OP_LIST_SKIP)
#undef TENFERRO_DECLARE_MATRIX

/// Eigenvalues and right eigenvectors of a general square matrix, both complex (columns of unit
/// 2-norm, each up to a phase). Differentiable for distinct eigenvalues (broadened like eigh);
/// the vectors' derivative keeps their norm and, like svd's, is meaningful for phase-invariant
/// functions (|V|, V f(w) V^-1).
/// Order: LAPACK's geev order, as numpy.linalg.eig and torch.linalg.eig. For real input (f32,
/// f64) that of the real routine: a complex conjugate pair is adjacent, positive imaginary part
/// first, and is exactly conjugate (values and vectors); real eigenvalues have imaginary part
/// exactly 0. Neither real nor complex input is sorted.
Eigh eig(const Traced& a, double broadening = kDefaultBroadening);
Traced eigvals(const Traced& a, double broadening = kDefaultBroadening);

/// The lower Cholesky factor L of a Hermitian positive-definite A = L L^H.
Traced cholesky(const Traced& a);

struct TriangularSolveOptions {
  bool left_side = true;       ///< solve op(A) X = B (true) or X op(A) = B (false)
  bool lower = true;           ///< A's lower triangle is read (else its upper)
  bool adjoint = false;        ///< op(A) = A^H (A^T for real dtypes) instead of A
  bool unit_diagonal = false;  ///< A's diagonal is taken as ones (and not read)
};
/// X with op(A) X = B (or X op(A) = B); only A's chosen triangle is read, and only it receives a
/// derivative. B may have more leading batch axes than A (A is broadcast over them).
Traced triangular_solve(const Traced& a, const Traced& b, const TriangularSolveOptions& options = {});

/// X with A X = B for square A (LU with partial pivoting). b may be a vector [.., n] or a matrix
/// [.., n, k]; A's batch axes must equal B's.
Traced solve(const Traced& a, const Traced& b);
Traced inv(const Traced& a);

struct Lu {
  Traced P, L, U;  ///< A = P L U; P a permutation matrix (A's dtype), L unit lower, U upper
};
/// LU with partial pivoting of A [.., m, n], k = min(m, n): P [.., m, m], L [.., m, k] unit lower
/// trapezoidal, U [.., k, n] upper trapezoidal (torch.linalg.lu, scipy.linalg.lu). L and U are
/// differentiable (for U's leading k x k block nonsingular).
Lu lu(const Traced& a);
struct LuFactor {
  /// LU [.., m, n]: L's strict lower part and U packed in one matrix (LAPACK's getrf output);
  /// pivots i64 [.., k], 1-based as in LAPACK and PyTorch (PyTorch's are int32): row i was
  /// interchanged with row pivots[i] (i = 1..k, in order).
  Traced LU, pivots;
};
/// The packed LU factorization of A [.., m, n] (torch.linalg.lu_factor); LU is differentiable.
LuFactor lu_factor(const Traced& a);
/// X with A X = B from A's lu_factor (square A [.., n, n]): B [.., n, k], or a vector [.., n]
/// (torch.linalg.lu_solve). Differentiable in LU (through the triangles it reads) and B. Pivots
/// out of range (not LAPACK's 1-based form) throw ValueError when the program runs.
Traced lu_solve(const Traced& LU, const Traced& pivots, const Traced& b);
Traced det(const Traced& a);
struct Slogdet {
  Traced sign, logabsdet;  ///< det = sign * exp(logabsdet); sign has |sign| = 1 (0 if singular)
};
Slogdet slogdet(const Traced& a);

/// Moore-Penrose pseudo-inverse through the SVD; singular values at most rcond * max(S) are dropped.
Traced pinv(const Traced& a, double rcond = 1e-15);
/// The least-squares solution X minimizing |A X - B|: for A [.., m, n] of full column rank
/// (m >= n) through QR of A; for a wide A (m < n) of full row rank, the minimum-norm solution of
/// A X = B, X = A^H (A A^H)^-1 B (what LAPACK's gelsd returns), through QR of A^H. B [.., m, k] or
/// a vector [.., m]. Differentiable.
Traced lstsq(const Traced& a, const Traced& b);

/// The condition number of A in the norm `ord` (numpy.linalg.cond, torch.linalg.cond): "2"
/// (default; NumPy's and PyTorch's None) and "-2" are ratios of the largest and smallest singular
/// values (any [.., m, n]; inf where the smallest is 0); "fro", "nuc", "1", "-1", "inf", "-inf" are
/// norm(A) norm(A^-1) (square A; a singular A throws LinalgError from the inverse, where NumPy
/// returns inf). Real result, differentiable.
Traced cond(const Traced& a, const std::string& ord = "2");
Traced cond(const Traced& a, double ord);

/// The first n columns of the product H_1 ... H_k of Householder reflectors H_i = I - tau_i v_i
/// v_i^H, v_i = (0, .., 0, 1, A[i+1:, i]) (torch.linalg.householder_product, LAPACK's orgqr /
/// ungqr): A [.., m, n], tau [.., k], m >= n >= k. Computed exactly as I - V T V^H (compact WY:
/// T = (I + diag(tau) striu(V^H V))^-1 diag(tau)), differentiable in A and tau.
Traced householder_product(const Traced& a, const Traced& tau);

/// numpy.linalg.tensorinv: the inverse of A [i_1..i_ind, j_1..] as a map from its trailing axes to
/// its leading ones, shape [j.., i..]; prod(i) must equal prod(j) (ShapeError otherwise).
/// tensordot(tensorinv(A), A, ind) is the identity.
Traced tensorinv(const Traced& a, int ind = 2);
/// numpy.linalg.tensorsolve: X with tensordot(A, X, X.ndim) = B, X of shape A.shape[B.ndim:];
/// `axes` (if not empty) are moved to the end of A first, in the order given. As NumPy, A must
/// hold n^2 elements and B n, n = prod(X's shape) (ShapeError otherwise).
Traced tensorsolve(const Traced& a, const Traced& b, const std::vector<std::int64_t>& axes = {});

/// Matrix norms: "fro" (Frobenius), "nuc" (nuclear, sum of singular values), "2" / "-2" (largest /
/// smallest singular value), "1" / "-1" (max / min column abs sum), "inf" / "-inf" (max / min row
/// abs sum). Real result. The same function as tenferro::matrix_norm (tenferro/math.hpp), whose
/// numeric orders are spelled here as text.
Traced matrix_norm(const Traced& a, const std::string& ord = "fro");

/// The matrix exponential (scaling and squaring with a degree-13 Pade approximant, Higham 2005).
/// Its derivative is that of the same arithmetic (exact up to the approximant's error, 1e-16).
Traced expm(const Traced& a);

/// The trace over the last two axes.
Traced trace(const Traced& a);
/// Conjugate transpose of the last two axes.
Traced adjoint(const Traced& a);
/// The identity of size n in `like`'s trace and dtype.
Traced eye(const Traced& like, std::int64_t n);

}  // namespace tenferro::linalg
