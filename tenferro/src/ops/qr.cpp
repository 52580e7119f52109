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
std::pair<Traced, Traced> qr_tall_tangents(const Traced& da, const Traced& q, const Traced& r) {
  TriangularSolveAttrs right_upper{.left_side = false, .lower = false};
  const Traced x = apply(ops::triangular_solve(r.type(), da.type(), right_upper), {r, da});
  const Traced c = mat::matmul(mat::adjoint(q), x);
  const Traced low = mat::tril(c, -1);
  Traced w = low - mat::adjoint(low);
  if (is_complex(c.dtype())) w = w + mat::imag_diag(c);
  const Traced dq = mat::matmul(q, w - c) + x;
  const Traced dr = mat::matmul(c - w, r);
  return {dq, dr};
}

Tangents jvp_qr(const StdTensorOp& op, const JvpArgs& a) {
  RuleTrace rule(a.b);
  const Traced x = rule.fixed(a.x[0]), dx = rule.linear(*a.t[0]);
  const Traced q = rule.fixed(a.y[0]), r = rule.fixed(a.y[1]);
  const std::int64_t m = mat::rows(x), n = mat::cols(x);
  if (m >= n) {
    if (op.attrs.get<QrAttrs>().complete && m > n) {
      throw tidu::ADRuleError(op.name(), tidu::RuleKind::Jvp,
                              "the complete QR's extra columns of Q for a tall matrix " + x.type().to_string() +
                                  " are any orthonormal completion and have no derivative; use reduced mode");
    }
    auto [dq, dr] = qr_tall_tangents(dx, q, r);
    return {rule.result(dq, op, tidu::RuleKind::Jvp), rule.result(dr, op, tidu::RuleKind::Jvp)};
  }
  // Wide: A = [A1 | A2], A1 = Q R1 square.
  auto [dq, dr1] = qr_tall_tangents(mat::cols_range(dx, 0, m), q, mat::cols_range(r, 0, m));
  const Traced a2 = mat::cols_range(x, m, n);
  const Traced dq_h_a2 = mat::matmul(mat::adjoint(dq), a2);
  const Traced dr2 = dq_h_a2 + mat::matmul(mat::adjoint(q), mat::cols_range(dx, m, n));
  return {rule.result(dq, op, tidu::RuleKind::Jvp), rule.result(mat::concat_cols(dr1, dr2), op, tidu::RuleKind::Jvp)};
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
