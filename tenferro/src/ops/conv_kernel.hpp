#pragma once
// Internal: conv's CPU kernel (conv_kernel.cpp), used by its op definition (conv.cpp).
#include <cstddef>
#include <cstdint>

#include "family.hpp"

namespace tenferro::detail {

/// eval_conv's block size: it unrolls windows in blocks of about `block_bytes` (small enough to
/// stay in a core's L2 cache between the writes and the GEMM that reads them). Tests lower it to
/// run the blocked loops on small shapes; nothing else changes it (not synchronized).
struct ConvTuning {
  std::size_t block_bytes = std::size_t{1} << 19;
};
ConvTuning& conv_tuning();

/// The convolution `op` (OpKind::Conv, ConvAttrs in any layout) of operands (input, kernel).
Tensor eval_conv(const StdTensorOp& op, Operands in);

}  // namespace tenferro::detail
