// ElementFormula: the dtypes a formula covers, the reference kernel derived from it, and the
// definitions of the ops that are given by a formula (shape rule, kernel, operands' linearity).
#include <string>

#include "family.hpp"

namespace tenferro {

bool ElementFormula::covers(DType d) const {
  switch (d) {
    case DType::F32: return f32 != nullptr;
    case DType::F64: return f64 != nullptr;
    case DType::C64: return c64_fn != nullptr;
    case DType::C128: return c128_fn != nullptr;
    case DType::I64: return i64 != nullptr;
    case DType::Bool: return false;
  }
  return false;
}

namespace detail {

std::string covered_dtypes(const ElementFormula& f) {
  std::string s;
  for (DType d : {DType::F32, DType::F64, DType::C64, DType::C128, DType::I64}) {
    if (f.covers(d)) s += (s.empty() ? "" : ", ") + std::string(dtype_name(d));
  }
  return s;
}

namespace {
/// z[i] = fn(x[i], y[i]) over the whole tensor (y = x for unary ops).
template <class T>
void map_formula(T (*fn)(T, T), Operands in, Tensor& result) {
  const T* x = in[0]->data<T>();
  const T* y = in.size() > 1 ? in[1]->data<T>() : x;
  T* z = result.data<T>();
  const std::int64_t n = result.numel();
  for (std::int64_t i = 0; i < n; ++i) z[i] = fn(x[i], y[i]);
}
}  // namespace

Kernel formula_kernel(const ElementFormula& f) {
  return [f](const StdTensorOp& op, Operands in, std::span<Tensor> results) {
    Tensor r(op.out);
    switch (op.out.dtype) {
      case DType::F32: map_formula(f.f32, in, r); break;
      case DType::F64: map_formula(f.f64, in, r); break;
      case DType::C64: map_formula(f.c64_fn, in, r); break;
      case DType::C128: map_formula(f.c128_fn, in, r); break;
      case DType::I64: map_formula(f.i64, in, r); break;
      case DType::Bool: break;  // never: the shape rule admits only covered dtypes
    }
    results[0] = std::move(r);
  };
}

OpDef formula_op(const char* name, OpKind kind, std::vector<Linearity> operands, ElementFormula formula,
                 JvpRule jvp, Domain domain, Discontinuity discontinuity, std::optional<BranchCut> branch_cut) {
  ShapeRule shape;
  if (operands.size() == 1) {
    shape = [kind](Types t, const OpAttrs&) { return std::vector<TensorType>{ops::unary(kind, t[0]).out}; };
  } else {
    shape = [kind](Types t, const OpAttrs&) { return std::vector<TensorType>{ops::binary(kind, t[0], t[1]).out}; };
  }
  OpDef d{.name = name, .kind = kind, .operands = std::move(operands), .elementwise = true,
          .shape_rule = std::move(shape), .kernel = formula_kernel(formula), .jvp = std::move(jvp),
          .fusion = Fusion::Elementwise};
  d.formula = formula;
  d.domain = domain;
  d.discontinuity = discontinuity;
  d.branch_cut = branch_cut;
  return d;
}

}  // namespace detail

namespace ops {

/// The shape/dtype rule of a binary op given by a formula: one shape and dtype, covered by it.
StdTensorOp binary(OpKind kind, const TensorType& a, const TensorType& b) {
  const OpDef& def = op_def(kind);
  if (def.arity() != 2 || !def.formula) throw Error("ops::binary: " + def.name + " is not a binary formula op");
  const char* name = def.name.c_str();
  detail::require_same_type(name, a, b);
  detail::require_dtype(name, a, def.formula->covers(a.dtype), detail::covered_dtypes(*def.formula).c_str());
  return detail::make(kind, a);
}

}  // namespace ops
}  // namespace tenferro
