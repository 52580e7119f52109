#pragma once
// The traced program's graph, for users who want the pipeline itself (resolve, linearize,
// linear_transpose, materialize_merge, compile): an opt-in header, with the graph engine's headers
// behind it. tenferro/transforms.hpp declares Program and its graph() without them; including this
// header makes the graph usable.
#include <memory>

#include "computegraph/compile_cache.hpp"
#include "tenferro/ops/std_tensor_op.hpp"
#include "tenferro/transforms.hpp"
#include "tidu/linearized_graph.hpp"

namespace tenferro {

/// The compile cache shared by every transform of this process.
std::shared_ptr<computegraph::CompileCache<StdTensorOp>> default_compile_cache();

/// `program` linearized with respect to every float or complex argument.
tidu::LinearizedGraph<StdTensorOp> linearize(const Program& program);

namespace detail {
/// Throws unless the graph has one output and the cotangent has its type.
void check_cotangent(const char* what, const GraphPtr& graph, const Tensor& cotangent);
/// Throws unless the graph's first output is a real scalar (a loss; ShapeError or DTypeError).
void check_scalar_output(const char* what, const GraphPtr& graph);
/// Throws unless the graph has one scalar real output (what grad and hessian differentiate).
void check_scalar_loss(const char* what, const GraphPtr& graph);
/// Throws ShapeError unless the graph has exactly one output (what jacfwd and jacrev return).
void check_single_output(const char* what, const GraphPtr& graph);
}  // namespace detail

}  // namespace tenferro
