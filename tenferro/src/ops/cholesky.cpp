// cholesky: A = L L^H for Hermitian positive-definite A (LAPACK's potrf, lower triangle read).
// Order: shape rule, kernel, JVP rule, definition.
//
// JVP, with dH = (dA + dA^H)/2 and X = L^-1 dH L^-H (two triangular solves):
//   dL = L Phi(X),  Phi(X) = tril(X, -1) + diag(X)/2
#include "ir/batching.hpp"
#include "ir/family.hpp"
#include "ir/linalg_rules.hpp"
#include "kernels/lapack.hpp"

namespace tenferro {

namespace ops {
StdTensorOp cholesky(const TensorType& a) {
  detail::require_matrix("cholesky", a, true);
  return detail::make(OpKind::Cholesky, a);
}
}  // namespace ops

namespace detail {
namespace {

Tensor eval_cholesky(const StdTensorOp& op, Operands in) {
  const Tensor& a = *in[0];
  const std::int64_t n = a.shape().back(), batch = matrix_batch(a.shape());
  Tensor l = Tensor::uninitialized(op.out);
  visit_inexact(a.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const std::vector<int> infos = each_matrix(
        batch, n, [&](std::int64_t b) { return lapack::cholesky<T>(a.data<T>() + b * n * n, n, l.data<T>() + b * n * n); });
    for (std::int64_t b = 0; b < batch; ++b) {
      const int info = infos[static_cast<std::size_t>(b)];
      if (info > 0) {
        lapack_failure("cholesky", a.type(), b, info,
                       "the matrix is not positive definite (its leading minor of order " + std::to_string(info) +
                           " is not)");
      }
      if (info < 0) lapack_failure("cholesky", a.type(), b, info, "invalid argument");
    }
  });
  return l;
}

Tangents jvp_cholesky(const StdTensorOp& op, const JvpArgs& a) {
  RuleTrace r(a.b);
  const Traced l = r.fixed(a.y[0]);
  const Traced dh = mat::hermitian_part(r.linear(*a.t[0]));
  const Traced y = apply(ops::triangular_solve(l.type(), dh.type(), {.left_side = true, .lower = true}), {l, dh});
  const Traced x = apply(ops::triangular_solve(l.type(), y.type(), {.left_side = false, .lower = true, .adjoint = true}),
                        {l, y});
  const Traced below = mat::tril(x, -1);
  const Traced phi = below + mat::diag_embed(mat::diag(x)) * 0.5;
  return {r.result(mat::matmul(l, phi), op, tidu::RuleKind::Jvp)};
}

}  // namespace

const OpDef& def_Cholesky() {
  static const OpDef d{.name = "cholesky", .kind = OpKind::Cholesky, .operands = {kNonlinear},
                       .shape_rule = single_type(+[](Types t, const OpAttrs&) { return ops::cholesky(t[0]).out; }),
                       .kernel = single_result(eval_cholesky), .jvp = jvp_cholesky, .concurrent = true, .batch = detail::batch_leading_axis()};
  return d;
}

}  // namespace detail
}  // namespace tenferro
