#pragma once
// Internal: the interface between dispatch.cpp and the op-family files. Each family file holds,
// in order, its shape/dtype rules (the ops:: factories), kernels, JVP rules and transpose rules.
#include <initializer_list>
#include <optional>
#include <span>
#include <string>

#include "tenferro/ops/make.hpp"
#include "tenferro/ops/std_tensor_op.hpp"

namespace tenferro::detail {

using Builder = tidu::PrimitiveBuilder<StdTensorOp>;
using PV = tidu::PrimitiveValue<StdTensorOp>;
using tidu::LocalValueId;
using tidu::Tangents;
using Operands = std::span<const Tensor* const>;

/// What a JVP rule sees: primal operand and result keys, and the operand tangents.
struct JvpArgs {
  Builder& b;
  std::span<const TensorValueKey> x;
  std::span<const TensorValueKey> y;
  std::span<const std::optional<LocalValueId>> t;
};

/// What a transpose rule sees: the result cotangent, the operands (External), the role.
struct TransposeArgs {
  Builder& b;
  LocalValueId ct;
  std::span<const PV> x;
  const computegraph::OperationRole& role;
};

// Family entry points (one family per file).
Tensor eval_arith(const StdTensorOp& op, Operands in);        // arith.cpp
Tangents jvp_arith(const StdTensorOp& op, const JvpArgs& a);
Tangents transpose_arith(const StdTensorOp& op, const TransposeArgs& a);

// minmax_select.cpp: abs sign maximum minimum compare select clamp
Tensor eval_minmax(const StdTensorOp& op, Operands in);
Tangents jvp_minmax(const StdTensorOp& op, const JvpArgs& a);
Tangents transpose_minmax(const StdTensorOp& op, const TransposeArgs& a);  // select's branches

Tensor eval_analytic(const StdTensorOp& op, Operands in);     // analytic.cpp
Tangents jvp_analytic(const StdTensorOp& op, const JvpArgs& a);

Tensor eval_dot(const StdTensorOp& op, Operands in);          // dot_general.cpp
Tangents jvp_dot(const StdTensorOp& op, const JvpArgs& a);
Tangents transpose_dot(const StdTensorOp& op, const TransposeArgs& a);

Tensor eval_reduce(const StdTensorOp& op, Operands in);       // reduce.cpp
Tangents jvp_reduce(const StdTensorOp& op, const JvpArgs& a);
Tangents transpose_reduce(const StdTensorOp& op, const TransposeArgs& a);

Tensor eval_structural(const StdTensorOp& op, Operands in);   // structural.cpp
Tangents jvp_structural(const StdTensorOp& op, const JvpArgs& a);
Tangents transpose_structural(const StdTensorOp& op, const TransposeArgs& a);

Tensor eval_constant(const StdTensorOp& op);                  // constants.cpp

// Shape-rule helpers shared by the family files (defined in arith.cpp).
/// "f64[2], f32[3]": operand types for error messages.
std::string types_string(std::initializer_list<const TensorType*> types);
/// Throws ShapeError/DTypeError naming `op` unless a and b have one shape and one dtype.
void require_same_type(const char* op, const TensorType& a, const TensorType& b);
/// Throws DTypeError naming `op`, a's type and `expected` unless `ok`.
void require_dtype(const char* op, const TensorType& a, bool ok, const char* expected);
/// A descriptor of `kind` with result type `out` and attributes `attrs`.
StdTensorOp make(OpKind kind, TensorType out, OpAttrs attrs = {});

/// The result type the op's shape rule gives for these operand types (throws if they do not fit).
TensorType result_type(const StdTensorOp& op, std::span<const TensorType> operands);

/// The standard error of a transpose rule called on an op (or operand) that is not linear.
[[noreturn]] void not_linear(const StdTensorOp& op, const char* why);

}  // namespace tenferro::detail
