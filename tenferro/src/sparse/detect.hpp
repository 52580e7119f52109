#pragma once
// Sparsity detection: the structural pattern of a graph's Jacobian, by replaying the graph on
// index sets (ElementSets), each op by its Dependence (tenferro/ops/op_def.hpp). See
// tenferro/sparse.hpp for what the pattern promises.
#include <cstdint>
#include <span>

#include "computegraph/graph.hpp"
#include "tenferro/ops/std_tensor_op.hpp"
#include "tenferro/sparse.hpp"

namespace tenferro::sparse {

/// The pattern of d output[0] / d input[wrt] of the closed graph `g`: rows are output 0's
/// elements, columns input `wrt`'s. `args` has one tensor per input; only the integer and bool
/// ones are read (an index's value decides where a gather reads), the others may be empty
/// tensors. Throws Error naming the op whose index sets pass `max_nonzeros` entries.
SparsityPattern jacobian_pattern(const computegraph::Graph<StdTensorOp>& g, std::size_t wrt, std::span<const Tensor> args,
                                 std::int64_t max_nonzeros);

}  // namespace tenferro::sparse
