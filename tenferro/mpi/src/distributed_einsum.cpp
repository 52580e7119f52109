// A sliced einsum over the ranks of a communicator (distributed.hpp): contiguous, equal ranges of
// slices per rank, partial results gathered to every rank and combined in rank order.
#include <optional>
#include <vector>

#include "agreement.hpp"
#include "tenferro/distributed.hpp"
#include "tenferro/error.hpp"

namespace tenferro::distributed {

Tensor einsum(MPI_Comm comm, std::string_view subscripts, const Tensors& operands, const tn::Options& options,
              EinsumSplit& split) {
  const char* who = "distributed::einsum";
  const auto [rank, size] = rank_and_size(comm, who);
  std::optional<tn::SlicedEinsum> sliced;
  Tensor part;
  agree(comm, who, [&] {
    sliced.emplace(subscripts, operands, options);
    split.slices = sliced->slices();
    split.begin = rank * split.slices / size;
    split.end = (rank + 1) * split.slices / size;
    part = sliced->run(split.begin, split.end);
  });
  // Every rank must hold a part of one type (the same operands' types, the same path).
  require_same(comm, who, "the result " + part.type().to_string() + " along " + sliced->path().print());
  const std::vector<Tensor> parts = allgather(comm, part);
  split.bytes_sent = part.nbytes() * static_cast<std::size_t>(size - 1);
  Tensor out = parts[0].clone();
  for (std::size_t k = 1; k < parts.size(); ++k) sliced->combine(out, parts[k]);
  return out;
}

std::pair<Tensor, Tensors> einsum_vjp(MPI_Comm comm, std::string_view subscripts, const Tensors& operands,
                                      const Tensor& cotangent, const tn::Options& options) {
  const char* who = "distributed::einsum_vjp";
  const auto [rank, size] = rank_and_size(comm, who);
  std::optional<tn::SlicedEinsum> sliced;
  Tensor part;
  Tensors grads;
  agree(comm, who, [&] {
    sliced.emplace(subscripts, operands, options);
    const std::int64_t n = sliced->slices(), begin = rank * n / size, end = (rank + 1) * n / size;
    part = sliced->run(begin, end);
    grads = sliced->vjp(begin, end, cotangent);
  });
  std::string layout = part.type().to_string() + " along " + sliced->path().print();
  for (const Tensor& g : grads) layout += ";" + g.type().to_string();
  require_same(comm, who, layout);
  const std::vector<Tensor> parts = allgather(comm, part);
  Tensor value = parts[0].clone();
  for (std::size_t k = 1; k < parts.size(); ++k) sliced->combine(value, parts[k]);
  return {value, sum_over_ranks(comm, grads)};
}

Tensor einsum(MPI_Comm comm, std::string_view subscripts, const Tensors& operands, const tn::Options& options) {
  EinsumSplit split;
  return einsum(comm, subscripts, operands, options, split);
}

}  // namespace tenferro::distributed
