#pragma once
// Internal: matrix algebra for the AD rules of the linear-algebra ops, on the Traced values of a
// RuleTrace (tenferro/ops/rule.hpp). A rule's fixed values (primal operands and results, and
// what is computed from them alone) and linear ones (tangents, cotangents) are Traced values of
// one rule trace; these functions record ordinary ops on them, and the trace infers each op's
// role (primal when every operand is fixed, else linear in its linear operands). The rules read
// like their formulas, and the recorded graph is linear in the tangents by construction.
//
// Matrices are the last two axes; leading axes are a batch and must agree (no broadcasting).
// Functions whose names the user API also has (matmul, real) are spelled out here, qualified
// `mat::`, so that a call never resolves to the user API's broadcasting variant by accident.
#include <cstdint>

#include "tenferro/ops/rule.hpp"

namespace tenferro::detail::mat {

/// Length of the last axis / of the second-to-last axis.
inline std::int64_t cols(const Traced& a) { return a.shape().back(); }
inline std::int64_t rows(const Traced& a) { return a.shape()[a.rank() - 2]; }

/// The batched matrix product over the last two axes (batch axes equal).
Traced matmul(const Traced& a, const Traced& b);
/// Conjugate transpose of the last two axes (transpose for real dtypes).
Traced adjoint(const Traced& a);
/// The real part (for real dtypes, a itself: nothing is recorded).
Traced real_part(const Traced& a);
/// The diagonal of the last two axes, [.., n] (square matrices here).
Traced diag(const Traced& a);
/// [.., n] -> the diagonal matrix [.., n, n].
Traced diag_embed(const Traced& a);
/// a * v[.., None, :] (scales column j by v_j) and a * v[.., :, None] (row i by v_i); v has a's
/// batch axes and a's dtype.
Traced scale_cols(const Traced& a, const Traced& v);
Traced scale_rows(const Traced& a, const Traced& v);
/// Entries on or below (tril) / above (triu) the k-th diagonal kept, the others zero.
Traced tril(const Traced& a, std::int64_t k = 0);
Traced triu(const Traced& a, std::int64_t k = 0);
/// Converts to `dtype` (a real value to complex, say); a itself if it has that dtype.
Traced to_dtype(const Traced& a, DType dtype);
/// (a + a^H) / 2.
Traced hermitian_part(const Traced& a);
/// (a - a^H) / 2 restricted to the diagonal: i Im(diag(a)) as a diagonal matrix (0 for real).
Traced imag_diag(const Traced& a);
/// Columns [from, to) / rows [from, to) of the last two axes.
Traced cols_range(const Traced& a, std::int64_t from, std::int64_t to);
Traced rows_range(const Traced& a, std::int64_t from, std::int64_t to);
/// [a | b] along the last axis and [a; b] along the second-to-last axis.
Traced concat_cols(const Traced& a, const Traced& b);
Traced concat_rows(const Traced& a, const Traced& b);
/// The block matrix [[a, b], [0, c]] (each [.., n, n]).
Traced upper_block(const Traced& a, const Traced& b, const Traced& c);
/// A value of `type` with every element `value`, recorded in `like`'s trace.
Traced full(const Traced& like, const TensorType& type, double value);
/// The broadened reciprocal of the spectral rules, off the diagonal: x / (x^2 + eps) for a fixed
/// real square x, 0 on the diagonal. The diagonal is replaced by 1 before the Lorentzian and
/// masked after, so that no derivative of the Lorentzian at 0 (1/eps) enters the graph where the
/// value is discarded anyway (at second order its cancelling terms would cost 1e-4 in rounding).
Traced lorentzian_offdiag(const Traced& x, double eps);
/// 1/x where x != 0, 0 where x == 0 (fixed, real): no division by zero is ever evaluated.
Traced safe_reciprocal(const Traced& x);
/// F[.., i, j] = f(v_j, v_i) of a real vector v: pairwise differences v_j - v_i and sums.
Traced pairwise_diff(const Traced& v);
Traced pairwise_sum(const Traced& v);

}  // namespace tenferro::detail::mat
