#pragma once
// Internal: the values of an eager trace and the hooks by which recording an op runs it
// (tenferro/eager.hpp describes eager mode).
#include <memory>
#include <span>
#include <thread>
#include <vector>

#include "tenferro/traced.hpp"

namespace tenferro::detail {

struct EagerNode;

/// What an eager trace keeps beside its graph, per local value id.
struct EagerStore {
  std::vector<Tensor> values;
  /// Whether a gradient can flow from the value to a leaf that requires grad (operations run
  /// inside NoGrad, and operations of values that need none, record values that need none).
  std::vector<std::uint8_t> needs_grad;
  /// Inputs standing for a value whose own history an earlier backward() freed.
  std::vector<std::uint8_t> freed;
  /// Inputs that bind a leaf: the leaf (grads accumulate into it), else empty.
  std::vector<std::weak_ptr<EagerNode>> leaf;
  /// Whether the value has been computed (an operation recorded twice returns the first's values).
  std::vector<std::uint8_t> done;
  std::thread::id owner = std::this_thread::get_id();
  /// backward() without retain_graph ran over this trace: its operations may not be differentiated
  /// again, and new operations go to a fresh trace.
  bool retired = false;
  std::size_t inputs = 0;  // input names: e0, e1, ...
  std::size_t bytes = 0;   // held by `values`

  void grow(std::size_t count) {
    if (values.size() >= count) return;
    values.resize(count);
    needs_grad.resize(count, 0);
    freed.resize(count, 0);
    leaf.resize(count);
    done.resize(count, 0);
  }
};

/// The calling thread's eager trace (a fresh one when it has none, when backward() retired the last
/// one, or when no tensor refers to the last one any more and it has grown large).
std::shared_ptr<TraceState> current_eager_trace();

/// Runs the operation that produced `ids` (just recorded in the eager trace) on its operands'
/// values, unless an equal operation ran before (the recording returned its values).
void eager_execute(TraceState& trace, std::span<const computegraph::LocalValueId> ids);

/// Whether eager_unify must map the operands of an op (the first is an eager value): they come from
/// several traces or a retired one, or NoGrad is on and one of them needs grad.
bool eager_needs_unify(std::span<const Traced> inputs);

/// Operands of one op as values of one live trace: eager values of a retired trace of this thread
/// move into the current one (as inputs that remember their freed history); inside NoGrad, values
/// that need grad become inputs that need none (so that the op is not the same, by key, as one
/// recorded with grad); a value of another thread's trace throws ValueError naming `op`.
std::vector<Traced> eager_unify(const std::string& op, std::span<const Traced> inputs);

/// A new input of the eager trace holding `value` (taken by value: it may be an element of the
/// trace's own values, which growing them moves).
computegraph::LocalValueId eager_input(TraceState& trace, Tensor value, bool needs_grad, bool freed);

}  // namespace tenferro::detail
