// stop_gradient and checkpoint_name, the identity ops. stop_gradient: the identity on values whose
// derivative is zero. Its operand is declared
// NonDifferentiable, so no tangent flows through it (and it has no cotangent to pass back); the
// value is unchanged, so programs compute the same numbers with and without it. It detaches a
// quantity that only steers a computation, such as the shift in logsumexp, from differentiation.
// checkpoint_name: the identity, derivative included, that names a value for a checkpoint policy
// (CheckpointPolicy::SaveNamed cuts after it); its tangent and cotangent pass through unnamed.
// Order: shape/dtype rule, kernel, definition.
#include "ir/batching.hpp"
#include "ir/family.hpp"

namespace tenferro {

namespace ops {
StdTensorOp stop_gradient(const TensorType& a) { return detail::make(OpKind::StopGradient, a); }
StdTensorOp checkpoint_name(const TensorType& a, std::string name) {
  return detail::make(OpKind::CheckpointName, a, OpAttrs(CheckpointNameAttr{std::move(name)}));
}
}  // namespace ops

namespace detail {
namespace {
// Shares the operand's storage (kernels never write their operands).
Tensor eval_stop_gradient(const StdTensorOp&, Operands in) { return *in[0]; }
}  // namespace

const OpDef& def_StopGradient() {
  static const OpDef d{.name = "stop_gradient", .kind = OpKind::StopGradient, .operands = {kNoGrad},
                       .shape_rule = single_type(+[](Types t, const OpAttrs&) { return t[0]; }),
                       .kernel = single_result(eval_stop_gradient), .identity_on_values = true,
                       .batch = batch_leading_axis()};
  return d;
}

const OpDef& def_CheckpointName() {
  static const OpDef d{.name = "checkpoint_name", .kind = OpKind::CheckpointName, .operands = {kLinear},
                       .shape_rule = single_type(+[](Types t, const OpAttrs&) { return t[0]; }),
                       .kernel = single_result(eval_stop_gradient),
                       .jvp = [](const StdTensorOp&, const JvpArgs& a) { return Tangents{a.t[0]}; },
                       .transpose = [](const StdTensorOp&, const TransposeArgs& a) { return Tangents{a.cts[0]}; },
                       .identity_on_values = true, .dependence = Dependence::Elementwise, .batch = batch_leading_axis()};
  return d;
}

}  // namespace detail
}  // namespace tenferro
