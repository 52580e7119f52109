#pragma once
// tenferro over MPI (the optional component tenferro::mpi; Debian's OpenMPI): the same programs
// across processes. Every function is collective: each rank of the communicator calls it with
// arguments of the same types, and each returns the same result on every rank.
//
//   MPI_Init(&argc, &argv);
//   tf::Tensor z = tf::distributed::einsum(MPI_COMM_WORLD, "ab,bc,cd->ad", {a, b, c}, options);
//   auto step = tf::distributed::value_and_grad(MPI_COMM_WORLD, loss_fn, params.size());
//   auto [loss, grads] = step(params, {tf::distributed::shard(MPI_COMM_WORLD, x)});
//
// Sliced contractions: the slices of einsum's sliced path (options.path.memory_limit) are split
// over the ranks in contiguous ranges of equal count (every slice costs the same, so equal counts
// balance the predicted cost); each rank sums its range in order, and the ranks' partial results
// are gathered to every rank and combined in rank order. The result is therefore the same bits on
// every rank and on every run with the same number of ranks; with another number of ranks the
// partial sums are grouped differently, so sums agree to rounding (max and min of a tropical
// semiring exactly).
//
// Data parallelism: each rank holds its shard of the batch (axis 0 of each data argument); the
// loss is the mean over the shard's examples. value_and_grad returns the loss and gradients of the
// whole batch: the shards' means weighted by their sizes, the weighted gradients summed by a ring
// all-reduce in a fixed order (each rank sends 2 (p - 1) / p of the gradients' bytes), so that
// every rank holds the same bits, every run with the same number of ranks gives them, and the
// parameters stay identical across ranks after any optimizer step.
//
// Failures: if any rank's computation throws, every rank throws tenferro::Error with the first
// failing rank's message ("rank 1 of 4: ..."), instead of the others waiting forever in the
// collective. MPI_COMM_NULL or a communicator MPI does not recognise gives ValueError.
#include <mpi.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <utility>

#include "tenferro/einsum.hpp"
#include "tenferro/transforms.hpp"

namespace tenferro::distributed {

/// The rank and size of `comm`; ValueError naming `who` for MPI_COMM_NULL or an invalid
/// communicator.
std::pair<int, int> rank_and_size(MPI_Comm comm, const char* who);

/// The rows [r * n / p, (r + 1) * n / p) of `batch` (axis 0) for rank r of p: this rank's shard of
/// a batch every rank holds (a copy). ShapeError for a 0-d tensor.
Tensor shard(MPI_Comm comm, const Tensor& batch);

/// einsum(subscripts, operands, options) with its slices spread over the ranks (see above). Every
/// rank passes the same operands.
Tensor einsum(MPI_Comm comm, std::string_view subscripts, const Tensors& operands, const tn::Options& options = {});

/// How a sliced contraction was shared (for benchmarks and logs).
struct EinsumSplit {
  std::int64_t slices = 0;        ///< of the whole contraction
  std::int64_t begin = 0, end = 0;  ///< this rank's range
  std::size_t bytes_sent = 0;     ///< by this rank in the combination
};
Tensor einsum(MPI_Comm comm, std::string_view subscripts, const Tensors& operands, const tn::Options& options,
              EinsumSplit& split);

/// The distributed einsum's value and its vjp: the gradients of <cotangent, einsum(...)> with
/// respect to every operand. Each rank differentiates its range of slices (reverse mode through
/// each slice's program, tn::SlicedEinsum::vjp); the gradients are summed over the ranks by the
/// fixed-order ring (sum_over_ranks), the value combined as einsum's. Standard semiring only.
std::pair<Tensor, Tensors> einsum_vjp(MPI_Comm comm, std::string_view subscripts, const Tensors& operands,
                                      const Tensor& cotangent, const tn::Options& options = {});

/// The data-parallel gradient of a loss (see above), compiled once per signature: call it with
/// the parameters (the same on every rank) and this rank's shard of the data.
class DataParallelValueAndGrad {
 public:
  DataParallelValueAndGrad(MPI_Comm comm, tenferro::detail::TracedFunction f, std::size_t num_params);
  /// (loss, gradients for params) of the whole batch; every rank returns the same bits. ShapeError
  /// if the ranks' parameters or data disagree in anything but the data's leading axis.
  std::pair<Tensor, Tensors> operator()(const Tensors& params, const Tensors& data) const;

 private:
  MPI_Comm comm_;
  std::size_t num_params_;
  std::shared_ptr<tenferro::detail::TransformedFunction> impl_;
};

/// f(params..., data...) returns the mean loss over its data's leading axis (a real scalar);
/// num_params counts the leading arguments differentiated.
///   auto vg = tf::distributed::value_and_grad(MPI_COMM_WORLD, loss, 2);
///   auto [loss, grads] = vg({w, b}, {tf::distributed::shard(MPI_COMM_WORLD, x), ...});
template <class F>
DataParallelValueAndGrad value_and_grad(MPI_Comm comm, F f, std::size_t num_params) {
  return DataParallelValueAndGrad(comm, tenferro::detail::erase_function(std::move(f)), num_params);
}

/// The elementwise sum over the ranks of each of `values` (float or complex; every rank passes the
/// same types), by the fixed-order ring all-reduce value_and_grad uses: the same bits on every rank
/// and on every run with the same number of ranks. ShapeError if the ranks' types differ.
Tensors sum_over_ranks(MPI_Comm comm, const Tensors& values);

/// Runs `body` on every rank; if it throws on any rank, every rank throws tenferro::Error with the
/// lowest failing rank's message, prefixed "rank r of p: ". The agreement itself is collective.
void agree(MPI_Comm comm, const char* who, const std::function<void()>& body);

}  // namespace tenferro::distributed
