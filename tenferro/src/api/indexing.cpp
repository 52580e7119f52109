// Data movement on traced tensors (tenferro/indexing.hpp): the primitives' wrappers (axes
// normalized, index shapes flattened) and the composites built from them.
#include "tenferro/indexing.hpp"

#include <algorithm>
#include <optional>

#include "axis.hpp"
#include "tenferro/ops/index_attrs.hpp"
#include "tenferro/ops/record.hpp"
#include "tenferro/ops/gather_attrs.hpp"

namespace tenferro {

Traced slice(const Traced& a, std::vector<std::int64_t> start, std::vector<std::int64_t> limit,
             std::vector<std::int64_t> stride) {
  return apply(ops::slice(a.type(), SliceAttrs{std::move(start), std::move(limit), std::move(stride)}), {a});
}

Traced pad(const Traced& a, double value, std::vector<std::int64_t> low, std::vector<std::int64_t> high,
           std::vector<std::int64_t> interior) {
  const Traced v = constant(a, Tensor::scalar(value, a.dtype()));
  return apply(ops::pad(a.type(), v.type(), PadAttrs{std::move(low), std::move(high), std::move(interior)}), {a, v});
}

Traced concatenate(std::span<const Traced> parts, std::int64_t axis) {
  if (parts.empty()) throw ValueError("concatenate: no operands; expected at least one");
  const auto rank = static_cast<std::int64_t>(parts[0].rank());
  if (axis < -rank || axis >= rank) {
    throw ShapeError("concatenate: axis " + std::to_string(axis) + " for operands of rank " + std::to_string(rank));
  }
  const auto k = static_cast<std::size_t>(axis < 0 ? axis + rank : axis);
  auto fits = [&](const Traced& p) {
    if (p.rank() != parts[0].rank() || p.dtype() != parts[0].dtype()) return false;
    for (std::size_t i = 0; i < p.rank(); ++i) {
      if (i != k && p.shape()[i] != parts[0].shape()[i]) return false;
    }
    return true;
  };
  std::int64_t total = 0;
  for (const Traced& p : parts) {
    if (!fits(p)) {
      throw ShapeError("concatenate: operands " + parts[0].type().to_string() + " and " + p.type().to_string() +
                       " differ in dtype or in an axis other than " + std::to_string(k));
    }
    total += p.shape()[k];
  }
  if (parts[0].dtype() == DType::Bool) {
    // Padding and adding need numbers: the parts joined as i64, then back to bool.
    std::vector<Traced> numbers;
    for (const Traced& p : parts) numbers.push_back(astype(p, DType::I64));
    return astype(concatenate(std::span<const Traced>(numbers), axis), DType::Bool);
  }
  // Each part padded with zeros to the full length at its offset, then summed: linear, and the
  // transpose slices each part's cotangent back out.
  std::optional<Traced> sum;
  std::int64_t offset = 0;
  for (const Traced& p : parts) {
    std::vector<std::int64_t> low(p.rank(), 0), high(p.rank(), 0);
    low[k] = offset;
    high[k] = total - offset - p.shape()[k];
    offset += p.shape()[k];
    Traced padded = parts.size() == 1 ? p : pad(p, 0.0, low, high);
    sum = sum ? add(*sum, padded) : padded;
  }
  return *sum;
}

Traced concatenate(std::initializer_list<Traced> parts, std::int64_t axis) {
  return concatenate(std::span<const Traced>(parts.begin(), parts.size()), axis);
}

using detail::normalize_axis;

Traced take(const Traced& x, const Traced& idx, std::int64_t axis) {
  const std::int64_t k = normalize_axis("take", axis, x.rank());
  if (idx.dtype() != DType::I64) {
    throw DTypeError("take: index " + idx.type().to_string() + "; expected an i64 tensor");
  }
  const Traced flat = idx.rank() == 1 ? idx : reshape(idx, {idx.type().numel()});
  const Traced r = apply(ops::take(x.type(), flat.type(), k), {x, flat});
  if (idx.rank() == 1) return r;
  Shape shape(x.shape().begin(), x.shape().begin() + k);
  shape.insert(shape.end(), idx.shape().begin(), idx.shape().end());
  shape.insert(shape.end(), x.shape().begin() + k + 1, x.shape().end());
  return reshape(r, shape);
}

Traced take(const Traced& x, const std::vector<std::int64_t>& idx, std::int64_t axis) {
  return take(x, constant(x, Tensor::from(idx, {static_cast<std::int64_t>(idx.size())})), axis);
}

Traced take(const Traced& x, std::initializer_list<std::int64_t> idx, std::int64_t axis) {
  return take(x, std::vector<std::int64_t>(idx), axis);
}

Traced index_add(const Traced& base, const Traced& idx, const Traced& updates, std::int64_t axis) {
  const std::int64_t k = normalize_axis("index_add", axis, base.rank());
  return apply(ops::index_add(base.type(), idx.type(), updates.type(), k), {base, idx, updates});
}

Traced gather(const Traced& x, const Traced& indices, GatherDims dims) {
  return apply(ops::gather(x.type(), indices.type(), std::move(dims)), {x, indices});
}

Traced scatter_add(const Traced& x, const Traced& indices, const Traced& updates, ScatterDims dims) {
  dims.mode = ScatterMode::Add;
  return apply(ops::scatter(x.type(), indices.type(), updates.type(), std::move(dims)), {x, indices, updates});
}

Traced scatter(const Traced& x, const Traced& indices, const Traced& updates, ScatterDims dims) {
  dims.mode = ScatterMode::Replace;
  return apply(ops::scatter(x.type(), indices.type(), updates.type(), std::move(dims)), {x, indices, updates});
}

Traced dynamic_slice(const Traced& x, const Traced& starts, std::vector<std::int64_t> sizes) {
  return apply(ops::dynamic_slice(x.type(), starts.type(), std::move(sizes)), {x, starts});
}

Traced dynamic_update_slice(const Traced& x, const Traced& update, const Traced& starts) {
  return apply(ops::dynamic_update_slice(x.type(), update.type(), starts.type()), {x, update, starts});
}

Traced cumsum(const Traced& x, std::int64_t axis, bool reverse) {
  return apply(ops::cumsum(x.type(), normalize_axis("cumsum", axis, x.rank()), reverse), {x});
}

Traced reverse(const Traced& x, std::vector<std::int64_t> axes) {
  for (auto& a : axes) a = normalize_axis("reverse", a, x.rank());
  return apply(ops::reverse(x.type(), std::move(axes)), {x});
}

namespace {
/// x where the mask of its last two axes (true: keep) holds, zero elsewhere.
Traced masked_triangle(const char* op, const Traced& x, std::int64_t k, bool lower) {
  if (x.rank() < 2) throw ShapeError(std::string(op) + ": operand " + x.type().to_string() + " has rank < 2");
  const std::int64_t m = x.shape()[x.rank() - 2], n = x.shape().back();
  Tensor mask(TensorType{DType::Bool, {m, n}});
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < n; ++j) mask.data<bool>()[i * n + j] = lower ? j - i <= k : j - i >= k;
  }
  return where(constant(x, std::move(mask)), x, full_like(x, 0.0));
}
}  // namespace

Traced tril(const Traced& x, std::int64_t k) { return masked_triangle("tril", x, k, true); }
Traced triu(const Traced& x, std::int64_t k) { return masked_triangle("triu", x, k, false); }

Traced diagonal(const Traced& x, std::int64_t k) {
  if (x.rank() < 2) throw ShapeError("diagonal: operand " + x.type().to_string() + " has rank < 2");
  const std::size_t r = x.rank();
  const std::int64_t m = x.shape()[r - 2], n = x.shape().back();
  const std::int64_t length = std::max<std::int64_t>(0, k >= 0 ? std::min(m, n - k) : std::min(m + k, n));
  std::vector<std::int64_t> start(r, 0), limit(x.shape().begin(), x.shape().end());
  start[r - 2] = k >= 0 ? 0 : -k;
  start[r - 1] = k >= 0 ? k : 0;
  limit[r - 2] = start[r - 2] + length;
  limit[r - 1] = start[r - 1] + length;
  const Traced square = slice(x, start, limit);
  return apply(ops::extract_diag(square.type(), static_cast<std::int64_t>(r) - 2, static_cast<std::int64_t>(r) - 1),
               {square});
}

Traced diag(const Traced& v, std::int64_t k) {
  if (v.rank() < 1) throw ShapeError("diag: operand " + v.type().to_string() + " has rank 0; expected [.., n]");
  const auto r = static_cast<std::int64_t>(v.rank());
  const Traced d = apply(ops::embed_diag(v.type(), r - 1, r), {v});
  if (k == 0) return d;
  std::vector<std::int64_t> low(v.rank() + 1, 0), high(v.rank() + 1, 0);
  const std::int64_t a = k > 0 ? k : -k;
  (k > 0 ? low[v.rank()] : low[v.rank() - 1]) = a;   // shift right (columns) or down (rows)
  (k > 0 ? high[v.rank() - 1] : high[v.rank()]) = a;  // and keep the matrix square
  return pad(d, 0.0, low, high);
}

Traced stack(std::span<const Traced> parts, std::int64_t axis) {
  if (parts.empty()) throw ValueError("stack: no operands; expected at least one");
  const std::int64_t k = normalize_axis("stack", axis, parts[0].rank() + 1);
  std::vector<Traced> expanded;
  for (const Traced& p : parts) {
    if (p.shape() != parts[0].shape()) {
      throw ShapeError("stack: operands " + parts[0].type().to_string() + " and " + p.type().to_string() +
                       " differ in shape; expected one shape");
    }
    Shape s = p.shape();
    s.insert(s.begin() + k, 1);
    expanded.push_back(reshape(p, s));
  }
  return concatenate(std::span<const Traced>(expanded), k);
}

Traced stack(std::initializer_list<Traced> parts, std::int64_t axis) {
  return stack(std::span<const Traced>(parts.begin(), parts.size()), axis);
}

std::vector<Traced> split(const Traced& x, const std::vector<std::int64_t>& lengths, std::int64_t axis) {
  const std::int64_t k = normalize_axis("split", axis, x.rank());
  std::int64_t total = 0;
  bool negative = false;
  for (auto l : lengths) {
    total += l;
    negative = negative || l < 0;
  }
  if (negative || total != x.shape()[static_cast<std::size_t>(k)]) {
    throw ShapeError("split: lengths " + shape_to_string(lengths) + " of operand " + x.type().to_string() +
                     " along axis " + std::to_string(k) + "; expected non-negative lengths summing to " +
                     std::to_string(x.shape()[static_cast<std::size_t>(k)]));
  }
  std::vector<Traced> out;
  std::int64_t at = 0;
  for (auto l : lengths) {
    std::vector<std::int64_t> start(x.rank(), 0), limit(x.shape().begin(), x.shape().end());
    start[static_cast<std::size_t>(k)] = at;
    limit[static_cast<std::size_t>(k)] = at + l;
    out.push_back(slice(x, start, limit));
    at += l;
  }
  return out;
}

Traced one_hot(const Traced& idx, std::int64_t n, DType dtype) {
  if (idx.dtype() != DType::I64) throw DTypeError("one_hot: index " + idx.type().to_string() + "; expected i64");
  std::vector<std::int64_t> classes(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) classes[static_cast<std::size_t>(i)] = i;
  Shape column = idx.shape();
  column.push_back(1);
  return astype(eq(reshape(idx, column), constant(idx, Tensor::from(classes, {n}))), dtype);
}

}  // namespace tenferro
