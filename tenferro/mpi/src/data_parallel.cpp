// Data-parallel value_and_grad (distributed.hpp): each rank differentiates the loss on its shard;
// the shards' losses and gradients are weighted by their sizes and summed in rank order on every
// rank.
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
  Tensors out;
  for (const Tensor& g : grads) out.push_back(weighted_sum(allgather(comm, g), w));
  return {weighted_sum(allgather(comm, loss), w), std::move(out)};
}

}  // namespace tenferro::distributed
