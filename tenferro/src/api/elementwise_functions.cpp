// The elementwise functions that are one op each, defined from the op list (tenferro/op_list.hpp;
// traced.hpp declares them from the same list): a unary function records its op on its operand; a
// binary one broadcasts its operands to one shape first (NumPy rules, ShapeError naming the op).
// The op's shape rule checks the dtypes (its formula's), so nothing here is per op.
#include "tenferro/op_list.hpp"
#include "tenferro/ops/record.hpp"
#include "tenferro/traced.hpp"

namespace tenferro {

namespace {
Traced record_unary(OpKind kind, const Traced& x) { return detail::apply_unary(ops::unary(kind, x.type()), x); }

Traced record_binary(OpKind kind, const Traced& a, const Traced& b) {
  if (a.shape() == b.shape()) return detail::apply_binary(ops::binary(kind, a.type(), b.type()), a, b);
  const Shape shape = broadcast_shapes(op_def(kind).name.c_str(), a.shape(), b.shape());
  const Traced x = broadcast_to(a, shape), y = broadcast_to(b, shape);
  return detail::apply_binary(ops::binary(kind, x.type(), y.type()), x, y);
}
}  // namespace

#define TENFERRO_DEFINE_UNARY(X, kind, name) \
  Traced name(const Traced& x) { return record_unary(OpKind::kind, x); }
#define TENFERRO_DEFINE_BINARY(X, kind, name) \
  Traced name(const Traced& a, const Traced& b) { return record_binary(OpKind::kind, a, b); }
TENFERRO_OP_LIST(TENFERRO_OP_LIST_NONE, TENFERRO_DEFINE_UNARY, TENFERRO_DEFINE_BINARY, TENFERRO_OP_LIST_SKIP_M, TENFERRO_OP_LIST_SKIP)
#undef TENFERRO_DEFINE_UNARY
#undef TENFERRO_DEFINE_BINARY

}  // namespace tenferro
