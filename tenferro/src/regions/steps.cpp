// The step loop of scan and map (steps.hpp).
#include "regions/steps.hpp"

#include <cstddef>
#include <memory>

namespace tenferro::detail {
namespace {

/// Step t of a stacked tensor, sharing its memory (kept alive by `owner`).
Tensor step_of(const Tensor& stacked, std::int64_t t, const std::shared_ptr<void>& owner) {
  TensorType type{stacked.dtype(), Shape(stacked.shape().begin() + 1, stacked.shape().end())};
  const std::size_t bytes = static_cast<std::size_t>(numel(type.shape)) * dtype_size(type.dtype);
  auto* base = static_cast<std::byte*>(const_cast<void*>(stacked.raw_data()));
  return Tensor::wrap(std::move(type), base + static_cast<std::size_t>(t) * bytes, owner);
}

/// The address of step t of a stacked tensor of `length` steps.
std::byte* step_address(const Tensor& stacked, std::int64_t t, std::int64_t length) {
  const auto* base = static_cast<const std::byte*>(stacked.raw_data());
  return const_cast<std::byte*>(base) + static_cast<std::size_t>(t) * (stacked.nbytes() / static_cast<std::size_t>(length));
}

/// The loop on the scalar interpreter's registers (every body value rank-0). The carries are
/// updated in place (run_raw reads every input before writing an output).
void run_steps_scalar(const BodyExecutable& body, std::int64_t length, bool reverse, std::size_t nc,
                      const std::vector<bool>& stacked, std::span<const Tensor* const> in, std::span<Tensor> out) {
  const std::size_t ni = in.size(), no = out.size();
  for (std::size_t i = 0; i < nc; ++i) out[i] = in[i]->clone();
  std::vector<const void*> args(ni);
  std::vector<void*> results(no);
  for (std::size_t i = 0; i < nc; ++i) args[i] = results[i] = out[i].raw_data();
  for (std::size_t i = nc; i < ni; ++i) args[i] = in[i]->raw_data();
  for (std::int64_t step = 0; step < length; ++step) {
    const auto t = static_cast<std::size_t>(reverse ? length - 1 - step : step);
    for (std::size_t i = nc; i < ni; ++i) {
      if (stacked[i - nc]) args[i] = static_cast<const std::byte*>(in[i]->raw_data()) + t * dtype_size(in[i]->dtype());
    }
    for (std::size_t j = nc; j < no; ++j) results[j] = static_cast<std::byte*>(out[j].raw_data()) + t * dtype_size(out[j].dtype());
    body.run_raw(args, results);
  }
}

}  // namespace

void run_steps(const BodyExecutable& body, std::int64_t length, bool reverse, std::size_t nc,
               const std::vector<bool>& stacked, std::span<const Tensor* const> in,
               std::span<const TensorType> out_types, std::span<Tensor> out) {
  const std::size_t ni = in.size(), no = out.size();
  for (std::size_t j = nc; j < no; ++j) out[j] = Tensor::uninitialized(out_types[j]);
  if (body.runs_raw()) return run_steps_scalar(body, length, reverse, nc, stacked, in, out);
  std::vector<Tensor> args(ni);
  std::vector<std::shared_ptr<void>> in_owner(ni), out_owner(no);
  for (std::size_t i = 0; i < ni; ++i) {
    if (i < nc || !stacked[i - nc]) {
      args[i] = *in[i];
    } else {
      in_owner[i] = std::make_shared<Tensor>(*in[i]);
    }
  }
  for (std::size_t j = nc; j < no; ++j) out_owner[j] = std::make_shared<Tensor>(out[j]);
  // Two sets of carry buffers, written alternately (a step reads one and writes the other).
  std::vector<Tensor> buffers[2];
  if (length > 0) {
    for (auto& set : buffers) {
      for (std::size_t i = 0; i < nc; ++i) set.push_back(Tensor::uninitialized(out_types[i]));
    }
  }
  std::vector<Tensor> into(no);
  // The views of step t of each stacked operand and result are made once and moved along the
  // stacked storage (detail::repoint_view): a new view per step cost a shape and a reference
  // count each, and a gradient's scans stack dozens of values per step.
  if (length > 0) {
    for (std::size_t i = nc; i < ni; ++i) {
      if (stacked[i - nc]) args[i] = step_of(*in[i], 0, in_owner[i]);
    }
    for (std::size_t j = nc; j < no; ++j) into[j] = step_of(out[j], 0, out_owner[j]);
  }
  for (std::int64_t step = 0; step < length; ++step) {
    const std::int64_t t = reverse ? length - 1 - step : step;
    for (std::size_t i = nc; i < ni; ++i) {
      if (stacked[i - nc]) repoint_view(args[i], step_address(*in[i], t, length));
    }
    auto& next = buffers[step % 2];
    for (std::size_t i = 0; i < nc; ++i) into[i] = next[i];
    for (std::size_t j = nc; j < no; ++j) repoint_view(into[j], step_address(out[j], t, length));
    body.run(args, into);
    for (std::size_t i = 0; i < nc; ++i) args[i] = next[i];
  }
  for (std::size_t i = 0; i < nc; ++i) out[i] = length == 0 ? in[i]->clone() : args[i];
}

}  // namespace tenferro::detail
