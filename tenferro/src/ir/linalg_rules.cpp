// Matrix algebra over fixed and linear values for the linear-algebra AD rules (linalg_rules.hpp).
#include "linalg_rules.hpp"

#include <numeric>

#include "kernels/layout.hpp"

namespace tenferro::detail {

namespace {
Axes iota_axes(std::size_t n) {
  Axes a(n);
  std::iota(a.begin(), a.end(), 0);
  return a;
}
}  // namespace

LocalValueId MatAlg::id(const Mat& m) const {
  if (!m.linear || !m.v.is_local()) throw Error("linalg rule: expected a linear (tangent) value as the result");
  return m.v.local_id();
}

Mat MatAlg::apply(StdTensorOp op, const std::vector<Mat>& in) {
  std::vector<PV> values;
  std::vector<bool> active;
  bool any = false;
  for (const Mat& m : in) {
    values.push_back(m.v);
    active.push_back(m.linear);
    any = any || m.linear;
  }
  if (!any) return {e_.primal(std::move(op), std::move(values)), false};
  return {Emit::local(e_.linear(std::move(op), std::move(values), std::move(active))), true};
}

std::vector<Mat> MatAlg::apply_fixed_outputs(StdTensorOp op, const std::vector<Mat>& in) {
  std::vector<PV> values;
  for (const Mat& m : in) {
    if (m.linear) throw Error("linalg rule: apply_fixed_outputs takes fixed operands only");
    values.push_back(m.v);
  }
  std::vector<Mat> out;
  for (LocalValueId id :
       e_.builder().add_primitive(std::move(op), std::move(values), computegraph::OperationRole::primary())) {
    out.push_back({Emit::local(id), false});
  }
  return out;
}

Mat MatAlg::matmul(const Mat& a, const Mat& b) {
  const std::size_t r = type(a).rank();
  const Axes batch = iota_axes(r - 2);
  DotDims d{batch, batch, {static_cast<std::int64_t>(r - 1)}, {static_cast<std::int64_t>(r - 2)}};
  return apply(ops::dot_general(type(a), type(b), std::move(d)), {a, b});
}

Mat MatAlg::adjoint(const Mat& a) {
  const std::size_t r = type(a).rank();
  Axes perm = iota_axes(r);
  std::swap(perm[r - 1], perm[r - 2]);
  return conj(apply(ops::transpose(type(a), std::move(perm)), {a}));
}

Mat MatAlg::conj(const Mat& a) {
  if (!is_complex(dtype(a))) return a;
  return apply(ops::unary(OpKind::Conj, type(a)), {a});
}

Mat MatAlg::real(const Mat& a) {
  if (!is_complex(dtype(a))) return a;
  return apply(ops::unary(OpKind::Real, type(a)), {a});
}

Mat MatAlg::neg(const Mat& a) { return apply(ops::unary(OpKind::Neg, type(a)), {a}); }
Mat MatAlg::add(const Mat& a, const Mat& b) { return apply(ops::add(type(a), type(b)), {a, b}); }
Mat MatAlg::mul(const Mat& a, const Mat& b) { return apply(ops::mul(type(a), type(b)), {a, b}); }
Mat MatAlg::div(const Mat& a, const Mat& b) { return apply(ops::div(type(a), type(b)), {a, b}); }
Mat MatAlg::scale(const Mat& a, c128 c) { return mul(a, fixed(e_.full(type(a), c))); }

Mat MatAlg::diag(const Mat& a) {
  const auto r = static_cast<std::int64_t>(type(a).rank());
  return apply(ops::extract_diag(type(a), r - 2, r - 1), {a});
}
Mat MatAlg::diag_embed(const Mat& a) {
  const auto r = static_cast<std::int64_t>(type(a).rank());
  return apply(ops::embed_diag(type(a), r - 1, r), {a});
}

Mat MatAlg::broadcast_vector(const Mat& v, bool along_rows, const Shape& shape) {
  // v [.., n] to [.., m, n] (along_rows: v_j in every row) or [.., n, m] (v_i in every column).
  const std::size_t r = type(v).rank();
  Axes dims = iota_axes(r);
  dims[r - 1] = static_cast<std::int64_t>(along_rows ? r : r - 1);
  return apply(ops::broadcast_in_dim(type(v), shape, std::move(dims)), {v});
}

Mat MatAlg::scale_cols(const Mat& a, const Mat& v) { return mul(a, broadcast_vector(v, true, type(a).shape)); }
Mat MatAlg::scale_rows(const Mat& a, const Mat& v) { return mul(a, broadcast_vector(v, false, type(a).shape)); }

Mat MatAlg::triangle_mask(const TensorType& like, std::int64_t k, bool lower) {
  const std::int64_t m = like.shape[like.rank() - 2], n = like.shape.back();
  Tensor mask(TensorType{like.dtype, {m, n}});
  visit_dtype(like.dtype, [&](auto zero) {
    using T = decltype(zero);
    if constexpr (!std::is_same_v<T, bool>) {
      T* p = mask.data<T>();
      for (std::int64_t i = 0; i < m; ++i) {
        for (std::int64_t j = 0; j < n; ++j) p[i * n + j] = (lower ? j - i <= k : j - i >= k) ? T(1) : T(0);
      }
    }
  });
  PV c = e_.primal(ops::constant(std::move(mask)), {});
  if (like.rank() == 2) return fixed(c);
  const auto r = static_cast<std::int64_t>(like.rank());
  return fixed(e_.primal(ops::broadcast_in_dim(e_.type(c), like.shape, {r - 2, r - 1}), {c}));
}

Mat MatAlg::tril(const Mat& a, std::int64_t k) { return mul(a, triangle_mask(type(a), k, true)); }
Mat MatAlg::triu(const Mat& a, std::int64_t k) { return mul(a, triangle_mask(type(a), k, false)); }

Mat MatAlg::to_dtype(const Mat& a, DType dtype) {
  if (this->dtype(a) == dtype) return a;
  return apply(ops::convert(type(a), dtype), {a});
}

Mat MatAlg::hermitian_part(const Mat& a) { return scale(add(a, adjoint(a)), 0.5); }

Mat MatAlg::imag_diag(const Mat& a) {
  if (!is_complex(dtype(a))) return zeros_like(a);
  const Mat d = diag(a);
  return diag_embed(scale(sub(d, conj(d)), 0.5));
}

Mat MatAlg::cols_range(const Mat& a, std::int64_t from, std::int64_t to) {
  const TensorType& t = type(a);
  SliceAttrs s;
  s.start.assign(t.rank(), 0);
  s.limit = t.shape;
  s.stride.assign(t.rank(), 1);
  s.start.back() = from;
  s.limit.back() = to;
  return apply(ops::slice(t, std::move(s)), {a});
}

Mat MatAlg::rows_range(const Mat& a, std::int64_t from, std::int64_t to) {
  const TensorType& t = type(a);
  SliceAttrs s;
  s.start.assign(t.rank(), 0);
  s.limit = t.shape;
  s.stride.assign(t.rank(), 1);
  s.start[t.rank() - 2] = from;
  s.limit[t.rank() - 2] = to;
  return apply(ops::slice(t, std::move(s)), {a});
}

namespace {
/// Pads the last two axes of a by (low, high) rows and columns with zeros.
PadAttrs pad_last_two(std::size_t rank, std::int64_t row_low, std::int64_t row_high, std::int64_t col_low,
                      std::int64_t col_high) {
  PadAttrs p;
  p.low.assign(rank, 0);
  p.high.assign(rank, 0);
  p.interior.assign(rank, 0);
  p.low[rank - 2] = row_low;
  p.high[rank - 2] = row_high;
  p.low[rank - 1] = col_low;
  p.high[rank - 1] = col_high;
  return p;
}
}  // namespace

Mat MatAlg::concat_cols(const Mat& a, const Mat& b) {
  const TensorType& ta = type(a);
  const Mat zero = fixed(e_.full(TensorType{ta.dtype, {}}, 0.0));
  const Mat pa = apply(ops::pad(ta, type(zero), pad_last_two(ta.rank(), 0, 0, 0, cols(b))), {a, zero});
  const Mat pb = apply(ops::pad(type(b), type(zero), pad_last_two(ta.rank(), 0, 0, cols(a), 0)), {b, zero});
  return add(pa, pb);
}

Mat MatAlg::concat_rows(const Mat& a, const Mat& b) {
  const TensorType& ta = type(a);
  const Mat zero = fixed(e_.full(TensorType{ta.dtype, {}}, 0.0));
  const Mat pa = apply(ops::pad(ta, type(zero), pad_last_two(ta.rank(), 0, rows(b), 0, 0)), {a, zero});
  const Mat pb = apply(ops::pad(type(b), type(zero), pad_last_two(ta.rank(), rows(a), 0, 0, 0)), {b, zero});
  return add(pa, pb);
}

Mat MatAlg::upper_block(const Mat& a, const Mat& b, const Mat& c) {
  const TensorType& t = type(a);
  const std::int64_t n = cols(a);
  const Mat zero = fixed(e_.full(TensorType{t.dtype, {}}, 0.0));
  const Mat pa = apply(ops::pad(t, type(zero), pad_last_two(t.rank(), 0, n, 0, n)), {a, zero});
  const Mat pb = apply(ops::pad(type(b), type(zero), pad_last_two(t.rank(), 0, n, n, 0)), {b, zero});
  const Mat pc = apply(ops::pad(type(c), type(zero), pad_last_two(t.rank(), n, 0, n, 0)), {c, zero});
  return add(add(pa, pb), pc);
}

Mat MatAlg::zeros_like(const Mat& a) { return fixed(e_.zeros(type(a))); }

Mat MatAlg::lorentzian_offdiag(const Mat& x, double eps) {
  const Mat eye = add(triangle_mask(type(x), 0, true), neg(triangle_mask(type(x), -1, true)));
  const Mat off = add(fixed(e_.full(type(x), 1.0)), neg(eye));
  const Mat shifted = add(x, eye);
  return mul(div(shifted, add(mul(shifted, shifted), fixed(e_.full(type(x), eps)))), off);
}

Mat MatAlg::safe_reciprocal(const Mat& x) {
  const PV zero = e_.full(type(x), 0.0), one = e_.full(type(x), 1.0);
  const PV is_zero = e_.compare(CompareDir::Eq, x.v, zero);
  // 1 / select(x == 0, 1, x), then 0 where x == 0: no division by zero is ever evaluated.
  const Mat safe = fixed(e_.primal(ops::select(e_.type(is_zero), type(x), type(x)), {is_zero, one, x.v}));
  const Mat inv = div(fixed(one), safe);
  return fixed(e_.primal(ops::select(e_.type(is_zero), type(x), type(x)), {is_zero, zero, inv.v}));
}

Mat MatAlg::pairwise_diff(const Mat& v) {
  Shape shape = type(v).shape;
  shape.push_back(shape.back());
  // [i, j] = v_j - v_i.
  return sub(broadcast_vector(v, true, shape), broadcast_vector(v, false, shape));
}

Mat MatAlg::pairwise_sum(const Mat& v) {
  Shape shape = type(v).shape;
  shape.push_back(shape.back());
  return add(broadcast_vector(v, true, shape), broadcast_vector(v, false, shape));
}

}  // namespace tenferro::detail
