#pragma once
// Internal: conv's CPU kernel (conv_kernel.cpp), used by its op definition (conv.cpp).
#include <cstddef>
#include <cstdint>

#include "family.hpp"

namespace tenferro::detail {

/// eval_conv's size thresholds. It sums over input features (conv_by_feature) instead of
/// unrolling the windows per batch element for windows larger than the output, at least
/// `min_batch` batch elements and a group's kernel rows larger than `min_kernel_bytes`; it unrolls
/// in blocks of about `block_bytes` (small enough to stay in a core's L2 cache between the writes
/// and the GEMM that reads them). Tests lower them to run every path on small shapes; nothing else
/// changes them (not synchronized).
struct ConvTuning {
  std::int64_t min_batch = 4;
  std::size_t min_kernel_bytes = std::size_t{1} << 20;
  std::size_t block_bytes = std::size_t{1} << 19;
};
ConvTuning& conv_tuning();

/// The convolution `op` (OpKind::Conv, ConvAttrs in any layout) of operands (input, kernel).
Tensor eval_conv(const StdTensorOp& op, Operands in);

}  // namespace tenferro::detail
