#pragma once
// The kit for writing batching rules (OpDef::batch; vmap in tenferro/vmap.hpp). A rule sees the
// op's operands as BatchedValues, the batched ones with the batch axis first, and returns the op's
// results the same way, written with traced operations on whole batches. Most rules are one of
// the two shapes below; ops whose attributes name axes shift them by one in their own file.
#include <cstdint>
#include <span>
#include <vector>

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

}  // namespace tenferro::detail
