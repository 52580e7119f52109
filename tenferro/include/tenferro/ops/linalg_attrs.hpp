#pragma once
// Attributes and descriptor factories of the linear-algebra primitives (tenferro/linalg.hpp says
// what they compute). Matrices are the last two axes of an operand; leading axes are a batch.
#include <cstdint>
#include <ostream>
#include <vector>

#include "tenferro/ops/op_attrs.hpp"
#include "tenferro/ops/std_tensor_op.hpp"

namespace tenferro {

/// svd and svdvals: thin or full vectors (svd), and the Lorentzian broadening of the JVP rule.
struct SvdAttrs {
  bool full = false;
  double broadening = 1e-12;
  bool operator==(const SvdAttrs&) const = default;
  std::size_t hash() const;
  void print(std::ostream& os) const;  // thin, eps=1e-12
};

/// eigh and eigvalsh: the Lorentzian broadening of the JVP rule.
struct EighAttrs {
  double broadening = 1e-12;
  bool operator==(const EighAttrs&) const = default;
  std::size_t hash() const;
  void print(std::ostream& os) const;  // eps=1e-12
};

/// qr: reduced (Q [m, k], R [k, n]) or complete (Q [m, m], R [m, n]).
struct QrAttrs {
  bool complete = false;
  bool operator==(const QrAttrs&) const = default;
  std::size_t hash() const { return complete ? 1 : 0; }
  void print(std::ostream& os) const;  // reduced | complete
};

/// triangular_solve: op(A) X = B (left_side) or X op(A) = B, op(A) = A or A^H (adjoint).
struct TriangularSolveAttrs {
  bool left_side = true, lower = true, adjoint = false, unit_diagonal = false;
  bool operator==(const TriangularSolveAttrs&) const = default;
  std::size_t hash() const;
  void print(std::ostream& os) const;  // left, lower, adjoint, unit
};

/// solve: op(A) X = B with op(A) = A or A^H.
struct SolveAttrs {
  bool adjoint = false;
  bool operator==(const SolveAttrs&) const = default;
  std::size_t hash() const { return adjoint ? 1 : 0; }
  void print(std::ostream& os) const;  // adjoint | plain
};

/// lu_pivots_to_permutation: the length of the permutation (the matrix's row count m).
struct LuPermutationAttrs {
  std::int64_t rows = 0;
  bool operator==(const LuPermutationAttrs&) const = default;
  std::size_t hash() const { return static_cast<std::size_t>(rows); }
  void print(std::ostream& os) const { os << "rows=" << rows; }
};

namespace ops {
/// U, S, Vh of a [.., m, n] float or complex operand; S real, descending.
StdTensorOp svd(const TensorType& a, SvdAttrs attrs);
/// S alone (computed without vectors; `full` is ignored).
StdTensorOp svdvals(const TensorType& a, SvdAttrs attrs);
/// Eigenvalues (real, ascending) and eigenvectors (columns) of a Hermitian [.., n, n].
StdTensorOp eigh(const TensorType& a, EighAttrs attrs);
/// Eigenvalues alone.
StdTensorOp eigvalsh(const TensorType& a, EighAttrs attrs);
/// Eigenvalues and right eigenvectors (unit 2-norm columns) of a general [.., n, n]; both complex
/// (c64 for f32/c64 operands, c128 for f64/c128).
StdTensorOp eig(const TensorType& a, EighAttrs attrs);
/// Q, R of a [.., m, n] operand.
StdTensorOp qr(const TensorType& a, QrAttrs attrs);
/// Lower Cholesky factor of a Hermitian positive-definite [.., n, n].
StdTensorOp cholesky(const TensorType& a);
/// X of op(A) X = B (left) or X op(A) = B; A [.., n, n] with batch axes a suffix of B's.
StdTensorOp triangular_solve(const TensorType& a, const TensorType& b, TriangularSolveAttrs attrs);
/// X of op(A) X = B, A [.., n, n], B [.., n, k] with equal batch axes.
StdTensorOp solve(const TensorType& a, const TensorType& b, SolveAttrs attrs);
/// P [.., m, m], L [.., m, k] (unit lower), U [.., k, n] (upper), the permutation's parity (+-1,
/// A's real dtype, batch shape) and LAPACK's pivots (i64 [.., k], 1-based: row i was interchanged
/// with row pivots[i]) of A [.., m, n] = P L U, k = min(m, n).
StdTensorOp lu(const TensorType& a);
/// The permutation perm (i64 [.., rows]) of LU pivots (i64 [.., k], 1-based, k <= rows): row i of
/// P^T A is row perm[i] of A. Not differentiable (integer values).
StdTensorOp lu_pivots_to_permutation(const TensorType& pivots, LuPermutationAttrs attrs);
/// exp(A) of a square [.., n, n].
StdTensorOp expm(const TensorType& a);
/// The Frechet derivative of exp at A in the direction E (linear in E): both [.., n, n].
StdTensorOp expm_frechet(const TensorType& a, const TensorType& e);
}  // namespace ops

}  // namespace tenferro
