#pragma once
// Internal: what the control-flow ops (ops/scan.cpp, ops/cond.cpp, ops/while_loop.cpp) and their
// API (api/control_flow.cpp, api/root.cpp) share about bodies that already exist as regions:
// their types, the dependency analysis their AD rules need, and derived bodies (a body's JVP, its
// transpose) built as new closed graphs. Tracing a C++ callable into a body is the API's
// (api/trace_body.hpp); running a body is the executor's, behind regions/region_runner.hpp.
//
// Derived bodies are built in a BodyBuilder (a GraphBuilder without parents) by replaying
// materialized graphs, keeping every operation's role: a body linear in some inputs keeps the
// Linearized roles its JVP gave it, so that tidu::linear_transpose can transpose it later.
#include <span>
#include <string>
#include <vector>

#include "computegraph/graph_builder.hpp"
#include "computegraph/materialized_graph.hpp"
#include "computegraph/replay.hpp"
#include "tenferro/ops/control_attrs.hpp"
#include "tenferro/ops/make.hpp"
#include "tenferro/ops/std_tensor_op.hpp"

namespace tenferro::detail {

using Materialized = computegraph::MaterializedGraph<StdTensorOp>;
using BodyGraph = computegraph::Graph<StdTensorOp>;
using ValueId = computegraph::LocalValueId;

/// The region's input and output types.
std::vector<TensorType> region_input_types(const Region& region);
std::vector<TensorType> region_output_types(const Region& region);
/// "f64[3], i64[]".
std::string types_list(std::span<const TensorType> types);

/// For each output of `graph`, whether it depends on an input marked in `inputs` (aligned with
/// graph.inputs()).
std::vector<bool> depends_on(const BodyGraph& graph, const std::vector<bool>& inputs);

/// Builds a derived body: a closed graph whose inputs are added in order.
class BodyBuilder {
 public:
  ValueId input(const TensorType& type);
  /// An input with a given key (a derived body that must share keys with the body it extends).
  ValueId input(const TensorKey& key);
  /// Replays `graph` (closed) on `args` (one per graph input); returns the ids of its outputs.
  std::vector<ValueId> replay(const BodyGraph& graph, std::span<const ValueId> args);
  /// Replays a materialized graph on `args` (one per input, in its input order), keeping roles.
  std::vector<ValueId> replay(const Materialized& graph, std::span<const ValueId> args);
  /// The recorder computegraph::replay calls: each operation, with its role, on this builder's
  /// values.
  auto recorder() {
    return [this](const StdTensorOp& op, const computegraph::OperationRole& role, std::span<const ValueId> in) {
      std::vector<computegraph::ValueRef<StdTensorOp>> refs;
      refs.reserve(in.size());
      for (ValueId v : in) refs.push_back(computegraph::ValueRef<StdTensorOp>::local(v));
      return b_.add_operation(op, std::move(refs), role);
    };
  }
  /// `op` on `inputs` (values of this builder) as a primal operation; its results.
  std::vector<ValueId> primal(StdTensorOp op, std::span<const ValueId> inputs);
  /// A zero of `type` (a primary op).
  ValueId zeros(const TensorType& type);
  /// a + b as a linear op (both operands active): cotangent accumulation in transposed bodies.
  ValueId add(ValueId a, ValueId b);
  const TensorType& type(ValueId id) const;
  /// The finished region with these outputs; `who` names the op in errors.
  Region finish(std::vector<ValueId> outputs, const std::string& who);

 private:
  computegraph::GraphBuilder<StdTensorOp> b_;
  std::size_t inputs_ = 0;
};

/// The JVP of a region with respect to the inputs marked `active`, as a flat graph with inputs
/// [the region's inputs..., one tangent per active input, in input order...] and outputs [the
/// tangent of each output that depends on an active input...]; `present[j]` says whether output
/// j has one. Its primal part (the values the tangents need) is recomputed from the inputs.
struct JvpBody {
  Materialized graph;
  std::vector<bool> present;
};
JvpBody jvp_body(const Region& region, const std::vector<bool>& active);

/// The transpose of a region linear in the inputs marked `linear` (the others fixed), as a flat
/// graph with inputs [one cotangent per output..., the fixed inputs, in input order...] and
/// outputs [the cotangent of each linear input that some output reaches...]; `reached[i]` (over
/// the linear inputs, in order) says whether input i has one.
struct TransposedBody {
  Materialized graph;
  std::vector<bool> reached;
};
TransposedBody transpose_body(const Region& region, const std::vector<bool>& linear);

}  // namespace tenferro::detail
