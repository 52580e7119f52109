// Creation ops: constant, iota, zeros. They have no operands, so they are never active: their JVP
// is empty (dispatch.cpp) and they have no transpose. Order: shape/dtype rules, kernels.
#include <cstring>

// Family files switch over their own subset of OpKind; exhaustiveness is enforced in dispatch.cpp.
#pragma GCC diagnostic ignored "-Wswitch-enum"

#include "family.hpp"
#include "layout.hpp"

namespace tenferro {

// ---- shape/dtype rules -------------------------------------------------------------------------

namespace ops {

StdTensorOp constant(Tensor value) {
  OpAttrs attrs;
  // A private copy: later writes to the caller's tensor must not change the op (or its identity).
  attrs.constant = std::make_shared<const Tensor>(value.clone());
  return detail::make(OpKind::Constant, value.type(), std::move(attrs));
}

StdTensorOp iota(Shape shape, std::int64_t dim, DType dtype) {
  detail::check_shape("iota", shape);
  const TensorType type{dtype, std::move(shape)};
  detail::require_dtype("iota", type, dtype != DType::Bool, "a numeric dtype (not bool)");
  if (dim < 0 || dim >= static_cast<std::int64_t>(type.rank())) {
    throw ShapeError("iota: dim " + std::to_string(dim) + " out of range for result " + type.to_string() +
                     "; expected an axis in [0, " + std::to_string(type.rank()) + ")");
  }
  OpAttrs attrs;
  attrs.dim = dim;
  return detail::make(OpKind::Iota, type, std::move(attrs));
}

StdTensorOp zeros(TensorType type) {
  detail::check_shape("zeros", type.shape);
  return detail::make(OpKind::Zeros, std::move(type));
}

}  // namespace ops

// ---- kernels -----------------------------------------------------------------------------------

namespace detail {

Tensor eval_constant(const StdTensorOp& op) {
  switch (op.kind) {
    // A fresh copy per run: callers may write to results, never to the op's value.
    case OpKind::Constant: return op.attrs.constant->clone();
    case OpKind::Zeros: return Tensor(op.out);
    case OpKind::Iota: {
      // Element at multi-index i is i[dim]: index k of the flat order has i[dim] = (k / inner) % n.
      Tensor r(op.out);
      const std::int64_t n = op.out.shape[static_cast<std::size_t>(op.attrs.dim)];
      const std::int64_t inner = row_major_strides(op.out.shape)[static_cast<std::size_t>(op.attrs.dim)];
      visit_dtype(op.out.dtype, [&](auto zero) {
        using T = decltype(zero);
        if constexpr (!std::is_same_v<T, bool>) {
          T* z = r.data<T>();
          for (std::int64_t k = 0; k < r.numel(); ++k) z[k] = static_cast<T>((k / inner) % n);
        }
      });
      return r;
    }
    default: break;
  }
  throw Error("eval_constant: " + op.name() + " is not a creation op");
}

}  // namespace detail
}  // namespace tenferro
