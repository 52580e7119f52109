// solve (X with op(A) X = B, LAPACK's gesv), lu (A = P L U, getrf) and lu_pivots_to_permutation.
// Order: attributes, shape rules, kernels, AD rules, definitions.
//
// solve is linear in B (A fixed). JVP: dX = solve(dB - op(dA) X). Transpose in B: the adjoint of
// B -> op(A)^-1 B is C -> op(A)^-H C, solve with `adjoint` flipped.
// lu of A [m, n], k = min(m, n), with D = P^T dA. Square: F = L^-1 D U^-1 (two triangular
// solves), dL = L tril(F, -1), dU = triu(F) U. Tall (m > n): with L = [L1; L2] (L1 n x n) and
// D = [D1; D2], the square rule on (L1, U, D1), then D2 = dL2 U + L2 dU gives
// dL2 = (D2 - L2 dU) U^-1. Wide (m < n): with U = [U1 | U2] (U1 m x m) and D = [D1 | D2], the
// square rule on (L, U1, D1), then D2 = dL U2 + L dU2 gives dU2 = L^-1 (D2 - dL U2). P, the
// parity and the pivots are piecewise constant (no tangent).
#include <algorithm>

#include "ir/batching.hpp"
#include "ir/family.hpp"
#include "ir/linalg_rules.hpp"
#include "kernels/lapack.hpp"

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
  detail::require_matrix("lu", a, false);
  const std::size_t r = a.rank();
  const std::int64_t m = a.shape[r - 2], n = a.shape[r - 1], k = std::min(m, n);
  const Shape batch(a.shape.begin(), a.shape.end() - 2);
  auto with = [&](std::initializer_list<std::int64_t> tail) {
    Shape s = batch;
    s.insert(s.end(), tail);
    return s;
  };
  StdTensorOp op = detail::make(OpKind::Lu, TensorType{a.dtype, with({m, m})});
  op.more_outs = {TensorType{a.dtype, with({m, k})}, TensorType{a.dtype, with({k, n})},
                  TensorType{real_dtype(a.dtype), batch}, TensorType{DType::I64, with({k})}};
  return op;
}

StdTensorOp lu_pivots_to_permutation(const TensorType& pivots, LuPermutationAttrs attrs) {
  if (pivots.dtype != DType::I64) {
    throw DTypeError("lu_pivots_to_permutation: pivots " + pivots.to_string() + " have the wrong dtype; expected i64");
  }
  if (pivots.rank() < 1) {
    throw ShapeError("lu_pivots_to_permutation: pivots " + pivots.to_string() + " are a scalar; expected [.., k]");
  }
  if (attrs.rows < pivots.shape.back()) {
    throw ShapeError("lu_pivots_to_permutation: " + std::to_string(pivots.shape.back()) + " pivots " +
                     pivots.to_string() + " for a permutation of " + std::to_string(attrs.rows) +
                     " rows; expected at most as many pivots as rows");
  }
  Shape s = pivots.shape;
  s.back() = attrs.rows;
  return detail::make(OpKind::LuPivotsToPermutation, TensorType{DType::I64, std::move(s)}, OpAttrs(attrs));
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
    const std::vector<int> infos = each_matrix(batch, n, [&](std::int64_t i) {
      return lapack::solve<T>(a.data<T>() + i * n * n, b.data<T>() + i * n * k, n, k, adjoint, x.data<T>() + i * n * k);
    });
    for (std::int64_t i = 0; i < batch; ++i) {
      const int info = infos[static_cast<std::size_t>(i)];
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
  const std::size_t r = a.rank();
  const std::int64_t m = a.shape()[r - 2], n = a.shape()[r - 1], k = std::min(m, n), batch = matrix_batch(a.shape());
  for (std::size_t s = 0; s < 5; ++s) out[s] = Tensor::uninitialized(op.output_type(s));
  visit_inexact(a.dtype(), [&](auto zero) {
    using T = decltype(zero);
    using R = lapack::Real<T>;
    const std::vector<int> infos = each_matrix(batch, std::max(m, n), [&](std::int64_t i) {
      return lapack::lu<T>(a.data<T>() + i * m * n, m, n, out[0].data<T>() + i * m * m, out[1].data<T>() + i * m * k,
                           out[2].data<T>() + i * k * n, out[3].data<R>() + i, out[4].data<std::int64_t>() + i * k);
    });
    for (std::int64_t i = 0; i < batch; ++i) {
      const int info = infos[static_cast<std::size_t>(i)];
      if (info < 0) lapack_failure("lu", a.type(), i, info, "invalid argument");
    }
  });
}

Tensor eval_lu_pivots_to_permutation(const StdTensorOp& op, Operands in) {
  const Tensor& piv = *in[0];
  const std::int64_t k = piv.shape().back(), m = op.out.shape.back();
  std::int64_t batch = 1;
  for (std::size_t i = 0; i + 1 < piv.rank(); ++i) batch *= piv.shape()[i];
  Tensor perm = Tensor::uninitialized(op.out);
  std::int64_t* p = perm.data<std::int64_t>();
  const std::int64_t* v = piv.data<std::int64_t>();
  for (std::int64_t b = 0; b < batch; ++b) {
    std::int64_t* row = p + b * m;
    for (std::int64_t i = 0; i < m; ++i) row[i] = i;
    for (std::int64_t i = 0; i < k; ++i) {
      const std::int64_t j = v[b * k + i] - 1;
      if (j < i || j >= m) {
        throw ValueError("lu_pivots_to_permutation: pivot " + std::to_string(j + 1) + " at position " +
                         std::to_string(i + 1) + " of pivots " + piv.type().to_string() +
                         "; expected 1-based LAPACK pivots with " + std::to_string(i + 1) + " <= pivot <= " +
                         std::to_string(m));
      }
      std::swap(row[i], row[j]);
    }
  }
  return perm;
}

Tangents jvp_solve(const StdTensorOp& op, const JvpArgs& a) {
  RuleTrace r(a.b);
  const auto attrs = op.attrs.get<SolveAttrs>();
  const Traced aa = r.fixed(a.x[0]);
  std::optional<Traced> rhs;
  if (a.t[1]) rhs = r.linear(*a.t[1]);
  if (a.t[0]) {
    Traced da = r.linear(*a.t[0]);
    if (attrs.adjoint) da = mat::adjoint(da);
    const Traced term = -mat::matmul(da, r.fixed(a.y[0]));
    rhs = a.t[1] ? (*rhs + term) : term;
  }
  return {r.result(apply(ops::solve(aa.type(), rhs->type(), attrs), {aa, *rhs}), op, tidu::RuleKind::Jvp)};
}

Tangents transpose_solve(const StdTensorOp& op, const TransposeArgs& a) {
  if (a.role.is_active(0) || !a.role.is_active(1)) not_linear(op, "solve is linear in B only, with A fixed");
  RuleTrace r(a.b);
  const Traced aa = r.fixed(a.x[0]);
  const Traced ct = r.linear(a.ct());
  return {std::nullopt,
          r.result(apply(ops::solve(aa.type(), ct.type(), SolveAttrs{!op.attrs.get<SolveAttrs>().adjoint}), {aa, ct}), op, tidu::RuleKind::Transpose)};
}

/// L^-1 x for unit lower L (left) and x U^-1 for upper U (right).
Traced unit_lower_solve(const Traced& l, const Traced& x) {
  return apply(ops::triangular_solve(l.type(), x.type(), {.left_side = true, .lower = true, .unit_diagonal = true}),
                 {l, x});
}
Traced upper_solve_right(const Traced& u, const Traced& x) {
  return apply(ops::triangular_solve(u.type(), x.type(), {.left_side = false, .lower = false}), {u, x});
}

Tangents jvp_lu(const StdTensorOp& op, const JvpArgs& a) {
  RuleTrace r(a.b);
  const Traced p = r.fixed(a.y[0]), l = r.fixed(a.y[1]), u = r.fixed(a.y[2]);
  const std::int64_t m = mat::rows(l), n = mat::cols(u), k = mat::cols(l);
  const Traced d = mat::matmul(mat::adjoint(p), r.linear(*a.t[0]));
  // The square rule on the leading k x k blocks: L1 [k, k], U1 [k, k], D1 [k, k].
  const Traced l1 = m > k ? mat::rows_range(l, 0, k) : l;
  const Traced u1 = n > k ? mat::cols_range(u, 0, k) : u;
  const Traced d1 = m > k ? mat::rows_range(d, 0, k) : (n > k ? mat::cols_range(d, 0, k) : d);
  const Traced f = upper_solve_right(u1, unit_lower_solve(l1, d1));
  Traced dl = mat::matmul(l1, mat::tril(f, -1));
  Traced du = mat::matmul(mat::triu(f, 0), u1);
  if (m > k) {  // tall: dL2 = (D2 - L2 dU) U^-1
    const Traced d2 = mat::rows_range(d, k, m);
    const Traced rest = d2 - mat::matmul(mat::rows_range(l, k, m), du);
    dl = mat::concat_rows(dl, upper_solve_right(u1, rest));
  } else if (n > k) {  // wide: dU2 = L^-1 (D2 - dL U2)
    const Traced d2 = mat::cols_range(d, k, n);
    const Traced rest = d2 - mat::matmul(dl, mat::cols_range(u, k, n));
    du = mat::concat_cols(du, unit_lower_solve(l1, rest));
  }
  return {std::nullopt, r.result(dl, op, tidu::RuleKind::Jvp), r.result(du, op, tidu::RuleKind::Jvp), std::nullopt, std::nullopt};
}

}  // namespace

const OpDef& def_Solve() {
  static const OpDef d{.name = "solve", .kind = OpKind::Solve, .operands = {kNonlinear, kLinear},
                       .shape_rule = single_type(+[](Types t, const OpAttrs& a) {
                         return ops::solve(t[0], t[1], a.get<SolveAttrs>()).out;
                       }),
                       .kernel = single_result(eval_solve), .jvp = jvp_solve, .transpose = transpose_solve, .batch = detail::batch_leading_axis()};
  return d;
}

const OpDef& def_Lu() {
  static const OpDef d{.name = "lu", .kind = OpKind::Lu, .operands = {kNonlinear}, .outputs = 5,
                       .shape_rule = [](Types t, const OpAttrs&) {
                         StdTensorOp op = ops::lu(t[0]);
                         std::vector<TensorType> types{op.out};
                         types.insert(types.end(), op.more_outs.begin(), op.more_outs.end());
                         return types;
                       },
                       .kernel = eval_lu, .jvp = jvp_lu, .batch = detail::batch_leading_axis()};
  return d;
}

const OpDef& def_LuPivotsToPermutation() {
  static const OpDef d{.name = "lu_pivots_to_permutation", .kind = OpKind::LuPivotsToPermutation,
                       .operands = {kNoGrad},
                       .shape_rule = single_type(+[](Types t, const OpAttrs& a) {
                         return ops::lu_pivots_to_permutation(t[0], a.get<LuPermutationAttrs>()).out;
                       }),
                       .kernel = single_result(eval_lu_pivots_to_permutation), .batch = detail::batch_leading_axis()};
  return d;
}

}  // namespace detail
}  // namespace tenferro
