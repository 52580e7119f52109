#pragma once
// Internal: matrix algebra for the AD rules of the linear-algebra ops. A rule manipulates values
// of two kinds: fixed ones (primal values and what is computed from them alone) and linear ones
// (tangents in a JVP rule, cotangents in a transpose rule). Mat tracks the kind, and every
// operation emits a primal op when its operands are all fixed and a linear op (role: linear in
// the linear operands) otherwise. The rules then read like their formulas, and the emitted graph
// is linear in the tangents by construction; an op applied to two linear values where it is only
// linear in one (a product of tangents) is a rule bug, reported by linear_transpose as an
// ADRuleError.
//
// Matrices are the last two axes; leading axes are a batch and must agree (no broadcasting).
#include <complex>
#include <optional>
#include <vector>

#include "emit.hpp"
#include "tenferro/ops/index_attrs.hpp"
#include "tenferro/ops/linalg_attrs.hpp"

namespace tenferro::detail {

/// A value in a rule and whether it is linear (a tangent or cotangent) or fixed.
struct Mat {
  PV v;
  bool linear = false;
};

class MatAlg {
 public:
  explicit MatAlg(Builder& b) : e_(b) {}

  Mat fixed(const TensorValueKey& key) const { return {Emit::ext(key), false}; }
  Mat fixed(const PV& v) const { return {v, false}; }
  Mat tangent(LocalValueId id) const { return {Emit::local(id), true}; }
  /// The tangent/cotangent id of a linear value (the rule's result).
  LocalValueId id(const Mat& m) const;
  const TensorType& type(const Mat& m) const { return e_.type(m.v); }
  DType dtype(const Mat& m) const { return type(m).dtype; }
  /// Length of the last axis / of the second-to-last axis.
  std::int64_t cols(const Mat& m) const { return type(m).shape.back(); }
  std::int64_t rows(const Mat& m) const { return type(m).shape[type(m).rank() - 2]; }

  /// Emits `op` on `in`: primal if every operand is fixed, else linear in the linear operands.
  Mat apply(StdTensorOp op, const std::vector<Mat>& in);
  /// The results of a multi-output primal op on fixed operands.
  std::vector<Mat> apply_fixed_outputs(StdTensorOp op, const std::vector<Mat>& in);

  Mat matmul(const Mat& a, const Mat& b);
  /// Conjugate transpose of the last two axes (transpose for real dtypes).
  Mat adjoint(const Mat& a);
  Mat conj(const Mat& a);
  /// The real part (for real dtypes, a itself).
  Mat real(const Mat& a);
  Mat neg(const Mat& a);
  Mat add(const Mat& a, const Mat& b);
  Mat sub(const Mat& a, const Mat& b) { return add(a, neg(b)); }
  /// Elementwise product; shapes must agree.
  Mat mul(const Mat& a, const Mat& b);
  /// Elementwise quotient a / b with b fixed.
  Mat div(const Mat& a, const Mat& b);
  Mat scale(const Mat& a, c128 c);
  /// The diagonal of the last two axes, [.., min(m, n)] (square matrices here).
  Mat diag(const Mat& a);
  /// [.., n] -> the diagonal matrix [.., n, n].
  Mat diag_embed(const Mat& a);
  /// a * v[.., None, :] (scales column j by v_j) and a * v[.., :, None] (row i by v_i); v has a's
  /// batch axes and a's dtype.
  Mat scale_cols(const Mat& a, const Mat& v);
  Mat scale_rows(const Mat& a, const Mat& v);
  /// Entries on or below (tril) / above (triu) the k-th diagonal kept, the others zero.
  Mat tril(const Mat& a, std::int64_t k = 0);
  Mat triu(const Mat& a, std::int64_t k = 0);
  /// Converts to `dtype` (a real value to complex, say).
  Mat to_dtype(const Mat& a, DType dtype);
  /// (a + a^H) / 2.
  Mat hermitian_part(const Mat& a);
  /// (a - a^H) / 2 restricted to the diagonal: i Im(diag(a)) as a diagonal matrix (0 for real).
  Mat imag_diag(const Mat& a);
  /// Columns [from, to) / rows [from, to) of the last two axes.
  Mat cols_range(const Mat& a, std::int64_t from, std::int64_t to);
  Mat rows_range(const Mat& a, std::int64_t from, std::int64_t to);
  /// [a | b] along the last axis (both linear or both fixed).
  Mat concat_cols(const Mat& a, const Mat& b);
  /// [a; b] along the second-to-last axis (both linear or both fixed).
  Mat concat_rows(const Mat& a, const Mat& b);
  /// The block matrix [[a, b], [0, c]] (each [.., n, n]).
  Mat upper_block(const Mat& a, const Mat& b, const Mat& c);
  /// A fixed zero of a's type (a stand-in for an absent tangent).
  Mat zeros_like(const Mat& a);
  /// The broadened reciprocal of the spectral rules, off the diagonal: x / (x^2 + eps) for a fixed
  /// real square x, 0 on the diagonal. The diagonal is replaced by 1 before the Lorentzian and
  /// masked after, so that no derivative of the Lorentzian at 0 (1/eps) enters the graph where the
  /// value is discarded anyway (at second order its cancelling terms would cost 1e-4 in rounding).
  Mat lorentzian_offdiag(const Mat& x, double eps);
  /// 1/x where x != 0, 0 where x == 0 (fixed, real).
  Mat safe_reciprocal(const Mat& x);
  /// F[.., i, j] = f(v_j, v_i) of a fixed real vector v: pairwise differences v_j - v_i and sums.
  Mat pairwise_diff(const Mat& v);
  Mat pairwise_sum(const Mat& v);

  Emit& emit() { return e_; }

 private:
  Mat broadcast_vector(const Mat& v, bool along_rows, const Shape& shape);
  Mat triangle_mask(const TensorType& like, std::int64_t k, bool lower);
  Emit e_;
};

}  // namespace tenferro::detail
