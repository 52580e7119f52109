// expm (the matrix exponential) and expm_frechet (its Frechet derivative L(A, E), linear in E).
// Order: shape rules, kernels, AD rules, definitions.
//
// Kernel: scaling and squaring with the degree-13 Pade approximant (Higham 2005, "The scaling and
// squaring method for the matrix exponential revisited"): s = max(0, ceil(log2(|A|_1 / theta13))),
// r13(A / 2^s) from one linear solve, then s squarings.
//
// L(A, E) = int_0^1 exp(tA) E exp((1-t)A) dt is the upper right block of exp([[A, E], [0, A]]),
// which is how its kernel computes it. AD:
//   expm:          d exp(A) = L(A, dA)
//   expm_frechet:  linear in E; in A (and E), d L(A, E) = upper right block of L(B, dB) with
//                  B = [[A, E], [0, A]] and dB = [[dA, dE], [0, dA]], so every order reduces to
//                  expm_frechet of a larger block matrix.
//   transpose in E: <C, L(A, E)> = <L(A^H, C), E>.

#include <cmath>
#include <vector>

#include "ir/batching.hpp"
#include "ir/family.hpp"
#include "ir/linalg_rules.hpp"
#include "kernels/blas_gemm.hpp"
#include "kernels/lapack.hpp"

namespace tenferro {

namespace ops {
StdTensorOp expm(const TensorType& a) {
  detail::require_matrix("expm", a, true);
  return detail::make(OpKind::Expm, a);
}
StdTensorOp expm_frechet(const TensorType& a, const TensorType& e) {
  detail::require_matrix("expm_frechet", a, true);
  if (a != e) {
    throw ShapeError("expm_frechet: operands " + detail::types_string({&a, &e}) +
                     "; expected the matrix and the direction of one type");
  }
  return detail::make(OpKind::ExpmFrechet, a);
}
}  // namespace ops

namespace detail {
namespace {

/// exp(a) for one n x n matrix into `out`; false if the Pade denominator is singular.
template <class T>
bool expm_one(const T* a, std::int64_t n, T* out) {
  using R = lapack::Real<T>;
  constexpr double b[] = {64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
                          129060195264000.0,   10559470521600.0,    670442572800.0,     33522128640.0,
                          1323241920.0,        40840800.0,          960960.0,           16380.0,
                          182.0,               1.0};
  constexpr double theta13 = 5.371920351148152;
  const auto nn = static_cast<std::size_t>(n * n);
  if (n == 0) return true;
  double norm1 = 0;
  for (std::int64_t j = 0; j < n; ++j) {
    double col = 0;
    for (std::int64_t i = 0; i < n; ++i) col += std::abs(a[i * n + j]);
    norm1 = std::max(norm1, col);
  }
  const int s = norm1 > theta13 ? static_cast<int>(std::ceil(std::log2(norm1 / theta13))) : 0;
  const R scale = static_cast<R>(std::ldexp(1.0, -s));
  std::vector<T> a1(nn), a2(nn), a4(nn), a6(nn), t(nn), u(nn), v(nn);
  for (std::size_t i = 0; i < nn; ++i) a1[i] = a[i] * scale;
  gemm_rows(a1.data(), a1.data(), a2.data(), n, n, n);
  gemm_rows(a2.data(), a2.data(), a4.data(), n, n, n);
  gemm_rows(a4.data(), a2.data(), a6.data(), n, n, n);
  auto c = [&](int k) { return static_cast<R>(b[k]); };
  // U = A1 [A6 (b13 A6 + b11 A4 + b9 A2) + b7 A6 + b5 A4 + b3 A2 + b1 I]
  for (std::size_t i = 0; i < nn; ++i) t[i] = c(13) * a6[i] + c(11) * a4[i] + c(9) * a2[i];
  gemm_rows(a6.data(), t.data(), u.data(), n, n, n);
  for (std::size_t i = 0; i < nn; ++i) u[i] += c(7) * a6[i] + c(5) * a4[i] + c(3) * a2[i];
  for (std::int64_t i = 0; i < n; ++i) u[static_cast<std::size_t>(i * n + i)] += c(1);
  gemm_rows(a1.data(), u.data(), t.data(), n, n, n);
  std::swap(u, t);
  // V = A6 (b12 A6 + b10 A4 + b8 A2) + b6 A6 + b4 A4 + b2 A2 + b0 I
  for (std::size_t i = 0; i < nn; ++i) t[i] = c(12) * a6[i] + c(10) * a4[i] + c(8) * a2[i];
  gemm_rows(a6.data(), t.data(), v.data(), n, n, n);
  for (std::size_t i = 0; i < nn; ++i) v[i] += c(6) * a6[i] + c(4) * a4[i] + c(2) * a2[i];
  for (std::int64_t i = 0; i < n; ++i) v[static_cast<std::size_t>(i * n + i)] += c(0);
  // (V - U) R = V + U.
  for (std::size_t i = 0; i < nn; ++i) {
    const T p = v[i] + u[i];
    t[i] = v[i] - u[i];
    a1[i] = p;
  }
  if (lapack::solve<T>(t.data(), a1.data(), n, n, false, out) != 0) return false;
  for (int k = 0; k < s; ++k) {
    gemm_rows(out, out, t.data(), n, n, n);
    std::copy(t.begin(), t.end(), out);
  }
  return true;
}

Tensor eval_expm(const StdTensorOp& op, Operands in) {
  const Tensor& a = *in[0];
  const std::int64_t n = a.shape().back(), batch = matrix_batch(a.shape());
  Tensor r = Tensor::uninitialized(op.out);
  visit_inexact(a.dtype(), [&](auto zero) {
    using T = decltype(zero);
    for (std::int64_t b = 0; b < batch; ++b) {
      if (!expm_one<T>(a.data<T>() + b * n * n, n, r.data<T>() + b * n * n)) {
        lapack_failure("expm", a.type(), b, 0, "the Pade denominator is singular (non-finite input?)");
      }
    }
  });
  return r;
}

Tensor eval_expm_frechet(const StdTensorOp& op, Operands in) {
  const Tensor& a = *in[0];
  const Tensor& e = *in[1];
  const std::int64_t n = a.shape().back(), batch = matrix_batch(a.shape());
  Tensor r = Tensor::uninitialized(op.out);
  visit_inexact(a.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const std::int64_t m = 2 * n;
    std::vector<T> block(static_cast<std::size_t>(m * m)), eb(static_cast<std::size_t>(m * m));
    for (std::int64_t b = 0; b < batch; ++b) {
      const T* ab = a.data<T>() + b * n * n;
      const T* ebp = e.data<T>() + b * n * n;
      std::fill(block.begin(), block.end(), T(0));
      for (std::int64_t i = 0; i < n; ++i) {
        for (std::int64_t j = 0; j < n; ++j) {
          block[static_cast<std::size_t>(i * m + j)] = ab[i * n + j];
          block[static_cast<std::size_t>((i + n) * m + j + n)] = ab[i * n + j];
          block[static_cast<std::size_t>(i * m + j + n)] = ebp[i * n + j];
        }
      }
      if (!expm_one<T>(block.data(), m, eb.data())) {
        lapack_failure("expm_frechet", a.type(), b, 0, "the Pade denominator is singular (non-finite input?)");
      }
      T* rb = r.data<T>() + b * n * n;
      for (std::int64_t i = 0; i < n; ++i) {
        for (std::int64_t j = 0; j < n; ++j) rb[i * n + j] = eb[static_cast<std::size_t>(i * m + j + n)];
      }
    }
  });
  return r;
}

Tangents jvp_expm(const StdTensorOp& op, const JvpArgs& a) {
  RuleTrace r(a.b);
  const Traced x = r.fixed(a.x[0]), dx = r.linear(*a.t[0]);
  return {r.result(apply(ops::expm_frechet(x.type(), dx.type()), {x, dx}), op, tidu::RuleKind::Jvp)};
}

Tangents jvp_expm_frechet(const StdTensorOp& op, const JvpArgs& a) {
  RuleTrace r(a.b);
  const Traced x = r.fixed(a.x[0]), e = r.fixed(a.x[1]);
  if (!a.t[0]) {
    const Traced de = r.linear(*a.t[1]);
    return {r.result(apply(ops::expm_frechet(x.type(), de.type()), {x, de}), op, tidu::RuleKind::Jvp)};
  }
  const std::int64_t n = mat::cols(x);
  const Traced dx = r.linear(*a.t[0]);
  const Traced block = mat::upper_block(x, e, x);
  // An absent dE is the linear zero 0 * dA (a fixed zero would make the block affine, not linear).
  const Traced de = a.t[1] ? r.linear(*a.t[1]) : (dx * 0.0);
  const Traced dblock = mat::upper_block(dx, de, dx);
  const Traced l = apply(ops::expm_frechet(block.type(), dblock.type()), {block, dblock});
  return {r.result(mat::cols_range(mat::rows_range(l, 0, n), n, 2 * n), op, tidu::RuleKind::Jvp)};
}

Tangents transpose_expm_frechet(const StdTensorOp& op, const TransposeArgs& a) {
  if (a.role.is_active(0) || !a.role.is_active(1)) not_linear(op, "expm_frechet is linear in E only, with A fixed");
  RuleTrace r(a.b);
  const Traced xh = mat::adjoint(r.fixed(a.x[0]));
  const Traced ct = r.linear(a.ct());
  return {std::nullopt, r.result(apply(ops::expm_frechet(xh.type(), ct.type()), {xh, ct}), op, tidu::RuleKind::Transpose)};
}

}  // namespace

const OpDef& def_Expm() {
  static const OpDef d{.name = "expm", .kind = OpKind::Expm, .operands = {kNonlinear},
                       .shape_rule = single_type(+[](Types t, const OpAttrs&) { return ops::expm(t[0]).out; }),
                       .kernel = single_result(eval_expm), .jvp = jvp_expm, .batch = detail::batch_leading_axis()};
  return d;
}
const OpDef& def_ExpmFrechet() {
  static const OpDef d{.name = "expm_frechet", .kind = OpKind::ExpmFrechet, .operands = {kNonlinear, kLinear},
                       .shape_rule = single_type(+[](Types t, const OpAttrs&) {
                         return ops::expm_frechet(t[0], t[1]).out;
                       }),
                       .kernel = single_result(eval_expm_frechet), .jvp = jvp_expm_frechet,
                       .transpose = transpose_expm_frechet, .batch = detail::batch_leading_axis()};
  return d;
}

}  // namespace detail
}  // namespace tenferro
