#pragma once
// Internal: what the control-flow ops (scan.cpp, cond.cpp, while_loop.cpp) share: tracing a C++
// callable into a body region, running a body, building derived bodies (a body's JVP, its
// transpose) as new closed graphs, and the dependency analysis their AD rules need.
//
// Derived bodies are built in a BodyBuilder (a GraphBuilder without parents) by replaying
// materialized graphs, keeping every operation's role: a body linear in some inputs keeps the
// Linearized roles its JVP gave it, so that tidu::linear_transpose can transpose it later.
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "computegraph/graph_builder.hpp"
#include "computegraph/materialized_graph.hpp"
#include "computegraph/replay.hpp"
#include "tenferro/ops/control_attrs.hpp"
#include "tenferro/traced.hpp"

namespace tenferro::exec {
class Executable;
}

namespace tenferro::detail {

using BodyFn = std::function<std::vector<Traced>(std::span<const Traced>)>;
using Materialized = computegraph::MaterializedGraph<StdTensorOp>;
using BodyGraph = computegraph::Graph<StdTensorOp>;
using ValueId = computegraph::LocalValueId;

/// A body traced from a callable: its region and the values of enclosing traces it captured
/// (the op passes them as operands, after its own).
struct TracedBody {
  Region region;
  std::vector<Traced> captures;
};

/// Traces `fn` on fresh inputs of `types`, nested in `parent` (the trace the op is recorded into).
/// `captures` are captured first, in order (so that several regions of one op share one capture
/// list); values the body reads from enclosing traces beyond them are appended. Results that
/// belong to an enclosing trace are captured too. `who` names the construct in errors.
TracedBody trace_body(const std::shared_ptr<TraceState>& parent, std::span<const TensorType> types, const BodyFn& fn,
                      std::span<const Traced> captures, const std::string& who);

/// Traces several regions that take the same inputs and share one capture list: each is traced
/// once; those that captured less than the union are traced again with the union captured first.
std::pair<std::vector<Region>, std::vector<Traced>> trace_bodies(const std::shared_ptr<TraceState>& parent,
                                                                 std::span<const TensorType> types,
                                                                 std::span<const BodyFn> fns, const std::string& who);

/// The trace every one of `values` belongs to or is enclosed by (the innermost); Error naming
/// `who` if there is none.
std::shared_ptr<TraceState> innermost(std::span<const Traced> values, const std::string& who);

/// The executable of a body's program for the current executor options: the process-wide
/// compile cache compiles it on first use (equal bodies share it).
std::shared_ptr<const exec::Executable> body_executable(const Body& body);

/// Runs a body on `inputs` (one per region input); if `into` is not empty, writes the results
/// into it (one tensor per region output). The body's program comes from the process-wide
/// compile cache on first use (equal bodies share it) and runs on tenferro's executor.
std::vector<Tensor> run_body(const Body& body, std::span<const Tensor> inputs, std::span<Tensor> into = {});

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
  /// `op` on `inputs` (values of this builder) with `role`; its results.
  std::vector<ValueId> add_operation(StdTensorOp op, std::vector<computegraph::ValueRef<StdTensorOp>> inputs,
                                     computegraph::OperationRole role) {
    return b_.add_operation(std::move(op), std::move(inputs), std::move(role));
  }
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
