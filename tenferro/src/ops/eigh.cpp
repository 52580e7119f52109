// eigh and eigvalsh: A = V diag(w) V^H for Hermitian A (LAPACK's syevd/heevd, lower triangle
// read). Order: attributes, shape rules, kernel, JVP rule, definitions.
//
// JVP, with dH = (dA + dA^H)/2 (the derivative of the function of the Hermitian part) and
// dP = V^H dH V:
//   dw = Re diag(dP)
//   dV = V (F o dP),  F_ij = 1/(w_j - w_i) off the diagonal (Lorentzian-broadened), 0 on it
// The zero diagonal of F is the gauge choice diag(V^H dV) = 0.
#include "ir/batching.hpp"
#include "ir/family.hpp"
#include "ir/linalg_rules.hpp"
#include "kernels/lapack.hpp"

namespace tenferro {

std::size_t EighAttrs::hash() const { return std::hash<double>{}(broadening); }
void EighAttrs::print(std::ostream& os) const { os << "eps=" << broadening; }

namespace ops {

namespace {
StdTensorOp eigh_op(const TensorType& a, EighAttrs attrs, bool vectors) {
  const char* name = vectors ? "eigh" : "eigvalsh";
  detail::require_matrix(name, a, true);
  if (!(attrs.broadening >= 0)) {
    throw ValueError(std::string(name) + ": broadening " + std::to_string(attrs.broadening) +
                     "; expected a value >= 0");
  }
  const TensorType w{real_dtype(a.dtype), Shape(a.shape.begin(), a.shape.end() - 1)};
  if (!vectors) return detail::make(OpKind::EighValues, w, OpAttrs(attrs));
  StdTensorOp op = detail::make(OpKind::Eigh, w, OpAttrs(attrs));
  op.more_outs = {a};
  return op;
}
}  // namespace

StdTensorOp eigh(const TensorType& a, EighAttrs attrs) { return eigh_op(a, attrs, true); }
StdTensorOp eigvalsh(const TensorType& a, EighAttrs attrs) { return eigh_op(a, attrs, false); }

}  // namespace ops

namespace detail {
namespace {

void eval_eigh(const StdTensorOp& op, Operands in, std::span<Tensor> out) {
  const Tensor& a = *in[0];
  const bool vectors = op.kind == OpKind::Eigh;
  const std::int64_t n = a.shape().back(), batch = matrix_batch(a.shape());
  Tensor w = Tensor::uninitialized(op.out);
  Tensor v = vectors ? Tensor::uninitialized(op.output_type(1)) : Tensor();
  visit_inexact(a.dtype(), [&](auto zero) {
    using T = decltype(zero);
    using R = lapack::Real<T>;
    const std::vector<int> infos = each_matrix(batch, n, [&](std::int64_t b) {
      return lapack::eigh<T>(a.data<T>() + b * n * n, n, w.data<R>() + b * n, vectors ? v.data<T>() + b * n * n : nullptr);
    });
    for (std::int64_t b = 0; b < batch; ++b) {
      const int info = infos[static_cast<std::size_t>(b)];
      if (info != 0) lapack_failure(op.name().c_str(), a.type(), b, info, "the eigensolver did not converge");
    }
  });
  out[0] = std::move(w);
  if (vectors) out[1] = std::move(v);
}

Tangents jvp_eigh(const StdTensorOp& op, const JvpArgs& a) {
  RuleTrace r(a.b);
  const double eps = op.attrs.get<EighAttrs>().broadening;
  const Traced x = r.fixed(a.x[0]);
  const Traced dh = mat::hermitian_part(r.linear(*a.t[0]));
  // The values' rule needs the vectors too: eigvalsh's emits an eigh of the same operand (fixed).
  const std::vector<Traced> wv = op.kind == OpKind::Eigh
                                  ? std::vector<Traced>{r.fixed(a.y[0]), r.fixed(a.y[1])}
                                  : apply_outputs(ops::eigh(x.type(), EighAttrs{eps}), std::span(&x, 1));
  const Traced& w = wv[0];
  const Traced& v = wv[1];
  const Traced dp = mat::matmul(mat::matmul(mat::adjoint(v), dh), v);
  const Traced dw = mat::real_part(mat::diag(dp));
  if (op.kind == OpKind::EighValues) return {r.result(dw, op, tidu::RuleKind::Jvp)};
  const Traced f = mat::to_dtype(mat::lorentzian_offdiag(mat::pairwise_diff(w), eps), x.dtype());
  const Traced dv = mat::matmul(v, f * dp);
  return {r.result(dw, op, tidu::RuleKind::Jvp), r.result(dv, op, tidu::RuleKind::Jvp)};
}

std::vector<TensorType> eigh_types(Types t, const OpAttrs& attrs, bool vectors) {
  StdTensorOp op = vectors ? ops::eigh(t[0], attrs.get<EighAttrs>()) : ops::eigvalsh(t[0], attrs.get<EighAttrs>());
  std::vector<TensorType> types{op.out};
  types.insert(types.end(), op.more_outs.begin(), op.more_outs.end());
  return types;
}

}  // namespace

const OpDef& def_Eigh() {
  static const OpDef d{.name = "eigh", .kind = OpKind::Eigh, .operands = {kNonlinear}, .outputs = 2,
                       .shape_rule = [](Types t, const OpAttrs& a) { return eigh_types(t, a, true); },
                       .kernel = eval_eigh, .jvp = jvp_eigh, .concurrent = true, .batch = detail::batch_leading_axis()};
  return d;
}
const OpDef& def_EighValues() {
  static const OpDef d{.name = "eigvalsh", .kind = OpKind::EighValues, .operands = {kNonlinear},
                       .shape_rule = [](Types t, const OpAttrs& a) { return eigh_types(t, a, false); },
                       .kernel = eval_eigh, .jvp = jvp_eigh, .concurrent = true, .batch = detail::batch_leading_axis()};
  return d;
}

}  // namespace detail
}  // namespace tenferro
