// polar: A = U P for A [m, n] with m >= n, U [m, n] with orthonormal columns and P [n, n]
// Hermitian positive semidefinite (SciPy's polar with side="right"). Kernel: the thin SVD
// A = W diag(s) Vh (LAPACK's gesdd) gives U = W Vh and P = Vh^H diag(s) Vh. Order: shape rule,
// kernel, JVP rule, definition.
//
// JVP, for A of full column rank (P positive definite). With X = U^H dA and Omega = U^H dU
// (skew-Hermitian, since U^H U = I): X = Omega P + dP, and as dP is Hermitian,
//   X - X^H = Omega P + P Omega,
// a Sylvester equation that the eigenbasis of P (P = V diag(s) V^H, s the singular values of A)
// solves entrywise: (V^H Omega V)_ij = (V^H (X - X^H) V)_ij / (s_i + s_j). Then
//   dP = (X + X^H) / 2 + (P Omega - Omega P) / 2        (X - Omega P, written Hermitian)
//   dU = U Omega + [m > n] (dA - U X) P^-1               (the part outside U's columns)
// The eigenbasis comes from an eigh of P emitted into the rule; the result does not depend on
// which basis eigh picks within a repeated eigenvalue. Where s_i + s_j = 0 (A rank-deficient) the
// quotient is taken as 0, and P^-1 as the pseudo-inverse.
#include <algorithm>
#include <type_traits>
#include <vector>

#include "ir/batching.hpp"
#include "ir/family.hpp"
#include "ir/linalg_rules.hpp"
#include "kernels/blas_gemm.hpp"
#include "kernels/lapack.hpp"

namespace tenferro::detail {
namespace {

std::vector<TensorType> polar_types(Types t, const OpAttrs&) {
  const TensorType& a = t[0];
  require_matrix("polar", a, false);
  const std::size_t r = a.rank();
  const std::int64_t m = a.shape[r - 2], n = a.shape[r - 1];
  if (m < n) {
    throw ShapeError("polar: operand " + a.to_string() + " is wide (" + std::to_string(m) + " rows < " +
                     std::to_string(n) + " columns); expected rows >= columns (for a wide A, polar(A^H) gives "
                     "A = P' U^H with P' = U P U^H)");
  }
  Shape p_shape(a.shape.begin(), a.shape.end() - 2);
  p_shape.push_back(n);
  p_shape.push_back(n);
  return {a, TensorType{a.dtype, p_shape}};
}

template <class T>
T conj_of(T x) {
  if constexpr (std::is_same_v<T, lapack::Real<T>>) {
    return x;
  } else {
    return std::conj(x);
  }
}

/// U [m, n] and P [n, n] of one matrix a [m, n]; LAPACK's info.
template <class T>
int polar_one(const T* a, std::int64_t m, std::int64_t n, T* u, T* p) {
  using R = lapack::Real<T>;
  const auto nn = static_cast<std::size_t>(n * n);
  std::vector<T> w(static_cast<std::size_t>(m * n)), vh(nn), v(nn);
  std::vector<R> s(static_cast<std::size_t>(n));
  const int info = lapack::svd<T>(a, m, n, false, w.data(), s.data(), vh.data());
  if (info != 0 || n == 0) return info;
  gemm_rows(w.data(), vh.data(), u, m, n, n);
  // P = V (diag(s) Vh) with V = Vh^H; then made exactly Hermitian.
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t j = 0; j < n; ++j) v[static_cast<std::size_t>(i * n + j)] = conj_of(vh[static_cast<std::size_t>(j * n + i)]);
  }
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t j = 0; j < n; ++j) vh[static_cast<std::size_t>(i * n + j)] *= s[static_cast<std::size_t>(i)];
  }
  gemm_rows(v.data(), vh.data(), p, n, n, n);
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t j = i; j < n; ++j) {
      const T mean = (p[i * n + j] + conj_of(p[j * n + i])) * R(0.5);
      p[i * n + j] = mean;
      p[j * n + i] = conj_of(mean);
    }
  }
  return 0;
}

void eval_polar(const StdTensorOp& op, Operands in, std::span<Tensor> out) {
  const Tensor& a = *in[0];
  const std::size_t r = a.rank();
  const std::int64_t m = a.shape()[r - 2], n = a.shape()[r - 1], batch = matrix_batch(a.shape());
  Tensor u = Tensor::uninitialized(op.out), p = Tensor::uninitialized(op.output_type(1));
  visit_inexact(a.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const std::vector<int> infos = each_matrix(batch, m, [&](std::int64_t b) {
      return polar_one<T>(a.data<T>() + b * m * n, m, n, u.data<T>() + b * m * n, p.data<T>() + b * n * n);
    });
    for (std::int64_t b = 0; b < batch; ++b) {
      const int info = infos[static_cast<std::size_t>(b)];
      if (info != 0) lapack_failure("polar", a.type(), b, info, "the SVD did not converge");
    }
  });
  out[0] = std::move(u);
  out[1] = std::move(p);
}

Tangents jvp_polar(const StdTensorOp& op, const JvpArgs& a) {
  RuleTrace r(a.b);
  const Traced da = r.linear(*a.t[0]);
  const Traced u = r.fixed(a.y[0]), p = r.fixed(a.y[1]);
  const DType dt = p.dtype();
  const std::vector<Traced> sv = apply_outputs(ops::eigh(p.type(), EighAttrs{}), std::span(&p, 1));
  const Traced& s = sv[0];
  const Traced& v = sv[1];
  const Traced x = mat::matmul(mat::adjoint(u), da);
  const Traced skew = x - mat::adjoint(x);
  const Traced quotient = mat::to_dtype(mat::safe_reciprocal(mat::pairwise_sum(s)), dt);
  const Traced vh = mat::adjoint(v);
  const Traced omega = mat::matmul(mat::matmul(v, quotient * mat::matmul(mat::matmul(vh, skew), v)), vh);
  const Traced h = mat::hermitian_part(x);
  const Traced p_omega = mat::matmul(p, omega);
  const Traced dp = h + (p_omega - mat::matmul(omega, p)) * 0.5;
  Traced du = mat::matmul(u, omega);
  if (mat::rows(u) > mat::cols(u)) {
    const Traced p_inv = mat::matmul(mat::scale_cols(v, mat::to_dtype(mat::safe_reciprocal(s), dt)), vh);
    du = du + mat::matmul(da - mat::matmul(u, x), p_inv);
  }
  return {r.result(du, op, tidu::RuleKind::Jvp), r.result(dp, op, tidu::RuleKind::Jvp)};
}

}  // namespace

const OpDef& def_Polar() {
  static const OpDef d{.name = "polar", .kind = OpKind::Polar, .operands = {kNonlinear}, .outputs = 2,
                       .shape_rule = polar_types, .kernel = eval_polar, .jvp = jvp_polar, .concurrent = true,
                       .batch = batch_leading_axis()};
  return d;
}

}  // namespace tenferro::detail
