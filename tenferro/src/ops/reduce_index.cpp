// Value-and-index reductions: reduce_max_index and reduce_min_index over one axis, the built-in
// multi-output ops. Result 0 holds the extremal values (the operand's dtype), result 1 the index
// along the axis of the first extremal element (i64). A NaN is extremal: the first NaN of a slice
// gives its value and index, as in NumPy's argmax. Order: shape/dtype rule, kernel, JVP rule,
// definitions.
//
// Derivative: the values are the operand gathered at the indices, so their tangent is the operand
// tangent at the same place, reduce_sum(select(iota == index, dx, 0)) along the axis; the indices
// are piecewise constant and carry none. At ties the derivative follows the chosen (first)
// element, a one-sided derivative; reduce_max instead splits it among the ties.
#include <cmath>

#include "ir/batching.hpp"
#include "ir/family.hpp"
#include "kernels/layout.hpp"
#include "tenferro/ops/record.hpp"
#include "tenferro/ops/rule.hpp"

namespace tenferro {

namespace ops {
StdTensorOp reduce_index(OpKind kind, const TensorType& a, std::int64_t axis) {
  if (kind != OpKind::ReduceMaxIndex && kind != OpKind::ReduceMinIndex) {
    throw Error("ops::reduce_index: " + op_def(kind).name + " is not a value-and-index reduction");
  }
  const std::string& name = op_def(kind).name;
  detail::require_dtype(name.c_str(), a, a.dtype == DType::F32 || a.dtype == DType::F64 || a.dtype == DType::I64,
                        "a real dtype (f32, f64 or i64)");
  const auto rank = static_cast<std::int64_t>(a.rank());
  if (axis < 0 || axis >= rank) {
    throw ShapeError(name + ": axis " + std::to_string(axis) + " out of range for operand " + a.to_string() +
                     "; expected an axis in [0, " + std::to_string(rank) + ")");
  }
  if (a.shape[static_cast<std::size_t>(axis)] == 0) {
    throw ShapeError(name + ": axis " + std::to_string(axis) + " of operand " + a.to_string() +
                     " is empty; expected at least one element to choose from");
  }
  Shape shape = a.shape;
  shape.erase(shape.begin() + axis);
  StdTensorOp op = detail::make(kind, TensorType{a.dtype, shape}, OpAttrs(ReduceAxis{axis}));
  op.more_outs.push_back(TensorType{DType::I64, std::move(shape)});
  return op;
}
}  // namespace ops

namespace detail {
namespace {

/// Scans each slice along the axis: outer x n x inner, row-major.
void eval_reduce_index(const StdTensorOp& op, Operands in, std::span<Tensor> out, bool max) {
  const Tensor& a = *in[0];
  const auto axis = static_cast<std::size_t>(op.attrs.get<ReduceAxis>().axis);
  const std::int64_t n = a.shape()[axis];
  const std::int64_t inner = row_major_strides(a.shape())[axis];
  const std::int64_t outer = n * inner == 0 ? 0 : a.numel() / (n * inner);  // an empty axis after `axis`: no slices
  Tensor values(op.out);
  Tensor indices(op.output_type(1));
  std::int64_t* idx = indices.data<std::int64_t>();
  visit_dtype(a.dtype(), [&](auto zero) {
    using T = decltype(zero);
    if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
      const T* x = a.data<T>();
      T* v = values.data<T>();
      for (std::int64_t o = 0; o < outer; ++o) {
        for (std::int64_t i = 0; i < inner; ++i) {
          const T* slice = x + o * n * inner + i;
          std::int64_t best = 0;
          T b = slice[0];
          for (std::int64_t k = 1; k < n && b == b; ++k) {  // stops at a NaN
            const T c = slice[k * inner];
            if (c != c || (max ? c > b : c < b)) {
              b = c;
              best = k;
            }
          }
          v[o * inner + i] = b;
          idx[o * inner + i] = best;
        }
      }
    }
  });
  out[0] = std::move(values);
  out[1] = std::move(indices);
}

Tangents jvp_reduce_index(const StdTensorOp& op, const JvpArgs& a) {
  if (!is_inexact(op.out.dtype)) return {std::nullopt, std::nullopt};  // integers carry no tangent
  RuleTrace r(a.b);
  const TensorType& in = type_of(a.x[0]);
  const std::int64_t axis = op.attrs.get<ReduceAxis>().axis;
  const TensorType& index_type = op.output_type(1);
  std::vector<std::int64_t> kept = complement_axes(std::vector<std::int64_t>{axis}, static_cast<std::int64_t>(in.rank()));
  const Traced positions = r.nullary(ops::iota(in.shape, axis, DType::I64));
  const Traced chosen = apply_unary(ops::broadcast_in_dim(index_type, in.shape, kept), r.fixed(a.y[1]));
  const Traced at_index = eq(positions, chosen);
  const Traced picked = where(at_index, r.linear(*a.t[0]), r.zeros(in));
  const Traced dv = apply_unary(ops::reduce(OpKind::ReduceSum, in, {axis}), picked);
  return {r.result(dv, op, tidu::RuleKind::Jvp), std::nullopt};
}

std::vector<TensorType> reduce_index_types(Types t, const OpAttrs& attrs, OpKind kind) {
  StdTensorOp op = ops::reduce_index(kind, t[0], attrs.get<ReduceAxis>().axis);
  return {op.out, op.output_type(1)};
}
}  // namespace

// ---- definitions -------------------------------------------------------------------------------

/// vmap: the reduced axis, past the batch axis.
static std::vector<BatchedValue> batch_reduce_index(const StdTensorOp& op, std::span<const BatchedValue> x, std::int64_t batch_size) {
  (void)batch_size;
  return detail::all_batched(
      apply_outputs(ops::reduce_index(op.kind, x[0].value.type(), op.attrs.get<ReduceAxis>().axis + 1), std::span<const Traced>(&x[0].value, 1)));
}

const OpDef& def_ReduceMaxIndex() {
  static const OpDef d{
      .name = "reduce_max_index", .kind = OpKind::ReduceMaxIndex, .operands = {kNonlinear}, .outputs = 2,
      .shape_rule = [](Types t, const OpAttrs& a) { return reduce_index_types(t, a, OpKind::ReduceMaxIndex); },
      .kernel = [](const StdTensorOp& op, Operands in, std::span<Tensor> out) { eval_reduce_index(op, in, out, true); },
      .jvp = jvp_reduce_index, .batch = batch_reduce_index};
  return d;
}

const OpDef& def_ReduceMinIndex() {
  static const OpDef d{
      .name = "reduce_min_index", .kind = OpKind::ReduceMinIndex, .operands = {kNonlinear}, .outputs = 2,
      .shape_rule = [](Types t, const OpAttrs& a) { return reduce_index_types(t, a, OpKind::ReduceMinIndex); },
      .kernel = [](const StdTensorOp& op, Operands in, std::span<Tensor> out) { eval_reduce_index(op, in, out, false); },
      .jvp = jvp_reduce_index, .batch = batch_reduce_index};
  return d;
}

}  // namespace detail
}  // namespace tenferro
