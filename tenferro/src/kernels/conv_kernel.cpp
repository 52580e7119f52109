// conv's CPU kernel (the op's shape rule and AD rules are in ops/conv.cpp).
//
// Per batch element and group, the input's windows are unrolled into a matrix (im2col:
// [C/G x window, output positions], in blocks of output rows that stay in cache) and multiplied by
// the group's kernel rows with BLAS GEMMs; batch elements run on the threads, each with its own
// unrolled buffer (OpenBLAS runs single-threaded inside them). Windows larger than the output (the
// kernel gradient's convolutions) are summed over input features instead (conv_by_feature), so
// that the GEMMs are not thin.
//
// Layouts (ConvAttrs's batch / feature axes) enter only as element strides: the input's batch and
// feature strides, the kernel's output- and input-feature strides and the result's batch and
// feature strides. A kernel in the [C / G, O, ..] layout is packed into [O, C / G, ..] for the
// im2col paths (kernels are small there); conv_by_feature reads either in place.
#include <algorithm>
#include <complex>
#include <numeric>

#include "blas_gemm.hpp"
#include "conv_kernel.hpp"
#include "tenferro/ops/conv_attrs.hpp"
#include "parallel.hpp"
#include "tenferro/threads.hpp"

namespace tenferro {
namespace detail {
namespace {

/// One line of the unrolled matrix along the last spatial axis: entries [lo, hi) read consecutive
/// input elements from `first`, the rest are zero; `gather` marks a line whose valid entries are
/// not one consecutive run (strides, dilations), which reads the source table entry by entry.
struct Run {
  std::int64_t lo = 0, hi = 0, first = 0;
  bool gather = false;
};

/// The run of the `count` source entries table[0], table[step], ...
Run run_of(const std::int64_t* table, std::int64_t count, std::int64_t step) {
  Run r;
  std::int64_t lo = -1, hi = -1;
  for (std::int64_t i = 0; i < count; ++i) {
    if (table[i * step] < 0) continue;
    if (lo < 0) lo = i;
    hi = i + 1;
  }
  if (lo < 0) return r;
  r.lo = lo;
  r.hi = hi;
  r.first = table[lo * step];
  for (std::int64_t i = lo; i < hi; ++i) r.gather = r.gather || table[i * step] != r.first + (i - lo);
  return r;
}

/// Writes one line of `count` entries: the run's input elements, zeros elsewhere.
template <class T>
void write_line(T* dst, std::int64_t count, const T* base, const Run& run, const std::int64_t* table, std::int64_t step) {
  if (run.gather) {
    for (std::int64_t i = 0; i < count; ++i) {
      const std::int64_t src = table[i * step];
      dst[i] = src < 0 ? T(0) : base[src];
    }
    return;
  }
  std::fill(dst, dst + run.lo, T(0));
  std::copy(base + run.first, base + run.first + (run.hi - run.lo), dst + run.lo);
  std::fill(dst + run.hi, dst + count, T(0));
}

/// The geometry of one conv: per spatial axis, for each window offset k and output position y,
/// the input position it reads (or -1 for padding and the holes of the input dilation).
struct Geometry {
  std::size_t s = 0;
  Shape in, window, out;
  std::vector<std::int64_t> in_strides;              // element strides of one input channel
  std::vector<std::vector<std::int64_t>> source;     // [axis][k * out[axis] + y]
  std::int64_t window_size = 1, out_size = 1, in_size = 1;
  /// The last axis's runs: by window offset (a line over output positions) and by output position
  /// (a line over window offsets).
  std::vector<Run> by_offset, by_output;
};

Geometry geometry(const Shape& lhs, const Shape& rhs, const Shape& out, const ConvAttrs& a) {
  Geometry g;
  g.s = lhs.size() - 2;
  g.in.assign(lhs.begin() + 2, lhs.end());
  g.window.assign(rhs.begin() + 2, rhs.end());
  g.out.assign(out.begin() + 2, out.end());
  g.in_strides.assign(g.s, 1);
  for (std::size_t d = g.s; d-- > 1;) g.in_strides[d - 1] = g.in_strides[d] * g.in[d];
  for (std::size_t d = 0; d < g.s; ++d) {
    g.window_size *= g.window[d];
    g.out_size *= g.out[d];
    g.in_size *= g.in[d];
    std::vector<std::int64_t> src(static_cast<std::size_t>(g.window[d] * g.out[d]));
    for (std::int64_t k = 0; k < g.window[d]; ++k) {
      for (std::int64_t y = 0; y < g.out[d]; ++y) {
        const std::int64_t p = y * a.strides[d] + k * a.rhs_dilation[d] - a.pad_lo[d];  // in the dilated input
        const bool hit = p >= 0 && p % a.lhs_dilation[d] == 0 && p / a.lhs_dilation[d] < g.in[d];
        src[static_cast<std::size_t>(k * g.out[d] + y)] = hit ? p / a.lhs_dilation[d] : -1;
      }
    }
    g.source.push_back(std::move(src));
  }
  if (g.s > 0) {
    const std::vector<std::int64_t>& last = g.source.back();
    const std::int64_t kn = g.window.back(), yn = g.out.back();
    for (std::int64_t k = 0; k < kn; ++k) g.by_offset.push_back(run_of(last.data() + k * yn, yn, 1));
    for (std::int64_t y = 0; y < yn; ++y) g.by_output.push_back(run_of(last.data() + y, kn, yn));
  }
  return g;
}

/// Unrolled by window offset: writes the output positions of window offset `k` (a multi-index)
/// of one input channel into `row`, axis by axis; `block` is the number of output positions below
/// axis d (out_size at d = 0). At d = 0 of a multi-axis conv only the positions [lo, hi) of axis 0
/// are written (hi < 0: all), so that a caller can unroll the output in blocks of rows.
template <class T>
void unroll_offset(const Geometry& g, const std::vector<std::int64_t>& k, const T* channel, T* row, std::size_t d,
                   std::int64_t block, std::int64_t lo = 0, std::int64_t hi = -1) {
  const std::int64_t* src = g.source[d].data() + k[d] * g.out[d];
  if (d + 1 == g.s) {
    write_line(row, g.out[d], channel, g.by_offset[static_cast<std::size_t>(k[d])], src, 1);
    return;
  }
  const std::int64_t inner = block / g.out[d];
  if (hi < 0) hi = g.out[d];
  for (std::int64_t y = lo; y < hi; ++y) {
    T* dst = row + (y - lo) * inner;
    if (src[y] < 0) {
      std::fill(dst, dst + inner, T(0));
    } else {
      unroll_offset(g, k, channel + src[y] * g.in_strides[d], dst, d + 1, inner);
    }
  }
}

/// Unrolled by output position: writes the window of output position `y` (a multi-index) of one
/// input channel into `row` (window_size entries), axis by axis; `block` is the number of window
/// entries below axis d (window_size at d = 0). At d = 0 of a multi-axis conv only the window
/// offsets [lo, hi) of axis 0 are written (hi < 0: all), so that a caller can unroll windows in
/// blocks of rows.
template <class T>
void unroll_output(const Geometry& g, const std::vector<std::int64_t>& y, const T* channel, T* row, std::size_t d,
                   std::int64_t block, std::int64_t lo = 0, std::int64_t hi = -1) {
  const std::int64_t* src = g.source[d].data() + y[d];  // entry k at src[k * out[d]]
  if (d + 1 == g.s) {
    write_line(row, g.window[d], channel, g.by_output[static_cast<std::size_t>(y[d])], src, g.out[d]);
    return;
  }
  const std::int64_t inner = block / g.window[d];
  if (hi < 0) hi = g.window[d];
  for (std::int64_t k = lo; k < hi; ++k) {
    T* dst = row + (k - lo) * inner;
    const std::int64_t from = src[k * g.out[d]];
    if (from < 0) {
      std::fill(dst, dst + inner, T(0));
    } else {
      unroll_output(g, y, channel + from * g.in_strides[d], dst, d + 1, inner);
    }
  }
}

/// Steps the multi-index `i` over `shape`, last axis fastest.
void advance(std::vector<std::int64_t>& i, const Shape& shape) {
  for (std::size_t d = i.size(); d-- > 0;) {
    if (++i[d] < shape[d]) return;
    i[d] = 0;
  }
}

/// For each window offset kk and output position y (flat, last axis fastest), the offset of the
/// input element they read within one channel, or -1 for padding and dilation holes: the unrolled
/// matrix of a small conv as one gather per entry, with none of the per-line work of the run copies.
std::vector<std::int64_t> gather_table(const Geometry& g) {
  std::vector<std::int64_t> table(static_cast<std::size_t>(g.window_size * g.out_size));
  std::vector<std::int64_t> k(g.s, 0), y(g.s, 0);
  for (std::int64_t kk = 0; kk < g.window_size; ++kk, advance(k, g.window)) {
    std::fill(y.begin(), y.end(), 0);
    for (std::int64_t yy = 0; yy < g.out_size; ++yy, advance(y, g.out)) {
      std::int64_t offset = 0;
      for (std::size_t d = 0; d < g.s && offset >= 0; ++d) {
        const std::int64_t src = g.source[d][static_cast<std::size_t>(k[d] * g.out[d] + y[d])];
        offset = src < 0 ? -1 : offset + src * g.in_strides[d];
      }
      table[static_cast<std::size_t>(kk * g.out_size + yy)] = offset;
    }
  }
  return table;
}

/// Element strides of one conv's operands in their layouts (ConvAttrs's batch and feature axes).
struct Strides {
  std::int64_t x_batch = 0, x_feature = 0;  // input
  std::int64_t w_out = 0, w_in = 0;         // kernel: output feature, input feature within a group
  std::int64_t y_batch = 0, y_feature = 0;  // result
};

Strides strides_of(const ConvAttrs& a, const Geometry& g, std::int64_t n_batch, std::int64_t c, std::int64_t o) {
  const std::int64_t cg = c / a.groups;
  Strides st;
  st.x_batch = a.lhs_batch_axis == 0 ? c * g.in_size : g.in_size;
  st.x_feature = a.lhs_batch_axis == 0 ? g.in_size : n_batch * g.in_size;
  st.w_out = a.rhs_out_axis == 0 ? cg * g.window_size : g.window_size;
  st.w_in = a.rhs_out_axis == 0 ? g.window_size : o * g.window_size;
  st.y_batch = a.out_batch_axis == 0 ? o * g.out_size : g.out_size;
  st.y_feature = a.out_batch_axis == 0 ? g.out_size : n_batch * g.out_size;
  return st;
}

/// The convolution as a sum over input features, for windows larger than the output (the kernel
/// gradient's convolutions: the window is the forward output, the output the forward window).
/// Per batch element, im2col would give a thin GEMM ([og x cg * window] times [cg * window x out],
/// out as small as 9) that reads the whole kernel once per batch element. Here, per group and input
/// feature f, the windows of every batch element are unrolled by output position into
/// cols [batch * out, window] (long consecutive runs of the input), in blocks of window rows that
/// stay in cache, and the kernel's block of feature f [og, window block] times cols^T is added into
/// a partial sum [og, batch * out]: GEMMs of [og x window block] times [window block x batch * out].
/// The features are split into a fixed number of chunks (set by the sizes, never by the thread
/// count), each summed in order by one thread into its own partial sum with single-threaded GEMMs;
/// the partial sums are then added in chunk order, so the result does not depend on the thread
/// count.
template <class T>
void conv_by_feature(const Geometry& g, const ConvAttrs& a, const Strides& st, const T* xs, const T* ws, T* out,
                     std::int64_t n_batch, std::int64_t c, std::int64_t o) {
  const std::int64_t cg = c / a.groups, og = o / a.groups, width = n_batch * g.out_size;
  // Blocks of rows of the window's axis 0 (a 1-D window in one block).
  const std::int64_t axis0 = g.s >= 2 ? g.window[0] : 1, inner = g.window_size / axis0;
  const std::int64_t block_rows = std::clamp<std::int64_t>(
      static_cast<std::int64_t>(conv_tuning().block_bytes / (sizeof(T) * static_cast<std::size_t>(width * inner))), 1, axis0);
  // Up to 16 chunks, and at most 64 MiB of partial sums.
  const std::size_t part = static_cast<std::size_t>(og * width);
  const std::int64_t fit = static_cast<std::int64_t>((std::size_t{64} << 20) / (sizeof(T) * part));
  const std::int64_t chunks = std::clamp<std::int64_t>(std::min<std::int64_t>(cg, fit), 1, 16);
  std::vector<T> partial(static_cast<std::size_t>(chunks) * part);
  const double flops = 2.0 * static_cast<double>(og * width) * static_cast<double>(cg * g.window_size);
  const int threads = flops > 4e6 ? static_cast<int>(std::min<std::int64_t>(num_threads(), chunks)) : 1;
  for (std::int64_t grp = 0; grp < a.groups; ++grp) {
    exec::parallel_chunks(chunks, threads, [&](std::int64_t chunk) {
      std::vector<T> cols(static_cast<std::size_t>(width * block_rows * inner));
      std::vector<std::int64_t> y(g.s, 0);
      T* sum = partial.data() + static_cast<std::size_t>(chunk) * part;
      bool first = true;
      for (std::int64_t f = chunk * cg / chunks; f < (chunk + 1) * cg / chunks; ++f) {
        const T* feature = xs + (grp * cg + f) * st.x_feature;
        const T* kernel = ws + grp * og * st.w_out + f * st.w_in;
        for (std::int64_t lo = 0; lo < axis0; lo += block_rows) {
          const std::int64_t hi = std::min(lo + block_rows, axis0), depth = (hi - lo) * inner;
          std::fill(y.begin(), y.end(), 0);
          for (std::int64_t col = 0; col < width; ++col) {  // col = (b, output position y)
            unroll_output(g, y, feature + (col / g.out_size) * st.x_batch, cols.data() + col * depth, 0,
                          g.window_size, lo, axis0 > 1 ? hi : -1);
            advance(y, g.out);
          }
          gemm_rows<T>(kernel + lo * inner, cols.data(), sum, og, width, depth, true, st.w_out, !first);
          first = false;
        }
      }
    });
    // out[b, grp og + o, y] (or out[grp og + o, b, y]) = the partial sums [o, (b, y)] added in order.
    exec::parallel_ranges(og * n_batch, threads, [&](std::int64_t row_lo, std::int64_t row_hi) {
      for (std::int64_t row = row_lo; row < row_hi; ++row) {
        const std::int64_t oo = row / n_batch, b = row % n_batch;
        T* dst = out + b * st.y_batch + (grp * og + oo) * st.y_feature;
        const std::size_t at = static_cast<std::size_t>(oo * width + b * g.out_size);
        std::copy(partial.data() + at, partial.data() + at + static_cast<std::size_t>(g.out_size), dst);
        for (std::int64_t chunk = 1; chunk < chunks; ++chunk) {
          const T* from = partial.data() + static_cast<std::size_t>(chunk) * part + at;
          for (std::int64_t i = 0; i < g.out_size; ++i) dst[i] += from[i];
        }
      }
    });
  }
}

/// The kernel in the [O, C / G, window..] layout: `ws` itself, or packed into `packed`.
template <class T>
const T* kernel_rows(const ConvAttrs& a, const T* ws, std::int64_t o, std::int64_t cg, std::int64_t window_size,
                     std::vector<T>& packed) {
  if (a.rhs_out_axis == 0) return ws;
  packed.resize(static_cast<std::size_t>(o * cg * window_size));
  for (std::int64_t oo = 0; oo < o; ++oo) {
    for (std::int64_t ci = 0; ci < cg; ++ci) {
      const T* from = ws + (ci * o + oo) * window_size;
      std::copy(from, from + window_size, packed.data() + (oo * cg + ci) * window_size);
    }
  }
  return packed.data();
}

}  // namespace

ConvTuning& conv_tuning() {
  static ConvTuning tuning;
  return tuning;
}

Tensor convolution(const ConvAttrs& a, const TensorType& out_type, const Tensor& x, const Tensor& w) {
  Tensor r = Tensor::uninitialized(out_type);
  const Geometry g = geometry(x.shape(), w.shape(), out_type.shape, a);
  const std::int64_t n_batch = x.shape()[static_cast<std::size_t>(a.lhs_batch_axis)];
  const std::int64_t c = x.shape()[static_cast<std::size_t>(1 - a.lhs_batch_axis)];
  const std::int64_t o = w.shape()[static_cast<std::size_t>(a.rhs_out_axis)];
  const std::int64_t cg = c / a.groups, og = o / a.groups, rows = cg * g.window_size;
  const Strides st = strides_of(a, g, n_batch, c, o);
  visit_dtype(x.dtype(), [&](auto zero) {
    using T = decltype(zero);
    if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, c64> || std::is_same_v<T, c128>) {
      T* out = r.data<T>();
      if (r.numel() == 0) return;
      if (rows == 0) {
        std::fill(out, out + r.numel(), T(0));
        return;
      }
      const T* xs = x.data<T>();
      // Windows larger than the output (kernel gradients) are summed over features: GEMMs as long
      // as the window instead of as thin as the output, and no gather of one long line per output
      // position (the gradient of a 3 x 3 kernel over 64 images of 12 x 12: 0.56 -> 0.09 ms).
      const ConvTuning& tuning = conv_tuning();
      if (g.window_size > g.out_size) {
        conv_by_feature(g, a, st, xs, w.data<T>(), out, n_batch, c, o);
        return;
      }
      std::vector<T> packed;
      const T* ws = kernel_rows(a, w.data<T>(), o, cg, g.window_size, packed);
      const double flops = 2.0 * static_cast<double>(n_batch * o * rows * g.out_size);
      const int threads = n_batch > 1 && flops > 4e6 ? std::min<int>(num_threads(), static_cast<int>(n_batch)) : 1;
      // The unrolled matrix's layout: lines along the last axis's output positions (for each
      // channel and window offset), or, when the window is longer than the output along it, lines
      // along the window (for each output position), so the copies are long consecutive runs
      // either way.
      const bool by_output = g.s > 0 && g.window.back() > g.out.back();
      // By window offset, the output positions are unrolled in blocks of whole rows of axis 0 (all
      // of them for a 1-D conv), about block_bytes of unrolled matrix each, so that each block is
      // still in cache when its GEMM reads it.
      const std::int64_t axis0 = g.s >= 2 && !by_output ? g.out[0] : 1, inner = g.out_size / axis0;
      const std::int64_t block_rows = std::clamp<std::int64_t>(
          static_cast<std::int64_t>(tuning.block_bytes / (sizeof(T) * static_cast<std::size_t>(rows * inner))), 1, axis0);
      // Short lines (small outputs, or small windows when unrolled by output position) unroll
      // through a gather table instead of line by line.
      const std::int64_t line = g.s == 0 ? 1 : by_output ? g.window.back() : g.out.back();
      const std::vector<std::int64_t> table =
          line < 16 && g.window_size * g.out_size <= (std::int64_t{1} << 20) ? gather_table(g) : std::vector<std::int64_t>{};
      const std::int64_t ldc = st.y_feature;  // result rows (output features) of one batch element
      auto batch_range = [&](std::int64_t b_lo, std::int64_t b_hi) {
        std::vector<T> cols(static_cast<std::size_t>(rows * (by_output || !table.empty() ? g.out_size : block_rows * inner)));
        std::vector<std::int64_t> i(g.s, 0);
        for (std::int64_t b = b_lo; b < b_hi; ++b) {
          for (std::int64_t grp = 0; grp < a.groups; ++grp) {
            const T* first_channel = xs + b * st.x_batch + grp * cg * st.x_feature;
            T* result = out + b * st.y_batch + grp * og * st.y_feature;
            if (!table.empty()) {  // cols[y, ci * window_size + kk] or cols[ci * window_size + kk, y]
              for (std::int64_t ci = 0; ci < cg; ++ci) {
                const T* channel = first_channel + ci * st.x_feature;
                for (std::int64_t kk = 0; kk < g.window_size; ++kk) {
                  const std::int64_t* from = table.data() + kk * g.out_size;
                  const std::int64_t row = ci * g.window_size + kk;
                  for (std::int64_t y = 0; y < g.out_size; ++y) {
                    const T v = from[y] < 0 ? T(0) : channel[from[y]];
                    cols[static_cast<std::size_t>(by_output ? y * rows + row : row * g.out_size + y)] = v;
                  }
                }
              }
              gemm_rows<T>(ws + grp * og * rows, cols.data(), result, og, g.out_size, rows, by_output, 0, false, ldc);
              continue;
            }
            if (by_output) {  // cols[y, ci * window_size + kk]
              std::fill(i.begin(), i.end(), 0);
              for (std::int64_t y = 0; y < g.out_size; ++y, advance(i, g.out)) {
                for (std::int64_t ci = 0; ci < cg; ++ci) {
                  unroll_output(g, i, first_channel + ci * st.x_feature, cols.data() + y * rows + ci * g.window_size, 0,
                                g.window_size);
                }
              }
              gemm_rows<T>(ws + grp * og * rows, cols.data(), result, og, g.out_size, rows, true, 0, false, ldc);
              continue;
            }
            for (std::int64_t lo = 0; lo < axis0; lo += block_rows) {  // cols[ci * window_size + kk, y]
              const std::int64_t hi = std::min(lo + block_rows, axis0), width = (hi - lo) * inner;
              for (std::int64_t ci = 0; ci < cg; ++ci) {
                std::fill(i.begin(), i.end(), 0);
                for (std::int64_t kk = 0; kk < g.window_size; ++kk, advance(i, g.window)) {
                  unroll_offset(g, i, first_channel + ci * st.x_feature,
                                cols.data() + (ci * g.window_size + kk) * width, 0, g.out_size, lo, axis0 > 1 ? hi : -1);
                }
              }
              gemm_rows<T>(ws + grp * og * rows, cols.data(), result + lo * inner, og, width, rows, false, 0, false, ldc);
            }
          }
        }
      };
      // One batch element alone keeps the threads for its GEMMs (split_gemm).
      if (threads <= 1) {
        batch_range(0, n_batch);
      } else {
        exec::parallel_ranges(n_batch, threads, batch_range);
      }
    }
  });
  return r;
}

}  // namespace detail
}  // namespace tenferro
