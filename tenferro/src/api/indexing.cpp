// slice, pad and concatenate on traced tensors (tenferro/indexing.hpp).
#include "tenferro/indexing.hpp"

#include <optional>

#include "tenferro/ops/linalg_attrs.hpp"

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

}  // namespace tenferro
