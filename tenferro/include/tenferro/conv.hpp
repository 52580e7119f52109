#pragma once
// Convolution and pooling on traced tensors, PyTorch's layouts: input [N, C, spatial..], kernel
// [O, C / groups, window..], result [N, O, spatial'..], any number of spatial axes (1-D, 2-D,
// 3-D, ...). conv is one primitive (src/ops/conv.cpp: unrolled windows times the kernel in one
// GEMM per batch element and group); its JVP and both transposes are convolutions, so every
// derivative order works. The pools are composites of pad, slice and reductions.
#include <cstdint>
#include <vector>

#include "tenferro/traced.hpp"

namespace tenferro {

/// conv's options. Each list is empty (the default: stride 1, no padding, no dilation), one value
/// for every spatial axis, or one per spatial axis.
struct ConvOptions {
  // Default member initializers on every field, so that designated initializers naming only some
  // ({.padding = {1}}) compile cleanly under -Wextra.
  std::vector<std::int64_t> stride = {};        ///< >= 1
  std::vector<std::int64_t> padding = {};       ///< zeros before and after each spatial axis (>= 0)
  std::vector<std::int64_t> dilation = {};      ///< of the kernel (>= 1), as torch's dilation
  std::vector<std::int64_t> lhs_dilation = {};  ///< of the input (>= 1): the transposed convolution's stride
  std::int64_t groups = 1;                 ///< feature groups: C and O divisible by it
};

/// The cross-correlation of torch.nn.functional.conv{1,2,3}d (no kernel flip), for f32, f64, c64
/// and c128. Complex inputs convolve without conjugation.
Traced conv(const Traced& x, const Traced& w, const ConvOptions& options = {});

/// The mean over each window (count_include_pad: padded zeros count), as torch's avg_pool{1,2,3}d.
/// `window` and `stride` (default: the window) and `padding` (default 0) per spatial axis or one
/// value for all.
Traced avg_pool(const Traced& x, std::vector<std::int64_t> window, std::vector<std::int64_t> stride = {},
                std::vector<std::int64_t> padding = {});
/// The maximum over each window (padding never wins), as torch's max_pool{1,2,3}d; real dtypes.
/// The derivative goes to the window's maximum; at ties it is split equally, as reduce_max's is.
Traced max_pool(const Traced& x, std::vector<std::int64_t> window, std::vector<std::int64_t> stride = {},
                std::vector<std::int64_t> padding = {});

}  // namespace tenferro
