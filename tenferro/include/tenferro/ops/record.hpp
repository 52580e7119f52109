#pragma once
// Recording ops into a trace: the tier for writers of custom ops and of new Traced functions
// (tenferro/custom_op.hpp builds on it). User programs need none of it: tenferro/traced.hpp's
// functions record for them.
#include <initializer_list>
#include <memory>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "computegraph/graph_builder.hpp"
#include "tenferro/ops/make.hpp"
#include "tenferro/ops/std_tensor_op.hpp"
#include "tenferro/traced.hpp"

namespace tenferro {

namespace detail {
struct EagerStore;  // src/api/eager_store.hpp
struct RuleTape;    // tenferro/ops/rule.hpp
}

static_assert(std::is_same_v<Traced::ValueId, computegraph::LocalValueId>);

/// The graph under construction by one trace. An eager trace (tenferro/eager.hpp) records into its
/// own tape instead (`eager`; its builder stays empty): its operations run as they are recorded.
///
/// A rule's trace (tenferro/ops/rule.hpp, RuleTrace) records into the graph that the rule is
/// emitting, through `rule`, instead of its own builder.
///
/// A nested trace records the body of a control-flow op (tenferro/control_flow.hpp). It has the
/// trace it is nested in as `parent`; when an operation mixes values of the nested trace with
/// values of an enclosing one (a body that reads a variable it closes over), the enclosing value
/// is captured: it becomes an input of the nested trace (once per value), and the control-flow op
/// passes it in as an operand.
struct TraceState {
  computegraph::GraphBuilder<StdTensorOp> builder;
  std::shared_ptr<detail::EagerStore> eager;
  std::shared_ptr<detail::RuleTape> rule;
  std::shared_ptr<TraceState> parent;
  /// Captured values: (id in the parent trace, id of the input standing for it here), in capture order.
  std::vector<std::pair<computegraph::LocalValueId, computegraph::LocalValueId>> captures;
};

/// The id that stands for `value` in `trace`: its own id if it belongs to `trace`, else the input
/// of `trace` that captures it (see TraceState; nested bodies capture through every level). Throws
/// Error if `value` belongs to no trace enclosing `trace`.
Traced::ValueId capture_into(const std::shared_ptr<TraceState>& trace, const Traced& value);

/// Records `op` applied to `inputs` (of one trace, or of nested traces: values of enclosing traces
/// are captured into the innermost; Error otherwise) and returns its
/// result; throws Error if the op has several results (use apply_outputs).
Traced apply(StdTensorOp op, std::initializer_list<Traced> inputs);
/// Records `op` applied to `inputs` and returns all its results, in output order.
std::vector<Traced> apply_outputs(StdTensorOp op, std::span<const Traced> inputs);

namespace detail {
/// apply(op, {a}) and apply(op, {a, b}) without copying the operands (a copy of a Traced counts a
/// reference, an atomic operation): the path of the elementwise functions, which AD rules run
/// once per op of every derivative.
Traced apply_unary(StdTensorOp op, const Traced& a);
Traced apply_binary(StdTensorOp op, const Traced& a, const Traced& b);
/// An op without operands (a constant, iota, zeros) recorded in `like`'s trace as the constant it
/// evaluates to: what replays of graphs into a trace record for such ops.
Traced record_nullary(const Traced& like, const StdTensorOp& op);
}  // namespace detail

}  // namespace tenferro
