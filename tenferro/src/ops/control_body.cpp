// The control-flow ops' shared machinery (control_body.hpp) and their attributes
// (ops/control_attrs.hpp).
#include "control_body.hpp"

#include <mutex>
#include <sstream>

#include "computegraph/materialize.hpp"
#include "computegraph/resolve.hpp"
#include "exec/executor.hpp"
#include "tenferro/ops/make.hpp"
#include "tenferro/transforms.hpp"
#include "tidu/linear_transpose.hpp"
#include "tidu/linearize.hpp"

namespace tenferro {

namespace detail {
/// A body's compiled program, filled on first run.
struct BodyProgram {
  std::once_flag once;
  std::shared_ptr<const computegraph::CompiledProgram<StdTensorOp>> program;
};
}  // namespace detail

Body::Body(Region r) : region(std::move(r)), program(std::make_shared<detail::BodyProgram>()) {}

std::size_t ScanAttrs::hash() const {
  std::size_t h = hash_mix(body.region.hash(), static_cast<std::size_t>(length));
  h = hash_mix(h, reverse);
  h = hash_mix(h, n_carry);
  h = hash_mix(h, n_xs);
  return hash_mix(h, n_consts);
}
void ScanAttrs::print(std::ostream& os) const {
  os << "length=" << length << ", carry=" << n_carry << ", xs=" << n_xs << ", consts=" << n_consts;
  if (reverse) os << ", reverse";
}

std::size_t CondAttrs::hash() const {
  std::size_t h = n_operands;
  for (const Body& b : branches) h = hash_mix(h, b.region.hash());
  return h;
}
void CondAttrs::print(std::ostream& os) const { os << "branches=" << branches.size() << ", operands=" << n_operands; }

std::size_t WhileAttrs::hash() const {
  std::size_t h = hash_mix(cond.region.hash(), body.region.hash());
  h = hash_mix(h, n_carry);
  return hash_mix(h, n_consts);
}
void WhileAttrs::print(std::ostream& os) const { os << "carry=" << n_carry << ", consts=" << n_consts; }

namespace detail {

namespace {
bool encloses(const TraceState* outer, const TraceState* inner) {
  for (const TraceState* t = inner; t; t = t->parent.get()) {
    if (t == outer) return true;
  }
  return false;
}

/// The bodies being traced on this thread, innermost last: a construct recorded inside a body
/// nests in that body even when its own operands all come from an enclosing trace.
thread_local std::vector<std::shared_ptr<TraceState>> tracing_bodies;

struct BodyScope {
  explicit BodyScope(std::shared_ptr<TraceState> state) { tracing_bodies.push_back(std::move(state)); }
  ~BodyScope() { tracing_bodies.pop_back(); }
  BodyScope(const BodyScope&) = delete;
  BodyScope& operator=(const BodyScope&) = delete;
};
}  // namespace

std::shared_ptr<TraceState> innermost(std::span<const Traced> values, const std::string& who) {
  std::shared_ptr<TraceState> best;
  for (const Traced& v : values) {
    if (!best || encloses(best.get(), v.trace().get())) {
      best = v.trace();
    } else if (!encloses(v.trace().get(), best.get())) {
      throw Error("tenferro " + who + ": operands come from different traces (neither encloses the other)");
    }
  }
  if (!tracing_bodies.empty()) {
    const auto& body = tracing_bodies.back();
    if (!best || encloses(best.get(), body.get())) best = body;
  }
  if (!best) throw Error("tenferro " + who + ": needs at least one traced operand (none was given)");
  return best;
}

TracedBody trace_body(const std::shared_ptr<TraceState>& parent, std::span<const TensorType> types, const BodyFn& fn,
                      std::span<const Traced> captures, const std::string& who) {
  auto state = std::make_shared<TraceState>();
  state->parent = parent;
  std::vector<Traced> args;
  args.reserve(types.size());
  for (std::size_t i = 0; i < types.size(); ++i) {
    args.emplace_back(state, state->builder.add_input(TensorKey{"a" + std::to_string(i), types[i]}));
  }
  for (const Traced& c : captures) capture_into(state, c);
  std::vector<Traced> results;
  {
    BodyScope scope(state);
    results = fn(args);
  }
  std::vector<ValueId> outs;
  for (const Traced& r : results) {
    try {
      outs.push_back(capture_into(state, r));
    } catch (const Error&) {
      throw Error("tenferro " + who + ": the body returned a value of an unrelated trace");
    }
  }
  state->builder.set_outputs(std::move(outs));
  TracedBody body;
  for (const auto& [outer, inner] : state->captures) body.captures.emplace_back(parent, outer);
  body.region = Region(state->builder.finish(), who);
  return body;
}

std::pair<std::vector<Region>, std::vector<Traced>> trace_bodies(const std::shared_ptr<TraceState>& parent,
                                                                 std::span<const TensorType> types,
                                                                 std::span<const BodyFn> fns, const std::string& who) {
  std::vector<TracedBody> bodies;
  std::vector<Traced> all;
  auto same = [](const Traced& a, const Traced& b) { return a.trace() == b.trace() && a.id() == b.id(); };
  for (const BodyFn& fn : fns) {
    bodies.push_back(trace_body(parent, types, fn, all, who));
    for (const Traced& c : bodies.back().captures) {
      bool seen = false;
      for (const Traced& a : all) seen = seen || same(a, c);
      if (!seen) all.push_back(c);
    }
  }
  std::vector<Region> regions;
  for (std::size_t i = 0; i < fns.size(); ++i) {
    if (bodies[i].captures.size() != all.size()) bodies[i] = trace_body(parent, types, fns[i], all, who);
    regions.push_back(bodies[i].region);
  }
  return {std::move(regions), std::move(all)};
}

std::shared_ptr<const exec::Executable> body_executable(const Body& body) {
  BodyProgram& p = *body.program;
  std::call_once(p.once, [&] {
    const auto& g = body.region.graph();
    std::vector<TensorValueKey> leading;
    for (ValueId id : g->inputs()) leading.push_back(g->key(id));
    const auto outputs = g->output_keys();
    p.program = default_compile_cache()->get_or_compile(computegraph::resolve({g}), outputs, leading);
  });
  return exec::executable_for(*p.program);
}

std::vector<Tensor> run_body(const Body& body, std::span<const Tensor> inputs, std::span<Tensor> into) {
  return body_executable(body)->run(inputs, into);
}

std::vector<TensorType> region_input_types(const Region& region) {
  std::vector<TensorType> types;
  for (const auto& k : region.input_keys()) types.push_back(type_of(k));
  return types;
}
std::vector<TensorType> region_output_types(const Region& region) {
  std::vector<TensorType> types;
  for (const auto& k : region.output_keys()) types.push_back(type_of(k));
  return types;
}
std::string types_list(std::span<const TensorType> types) {
  std::string s;
  for (std::size_t i = 0; i < types.size(); ++i) s += (i ? ", " : "") + types[i].to_string();
  return s.empty() ? "()" : s;
}

std::vector<bool> depends_on(const BodyGraph& graph, const std::vector<bool>& inputs) {
  std::vector<char> dep(graph.values().size(), 0);
  for (std::size_t i = 0; i < graph.inputs().size(); ++i) dep[graph.inputs()[i]] = inputs[i];
  for (const auto& op : graph.operations()) {
    bool any = false;
    for (const auto& ref : op.inputs) any = any || (ref.is_local() && dep[ref.local_id()]);
    if (any) {
      for (ValueId o : op.outputs) dep[o] = 1;
    }
  }
  std::vector<bool> out;
  for (ValueId o : graph.outputs()) out.push_back(dep[o] != 0);
  return out;
}

// ---- BodyBuilder -------------------------------------------------------------------------------

ValueId BodyBuilder::input(const TensorType& type) {
  return b_.add_input(TensorKey{"r" + std::to_string(inputs_++), type});
}

ValueId BodyBuilder::input(const TensorKey& key) {
  ++inputs_;
  return b_.add_input(key);
}

std::vector<ValueId> BodyBuilder::replay(const BodyGraph& graph, std::span<const ValueId> args) {
  return computegraph::replay(graph, args, recorder());
}

std::vector<ValueId> BodyBuilder::replay(const Materialized& graph, std::span<const ValueId> args) {
  return computegraph::replay(graph, args, recorder());
}

ValueId BodyBuilder::zeros(const TensorType& type) { return b_.add(ops::zeros(type), {}); }

ValueId BodyBuilder::add(ValueId a, ValueId b) {
  const TensorType& t = type(a);
  return b_.add(ops::add(t, t), {computegraph::ValueRef<StdTensorOp>::local(a), computegraph::ValueRef<StdTensorOp>::local(b)},
                tidu::linear_role({true, true}));
}

const TensorType& BodyBuilder::type(ValueId id) const { return type_of(b_.key(id)); }

Region BodyBuilder::finish(std::vector<ValueId> outputs, const std::string& who) {
  b_.set_outputs(std::move(outputs));
  return Region(b_.finish(), who);
}

// ---- derived bodies ----------------------------------------------------------------------------

JvpBody jvp_body(const Region& region, const std::vector<bool>& active) {
  const BodyGraph& g = *region.graph();
  std::vector<TensorKey> wrt;
  std::vector<TensorValueKey> leading;
  for (std::size_t i = 0; i < g.inputs().size(); ++i) {
    leading.push_back(g.key(g.inputs()[i]));
    if (active[i]) wrt.push_back(g.key(g.inputs()[i]).input_key());
  }
  const auto outputs = g.output_keys();
  auto lin = tidu::linearize(computegraph::resolve({region.graph()}), std::span<const TensorValueKey>(outputs),
                             std::span<const TensorKey>(wrt));
  for (std::size_t i = 0; i < lin.tangent_inputs.size(); ++i) leading.push_back(lin.tangent_input_key(i));
  JvpBody result;
  std::vector<TensorValueKey> tangents;
  for (const auto& t : lin.tangent_outputs) {
    result.present.push_back(t.has_value());
    if (t) tangents.push_back(lin.graph->key(*t));
  }
  result.graph = computegraph::materialize_merge(computegraph::resolve({lin.graph}),
                                                 std::span<const TensorValueKey>(tangents),
                                                 std::span<const TensorValueKey>(leading));
  return result;
}

TransposedBody transpose_body(const Region& region, const std::vector<bool>& linear) {
  const auto& g = region.graph();
  tidu::LinearizedGraph<StdTensorOp> lin;
  lin.graph = g;
  std::vector<TensorValueKey> fixed;
  for (std::size_t i = 0; i < g->inputs().size(); ++i) {
    const ValueId id = g->inputs()[i];
    if (linear[i]) {
      lin.tangent_inputs.emplace_back(g->key(id).input_key(), id);
    } else {
      fixed.push_back(g->key(id));
    }
  }
  for (ValueId o : g->outputs()) lin.tangent_outputs.emplace_back(o);
  auto tr = tidu::linear_transpose(lin);
  std::vector<TensorValueKey> leading;
  for (const auto& [seed, id] : tr.tangent_inputs) leading.push_back(tr.graph->key(id));
  if (leading.size() != g->outputs().size()) {
    throw tidu::ADRuleError("control-flow body", tidu::RuleKind::Transpose, "expected one cotangent seed per output of the body");
  }
  leading.insert(leading.end(), fixed.begin(), fixed.end());
  TransposedBody result;
  std::vector<TensorValueKey> cts;
  for (const auto& c : tr.tangent_outputs) {
    result.reached.push_back(c.has_value());
    if (c) cts.push_back(tr.graph->key(*c));
  }
  result.graph = computegraph::materialize_merge(computegraph::resolve({tr.graph}),
                                                 std::span<const TensorValueKey>(cts),
                                                 std::span<const TensorValueKey>(leading));
  return result;
}

}  // namespace detail
}  // namespace tenferro
