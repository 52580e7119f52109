// TEMPORARY development stubs; each family file replaces its part.
#include "family.hpp"
#define STUB(...) { throw Error("not implemented yet"); }
namespace tenferro { namespace ops {
StdTensorOp maximum(const TensorType&, const TensorType&) STUB()
StdTensorOp minimum(const TensorType&, const TensorType&) STUB()
StdTensorOp pow(const TensorType&, const TensorType&) STUB()
StdTensorOp compare(CompareDir, const TensorType&, const TensorType&) STUB()
StdTensorOp select(const TensorType&, const TensorType&, const TensorType&) STUB()
StdTensorOp clamp(const TensorType&, const TensorType&, const TensorType&) STUB()
}
namespace detail {
Tensor eval_minmax(const StdTensorOp&, Operands) STUB()
Tangents jvp_minmax(const StdTensorOp&, const JvpArgs&) STUB()
Tangents transpose_minmax(const StdTensorOp&, const TransposeArgs&) STUB()
Tensor eval_analytic(const StdTensorOp&, Operands) STUB()
Tangents jvp_analytic(const StdTensorOp&, const JvpArgs&) STUB()
}}
