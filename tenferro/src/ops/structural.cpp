// Structural ops: transpose, reshape, broadcast_in_dim, convert, extract_diag, embed_diag.
// Order: shape/dtype rules, kernels, JVP rules, transpose rules, definitions.
//
// Every op here is linear, so (docs/design.md, "The Primitive contract") only its transpose rule
// says anything new: its JVP applies the op itself to the tangent, and its transpose is the
// adjoint map:
//   transpose(perm)       <-> transpose(inverse perm)
//   reshape               <-> reshape back
//   broadcast_in_dim      <-> reduce_sum over the broadcast axes, then transpose/reshape back to
//                             the operand's axes (docs/design.md, "Vector example 2")
//   convert real->complex <-> real(), then convert to the operand's precision
//   convert f32<->f64, c64<->c128: the opposite conversion
//   extract_diag          <-> embed_diag (same axes)
// Values that are not float or complex (i64, bool) never carry tangents, so conversions to or
// from them have none. Kernels never write their operands; reshape's result shares storage.
#include <algorithm>

#include "ir/batching.hpp"
#include "ir/elementwise_formulas.hpp"
#include "ir/family.hpp"
#include "ir/vector_blocks.hpp"
#include "kernels/layout.hpp"
#include "tenferro/ops/record.hpp"
#include "tenferro/ops/rule.hpp"

namespace tenferro {

// ---- shape/dtype rules -------------------------------------------------------------------------

namespace ops {
using detail::make;

StdTensorOp transpose(const TensorType& a, Axes perm) {
  const auto rank = static_cast<std::int64_t>(a.rank());
  if (static_cast<std::int64_t>(perm.size()) != rank) {
    throw ShapeError("transpose: perm " + shape_to_string(perm) + " has " + std::to_string(perm.size()) +
                     " entries for operand " + a.to_string() + "; expected a permutation of [0, " +
                     std::to_string(rank) + ")");
  }
  detail::check_axes("transpose", "perm", perm, rank, a.to_string());
  Shape shape(perm.size());
  for (std::size_t k = 0; k < perm.size(); ++k) shape[k] = a.shape[static_cast<std::size_t>(perm[k])];
  return make(OpKind::Transpose, TensorType{a.dtype, std::move(shape)}, OpAttrs(Permutation{std::move(perm)}));
}

StdTensorOp reshape(const TensorType& a, Shape shape) {
  detail::check_shape("reshape", shape);
  if (numel(shape) != a.numel()) {
    throw ShapeError("reshape: cannot reshape operand " + a.to_string() + " (" + std::to_string(a.numel()) +
                     " elements) to shape " + shape_to_string(shape) + " (" + std::to_string(numel(shape)) +
                     " elements); expected equal element counts");
  }
  return make(OpKind::Reshape, TensorType{a.dtype, shape}, OpAttrs(ReshapeTo{shape}));
}

StdTensorOp broadcast_in_dim(const TensorType& a, Shape shape, Axes dims) {
  detail::check_shape("broadcast_in_dim", shape);
  const std::string what = a.to_string() + " to shape " + shape_to_string(shape);
  if (dims.size() != a.rank()) {
    throw ShapeError("broadcast_in_dim: dims " + shape_to_string(dims) + " has " +
                     std::to_string(dims.size()) + " entries for operand " + what +
                     "; expected one result axis per operand axis");
  }
  detail::check_axes("broadcast_in_dim", "dims", dims, static_cast<std::int64_t>(shape.size()), what);
  for (std::size_t i = 0; i < dims.size(); ++i) {
    const std::int64_t n = a.shape[i], m = shape[static_cast<std::size_t>(dims[i])];
    if (n != 1 && n != m) {
      throw ShapeError("broadcast_in_dim: operand axis " + std::to_string(i) + " of " + what +
                       " has length " + std::to_string(n) + " but maps to result axis " +
                       std::to_string(dims[i]) + " of length " + std::to_string(m) +
                       "; expected length 1 or " + std::to_string(m));
    }
  }
  return make(OpKind::BroadcastInDim, TensorType{a.dtype, shape}, OpAttrs(BroadcastDims{shape, std::move(dims)}));
}

StdTensorOp convert(const TensorType& a, DType dtype) {
  if (is_complex(a.dtype) && !is_complex(dtype)) {
    throw DTypeError("convert: operand " + a.to_string() + " cannot be converted to " + dtype_name(dtype) +
                     "; expected a complex target (take real() or abs() first)");
  }
  return make(OpKind::Convert, TensorType{dtype, a.shape}, OpAttrs(ConvertTo{dtype}));
}

namespace {
void check_diag_axes(const char* op, std::int64_t axis1, std::int64_t axis2, std::int64_t full_rank,
                     const TensorType& a) {
  const bool ok = axis1 >= 0 && axis1 < full_rank && axis2 >= 0 && axis2 < full_rank && axis1 != axis2;
  if (!ok) {
    throw ShapeError(std::string(op) + ": axes (" + std::to_string(axis1) + ", " + std::to_string(axis2) +
                     ") invalid for operand " + a.to_string() + "; expected two distinct axes in [0, " +
                     std::to_string(full_rank) + ")");
  }
}
}  // namespace

StdTensorOp extract_diag(const TensorType& a, std::int64_t axis1, std::int64_t axis2) {
  check_diag_axes("extract_diag", axis1, axis2, static_cast<std::int64_t>(a.rank()), a);
  const std::int64_t n1 = a.shape[static_cast<std::size_t>(axis1)],
                     n2 = a.shape[static_cast<std::size_t>(axis2)];
  if (n1 != n2) {
    throw ShapeError("extract_diag: axes " + std::to_string(axis1) + " and " + std::to_string(axis2) +
                     " of operand " + a.to_string() + " have lengths " + std::to_string(n1) + " and " +
                     std::to_string(n2) + "; expected equal lengths");
  }
  Shape shape = a.shape;
  shape.erase(shape.begin() + axis2);
  return make(OpKind::ExtractDiag, TensorType{a.dtype, std::move(shape)}, OpAttrs(DiagAxes{axis1, axis2}));
}

StdTensorOp embed_diag(const TensorType& a, std::int64_t axis1, std::int64_t axis2) {
  check_diag_axes("embed_diag", axis1, axis2, static_cast<std::int64_t>(a.rank()) + 1, a);
  // The operand is the result with axis2 removed, so the diagonal sits at operand axis d.
  const std::int64_t d = axis1 - (axis2 < axis1 ? 1 : 0);
  Shape shape = a.shape;
  shape.insert(shape.begin() + axis2, a.shape[static_cast<std::size_t>(d)]);
  return make(OpKind::EmbedDiag, TensorType{a.dtype, std::move(shape)}, OpAttrs(DiagAxes{axis1, axis2}));
}

}  // namespace ops

// ---- kernels -----------------------------------------------------------------------------------

namespace detail {
namespace {
Tensor convert_kernel(const Tensor& a, DType to) {
  if (a.dtype() == to) return a;
  Tensor r(TensorType{to, a.shape()});
  const std::int64_t n = a.numel();
  visit_dtype(a.dtype(), [&](auto from_zero) {
    using From = decltype(from_zero);
    visit_dtype(to, [&](auto to_zero) {
      using To = decltype(to_zero);
      const From* x = static_cast<const From*>(a.raw_data());
      To* z = static_cast<To*>(r.raw_data());
      for (std::int64_t i = 0; i < n; ++i) z[i] = formulas::convert_of<To>(x[i]);
    });
  });
  return r;
}

/// For extract_diag/embed_diag: the strides, over the reduced (axis2-less) shape, that address the
/// full tensor of shape `full`: axis j of the reduced shape is full axis j (+1 past axis2), and the
/// diagonal axis steps along axis1 and axis2 together.
Strides diag_strides(const Shape& full, std::int64_t axis1, std::int64_t axis2) {
  const Strides fs = row_major_strides(full);
  Strides s;
  for (std::int64_t j = 0; j + 1 < static_cast<std::int64_t>(full.size()); ++j) {
    const std::int64_t f = j + (j >= axis2 ? 1 : 0);
    s.push_back(fs[static_cast<std::size_t>(f)] + (f == axis1 ? fs[static_cast<std::size_t>(axis2)] : 0));
  }
  return s;
}

auto* bytes(Tensor& t) { return static_cast<std::byte*>(t.raw_data()); }
auto* bytes(const Tensor& t) { return static_cast<const std::byte*>(t.raw_data()); }

Tensor eval_transpose(const StdTensorOp& op, Operands in) { return permuted(*in[0], op.attrs.get<Permutation>().perm); }
// Shares storage: kernels never write their operands.
Tensor eval_reshape(const StdTensorOp& op, Operands in) { return in[0]->reshaped(op.out.shape); }
Tensor eval_convert(const StdTensorOp& op, Operands in) { return convert_kernel(*in[0], op.out.dtype); }

Tensor eval_broadcast(const StdTensorOp& op, Operands in) {
  const Tensor& a = *in[0];
  const auto& dims = op.attrs.get<BroadcastDims>().dims;
  Tensor r = Tensor::uninitialized(op.out);  // every element is written
  const Strides as = row_major_strides(a.shape());
  Strides src(op.out.rank(), 0);  // stride 0 repeats the operand along broadcast axes
  for (std::size_t i = 0; i < a.rank(); ++i) {
    const auto axis = static_cast<std::size_t>(dims[i]);
    if (a.shape()[i] == op.out.shape[axis]) src[axis] = as[i];
  }
  strided_copy(bytes(r), row_major_strides(op.out.shape), bytes(a), src, op.out.shape, dtype_size(a.dtype()));
  return r;
}

Tensor eval_extract_diag(const StdTensorOp& op, Operands in) {
  const Tensor& a = *in[0];
  const DiagAxes& d = op.attrs.get<DiagAxes>();
  Tensor r(op.out);
  strided_copy(bytes(r), row_major_strides(op.out.shape), bytes(a), diag_strides(a.shape(), d.axis1, d.axis2),
               op.out.shape, dtype_size(a.dtype()));
  return r;
}

Tensor eval_embed_diag(const StdTensorOp& op, Operands in) {
  const Tensor& a = *in[0];
  const DiagAxes& d = op.attrs.get<DiagAxes>();
  Tensor r(op.out);  // zero-filled: the off-diagonal entries
  strided_copy(bytes(r), diag_strides(op.out.shape, d.axis1, d.axis2), bytes(a), row_major_strides(a.shape()),
               a.shape(), dtype_size(a.dtype()));
  return r;
}
}  // namespace

// ---- JVP rules ---------------------------------------------------------------------------------

namespace {
Tangents jvp_structural(const StdTensorOp& op, const JvpArgs& a) {
  // Linear ops: the tangent map is the op itself. Integer and bool results carry no tangent.
  if (!is_inexact(op.out.dtype) || !is_inexact(type_of(a.x[0]).dtype)) return {std::nullopt};
  RuleTrace r(a.b);
  return {r.result(apply_unary(op, r.linear(*a.t[0])), op, tidu::RuleKind::Jvp)};
}
}  // namespace

// ---- transpose rules ---------------------------------------------------------------------------
// Adjoints for <a, b> = Re(sum conj(a) * b) (docs/design.md, "Complex numbers"). All maps here
// have real coefficients, so no conj appears.

namespace {
/// The adjoint of broadcast_in_dim: sum over the result axes the operand does not supply (or
/// supplies with length 1 where the result is longer), then restore the operand's axis order and
/// its length-1 axes.
Traced unbroadcast(const StdTensorOp& op, const TensorType& in, Traced v) {
  const auto& dims = op.attrs.get<BroadcastDims>().dims;
  std::vector<std::int64_t> summed;
  std::vector<std::size_t> kept;  // operand axes that survive the sum
  for (std::int64_t r = 0; r < static_cast<std::int64_t>(op.out.rank()); ++r) {
    auto it = std::find(dims.begin(), dims.end(), r);
    const auto i = static_cast<std::size_t>(it - dims.begin());
    if (it == dims.end() || in.shape[i] != op.out.shape[static_cast<std::size_t>(r)]) {
      summed.push_back(r);
    } else {
      kept.push_back(i);  // in increasing result-axis order
    }
  }
  if (!summed.empty()) v = apply_unary(ops::reduce(OpKind::ReduceSum, v.type(), summed), v);
  // The surviving axes are ordered by result axis; put them in operand order.
  std::vector<std::size_t> sorted = kept;
  std::sort(sorted.begin(), sorted.end());
  if (sorted != kept) {
    Axes perm;
    for (std::size_t i : sorted) perm.push_back(std::find(kept.begin(), kept.end(), i) - kept.begin());
    v = apply_unary(ops::transpose(v.type(), perm), v);
  }
  if (v.shape() != in.shape) v = apply_unary(ops::reshape(v.type(), in.shape), v);
  return v;
}

/// The adjoint of convert between float/complex dtypes: the embedding real -> complex transposes
/// to real(), a change of precision to the opposite change.
Traced unconvert(const TensorType& in, Traced v) {
  if (!is_complex(in.dtype) && is_complex(v.dtype())) v = real(v);
  if (v.dtype() != in.dtype) v = apply_unary(ops::convert(v.type(), in.dtype), v);
  return v;
}

/// The transpose rule of a structural op of one operand, which must be active: `adjoint(op,
/// operand type, cotangent)` maps the cotangent back.
template <class Adjoint>
Tangents structural_transpose(const StdTensorOp& op, const TransposeArgs& a, Adjoint adjoint) {
  if (!a.role.is_active(0)) not_linear(op, "its only operand is fixed");
  RuleTrace r(a.b);
  const TensorType& in = type_of(a.b.key_of(a.x[0]));
  return {r.result(adjoint(in, r.linear(a.ct())), op, tidu::RuleKind::Transpose)};
}

Tangents transpose_transpose(const StdTensorOp& op, const TransposeArgs& a) {
  return structural_transpose(op, a, [&](const TensorType&, const Traced& ct) {
    return apply_unary(ops::transpose(ct.type(), inverse_permutation(op.attrs.get<Permutation>().perm)), ct);
  });
}
Tangents transpose_reshape(const StdTensorOp& op, const TransposeArgs& a) {
  return structural_transpose(op, a, [](const TensorType& in, const Traced& ct) {
    return apply_unary(ops::reshape(ct.type(), in.shape), ct);
  });
}
Tangents transpose_broadcast(const StdTensorOp& op, const TransposeArgs& a) {
  return structural_transpose(op, a, [&](const TensorType& in, const Traced& ct) { return unbroadcast(op, in, ct); });
}
Tangents transpose_convert(const StdTensorOp& op, const TransposeArgs& a) {
  const TensorType& in = type_of(a.b.key_of(a.x[0]));
  if (!is_inexact(in.dtype) || !is_inexact(op.out.dtype)) {
    not_linear(op, "a conversion to or from an integer or bool dtype carries no tangent");
  }
  return structural_transpose(op, a, [](const TensorType& operand, const Traced& ct) { return unconvert(operand, ct); });
}
Tangents transpose_extract_diag(const StdTensorOp& op, const TransposeArgs& a) {
  const DiagAxes& d = op.attrs.get<DiagAxes>();
  return structural_transpose(op, a, [&](const TensorType&, const Traced& ct) {
    return apply_unary(ops::embed_diag(ct.type(), d.axis1, d.axis2), ct);
  });
}
Tangents transpose_embed_diag(const StdTensorOp& op, const TransposeArgs& a) {
  const DiagAxes& d = op.attrs.get<DiagAxes>();
  return structural_transpose(op, a, [&](const TensorType&, const Traced& ct) {
    return apply_unary(ops::extract_diag(ct.type(), d.axis1, d.axis2), ct);
  });
}
}  // namespace

// ---- definitions -------------------------------------------------------------------------------
// Every op here is linear: its JVP is the op itself (jvp_structural).

/// vmap: the batch axis stays first.
static std::vector<BatchedValue> batch_transpose(const StdTensorOp& op, std::span<const BatchedValue> x, std::int64_t batch_size) {
  (void)batch_size;
  std::vector<std::int64_t> perm{0};
  for (std::int64_t p : op.attrs.get<Permutation>().perm) perm.push_back(p + 1);
  return detail::all_batched({apply(ops::transpose(x[0].value.type(), std::move(perm)), {x[0].value})});
}

const OpDef& def_Transpose() {
  static const OpDef d{.name = "transpose", .kind = OpKind::Transpose, .operands = {kLinear},
                       .shape_rule = single_type(+[](Types t, const OpAttrs& a) {
                         return ops::transpose(t[0], a.get<Permutation>().perm).out;
                       }),
                       .kernel = single_result(eval_transpose), .jvp = jvp_structural, .transpose = transpose_transpose, .layout = Layout::Transpose, .batch = batch_transpose};
  return d;
}
static std::vector<BatchedValue> batch_reshape(const StdTensorOp& op, std::span<const BatchedValue> x, std::int64_t batch_size) {
  Shape shape = op.attrs.get<ReshapeTo>().shape;
  shape.insert(shape.begin(), batch_size);
  return detail::all_batched({apply(ops::reshape(x[0].value.type(), std::move(shape)), {x[0].value})});
}

const OpDef& def_Reshape() {
  static const OpDef d{.name = "reshape", .kind = OpKind::Reshape, .operands = {kLinear},
                       .shape_rule = single_type(+[](Types t, const OpAttrs& a) {
                         return ops::reshape(t[0], a.get<ReshapeTo>().shape).out;
                       }),
                       .kernel = single_result(eval_reshape), .jvp = jvp_structural, .transpose = transpose_reshape, .layout = Layout::Reshape, .batch = batch_reshape};
  return d;
}
static std::vector<BatchedValue> batch_broadcast(const StdTensorOp& op, std::span<const BatchedValue> x, std::int64_t batch_size) {
  const BroadcastDims& b = op.attrs.get<BroadcastDims>();
  Shape shape = b.shape;
  shape.insert(shape.begin(), batch_size);
  std::vector<std::int64_t> dims{0};
  for (std::int64_t d : b.dims) dims.push_back(d + 1);
  return detail::all_batched({apply(ops::broadcast_in_dim(x[0].value.type(), std::move(shape), std::move(dims)), {x[0].value})});
}

const OpDef& def_BroadcastInDim() {
  static const OpDef d{.name = "broadcast_in_dim", .kind = OpKind::BroadcastInDim, .operands = {kLinear},
                       .shape_rule = single_type(+[](Types t, const OpAttrs& a) {
                         const auto& b = a.get<BroadcastDims>();
                         return ops::broadcast_in_dim(t[0], b.shape, b.dims).out;
                       }),
                       .kernel = single_result(eval_broadcast), .jvp = jvp_structural,
                       .transpose = transpose_broadcast, 
                       .layout = Layout::Broadcast, .batch = batch_broadcast};
  return d;
}
/// Linear between float and complex dtypes; to or from i64 and bool there is no tangent (the JVP
/// rule gives none, the transpose rule refuses).
const OpDef& def_Convert() {
  static const OpDef d{.name = "convert", .kind = OpKind::Convert, .operands = {kLinear},
                       .shape_rule = single_type(+[](Types t, const OpAttrs& a) {
                         return ops::convert(t[0], a.get<ConvertTo>().dtype).out;
                       }),
                       .kernel = single_result(eval_convert), .jvp = jvp_structural, .transpose = transpose_convert, 
                       .formula = fast_form({}, ElementFast::Convert), .fusion = Fusion::Elementwise};
  return d;
}
static std::vector<BatchedValue> batch_extract_diag(const StdTensorOp& op, std::span<const BatchedValue> x, std::int64_t batch_size) {
  (void)batch_size;
  const DiagAxes& a = op.attrs.get<DiagAxes>();
  return detail::all_batched({apply(ops::extract_diag(x[0].value.type(), a.axis1 + 1, a.axis2 + 1), {x[0].value})});
}

const OpDef& def_ExtractDiag() {
  static const OpDef d{.name = "extract_diag", .kind = OpKind::ExtractDiag, .operands = {kLinear},
                       .shape_rule = single_type(+[](Types t, const OpAttrs& a) {
                         const DiagAxes& axes = a.get<DiagAxes>();
                         return ops::extract_diag(t[0], axes.axis1, axes.axis2).out;
                       }),
                       .kernel = single_result(eval_extract_diag), .jvp = jvp_structural,
                       .transpose = transpose_extract_diag, .layout = Layout::Diagonal, .dependence = Dependence::Moves, .batch = batch_extract_diag};
  return d;
}
static std::vector<BatchedValue> batch_embed_diag(const StdTensorOp& op, std::span<const BatchedValue> x, std::int64_t batch_size) {
  (void)batch_size;
  const DiagAxes& a = op.attrs.get<DiagAxes>();
  return detail::all_batched({apply(ops::embed_diag(x[0].value.type(), a.axis1 + 1, a.axis2 + 1), {x[0].value})});
}

const OpDef& def_EmbedDiag() {
  static const OpDef d{.name = "embed_diag", .kind = OpKind::EmbedDiag, .operands = {kLinear},
                       .shape_rule = single_type(+[](Types t, const OpAttrs& a) {
                         const DiagAxes& axes = a.get<DiagAxes>();
                         return ops::embed_diag(t[0], axes.axis1, axes.axis2).out;
                       }),
                       .kernel = single_result(eval_embed_diag), .jvp = jvp_structural,
                       .transpose = transpose_embed_diag, .dependence = Dependence::Moves, .batch = batch_embed_diag};
  return d;
}

}  // namespace detail
}  // namespace tenferro
