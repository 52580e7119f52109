// slice and pad (StableHLO semantics): each is the other's transpose. Order: attributes, shape
// rules, kernels, AD rules, definitions.
//
// slice keeps, along axis k, the indices start[k], start[k] + stride[k], ... below limit[k].
// pad places operand element i of axis k at low[k] + i * (interior[k] + 1) of a result filled
// with the scalar `value`; negative low/high cut elements off instead.
// Transposes: the cotangent of a slice is the cotangent padded with zeros back to the operand's
// shape (interior stride - 1); the cotangent of pad's operand is the cotangent sliced at the
// operand's positions, and that of its value the sum of the cotangent over the padding.
#include <algorithm>
#include <cstring>
#include <sstream>

#include "ir/batching.hpp"
#include "ir/family.hpp"
#include "kernels/layout.hpp"
#include "tenferro/ops/index_attrs.hpp"
#include "tenferro/ops/make.hpp"
#include "tenferro/ops/record.hpp"
#include "tenferro/ops/rule.hpp"

namespace tenferro {

std::size_t SliceAttrs::hash() const { return hash_mix(hash_mix(hash_ints(start), hash_ints(limit)), hash_ints(stride)); }
void SliceAttrs::print(std::ostream& os) const {
  os << "start=" << shape_to_string(start) << ", limit=" << shape_to_string(limit)
     << ", stride=" << shape_to_string(stride);
}
std::size_t PadAttrs::hash() const { return hash_mix(hash_mix(hash_ints(low), hash_ints(high)), hash_ints(interior)); }
void PadAttrs::print(std::ostream& os) const {
  os << "low=" << shape_to_string(low) << ", high=" << shape_to_string(high)
     << ", interior=" << shape_to_string(interior);
}

// ---- shape rules -------------------------------------------------------------------------------

namespace ops {

StdTensorOp slice(const TensorType& a, SliceAttrs attrs) {
  const std::size_t r = a.rank();
  if (attrs.stride.empty()) attrs.stride.assign(r, 1);
  auto fail = [&](const std::string& why) {
    std::ostringstream os;
    os << "slice: operand " << a.to_string() << " with ";
    attrs.print(os);
    throw ShapeError(os.str() + ": " + why);
  };
  if (attrs.start.size() != r || attrs.limit.size() != r || attrs.stride.size() != r) {
    fail("expected one start, limit and stride per operand axis (" + std::to_string(r) + ")");
  }
  Shape shape(r);
  for (std::size_t k = 0; k < r; ++k) {
    const std::int64_t n = a.shape[k], s = attrs.start[k], l = attrs.limit[k], st = attrs.stride[k];
    if (!(0 <= s && s <= l && l <= n)) {
      fail("axis " + std::to_string(k) + " expected 0 <= start <= limit <= " + std::to_string(n));
    }
    if (st < 1) fail("axis " + std::to_string(k) + " expected a stride >= 1");
    shape[k] = (l - s + st - 1) / st;
  }
  return detail::make(OpKind::Slice, TensorType{a.dtype, std::move(shape)}, OpAttrs(std::move(attrs)));
}

StdTensorOp pad(const TensorType& a, const TensorType& value, PadAttrs attrs) {
  const std::size_t r = a.rank();
  if (attrs.interior.empty()) attrs.interior.assign(r, 0);
  auto fail = [&](const std::string& why) {
    std::ostringstream os;
    os << "pad: operand " << a.to_string() << ", value " << value.to_string() << " with ";
    attrs.print(os);
    throw ShapeError(os.str() + ": " + why);
  };
  if (value.dtype != a.dtype) {
    throw DTypeError("pad: operand " + a.to_string() + " and padding value " + value.to_string() +
                     " differ in dtype; expected one dtype");
  }
  if (!value.shape.empty()) fail("expected a rank-0 padding value");
  if (attrs.low.size() != r || attrs.high.size() != r || attrs.interior.size() != r) {
    fail("expected one low, high and interior entry per operand axis (" + std::to_string(r) + ")");
  }
  Shape shape(r);
  for (std::size_t k = 0; k < r; ++k) {
    const std::int64_t n = a.shape[k];
    if (attrs.interior[k] < 0) fail("axis " + std::to_string(k) + " expected interior >= 0");
    shape[k] = attrs.low[k] + attrs.high[k] + n + std::max<std::int64_t>(n - 1, 0) * attrs.interior[k];
    if (shape[k] < 0) fail("axis " + std::to_string(k) + " would have negative length " + std::to_string(shape[k]));
  }
  return detail::make(OpKind::Pad, TensorType{a.dtype, std::move(shape)}, OpAttrs(std::move(attrs)));
}

}  // namespace ops

// ---- kernels -----------------------------------------------------------------------------------

namespace detail {
namespace {

Tensor eval_slice(const StdTensorOp& op, Operands in) {
  const Tensor& a = *in[0];
  const auto& s = op.attrs.get<SliceAttrs>();
  Tensor r = Tensor::uninitialized(op.out);
  if (r.numel() == 0) return r;
  const Strides st = row_major_strides(a.shape());
  Strides src(st.size());
  std::int64_t offset = 0;
  for (std::size_t k = 0; k < st.size(); ++k) {
    src[k] = st[k] * s.stride[k];
    offset += st[k] * s.start[k];
  }
  const std::size_t es = dtype_size(a.dtype());
  strided_copy(static_cast<std::byte*>(r.raw_data()), row_major_strides(r.shape()),
               static_cast<const std::byte*>(a.raw_data()) + offset * static_cast<std::int64_t>(es), src,
               r.shape(), es);
  return r;
}

/// n copies of the es-byte element at `value` from `out` on: one memset for a zero (the common
/// padding, and every transposed slice), else a typed fill.
void fill_elements(std::byte* out, const std::byte* value, std::int64_t n, std::size_t es) {
  const auto count = static_cast<std::size_t>(n);
  if (std::all_of(value, value + es, [](std::byte b) { return b == std::byte{0}; })) {
    std::memset(out, 0, count * es);
    return;
  }
  auto fill = [&](auto word) {
    using W = decltype(word);
    std::memcpy(&word, value, sizeof(W));
    W* o = reinterpret_cast<W*>(out);
    std::fill(o, o + count, word);
  };
  struct Pair {
    std::uint64_t lo, hi;
  };
  switch (es) {
    case 1: fill(std::uint8_t{}); return;
    case 4: fill(std::uint32_t{}); return;
    case 8: fill(std::uint64_t{}); return;
    case 16: fill(Pair{}); return;
    default:
      for (std::size_t i = 0; i < count; ++i) std::memcpy(out + i * es, value, es);
  }
}

Tensor eval_pad(const StdTensorOp& op, Operands in) {
  const Tensor& a = *in[0];
  const auto& p = op.attrs.get<PadAttrs>();
  Tensor r = Tensor::uninitialized(op.out);
  const std::size_t es = dtype_size(a.dtype());
  // Fill with the padding value, then copy the operand's surviving elements into place.
  auto* out = static_cast<std::byte*>(r.raw_data());
  fill_elements(out, static_cast<const std::byte*>(in[1]->raw_data()), r.numel(), es);
  const Strides ast = row_major_strides(a.shape()), rst = row_major_strides(r.shape());
  Shape copy_shape(a.rank());
  Strides dst(a.rank());
  std::int64_t src_off = 0, dst_off = 0;
  for (std::size_t k = 0; k < a.rank(); ++k) {
    const std::int64_t step = p.interior[k] + 1, n = a.shape()[k], m = r.shape()[k];
    // Operand indices i with 0 <= low + i * step < m.
    const std::int64_t first = p.low[k] >= 0 ? 0 : (-p.low[k] + step - 1) / step;
    const std::int64_t last = m - 1 - p.low[k] < 0 ? -1 : std::min(n - 1, (m - 1 - p.low[k]) / step);
    copy_shape[k] = std::max<std::int64_t>(last - first + 1, 0);
    dst[k] = rst[k] * step;
    src_off += ast[k] * first;
    dst_off += rst[k] * (p.low[k] + first * step);
  }
  if (numel(copy_shape) == 0) return r;
  strided_copy(out + dst_off * static_cast<std::int64_t>(es), dst,
               static_cast<const std::byte*>(a.raw_data()) + src_off * static_cast<std::int64_t>(es), ast,
               copy_shape, es);
  return r;
}

// ---- AD rules ----------------------------------------------------------------------------------

Tangents jvp_slice(const StdTensorOp& op, const JvpArgs& a) {
  RuleTrace r(a.b);
  return {r.result(apply_unary(op, r.linear(*a.t[0])), op, tidu::RuleKind::Jvp)};
}

Tangents transpose_slice(const StdTensorOp& op, const TransposeArgs& a) {
  if (!a.role.is_active(0)) not_linear(op, "its only operand is fixed");
  RuleTrace r(a.b);
  const TensorType& in = type_of(a.b.key_of(a.x[0]));
  const auto& s = op.attrs.get<SliceAttrs>();
  PadAttrs p;
  for (std::size_t k = 0; k < in.rank(); ++k) {
    const std::int64_t count = op.out.shape[k];
    p.low.push_back(s.start[k]);
    p.high.push_back(in.shape[k] - s.start[k] - (count > 0 ? (count - 1) * s.stride[k] + 1 : 0));
    p.interior.push_back(count > 0 ? s.stride[k] - 1 : 0);
  }
  const Traced ct = r.linear(a.ct());
  const Traced zero = constant(ct, Tensor::scalar(0.0, in.dtype));
  return {r.result(apply_binary(ops::pad(ct.type(), zero.type(), std::move(p)), ct, zero), op, tidu::RuleKind::Transpose)};
}

Tangents jvp_pad(const StdTensorOp& op, const JvpArgs& a) {
  RuleTrace r(a.b);
  const Traced x = r.linear_or_zeros(a.t[0], type_of(a.x[0]));
  const Traced v = r.linear_or_zeros(a.t[1], type_of(a.x[1]));
  return {r.result(apply_binary(op, x, v), op, tidu::RuleKind::Jvp)};
}

Tangents transpose_pad(const StdTensorOp& op, const TransposeArgs& a) {
  RuleTrace r(a.b);
  const auto& p = op.attrs.get<PadAttrs>();
  const TensorType& in = type_of(a.b.key_of(a.x[0]));
  const Traced ct_out = r.linear(a.ct());
  Traced ct = ct_out;
  // Undo the cuts (negative low/high) with zeros, then slice out the operand's positions.
  PadAttrs uncut;
  bool cut = false;
  for (std::size_t k = 0; k < in.rank(); ++k) {
    uncut.low.push_back(std::max<std::int64_t>(-p.low[k], 0));
    uncut.high.push_back(std::max<std::int64_t>(-p.high[k], 0));
    uncut.interior.push_back(0);
    cut = cut || p.low[k] < 0 || p.high[k] < 0;
  }
  if (cut) {
    const Traced zero = constant(ct, Tensor::scalar(0.0, in.dtype));
    ct = apply_binary(ops::pad(ct.type(), zero.type(), std::move(uncut)), ct, zero);
  }
  SliceAttrs s;
  for (std::size_t k = 0; k < in.rank(); ++k) {
    const std::int64_t start = std::max<std::int64_t>(p.low[k], 0), step = p.interior[k] + 1;
    s.start.push_back(start);
    s.limit.push_back(in.shape[k] > 0 ? start + (in.shape[k] - 1) * step + 1 : start);
    s.stride.push_back(step);
  }
  const Traced ct_x = apply_unary(ops::slice(ct.type(), std::move(s)), ct);
  Tangents result(2);
  if (a.role.is_active(0)) result[0] = r.result(ct_x, op, tidu::RuleKind::Transpose);
  if (a.role.is_active(1)) {
    // The padding's share: everything minus the operand's share.
    auto all_axes = [](std::size_t rank) {
      Axes axes(rank);
      for (std::size_t k = 0; k < rank; ++k) axes[k] = static_cast<std::int64_t>(k);
      return axes;
    };
    const Traced total = apply_unary(ops::reduce(OpKind::ReduceSum, ct_out.type(), all_axes(ct_out.rank())), ct_out);
    const Traced inner = apply_unary(ops::reduce(OpKind::ReduceSum, in, all_axes(in.rank())), ct_x);
    result[1] = r.result(total - inner, op, tidu::RuleKind::Transpose);
  }
  return result;
}

}  // namespace

// ---- definitions -------------------------------------------------------------------------------

static std::vector<BatchedValue> batch_slice(const StdTensorOp& op, std::span<const BatchedValue> x, std::int64_t batch_size) {
  SliceAttrs s = op.attrs.get<SliceAttrs>();
  s.start.insert(s.start.begin(), 0);
  s.limit.insert(s.limit.begin(), batch_size);
  s.stride.insert(s.stride.begin(), 1);
  return detail::all_batched({apply(ops::slice(x[0].value.type(), std::move(s)), {x[0].value})});
}

const OpDef& def_Slice() {
  static const OpDef d{.name = "slice", .kind = OpKind::Slice, .operands = {kLinear},
                       .shape_rule = single_type(+[](Types t, const OpAttrs& a) {
                         return ops::slice(t[0], a.get<SliceAttrs>()).out;
                       }),
                       .kernel = single_result(eval_slice), .jvp = jvp_slice, .transpose = transpose_slice, .layout = Layout::Slice, .dependence = Dependence::Moves, .batch = batch_slice};
  return d;
}
/// vmap (ir/batching.hpp). A padding value shared by the batch: the pad of the batch, nothing added
/// along the batch axis. A batched value v[b]: where(mask, v[b], pad(x, 0)), the mask the pad of
/// false by true (true exactly where the padding lies, negative and interior padding included), so
/// every element is either the operand's or the example's value, bit for bit, in any dtype.
static std::vector<BatchedValue> batch_pad(const StdTensorOp& op, std::span<const BatchedValue> x, std::int64_t batch_size) {
  const PadAttrs& p = op.attrs.get<PadAttrs>();
  PadAttrs over_batch = p;  // nothing added along the batch axis
  over_batch.low.insert(over_batch.low.begin(), 0);
  over_batch.high.insert(over_batch.high.begin(), 0);
  over_batch.interior.insert(over_batch.interior.begin(), 0);
  const Traced& operand = x[0].value;
  if (!x[1].batched) {
    return detail::all_batched({apply(ops::pad(operand.type(), x[1].value.type(), std::move(over_batch)), {operand, x[1].value})});
  }
  const Traced& value = x[1].value;
  Shape example = operand.shape();
  if (x[0].batched) example.erase(example.begin());
  const Traced inside = broadcast_to(constant(value, Tensor::zeros({}, DType::Bool)), std::move(example));
  const Traced on_padding = constant(value, Tensor::ones({}, DType::Bool));
  const Traced mask = apply(ops::pad(inside.type(), on_padding.type(), p), {inside, on_padding});
  const Traced zero = constant(value, Tensor::zeros({}, operand.dtype()));
  const Traced padded =
      apply(ops::pad(operand.type(), zero.type(), x[0].batched ? std::move(over_batch) : p), {operand, zero});
  Shape column(op.out.rank() + 1, 1);
  column[0] = batch_size;
  return detail::all_batched({where(mask, reshape(value, std::move(column)), padded)});
}

const OpDef& def_Pad() {
  static const OpDef d{.name = "pad", .kind = OpKind::Pad, .operands = {kLinear, kLinear},
                       .shape_rule = single_type(+[](Types t, const OpAttrs& a) {
                         return ops::pad(t[0], t[1], a.get<PadAttrs>()).out;
                       }),
                       .kernel = single_result(eval_pad), .jvp = jvp_pad, .transpose = transpose_pad, .dependence = Dependence::Moves, .batch = batch_pad};
  return d;
}

}  // namespace detail
}  // namespace tenferro
