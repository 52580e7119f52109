// The op registry and StdTensorOp's GraphOperation and Primitive members. Everything here reads
// op definitions (ops/op_def.hpp); no code names a particular op except add (the accumulation op
// tidu needs).
#include <array>
#include <deque>
#include <mutex>
#include <sstream>
#include <unordered_map>

#include "family.hpp"

namespace tenferro {

// ---- definitions and the registry ----------------------------------------------------------------

const char* linearity_name(Linearity l) {
  switch (l) {
    case Linearity::Linear: return "linear";
    case Linearity::Bilinear: return "bilinear";
    case Linearity::Nonlinear: return "nonlinear";
    case Linearity::NonDifferentiable: return "non-differentiable";
  }
  return "?";
}

bool OpDef::has_linear_operand() const {
  if (variadic_arity) return true;  // decided per application (control flow: op_def.hpp)
  for (Linearity l : operands) {
    if (l == Linearity::Linear || l == Linearity::Bilinear) return true;
  }
  return false;
}

bool OpDef::never_differentiable() const {
  if (variadic_arity) return false;
  for (Linearity l : operands) {
    if (l != Linearity::NonDifferentiable) return false;
  }
  return true;
}

Dependence OpDef::element_dependence() const {
  if (dependence != Dependence::Derived) return dependence;
  if (elementwise || fusion == Fusion::Elementwise) return Dependence::Elementwise;
  if (layout != Layout::None) return Dependence::Moves;
  if (fusion == Fusion::Reduction || fusion == Fusion::SumReduction) return Dependence::Reduces;
  return Dependence::All;
}

const OpDef& op_def(OpKind kind) {
  static const std::array<const OpDef*, kBuiltinOpCount> table = [] {
    std::array<const OpDef*, kBuiltinOpCount> t{
#define TENFERRO_DEF_ENTRY(name) &detail::def_##name(),
        TENFERRO_BUILTIN_OPS(TENFERRO_DEF_ENTRY)
#undef TENFERRO_DEF_ENTRY
    };
    for (std::size_t k = 0; k < t.size(); ++k) {
      if (static_cast<std::size_t>(t[k]->kind) != k) {
        throw Error("op registry: the definition of " + t[k]->name + " carries the wrong OpKind");
      }
    }
    return t;
  }();
  if (kind == OpKind::Custom) throw Error("op_def: OpKind::Custom names no single op; use the op's definition");
  return *table[static_cast<std::size_t>(kind)];
}

namespace {
struct Registry {
  std::mutex mutex;
  std::deque<OpDef> custom;  // stable addresses
  std::unordered_map<std::string, const OpDef*> by_name;
};
Registry& registry() {
  static Registry r;
  return r;
}
const OpDef* find_builtin(const std::string& name) {
  for (std::size_t k = 0; k < kBuiltinOpCount; ++k) {
    const OpDef& d = op_def(static_cast<OpKind>(k));
    if (d.name == name) return &d;
  }
  return nullptr;
}
}  // namespace

const OpDef& register_op(OpDef def) {
  const std::string who = "register_op(" + def.name + ")";
  if (def.name.empty()) throw Error("register_op: an op needs a name");
  if (def.kind != OpKind::Custom) throw Error(who + ": kind must be OpKind::Custom (built-in ids are taken)");
  if (def.outputs == 0) throw Error(who + ": an op needs at least one output");
  if (!def.shape_rule) throw Error(who + ": missing shape rule");
  if (def.formula) {
    if (def.outputs != 1 || def.operands.empty() || def.operands.size() > 2) {
      throw Error(who + ": a formula defines an op with one or two operands and one result");
    }
    if (!def.kernel) def.kernel = detail::formula_kernel(*def.formula);
  }
  if (!def.kernel) throw Error(who + ": missing kernel");
  if (def.operands.size() > 64) throw Error(who + ": at most 64 operands");
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  if (find_builtin(def.name) || r.by_name.count(def.name)) {
    throw Error(who + ": an op of this name is already registered");
  }
  const OpDef& stored = r.custom.emplace_back(std::move(def));
  r.by_name.emplace(stored.name, &stored);
  return stored;
}

std::vector<const OpDef*> registered_ops() {
  std::vector<const OpDef*> all;
  for (std::size_t k = 0; k < kBuiltinOpCount; ++k) all.push_back(&op_def(static_cast<OpKind>(k)));
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  for (const OpDef& d : r.custom) all.push_back(&d);
  return all;
}

const OpDef* find_op(const std::string& name) {
  if (const OpDef* d = find_builtin(name)) return d;
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  auto it = r.by_name.find(name);
  return it == r.by_name.end() ? nullptr : it->second;
}

// ---- making descriptors ----------------------------------------------------------------------------

StdTensorOp make_op(const OpDef& def, std::span<const TensorType> operands, OpAttrs attrs) {
  const std::size_t arity = def.variadic_arity ? def.variadic_arity(attrs) : def.arity();
  if (operands.size() != arity) {
    throw Error(def.name + ": " + std::to_string(operands.size()) + " operands given; expected " +
                std::to_string(arity));
  }
  std::vector<TensorType> outs = def.shape_rule(operands, attrs);
  if (outs.empty()) throw Error(def.name + ": the shape rule gave no result type");
  if (def.outputs != 0 && outs.size() != def.outputs) {
    throw Error(def.name + ": the shape rule gave " + std::to_string(outs.size()) + " result types; the op has " +
                std::to_string(def.outputs) + " outputs");
  }
  StdTensorOp op;
  op.def = &def;
  op.kind = def.kind;
  op.attrs = std::move(attrs);
  op.out = std::move(outs[0]);
  op.more_outs.assign(std::make_move_iterator(outs.begin() + 1), std::make_move_iterator(outs.end()));
  return op;
}

StdTensorOp make_op(const OpDef& def, std::initializer_list<TensorType> operands, OpAttrs attrs) {
  return make_op(def, std::span<const TensorType>(operands.begin(), operands.size()), std::move(attrs));
}

namespace detail {

StdTensorOp make(OpKind kind, TensorType out, OpAttrs attrs) {
  StdTensorOp op;
  op.def = &op_def(kind);
  op.kind = kind;
  op.attrs = std::move(attrs);
  op.out = std::move(out);
  return op;
}

Kernel single_result(Tensor (*f)(const StdTensorOp&, Operands)) {
  return [f](const StdTensorOp& op, Operands in, std::span<Tensor> out) { out[0] = f(op, in); };
}

ShapeRule single_type(TensorType (*f)(Types, const OpAttrs&)) {
  return [f](Types in, const OpAttrs& attrs) { return std::vector<TensorType>{f(in, attrs)}; };
}

void not_linear(const StdTensorOp& op, const char* why) {
  throw tidu::ADRuleError(op.name(), tidu::RuleKind::Transpose, why);
}

}  // namespace detail

// ---- StdTensorOp ---------------------------------------------------------------------------------

std::ostream& operator<<(std::ostream& os, const TensorKey& key) {
  return os << key.name << ':' << key.type.to_string();
}

std::size_t StdTensorOp::hash() const {
  // Built-in ops hash by their dense id, registered ones by name (deterministic across runs).
  std::size_t h = kind == OpKind::Custom ? std::hash<std::string>{}(def->name)
                                         : static_cast<std::size_t>(kind) * 0x9e3779b97f4a7c15ULL;
  h = hash_mix(h, out.hash());
  for (const TensorType& t : more_outs) h = hash_mix(h, t.hash());
  return hash_mix(h, attrs.hash());
}

std::string StdTensorOp::name() const {
  std::ostringstream os;
  os << def->name;
  if (def->print_attrs) {
    def->print_attrs(os, *this);
  } else {
    attrs.print(os);
  }
  return os.str();
}

namespace {
std::string types_text(const TensorType& first, std::span<const TensorType> rest) {
  std::string s = first.to_string();
  for (const TensorType& t : rest) s += ", " + t.to_string();
  return s;
}
}  // namespace

void StdTensorOp::eval(ExecContext&, std::span<const Tensor* const> in, std::span<Tensor> out_values) const {
  if (in.size() != input_count()) {
    throw BindingError("eval " + name() + ": " + std::to_string(in.size()) + " operands; expected " +
                       std::to_string(input_count()));
  }
  // Operands bound at run time may not match the types the graph was traced with: re-derive the
  // result types from the actual operands and refuse a mismatch before any kernel reads memory.
  std::vector<TensorType> types;
  types.reserve(in.size());
  for (const Tensor* t : in) types.push_back(t->type());
  const std::vector<TensorType> actual = def->shape_rule(types, attrs);
  const bool same = actual.size() == 1 + more_outs.size() && actual[0] == out &&
                    std::equal(more_outs.begin(), more_outs.end(), actual.begin() + 1);
  if (!same) {
    throw ShapeError("eval " + name() + ": operands give result " +
                     types_text(actual[0], std::span(actual).subspan(1)) + ", but the op was built for " +
                     types_text(out, more_outs));
  }
  def->kernel(*this, in, out_values);
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

tidu::Tangents StdTensorOp::jvp_rule(tidu::PrimitiveBuilder<StdTensorOp>& b, std::span<const TensorValueKey> x,
                                     std::span<const TensorValueKey> y,
                                     std::span<const std::optional<tidu::LocalValueId>> t,
                                     TensorADContext&) const {
  // Tangents never flow through NonDifferentiable operands (a predicate, an index, a compared
  // value): the rule sees them as absent, and an op with nothing else active has no tangent.
  std::vector<std::optional<tidu::LocalValueId>> active(t.begin(), t.end());
  bool any = false;
  for (std::size_t i = 0; i < active.size(); ++i) {
    if (i < def->operands.size() && def->operands[i] == Linearity::NonDifferentiable) active[i].reset();
    any = any || active[i].has_value();
  }
  if (!any) return tidu::Tangents(output_count());
  if (!def->jvp) throw tidu::ADRuleError::missing(name(), tidu::RuleKind::Jvp);
  return def->jvp(*this, JvpArgs{b, x, y, active});
}

tidu::Tangents StdTensorOp::transpose_rule(tidu::PrimitiveBuilder<StdTensorOp>& b,
                                           std::span<const std::optional<tidu::LocalValueId>> ct,
                                           std::span<const tidu::PrimitiveValue<StdTensorOp>> x,
                                           const computegraph::OperationRole& role, TensorADContext&) const {
  if (!def->transpose) {
    if (!def->has_linear_operand()) {
      detail::not_linear(*this, "the op is not linear; only linear ops have a transpose rule");
    }
    throw tidu::ADRuleError::missing(name(), tidu::RuleKind::Transpose);
  }
  // Registered ops get the linearity check here; built-in rules check their operands themselves,
  // with messages that say which operand may be active.
  if (kind == OpKind::Custom) {
    for (std::size_t i = 0; i < def->arity(); ++i) {
      const Linearity l = def->operands[i];
      if (role.is_active(i) && l != Linearity::Linear && l != Linearity::Bilinear) {
        const std::string why = "operand " + std::to_string(i) + " is active but declared " + linearity_name(l) +
                                "; only linear operands can be transposed";
        detail::not_linear(*this, why.c_str());
      }
    }
  }
  return def->transpose(*this, TransposeArgs{b, ct, x, role});
}

}  // namespace tenferro
