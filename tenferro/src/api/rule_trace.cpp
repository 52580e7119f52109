// RuleTrace (tenferro/ops/rule.hpp): AD rules written with traced operations, recorded straight
// into the graph the rule emits into.
#include "tenferro/ops/rule.hpp"

#include <algorithm>
#include <string>

namespace tenferro {

namespace {
/// The traces of finished rules, for reuse (per thread): linearize runs a rule for every op, and
/// a trace is not cheap to make. A trace comes back here only if no value of it outlived its rule.
thread_local std::vector<std::shared_ptr<TraceState>> idle_rule_traces;
constexpr std::size_t kIdleRuleTraces = 8;
}  // namespace

RuleTrace::RuleTrace(Builder& b) {
  if (!idle_rule_traces.empty()) {
    trace_ = std::move(idle_rule_traces.back());
    idle_rule_traces.pop_back();
  } else {
    trace_ = std::make_shared<TraceState>();
    trace_->rule = std::make_shared<detail::RuleTape>();
  }
  trace_->rule->builder = &b;
}

RuleTrace::~RuleTrace() {
  detail::RuleTape& tape = *trace_->rule;
  if (trace_.use_count() != 1) {
    // Values of the trace outlive the rule: they keep their keys (so their types stay valid) and
    // refuse to record (RuleTape::graph).
    for (detail::RuleTape::Entry& e : tape.entries) {
      e.value = e.operand();
      e.given = nullptr;
      e.kept.emplace(tape.builder->key_of(e.value));
    }
    tape.builder = nullptr;
    return;
  }
  tape.builder = nullptr;
  if (idle_rule_traces.size() >= kIdleRuleTraces) return;
  tape.entries.clear();
  idle_rule_traces.push_back(std::move(trace_));
}

namespace {
/// A value of the rule's trace standing for `value` of the rule's graph.
Traced bind_input(const std::shared_ptr<TraceState>& trace, RuleTrace::Value value, bool linear) {
  return Traced(trace, trace->rule->append(std::move(value), linear));
}
}  // namespace

Traced RuleTrace::fixed(const Value& v) { return bind_input(trace_, v, false); }
Traced RuleTrace::fixed(const TensorValueKey& key) { return Traced(trace_, trace_->rule->append_given(key)); }
Traced RuleTrace::linear(tidu::LocalValueId id) { return bind_input(trace_, Value::local(id), true); }
Traced RuleTrace::linear_or_zeros(const std::optional<tidu::LocalValueId>& id, const TensorType& type) {
  return id ? linear(*id) : zeros(type);
}

Traced RuleTrace::zeros(const TensorType& type) { return nullary(ops::zeros(type)); }
Traced RuleTrace::nullary(StdTensorOp op) { return Traced(trace_, detail::rule_record(*trace_, std::move(op), {})); }

bool RuleTrace::is_linear(const Traced& v) const { return trace_->rule->at(v.id()).linear; }
RuleTrace::Value RuleTrace::value(const Traced& v) const { return trace_->rule->at(v.id()).operand(); }

std::optional<tidu::LocalValueId> RuleTrace::result(const Traced& v, const StdTensorOp& op, tidu::RuleKind kind) const {
  if (v.trace() != trace_) {
    throw tidu::ADRuleError(op.name(), kind, "the rule returned a value that it did not compute from its arguments");
  }
  if (!is_linear(v)) return std::nullopt;
  return value(v).local_id();
}

tidu::Tangents RuleTrace::results(std::span<const Traced> vs, const StdTensorOp& op, tidu::RuleKind kind) const {
  tidu::Tangents r;
  r.reserve(vs.size());
  for (const Traced& v : vs) r.push_back(result(v, op, kind));
  return r;
}

std::optional<Traced> sum_present(const std::optional<Traced>& a, const std::optional<Traced>& b) {
  if (a && b) return *a + *b;
  return a ? a : b;
}

Traced conj_if_complex(const Traced& v) { return is_complex(v.dtype()) ? conj(v) : v; }

std::vector<TensorType> types_of(std::span<const Traced> values) {
  std::vector<TensorType> types;
  types.reserve(values.size());
  for (const Traced& v : values) types.push_back(v.type());
  return types;
}

JvpRule traced_unary_jvp(UnaryTracedJvp rule) {
  return [rule = std::move(rule)](const StdTensorOp& op, const JvpArgs& a) -> tidu::Tangents {
    RuleTrace tr(a.b);
    const Traced dy = rule(tr.fixed(a.x[0]), tr.fixed(a.y[0]), tr.linear_or_zeros(a.t[0], type_of(a.x[0])));
    if (dy.type() != op.output_type(0)) {
      throw tidu::ADRuleError(op.name(), tidu::RuleKind::Jvp, "the tangent has type " + dy.type().to_string() +
                                                                  "; expected the result's type " + op.output_type(0).to_string());
    }
    return {tr.result(dy, op, tidu::RuleKind::Jvp)};
  };
}

namespace detail {
namespace {
/// The role of an operation whose operand i is linear where bit i of `linear` is set (at most 64
/// operands: the common case, with no heap-allocated mask).
computegraph::OperationRole inferred_role(std::size_t operands, std::uint64_t linear) {
  if (linear == 0) return computegraph::OperationRole::primary();
  switch (operands) {  // the common arities
    case 1: return tidu::linear_role({true});
    case 2: return tidu::linear_role({(linear & 1) != 0, (linear & 2) != 0});
    case 3: return tidu::linear_role({(linear & 1) != 0, (linear & 2) != 0, (linear & 4) != 0});
    default: break;
  }
  std::vector<bool> mask(operands);
  for (std::size_t i = 0; i < operands; ++i) mask[i] = ((linear >> i) & 1) != 0;
  return tidu::linear_role(mask);
}

/// The same for any number of operands (region ops may have more than 64).
computegraph::OperationRole inferred_role(const std::vector<bool>& linear) {
  if (std::find(linear.begin(), linear.end(), true) == linear.end()) return computegraph::OperationRole::primary();
  return tidu::linear_role(linear);
}
}  // namespace

Traced::ValueId rule_record(TraceState& trace, StdTensorOp op, std::span<const Traced::ValueId> operands) {
  RuleTape& tape = *trace.rule;
  tidu::PrimitiveBuilder<StdTensorOp>& graph = tape.graph();
  if (operands.size() != op.input_count()) {
    throw Error("tenferro " + op.name() + ": " + std::to_string(operands.size()) + " operands given; expected " +
                std::to_string(op.input_count()));
  }
  std::vector<tidu::PrimitiveValue<StdTensorOp>> in;
  in.reserve(operands.size());
  std::uint64_t linear = 0;                                             // operands 0-63
  std::vector<bool> wide(operands.size() > 64 ? operands.size() : 0);  // all, past 64 operands
  for (std::size_t i = 0; i < operands.size(); ++i) {
    const RuleTape::Entry& e = tape.at(operands[i]);
    in.push_back(e.operand());
    if (!e.linear) continue;
    if (wide.empty()) {
      linear |= std::uint64_t{1} << i;
    } else {
      wide[i] = true;
    }
  }
  const auto role = wide.empty() ? inferred_role(operands.size(), linear) : inferred_role(wide);
  const bool any_linear = !role.is_primary();
  const Traced::ValueId first = static_cast<Traced::ValueId>(tape.entries.size());
  if (op.output_count() == 1) {
    tape.append(tidu::PrimitiveValue<StdTensorOp>::local(graph.add(std::move(op), std::move(in), role)), any_linear);
  } else {
    for (const tidu::LocalValueId v : graph.add_primitive(std::move(op), std::move(in), role)) {
      tape.append(tidu::PrimitiveValue<StdTensorOp>::local(v), any_linear);
    }
  }
  return first;
}

Traced::ValueId RuleTape::append(tidu::PrimitiveValue<StdTensorOp> value, bool is_linear) {
  const TensorType* type = &type_of(graph().key_of(value));
  entries.push_back(Entry{std::move(value), nullptr, type, is_linear, std::nullopt});
  return static_cast<Traced::ValueId>(entries.size() - 1);
}

Traced::ValueId RuleTape::append_given(const TensorValueKey& given) {
  graph();  // Error once the rule has returned
  entries.push_back(Entry{tidu::PrimitiveValue<StdTensorOp>::local(0), &given, &type_of(given), false, std::nullopt});
  return static_cast<Traced::ValueId>(entries.size() - 1);
}

tidu::PrimitiveBuilder<StdTensorOp>& RuleTape::graph() const {
  if (!builder) throw Error("tenferro: a value of an AD rule's trace was used after the rule returned");
  return *builder;
}

}  // namespace detail

}  // namespace tenferro
