// Data-parallel value_and_grad (distributed.hpp): each rank differentiates the loss on its shard;
// the shards' losses and gradients are weighted by their sizes and summed. The gradients are summed
// by a ring all-reduce (a reduce-scatter then an all-gather around the ring of ranks, each rank
// sending 2 (p - 1) / p of the gradients' bytes, whatever p), in a fixed order: chunk c of the
// buffer is summed starting at rank c, then c + 1, ..., around the ring, once, and copied to every
// rank. So every rank holds the same bits, and every run with the same number of ranks gives them.
#include <algorithm>
#include <complex>
#include <vector>

#include "agreement.hpp"
#include "tenferro/distributed.hpp"
#include "tenferro/error.hpp"

namespace tenferro::distributed {

namespace {

/// sum_k w[k] * parts[k], in order (the first term w[0] * parts[0]), elementwise.
Tensor weighted_sum(const std::vector<Tensor>& parts, const std::vector<double>& w) {
  Tensor out = Tensor::uninitialized(parts[0].type());
  auto sum = [&]<class T>(T*) {
    T* o = out.data<T>();
    const std::int64_t n = out.numel();
    for (std::int64_t i = 0; i < n; ++i) o[i] = static_cast<T>(w[0]) * parts[0].data<T>()[i];
    for (std::size_t k = 1; k < parts.size(); ++k) {
      const T* p = parts[k].data<T>();
      const T wk = static_cast<T>(w[k]);
      for (std::int64_t i = 0; i < n; ++i) o[i] += wk * p[i];
    }
  };
  switch (out.dtype()) {
    case DType::F32: sum(static_cast<float*>(nullptr)); break;
    case DType::F64: sum(static_cast<double*>(nullptr)); break;
    case DType::C64: sum(static_cast<std::complex<float>*>(nullptr)); break;
    case DType::C128: sum(static_cast<std::complex<double>*>(nullptr)); break;
    case DType::I64:
    case DType::Bool:
      throw DTypeError("distributed::value_and_grad: a gradient of dtype " + std::string(dtype_name(out.dtype())) +
                       "; expected float or complex parameters");
  }
  return out;
}

}  // namespace

DataParallelValueAndGrad::DataParallelValueAndGrad(MPI_Comm comm, tenferro::detail::TracedFunction f,
                                                   std::size_t num_params)
    : comm_(comm), num_params_(num_params) {
  std::vector<std::size_t> argnums;
  for (std::size_t i = 0; i < num_params; ++i) argnums.push_back(i);
  if (num_params == 0) throw ValueError("distributed::value_and_grad: no parameters to differentiate (num_params 0)");
  impl_ = std::make_shared<tenferro::detail::TransformedFunction>(std::move(f), std::move(argnums));
}

namespace {

/// The chunk [c n / p, (c + 1) n / p) of n elements.
std::pair<std::int64_t, std::int64_t> chunk(std::int64_t n, int p, int c) {
  return {c * n / p, (c + 1) * n / p};
}

/// data (n elements of T on every rank) replaced by its sum over the ranks, in the ring's fixed
/// order (see the top of the file). `type` is T's MPI datatype; a complex element is two of them.
template <class T>
void ring_allreduce(MPI_Comm comm, T* data, std::int64_t n, MPI_Datatype type, int per_element) {
  int rank = 0, p = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &p);
  if (p == 1 || n == 0) return;
  const int next = (rank + 1) % p, prev = (rank + p - 1) % p;
  std::vector<T> incoming(static_cast<std::size_t>(n / p + 1));
  // Reduce-scatter: at step s, send the partial sum of chunk rank - s, receive that of chunk
  // rank - s - 1 and add this rank's part to it (received first: the sum runs around the ring).
  for (int s = 0; s < p - 1; ++s) {
    const auto [sb, se] = chunk(n, p, (rank - s + 2 * p) % p);
    const auto [rb, re] = chunk(n, p, (rank - s - 1 + 2 * p) % p);
    MPI_Sendrecv(data + sb, static_cast<int>((se - sb) * per_element), type, next, 0, incoming.data(),
                 static_cast<int>((re - rb) * per_element), type, prev, 0, comm, MPI_STATUS_IGNORE);
    for (std::int64_t i = rb; i < re; ++i) data[i] = incoming[static_cast<std::size_t>(i - rb)] + data[i];
  }
  // All-gather: rank r holds the finished chunk r + 1; pass the finished chunks around.
  for (int s = 0; s < p - 1; ++s) {
    const auto [sb, se] = chunk(n, p, (rank + 1 - s + 2 * p) % p);
    const auto [rb, re] = chunk(n, p, (rank - s + 2 * p) % p);
    MPI_Sendrecv(data + sb, static_cast<int>((se - sb) * per_element), type, next, 1, data + rb,
                 static_cast<int>((re - rb) * per_element), type, prev, 1, comm, MPI_STATUS_IGNORE);
  }
}

/// The gradients scaled by `weight` and summed over the ranks (ring_allreduce), one ring per dtype
/// over all the gradients of that dtype packed together.
Tensors sum_weighted_gradients(MPI_Comm comm, const Tensors& grads, double weight) {
  Tensors out;
  for (const Tensor& g : grads) out.push_back(Tensor::uninitialized(g.type()));
  auto reduce = [&]<class T>(DType dtype, MPI_Datatype type, int per_element) {
    std::size_t total = 0;
    for (const Tensor& g : grads) total += g.dtype() == dtype ? static_cast<std::size_t>(g.numel()) : 0;
    if (total == 0) return;  // every rank skips alike: the types were agreed
    std::vector<T> buffer(total);
    const T w = static_cast<T>(weight);
    for (std::size_t i = 0, at = 0; i < grads.size(); ++i) {
      if (grads[i].dtype() != dtype) continue;
      const T* g = grads[i].data<T>();
      for (std::int64_t k = 0; k < grads[i].numel(); ++k) buffer[at++] = w * g[k];
    }
    ring_allreduce(comm, buffer.data(), static_cast<std::int64_t>(buffer.size()), type, per_element);
    std::size_t at = 0;
    for (std::size_t i = 0; i < grads.size(); ++i) {
      if (grads[i].dtype() != dtype) continue;
      std::copy(buffer.begin() + static_cast<std::ptrdiff_t>(at),
                buffer.begin() + static_cast<std::ptrdiff_t>(at + static_cast<std::size_t>(grads[i].numel())), out[i].data<T>());
      at += static_cast<std::size_t>(grads[i].numel());
    }
  };
  // Every rank runs every dtype's ring (an empty one returns at once), so the rings pair up.
  reduce.template operator()<float>(DType::F32, MPI_FLOAT, 1);
  reduce.template operator()<double>(DType::F64, MPI_DOUBLE, 1);
  reduce.template operator()<std::complex<float>>(DType::C64, MPI_FLOAT, 2);
  reduce.template operator()<std::complex<double>>(DType::C128, MPI_DOUBLE, 2);
  return out;
}

}  // namespace

Tensors sum_over_ranks(MPI_Comm comm, const Tensors& values) {
  const char* who = "distributed::sum_over_ranks";
  rank_and_size(comm, who);
  std::string layout;
  for (const Tensor& v : values) {
    if (!is_inexact(v.dtype())) {
      throw DTypeError(std::string(who) + ": a value of type " + v.type().to_string() + "; expected float or complex values");
    }
    layout += v.type().to_string() + ";";
  }
  require_same(comm, who, layout);
  return sum_weighted_gradients(comm, values, 1.0);
}

std::pair<Tensor, Tensors> DataParallelValueAndGrad::operator()(const Tensors& params, const Tensors& data) const {
  const char* who = "distributed::value_and_grad";
  const MPI_Comm comm = comm_;
  const int size = rank_and_size(comm, who).second;
  Tensor loss;
  Tensors grads;
  std::int64_t examples = 0;
  std::string layout;  // what every rank must agree on: the parameters' types, the data's trailing axes
  agree(comm, who, [&] {
    if (params.size() != num_params_) {
      throw ValueError(std::string(who) + ": " + std::to_string(params.size()) + " parameters given; expected " +
                       std::to_string(num_params_));
    }
    if (data.empty()) throw ValueError(std::string(who) + ": no data to split over the ranks");
    for (const Tensor& p : params) layout += p.type().to_string() + ";";
    for (const Tensor& d : data) {
      if (d.rank() == 0) throw ShapeError(std::string(who) + ": a 0-d data argument has no batch axis");
      if (d.shape()[0] != data[0].shape()[0]) {
        throw ShapeError(std::string(who) + ": the data arguments' batch axes differ (" + data[0].type().to_string() +
                         " and " + d.type().to_string() + ")");
      }
      Shape trailing(d.shape().begin() + 1, d.shape().end());
      layout += std::string(dtype_name(d.dtype())) + TensorType{d.dtype(), trailing}.to_string() + ";";
    }
    examples = data[0].shape()[0];
    Tensors args = params;
    args.insert(args.end(), data.begin(), data.end());
    auto [value, g] = impl_->value_and_grads(args);
    if (value.numel() != 1 || is_complex(value.dtype())) {
      throw DTypeError(std::string(who) + ": the loss is " + value.type().to_string() + "; expected a real scalar");
    }
    loss = value;
    grads = std::move(g);
  });
  require_same(comm, who, "parameters and data " + layout + " loss " + loss.type().to_string());
  // Each shard's weight: its share of the examples.
  std::vector<std::int64_t> counts(static_cast<std::size_t>(size));
  MPI_Allgather(&examples, 1, MPI_INT64_T, counts.data(), 1, MPI_INT64_T, comm);
  std::int64_t total = 0;
  for (std::int64_t c : counts) total += c;
  if (total == 0) throw ValueError(std::string(who) + ": the ranks hold no examples between them");
  std::vector<double> w;
  for (std::int64_t c : counts) w.push_back(static_cast<double>(c) / static_cast<double>(total));
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  Tensors out = sum_weighted_gradients(comm, grads, w[static_cast<std::size_t>(rank)]);
  return {weighted_sum(allgather(comm, loss), w), std::move(out)};
}

}  // namespace tenferro::distributed
