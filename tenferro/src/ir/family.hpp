#pragma once
// Internal: what the op-family files share. Each family file holds, per op: its shape/dtype rule
// (the ops:: factory), kernel, JVP rule and transpose rule, and the op's definition (OpDef) that
// gathers them; op_registry.cpp reads the definitions and nothing else.
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tenferro/ops/make.hpp"
#include "tenferro/ops/std_tensor_op.hpp"

namespace tenferro::detail {

using Builder = tidu::PrimitiveBuilder<StdTensorOp>;
using PV = tidu::PrimitiveValue<StdTensorOp>;
using tidu::LocalValueId;
using tidu::Tangents;
using Operands = std::span<const Tensor* const>;
using Types = std::span<const TensorType>;

// The definitions of the built-in ops, one function per line of TENFERRO_BUILTIN_OPS, each in its
// family's file (a function-local static, so definitions are built on first use, in any order).
#define TENFERRO_DECLARE_DEF(name) const OpDef& def_##name();
TENFERRO_BUILTIN_OPS(TENFERRO_DECLARE_DEF)
#undef TENFERRO_DECLARE_DEF

inline constexpr Linearity kLinear = Linearity::Linear;
inline constexpr Linearity kBilinear = Linearity::Bilinear;
inline constexpr Linearity kNonlinear = Linearity::Nonlinear;
inline constexpr Linearity kNoGrad = Linearity::NonDifferentiable;

/// A kernel from a function that returns the op's single result.
Kernel single_result(Tensor (*f)(const StdTensorOp&, Operands));
/// A shape rule from a factory-style function of the operand types and attributes.
ShapeRule single_type(TensorType (*f)(Types, const OpAttrs&));

// Shape-rule helpers shared by the family files (defined in arith.cpp).
/// "f64[2], f32[3]": operand types for error messages.
std::string types_string(std::initializer_list<const TensorType*> types);
/// Throws ShapeError/DTypeError naming `op` unless a and b have one shape and one dtype.
void require_same_type(const char* op, const TensorType& a, const TensorType& b);
/// Throws DTypeError naming `op`, a's type and `expected` unless `ok`.
void require_dtype(const char* op, const TensorType& a, bool ok, const char* expected);
/// A descriptor of built-in `kind` with result type `out` and attributes `attrs` (the caller has
/// applied the shape rule).
StdTensorOp make(OpKind kind, TensorType out, OpAttrs attrs = {});

/// "f32, f64": the dtypes `f` covers, for error messages.
std::string covered_dtypes(const ElementFormula& f);
/// The reference kernel of an op given by a formula: the formula mapped over the elements.
Kernel formula_kernel(const ElementFormula& f);
/// The definition of an elementwise op given by its formula (one or two operands, one result of
/// the operands' type): shape rule ops::unary / ops::binary (which admit the dtypes the formula
/// covers), kernel from the formula, the JVP rule (empty if no operand is differentiable), where
/// tests draw its operands (OpDef::domain) and where it is not smooth (OpDef::discontinuity,
/// OpDef::branch_cut).
OpDef formula_op(const char* name, OpKind kind, std::vector<Linearity> operands, ElementFormula formula,
                 JvpRule jvp, Domain domain = Domain::Any, Discontinuity discontinuity = Discontinuity::None,
                 std::optional<BranchCut> branch_cut = std::nullopt);

/// The branch cuts of the complex functions (OpDef::branch_cut): the real axis left of 0 (log,
/// sqrt), of -1 (log1p) and of 1 (acosh), the real axis outside [-1, 1] (asin, acos, atanh) and
/// the imaginary axis outside [-i, i] (atan, asinh).
inline constexpr BranchCut kCutLeftOfZero{false, 0.0};
inline constexpr BranchCut kCutLeftOfMinusOne{false, -1.0};
inline constexpr BranchCut kCutLeftOfOne{false, 1.0};
inline constexpr BranchCut kCutOutsideUnit{false, -1.0, 1.0};
inline constexpr BranchCut kCutOutsideUnitImaginary{true, -1.0, 1.0};

/// The standard error of a transpose rule called on an op (or operand) that is not linear.
[[noreturn]] void not_linear(const StdTensorOp& op, const char* why);

}  // namespace tenferro::detail

namespace tenferro::ops {
/// dot_general's shape/dtype rule, its errors naming `name` (dot_general, semiring_dot_general).
TensorType dot_result_type(const std::string& name, const TensorType& a, const TensorType& b, const DotDims& dims);
}  // namespace tenferro::ops
