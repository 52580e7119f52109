#pragma once
// Internal: the tape of an eager trace, and the hooks by which recording an op runs it
// (tenferro/eager.hpp describes eager mode).
//
// An eager trace records no graph while it runs: its values live in a flat table (value ids are
// the Traced ids) and the operations whose results need grad in a flat list, each appended in
// O(1) with no key interning. backward() builds a graph from the part of the tape between the
// loss and the leaves (eager_backward.cpp); an op whose results need no grad leaves only its
// results, which the tape treats like inputs.
#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <thread>
#include <vector>

#include "computegraph/small_vector.hpp"
#include "tenferro/traced.hpp"
#include "tenferro/ops/record.hpp"

namespace tenferro::detail {

struct EagerNode;

/// An operation of the tape: its results are the values first_output .. first_output + count - 1.
struct EagerOp {
  StdTensorOp op;
  computegraph::SmallVector<computegraph::LocalValueId, 3> inputs;
  computegraph::LocalValueId first_output = 0;
  std::uint32_t output_count = 0;
};

/// An eager trace's values and tape, indexed by value id.
struct EagerStore {
  /// A deque: Traced::type() returns a reference into its tensor, which must stay valid while
  /// later values are appended.
  std::deque<Tensor> values;
  /// Whether a gradient can flow from the value to a leaf that requires grad (operations run
  /// inside NoGrad, and operations of values that need none, record values that need none).
  std::vector<std::uint8_t> needs_grad;
  /// Inputs standing for a value whose own history an earlier backward() freed.
  std::vector<std::uint8_t> freed;
  /// Values that bind a leaf: the leaf (grads accumulate into it), else empty.
  std::vector<std::weak_ptr<EagerNode>> leaf;
  /// The index in `ops` of the value's producer, or -1 (inputs, constants, and results of
  /// operations that needed no grad).
  std::vector<std::int32_t> producer;
  std::vector<EagerOp> ops;
  std::thread::id owner = std::this_thread::get_id();
  /// backward() without retain_graph ran over this trace: its operations may not be differentiated
  /// again, and new operations go to a fresh trace.
  bool retired = false;
  std::size_t bytes = 0;  // held by `values`

  /// Appends a value; returns its id.
  computegraph::LocalValueId add(Tensor value, bool value_needs_grad, std::int32_t producer_op) {
    bytes += static_cast<std::size_t>(value.numel()) * dtype_size(value.dtype());
    values.push_back(std::move(value));
    needs_grad.push_back(value_needs_grad ? 1 : 0);
    freed.push_back(0);
    leaf.emplace_back();
    producer.push_back(producer_op);
    return static_cast<computegraph::LocalValueId>(values.size() - 1);
  }
};

/// The calling thread's eager trace (a fresh one when it has none, when backward() retired the last
/// one, or when no tensor refers to the last one any more and it has grown large).
std::shared_ptr<TraceState> current_eager_trace();

/// Runs `op` on the values `operands` of the eager trace and appends its results (and, when they
/// need grad, the op to the tape); returns the first result's id (the others follow it).
computegraph::LocalValueId eager_record(TraceState& trace, StdTensorOp op,
                                        std::span<const computegraph::LocalValueId> operands);

/// Whether eager_unify must map the operands of an op (the first is an eager value): they come from
/// several traces or a retired one.
bool eager_needs_unify(std::span<const Traced> inputs);

/// Operands of one op as values of one live trace: eager values of a retired trace of this thread
/// move into the current one (as inputs that remember their freed history); a value of another
/// thread's trace throws ValueError naming `op`. (Inside NoGrad nothing needs mapping: the op's
/// results need no grad whatever its operands.)
std::vector<Traced> eager_unify(const std::string& op, std::span<const Traced> inputs);

/// A new input of the eager trace holding `value` (taken by value: it may be an element of the
/// trace's own values, which growing them moves).
computegraph::LocalValueId eager_input(TraceState& trace, Tensor value, bool needs_grad, bool freed);

}  // namespace tenferro::detail
