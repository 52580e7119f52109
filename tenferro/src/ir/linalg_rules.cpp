// Matrix algebra on the Traced values of a rule trace, for the linear-algebra AD rules
// (linalg_rules.hpp).
#include "linalg_rules.hpp"

#include <numeric>

#include "family.hpp"
#include "tenferro/ops/index_attrs.hpp"

namespace tenferro::detail::mat {

using ops::Axes;

namespace {
Axes iota_axes(std::size_t n) {
  Axes a(n);
  std::iota(a.begin(), a.end(), 0);
  return a;
}

/// v [.., n] broadcast to `shape` [.., m, n] (along_rows: v_j in every row) or [.., n, m] (v_i in
/// every column).
Traced broadcast_vector(const Traced& v, bool along_rows, const Shape& shape) {
  const std::size_t r = v.rank();
  Axes dims = iota_axes(r);
  dims[r - 1] = static_cast<std::int64_t>(along_rows ? r : r - 1);
  return apply_unary(ops::broadcast_in_dim(v.type(), shape, std::move(dims)), v);
}

/// The fixed 0/1 mask of `like`'s type that keeps the entries on or below (lower) / on or above
/// the k-th diagonal: a constant matrix, broadcast over the batch axes.
Traced triangle_mask(const Traced& like, std::int64_t k, bool lower) {
  const TensorType& t = like.type();
  const std::int64_t m = t.shape[t.rank() - 2], n = t.shape.back();
  Tensor mask(TensorType{t.dtype, {m, n}});
  visit_dtype(t.dtype, [&](auto zero) {
    using T = decltype(zero);
    if constexpr (!std::is_same_v<T, bool>) {
      T* p = mask.data<T>();
      for (std::int64_t i = 0; i < m; ++i) {
        for (std::int64_t j = 0; j < n; ++j) p[i * n + j] = (lower ? j - i <= k : j - i >= k) ? T(1) : T(0);
      }
    }
  });
  const Traced c = constant(like, std::move(mask));
  if (t.rank() == 2) return c;
  const auto r = static_cast<std::int64_t>(t.rank());
  return apply_unary(ops::broadcast_in_dim(c.type(), t.shape, {r - 2, r - 1}), c);
}

/// Pads the last two axes by (low, high) rows and columns of zeros.
Traced pad_last_two(const Traced& a, std::int64_t row_low, std::int64_t row_high, std::int64_t col_low,
                    std::int64_t col_high) {
  const std::size_t rank = a.rank();
  PadAttrs p;
  p.low.assign(rank, 0);
  p.high.assign(rank, 0);
  p.interior.assign(rank, 0);
  p.low[rank - 2] = row_low;
  p.high[rank - 2] = row_high;
  p.low[rank - 1] = col_low;
  p.high[rank - 1] = col_high;
  const Traced zero = full(a, TensorType{a.dtype(), {}}, 0.0);
  return apply_binary(ops::pad(a.type(), zero.type(), std::move(p)), a, zero);
}

/// The slice [from, to) of axis `axis` of a.
Traced slice_axis(const Traced& a, std::size_t axis, std::int64_t from, std::int64_t to) {
  const TensorType& t = a.type();
  SliceAttrs s;
  s.start.assign(t.rank(), 0);
  s.limit = t.shape;
  s.stride.assign(t.rank(), 1);
  s.start[axis] = from;
  s.limit[axis] = to;
  return apply_unary(ops::slice(t, std::move(s)), a);
}
}  // namespace

Traced matmul(const Traced& a, const Traced& b) {
  const std::size_t r = a.rank();
  const Axes batch = iota_axes(r - 2);
  DotDims d{batch, batch, {static_cast<std::int64_t>(r - 1)}, {static_cast<std::int64_t>(r - 2)}};
  return apply_binary(ops::dot_general(a.type(), b.type(), std::move(d)), a, b);
}

Traced adjoint(const Traced& a) {
  const std::size_t r = a.rank();
  Axes perm = iota_axes(r);
  std::swap(perm[r - 1], perm[r - 2]);
  return conj_if_complex(apply_unary(ops::transpose(a.type(), std::move(perm)), a));
}

Traced real_part(const Traced& a) {
  if (!is_complex(a.dtype())) return a;
  return apply_unary(ops::unary(OpKind::Real, a.type()), a);
}

Traced diag(const Traced& a) {
  const auto r = static_cast<std::int64_t>(a.rank());
  return apply_unary(ops::extract_diag(a.type(), r - 2, r - 1), a);
}

Traced diag_embed(const Traced& a) {
  const auto r = static_cast<std::int64_t>(a.rank());
  return apply_unary(ops::embed_diag(a.type(), r - 1, r), a);
}

Traced scale_cols(const Traced& a, const Traced& v) { return a * broadcast_vector(v, true, a.shape()); }
Traced scale_rows(const Traced& a, const Traced& v) { return a * broadcast_vector(v, false, a.shape()); }

Traced tril(const Traced& a, std::int64_t k) { return a * triangle_mask(a, k, true); }
Traced triu(const Traced& a, std::int64_t k) { return a * triangle_mask(a, k, false); }

Traced to_dtype(const Traced& a, DType dtype) { return astype(a, dtype); }

Traced hermitian_part(const Traced& a) { return (a + adjoint(a)) * 0.5; }

Traced imag_diag(const Traced& a) {
  if (!is_complex(a.dtype())) return record_nullary(a, ops::zeros(a.type()));
  const Traced d = diag(a);
  return diag_embed((d - conj(d)) * 0.5);
}

Traced cols_range(const Traced& a, std::int64_t from, std::int64_t to) { return slice_axis(a, a.rank() - 1, from, to); }
Traced rows_range(const Traced& a, std::int64_t from, std::int64_t to) { return slice_axis(a, a.rank() - 2, from, to); }

Traced concat_cols(const Traced& a, const Traced& b) {
  const Traced pa = pad_last_two(a, 0, 0, 0, cols(b));
  return pa + pad_last_two(b, 0, 0, cols(a), 0);
}

Traced concat_rows(const Traced& a, const Traced& b) {
  const Traced pa = pad_last_two(a, 0, rows(b), 0, 0);
  return pa + pad_last_two(b, rows(a), 0, 0, 0);
}

Traced upper_block(const Traced& a, const Traced& b, const Traced& c) {
  const std::int64_t n = cols(a);
  const Traced pa = pad_last_two(a, 0, n, 0, n);
  const Traced pb = pad_last_two(b, 0, n, n, 0);
  const Traced ab = pa + pb;
  return ab + pad_last_two(c, n, 0, n, 0);
}

Traced full(const Traced& like, const TensorType& type, double value) {
  const Traced s = constant(like, Tensor::scalar(value, type.dtype));
  return broadcast_to(s, type.shape);
}

Traced lorentzian_offdiag(const Traced& x, double eps) {
  const Traced lower = triangle_mask(x, 0, true);
  const Traced eye = lower - triangle_mask(x, -1, true);
  const Traced off = 1.0 - eye;
  const Traced shifted = x + eye;
  const Traced square = shifted * shifted;
  return (shifted / (square + eps)) * off;
}

Traced safe_reciprocal(const Traced& x) {
  const Traced is_zero = eq(x, full(x, x.type(), 0.0));
  const Traced one = full(x, x.type(), 1.0);
  const Traced inv = one / where(is_zero, one, x);
  return where(is_zero, 0.0, inv);
}

Traced pairwise_diff(const Traced& v) {
  Shape shape = v.shape();
  shape.push_back(shape.back());
  const Traced vj = broadcast_vector(v, true, shape);  // [i, j] = v_j
  return vj - broadcast_vector(v, false, shape);
}

Traced pairwise_sum(const Traced& v) {
  Shape shape = v.shape();
  shape.push_back(shape.back());
  const Traced vj = broadcast_vector(v, true, shape);
  return vj + broadcast_vector(v, false, shape);
}

}  // namespace tenferro::detail::mat
