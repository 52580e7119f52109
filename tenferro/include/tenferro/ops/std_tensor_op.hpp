#pragma once
// StdTensorOp: one application descriptor of the closed primitive set (op_kind.hpp) plus its static
// attributes and result type. Ops are typed: every descriptor carries the TensorType of its result,
// computed by the op's shape/dtype rule when it is made (ops/make.hpp), so the type of any value is
// an O(1) look-up (type_of) and shape errors surface when a program is traced, not when it runs.
//
// StdTensorOp satisfies computegraph::EvaluableGraphOperation and tidu::Primitive. Rules, kernels and
// shape rules live in one source file per op family (src/ops/*.cpp); dispatch.cpp switches over
// OpKind with -Wswitch-enum, so an op without a kernel or rule is a build error.
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "computegraph/compiled_program.hpp"
#include "computegraph/value_key.hpp"
#include "tenferro/ops/op_kind.hpp"
#include "tenferro/tensor.hpp"
#include "tidu/primitive.hpp"

namespace tenferro {

/// Dimension numbers of dot_general (StableHLO's): batch dims pair up one to one, contracting
/// dims pair up and are summed. Result dims: batch, then lhs free dims, then rhs free dims.
struct DotDims {
  std::vector<std::int64_t> lhs_batch, rhs_batch, lhs_contract, rhs_contract;
  bool operator==(const DotDims&) const = default;
};

/// Static attributes; each op reads only its own (the rest stay default, so equality is exact).
struct OpAttrs {
  /// reduce_*: reduced axes (sorted); transpose: permutation; broadcast_in_dim: for each operand
  /// axis, the result axis it maps to; extract_diag/embed_diag: the two diagonal axes.
  std::vector<std::int64_t> axes;
  DotDims dot;
  CompareDir compare = CompareDir::Eq;
  std::int64_t dim = 0;                     // iota: the counting dimension
  std::shared_ptr<const Tensor> constant;   // constant: the value (compared by content)
  bool operator==(const OpAttrs& other) const;
};

/// Graph input identity: a name plus the input's static type. Names of user inputs must not
/// contain ':' (reserved: "t<pass>:<name>" tangents, "ct<pass>:<index>" cotangent seeds,
/// "res:<index>" residual inputs of split programs).
struct TensorKey {
  std::string name;
  TensorType type;
  TensorKey tangent_of(tidu::DiffPassId pass) const {
    return {"t" + std::to_string(pass) + ":" + name, type};
  }
  bool operator==(const TensorKey&) const = default;
};
std::ostream& operator<<(std::ostream& os, const TensorKey& key);

/// Run-time settings of an evaluation.
struct ExecContext {};

/// Shared state of the rules of one transform (none needed: types are in the ops).
struct TensorADContext {};

struct StdTensorOp {
  using Operand = Tensor;
  using Context = ExecContext;
  using InputKey = TensorKey;
  using ADContext = TensorADContext;

  OpKind kind = OpKind::Add;
  OpAttrs attrs;
  TensorType out;  // the result type

  // computegraph::GraphOperation
  std::size_t input_count() const { return op_info(kind).arity; }
  std::size_t output_count() const { return 1; }
  bool operator==(const StdTensorOp& other) const {
    return kind == other.kind && out == other.out && attrs == other.attrs;
  }
  std::size_t hash() const;
  /// The op's name with its attributes, e.g. "reduce_sum[axes=[0]]"; deterministic.
  std::string name() const;
  /// Evaluates into out[0]; throws ShapeError/DTypeError if the operands do not match the op's
  /// static operand types.
  void eval(ExecContext& ctx, std::span<const Tensor* const> in, std::span<Tensor> out) const;
  /// Runs a compiled program through tenferro's executor (fused kernels, buffer pool, threads;
  /// exec_options.hpp); generic code reaches it through computegraph::run_compiled.
  static std::vector<Tensor> run_compiled(const computegraph::CompiledProgram<StdTensorOp>& program,
                                          std::span<const Tensor> inputs);

  // tidu::Primitive
  /// An untyped `add` for the Primitive concept; tidu accumulates with add_for(key) instead.
  static StdTensorOp add();
  /// The `add` of two values of `like`'s type (cotangent accumulation).
  static StdTensorOp add_for(const computegraph::ValueKey<StdTensorOp>& like);
  tidu::Tangents jvp_rule(tidu::PrimitiveBuilder<StdTensorOp>& b,
                          std::span<const computegraph::ValueKey<StdTensorOp>> primal_in,
                          std::span<const computegraph::ValueKey<StdTensorOp>> primal_out,
                          std::span<const std::optional<tidu::LocalValueId>> tangent_in,
                          TensorADContext& ctx) const;
  tidu::Tangents transpose_rule(tidu::PrimitiveBuilder<StdTensorOp>& b,
                                std::span<const std::optional<tidu::LocalValueId>> cotangent_out,
                                std::span<const tidu::PrimitiveValue<StdTensorOp>> inputs,
                                const computegraph::OperationRole& role, TensorADContext& ctx) const;
  /// Integer and bool inputs never carry tangents (tidu::Transforms skips them).
  static bool is_differentiable(const TensorKey& key) { return is_inexact(key.type.dtype); }
  static TensorKey cotangent_key(const computegraph::ValueKey<StdTensorOp>& output,
                                 tidu::DiffPassId pass, std::size_t index);
  // tidu::ResidualKeyed: "res:<index>" with the value's type (split Jacobian/Hessian programs).
  static TensorKey residual_key(const computegraph::ValueKey<StdTensorOp>& value, std::size_t index);
};

using TensorValueKey = computegraph::ValueKey<StdTensorOp>;

/// The static type of a value: its input key's type or its producer's result type. O(1).
inline const TensorType& type_of(const TensorValueKey& key) {
  return key.is_input() ? key.input_key().type : key.producer_op().out;
}

}  // namespace tenferro

template <>
struct std::hash<tenferro::TensorKey> {
  std::size_t operator()(const tenferro::TensorKey& k) const noexcept {
    return std::hash<std::string>{}(k.name) ^ (k.type.hash() * 31);
  }
};
