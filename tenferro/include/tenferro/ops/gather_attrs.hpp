#pragma once
// The descriptor factories of gather and scatter (their dimension numbers, and what they mean, are
// in tenferro/dimension_numbers.hpp; src/ops/gather_scatter.cpp implements them).
#include <cstdint>
#include <ostream>
#include <vector>

#include "tenferro/dimension_numbers.hpp"
#include "tenferro/ops/op_attrs.hpp"
#include "tenferro/ops/std_tensor_op.hpp"

namespace tenferro {

namespace ops {
/// gather's shape rule: ShapeError / DTypeError naming the dimension number that does not fit.
/// Any operand dtype; indices i64.
StdTensorOp gather(const TensorType& operand, const TensorType& indices, GatherDims dims);
/// scatter's shape rule: updates of the operand's dtype (not bool for Add), indices i64.
StdTensorOp scatter(const TensorType& operand, const TensorType& indices, const TensorType& updates, ScatterDims dims);
}  // namespace ops

}  // namespace tenferro
