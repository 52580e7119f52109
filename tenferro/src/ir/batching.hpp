#pragma once
// The kit for writing batching rules (OpDef::batch; vmap in tenferro/vmap.hpp). A rule sees the
// op's operands as BatchedValues, the batched ones with the batch axis first, and returns the op's
// results the same way, written with traced operations on whole batches. Most rules are one of
// the two shapes below; ops whose attributes name axes shift them by one in their own file.
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "computegraph/graph.hpp"
#include "tenferro/dimension_numbers.hpp"
#include "tenferro/ops/op_def.hpp"
#include "tenferro/ops/std_tensor_op.hpp"

namespace tenferro::detail {

/// The value with the batch axis first: itself if batched, else broadcast along a new leading
/// axis of `batch_size`.
Traced with_batch_axis(const BatchedValue& v, std::int64_t batch_size);

/// Every value batched.
std::vector<BatchedValue> all_batched(std::vector<Traced> values);

/// The rule of an op that, given operands with one more leading axis, maps itself over it:
/// elementwise ops, and linear algebra over stacks of matrices. Every operand gets the batch axis,
/// the op is rebuilt for the batched types with its attributes, and every result is batched.
BatchRule batch_leading_axis();

/// The rule for any op: the op applied to each batch element (slices of the batched operands,
/// the others whole), the results stacked. Correct for every op; one application per element.
std::vector<BatchedValue> batch_by_loop(const StdTensorOp& op, std::span<const BatchedValue> operands,
                                        std::int64_t batch_size);

/// For rules that handle only some operand patterns: true if exactly the operands in `which`
/// (by position) may be batched and the others are not.
bool only_batched(std::span<const BatchedValue> operands, std::initializer_list<std::size_t> which);

/// `axes` shifted past the batch axis (each + 1).
std::vector<std::int64_t> shifted(std::vector<std::int64_t> axes);

/// The rule of a contraction over DotDims (dot_general, the semiring products): `contract` records
/// the op for new dimension numbers on (lhs, rhs) and returns its results, all of the result
/// type's shape (batch axes, lhs free, rhs free). Both operands batched: their batch axes pair as a
/// new leading batch dimension; one batched: its batch axis stays a free axis, moved first after.
std::vector<BatchedValue> batch_contraction(
    std::span<const BatchedValue> operands, const DotDims& dims,
    const std::function<std::vector<Traced>(const Traced& lhs, const Traced& rhs, DotDims dims)>& contract);

// ---- graphs: what vmap and the control-flow rules (their bodies) share ----

/// `op` on operands of which at least one is batched: the op's own rule; without one, the
/// leading-axis rule for elementwise ops, else batch_by_loop (ops registered by users without a
/// rule; every built-in op has one, op_coverage_test checks).
/// Under `allowed` = false (VmapOptions::loop_fallback), the loop throws Error naming the op.
std::vector<BatchedValue> batch_op(const StdTensorOp& op, std::span<const BatchedValue> operands, std::int64_t batch_size);

/// While alive, sets whether batch_op may fall back to the loop on this thread (vmap sets it for
/// the replay of its function, control-flow bodies included).
class LoopFallbackScope {
 public:
  explicit LoopFallbackScope(bool allowed);
  ~LoopFallbackScope();
  LoopFallbackScope(const LoopFallbackScope&) = delete;
  LoopFallbackScope& operator=(const LoopFallbackScope&) = delete;

 private:
  bool previous_;
};

/// The outputs of `graph` (closed) on `inputs`, each operation recorded by batch_op where an
/// operand is batched and as itself where none is. An output is batched only if it depends on a
/// batched input (every rule keeps that: no batched result from unbatched operands), so
/// depends_on (regions/bodies.hpp) predicts which outputs may be. Ops without operands are recorded as
/// constants in `like`'s trace.
std::vector<BatchedValue> batch_graph(const computegraph::Graph<StdTensorOp>& graph, std::span<const BatchedValue> inputs,
                                      std::int64_t batch_size, const Traced& like);

/// `values` with the batch axis given to those marked in `batched` (which must include every
/// batched one): a body whose outputs must have fixed batching (a loop's carry, a branch's results).
std::vector<Traced> batched_as(std::span<const BatchedValue> values, const std::vector<bool>& batched, std::int64_t batch_size);

/// `p`, a bool [batch] (one flag per example), broadcast to `shape` (batch axis first).
Traced lanes(const Traced& p, const Shape& shape);

}  // namespace tenferro::detail
