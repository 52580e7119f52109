// StdTensorOp's GraphOperation and Primitive members: exhaustive switches over OpKind that route
// each op to its family file. Compiled with -Wswitch-enum: an op without a route does not build.
#include <sstream>

#include "family.hpp"

namespace tenferro {

namespace {
std::string axes_string(const std::vector<std::int64_t>& axes) { return shape_to_string(axes); }

std::size_t hash_axes(std::size_t h, const std::vector<std::int64_t>& axes) {
  for (auto a : axes) h = (h ^ static_cast<std::size_t>(a + 0x9e37)) * 0x100000001b3ULL;
  return h * 31 + axes.size();
}

bool same_content(const std::shared_ptr<const Tensor>& a, const std::shared_ptr<const Tensor>& b) {
  if (a == b) return true;
  if (!a || !b || a->type() != b->type()) return false;
  const auto* x = static_cast<const unsigned char*>(a->raw_data());
  const auto* y = static_cast<const unsigned char*>(b->raw_data());
  return std::equal(x, x + a->nbytes(), y);
}
}  // namespace

bool OpAttrs::operator==(const OpAttrs& o) const {
  return axes == o.axes && dot == o.dot && compare == o.compare && dim == o.dim &&
         same_content(constant, o.constant);
}

std::ostream& operator<<(std::ostream& os, const TensorKey& key) {
  return os << key.name << ':' << key.type.to_string();
}

std::size_t StdTensorOp::hash() const {
  std::size_t h = static_cast<std::size_t>(kind) * 0x9e3779b97f4a7c15ULL ^ out.hash();
  h = hash_axes(h, attrs.axes);
  h = hash_axes(h, attrs.dot.lhs_batch);
  h = hash_axes(h, attrs.dot.rhs_batch);
  h = hash_axes(h, attrs.dot.lhs_contract);
  h = hash_axes(h, attrs.dot.rhs_contract);
  h = h * 31 + static_cast<std::size_t>(attrs.compare) * 7 + static_cast<std::size_t>(attrs.dim);
  if (attrs.constant) {
    const auto* bytes = static_cast<const unsigned char*>(attrs.constant->raw_data());
    for (std::size_t i = 0; i < attrs.constant->nbytes(); ++i) h = (h ^ bytes[i]) * 0x100000001b3ULL;
  }
  return h;
}

std::string StdTensorOp::name() const {
  std::ostringstream os;
  os << op_info(kind).name;
  switch (kind) {
    case OpKind::ReduceSum:
    case OpKind::ReduceProd:
    case OpKind::ReduceMax:
    case OpKind::ReduceMin:
    case OpKind::ExtractDiag:
    case OpKind::EmbedDiag: os << "[axes=" << axes_string(attrs.axes) << ']'; break;
    case OpKind::Transpose: os << "[perm=" << axes_string(attrs.axes) << ']'; break;
    case OpKind::Reshape: os << "[shape=" << shape_to_string(out.shape) << ']'; break;
    case OpKind::BroadcastInDim:
      os << "[shape=" << shape_to_string(out.shape) << ", dims=" << axes_string(attrs.axes) << ']';
      break;
    case OpKind::Convert: os << '[' << dtype_name(out.dtype) << ']'; break;
    case OpKind::Compare: os << '[' << compare_dir_name(attrs.compare) << ']'; break;
    case OpKind::DotGeneral:
      os << "[batch=" << axes_string(attrs.dot.lhs_batch) << axes_string(attrs.dot.rhs_batch)
         << ", contract=" << axes_string(attrs.dot.lhs_contract) << axes_string(attrs.dot.rhs_contract)
         << ']';
      break;
    case OpKind::Constant:
      if (attrs.constant->numel() <= 4) {
        os << '[' << *attrs.constant << ']';
      } else {
        os << '[' << out.to_string() << ']';
      }
      break;
    case OpKind::Iota: os << '[' << out.to_string() << ", dim=" << attrs.dim << ']'; break;
    case OpKind::Zeros: os << '[' << out.to_string() << ']'; break;
    case OpKind::Add:
    case OpKind::Mul:
    case OpKind::Neg:
    case OpKind::Div:
    case OpKind::Conj:
    case OpKind::Real:
    case OpKind::Imag:
    case OpKind::Abs:
    case OpKind::Sign:
    case OpKind::Maximum:
    case OpKind::Minimum:
    case OpKind::Select:
    case OpKind::Clamp:
    case OpKind::Exp:
    case OpKind::Log:
    case OpKind::Sin:
    case OpKind::Cos:
    case OpKind::Tanh:
    case OpKind::Sqrt:
    case OpKind::Rsqrt:
    case OpKind::Pow:
    case OpKind::Expm1:
    case OpKind::Log1p: break;
  }
  return os.str();
}

namespace detail {

TensorType result_type(const StdTensorOp& op, std::span<const TensorType> t) {
  switch (op.kind) {
    case OpKind::Add: return ops::add(t[0], t[1]).out;
    case OpKind::Mul: return ops::mul(t[0], t[1]).out;
    case OpKind::Div: return ops::div(t[0], t[1]).out;
    case OpKind::Maximum: return ops::maximum(t[0], t[1]).out;
    case OpKind::Minimum: return ops::minimum(t[0], t[1]).out;
    case OpKind::Pow: return ops::pow(t[0], t[1]).out;
    case OpKind::Compare: return ops::compare(op.attrs.compare, t[0], t[1]).out;
    case OpKind::Select: return ops::select(t[0], t[1], t[2]).out;
    case OpKind::Clamp: return ops::clamp(t[0], t[1], t[2]).out;
    case OpKind::Neg:
    case OpKind::Conj:
    case OpKind::Real:
    case OpKind::Imag:
    case OpKind::Abs:
    case OpKind::Sign:
    case OpKind::Exp:
    case OpKind::Log:
    case OpKind::Sin:
    case OpKind::Cos:
    case OpKind::Tanh:
    case OpKind::Sqrt:
    case OpKind::Rsqrt:
    case OpKind::Expm1:
    case OpKind::Log1p: return ops::unary(op.kind, t[0]).out;
    case OpKind::DotGeneral: return ops::dot_general(t[0], t[1], op.attrs.dot).out;
    case OpKind::ReduceSum:
    case OpKind::ReduceProd:
    case OpKind::ReduceMax:
    case OpKind::ReduceMin: return ops::reduce(op.kind, t[0], op.attrs.axes).out;
    case OpKind::Transpose: return ops::transpose(t[0], op.attrs.axes).out;
    case OpKind::Reshape: return ops::reshape(t[0], op.out.shape).out;
    case OpKind::BroadcastInDim: return ops::broadcast_in_dim(t[0], op.out.shape, op.attrs.axes).out;
    case OpKind::Convert: return ops::convert(t[0], op.out.dtype).out;
    case OpKind::ExtractDiag: return ops::extract_diag(t[0], op.attrs.axes[0], op.attrs.axes[1]).out;
    case OpKind::EmbedDiag: return ops::embed_diag(t[0], op.attrs.axes[0], op.attrs.axes[1]).out;
    case OpKind::Constant:
    case OpKind::Iota:
    case OpKind::Zeros: return op.out;
  }
  return op.out;
}

void not_linear(const StdTensorOp& op, const char* why) {
  throw tidu::ADRuleError(op.name(), tidu::RuleKind::Transpose, why);
}

}  // namespace detail

void StdTensorOp::eval(ExecContext&, std::span<const Tensor* const> in, std::span<Tensor> out_values) const {
  // Operands bound at run time may not match the types the graph was traced with: re-derive the
  // result type from the actual operands and refuse a mismatch before any kernel reads memory.
  std::vector<TensorType> types;
  types.reserve(in.size());
  for (const Tensor* t : in) types.push_back(t->type());
  TensorType actual = detail::result_type(*this, types);
  if (actual != out) {
    throw ShapeError("eval " + name() + ": operands give result " + actual.to_string() +
                     ", but the op was built for " + out.to_string());
  }
  Tensor& result = out_values[0];
  switch (kind) {
    case OpKind::Add:
    case OpKind::Mul:
    case OpKind::Neg:
    case OpKind::Div:
    case OpKind::Conj:
    case OpKind::Real:
    case OpKind::Imag: result = detail::eval_arith(*this, in); return;
    case OpKind::Abs:
    case OpKind::Sign:
    case OpKind::Maximum:
    case OpKind::Minimum:
    case OpKind::Compare:
    case OpKind::Select:
    case OpKind::Clamp: result = detail::eval_minmax(*this, in); return;
    case OpKind::Exp:
    case OpKind::Log:
    case OpKind::Sin:
    case OpKind::Cos:
    case OpKind::Tanh:
    case OpKind::Sqrt:
    case OpKind::Rsqrt:
    case OpKind::Pow:
    case OpKind::Expm1:
    case OpKind::Log1p: result = detail::eval_analytic(*this, in); return;
    case OpKind::DotGeneral: result = detail::eval_dot(*this, in); return;
    case OpKind::ReduceSum:
    case OpKind::ReduceProd:
    case OpKind::ReduceMax:
    case OpKind::ReduceMin: result = detail::eval_reduce(*this, in); return;
    case OpKind::Transpose:
    case OpKind::Reshape:
    case OpKind::BroadcastInDim:
    case OpKind::Convert:
    case OpKind::ExtractDiag:
    case OpKind::EmbedDiag: result = detail::eval_structural(*this, in); return;
    case OpKind::Constant:
    case OpKind::Iota:
    case OpKind::Zeros: result = detail::eval_constant(*this); return;
  }
}

StdTensorOp StdTensorOp::add() { return StdTensorOp{}; }

StdTensorOp StdTensorOp::add_for(const TensorValueKey& like) {
  const TensorType& t = type_of(like);
  return ops::add(t, t);
}

TensorKey StdTensorOp::cotangent_key(const TensorValueKey& output, tidu::DiffPassId pass, std::size_t index) {
  return {"ct" + std::to_string(pass) + ":" + std::to_string(index), type_of(output)};
}

TensorKey StdTensorOp::residual_key(const TensorValueKey& value, std::size_t index) {
  return {"res:" + std::to_string(index), type_of(value)};
}

tidu::Tangents StdTensorOp::jvp_rule(tidu::PrimitiveBuilder<StdTensorOp>& b,
                                     std::span<const TensorValueKey> x, std::span<const TensorValueKey> y,
                                     std::span<const std::optional<tidu::LocalValueId>> t,
                                     TensorADContext&) const {
  const detail::JvpArgs a{b, x, y, t};
  switch (kind) {
    case OpKind::Add:
    case OpKind::Mul:
    case OpKind::Neg:
    case OpKind::Div:
    case OpKind::Conj:
    case OpKind::Real:
    case OpKind::Imag: return detail::jvp_arith(*this, a);
    case OpKind::Abs:
    case OpKind::Sign:
    case OpKind::Maximum:
    case OpKind::Minimum:
    case OpKind::Compare:
    case OpKind::Select:
    case OpKind::Clamp: return detail::jvp_minmax(*this, a);
    case OpKind::Exp:
    case OpKind::Log:
    case OpKind::Sin:
    case OpKind::Cos:
    case OpKind::Tanh:
    case OpKind::Sqrt:
    case OpKind::Rsqrt:
    case OpKind::Pow:
    case OpKind::Expm1:
    case OpKind::Log1p: return detail::jvp_analytic(*this, a);
    case OpKind::DotGeneral: return detail::jvp_dot(*this, a);
    case OpKind::ReduceSum:
    case OpKind::ReduceProd:
    case OpKind::ReduceMax:
    case OpKind::ReduceMin: return detail::jvp_reduce(*this, a);
    case OpKind::Transpose:
    case OpKind::Reshape:
    case OpKind::BroadcastInDim:
    case OpKind::Convert:
    case OpKind::ExtractDiag:
    case OpKind::EmbedDiag: return detail::jvp_structural(*this, a);
    case OpKind::Constant:
    case OpKind::Iota:
    case OpKind::Zeros: return {std::nullopt};  // no operands, so never active
  }
  throw tidu::ADRuleError::missing(name(), tidu::RuleKind::Jvp);
}

tidu::Tangents StdTensorOp::transpose_rule(tidu::PrimitiveBuilder<StdTensorOp>& b,
                                           std::span<const std::optional<tidu::LocalValueId>> ct,
                                           std::span<const tidu::PrimitiveValue<StdTensorOp>> x,
                                           const computegraph::OperationRole& role,
                                           TensorADContext&) const {
  const detail::TransposeArgs a{b, *ct[0], x, role};
  switch (kind) {
    case OpKind::Add:
    case OpKind::Mul:
    case OpKind::Neg:
    case OpKind::Div:
    case OpKind::Conj:
    case OpKind::Real:
    case OpKind::Imag: return detail::transpose_arith(*this, a);
    case OpKind::Select: return detail::transpose_minmax(*this, a);
    case OpKind::DotGeneral: return detail::transpose_dot(*this, a);
    case OpKind::ReduceSum:
    case OpKind::ReduceProd:
    case OpKind::ReduceMax:
    case OpKind::ReduceMin: return detail::transpose_reduce(*this, a);
    case OpKind::Transpose:
    case OpKind::Reshape:
    case OpKind::BroadcastInDim:
    case OpKind::Convert:
    case OpKind::ExtractDiag:
    case OpKind::EmbedDiag: return detail::transpose_structural(*this, a);
    case OpKind::Abs:
    case OpKind::Sign:
    case OpKind::Maximum:
    case OpKind::Minimum:
    case OpKind::Compare:
    case OpKind::Clamp:
    case OpKind::Exp:
    case OpKind::Log:
    case OpKind::Sin:
    case OpKind::Cos:
    case OpKind::Tanh:
    case OpKind::Sqrt:
    case OpKind::Rsqrt:
    case OpKind::Pow:
    case OpKind::Expm1:
    case OpKind::Log1p:
    case OpKind::Constant:
    case OpKind::Iota:
    case OpKind::Zeros: detail::not_linear(*this, "the op is not linear; only linear ops have a transpose rule");
  }
  throw tidu::ADRuleError::missing(name(), tidu::RuleKind::Transpose);
}

}  // namespace tenferro
