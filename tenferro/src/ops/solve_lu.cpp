// solve (X with op(A) X = B, LAPACK's gesv) and lu (A = P L U, getrf). Order: attributes, shape
// rules, kernels, AD rules, definitions.
//
// solve is linear in B (A fixed). JVP: dX = solve(dB - op(dA) X). Transpose in B: the adjoint of
// B -> op(A)^-1 B is C -> op(A)^-H C, solve with `adjoint` flipped.
// lu: with F = L^-1 P^T dA U^-1 (two triangular solves), dL = L tril(F, -1), dU = triu(F) U; P and
// the parity are piecewise constant (no tangent).
#include "family.hpp"
#include "lapack.hpp"
#include "linalg_rules.hpp"

namespace tenferro {

void SolveAttrs::print(std::ostream& os) const { os << (adjoint ? "adjoint" : "plain"); }

namespace ops {

StdTensorOp solve(const TensorType& a, const TensorType& b, SolveAttrs attrs) {
  detail::require_matrix("solve", a, true);
  detail::require_matrix("solve", b, false);
  const std::string types = detail::types_string({&a, &b});
  if (a.dtype != b.dtype) throw DTypeError("solve: operand dtypes differ (" + types + "); expected one dtype");
  const std::size_t r = b.rank();
  if (a.rank() != r || !std::equal(a.shape.begin(), a.shape.end() - 2, b.shape.begin())) {
    throw ShapeError("solve: operands " + types + " have different batch axes; expected equal ones");
  }
  if (b.shape[r - 2] != a.shape.back()) {
    throw ShapeError("solve: operands " + types + ": A is " + std::to_string(a.shape.back()) + " x " +
                     std::to_string(a.shape.back()) + " but B has " + std::to_string(b.shape[r - 2]) +
                     " rows; expected B [.., n, k]");
  }
  return detail::make(OpKind::Solve, b, OpAttrs(attrs));
}

StdTensorOp lu(const TensorType& a) {
  detail::require_matrix("lu", a, true);
  StdTensorOp op = detail::make(OpKind::Lu, a);
  op.more_outs = {a, a, TensorType{real_dtype(a.dtype), Shape(a.shape.begin(), a.shape.end() - 2)}};
  return op;
}

}  // namespace ops

namespace detail {
namespace {

Tensor eval_solve(const StdTensorOp& op, Operands in) {
  const Tensor& a = *in[0];
  const Tensor& b = *in[1];
  const bool adjoint = op.attrs.get<SolveAttrs>().adjoint;
  const std::size_t r = b.rank();
  const std::int64_t n = a.shape().back(), k = b.shape()[r - 1], batch = matrix_batch(b.shape());
  Tensor x = Tensor::uninitialized(op.out);
  visit_inexact(a.dtype(), [&](auto zero) {
    using T = decltype(zero);
    for (std::int64_t i = 0; i < batch; ++i) {
      const int info = lapack::solve<T>(a.data<T>() + i * n * n, b.data<T>() + i * n * k, n, k, adjoint,
                                        x.data<T>() + i * n * k);
      if (info > 0) {
        lapack_failure("solve", a.type(), i, info,
                       "the matrix is singular (U(" + std::to_string(info) + ", " + std::to_string(info) +
                           ") of its LU factorization is exactly zero)");
      }
      if (info < 0) lapack_failure("solve", a.type(), i, info, "invalid argument");
    }
  });
  return x;
}

void eval_lu(const StdTensorOp& op, Operands in, std::span<Tensor> out) {
  const Tensor& a = *in[0];
  const std::int64_t n = a.shape().back(), batch = matrix_batch(a.shape());
  for (std::size_t s = 0; s < 4; ++s) out[s] = Tensor::uninitialized(op.output_type(s));
  visit_inexact(a.dtype(), [&](auto zero) {
    using T = decltype(zero);
    using R = lapack::Real<T>;
    for (std::int64_t i = 0; i < batch; ++i) {
      const std::int64_t o = i * n * n;
      const int info = lapack::lu<T>(a.data<T>() + o, n, out[0].data<T>() + o, out[1].data<T>() + o,
                                     out[2].data<T>() + o, out[3].data<R>() + i);
      if (info < 0) lapack_failure("lu", a.type(), i, info, "invalid argument");
    }
  });
}

Tangents jvp_solve(const StdTensorOp& op, const JvpArgs& a) {
  MatAlg g(a.b);
  const auto attrs = op.attrs.get<SolveAttrs>();
  const Mat aa = g.fixed(a.x[0]);
  std::optional<Mat> rhs;
  if (a.t[1]) rhs = g.tangent(*a.t[1]);
  if (a.t[0]) {
    Mat da = g.tangent(*a.t[0]);
    if (attrs.adjoint) da = g.adjoint(da);
    const Mat term = g.neg(g.matmul(da, g.fixed(a.y[0])));
    rhs = a.t[1] ? g.add(*rhs, term) : term;
  }
  return {g.id(g.apply(ops::solve(g.type(aa), g.type(*rhs), attrs), {aa, *rhs}))};
}

Tangents transpose_solve(const StdTensorOp& op, const TransposeArgs& a) {
  if (a.role.is_active(0) || !a.role.is_active(1)) not_linear(op, "solve is linear in B only, with A fixed");
  MatAlg g(a.b);
  const Mat aa = g.fixed(a.x[0]);
  const Mat ct = g.tangent(a.ct());
  return {std::nullopt,
          g.id(g.apply(ops::solve(g.type(aa), g.type(ct), SolveAttrs{!op.attrs.get<SolveAttrs>().adjoint}), {aa, ct}))};
}

Tangents jvp_lu(const StdTensorOp&, const JvpArgs& a) {
  MatAlg g(a.b);
  const Mat p = g.fixed(a.y[0]), l = g.fixed(a.y[1]), u = g.fixed(a.y[2]);
  const Mat pda = g.matmul(g.adjoint(p), g.tangent(*a.t[0]));
  const Mat y = g.apply(ops::triangular_solve(g.type(l), g.type(pda), {.left_side = true, .lower = true, .unit_diagonal = true}),
                        {l, pda});
  const Mat f = g.apply(ops::triangular_solve(g.type(u), g.type(y), {.left_side = false, .lower = false}), {u, y});
  const Mat dl = g.matmul(l, g.tril(f, -1));
  const Mat du = g.matmul(g.triu(f, 0), u);
  return {std::nullopt, g.id(dl), g.id(du), std::nullopt};
}

}  // namespace

const OpDef& def_Solve() {
  static const OpDef d{.name = "solve", .kind = OpKind::Solve, .operands = {kNonlinear, kLinear},
                       .shape_rule = single_type(+[](Types t, const OpAttrs& a) {
                         return ops::solve(t[0], t[1], a.get<SolveAttrs>()).out;
                       }),
                       .kernel = single_result(eval_solve), .jvp = jvp_solve, .transpose = transpose_solve};
  return d;
}

const OpDef& def_Lu() {
  static const OpDef d{.name = "lu", .kind = OpKind::Lu, .operands = {kNonlinear}, .outputs = 4,
                       .shape_rule = [](Types t, const OpAttrs&) {
                         StdTensorOp op = ops::lu(t[0]);
                         std::vector<TensorType> types{op.out};
                         types.insert(types.end(), op.more_outs.begin(), op.more_outs.end());
                         return types;
                       },
                       .kernel = eval_lu, .jvp = jvp_lu};
  return d;
}

}  // namespace detail
}  // namespace tenferro
