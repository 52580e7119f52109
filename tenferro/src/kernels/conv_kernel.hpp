#pragma once
// Internal: conv's CPU kernel (conv_kernel.cpp), called by the op's definition (ops/conv.cpp).
#include <cstddef>
#include <cstdint>

#include "tenferro/ops/conv_attrs.hpp"
#include "tenferro/tensor.hpp"

namespace tenferro::detail {

/// convolution's block size: it unrolls windows in blocks of about `block_bytes` (small enough to
/// stay in a core's L2 cache between the writes and the GEMM that reads them). Tests lower it to
/// run the blocked loops on small shapes; nothing else changes it (not synchronized).
struct ConvTuning {
  std::size_t block_bytes = std::size_t{1} << 19;
};
ConvTuning& conv_tuning();

/// The convolution of input `x` and kernel `w` described by `attrs` (in any layout), a new tensor
/// of type `out_type` (the op's result type).
Tensor convolution(const ConvAttrs& attrs, const TensorType& out_type, const Tensor& x, const Tensor& w);

}  // namespace tenferro::detail
