// Creation ops: constant, iota, zeros. They have no operands, so they are never active and need
// neither a JVP nor a transpose rule. Order: shape/dtype rules, kernels, definitions.
#include <cstring>

#include "ir/family.hpp"
#include "kernels/layout.hpp"

namespace tenferro {

// ---- shape/dtype rules -------------------------------------------------------------------------

namespace ops {

StdTensorOp constant(Tensor value) {
  // A private copy: later writes to the caller's tensor must not change the op (or its identity).
  return detail::make(OpKind::Constant, value.type(),
                      OpAttrs(ConstantValue{std::make_shared<const Tensor>(value.clone())}));
}

StdTensorOp iota(Shape shape, std::int64_t dim, DType dtype) {
  detail::check_shape("iota", shape);
  const TensorType type{dtype, std::move(shape)};
  detail::require_dtype("iota", type, dtype != DType::Bool, "a numeric dtype (not bool)");
  if (dim < 0 || dim >= static_cast<std::int64_t>(type.rank())) {
    throw ShapeError("iota: dim " + std::to_string(dim) + " out of range for result " + type.to_string() +
                     "; expected an axis in [0, " + std::to_string(type.rank()) + ")");
  }
  return detail::make(OpKind::Iota, type, OpAttrs(IotaAttrs{type, dim}));
}

StdTensorOp zeros(TensorType type) {
  detail::check_shape("zeros", type.shape);
  return detail::make(OpKind::Zeros, type, OpAttrs(ZerosAttrs{type}));
}

}  // namespace ops

// ---- kernels -----------------------------------------------------------------------------------

namespace detail {

namespace {
// A fresh copy per run: callers may write to results, never to the op's value.
Tensor eval_constant(const StdTensorOp& op, Operands) { return op.attrs.get<ConstantValue>().value->clone(); }

Tensor eval_zeros(const StdTensorOp& op, Operands) { return Tensor(op.out); }

Tensor eval_iota(const StdTensorOp& op, Operands) {
  // Element at multi-index i is i[dim]: index k of the flat order has i[dim] = (k / inner) % n.
  const auto dim = static_cast<std::size_t>(op.attrs.get<IotaAttrs>().dim);
  Tensor r(op.out);
  const std::int64_t n = op.out.shape[dim];
  const std::int64_t inner = row_major_strides(op.out.shape)[dim];
  visit_dtype(op.out.dtype, [&](auto zero) {
    using T = decltype(zero);
    if constexpr (!std::is_same_v<T, bool>) {
      T* z = r.data<T>();
      for (std::int64_t k = 0; k < r.numel(); ++k) z[k] = static_cast<T>((k / inner) % n);
    }
  });
  return r;
}
}  // namespace

// ---- definitions -------------------------------------------------------------------------------

const OpDef& def_Constant() {
  static const OpDef d{.name = "constant", .kind = OpKind::Constant, .operands = {},
                       .shape_rule = single_type(+[](Types, const OpAttrs& a) {
                         return a.get<ConstantValue>().value->type();
                       }),
                       .kernel = single_result(eval_constant)};
  return d;
}
const OpDef& def_Iota() {
  static const OpDef d{.name = "iota", .kind = OpKind::Iota, .operands = {},
                       .shape_rule = single_type(+[](Types, const OpAttrs& a) {
                         const IotaAttrs& i = a.get<IotaAttrs>();
                         return ops::iota(i.type.shape, i.dim, i.type.dtype).out;
                       }),
                       .kernel = single_result(eval_iota)};
  return d;
}
const OpDef& def_Zeros() {
  static const OpDef d{.name = "zeros", .kind = OpKind::Zeros, .operands = {},
                       .shape_rule = single_type(+[](Types, const OpAttrs& a) {
                         return ops::zeros(a.get<ZerosAttrs>().type).out;
                       }),
                       .kernel = single_result(eval_zeros), .all_zeros = true};
  return d;
}

}  // namespace detail
}  // namespace tenferro
