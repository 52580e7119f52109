// qr: A = Q R (LAPACK's geqrf + orgqr/ungqr). Order: attributes, shape rule, kernel, JVP rule,
// definition.
//
// JVP for m >= n (reduced), with X = dA R^-1 (a right triangular solve) and C = Q^H X:
//   W  = tril(C, -1) - tril(C, -1)^H + i Im(diag(C))     (skew-Hermitian: Q^H dQ on the square part)
//   dQ = Q (W - C) + X,   dR = (C - W) R
// For m < n, A = [A1 | A2] with square A1 = Q R1: (dQ, dR1) come from the square rule on A1, and
// R2 = Q^H A2 gives dR2 = dQ^H A2 + Q^H dA2. Complete mode equals reduced mode for m <= n; for
// m > n its extra columns of Q are any orthonormal completion and have no derivative.
#include <algorithm>

#include "ir/batching.hpp"
#include "ir/family.hpp"
#include "ir/linalg_rules.hpp"
#include "kernels/lapack.hpp"

namespace tenferro {

void QrAttrs::print(std::ostream& os) const { os << (complete ? "complete" : "reduced"); }

namespace ops {

StdTensorOp qr(const TensorType& a, QrAttrs attrs) {
  detail::require_matrix("qr", a, false);
  const std::size_t r = a.rank();
  const std::int64_t m = a.shape[r - 2], n = a.shape[r - 1], k = std::min(m, n);
  auto with = [&](std::int64_t rows, std::int64_t cols) {
    Shape s(a.shape.begin(), a.shape.end() - 2);
    s.push_back(rows);
    s.push_back(cols);
    return s;
  };
  const std::int64_t q_cols = attrs.complete ? m : k;
  StdTensorOp op = detail::make(OpKind::Qr, TensorType{a.dtype, with(m, q_cols)}, OpAttrs(attrs));
  op.more_outs = {TensorType{a.dtype, with(q_cols, n)}};
  return op;
}

}  // namespace ops

namespace detail {
namespace {

void eval_qr(const StdTensorOp& op, Operands in, std::span<Tensor> out) {
  const Tensor& a = *in[0];
  const bool complete = op.attrs.get<QrAttrs>().complete;
  const std::size_t r = a.rank();
  const std::int64_t m = a.shape()[r - 2], n = a.shape()[r - 1], batch = matrix_batch(a.shape());
  Tensor q = Tensor::uninitialized(op.out), rr = Tensor::uninitialized(op.output_type(1));
  const std::int64_t q_size = m * op.out.shape.back(), r_size = op.output_type(1).shape[r - 2] * n;
  visit_inexact(a.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const std::vector<int> infos = each_matrix(batch, std::max(m, n), [&](std::int64_t b) {
      return lapack::qr<T>(a.data<T>() + b * m * n, m, n, complete, q.data<T>() + b * q_size, rr.data<T>() + b * r_size);
    });
    for (std::int64_t b = 0; b < batch; ++b) {
      const int info = infos[static_cast<std::size_t>(b)];
      if (info != 0) lapack_failure("qr", a.type(), b, info, "the QR factorization failed");
    }
  });
  out[0] = std::move(q);
  out[1] = std::move(rr);
}

/// (dQ, dR) of the square or tall case.
std::pair<Mat, Mat> qr_tall_tangents(MatAlg& g, const Mat& da, const Mat& q, const Mat& r) {
  TriangularSolveAttrs right_upper{.left_side = false, .lower = false};
  const Mat x = g.apply(ops::triangular_solve(g.type(r), g.type(da), right_upper), {r, da});
  const Mat c = g.matmul(g.adjoint(q), x);
  const Mat low = g.tril(c, -1);
  Mat w = g.sub(low, g.adjoint(low));
  if (is_complex(g.dtype(c))) w = g.add(w, g.imag_diag(c));
  const Mat dq = g.add(g.matmul(q, g.sub(w, c)), x);
  const Mat dr = g.matmul(g.sub(c, w), r);
  return {dq, dr};
}

Tangents jvp_qr(const StdTensorOp& op, const JvpArgs& a) {
  MatAlg g(a.b);
  const Mat x = g.fixed(a.x[0]), dx = g.tangent(*a.t[0]);
  const Mat q = g.fixed(a.y[0]), r = g.fixed(a.y[1]);
  const std::int64_t m = g.rows(x), n = g.cols(x);
  if (m >= n) {
    if (op.attrs.get<QrAttrs>().complete && m > n) {
      throw tidu::ADRuleError(op.name(), tidu::RuleKind::Jvp,
                              "the complete QR's extra columns of Q for a tall matrix " + g.type(x).to_string() +
                                  " are any orthonormal completion and have no derivative; use reduced mode");
    }
    auto [dq, dr] = qr_tall_tangents(g, dx, q, r);
    return {g.id(dq), g.id(dr)};
  }
  // Wide: A = [A1 | A2], A1 = Q R1 square.
  auto [dq, dr1] = qr_tall_tangents(g, g.cols_range(dx, 0, m), q, g.cols_range(r, 0, m));
  const Mat a2 = g.cols_range(x, m, n);
  const Mat dr2 = g.add(g.matmul(g.adjoint(dq), a2), g.matmul(g.adjoint(q), g.cols_range(dx, m, n)));
  return {g.id(dq), g.id(g.concat_cols(dr1, dr2))};
}

}  // namespace

const OpDef& def_Qr() {
  static const OpDef d{.name = "qr", .kind = OpKind::Qr, .operands = {kNonlinear}, .outputs = 2,
                       .shape_rule = [](Types t, const OpAttrs& a) {
                         StdTensorOp op = ops::qr(t[0], a.get<QrAttrs>());
                         return std::vector<TensorType>{op.out, op.more_outs[0]};
                       },
                       .kernel = eval_qr, .jvp = jvp_qr, .concurrent = true, .batch = detail::batch_leading_axis()};
  return d;
}

}  // namespace detail
}  // namespace tenferro
