// dynamic_slice and dynamic_update_slice: windows at start positions known only when the program
// runs (StableHLO's ops, with the starts as one 1-D i64 operand). Order: shape rules, kernels, AD
// rules, batching rules, definitions.
//
// Starts are clamped into [0, dim - size] per axis, as StableHLO does, so no start is ever out of
// range (a start past the end reads the last window; a negative one the first). The ops are linear
// in their data and the transposes close the pair:
//   dynamic_slice(x, s)               -> ct_x = dynamic_update_slice(0, ct, s)
//   dynamic_update_slice(x, u, s)     -> ct_x = dynamic_update_slice(ct, 0, s), ct_u = dynamic_slice(ct, s)
// (x and u are jointly linear: the JVP updates x's tangent with u's, a zero standing in for an
// absent one). The starts carry no tangent.
#include <algorithm>

#include "ir/batching.hpp"
#include "ir/family.hpp"
#include "kernels/layout.hpp"
#include "tenferro/indexing.hpp"
#include "tenferro/ops/gather_attrs.hpp"
#include "tenferro/ops/index_attrs.hpp"
#include "tenferro/ops/make.hpp"
#include "tenferro/ops/record.hpp"
#include "tenferro/ops/rule.hpp"

namespace tenferro {

void SliceSizes::print(std::ostream& os) const { os << "sizes=" << shape_to_string(sizes); }

namespace ops {
namespace {
void check_starts(const char* op, const TensorType& x, const TensorType& starts) {
  if (starts.dtype != DType::I64 || starts.rank() != 1 || starts.shape[0] != static_cast<std::int64_t>(x.rank())) {
    throw DTypeError(std::string(op) + ": start operand " + starts.to_string() + " for operand " + x.to_string() +
                     "; expected i64[" + std::to_string(x.rank()) + "], one start per axis");
  }
}
/// Whether a window of `sizes` fits in x: 0 <= size <= dim per axis.
void check_window(const char* op, const TensorType& x, const Shape& sizes, const char* what) {
  bool fits = sizes.size() == x.rank();
  for (std::size_t k = 0; fits && k < sizes.size(); ++k) fits = sizes[k] >= 0 && sizes[k] <= x.shape[k];
  if (!fits) {
    throw ShapeError(std::string(op) + ": " + what + " " + shape_to_string(sizes) + " for operand " + x.to_string() +
                     "; expected one size per axis in [0, dim]");
  }
}
}  // namespace

StdTensorOp dynamic_slice(const TensorType& x, const TensorType& starts, std::vector<std::int64_t> sizes) {
  check_starts("dynamic_slice", x, starts);
  check_window("dynamic_slice", x, sizes, "sizes");
  TensorType out{x.dtype, sizes};
  return detail::make(OpKind::DynamicSlice, std::move(out), OpAttrs(SliceSizes{std::move(sizes)}));
}

StdTensorOp dynamic_update_slice(const TensorType& x, const TensorType& update, const TensorType& starts) {
  check_starts("dynamic_update_slice", x, starts);
  if (update.dtype != x.dtype) {
    throw DTypeError("dynamic_update_slice: update " + update.to_string() + " for operand " + x.to_string() +
                     "; expected the operand's dtype");
  }
  check_window("dynamic_update_slice", x, update.shape, "update shape");
  return detail::make(OpKind::DynamicUpdateSlice, x);
}
}  // namespace ops

namespace detail {
namespace {

/// The window's clamped starts, as an element offset into a row-major tensor of `shape`.
std::int64_t window_offset(const Tensor& starts, const Shape& shape, const Shape& sizes) {
  const std::vector<std::int64_t> strides = row_major_strides(shape);
  std::int64_t offset = 0;
  for (std::size_t k = 0; k < shape.size(); ++k) {
    const std::int64_t s = std::clamp<std::int64_t>(starts.data<std::int64_t>()[k], 0, shape[k] - sizes[k]);
    offset += s * strides[k];
  }
  return offset;
}

Tensor eval_dynamic_slice(const StdTensorOp& op, Operands in) {
  const Tensor& x = *in[0];
  Tensor r = Tensor::uninitialized(op.out);
  if (r.numel() == 0) return r;
  const std::size_t es = dtype_size(x.dtype());
  const auto offset = window_offset(*in[1], x.shape(), op.out.shape);
  strided_copy(static_cast<std::byte*>(r.raw_data()), row_major_strides(r.shape()),
               static_cast<const std::byte*>(x.raw_data()) + offset * static_cast<std::int64_t>(es),
               row_major_strides(x.shape()), r.shape(), es);
  return r;
}

Tensor eval_dynamic_update_slice(const StdTensorOp&, Operands in) {
  const Tensor& update = *in[1];
  Tensor r = in[0]->clone();
  if (update.numel() == 0) return r;
  const std::size_t es = dtype_size(r.dtype());
  const auto offset = window_offset(*in[2], r.shape(), update.shape());
  strided_copy(static_cast<std::byte*>(r.raw_data()) + offset * static_cast<std::int64_t>(es), row_major_strides(r.shape()),
               static_cast<const std::byte*>(update.raw_data()), row_major_strides(update.shape()), update.shape(), es);
  return r;
}

Tangents jvp_dynamic_slice(const StdTensorOp& op, const JvpArgs& a) {
  if (!is_inexact(op.out.dtype)) return {std::nullopt};
  RuleTrace r(a.b);
  return {r.result(apply_binary(op, r.linear(*a.t[0]), r.fixed(a.x[1])), op, tidu::RuleKind::Jvp)};
}

Tangents jvp_dynamic_update_slice(const StdTensorOp& op, const JvpArgs& a) {
  if (!is_inexact(op.out.dtype)) return {std::nullopt};
  RuleTrace r(a.b);
  const Traced x = r.linear_or_zeros(a.t[0], type_of(a.x[0]));
  const Traced u = r.linear_or_zeros(a.t[1], type_of(a.x[1]));
  return {r.result(apply(op, {x, u, r.fixed(a.x[2])}), op, tidu::RuleKind::Jvp)};
}

Tangents transpose_dynamic_slice(const StdTensorOp& op, const TransposeArgs& a) {
  if (!a.role.is_active(0) || a.role.is_active(1)) not_linear(op, "dynamic_slice is linear in its operand only");
  RuleTrace r(a.b);
  const Traced ct = r.linear(a.ct());
  const Traced starts = r.fixed(a.x[1]);
  const Traced zero = r.zeros(type_of(a.b.key_of(a.x[0])));
  return {r.result(apply(ops::dynamic_update_slice(zero.type(), ct.type(), starts.type()), {zero, ct, starts}), op,
                   tidu::RuleKind::Transpose),
          std::nullopt};
}

Tangents transpose_dynamic_update_slice(const StdTensorOp& op, const TransposeArgs& a) {
  if (a.role.is_active(2)) not_linear(op, "the start operand carries no cotangent");
  RuleTrace r(a.b);
  const Traced ct = r.linear(a.ct());
  const Traced starts = r.fixed(a.x[2]);
  const TensorType& update = type_of(a.b.key_of(a.x[1]));
  Tangents result(3);
  if (a.role.is_active(0)) {  // the window was overwritten: no cotangent flows to x there
    result[0] = r.result(apply(op, {ct, r.zeros(update), starts}), op, tidu::RuleKind::Transpose);
  }
  if (a.role.is_active(1)) {
    result[1] = r.result(apply_binary(ops::dynamic_slice(ct.type(), starts.type(), update.shape), ct, starts), op,
                         tidu::RuleKind::Transpose);
  }
  return result;
}

}  // namespace

// ---- batching rules ----------------------------------------------------------------------------
//
// vmap (ir/batching.hpp). Starts not batched: the batch is one more axis of the window, with start
// 0 and the whole batch's length (nothing to clamp there). Batched starts: the op is the gather
// (dynamic_slice) or replacing scatter (dynamic_update_slice) of one window at the starts, which
// clamp each start into [0, dim - size] exactly as these ops do (gather_scatter.cpp's kernels), so
// the batching rule of that op pairs every example's starts with its operand in one application.

namespace {
/// The type of one example of `v` (without the batch axis).
TensorType example_type(const BatchedValue& v) {
  TensorType t = v.value.type();
  if (v.batched) t.shape.erase(t.shape.begin());
  return t;
}
/// The starts with a first start 0, for the batch axis.
Traced with_batch_start(const Traced& starts) {
  return concatenate({constant(starts, Tensor::from(std::vector<std::int64_t>{0}, Shape{1})), starts}, 0);
}
std::vector<std::int64_t> axes_upto(std::size_t rank) {
  std::vector<std::int64_t> axes(rank);
  for (std::size_t k = 0; k < rank; ++k) axes[k] = static_cast<std::int64_t>(k);
  return axes;
}
}  // namespace

static std::vector<BatchedValue> batch_dynamic_slice(const StdTensorOp& op, std::span<const BatchedValue> x,
                                                     std::int64_t batch_size) {
  const std::vector<std::int64_t>& sizes = op.attrs.get<SliceSizes>().sizes;
  if (!x[1].batched) {
    const Traced& operand = x[0].value;
    const Traced starts = with_batch_start(x[1].value);
    std::vector<std::int64_t> batch_sizes = sizes;
    batch_sizes.insert(batch_sizes.begin(), batch_size);
    return all_batched({apply(ops::dynamic_slice(operand.type(), starts.type(), std::move(batch_sizes)), {operand, starts})});
  }
  const std::vector<std::int64_t> axes = axes_upto(sizes.size());
  const StdTensorOp window = ops::gather(example_type(x[0]), example_type(x[1]), GatherDims{axes, {}, axes, 0, sizes});
  return window.def->batch(window, x, batch_size);
}

static std::vector<BatchedValue> batch_dynamic_update_slice(const StdTensorOp& op, std::span<const BatchedValue> x,
                                                            std::int64_t batch_size) {
  (void)op;
  if (!x[2].batched) {
    const Traced operand = with_batch_axis(x[0], batch_size), update = with_batch_axis(x[1], batch_size);
    const Traced starts = with_batch_start(x[2].value);
    return all_batched(
        {apply(ops::dynamic_update_slice(operand.type(), update.type(), starts.type()), {operand, update, starts})});
  }
  const TensorType update = example_type(x[1]);
  const std::vector<std::int64_t> axes = axes_upto(update.rank());
  const StdTensorOp window = ops::scatter(example_type(x[0]), example_type(x[2]), update,
                                          ScatterDims{axes, {}, axes, 0, ScatterMode::Replace});
  const BatchedValue operands[] = {x[0], x[2], x[1]};  // scatter's order: operand, indices, updates
  return window.def->batch(window, operands, batch_size);
}

const OpDef& def_DynamicSlice() {
  static const OpDef d{.name = "dynamic_slice", .kind = OpKind::DynamicSlice, .operands = {kLinear, kNoGrad},
                       .shape_rule = single_type(+[](Types t, const OpAttrs& a) {
                         return ops::dynamic_slice(t[0], t[1], a.get<SliceSizes>().sizes).out;
                       }),
                       .kernel = single_result(eval_dynamic_slice), .jvp = jvp_dynamic_slice,
                       .transpose = transpose_dynamic_slice, .dependence = Dependence::Moves, .batch = batch_dynamic_slice};
  return d;
}
const OpDef& def_DynamicUpdateSlice() {
  static const OpDef d{.name = "dynamic_update_slice", .kind = OpKind::DynamicUpdateSlice,
                       .operands = {kLinear, kLinear, kNoGrad},
                       .shape_rule = single_type(+[](Types t, const OpAttrs&) {
                         return ops::dynamic_update_slice(t[0], t[1], t[2]).out;
                       }),
                       .kernel = single_result(eval_dynamic_update_slice), .jvp = jvp_dynamic_update_slice,
                       .transpose = transpose_dynamic_update_slice, .dependence = Dependence::Moves, .batch = batch_dynamic_update_slice};
  return d;
}

}  // namespace detail
}  // namespace tenferro
