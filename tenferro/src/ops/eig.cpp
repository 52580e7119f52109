// eig: A = V diag(w) V^-1 for a general square A, w and V complex: LAPACK's real geev for real A
// (its order: conjugate pairs adjacent, positive imaginary part first, as NumPy and PyTorch), the
// complex one for complex A (kernels/lapack.cpp). Order: shape rule, kernel, JVP rule, definition.
//
// JVP, with P = V^-1 dA V (one solve with V):
//   dw = diag(P)
//   dV = V (F o P) - V Re diag(V^H V (F o P)),   F_ij = 1/(w_j - w_i) off the diagonal, 0 on it
// The first term fixes diag(V^-1 dV) = 0; the second restores the unit 2-norm of each column that
// LAPACK's normalization keeps (d|v_j|^2 = 2 Re v_j^H dv_j = 0). A column's phase is still free:
// only phase-invariant functions of V (|V|, V f(w) V^-1) have derivatives, as for svd and eigh.
// The reciprocal 1/x of the complex eigenvalue gaps is broadened as conj(x) / (|x|^2 + eps).
#include "ir/batching.hpp"
#include "ir/family.hpp"
#include "ir/linalg_rules.hpp"
#include "kernels/lapack.hpp"

namespace tenferro {

namespace ops {
StdTensorOp eig(const TensorType& a, EighAttrs attrs) {
  detail::require_matrix("eig", a, true);
  const DType c = complex_dtype(a.dtype);
  StdTensorOp op = detail::make(OpKind::Eig, TensorType{c, Shape(a.shape.begin(), a.shape.end() - 1)}, OpAttrs(attrs));
  op.more_outs = {TensorType{c, a.shape}};
  return op;
}
}  // namespace ops

namespace detail {
namespace {

void eval_eig(const StdTensorOp& op, Operands in, std::span<Tensor> out) {
  const Tensor& a = *in[0];
  const std::int64_t n = a.shape().back(), batch = matrix_batch(a.shape());
  Tensor w = Tensor::uninitialized(op.out), v = Tensor::uninitialized(op.output_type(1));
  visit_inexact(a.dtype(), [&](auto zero) {
    using T = decltype(zero);
    using C = std::complex<lapack::Real<T>>;
    const std::vector<int> infos = each_matrix(batch, n, [&](std::int64_t b) {
      return lapack::eig<T>(a.data<T>() + b * n * n, n, w.data<C>() + b * n, v.data<C>() + b * n * n);
    });
    for (std::int64_t b = 0; b < batch; ++b) {
      const int info = infos[static_cast<std::size_t>(b)];
      if (info != 0) lapack_failure("eig", a.type(), b, info, "the QR algorithm did not converge");
    }
  });
  out[0] = std::move(w);
  out[1] = std::move(v);
}

Tangents jvp_eig(const StdTensorOp& op, const JvpArgs& a) {
  RuleTrace r(a.b);
  const double eps = op.attrs.get<EighAttrs>().broadening;
  const Traced w = r.fixed(a.y[0]), v = r.fixed(a.y[1]);
  const DType c = w.dtype();
  const Traced da = mat::to_dtype(r.linear(*a.t[0]), c);
  const Traced p = apply(ops::solve(v.type(), v.type(), SolveAttrs{false}), {v, mat::matmul(da, v)});
  const Traced dw = mat::diag(p);
  // Broadened 1/(w_j - w_i): conj(x) / (|x|^2 + eps), its diagonal masked (x + I there).
  const Traced gap = mat::pairwise_diff(w);
  const Traced eye = mat::diag_embed(full_like(w, 1.0));
  const Traced shifted = gap + eye;
  const Traced den = mat::real_part(shifted * conj_if_complex(shifted)) + eps;
  const Traced off = 1.0 - eye;
  const Traced numerator = conj_if_complex(shifted);
  const Traced f = numerator / mat::to_dtype(den, c) * off;
  const Traced dv0 = mat::matmul(v, f * p);
  const Traced norm_fix = mat::to_dtype(mat::real_part(mat::diag(mat::matmul(mat::adjoint(v), dv0))), c);
  return {r.result(dw, op, tidu::RuleKind::Jvp), r.result(dv0 - mat::scale_cols(v, norm_fix), op, tidu::RuleKind::Jvp)};
}

}  // namespace

const OpDef& def_Eig() {
  static const OpDef d{.name = "eig", .kind = OpKind::Eig, .operands = {kNonlinear}, .outputs = 2,
                       .shape_rule = [](Types t, const OpAttrs& a) {
                         StdTensorOp op = ops::eig(t[0], a.get<EighAttrs>());
                         return std::vector<TensorType>{op.out, op.more_outs[0]};
                       },
                       .kernel = eval_eig, .jvp = jvp_eig, .concurrent = true, .batch = detail::batch_leading_axis()};
  return d;
}

}  // namespace detail
}  // namespace tenferro
