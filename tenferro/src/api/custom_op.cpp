// Custom primitives and derivatives (tenferro/custom_op.hpp): traced rules (recorded through a
// RuleTrace, tenferro/ops/rule.hpp), call(), and CustomJvp.
#include "tenferro/custom_op.hpp"
#include "tenferro/ops/rule.hpp"

#include <mutex>
#include <sstream>

#include "tenferro/transforms.hpp"

namespace tenferro {

namespace {

[[noreturn]] void rule_error(const StdTensorOp& op, tidu::RuleKind kind, const std::string& why) {
  throw tidu::ADRuleError(op.name(), kind, why);
}

}  // namespace

JvpRule traced_jvp(TracedJvp rule) {
  return [rule = std::move(rule)](const StdTensorOp& op, const JvpArgs& a) -> tidu::Tangents {
    RuleTrace tr(a.b);
    std::vector<Traced> primals, results, tangents;
    for (const auto& x : a.x) primals.push_back(tr.fixed(x));
    for (const auto& y : a.y) results.push_back(tr.fixed(y));
    for (std::size_t i = 0; i < a.x.size(); ++i) tangents.push_back(tr.linear_or_zeros(a.t[i], type_of(a.x[i])));
    const std::vector<Traced> out = rule(op, primals, results, tangents);
    if (out.size() != op.output_count()) {
      rule_error(op, tidu::RuleKind::Jvp, "the rule returned " + std::to_string(out.size()) + " tangents; the op has " +
                                              std::to_string(op.output_count()) + " results");
    }
    for (std::size_t j = 0; j < out.size(); ++j) {
      if (out[j].type() != op.output_type(j)) {
        rule_error(op, tidu::RuleKind::Jvp, "tangent " + std::to_string(j) + " has type " + out[j].type().to_string() +
                                                "; expected the result's type " + op.output_type(j).to_string());
      }
    }
    return tr.results(out, op, tidu::RuleKind::Jvp);
  };
}

TransposeRule traced_transpose(TracedTranspose rule) {
  return [rule = std::move(rule)](const StdTensorOp& op, const TransposeArgs& a) -> tidu::Tangents {
    RuleTrace tr(a.b);
    std::vector<std::optional<Traced>> fixed(a.x.size());
    for (std::size_t i = 0; i < a.x.size(); ++i) {
      if (!a.role.is_active(i)) fixed[i] = tr.fixed(a.x[i]);
    }
    std::vector<Traced> cts;
    for (std::size_t j = 0; j < op.output_count(); ++j) cts.push_back(tr.linear_or_zeros(a.cts[j], op.output_type(j)));
    const std::vector<std::optional<Traced>> out = rule(op, fixed, cts);
    if (out.size() != a.x.size()) {
      rule_error(op, tidu::RuleKind::Transpose, "the rule returned " + std::to_string(out.size()) +
                                                    " cotangents; the op has " + std::to_string(a.x.size()) + " operands");
    }
    tidu::Tangents r(a.x.size());
    for (std::size_t i = 0; i < out.size(); ++i) {
      if (!a.role.is_active(i)) continue;
      if (!out[i]) rule_error(op, tidu::RuleKind::Transpose, "no cotangent for active operand " + std::to_string(i));
      const TensorType& want = type_of(a.b.key_of(a.x[i]));
      if (out[i]->type() != want) {
        rule_error(op, tidu::RuleKind::Transpose, "the cotangent of operand " + std::to_string(i) + " has type " +
                                                      out[i]->type().to_string() + "; expected " + want.to_string());
      }
      r[i] = tr.result(*out[i], op, tidu::RuleKind::Transpose);
    }
    return r;
  };
}

JvpRule linear_jvp() {
  return [](const StdTensorOp& op, const JvpArgs& a) -> tidu::Tangents {
    RuleTrace r(a.b);
    std::vector<Traced> operands;
    for (std::size_t i = 0; i < a.x.size(); ++i) {
      const Linearity l = op.def->operands[i];
      if (l == Linearity::Nonlinear || l == Linearity::Bilinear) {
        rule_error(op, tidu::RuleKind::Jvp, "linear_jvp needs operands that are Linear or NonDifferentiable; operand " +
                                                std::to_string(i) + " is " + linearity_name(l));
      }
      operands.push_back(l == Linearity::NonDifferentiable ? r.fixed(a.x[i]) : r.linear_or_zeros(a.t[i], type_of(a.x[i])));
    }
    return r.results(apply_outputs(op, operands), op, tidu::RuleKind::Jvp);
  };
}

std::vector<Traced> call(const OpDef& def, std::span<const Traced> operands, OpAttrs attrs) {
  return apply_outputs(make_op(def, types_of(operands), std::move(attrs)), operands);
}

std::vector<Traced> call(const OpDef& def, std::initializer_list<Traced> operands, OpAttrs attrs) {
  return call(def, std::span<const Traced>(operands.begin(), operands.size()), std::move(attrs));
}

// ---- CustomJvp -------------------------------------------------------------------------------------

struct CustomJvp::State {
  std::string name;
  Function f;
  Rule rule;
  std::mutex mutex;
  const OpDef* def = nullptr;  // registered at the first call
};

namespace {

/// The attributes of one CustomJvp application: the CustomJvp, the operand types and the
/// function's program traced on them.
struct CustomJvpAttrs {
  const CustomJvp::State* state = nullptr;
  std::vector<TensorType> operand_types;
  std::shared_ptr<const Program> program;

  bool operator==(const CustomJvpAttrs& o) const { return state == o.state && operand_types == o.operand_types; }
  std::size_t hash() const {
    std::size_t h = std::hash<const void*>{}(state);
    for (const TensorType& t : operand_types) h = hash_mix(h, t.hash());
    return h;
  }
  void print(std::ostream& os) const {
    for (std::size_t i = 0; i < operand_types.size(); ++i) os << (i ? ", " : "") << operand_types[i].to_string();
  }
};

std::string types_text(std::span<const TensorType> types) {
  std::string s;
  for (const TensorType& t : types) s += (s.empty() ? "" : ", ") + t.to_string();
  return s;
}

OpDef custom_jvp_def(const std::shared_ptr<CustomJvp::State>& state, std::size_t arity, std::size_t outputs) {
  OpDef d;
  d.name = state->name;
  d.operands.assign(arity, Linearity::Nonlinear);
  d.outputs = outputs;
  d.shape_rule = [](std::span<const TensorType> in, const OpAttrs& attrs) {
    const auto& a = attrs.get<CustomJvpAttrs>();
    if (!std::equal(in.begin(), in.end(), a.operand_types.begin(), a.operand_types.end())) {
      throw ShapeError(a.state->name + ": traced for operands (" + types_text(a.operand_types) + "), given (" +
                       types_text(in) + ")");
    }
    std::vector<TensorType> out;
    for (const auto& key : a.program->graph()->output_keys()) out.push_back(type_of(key));
    return out;
  };
  d.kernel = [](const StdTensorOp& op, std::span<const Tensor* const> in, std::span<Tensor> out) {
    Tensors args;
    for (const Tensor* t : in) args.push_back(*t);
    Tensors results = op.attrs.get<CustomJvpAttrs>().program->run(args);
    for (std::size_t k = 0; k < out.size(); ++k) out[k] = std::move(results[k]);
  };
  // The user's rule sees the primals and tangents (not the results).
  d.jvp = traced_jvp([state](const StdTensorOp&, std::span<const Traced> x, std::span<const Traced>,
                             std::span<const Traced> t) { return state->rule(x, t); });
  return d;
}

}  // namespace

CustomJvp::CustomJvp(std::string name, Function f, Rule rule) : state_(std::make_shared<State>()) {
  if (!f || !rule) throw Error("custom_jvp " + name + ": needs a function and a rule");
  state_->name = std::move(name);
  state_->f = std::move(f);
  state_->rule = std::move(rule);
}

std::vector<Traced> CustomJvp::operator()(std::span<const Traced> args) const {
  auto refuse = [&](std::size_t results) {
    throw Error("custom_jvp " + state_->name + ": called with " + std::to_string(args.size()) + " arguments" +
                (results ? " and " + std::to_string(results) + " results" : std::string()) + "; its first call had " +
                std::to_string(state_->def->arity()) + " and " + std::to_string(state_->def->outputs));
  };
  {
    std::lock_guard lock(state_->mutex);
    if (state_->def && state_->def->arity() != args.size()) refuse(0);  // before f sees the arguments
  }
  // The function on these operand types, as a program of its own.
  auto trace = std::make_shared<TraceState>();
  std::vector<Traced> params;
  std::vector<TensorType> types;
  for (std::size_t i = 0; i < args.size(); ++i) {
    types.push_back(args[i].type());
    params.emplace_back(trace, trace->builder.add_input(TensorKey{"x" + std::to_string(i), args[i].type()}));
  }
  const std::vector<Traced> results = state_->f(params);
  std::vector<computegraph::LocalValueId> outs;
  for (const Traced& r : results) {
    if (r.trace() != trace) throw Error("custom_jvp " + state_->name + ": the function returned a value of another trace");
    outs.push_back(r.id());
  }
  trace->builder.set_outputs(std::move(outs));
  auto program = std::make_shared<const Program>(trace->builder.finish());
  const OpDef* def = nullptr;
  {
    std::lock_guard lock(state_->mutex);
    if (!state_->def) state_->def = &register_op(custom_jvp_def(state_, args.size(), results.size()));
    def = state_->def;
  }
  if (def->arity() != args.size() || def->outputs != results.size()) refuse(results.size());
  return call(*def, args, OpAttrs(CustomJvpAttrs{state_.get(), std::move(types), std::move(program)}));
}

}  // namespace tenferro
