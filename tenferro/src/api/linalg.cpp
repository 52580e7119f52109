// The linear-algebra API on traced tensors (tenferro/linalg.hpp): the decomposition primitives,
// and det, slogdet, inv, pinv, lstsq, norms and trace composed from them.
#include "tenferro/linalg.hpp"

#include <limits>

#include "tenferro/math.hpp"
#include "tenferro/ops/linalg_attrs.hpp"

namespace tenferro::linalg {

namespace {

std::int64_t rank_of(const Traced& a) { return static_cast<std::int64_t>(a.rank()); }

void require_matrix(const char* op, const Traced& a) {
  if (a.rank() < 2) {
    throw ShapeError(std::string("linalg.") + op + ": operand " + a.type().to_string() +
                     " is not a matrix; expected rank >= 2");
  }
}

/// The diagonal of the last two axes.
Traced diagonal(const Traced& a) { return apply(ops::extract_diag(a.type(), rank_of(a) - 2, rank_of(a) - 1), {a}); }

/// v [.., n] as the column [.., n, 1] when A [.., n, n] has one more axis; the flag says so.
std::pair<Traced, bool> as_matrix_rhs(const Traced& a, const Traced& b) {
  if (b.rank() + 1 == a.rank()) {
    Shape s = b.shape();
    s.push_back(1);
    return {reshape(b, s), true};
  }
  return {b, false};
}
Traced drop_last(const Traced& x) {
  Shape s = x.shape();
  s.pop_back();
  return reshape(x, s);
}

Traced to_dtype(const Traced& x, DType d) { return x.dtype() == d ? x : astype(x, d); }

}  // namespace

Svd svd(const Traced& a, const SvdOptions& options) {
  auto r = apply_outputs(ops::svd(a.type(), SvdAttrs{options.full_matrices, options.broadening}), std::span(&a, 1));
  return {r[0], r[1], r[2]};
}

Traced svdvals(const Traced& a, double broadening) {
  return apply(ops::svdvals(a.type(), SvdAttrs{false, broadening}), {a});
}

Qr qr(const Traced& a, QrMode mode) {
  auto r = apply_outputs(ops::qr(a.type(), QrAttrs{mode == QrMode::Complete}), std::span(&a, 1));
  return {r[0], r[1]};
}

Eigh eigh(const Traced& a, double broadening) {
  auto r = apply_outputs(ops::eigh(a.type(), EighAttrs{broadening}), std::span(&a, 1));
  return {r[0], r[1]};
}

Traced eigvalsh(const Traced& a, double broadening) { return apply(ops::eigvalsh(a.type(), EighAttrs{broadening}), {a}); }

Eigh eig(const Traced& a, double broadening) {
  auto r = apply_outputs(ops::eig(a.type(), EighAttrs{broadening}), std::span(&a, 1));
  return {r[0], r[1]};
}

Traced eigvals(const Traced& a, double broadening) { return eig(a, broadening).eigenvalues; }

Traced cholesky(const Traced& a) { return apply(ops::cholesky(a.type()), {a}); }

Traced triangular_solve(const Traced& a, const Traced& b, const TriangularSolveOptions& o) {
  require_matrix("triangular_solve", a);
  require_matrix("triangular_solve", b);
  Traced aa = a;
  if (a.rank() < b.rank()) {
    // A broadcast over B's extra leading batch axes.
    Shape s(b.shape().begin(), b.shape().end() - 2);
    s.push_back(a.shape()[a.rank() - 2]);
    s.push_back(a.shape().back());
    aa = broadcast_to(a, s);
  }
  const TriangularSolveAttrs attrs{o.left_side, o.lower, o.adjoint, o.unit_diagonal};
  return apply(ops::triangular_solve(aa.type(), b.type(), attrs), {aa, b});
}

Traced solve(const Traced& a, const Traced& b) {
  require_matrix("solve", a);
  auto [bm, vector] = as_matrix_rhs(a, b);
  Traced x = apply(ops::solve(a.type(), bm.type(), SolveAttrs{false}), {a, bm});
  return vector ? drop_last(x) : x;
}

Traced eye(const Traced& like, std::int64_t n) {
  Tensor id(TensorType{like.dtype(), {n, n}});
  for (std::int64_t i = 0; i < n; ++i) {
    visit_dtype(like.dtype(), [&](auto zero) {
      using T = decltype(zero);
      if constexpr (!std::is_same_v<T, bool>) id.data<T>()[i * n + i] = T(1);
    });
  }
  return constant(like, std::move(id));
}

Traced inv(const Traced& a) {
  require_matrix("inv", a);
  const Traced id = broadcast_to(eye(a, a.shape().back()), a.shape());
  return apply(ops::solve(a.type(), a.type(), SolveAttrs{false}), {a, id});
}

namespace {
/// P, L, U and the permutation's parity.
std::vector<Traced> lu_outputs(const Traced& a) { return apply_outputs(ops::lu(a.type()), std::span(&a, 1)); }
}  // namespace

Lu lu(const Traced& a) {
  auto r = lu_outputs(a);
  return {r[0], r[1], r[2]};
}

Traced det(const Traced& a) {
  require_matrix("det", a);
  auto r = lu_outputs(a);
  return to_dtype(r[3], a.dtype()) * prod(diagonal(r[2]), {-1});
}

Slogdet slogdet(const Traced& a) {
  require_matrix("slogdet", a);
  auto r = lu_outputs(a);
  const Traced d = diagonal(r[2]);
  const Traced magnitude = abs(d);
  Traced phase = is_complex(a.dtype()) ? d / astype(magnitude, a.dtype()) : sign(d);
  return {to_dtype(r[3], a.dtype()) * prod(phase, {-1}), sum(log(magnitude), {-1})};
}

Traced pinv(const Traced& a, double rcond) {
  require_matrix("pinv", a);
  const Svd usv = svd(a);
  const Traced cutoff = max(usv.S, {-1}) * rcond;
  Shape keep_shape = cutoff.shape();
  keep_shape.push_back(1);
  const Traced keep = gt(usv.S, reshape(cutoff, keep_shape));
  // 1/S where kept, 0 elsewhere, without evaluating 1/0.
  const Traced s_inv = where(keep, 1.0 / where(keep, usv.S, full_like(usv.S, 1.0)), full_like(usv.S, 0.0));
  Shape row = s_inv.shape();
  row.insert(row.end() - 1, 1);
  const Traced v_scaled = adjoint(usv.Vh) * to_dtype(reshape(s_inv, row), a.dtype());
  return matmul(v_scaled, adjoint(usv.U));
}

Traced lstsq(const Traced& a, const Traced& b) {
  require_matrix("lstsq", a);
  if (a.shape()[a.rank() - 2] < a.shape().back()) {
    throw ShapeError("linalg.lstsq: operand " + a.type().to_string() +
                     " has fewer rows than columns; expected full column rank (m >= n)");
  }
  auto [bm, vector] = as_matrix_rhs(a, b);
  const Qr f = qr(a);
  const Traced x = triangular_solve(f.R, matmul(adjoint(f.Q), bm), {.left_side = true, .lower = false});
  return vector ? drop_last(x) : x;
}

Traced matrix_norm(const Traced& a, const std::string& ord) {
  // tenferro::matrix_norm (tenferro/math.hpp) computes them; here the numeric orders come as text.
  constexpr double inf = std::numeric_limits<double>::infinity();
  if (ord == "fro" || ord == "nuc") return tenferro::matrix_norm(a, ord);
  const std::pair<const char*, double> numeric[] = {{"1", 1}, {"-1", -1}, {"2", 2}, {"-2", -2}, {"inf", inf}, {"-inf", -inf}};
  for (const auto& [name, value] : numeric) {
    if (ord == name) return tenferro::matrix_norm(a, value);
  }
  throw ValueError("linalg.matrix_norm: ord \"" + ord + "\"; expected \"fro\", \"nuc\", \"1\", \"-1\", \"2\", \"-2\", \"inf\" or \"-inf\"");
}

Traced expm(const Traced& a) { return apply(ops::expm(a.type()), {a}); }

Traced trace(const Traced& a) {
  require_matrix("trace", a);
  return sum(diagonal(a), {-1});
}

Traced adjoint(const Traced& a) {
  require_matrix("adjoint", a);
  std::vector<std::int64_t> perm(a.rank());
  for (std::size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<std::int64_t>(i);
  std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
  const Traced t = transpose(a, perm);
  return is_complex(a.dtype()) ? conj(t) : t;
}

}  // namespace tenferro::linalg
