#pragma once
// User-defined operations and derivatives.
//
// 1. Custom primitives. An op outside the built-in set is an OpDef (ops/op_def.hpp) registered with
//    register_op: a name, the linearity of each operand, the output count, a shape rule and a CPU
//    kernel, and either
//    - a JVP rule (the op's derivative; reverse mode comes from transposing it, so one rule serves
//      both modes), written with traced operations through traced_jvp; or
//    - for an op linear in some operands, a transpose rule (traced_transpose), its JVP being the
//      op itself applied to the tangents (linear_jvp).
//    Apply it in traced code with call(def, operands, attrs). It prints under its own name, its
//    identity includes its attributes (OpAttrs holds any type with ==, hash() and print()), and a
//    missing rule is an ADRuleError naming it.
// 2. custom_jvp: a traced function whose derivative is replaced by a rule (a numerically stable
//    one, say); its value is the function's and reverse mode comes from transposing the rule.
// 3. stop_gradient (traced.hpp) detaches a value from differentiation.
//
// Traced rules run at each use, on the types at hand, in a RuleTrace (ops/rule.hpp), which records
// their operations straight into the transform's graph: the operations that depend on the tangents
// (or cotangents) become its linear operations, the others fixed values of the primal. A rule must
// therefore be linear in the tangents; a result tangent that does not depend on them is taken as
// zero. The built-in ops write their rules the same way.
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tenferro/ops/op_def.hpp"
#include "tenferro/ops/record.hpp"
#include "tenferro/traced.hpp"

namespace tenferro {

/// A JVP rule in traced operations: the op, its operands, its results and one tangent per operand
/// (zeros of the operand's type where it has none); returns one tangent per result, of the
/// result's type.
using TracedJvp = std::function<std::vector<Traced>(const StdTensorOp& op, std::span<const Traced> primals,
                                                    std::span<const Traced> results,
                                                    std::span<const Traced> tangents)>;

/// A transpose rule in traced operations, for an op linear in its active operands: `fixed[i]` is
/// operand i where it is fixed and nullopt where it is active (its value is not available), and
/// `cotangents` holds one per result (zeros where none flows). Returns one cotangent per operand,
/// of the operand's type, for the active ones (entries of fixed operands are ignored).
using TracedTranspose = std::function<std::vector<std::optional<Traced>>(
    const StdTensorOp& op, std::span<const std::optional<Traced>> fixed, std::span<const Traced> cotangents)>;

/// The OpDef rules from traced rules.
JvpRule traced_jvp(TracedJvp rule);
TransposeRule traced_transpose(TracedTranspose rule);
/// The JVP of an op linear in all its differentiable operands: the op itself applied to the
/// tangents (zeros for absent ones), with the primal values of the NonDifferentiable operands.
JvpRule linear_jvp();

/// Applies op `def` with attributes `attrs` to traced operands; returns its results.
std::vector<Traced> call(const OpDef& def, std::span<const Traced> operands, OpAttrs attrs = {});
std::vector<Traced> call(const OpDef& def, std::initializer_list<Traced> operands, OpAttrs attrs = {});

/// A traced function with a custom derivative.
///   CustomJvp f("safe_norm", value_fn, rule);   // value_fn(args) -> results
///   std::vector<Traced> y = f({x});             // inside any traced function
/// `rule(primals, tangents)` returns one tangent per result, linear in the tangents. The function
/// runs as one op (named `name`, which must be unique in the process) whose kernel executes the
/// function's compiled program; every call with the same argument count and result count shares it.
class CustomJvp {
 public:
  using Function = std::function<std::vector<Traced>(std::span<const Traced> args)>;
  using Rule = std::function<std::vector<Traced>(std::span<const Traced> primals, std::span<const Traced> tangents)>;

  CustomJvp(std::string name, Function f, Rule rule);
  std::vector<Traced> operator()(std::span<const Traced> args) const;
  std::vector<Traced> operator()(std::initializer_list<Traced> args) const {
    return (*this)(std::span<const Traced>(args.begin(), args.size()));
  }

  struct State;  // the function, the rule and the op definition (custom_op.cpp)

 private:
  std::shared_ptr<State> state_;
};

}  // namespace tenferro
