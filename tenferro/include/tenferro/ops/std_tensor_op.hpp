#pragma once
// StdTensorOp: one application of an operation: its definition (ops/op_def.hpp: a built-in op or a
// registered one), its static attributes and its result types. Ops are typed: every descriptor
// carries the TensorType of each result, computed by the op's shape/dtype rule when it is made
// (make_op, ops/make.hpp), so the type of any value is an O(1) look-up (type_of) and shape errors
// surface when a program is traced, not when it runs.
//
// StdTensorOp satisfies computegraph::EvaluableGraphOperation and tidu::Primitive; every member
// reads the definition (src/ir/op_registry.cpp), so adding an op never touches this file.
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "computegraph/compiled_program.hpp"
#include "computegraph/value_key.hpp"
#include "tenferro/ops/builtin_attrs.hpp"
#include "tenferro/ops/op_def.hpp"
#include "tenferro/tensor.hpp"
#include "tidu/primitive.hpp"

namespace tenferro {

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

  const OpDef* def = &op_def(OpKind::Add);  // never null
  OpKind kind = OpKind::Add;                // def->kind (a dense id for the executor's switches)
  OpAttrs attrs;
  TensorType out;                           // the type of result 0
  std::vector<TensorType> more_outs;        // the types of results 1.. of a multi-output op

  /// The type of result `slot`.
  const TensorType& output_type(std::size_t slot) const { return slot == 0 ? out : more_outs[slot - 1]; }

  // computegraph::GraphOperation
  std::size_t input_count() const { return def->variadic_arity ? def->variadic_arity(attrs) : def->arity(); }
  std::size_t output_count() const { return def->outputs ? def->outputs : 1 + more_outs.size(); }
  /// The regions the op carries (control flow; computegraph/region.hpp), empty for most ops.
  std::vector<computegraph::GraphPtr<StdTensorOp>> regions() const {
    return def->regions ? def->regions(*this) : std::vector<computegraph::GraphPtr<StdTensorOp>>{};
  }
  bool operator==(const StdTensorOp& other) const {
    return def == other.def && out == other.out && more_outs == other.more_outs && attrs == other.attrs;
  }
  std::size_t hash() const;
  /// The op's name with its attributes, e.g. "reduce_sum[axes=[0]]"; deterministic.
  std::string name() const;
  /// Evaluates into out (one tensor per result); throws ShapeError/DTypeError if the operands do
  /// not match the op's static operand types.
  void eval(ExecContext& ctx, std::span<const Tensor* const> in, std::span<Tensor> out) const;
  /// The kernel alone, for callers that guarantee the operands have the types the op was built for
  /// (the executor: it checks a program's inputs, and every other operand is an op's result of its
  /// built type), so the per-op shape rule is not run again.
  void run_kernel(std::span<const Tensor* const> in, std::span<Tensor> out) const { def->kernel(*this, in, out); }
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

/// The static type of a value: its input key's type or its producer's result type. O(1).
inline const TensorType& type_of(const TensorValueKey& key) {
  return key.is_input() ? key.input_key().type : key.producer_op().output_type(key.output_slot());
}

/// Applies `def`'s shape rule to the operand types and returns the descriptor with its result
/// types. Throws Error if the operand count is wrong, ShapeError/DTypeError from the shape rule.
StdTensorOp make_op(const OpDef& def, std::span<const TensorType> operands, OpAttrs attrs = {});
StdTensorOp make_op(const OpDef& def, std::initializer_list<TensorType> operands, OpAttrs attrs = {});

}  // namespace tenferro

// The std::hash specialization is not part of the documented API (Doxygen skips it).
/// \cond
template <>
struct std::hash<tenferro::TensorKey> {
  std::size_t operator()(const tenferro::TensorKey& k) const noexcept {
    return std::hash<std::string>{}(k.name) ^ (k.type.hash() * 31);
  }
};
/// \endcond
