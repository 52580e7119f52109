// Sorting and scans on traced tensors (tenferro/sort_scan.hpp): wrappers of the sort primitive,
// take_along_axis over take's full-rank index form, and the log-depth scans.
#include "tenferro/sort_scan.hpp"

#include <algorithm>
#include <functional>

#include "axis.hpp"
#include "tenferro/indexing.hpp"
#include "tenferro/math.hpp"
#include "tenferro/ops/index_attrs.hpp"
#include "tenferro/ops/record.hpp"

namespace tenferro {

using detail::normalize_axis;

std::pair<Traced, Traced> sort_with_indices(const Traced& x, std::int64_t axis, bool descending) {
  const Traced operand[] = {x};
  auto r = apply_outputs(ops::sort(x.type(), normalize_axis("sort", axis, x.rank()), descending), operand);
  return {r[0], r[1]};
}

Traced sort(const Traced& x, std::int64_t axis, bool descending) { return sort_with_indices(x, axis, descending).first; }

Traced argsort(const Traced& x, std::int64_t axis, bool descending) {
  return sort_with_indices(x, axis, descending).second;
}

std::pair<Traced, Traced> top_k(const Traced& x, std::int64_t k) {
  if (x.rank() == 0) throw ShapeError("top_k: operand " + x.type().to_string() + " has rank 0; expected an axis to choose along");
  const std::int64_t n = x.shape().back();
  if (k < 0 || k > n) {
    throw ValueError("top_k: k = " + std::to_string(k) + " for an operand " + x.type().to_string() +
                     "; expected 0 <= k <= " + std::to_string(n));
  }
  auto [values, indices] = sort_with_indices(x, -1, true);
  std::vector<std::int64_t> start(x.rank(), 0), limit(x.shape().begin(), x.shape().end());
  limit.back() = k;
  return {slice(values, start, limit), slice(indices, start, limit)};
}

Traced take_along_axis(const Traced& x, const Traced& idx, std::int64_t axis) {
  const std::int64_t k = normalize_axis("take_along_axis", axis, x.rank());
  if (idx.dtype() != DType::I64) {
    throw DTypeError("take_along_axis: index " + idx.type().to_string() + "; expected an i64 tensor");
  }
  if (idx.rank() != x.rank()) {
    throw ShapeError("take_along_axis: index " + idx.type().to_string() + " for operand " + x.type().to_string() +
                     "; expected an index of the operand's rank " + std::to_string(x.rank()));
  }
  // Off the axis both broadcast to a common shape; along it x keeps its length, idx its own.
  Shape xs = x.shape(), is = idx.shape();
  for (std::size_t j = 0; j < xs.size(); ++j) {
    if (static_cast<std::int64_t>(j) == k || xs[j] == is[j]) continue;
    if (xs[j] != 1 && is[j] != 1) {
      throw ShapeError("take_along_axis: index " + idx.type().to_string() + " and operand " + x.type().to_string() +
                       " do not broadcast on axis " + std::to_string(j));
    }
    xs[j] = is[j] = std::max(xs[j], is[j]);
  }
  const Traced xb = broadcast_to(x, xs), ib = broadcast_to(idx, is);
  return apply(ops::take(xb.type(), ib.type(), k), {xb, ib});
}

namespace {

/// y[i] = x[0] op x[1] op ... op x[i] along `axis` in ceil(log2 n) levels: at level `offset`,
/// y[i] = combine(y[i - offset], y[i]) where i >= offset (Hillis and Steele's scan; the op must be
/// associative). The shifted operand is padded with zeros and those positions masked out, so no
/// identity element is needed (integers and -inf alike).
Traced scan(const char* op, const Traced& x, std::int64_t axis, bool reverse,
            const std::function<Traced(const Traced&, const Traced&)>& combine) {
  const std::int64_t k = normalize_axis(op, axis, x.rank());
  const auto ku = static_cast<std::size_t>(k);
  Traced y = reverse ? tenferro::reverse(x, {k}) : x;
  const std::int64_t n = x.shape()[ku];
  const std::size_t rank = x.rank();
  for (std::int64_t offset = 1; offset < n; offset *= 2) {
    std::vector<std::int64_t> start(rank, 0), limit(x.shape().begin(), x.shape().end());
    std::vector<std::int64_t> low(rank, 0), high(rank, 0);
    limit[ku] = n - offset;
    low[ku] = offset;
    const Traced shifted = pad(slice(y, start, limit), 0.0, low, high);
    // The mask along the axis only, [1, .., n, .., 1]: where() broadcasts it.
    Shape mask_shape(rank, 1);
    mask_shape[ku] = n;
    Tensor mask(TensorType{DType::Bool, mask_shape});
    for (std::int64_t i = 0; i < n; ++i) mask.data<bool>()[i] = i >= offset;
    y = where(constant(x, std::move(mask)), combine(shifted, y), y);
  }
  return reverse ? tenferro::reverse(y, {k}) : y;
}

void require_real(const char* op, const Traced& x, bool floats_only) {
  const bool ok = floats_only ? (x.dtype() == DType::F32 || x.dtype() == DType::F64)
                              : (x.dtype() == DType::F32 || x.dtype() == DType::F64 || x.dtype() == DType::I64);
  if (!ok) {
    throw DTypeError(std::string(op) + ": operand " + x.type().to_string() + "; expected " +
                     (floats_only ? "a real float dtype (f32, f64)" : "a real dtype (f32, f64, i64)"));
  }
}

}  // namespace

Traced cumprod(const Traced& x, std::int64_t axis, bool reverse) {
  if (x.dtype() == DType::Bool) throw DTypeError("cumprod: operand " + x.type().to_string() + "; expected a numeric dtype");
  return scan("cumprod", x, axis, reverse, [](const Traced& a, const Traced& b) { return a * b; });
}

Traced cummax(const Traced& x, std::int64_t axis, bool reverse) {
  require_real("cummax", x, false);
  return scan("cummax", x, axis, reverse, [](const Traced& a, const Traced& b) { return maximum(a, b); });
}

Traced cummin(const Traced& x, std::int64_t axis, bool reverse) {
  require_real("cummin", x, false);
  return scan("cummin", x, axis, reverse, [](const Traced& a, const Traced& b) { return minimum(a, b); });
}

Traced logcumsumexp(const Traced& x, std::int64_t axis, bool reverse) {
  require_real("logcumsumexp", x, true);
  return scan("logcumsumexp", x, axis, reverse, [](const Traced& a, const Traced& b) { return logaddexp(a, b); });
}

}  // namespace tenferro
