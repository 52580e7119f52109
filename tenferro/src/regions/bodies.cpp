// Bodies as regions (bodies.hpp): their types, the dependency analysis, BodyBuilder and the
// derived bodies (a region's JVP and its transpose).
#include "bodies.hpp"

#include <algorithm>
#include <optional>

#include "computegraph/graph_builder.hpp"
#include "computegraph/materialize.hpp"
#include "computegraph/replay.hpp"
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
  // The replay's values: the value in the new graph, and whether it depends on a linear input.
  struct Value {
    computegraph::LocalValueId id;
    bool linear;
  };
  // A region is closed (no parents, no External operands), so it replays as it is.
  computegraph::GraphBuilder<StdTensorOp> b;
  std::vector<Value> args;
  for (std::size_t i = 0; i < g->inputs().size(); ++i) args.push_back({b.add_input(g->key(g->inputs()[i]).input_key()), linear[i]});
  bool changed = false;
  const std::vector<Value> outs = computegraph::replay(
      *g, std::span<const Value>(args),
      [&](const StdTensorOp& op, const computegraph::OperationRole& role, std::span<const Value> in) {
        std::vector<computegraph::ValueRef<StdTensorOp>> refs;
        std::vector<bool> mask;
        for (const Value& v : in) {
          refs.push_back(computegraph::ValueRef<StdTensorOp>::local(v.id));
          mask.push_back(v.linear);
        }
        const bool any = std::find(mask.begin(), mask.end(), true) != mask.end();
        const bool infer = any && role.is_primary();
        changed = changed || infer;
        std::vector<Value> results;
        for (const computegraph::LocalValueId id : b.add_operation(op, std::move(refs), infer ? tidu::linear_role(mask) : role)) {
          results.push_back({id, any});
        }
        return results;
      });
  if (!changed) return g;
  std::vector<computegraph::LocalValueId> outputs;
  for (const Value& v : outs) outputs.push_back(v.id);
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
