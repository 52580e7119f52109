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
  MatAlg g(a.b);
  const double eps = op.attrs.get<EighAttrs>().broadening;
  const Mat w = g.fixed(a.y[0]), v = g.fixed(a.y[1]);
  const DType c = g.dtype(w);
  const Mat da = g.to_dtype(g.tangent(*a.t[0]), c);
  const Mat p = g.apply(ops::solve(g.type(v), g.type(v), SolveAttrs{false}), {v, g.matmul(da, v)});
  const Mat dw = g.diag(p);
  // Broadened 1/(w_j - w_i): conj(x) / (|x|^2 + eps), its diagonal masked (x + I there).
  const Mat gap = g.pairwise_diff(w);
  const Mat eye = g.diag_embed(g.fixed(g.emit().full(g.type(w), 1.0)));
  const Mat shifted = g.add(gap, eye);
  const Mat den = g.add(g.real(g.mul(shifted, g.conj(shifted))), g.fixed(g.emit().full(TensorType{real_dtype(c), g.type(gap).shape}, eps)));
  const Mat off = g.add(g.fixed(g.emit().full(g.type(gap), 1.0)), g.neg(eye));
  const Mat f = g.mul(g.div(g.conj(shifted), g.to_dtype(den, c)), off);
  const Mat dv0 = g.matmul(v, g.mul(f, p));
  const Mat norm_fix = g.to_dtype(g.real(g.diag(g.matmul(g.adjoint(v), dv0))), c);
  return {g.id(dw), g.id(g.sub(dv0, g.scale_cols(v, norm_fix)))};
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
