// conv: N-dimensional convolution with strides, padding, input and kernel dilation and feature
// groups (StableHLO's convolution with fixed layouts). Order: attributes, shape rule, kernel, AD
// rules, definition.
//
// Kernel: per batch element and group, the input's windows are unrolled into a matrix (im2col:
// [C/G x window, output positions], in blocks of output rows that stay in cache) and multiplied by
// the group's kernel rows with BLAS GEMMs; batch elements run on the threads, each with its own
// unrolled buffer (OpenBLAS runs single-threaded inside them). Windows larger than the output (the
// kernel gradient's convolutions) are summed over input features instead (conv_by_feature), so
// that the GEMMs are not thin.
//
// Derivatives: conv is bilinear, so its JVP is conv(dx, w) + conv(x, dw), and each transpose is
// again a conv (so every order works):
// - input: ct_x = conv(ct, w'), w' the kernel with its groups' in/out features swapped, its window
//   flipped and conjugated; the forward strides become the input dilation, the forward input
//   dilation the strides, and the padding is lo' = k~ - 1 - lo, hi' = x~ + k~ - 1 - y~ - lo' with
//   x~, k~, y~ the dilated extents of input, window and result.
// - kernel: per group, ct_w = conv(conj(x) with batch and features swapped, ct likewise), the
//   forward kernel dilation becoming the strides and the forward strides the kernel dilation,
//   padding lo, hi' = y~ - x~ + k~ - 1 - lo; the groups' results are placed along the output
//   features by pad and summed.
#include <algorithm>
#include <complex>
#include <numeric>

#include "blas_gemm.hpp"
#include "emit.hpp"
#include "family.hpp"
#include "tenferro/ops/conv_attrs.hpp"
#include "tenferro/ops/index_attrs.hpp"
#include "tenferro/threads.hpp"

namespace tenferro {

void ConvAttrs::print(std::ostream& os) const {
  os << "strides=" << shape_to_string(strides) << ", pad=" << shape_to_string(pad_lo) << "/" << shape_to_string(pad_hi)
     << ", lhs_dilation=" << shape_to_string(lhs_dilation) << ", rhs_dilation=" << shape_to_string(rhs_dilation)
     << ", groups=" << groups;
}

namespace {
/// (n - 1) d + 1: the extent of n elements d apart (0 for n = 0).
std::int64_t dilated(std::int64_t n, std::int64_t d) { return n == 0 ? 0 : (n - 1) * d + 1; }
}  // namespace

namespace ops {
StdTensorOp conv(const TensorType& lhs, const TensorType& rhs, ConvAttrs a) {
  auto fail = [&](const std::string& why) {
    throw ShapeError("conv: input " + lhs.to_string() + ", kernel " + rhs.to_string() + ": " + why);
  };
  if (lhs.dtype != rhs.dtype || !is_inexact(lhs.dtype)) {
    throw DTypeError("conv: input " + lhs.to_string() + ", kernel " + rhs.to_string() +
                     "; expected one float or complex dtype (f32, f64, c64, c128)");
  }
  if (lhs.rank() < 3 || rhs.rank() != lhs.rank()) {
    fail("expected input [N, C, spatial..] and kernel [O, C / groups, window..] of one rank >= 3");
  }
  const std::size_t s = lhs.rank() - 2;
  for (const auto* v : {&a.strides, &a.pad_lo, &a.pad_hi, &a.lhs_dilation, &a.rhs_dilation}) {
    if (v->size() != s) fail("expected " + std::to_string(s) + " entries per list of strides, padding and dilations");
  }
  for (std::size_t k = 0; k < s; ++k) {
    if (a.strides[k] < 1 || a.lhs_dilation[k] < 1 || a.rhs_dilation[k] < 1) {
      fail("strides " + shape_to_string(a.strides) + ", dilations " + shape_to_string(a.lhs_dilation) + " and " +
           shape_to_string(a.rhs_dilation) + " must be >= 1");
    }
  }
  const std::int64_t c = lhs.shape[1], o = rhs.shape[0];
  if (a.groups < 1 || c % a.groups != 0 || o % a.groups != 0 || rhs.shape[1] * a.groups != c) {
    fail(std::to_string(a.groups) + " feature groups: expected the input's features (" + std::to_string(c) +
         ") and the kernel's outputs (" + std::to_string(o) + ") to split into that many groups, and kernel axis 1 of " +
         "length features / groups");
  }
  Shape out = {lhs.shape[0], o};
  for (std::size_t k = 0; k < s; ++k) {
    const std::int64_t in = dilated(lhs.shape[k + 2], a.lhs_dilation[k]) + a.pad_lo[k] + a.pad_hi[k];
    const std::int64_t window = dilated(rhs.shape[k + 2], a.rhs_dilation[k]);
    if (in < 0) fail("padding cuts spatial axis " + std::to_string(k) + " below length 0");
    out.push_back(in >= window && window > 0 ? (in - window) / a.strides[k] + 1 : 0);
  }
  return detail::make(OpKind::Conv, TensorType{lhs.dtype, std::move(out)}, OpAttrs(std::move(a)));
}
}  // namespace ops

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
/// input channel into `row` (window_size entries), axis by axis.
template <class T>
void unroll_output(const Geometry& g, const std::vector<std::int64_t>& y, const T* channel, T* row, std::size_t d,
                   std::int64_t block) {
  const std::int64_t* src = g.source[d].data() + y[d];  // entry k at src[k * out[d]]
  if (d + 1 == g.s) {
    write_line(row, g.window[d], channel, g.by_output[static_cast<std::size_t>(y[d])], src, g.out[d]);
    return;
  }
  const std::int64_t inner = block / g.window[d];
  for (std::int64_t k = 0; k < g.window[d]; ++k) {
    const std::int64_t from = src[k * g.out[d]];
    if (from < 0) {
      std::fill(row + k * inner, row + (k + 1) * inner, T(0));
    } else {
      unroll_output(g, y, channel + from * g.in_strides[d], row + k * inner, d + 1, inner);
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

/// The multi-index of flat position `flat` over `shape` (last axis fastest).
void unflatten(std::int64_t flat, const Shape& shape, std::vector<std::int64_t>& i) {
  for (std::size_t d = shape.size(); d-- > 0;) {
    i[d] = flat % shape[d];
    flat /= shape[d];
  }
}

/// The convolution as a sum over input features, for windows larger than the output (the kernel
/// gradient's convolutions of large layers: the window is the forward output, the output the
/// forward window).
/// Per batch element, im2col would give a thin GEMM ([og x cg * window] times [cg * window x out],
/// out as small as 9) that reads the whole kernel once per batch element. Here, per group and input
/// feature f, the windows of every batch element are unrolled by output position into
/// cols [batch * out, window] (long consecutive runs of the input) and the kernel's block of feature
/// f [og, window] times cols^T is added into acc [og, batch * out]: GEMMs of [og x window] times
/// [window x batch * out], the kernel read once. The features are summed in order; rows of cols are unrolled on the threads and each GEMM
/// runs on OpenBLAS's (which split rows and columns, never the sums), so the result does not
/// depend on the thread count.
template <class T>
void conv_by_feature(const Geometry& g, const ConvAttrs& a, const T* xs, const T* ws, T* out, std::int64_t n_batch,
                     std::int64_t c, std::int64_t o) {
  const std::int64_t cg = c / a.groups, og = o / a.groups, width = n_batch * g.out_size;
  std::vector<T> cols(static_cast<std::size_t>(g.window_size * width)), acc(static_cast<std::size_t>(og * width));
  const double copies = static_cast<double>(g.window_size * width);
  const int threads = copies > 1e5 ? num_threads() : 1;
  for (std::int64_t grp = 0; grp < a.groups; ++grp) {
    for (std::int64_t f = 0; f < cg; ++f) {
#pragma omp parallel num_threads(threads)
      {
        std::vector<std::int64_t> y(g.s, 0);
#pragma omp for schedule(static)
        for (std::int64_t col = 0; col < width; ++col) {  // col = (b, output position)
          const std::int64_t b = col / g.out_size;
          unflatten(col % g.out_size, g.out, y);
          unroll_output(g, y, xs + (b * c + grp * cg + f) * g.in_size, cols.data() + col * g.window_size, 0,
                        g.window_size);
        }
      }
      gemm_rows<T>(ws + (grp * og * cg + f) * g.window_size, cols.data(), acc.data(), og, width, g.window_size, true,
                   cg * g.window_size, f > 0);
    }
    for (std::int64_t b = 0; b < n_batch; ++b) {  // acc[o, (b, y)] -> out[b, grp og + o, y]
      for (std::int64_t oo = 0; oo < og; ++oo) {
        const T* from = acc.data() + oo * width + b * g.out_size;
        std::copy(from, from + g.out_size, out + (b * o + grp * og + oo) * g.out_size);
      }
    }
  }
}

Tensor eval_conv(const StdTensorOp& op, Operands in) {
  const Tensor& x = *in[0];
  const Tensor& w = *in[1];
  const auto& a = op.attrs.get<ConvAttrs>();
  Tensor r = Tensor::uninitialized(op.out);
  const Geometry g = geometry(x.shape(), w.shape(), op.out.shape, a);
  const std::int64_t n_batch = x.shape()[0], c = x.shape()[1], o = w.shape()[0];
  const std::int64_t cg = c / a.groups, og = o / a.groups, rows = cg * g.window_size;
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
      const T* ws = w.data<T>();
      // Summed over features when that spares re-reading a large kernel once per batch element:
      // windows larger than the output, several batch elements, a group's kernel rows past 1 MiB.
      const std::size_t kernel_bytes = sizeof(T) * static_cast<std::size_t>(og * rows);
      if (g.window_size > g.out_size && n_batch >= 4 && kernel_bytes > (std::size_t{1} << 20)) {
        conv_by_feature(g, a, xs, ws, out, n_batch, c, o);
        return;
      }
      const double flops = 2.0 * static_cast<double>(n_batch * o * rows * g.out_size);
      const int threads = n_batch > 1 && flops > 4e6 ? std::min<int>(num_threads(), static_cast<int>(n_batch)) : 1;
      // The unrolled matrix's layout: lines along the last axis's output positions (for each
      // channel and window offset), or, when the window is longer than the output along it, lines
      // along the window (for each output position), so the copies are long consecutive runs
      // either way.
      const bool by_output = g.s > 0 && g.window.back() > g.out.back();
      // By window offset, the output positions are unrolled in blocks of whole rows of axis 0 (all
      // of them for a 1-D conv), about kBlockBytes of unrolled matrix each, so that each block is
      // still in cache when its GEMM reads it.
      constexpr std::size_t kBlockBytes = std::size_t{1} << 19;
      const std::int64_t axis0 = g.s >= 2 && !by_output ? g.out[0] : 1, inner = g.out_size / axis0;
      const std::int64_t block_rows = std::clamp<std::int64_t>(
          static_cast<std::int64_t>(kBlockBytes / (sizeof(T) * static_cast<std::size_t>(rows * inner))), 1, axis0);
      // Short lines (small outputs, or small windows when unrolled by output position) unroll
      // through a gather table instead of line by line.
      const std::int64_t line = g.s == 0 ? 1 : by_output ? g.window.back() : g.out.back();
      const std::vector<std::int64_t> table =
          line < 16 && g.window_size * g.out_size <= (std::int64_t{1} << 20) ? gather_table(g) : std::vector<std::int64_t>{};
#pragma omp parallel num_threads(threads)
      {
        std::vector<T> cols(static_cast<std::size_t>(rows * (by_output || !table.empty() ? g.out_size : block_rows * inner)));
        std::vector<std::int64_t> i(g.s, 0);
#pragma omp for schedule(static)
        for (std::int64_t b = 0; b < n_batch; ++b) {
          for (std::int64_t grp = 0; grp < a.groups; ++grp) {
            const T* first_channel = xs + (b * c + grp * cg) * g.in_size;
            T* result = out + (b * o + grp * og) * g.out_size;
            if (!table.empty()) {  // cols[y, ci * window_size + kk] or cols[ci * window_size + kk, y]
              for (std::int64_t ci = 0; ci < cg; ++ci) {
                const T* channel = first_channel + ci * g.in_size;
                for (std::int64_t kk = 0; kk < g.window_size; ++kk) {
                  const std::int64_t* from = table.data() + kk * g.out_size;
                  const std::int64_t row = ci * g.window_size + kk;
                  for (std::int64_t y = 0; y < g.out_size; ++y) {
                    const T v = from[y] < 0 ? T(0) : channel[from[y]];
                    cols[static_cast<std::size_t>(by_output ? y * rows + row : row * g.out_size + y)] = v;
                  }
                }
              }
              gemm_rows<T>(ws + grp * og * rows, cols.data(), result, og, g.out_size, rows, by_output);
              continue;
            }
            if (by_output) {  // cols[y, ci * window_size + kk]
              std::fill(i.begin(), i.end(), 0);
              for (std::int64_t y = 0; y < g.out_size; ++y, advance(i, g.out)) {
                for (std::int64_t ci = 0; ci < cg; ++ci) {
                  unroll_output(g, i, first_channel + ci * g.in_size, cols.data() + y * rows + ci * g.window_size, 0,
                                g.window_size);
                }
              }
              gemm_rows<T>(ws + grp * og * rows, cols.data(), result, og, g.out_size, rows, true);
              continue;
            }
            for (std::int64_t lo = 0; lo < axis0; lo += block_rows) {  // cols[ci * window_size + kk, y]
              const std::int64_t hi = std::min(lo + block_rows, axis0), width = (hi - lo) * inner;
              for (std::int64_t ci = 0; ci < cg; ++ci) {
                std::fill(i.begin(), i.end(), 0);
                for (std::int64_t kk = 0; kk < g.window_size; ++kk, advance(i, g.window)) {
                  unroll_offset(g, i, first_channel + ci * g.in_size, cols.data() + (ci * g.window_size + kk) * width,
                                0, g.out_size, lo, axis0 > 1 ? hi : -1);
                }
              }
              gemm_rows<T>(ws + grp * og * rows, cols.data(), result + lo * inner, og, width, rows, false, 0, false,
                           g.out_size);
            }
          }
        }
      }
    }
  });
  return r;
}

// ---- AD rules ----------------------------------------------------------------------------------

Tangents jvp_conv(const StdTensorOp& op, const JvpArgs& a) {
  Emit e(a.b);
  std::optional<LocalValueId> dx, dw;
  if (a.t[0]) dx = e.linear(op, {Emit::local(*a.t[0]), Emit::ext(a.x[1])}, {true, false});
  if (a.t[1]) dw = e.linear(op, {Emit::ext(a.x[0]), Emit::local(*a.t[1])}, {false, true});
  return {e.sum(dx, dw)};
}

/// v with axes 0 and 1 swapped (a fixed or linear value, as `active` says).
PV swap01(Emit& e, const PV& v, bool active) {
  const TensorType& t = e.type(v);
  ops::Axes perm(t.rank());
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[0], perm[1]);
  const StdTensorOp op = ops::transpose(t, perm);
  return active ? Emit::local(e.linear(op, {v}, {true})) : e.primal(op, {v});
}

/// v sliced to [from, from + length) along axis 1 (fixed or linear).
PV features(Emit& e, const PV& v, std::int64_t from, std::int64_t length, bool active) {
  const TensorType& t = e.type(v);
  std::vector<std::int64_t> start(t.rank(), 0), limit(t.shape.begin(), t.shape.end()), stride(t.rank(), 1);
  start[1] = from;
  limit[1] = from + length;
  const StdTensorOp op = ops::slice(t, SliceAttrs{start, limit, stride});
  return active ? Emit::local(e.linear(op, {v}, {true})) : e.primal(op, {v});
}

/// The cotangent of the input: conv(ct, w') (see the file comment).
LocalValueId transpose_input(Emit& e, const StdTensorOp& op, const TransposeArgs& a) {
  const auto& f = op.attrs.get<ConvAttrs>();
  const TensorType& x = e.type(a.x[0]);
  const TensorType& w = e.type(a.x[1]);
  const std::size_t s = x.rank() - 2;
  const std::int64_t o = w.shape[0], cg = w.shape[1], og = o / f.groups;
  // w [G * og, cg, k..] -> [G, og, cg, k..] -> [G, cg, og, k..] -> [G * cg, og, k..], flipped.
  PV wt = e.conj_fixed(a.x[1]);
  Shape grouped = {f.groups, og, cg};
  grouped.insert(grouped.end(), w.shape.begin() + 2, w.shape.end());
  wt = e.primal(ops::reshape(w, grouped), {wt});
  ops::Axes perm(grouped.size());
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[1], perm[2]);
  wt = e.primal(ops::transpose(e.type(wt), perm), {wt});
  Shape swapped = {f.groups * cg, og};
  swapped.insert(swapped.end(), w.shape.begin() + 2, w.shape.end());
  wt = e.primal(ops::reshape(e.type(wt), swapped), {wt});
  std::vector<std::int64_t> window_axes(s);
  std::iota(window_axes.begin(), window_axes.end(), 2);
  wt = e.primal(ops::reverse(e.type(wt), window_axes), {wt});
  ConvAttrs t;
  t.groups = f.groups;
  for (std::size_t d = 0; d < s; ++d) {
    const std::int64_t xd = dilated(x.shape[d + 2], f.lhs_dilation[d]);
    const std::int64_t kd = dilated(w.shape[d + 2], f.rhs_dilation[d]);
    const std::int64_t yd = dilated(op.out.shape[d + 2], f.strides[d]);
    t.strides.push_back(f.lhs_dilation[d]);
    t.lhs_dilation.push_back(f.strides[d]);
    t.rhs_dilation.push_back(f.rhs_dilation[d]);
    t.pad_lo.push_back(kd - 1 - f.pad_lo[d]);
    t.pad_hi.push_back(xd + kd - 1 - yd - t.pad_lo.back());
  }
  const PV ct = Emit::local(a.ct());
  return e.linear(ops::conv(e.type(ct), e.type(wt), std::move(t)), {ct, wt}, {true, false});
}

/// The cotangent of the kernel: per group, conv(swap01(conj x_g), swap01(ct_g)) swapped back,
/// placed at the group's output features.
LocalValueId transpose_kernel(Emit& e, const StdTensorOp& op, const TransposeArgs& a) {
  const auto& f = op.attrs.get<ConvAttrs>();
  const TensorType& x = e.type(a.x[0]);
  const TensorType& w = e.type(a.x[1]);
  const std::size_t s = x.rank() - 2;
  const std::int64_t o = w.shape[0], cg = w.shape[1], og = o / f.groups;
  ConvAttrs t;
  for (std::size_t d = 0; d < s; ++d) {
    const std::int64_t xd = dilated(x.shape[d + 2], f.lhs_dilation[d]);
    const std::int64_t kd = dilated(w.shape[d + 2], f.rhs_dilation[d]);
    const std::int64_t yd = dilated(op.out.shape[d + 2], f.strides[d]);
    t.strides.push_back(f.rhs_dilation[d]);
    t.lhs_dilation.push_back(f.lhs_dilation[d]);
    t.rhs_dilation.push_back(f.strides[d]);
    t.pad_lo.push_back(f.pad_lo[d]);
    t.pad_hi.push_back(yd - xd + kd - 1 - f.pad_lo[d]);
  }
  const PV xc = e.conj_fixed(a.x[0]);
  const PV ct = Emit::local(a.ct());
  std::optional<LocalValueId> total;
  for (std::int64_t grp = 0; grp < f.groups; ++grp) {
    const PV xg = f.groups == 1 ? xc : features(e, xc, grp * cg, cg, false);
    const PV cg_ct = f.groups == 1 ? ct : features(e, ct, grp * og, og, true);
    const PV lhs = swap01(e, xg, false), rhs = swap01(e, cg_ct, true);
    const PV r = Emit::local(e.linear(ops::conv(e.type(lhs), e.type(rhs), t), {lhs, rhs}, {false, true}));
    PV part = swap01(e, r, true);  // [og, cg, k..]
    if (f.groups > 1) {  // placed at rows [grp og, (grp + 1) og) of [o, cg, k..]
      const TensorType& pt = e.type(part);
      PadAttrs pad{std::vector<std::int64_t>(pt.rank(), 0), std::vector<std::int64_t>(pt.rank(), 0),
                   std::vector<std::int64_t>(pt.rank(), 0)};
      pad.low[0] = grp * og;
      pad.high[0] = o - (grp + 1) * og;
      const PV zero = e.zeros(TensorType{pt.dtype, {}});
      part = Emit::local(e.linear(ops::pad(pt, TensorType{pt.dtype, {}}, pad), {part, zero}, {true, false}));
    }
    total = e.sum(total, part.local_id());
  }
  return *total;
}

Tangents transpose_conv(const StdTensorOp& op, const TransposeArgs& a) {
  if (a.role.is_active(0) == a.role.is_active(1)) not_linear(op, "conv is linear only when exactly one operand is active");
  Emit e(a.b);
  Tangents result(2);
  // An empty result carries no cotangent: none flows back (the operand's is zero).
  if (op.out.numel() == 0 || e.type(a.x[0]).numel() == 0 || e.type(a.x[1]).numel() == 0) return result;
  const std::size_t k = a.role.is_active(0) ? 0 : 1;
  result[k] = k == 0 ? transpose_input(e, op, a) : transpose_kernel(e, op, a);
  return result;
}

}  // namespace

const OpDef& def_Conv() {
  static const OpDef d{.name = "conv", .kind = OpKind::Conv, .operands = {kBilinear, kBilinear},
                       .shape_rule = single_type(+[](Types t, const OpAttrs& a) {
                         return ops::conv(t[0], t[1], a.get<ConvAttrs>()).out;
                       }),
                       .kernel = single_result(eval_conv), .jvp = jvp_conv, .transpose = transpose_conv};
  return d;
}

}  // namespace detail
}  // namespace tenferro
