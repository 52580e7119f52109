// semiring_dot_general and semiring_dot_general_index: dot_general's contraction in a tropical
// semiring (tenferro/semiring.hpp). Order: attributes, shape/dtype rule, kernel, the JVP rule that
// refuses, definitions.
//
// Kernel: each operand is brought to canonical layout (lhs [batch, free, contract], rhs [batch,
// contract, free]) by one permuting copy when it is not already there, O(MK + KN) against the
// product's O(MKN); then one blocked tropical product per batch element (kernels/semiring_gemm.hpp),
// which writes the result in its final layout [batch, lhs free, rhs free].
#include <limits>

#include "ir/batching.hpp"
#include "ir/family.hpp"
#include "kernels/layout.hpp"
#include "kernels/semiring_gemm.hpp"
#include "tenferro/threads.hpp"
#include "tenferro/ops/make.hpp"
#include "tenferro/ops/record.hpp"
#include "tenferro/ops/semiring_attrs.hpp"

namespace tenferro {

const char* semiring_name(Semiring s) {
  switch (s) {
    case Semiring::Standard: return "standard";
    case Semiring::MaxPlus: return "max_plus";
    case Semiring::MinPlus: return "min_plus";
    case Semiring::MaxTimes: return "max_times";
  }
  return "?";
}

double semiring_zero(Semiring s) {
  switch (s) {
    case Semiring::MaxPlus: return -std::numeric_limits<double>::infinity();
    case Semiring::MinPlus: return std::numeric_limits<double>::infinity();
    case Semiring::Standard:
    case Semiring::MaxTimes: return 0.0;
  }
  return 0.0;
}

std::size_t SemiringDims::hash() const { return hash_mix(dims.hash(), static_cast<std::size_t>(semiring)); }
void SemiringDims::print(std::ostream& os) const {
  os << semiring_name(semiring) << ", ";
  dims.print(os);
}

namespace detail {
const SemiringGemm& semiring_gemm() {
  static const bool avx2 = __builtin_cpu_supports("avx2");
  return avx2 ? semiring_gemm_avx2() : semiring_gemm_sse2();
}
}  // namespace detail

// ---- shape/dtype rule --------------------------------------------------------------------------

namespace ops {

namespace {
StdTensorOp semiring_op(OpKind kind, const TensorType& a, const TensorType& b, Semiring semiring, DotDims dims) {
  const std::string& name = op_def(kind).name;
  if (semiring == Semiring::Standard) {
    throw ValueError(name + ": the standard semiring is dot_general's; expected max_plus, min_plus or max_times");
  }
  const TensorType out = dot_result_type(name, a, b, dims);
  detail::require_dtype(name.c_str(), a, a.dtype == DType::F32 || a.dtype == DType::F64,
                        "a real floating dtype (f32 or f64)");
  StdTensorOp op = detail::make(kind, out, OpAttrs(SemiringDims{semiring, std::move(dims)}));
  if (kind == OpKind::SemiringDotIndex) op.more_outs.push_back(TensorType{DType::I64, out.shape});
  return op;
}
}  // namespace

StdTensorOp semiring_dot_general(const TensorType& a, const TensorType& b, Semiring semiring, DotDims dims) {
  return semiring_op(OpKind::SemiringDot, a, b, semiring, std::move(dims));
}
StdTensorOp semiring_dot_general_index(const TensorType& a, const TensorType& b, Semiring semiring, DotDims dims) {
  return semiring_op(OpKind::SemiringDotIndex, a, b, semiring, std::move(dims));
}

}  // namespace ops

// ---- kernel ------------------------------------------------------------------------------------

namespace detail {
namespace {

/// `t` with its axes in the order `perm`, without a copy when that is already its order.
Tensor in_order(const Tensor& t, const Axes& perm) {
  for (std::size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] != static_cast<std::int64_t>(i)) return permuted(t, perm);
  }
  return t;
}

std::int64_t product_of(const Shape& shape, const Axes& axes) {
  std::int64_t n = 1;
  for (auto k : axes) n *= shape[static_cast<std::size_t>(k)];
  return n;
}

void eval_semiring_dot(const StdTensorOp& op, Operands in, std::span<Tensor> out) {
  const auto& attrs = op.attrs.get<SemiringDims>();
  const DotDims& d = attrs.dims;
  const Tensor& a = *in[0];
  const Tensor& b = *in[1];
  auto concat = [](Axes x, const Axes& y) {
    x.insert(x.end(), y.begin(), y.end());
    return x;
  };
  const Axes a_free = complement_axes(concat(d.lhs_batch, d.lhs_contract), static_cast<std::int64_t>(a.rank()));
  const Axes b_free = complement_axes(concat(d.rhs_batch, d.rhs_contract), static_cast<std::int64_t>(b.rank()));
  const Tensor ac = in_order(a, concat(concat(d.lhs_batch, a_free), d.lhs_contract));
  const Tensor bc = in_order(b, concat(concat(d.rhs_batch, d.rhs_contract), b_free));
  const std::int64_t batch = product_of(a.shape(), d.lhs_batch), m = product_of(a.shape(), a_free),
                     k = product_of(a.shape(), d.lhs_contract), n = product_of(b.shape(), b_free);
  Tensor c = Tensor::uninitialized(op.out);
  Tensor index;
  const bool with_index = op.kind == OpKind::SemiringDotIndex;
  if (with_index) index = Tensor::uninitialized(op.output_type(1));
  // Threads for products big enough to repay waking them.
  const int threads = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) > 1 << 16 ? num_threads() : 1;
  const SemiringGemm& gemm = semiring_gemm();
  for (std::int64_t t = 0; t < batch; ++t) {
    std::int64_t* idx = with_index ? index.data<std::int64_t>() + t * m * n : nullptr;
    if (a.dtype() == DType::F64) {
      gemm.f64(attrs.semiring, ac.data<double>() + t * m * k, bc.data<double>() + t * k * n,
               c.data<double>() + t * m * n, idx, m, n, k, threads);
    } else {
      gemm.f32(attrs.semiring, ac.data<float>() + t * m * k, bc.data<float>() + t * k * n,
               c.data<float>() + t * m * n, idx, m, n, k, threads);
    }
  }
  out[0] = std::move(c);
  if (with_index) out[1] = std::move(index);
}

/// Semiring algebra has no derivative by design: only the standard algebra is differentiable
/// (docs/design.md, "Custom algebra").
Tangents refuse_jvp(const StdTensorOp& op, const JvpArgs&) {
  throw tidu::ADRuleError(op.name(), tidu::RuleKind::Jvp,
                          std::string(semiring_name(op.attrs.get<SemiringDims>().semiring)) +
                              " algebra is not differentiable (custom semiring algebra has no AD); "
                              "differentiate a dot_general or einsum in the standard algebra instead");
}

std::vector<TensorType> semiring_types(Types t, const OpAttrs& attrs, OpKind kind) {
  const auto& s = attrs.get<SemiringDims>();
  StdTensorOp op = kind == OpKind::SemiringDot ? ops::semiring_dot_general(t[0], t[1], s.semiring, s.dims)
                                               : ops::semiring_dot_general_index(t[0], t[1], s.semiring, s.dims);
  std::vector<TensorType> types{op.out};
  if (kind == OpKind::SemiringDotIndex) types.push_back(op.output_type(1));
  return types;
}

/// vmap: the contraction kit's rule (ir/batching.hpp), in the op's own semiring.
std::vector<BatchedValue> batch_semiring_dot(const StdTensorOp& op, std::span<const BatchedValue> x, std::int64_t) {
  const auto& s = op.attrs.get<SemiringDims>();
  const OpKind kind = op.kind;
  return batch_contraction(x, s.dims, [&s, kind](const Traced& a, const Traced& b, DotDims e) {
    StdTensorOp product = kind == OpKind::SemiringDot ? ops::semiring_dot_general(a.type(), b.type(), s.semiring, std::move(e))
                                                      : ops::semiring_dot_general_index(a.type(), b.type(), s.semiring, std::move(e));
    const Traced operands[] = {a, b};
    return apply_outputs(std::move(product), operands);
  });
}

}  // namespace

// ---- definitions -------------------------------------------------------------------------------

// The operands are Nonlinear, not NonDifferentiable: a tangent reaching them must meet the refusing
// JVP rule (an ADRuleError), never a silent zero derivative.
const OpDef& def_SemiringDot() {
  static const OpDef d{
      .name = "semiring_dot_general", .kind = OpKind::SemiringDot, .operands = {kNonlinear, kNonlinear},
      .shape_rule = [](Types t, const OpAttrs& a) { return semiring_types(t, a, OpKind::SemiringDot); },
      .kernel = eval_semiring_dot, .jvp = refuse_jvp, .batch = batch_semiring_dot};
  return d;
}
const OpDef& def_SemiringDotIndex() {
  static const OpDef d{
      .name = "semiring_dot_general_index", .kind = OpKind::SemiringDotIndex, .operands = {kNonlinear, kNonlinear},
      .outputs = 2,
      .shape_rule = [](Types t, const OpAttrs& a) { return semiring_types(t, a, OpKind::SemiringDotIndex); },
      .kernel = eval_semiring_dot, .jvp = refuse_jvp, .batch = batch_semiring_dot};
  return d;
}

}  // namespace detail
}  // namespace tenferro
