// TEMPORARY development stubs; each family file replaces its part.
#include "family.hpp"
#define STUB(...) { throw Error("not implemented yet"); }
namespace tenferro { namespace ops {
StdTensorOp dot_general(const TensorType&, const TensorType&, DotDims) STUB()
StdTensorOp reduce(OpKind, const TensorType&, Axes) STUB()
StdTensorOp transpose(const TensorType&, Axes) STUB()
StdTensorOp reshape(const TensorType&, Shape) STUB()
StdTensorOp broadcast_in_dim(const TensorType&, Shape, Axes) STUB()
StdTensorOp convert(const TensorType&, DType) STUB()
StdTensorOp extract_diag(const TensorType&, std::int64_t, std::int64_t) STUB()
StdTensorOp embed_diag(const TensorType&, std::int64_t, std::int64_t) STUB()
StdTensorOp constant(Tensor) STUB()
StdTensorOp iota(Shape, std::int64_t, DType) STUB()
StdTensorOp zeros(TensorType) STUB()
}
namespace detail {
Tensor eval_dot(const StdTensorOp&, Operands) STUB()
Tangents jvp_dot(const StdTensorOp&, const JvpArgs&) STUB()
Tangents transpose_dot(const StdTensorOp&, const TransposeArgs&) STUB()
Tensor eval_reduce(const StdTensorOp&, Operands) STUB()
Tangents jvp_reduce(const StdTensorOp&, const JvpArgs&) STUB()
Tangents transpose_reduce(const StdTensorOp&, const TransposeArgs&) STUB()
Tensor eval_structural(const StdTensorOp&, Operands) STUB()
Tangents jvp_structural(const StdTensorOp&, const JvpArgs&) STUB()
Tangents transpose_structural(const StdTensorOp&, const TransposeArgs&) STUB()
Tensor eval_constant(const StdTensorOp&) STUB()
}}
