#pragma once
// Writing AD rules with traced operations, the same way for built-in ops and custom ops
// (docs/tenferro.md, "Writing a rule"). Every built-in rule is written this way.
//
// A rule receives values of the graph that linearize (or linear_transpose) is building: fixed
// ones (the op's operands and results, and what is computed from them alone) and linear ones (the
// tangents of a JVP rule, the cotangents of a transpose rule). A RuleTrace stands each of them in
// as a Traced value, and every traced operation on them (tenferro/traced.hpp, math.hpp, linalg.hpp,
// einsum, control flow: the whole API) is recorded straight into that graph with its role
// inferred: an operation on fixed values only is a fixed value (a primal op); one with a linear
// operand is linear in exactly its linear operands. A rule thus reads like its formula,
//
//     Traced dy = dx / sqrt(1.0 - x * x);     // asin's JVP
//
// and the emitted graph is linear in the tangents by construction. An operation applied to two
// linear values where it is linear in only one (the product of two tangents) is a rule bug, which
// linear_transpose reports as an ADRuleError.
//
// Order: C++ leaves unspecified which operand of + or * (or of a call) is evaluated first. Where
// both operands record operations, name one first (`Traced a2 = a * a; a2 + b * b`), so that the
// graph's order, and so its printed IR, is the same with every compiler.
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "tenferro/ops/op_def.hpp"
#include "tenferro/ops/record.hpp"

namespace tenferro {

class RuleTrace {
 public:
  using Builder = tidu::PrimitiveBuilder<StdTensorOp>;
  using Value = tidu::PrimitiveValue<StdTensorOp>;

  /// A trace recording into `b` (JvpArgs::b, TransposeArgs::b), which must outlive it.
  explicit RuleTrace(Builder& b);
  ~RuleTrace();
  RuleTrace(const RuleTrace&) = delete;
  RuleTrace& operator=(const RuleTrace&) = delete;

  /// A fixed value of the graph: a primal operand or result (Value::external(key)) or a value
  /// the rule emitted.
  Traced fixed(const Value& v);
  /// A primal operand or result by its key (JvpArgs::x, JvpArgs::y), which must outlive the rule
  /// (the trace refers to it rather than copying it).
  Traced fixed(const TensorValueKey& key);
  /// A linear value: a tangent or cotangent the rule was given (JvpArgs::t, TransposeArgs::cts).
  Traced linear(tidu::LocalValueId id);
  /// A fixed zero of `type` (the zeros op, which the executor knows to be all zeros).
  Traced zeros(const TensorType& type);
  /// `op`, an op without operands (zeros, iota, a constant), recorded as a fixed value.
  Traced nullary(StdTensorOp op);
  /// The given tangent or cotangent, or a fixed zero of `type` where none flows (nullopt).
  Traced linear_or_zeros(const std::optional<tidu::LocalValueId>& id, const TensorType& type);

  /// Whether `v` (of this trace) depends on a linear value.
  bool is_linear(const Traced& v) const;
  /// The graph value that `v` (of this trace) was recorded as.
  Value value(const Traced& v) const;
  /// What a rule returns for `v`: its id in the graph if `v` is linear, nullopt if it is fixed
  /// (it does not depend on the tangents: a zero). Throws ADRuleError naming `op` and `kind` if
  /// `v` belongs to another trace.
  std::optional<tidu::LocalValueId> result(const Traced& v, const StdTensorOp& op, tidu::RuleKind kind) const;
  /// result() of `v` where present, nullopt where not.
  std::optional<tidu::LocalValueId> result(const std::optional<Traced>& v, const StdTensorOp& op, tidu::RuleKind kind) const {
    return v ? result(*v, op, kind) : std::nullopt;
  }
  /// result() of each value of `vs`.
  tidu::Tangents results(std::span<const Traced> vs, const StdTensorOp& op, tidu::RuleKind kind) const;

  const std::shared_ptr<TraceState>& trace() const { return trace_; }

 private:
  std::shared_ptr<TraceState> trace_;
};

/// a + b where both are present, else the one present (nullopt if neither): the sum of a rule's
/// terms, one per operand that has a tangent.
std::optional<Traced> sum_present(const std::optional<Traced>& a, const std::optional<Traced>& b);

/// conj(v) where v is complex; v itself, with no operation recorded, where it is real.
Traced conj_if_complex(const Traced& v);

/// The types of `values`: the operand types of an op a rule records with apply_outputs (a
/// control-flow op's derived loop or branch).
std::vector<TensorType> types_of(std::span<const Traced> values);

/// The JVP rule of a one-operand, one-result op y = f(x) from `rule(x, y, dx)`, which returns
/// f'(x) dx (the op's operand, its result and the operand's tangent, in a RuleTrace).
using UnaryTracedJvp = std::function<Traced(const Traced& x, const Traced& y, const Traced& dx)>;
JvpRule traced_unary_jvp(UnaryTracedJvp rule);

namespace detail {
/// A rule's trace (TraceState::rule): the graph the rule records into and, per value of the trace
/// (its id indexes `entries`), what the value is there, its type and whether it is linear. A
/// rule's trace records nothing into its own builder.
struct RuleTape {
  /// A value of the trace: what it is in the rule's graph, its type (in the value's interned key,
  /// which the rule's graph holds: the reference survives the growth of `entries`) and whether it
  /// is linear. `kept` holds that key once the rule has returned while values of its trace live
  /// on (RuleTrace's destructor), so that their types stay valid.
  struct Entry {
    tidu::PrimitiveValue<StdTensorOp> value;
    /// Set where the value is a key the rule was given (RuleTrace::fixed(key)); `value` is then
    /// unused until the rule returns.
    const TensorValueKey* given;
    const TensorType* type;
    bool linear;
    std::optional<TensorValueKey> kept;
    tidu::PrimitiveValue<StdTensorOp> operand() const {
      return given ? tidu::PrimitiveValue<StdTensorOp>::external(*given) : value;
    }
  };
  /// Null once the rule has returned.
  tidu::PrimitiveBuilder<StdTensorOp>* builder = nullptr;
  std::vector<Entry> entries;
  /// Adds a value of the trace standing for `value` (or for the key `*given`); returns its id.
  Traced::ValueId append(tidu::PrimitiveValue<StdTensorOp> value, bool is_linear);
  Traced::ValueId append_given(const TensorValueKey& given);
  const Entry& at(Traced::ValueId id) const { return entries.at(id); }
  /// The rule's graph; Error if the rule has returned.
  tidu::PrimitiveBuilder<StdTensorOp>& graph() const;
};
/// Records `op` on the trace values `operands` into the rule's graph (role inferred, see
/// RuleTrace) and returns the id of its first result (the others follow). Called by the one place
/// that records traced operations (src/api/traced.cpp) for every operation of a rule's trace.
Traced::ValueId rule_record(TraceState& trace, StdTensorOp op, std::span<const Traced::ValueId> operands);
}  // namespace detail

}  // namespace tenferro
