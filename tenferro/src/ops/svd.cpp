// svd: A = U diag(S) Vh by LAPACK's divide and conquer (gesdd). Order: attributes, shape rule,
// kernel, JVP rule, definition.
//
// JVP (thin, k = min(m, n)), with dP = U^H dA V:
//   dS = Re diag(dP)
//   dU = U (F o (dP S + S dP^H)) + U i Im(diag(dP)) / S + [m > n] (dA V - U dP) / S
//   dV = V (F o (S dP + dP^H S))                      + [n > m] (dA^H U - V dP^H) / S
// with F_ij = 1/(s_j^2 - s_i^2) off the diagonal and 0 on it, and 1/S taken as 0 at S = 0. The
// F terms are evaluated as 1/(s_j - s_i) times the Hermitian part of dP S plus 1/(s_j + s_i) times
// its skew part, each reciprocal replaced by its Lorentzian (tenferro/linalg.hpp).
// The i Im(diag(dP))/S term is the complex gauge choice diag(V^H dV) = 0. Every factor is a
// primitive of fixed values and the products are linear in dA, so the rule transposes into the
// reverse rule and linearizes again for second order.
#include <algorithm>
#include <sstream>

#include "ir/batching.hpp"
#include "ir/family.hpp"
#include "ir/linalg_rules.hpp"
#include "kernels/lapack.hpp"

namespace tenferro {

std::size_t SvdAttrs::hash() const { return hash_mix(full ? 1 : 0, std::hash<double>{}(broadening)); }
void SvdAttrs::print(std::ostream& os) const { os << (full ? "full" : "thin") << ", eps=" << broadening; }

namespace ops {

namespace {
StdTensorOp svd_op(const TensorType& a, SvdAttrs attrs, bool vectors) {
  const char* name = vectors ? "svd" : "svdvals";
  detail::require_matrix(name, a, false);
  if (!(attrs.broadening >= 0)) {
    throw ValueError(std::string(name) + ": broadening " + std::to_string(attrs.broadening) +
                     "; expected a value >= 0");
  }
  const std::size_t r = a.rank();
  const std::int64_t m = a.shape[r - 2], n = a.shape[r - 1], k = std::min(m, n);
  auto with = [&](std::initializer_list<std::int64_t> tail) {
    Shape s(a.shape.begin(), a.shape.end() - 2);
    s.insert(s.end(), tail);
    return s;
  };
  const TensorType s_type{real_dtype(a.dtype), with({k})};
  if (!vectors) {
    attrs.full = false;
    return detail::make(OpKind::SvdValues, s_type, OpAttrs(attrs));
  }
  StdTensorOp op = detail::make(OpKind::Svd, TensorType{a.dtype, with({m, attrs.full ? m : k})}, OpAttrs(attrs));
  op.more_outs = {s_type, TensorType{a.dtype, with({attrs.full ? n : k, n})}};
  return op;
}
}  // namespace

StdTensorOp svd(const TensorType& a, SvdAttrs attrs) { return svd_op(a, attrs, true); }
StdTensorOp svdvals(const TensorType& a, SvdAttrs attrs) { return svd_op(a, attrs, false); }

}  // namespace ops

namespace detail {
namespace {

void eval_svd(const StdTensorOp& op, Operands in, std::span<Tensor> out) {
  const Tensor& a = *in[0];
  const auto& attrs = op.attrs.get<SvdAttrs>();
  const std::size_t r = a.rank();
  const std::int64_t m = a.shape()[r - 2], n = a.shape()[r - 1], k = std::min(m, n);
  const bool values_only = op.kind == OpKind::SvdValues;
  Tensor u, s, vh;
  if (values_only) {
    s = Tensor::uninitialized(op.out);
  } else {
    u = Tensor::uninitialized(op.out);
    s = Tensor::uninitialized(op.output_type(1));
    vh = Tensor::uninitialized(op.output_type(2));
  }
  const std::int64_t batch = matrix_batch(a.shape());
  const std::int64_t u_size = values_only ? 0 : op.out.shape[r - 1] * m;
  const std::int64_t vh_size = values_only ? 0 : op.output_type(2).shape[r - 2] * n;
  visit_inexact(a.dtype(), [&](auto zero) {
    using T = decltype(zero);
    using R = lapack::Real<T>;
    const std::vector<int> infos = each_matrix(batch, std::max(m, n), [&](std::int64_t b) {
      return lapack::svd<T>(a.data<T>() + b * m * n, m, n, attrs.full, values_only ? nullptr : u.data<T>() + b * u_size,
                            s.data<R>() + b * k, values_only ? nullptr : vh.data<T>() + b * vh_size);
    });
    for (std::int64_t b = 0; b < batch; ++b) {
      const int info = infos[static_cast<std::size_t>(b)];
      if (info != 0) lapack_failure("svd", a.type(), b, info, "the SVD did not converge");
    }
  });
  if (values_only) {
    out[0] = std::move(s);
  } else {
    out[0] = std::move(u);
    out[1] = std::move(s);
    out[2] = std::move(vh);
  }
}

/// The tangents (dU, dS, dVh) of the thin SVD (u, s, vh) of a along da (dU, dVh only with `vectors`).
struct SvdTangents {
  Traced ds;
  std::optional<Traced> du, dvh;
};
SvdTangents svd_tangents(const Traced& a, const Traced& da, const Traced& u, const Traced& s, const Traced& vh,
                         double eps, bool vectors) {
  const DType dt = a.dtype();
  const Traced v = mat::adjoint(vh);
  const Traced dp = mat::matmul(mat::matmul(mat::adjoint(u), da), v);
  SvdTangents t{mat::real_part(mat::diag(dp)), std::nullopt, std::nullopt};
  if (!vectors) return t;
  const std::int64_t m = mat::rows(a), n = mat::cols(a);
  // F o (dP S + S dP^H) = F- o H + F+ o W and F o (S dP + dP^H S) = F- o H - F+ o W, with the
  // Hermitian and skew parts H = (dP + dP^H)/2, W = (dP - dP^H)/2 and F-_ij = 1/(s_j - s_i),
  // F+_ij = 1/(s_j + s_i): each reciprocal broadened on its own, so a degenerate pair keeps its
  // finite skew part.
  const Traced f_minus = mat::to_dtype(mat::lorentzian_offdiag(mat::pairwise_diff(s), eps), dt);
  const Traced f_plus = mat::to_dtype(mat::lorentzian_offdiag(mat::pairwise_sum(s), eps), dt);
  const Traced s_inv = mat::to_dtype(mat::safe_reciprocal(s), dt);
  const Traced dp_h = mat::adjoint(dp);
  const Traced sym = f_minus * ((dp + dp_h) * 0.5);
  const Traced skew = f_plus * ((dp - dp_h) * 0.5);
  Traced j = sym + skew;
  if (is_complex(dt)) j = j + mat::scale_cols(mat::imag_diag(dp), s_inv);
  Traced du = mat::matmul(u, j);
  Traced dv = mat::matmul(v, sym - skew);
  if (m > n) {
    const Traced da_v = mat::matmul(da, v);
    du = du + mat::scale_cols(da_v - mat::matmul(u, dp), s_inv);
  }
  if (n > m) {
    const Traced da_h_u = mat::matmul(mat::adjoint(da), u);
    dv = dv + mat::scale_cols(da_h_u - mat::matmul(v, mat::adjoint(dp)), s_inv);
  }
  t.du = du;
  t.dvh = mat::adjoint(dv);
  return t;
}

Tangents jvp_svd(const StdTensorOp& op, const JvpArgs& a) {
  RuleTrace r(a.b);
  const auto& attrs = op.attrs.get<SvdAttrs>();
  const Traced x = r.fixed(a.x[0]), dx = r.linear(*a.t[0]);
  const TensorType& xt = x.type();
  const std::int64_t m = xt.shape[xt.rank() - 2], n = xt.shape.back();
  if (op.kind == OpKind::SvdValues) {
    // The values' rule needs the vectors: a thin SVD of the same operand (fixed).
    auto usv = apply_outputs(ops::svd(xt, SvdAttrs{false, attrs.broadening}), std::span(&x, 1));
    return {r.result(svd_tangents(x, dx, usv[0], usv[1], usv[2], attrs.broadening, false).ds, op, tidu::RuleKind::Jvp)};
  }
  if (attrs.full && m != n) {
    throw tidu::ADRuleError(op.name(), tidu::RuleKind::Jvp,
                            "the full SVD's extra singular vectors of a non-square matrix " + xt.to_string() +
                                " are any orthonormal completion and have no derivative; use the thin SVD");
  }
  const SvdTangents t = svd_tangents(x, dx, r.fixed(a.y[0]), r.fixed(a.y[1]), r.fixed(a.y[2]), attrs.broadening, true);
  return {r.result(*t.du, op, tidu::RuleKind::Jvp), r.result(t.ds, op, tidu::RuleKind::Jvp), r.result(*t.dvh, op, tidu::RuleKind::Jvp)};
}

std::vector<TensorType> svd_types(Types t, const OpAttrs& attrs, bool vectors) {
  StdTensorOp op = vectors ? ops::svd(t[0], attrs.get<SvdAttrs>()) : ops::svdvals(t[0], attrs.get<SvdAttrs>());
  std::vector<TensorType> types{op.out};
  types.insert(types.end(), op.more_outs.begin(), op.more_outs.end());
  return types;
}

}  // namespace

const OpDef& def_Svd() {
  static const OpDef d{.name = "svd", .kind = OpKind::Svd, .operands = {kNonlinear}, .outputs = 3,
                       .shape_rule = [](Types t, const OpAttrs& a) { return svd_types(t, a, true); },
                       .kernel = eval_svd, .jvp = jvp_svd, .concurrent = true, .batch = detail::batch_leading_axis()};
  return d;
}
const OpDef& def_SvdValues() {
  static const OpDef d{.name = "svdvals", .kind = OpKind::SvdValues, .operands = {kNonlinear},
                       .shape_rule = [](Types t, const OpAttrs& a) { return svd_types(t, a, false); },
                       .kernel = eval_svd, .jvp = jvp_svd, .concurrent = true, .batch = detail::batch_leading_axis()};
  return d;
}

}  // namespace detail
}  // namespace tenferro
