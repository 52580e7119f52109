// Bodies as regions (bodies.hpp): their types, the dependency analysis, BodyBuilder and the
// derived bodies (a region's JVP and its transpose).
#include "bodies.hpp"

#include <optional>

#include "computegraph/graph_builder.hpp"
#include "computegraph/materialize.hpp"
#include "computegraph/resolve.hpp"
#include "tidu/linear_transpose.hpp"
#include "tidu/linearize.hpp"

namespace tenferro::detail {

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

std::vector<ValueId> BodyBuilder::primal(StdTensorOp op, std::span<const ValueId> inputs) {
  std::vector<computegraph::ValueRef<StdTensorOp>> refs;
  refs.reserve(inputs.size());
  for (ValueId v : inputs) refs.push_back(computegraph::ValueRef<StdTensorOp>::local(v));
  return b_.add_operation(std::move(op), std::move(refs), computegraph::OperationRole::primary());
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

namespace {
/// `g` with the roles a rule's trace gives operations (tenferro/ops/rule.hpp): a primary operation
/// that reads a value depending on a `linear` input becomes linear in exactly those operands.
/// Bodies derived by linearize (jvp_body) carry their roles already and come back unchanged; a
/// body traced with ordinary operations inside a rule (the branches of a cond that a rule
/// records, say) gets the roles its reading of the tangents implies, without which its transpose
/// would see no linear operation and return zeros.
computegraph::GraphPtr<StdTensorOp> with_inferred_roles(const computegraph::GraphPtr<StdTensorOp>& g,
                                                        const std::vector<bool>& linear) {
  std::vector<bool> depends(g->values().size(), false);
  for (std::size_t i = 0; i < g->inputs().size(); ++i) depends[g->inputs()[i]] = linear[i];
  std::vector<std::optional<computegraph::OperationRole>> inferred(g->operations().size());
  bool changed = false;
  for (std::size_t k = 0; k < g->operations().size(); ++k) {
    const auto& node = g->operations()[k];
    std::vector<bool> mask;
    bool any = false;
    for (const auto& in : node.inputs) {
      mask.push_back(depends[in.local_id()]);
      any = any || mask.back();
    }
    if (!any) continue;
    for (std::size_t o = 0; o < node.operation.output_count(); ++o) depends[node.outputs[0] + o] = true;
    if (node.role.is_primary()) {
      inferred[k] = tidu::linear_role(mask);
      changed = true;
    }
  }
  if (!changed) return g;
  // A region is closed (no parents, no External operands).
  computegraph::GraphBuilder<StdTensorOp> b;
  std::vector<computegraph::LocalValueId> id(g->values().size());
  for (const computegraph::LocalValueId v : g->inputs()) id[v] = b.add_input(g->key(v).input_key());
  for (std::size_t k = 0; k < g->operations().size(); ++k) {
    const auto& node = g->operations()[k];
    std::vector<computegraph::ValueRef<StdTensorOp>> in;
    for (const auto& r : node.inputs) in.push_back(computegraph::ValueRef<StdTensorOp>::local(id[r.local_id()]));
    const auto outs = b.add_operation(node.operation, std::move(in), inferred[k] ? *inferred[k] : node.role);
    for (std::size_t o = 0; o < outs.size(); ++o) id[node.outputs[0] + o] = outs[o];
  }
  std::vector<computegraph::LocalValueId> outputs;
  for (const computegraph::LocalValueId v : g->outputs()) outputs.push_back(id[v]);
  b.set_outputs(std::move(outputs));
  return b.finish();
}
}  // namespace

TransposedBody transpose_body(const Region& region, const std::vector<bool>& linear) {
  const auto g = with_inferred_roles(region.graph(), linear);
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

}  // namespace tenferro::detail
