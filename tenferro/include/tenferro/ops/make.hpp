#pragma once
// Factories of the built-in StdTensorOp descriptors. Each applies its op's shape/dtype rule to the
// operand types and returns a descriptor with the result types, or throws ShapeError/DTypeError
// whose message names the op, the operand types and what was expected. The rules live with their
// op families in src/ops/*.cpp; make_op (std_tensor_op.hpp) builds any op from its definition.
#include <cstdint>
#include <vector>

#include "tenferro/ops/std_tensor_op.hpp"

namespace tenferro::ops {

using Axes = std::vector<std::int64_t>;

// elementwise: operands of one shape and dtype (broadcasting is a composite, tenferro/api)
StdTensorOp add(const TensorType& a, const TensorType& b);
StdTensorOp mul(const TensorType& a, const TensorType& b);
StdTensorOp div(const TensorType& a, const TensorType& b);
StdTensorOp maximum(const TensorType& a, const TensorType& b);  // real dtypes
StdTensorOp minimum(const TensorType& a, const TensorType& b);  // real dtypes
StdTensorOp pow(const TensorType& a, const TensorType& b);      // float or complex
StdTensorOp compare(CompareDir dir, const TensorType& a, const TensorType& b);  // -> bool
StdTensorOp select(const TensorType& pred, const TensorType& on_true, const TensorType& on_false);
StdTensorOp clamp(const TensorType& lo, const TensorType& x, const TensorType& hi);
/// Any unary elementwise op (neg, exp, asin, erf, floor, ...). Ops given by a formula admit the
/// dtypes their formula covers; the others f32, f64, c64 and c128 unless their family says more.
StdTensorOp unary(OpKind kind, const TensorType& a);
/// A binary elementwise op given by a formula (atan2, hypot, fmod, remainder): operands of one
/// shape and a dtype the formula covers.
StdTensorOp binary(OpKind kind, const TensorType& a, const TensorType& b);

// contraction
StdTensorOp dot_general(const TensorType& a, const TensorType& b, DotDims dims);

// reductions over `axes` (any order, no repeats; the result drops them)
StdTensorOp reduce(OpKind kind, const TensorType& a, Axes axes);
/// reduce_max_index / reduce_min_index over one axis: two results, the extremal values (a's dtype)
/// and the index of the first extremal element along `axis` (i64); real dtypes, axis length >= 1.
StdTensorOp reduce_index(OpKind kind, const TensorType& a, std::int64_t axis);

// structural
StdTensorOp transpose(const TensorType& a, Axes perm);
StdTensorOp reshape(const TensorType& a, Shape shape);
/// `dims[i]` is the result axis of operand axis i; operand dims are 1 or equal to the result's.
StdTensorOp broadcast_in_dim(const TensorType& a, Shape shape, Axes dims);
StdTensorOp convert(const TensorType& a, DType dtype);
/// Diagonal over axes (axis1, axis2) of equal length, kept at axis1; axis2 is dropped.
StdTensorOp extract_diag(const TensorType& a, std::int64_t axis1, std::int64_t axis2);
/// Inverse placement of extract_diag: inserts axis2 (length of axis1), zeros off the diagonal.
StdTensorOp embed_diag(const TensorType& a, std::int64_t axis1, std::int64_t axis2);

/// The identity whose derivative is zero: its result carries no tangent and passes no cotangent.
StdTensorOp stop_gradient(const TensorType& a);
StdTensorOp checkpoint_name(const TensorType& a, std::string name);

// constants
StdTensorOp constant(Tensor value);
StdTensorOp iota(Shape shape, std::int64_t dim, DType dtype);
StdTensorOp zeros(TensorType type);

}  // namespace tenferro::ops
