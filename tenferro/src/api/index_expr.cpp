// NumPy-style indexing of traced tensors (tenferro/index_expr.hpp): the items are resolved against
// the operand's shape into one reverse (the axes with a negative step), one slice, at most one take
// (the i64 index tensor) and one reshape (integers drop their axis, newaxis inserts one).
#include "tenferro/index_expr.hpp"

#include <algorithm>
#include <string>

#include "tenferro/indexing.hpp"

namespace tenferro {

namespace {

/// What one operand axis contributes: a slice (start, limit, stride on the axis as it is after the
/// reverse), whether it is reversed, and whether the axis is dropped (an integer).
struct AxisPlan {
  std::int64_t start = 0, limit = 0, stride = 1;
  bool reversed = false, dropped = false;
};

std::string where_in(std::size_t item) { return "index item " + std::to_string(item); }

/// NumPy's slice.indices(n) for start:stop:step, as a plan on the (possibly reversed) axis.
AxisPlan plan_range(const Range& r, std::int64_t n, std::size_t item) {
  if (r.step == 0) throw ValueError("index: " + where_in(item) + " is a range with step 0; expected a nonzero step");
  AxisPlan p;
  auto clamp_bound = [&](std::int64_t v, std::int64_t lo, std::int64_t hi) {
    if (v < 0) v += n;
    return std::clamp(v, lo, hi);
  };
  if (r.step > 0) {
    const std::int64_t start = r.start.value ? clamp_bound(*r.start.value, 0, n) : 0;
    const std::int64_t stop = r.stop.value ? clamp_bound(*r.stop.value, 0, n) : n;
    p.start = start;
    p.limit = std::max(start, stop);
    p.stride = r.step;
    return p;
  }
  // A negative step walks from start down to just above stop; on the reversed axis (position
  // i becomes n - 1 - i) that is a forward walk from n - 1 - start.
  const std::int64_t start = r.start.value ? clamp_bound(*r.start.value, -1, n - 1) : n - 1;
  const std::int64_t stop = r.stop.value ? clamp_bound(*r.stop.value, -1, n - 1) : -1;
  p.reversed = true;
  p.start = n - 1 - start;
  p.limit = std::max(p.start, n - 1 - stop);
  p.stride = -r.step;
  return p;
}

}  // namespace

Traced index(const Traced& x, const IndexExpr& expr) {
  const auto& items = expr.items();
  const auto rank = static_cast<std::int64_t>(x.rank());
  // Axes the items consume (everything but ellipsis and newaxis) and where the ellipsis stands.
  std::int64_t consumed = 0;
  std::optional<std::size_t> ellipsis_at;
  std::optional<std::size_t> tensor_at;
  for (std::size_t i = 0; i < items.size(); ++i) {
    const IndexItem& it = items[i];
    if (it.kind() == IndexItem::Kind::Ellipsis) {
      if (ellipsis_at) throw ValueError("index: two ellipses (" + where_in(*ellipsis_at) + " and " + std::to_string(i) + ")");
      ellipsis_at = i;
    } else if (it.kind() != IndexItem::Kind::NewAxis) {
      ++consumed;
    }
    if (it.kind() == IndexItem::Kind::Tensor) {
      const Traced* t = &it.tensor();
      if (tensor_at) {
        throw ValueError("index: index tensors at items " + std::to_string(*tensor_at) + " and " + std::to_string(i) +
                         "; one index tensor is supported (use take_along_axis for element-wise indices)");
      }
      if (t->dtype() != DType::I64) {
        throw DTypeError("index: " + where_in(i) + " is a " + t->type().to_string() +
                         " tensor; expected i64 indices (boolean masks have a data-dependent shape: use where)");
      }
      tensor_at = i;
    }
  }
  if (consumed > rank) {
    throw ShapeError("index: " + std::to_string(consumed) + " indexed axes for an operand " + x.type().to_string() +
                     " of rank " + std::to_string(rank));
  }

  // Resolve each item against its axis; collect the result shape (before the take, an index
  // tensor's axis keeps its length) and where the new axes go.
  std::vector<AxisPlan> plans(static_cast<std::size_t>(rank));
  for (std::int64_t k = 0; k < rank; ++k) plans[static_cast<std::size_t>(k)].limit = x.shape()[static_cast<std::size_t>(k)];
  Shape result;
  std::int64_t axis = 0, take_axis = -1;
  std::optional<Traced> idx;
  auto add_item = [&](const IndexItem& it, std::size_t i) {
    if (it.kind() == IndexItem::Kind::NewAxis) {
      result.push_back(1);
      return;
    }
    const auto k = static_cast<std::size_t>(axis);
    const std::int64_t n = x.shape()[k];
    if (it.kind() == IndexItem::Kind::Position) {
      const std::int64_t pos = it.position();
      const std::int64_t p = pos < 0 ? pos + n : pos;
      if (p < 0 || p >= n) {
        throw ValueError("index: " + where_in(i) + " is " + std::to_string(pos) + ", out of range for axis " +
                         std::to_string(axis) + " of length " + std::to_string(n) + " (operand " + x.type().to_string() + ")");
      }
      plans[k] = AxisPlan{p, p + 1, 1, false, true};
    } else if (it.kind() == IndexItem::Kind::Range) {
      plans[k] = plan_range(it.range(), n, i);
      const AxisPlan& p = plans[k];
      result.push_back((p.limit - p.start + p.stride - 1) / p.stride);
    } else {
      idx = it.tensor();
      take_axis = axis;
      for (std::int64_t d : idx->shape()) result.push_back(d);
    }
    ++axis;
  };
  for (std::size_t i = 0; i < items.size(); ++i) {
    const IndexItem& it = items[i];
    if (it.kind() == IndexItem::Kind::Ellipsis) {
      for (std::int64_t e = 0; e < rank - consumed; ++e) add_item(IndexItem(Range{}), i);
    } else {
      add_item(it, i);
    }
  }
  while (axis < rank) add_item(IndexItem(Range{}), items.size());

  Traced y = x;
  std::vector<std::int64_t> flip;
  std::vector<std::int64_t> start, limit, stride;
  bool sliced = false;
  for (std::int64_t k = 0; k < rank; ++k) {
    const AxisPlan& p = plans[static_cast<std::size_t>(k)];
    if (p.reversed) flip.push_back(k);
    start.push_back(p.start);
    limit.push_back(p.limit);
    stride.push_back(p.stride);
    sliced = sliced || p.start != 0 || p.limit != x.shape()[static_cast<std::size_t>(k)] || p.stride != 1;
  }
  if (!flip.empty()) y = reverse(y, flip);
  if (sliced) y = slice(y, start, limit, stride);
  if (idx) y = take(y, *idx, take_axis);
  if (y.shape() != result) y = reshape(y, result);
  return y;
}

Traced Traced::operator[](const IndexExpr& expr) const { return index(*this, expr); }

}  // namespace tenferro
