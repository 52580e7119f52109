// triangular_solve: X with op(A) X = B (left) or X op(A) = B (right), A triangular (BLAS trsm).
// Order: attributes, shape rule, kernel, AD rules, definition.
//
// Linear in B (A fixed). JVP: with dT the part of dA the op reads (its triangle, without the
// diagonal when unit_diagonal), dX = solve(dB - op(dT) X) (left) or solve(dB - X op(dT)) (right),
// one more triangular_solve with the same attributes. Transpose in B: the adjoint of
// B -> op(A)^-1 B is C -> op(A)^-H C, the same solve with `adjoint` flipped (sides kept).
#include <algorithm>

#include "ir/batching.hpp"
#include "ir/family.hpp"
#include "ir/linalg_rules.hpp"
#include "kernels/lapack.hpp"

namespace tenferro {

std::size_t TriangularSolveAttrs::hash() const {
  return static_cast<std::size_t>(left_side) | static_cast<std::size_t>(lower) << 1 |
         static_cast<std::size_t>(adjoint) << 2 | static_cast<std::size_t>(unit_diagonal) << 3;
}
void TriangularSolveAttrs::print(std::ostream& os) const {
  os << (left_side ? "left" : "right") << ", " << (lower ? "lower" : "upper");
  if (adjoint) os << ", adjoint";
  if (unit_diagonal) os << ", unit";
}

namespace ops {

StdTensorOp triangular_solve(const TensorType& a, const TensorType& b, TriangularSolveAttrs attrs) {
  detail::require_matrix("triangular_solve", a, true);
  detail::require_matrix("triangular_solve", b, false);
  const std::string types = detail::types_string({&a, &b});
  if (a.dtype != b.dtype) throw DTypeError("triangular_solve: operand dtypes differ (" + types + "); expected one dtype");
  const std::size_t r = b.rank();
  const std::int64_t n = a.shape.back();
  const std::int64_t shared = attrs.left_side ? b.shape[r - 2] : b.shape[r - 1];
  if (a.rank() != r || !std::equal(a.shape.begin(), a.shape.end() - 2, b.shape.begin())) {
    throw ShapeError("triangular_solve: operands " + types + " have different batch axes; expected equal ones");
  }
  if (shared != n) {
    throw ShapeError("triangular_solve: operands " + types + ": A is " + std::to_string(n) + " x " +
                     std::to_string(n) + " but B has " + std::to_string(shared) +
                     (attrs.left_side ? " rows (left side: expected B [.., n, k])" : " columns (right side: expected B [.., k, n])"));
  }
  return detail::make(OpKind::TriangularSolve, b, OpAttrs(attrs));
}

}  // namespace ops

namespace detail {
namespace {

Tensor eval_triangular_solve(const StdTensorOp& op, Operands in) {
  const Tensor& a = *in[0];
  const auto& attrs = op.attrs.get<TriangularSolveAttrs>();
  Tensor x = in[1]->clone();
  const std::size_t r = x.rank();
  const std::int64_t n = a.shape().back(), m = x.shape()[r - 2], k = x.shape()[r - 1];
  const std::int64_t batch = matrix_batch(x.shape());
  visit_inexact(a.dtype(), [&](auto zero) {
    using T = decltype(zero);
    for (std::int64_t b = 0; b < batch && !attrs.unit_diagonal; ++b) {
      const T* ab = a.data<T>() + b * n * n;
      for (std::int64_t i = 0; i < n; ++i) {
        if (ab[i * n + i] == T(0)) {
          lapack_failure("triangular_solve", a.type(), b, static_cast<int>(i + 1),
                         "the triangular matrix is singular (diagonal entry " + std::to_string(i + 1) + " is zero)");
        }
      }
    }
    each_matrix(batch, std::max(n, std::max(m, k)), [&](std::int64_t b) {
      lapack::trsm<T>(a.data<T>() + b * n * n, x.data<T>() + b * m * k, m, k, attrs);
      return 0;
    });
  });
  return x;
}

Tangents jvp_triangular_solve(const StdTensorOp& op, const JvpArgs& a) {
  RuleTrace r(a.b);
  const auto& attrs = op.attrs.get<TriangularSolveAttrs>();
  const Traced aa = r.fixed(a.x[0]);
  std::optional<Traced> rhs;
  if (a.t[1]) rhs = r.linear(*a.t[1]);
  if (a.t[0]) {
    const Traced da = r.linear(*a.t[0]);
    const std::int64_t off = attrs.unit_diagonal ? 1 : 0;
    Traced dt = attrs.lower ? mat::tril(da, -off) : mat::triu(da, off);
    if (attrs.adjoint) dt = mat::adjoint(dt);
    const Traced x = r.fixed(a.y[0]);
    const Traced term = -(attrs.left_side ? mat::matmul(dt, x) : mat::matmul(x, dt));
    rhs = a.t[1] ? (*rhs + term) : term;
  }
  return {r.result(apply(ops::triangular_solve(aa.type(), rhs->type(), attrs), {aa, *rhs}), op, tidu::RuleKind::Jvp)};
}

Tangents transpose_triangular_solve(const StdTensorOp& op, const TransposeArgs& a) {
  if (a.role.is_active(0) || !a.role.is_active(1)) {
    not_linear(op, "triangular_solve is linear in B only, with A fixed");
  }
  RuleTrace r(a.b);
  TriangularSolveAttrs attrs = op.attrs.get<TriangularSolveAttrs>();
  attrs.adjoint = !attrs.adjoint;
  const Traced aa = r.fixed(a.x[0]);
  const Traced ct = r.linear(a.ct());
  return {std::nullopt, r.result(apply(ops::triangular_solve(aa.type(), ct.type(), attrs), {aa, ct}), op, tidu::RuleKind::Transpose)};
}

}  // namespace

const OpDef& def_TriangularSolve() {
  static const OpDef d{.name = "triangular_solve", .kind = OpKind::TriangularSolve,
                       .operands = {kNonlinear, kLinear},
                       .shape_rule = single_type(+[](Types t, const OpAttrs& a) {
                         return ops::triangular_solve(t[0], t[1], a.get<TriangularSolveAttrs>()).out;
                       }),
                       .kernel = single_result(eval_triangular_solve), .jvp = jvp_triangular_solve,
                       .transpose = transpose_triangular_solve, .batch = detail::batch_leading_axis()};
  return d;
}

}  // namespace detail
}  // namespace tenferro
