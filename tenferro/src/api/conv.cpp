// Convolution and pooling on traced tensors (tenferro/conv.hpp): option lists resolved per spatial
// axis, and the pools as reductions over windows (tiling windows by a reshape, others gathered by
// strided slices).
#include "tenferro/conv.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include "tenferro/indexing.hpp"
#include "tenferro/ops/conv_attrs.hpp"
#include "tenferro/ops/record.hpp"

namespace tenferro {

namespace {

/// `v` as one entry per spatial axis: empty -> `fallback`, one value -> repeated.
std::vector<std::int64_t> per_axis(const char* op, const char* what, const std::vector<std::int64_t>& v,
                                   std::size_t spatial, std::int64_t fallback) {
  if (v.empty()) return std::vector<std::int64_t>(spatial, fallback);
  if (v.size() == 1) return std::vector<std::int64_t>(spatial, v[0]);
  if (v.size() != spatial) {
    throw ShapeError(std::string(op) + ": " + what + " " + shape_to_string(v) + " for " + std::to_string(spatial) +
                     " spatial axes; expected one value or one per axis");
  }
  return v;
}

std::size_t spatial_axes(const char* op, const Traced& x) {
  if (x.rank() < 3) {
    throw ShapeError(std::string(op) + ": input " + x.type().to_string() + "; expected [N, C, spatial..] of rank >= 3");
  }
  return x.rank() - 2;
}

/// The windows of a pool's input, and the axes that run over a window (to be reduced).
struct Windows {
  Traced value;
  std::vector<std::int64_t> axes;
};

/// The windows of x, padded with `fill`. Windows that tile the input (stride == window, the usual
/// pool) are x cut to whole windows and reshaped to [N, C, out_0, window_0, out_1, window_1, ..]:
/// no copy, and a gradient that is a reshape too. Overlapping or gapped windows are gathered by
/// one strided slice per window offset, stacked as a new last axis [N, C, out.., window size].
Windows windows(const char* op, const Traced& x, std::vector<std::int64_t> window, std::vector<std::int64_t> stride,
                std::vector<std::int64_t> padding, double fill) {
  const std::size_t s = spatial_axes(op, x);
  window = per_axis(op, "window", window, s, 1);
  stride = per_axis(op, "stride", stride.empty() ? window : stride, s, 1);
  padding = per_axis(op, "padding", padding, s, 0);
  std::vector<std::int64_t> low(x.rank(), 0), high(x.rank(), 0);
  for (std::size_t d = 0; d < s; ++d) {
    if (window[d] < 1 || stride[d] < 1 || padding[d] < 0 || 2 * padding[d] > window[d]) {
      throw ValueError(std::string(op) + ": window " + shape_to_string(window) + ", stride " + shape_to_string(stride) +
                       ", padding " + shape_to_string(padding) +
                       "; expected windows and strides >= 1 and padding in [0, window / 2]");
    }
    low[d + 2] = high[d + 2] = padding[d];
  }
  const Traced padded = padding == std::vector<std::int64_t>(s, 0) ? x : pad(x, fill, low, high);
  Shape out = {x.shape()[0], x.shape()[1]};
  for (std::size_t d = 0; d < s; ++d) {
    const std::int64_t n = padded.shape()[d + 2];
    if (n < window[d]) {
      throw ShapeError(std::string(op) + ": window " + shape_to_string(window) + " larger than the padded input " +
                       padded.type().to_string());
    }
    out.push_back((n - window[d]) / stride[d] + 1);
  }
  if (stride == window) {
    std::vector<std::int64_t> start(x.rank(), 0), limit(padded.shape().begin(), padded.shape().end()),
        step(x.rank(), 1);
    Shape tiles = {x.shape()[0], x.shape()[1]};
    std::vector<std::int64_t> axes;
    for (std::size_t d = 0; d < s; ++d) {
      limit[d + 2] = out[d + 2] * window[d];
      tiles.push_back(out[d + 2]);
      tiles.push_back(window[d]);
      axes.push_back(static_cast<std::int64_t>(tiles.size()) - 1);
    }
    const bool whole = std::equal(limit.begin(), limit.end(), padded.shape().begin());
    const Traced cut = whole ? padded : slice(padded, start, limit, step);
    return {reshape(cut, tiles), axes};
  }
  // One strided slice per window offset, each [N, C, out..]; stacked as the last axis.
  std::vector<Traced> parts;
  std::vector<std::int64_t> k(s, 0);
  std::int64_t count = 1;
  for (auto w : window) count *= w;
  for (std::int64_t i = 0; i < count; ++i) {
    std::vector<std::int64_t> start(x.rank(), 0), limit(padded.shape().begin(), padded.shape().end()),
        step(x.rank(), 1);
    for (std::size_t d = 0; d < s; ++d) {
      start[d + 2] = k[d];
      limit[d + 2] = k[d] + (out[d + 2] - 1) * stride[d] + 1;
      step[d + 2] = stride[d];
    }
    parts.push_back(slice(padded, start, limit, step));
    for (std::size_t d = s; d-- > 0;) {
      if (++k[d] < window[d]) break;
      k[d] = 0;
    }
  }
  const Traced stacked = stack(parts, -1);
  return {stacked, {static_cast<std::int64_t>(stacked.rank()) - 1}};
}

}  // namespace

Traced conv(const Traced& x, const Traced& w, const ConvOptions& o) {
  const std::size_t s = spatial_axes("conv", x);
  ConvAttrs a;
  a.strides = per_axis("conv", "stride", o.stride, s, 1);
  a.pad_lo = per_axis("conv", "padding", o.padding, s, 0);
  for (auto p : a.pad_lo) {
    if (p < 0) throw ShapeError("conv: padding " + shape_to_string(a.pad_lo) + "; expected values >= 0");
  }
  a.pad_hi = a.pad_lo;
  a.rhs_dilation = per_axis("conv", "dilation", o.dilation, s, 1);
  a.lhs_dilation = per_axis("conv", "lhs_dilation", o.lhs_dilation, s, 1);
  a.groups = o.groups;
  return apply(ops::conv(x.type(), w.type(), std::move(a)), {x, w});
}

Traced avg_pool(const Traced& x, std::vector<std::int64_t> window, std::vector<std::int64_t> stride,
                std::vector<std::int64_t> padding) {
  const Windows win = windows("avg_pool", x, std::move(window), std::move(stride), std::move(padding), 0.0);
  return mean(win.value, win.axes);
}

Traced max_pool(const Traced& x, std::vector<std::int64_t> window, std::vector<std::int64_t> stride,
                std::vector<std::int64_t> padding) {
  if (x.dtype() != DType::F32 && x.dtype() != DType::F64) {
    throw DTypeError("max_pool: input " + x.type().to_string() + "; expected a real float dtype (f32, f64)");
  }
  const Windows win = windows("max_pool", x, std::move(window), std::move(stride), std::move(padding),
                              -std::numeric_limits<double>::infinity());
  return max(win.value, win.axes);
}

}  // namespace tenferro
