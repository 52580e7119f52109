// The linear-algebra API on traced tensors (tenferro/linalg.hpp): the decomposition primitives,
// and det, slogdet, inv, pinv, lstsq, lu_factor, lu_solve, cond, householder_product, tensorinv,
// tensorsolve, norms and trace composed from them.
#include "tenferro/linalg.hpp"

#include <algorithm>
#include <utility>
#include <limits>

#include "tenferro/indexing.hpp"
#include "tenferro/math.hpp"
#include "tenferro/ops/linalg_attrs.hpp"
#include "tenferro/sort_scan.hpp"
#include "tenferro/ops/record.hpp"

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
Traced diag_of(const Traced& a) { return apply(ops::extract_diag(a.type(), rank_of(a) - 2, rank_of(a) - 1), {a}); }

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

std::int64_t rows_of(const Traced& a) { return a.shape()[a.rank() - 2]; }
std::int64_t cols_of(const Traced& a) { return a.shape().back(); }
Shape batch_of(const Traced& a) { return Shape(a.shape().begin(), a.shape().end() - 2); }

void require_square(const char* op, const Traced& a) {
  require_matrix(op, a);
  if (rows_of(a) != cols_of(a)) {
    throw ShapeError(std::string("linalg.") + op + ": operand " + a.type().to_string() + " is not square; expected [.., n, n]");
  }
}

/// Rows [r0, r1) and columns [c0, c1) of the last two axes.
Traced block(const Traced& a, std::int64_t r0, std::int64_t r1, std::int64_t c0, std::int64_t c1) {
  std::vector<std::int64_t> start(a.rank(), 0), limit(a.shape().begin(), a.shape().end());
  start[a.rank() - 2] = r0;
  limit[a.rank() - 2] = r1;
  start[a.rank() - 1] = c0;
  limit[a.rank() - 1] = c1;
  return slice(a, std::move(start), std::move(limit));
}

/// a with `rows` zero rows and `cols` zero columns appended to its last two axes.
Traced pad_zeros(const Traced& a, std::int64_t rows, std::int64_t cols) {
  std::vector<std::int64_t> low(a.rank(), 0), high(a.rank(), 0);
  high[a.rank() - 2] = rows;
  high[a.rank() - 1] = cols;
  return pad(a, 0.0, std::move(low), std::move(high));
}

/// The m x n matrix with ones on its main diagonal, in `like`'s trace and dtype.
Traced rect_eye(const Traced& like, std::int64_t m, std::int64_t n) {
  Tensor id(TensorType{like.dtype(), {m, n}});
  for (std::int64_t i = 0; i < std::min(m, n); ++i) {
    visit_dtype(like.dtype(), [&](auto zero) {
      using T = decltype(zero);
      if constexpr (!std::is_same_v<T, bool>) id.data<T>()[i * n + i] = T(1);
    });
  }
  return constant(like, std::move(id));
}

std::int64_t product(const Shape& s, std::size_t from, std::size_t to) {
  std::int64_t p = 1;
  for (std::size_t i = from; i < to; ++i) p *= s[i];
  return p;
}

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

namespace {
/// The n results of the op `kind` (one operand, no attributes) on a.
template <std::size_t n>
std::array<Traced, n> record_matrix_op(OpKind kind, const Traced& a) {
  const std::vector<Traced> r = apply_outputs(make_op(op_def(kind), {a.type()}), std::span(&a, 1));
  return [&r]<std::size_t... I>(std::index_sequence<I...>) {
    return std::array<Traced, n>{r[I]...};
  }(std::make_index_sequence<n>{});
}
}  // namespace

#define TENFERRO_DEFINE_MATRIX(X, kind, name, n) \
  std::array<Traced, n> name(const Traced& a) { return record_matrix_op<n>(OpKind::kind, a); }
TENFERRO_OP_LIST(TENFERRO_OP_LIST_NONE, TENFERRO_OP_LIST_SKIP, TENFERRO_OP_LIST_SKIP, TENFERRO_DEFINE_MATRIX, TENFERRO_OP_LIST_SKIP)
#undef TENFERRO_DEFINE_MATRIX

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
  require_matrix("lu", a);
  auto r = lu_outputs(a);
  return {r[0], r[1], r[2]};
}

LuFactor lu_factor(const Traced& a) {
  require_matrix("lu_factor", a);
  auto r = lu_outputs(a);
  const std::int64_t m = rows_of(a), n = cols_of(a), k = std::min(m, n);
  // L's strict lower part [m, k] and U [k, n], each padded to [m, n]: they do not overlap.
  return {pad_zeros(tril(r[1], -1), 0, n - k) + pad_zeros(r[2], m - k, 0), r[4]};
}

Traced lu_solve(const Traced& lu_packed, const Traced& pivots, const Traced& b) {
  require_square("lu_solve", lu_packed);
  const std::int64_t n = cols_of(lu_packed);
  Shape pivot_shape = batch_of(lu_packed);
  pivot_shape.push_back(n);
  if (pivots.dtype() != DType::I64) {
    throw DTypeError("linalg.lu_solve: pivots " + pivots.type().to_string() + " have the wrong dtype; expected i64");
  }
  if (pivots.shape() != pivot_shape) {
    throw ShapeError("linalg.lu_solve: pivots " + pivots.type().to_string() + " for LU " + lu_packed.type().to_string() +
                     "; expected shape " + shape_to_string(pivot_shape));
  }
  auto [bm, vector] = as_matrix_rhs(lu_packed, b);
  if (bm.rank() != lu_packed.rank() || batch_of(bm) != batch_of(lu_packed) || rows_of(bm) != n) {
    throw ShapeError("linalg.lu_solve: right-hand side " + b.type().to_string() + " for LU " + lu_packed.type().to_string() +
                     "; expected [.., " + std::to_string(n) + ", k] or [.., " + std::to_string(n) + "] with LU's batch axes");
  }
  // P^T B: row i is row perm[i] of B (the pivots' interchanges in order).
  const Traced perm = apply(ops::lu_pivots_to_permutation(pivots.type(), LuPermutationAttrs{n}), {pivots});
  Shape column = perm.shape();
  column.push_back(1);
  const Traced pb = take_along_axis(bm, reshape(perm, column), -2);
  // L (unit lower, LU's strict lower triangle) and U (its upper triangle) are read in place.
  const Traced y = triangular_solve(lu_packed, pb, {.left_side = true, .lower = true, .unit_diagonal = true});
  const Traced x = triangular_solve(lu_packed, y, {.left_side = true, .lower = false});
  return vector ? drop_last(x) : x;
}

Traced det(const Traced& a) {
  require_square("det", a);
  auto r = lu_outputs(a);
  return to_dtype(r[3], a.dtype()) * prod(diag_of(r[2]), {-1});
}

Slogdet slogdet(const Traced& a) {
  require_square("slogdet", a);
  auto r = lu_outputs(a);
  const Traced d = diag_of(r[2]);
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
  // Not a structured binding: the lambda below captures the right-hand side (clang 14 cannot
  // capture structured bindings).
  const auto rhs = as_matrix_rhs(a, b);
  const Traced& bm = rhs.first;
  const bool vector = rhs.second;
  if (bm.rank() != a.rank() || rows_of(bm) != rows_of(a)) {
    throw ShapeError("linalg.lstsq: operands " + a.type().to_string() + ", " + b.type().to_string() +
                     "; expected B [.., " + std::to_string(rows_of(a)) + ", k] or [.., " + std::to_string(rows_of(a)) +
                     "] with A's batch axes");
  }
  auto solution = [&]() -> Traced {
    if (rows_of(a) >= cols_of(a)) {
      // A = Q R: X = R^-1 Q^H B.
      const Qr f = qr(a);
      return triangular_solve(f.R, matmul(adjoint(f.Q), bm), {.left_side = true, .lower = false});
    }
    // Wide: A^H = Q R (Q [n, m], R [m, m]), A = R^H Q^H. X = Q Y with R^H Y = B solves A X = B and
    // lies in the range of A^H, orthogonal to A's null space: the minimum-norm solution.
    const Qr f = qr(adjoint(a));
    return matmul(f.Q, triangular_solve(f.R, bm, {.left_side = true, .lower = false, .adjoint = true}));
  };
  const Traced x = solution();
  return vector ? drop_last(x) : x;
}

Traced cond(const Traced& a, const std::string& ord) {
  require_matrix("cond", a);
  if (ord == "2" || ord == "-2") {
    if (std::min(rows_of(a), cols_of(a)) == 0) {
      throw ShapeError("linalg.cond: operand " + a.type().to_string() + " has no singular values; expected a nonempty matrix");
    }
    const Traced s = svdvals(a);
    const Traced largest = max(s, {-1}), smallest = min(s, {-1});
    return ord == "2" ? largest / smallest : smallest / largest;
  }
  for (const char* name : {"fro", "nuc", "1", "-1", "inf", "-inf"}) {
    if (ord == name) {
      require_square("cond", a);
      return linalg::matrix_norm(a, ord) * linalg::matrix_norm(inv(a), ord);
    }
  }
  throw ValueError("linalg.cond: ord \"" + ord + "\"; expected \"2\", \"-2\", \"fro\", \"nuc\", \"1\", \"-1\", \"inf\" or \"-inf\"");
}

Traced cond(const Traced& a, double ord) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  const std::pair<double, const char*> numeric[] = {{2, "2"}, {-2, "-2"}, {1, "1"}, {-1, "-1"}, {inf, "inf"}, {-inf, "-inf"}};
  for (const auto& [value, name] : numeric) {
    if (ord == value) return cond(a, name);
  }
  throw ValueError("linalg.cond: ord = " + std::to_string(ord) + "; expected 2, -2, 1, -1, inf, -inf, \"fro\" or \"nuc\"");
}

Traced householder_product(const Traced& a, const Traced& tau) {
  require_matrix("householder_product", a);
  const std::int64_t m = rows_of(a), n = cols_of(a);
  if (tau.dtype() != a.dtype()) {
    throw DTypeError("linalg.householder_product: operands " + a.type().to_string() + ", " + tau.type().to_string() +
                     "; expected tau of A's dtype");
  }
  if (tau.rank() + 1 != a.rank() || Shape(tau.shape().begin(), tau.shape().end() - 1) != batch_of(a)) {
    throw ShapeError("linalg.householder_product: operands " + a.type().to_string() + ", " + tau.type().to_string() +
                     "; expected tau [.., k] with A's batch axes");
  }
  const std::int64_t k = tau.shape().back();
  if (!(m >= n && n >= k)) {
    throw ShapeError("linalg.householder_product: operands " + a.type().to_string() + ", " + tau.type().to_string() +
                     "; expected m >= n >= k for A [.., m, n] and tau [.., k]");
  }
  // V [m, k]: the reflectors' vectors, unit diagonal and A's strict lower part below it.
  const Traced v = tril(block(a, 0, m, 0, k), -1) + rect_eye(a, m, k);
  // H_1 ... H_k = I - V T V^H with T^-1 = diag(1/tau) + striu(V^H V) (by induction on k); written
  // without 1/tau (tau = 0 is a valid, identity reflector) as T = (I + diag(tau) striu(V^H V))^-1
  // diag(tau), a unit upper triangular solve.
  Shape column = tau.shape();
  column.push_back(1);
  const Traced n_upper = triu(matmul(adjoint(v), v), 1) * reshape(tau, column);  // rows scaled by tau
  const Traced t = triangular_solve(n_upper, diag(tau), {.left_side = true, .lower = false, .unit_diagonal = true});
  return rect_eye(a, m, n) - matmul(matmul(v, t), adjoint(block(v, 0, n, 0, k)));
}

Traced tensorinv(const Traced& a, int ind) {
  if (ind <= 0 || static_cast<std::size_t>(ind) > a.rank()) {
    throw ValueError("linalg.tensorinv: ind = " + std::to_string(ind) + " for operand " + a.type().to_string() +
                     "; expected 0 < ind <= rank");
  }
  const auto split_at = static_cast<std::size_t>(ind);
  const std::int64_t front = product(a.shape(), 0, split_at), back = product(a.shape(), split_at, a.rank());
  if (front != back) {
    throw ShapeError("linalg.tensorinv: operand " + a.type().to_string() + " maps " + std::to_string(back) +
                     " elements to " + std::to_string(front) + " (ind = " + std::to_string(ind) +
                     "); expected equal products of the leading and trailing axes");
  }
  const Traced ia = inv(reshape(a, {front, back}));
  Shape result(a.shape().begin() + ind, a.shape().end());
  result.insert(result.end(), a.shape().begin(), a.shape().begin() + ind);
  return reshape(ia, result);
}

Traced tensorsolve(const Traced& a, const Traced& b, const std::vector<std::int64_t>& axes) {
  const auto an = static_cast<std::int64_t>(a.rank());
  Traced aa = a;
  if (!axes.empty()) {
    // numpy.linalg.tensorsolve: each named axis is moved to the end, in the order given.
    std::vector<std::int64_t> order(static_cast<std::size_t>(an));
    for (std::int64_t i = 0; i < an; ++i) order[static_cast<std::size_t>(i)] = i;
    for (std::int64_t axis : axes) {
      const std::int64_t k = axis < 0 ? axis + an : axis;
      auto it = std::find(order.begin(), order.end(), k);
      if (k < 0 || k >= an || it == order.end()) {
        throw ShapeError("linalg.tensorsolve: axis " + std::to_string(axis) + " of operand " + a.type().to_string() +
                         " is out of range or repeated");
      }
      order.erase(it);
      order.push_back(k);
    }
    aa = transpose(a, order);
  }
  if (b.rank() > aa.rank()) {
    throw ShapeError("linalg.tensorsolve: operands " + a.type().to_string() + ", " + b.type().to_string() +
                     "; expected B of rank at most A's");
  }
  const Shape x_shape(aa.shape().begin() + static_cast<std::ptrdiff_t>(b.rank()), aa.shape().end());
  const std::int64_t n = product(x_shape, 0, x_shape.size());
  // As NumPy: A must hold n x n elements and B n (B's own shape is read only for its rank).
  if (product(aa.shape(), 0, aa.rank()) != n * n || numel(b.shape()) != n) {
    throw ShapeError("linalg.tensorsolve: operands " + a.type().to_string() + ", " + b.type().to_string() +
                     "; expected prod(A's shape) = n^2 and prod(B's shape) = n for n = " + std::to_string(n) +
                     ", the product of A's last rank(A) - rank(B) axes");
  }
  return reshape(solve(reshape(aa, {n, n}), reshape(b, {n})), x_shape);
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
  return sum(diag_of(a), {-1});
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
