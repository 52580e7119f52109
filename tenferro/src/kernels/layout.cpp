#include "layout.hpp"

#include <algorithm>
#include <cstring>

namespace tenferro::detail {

void check_axes(const char* op, const char* what, std::span<const std::int64_t> axes, std::int64_t rank,
                const std::string& operands) {
  std::vector<bool> seen(static_cast<std::size_t>(std::max<std::int64_t>(rank, 0)), false);
  for (std::int64_t axis : axes) {
    const bool in_range = axis >= 0 && axis < rank;
    if (!in_range || seen[static_cast<std::size_t>(axis)]) {
      throw ShapeError(std::string(op) + ": " + what + " " +
                       shape_to_string(Shape(axes.begin(), axes.end())) +
                       (in_range ? " repeats axis " : " has axis ") + std::to_string(axis) +
                       (in_range ? "" : " out of range") + " for operand " + operands +
                       "; expected distinct axes in [0, " + std::to_string(rank) + ")");
    }
    seen[static_cast<std::size_t>(axis)] = true;
  }
}

void check_shape(const char* op, const Shape& shape) {
  for (auto d : shape) {
    if (d < 0)
      throw ShapeError(std::string(op) + ": shape " + shape_to_string(shape) + " has a negative dimension");
  }
}

namespace {
/// One merged dimension: its length and the strides of both sides (in elements).
struct Dim {
  std::int64_t n, dst, src;
};

/// The copy loop for elements of N bytes. Elements move by fixed-size memcpy (one load and one
/// store after optimization), which is valid whatever the element type. The three innermost
/// dimensions are plain nested loops and an odometer steps the rest, so that short inner runs
/// (a window of 2 x 2 moved by a transpose, a broadcast along a trailing axis of length 2) do not
/// pay the odometer per run.
template <std::size_t N>
void copy_loop(std::byte* dst, const std::byte* src, std::vector<Dim> dims) {
  while (dims.size() < 3) dims.insert(dims.begin(), Dim{1, 0, 0});
  const std::size_t rank = dims.size();
  const Dim d0 = dims[rank - 3], d1 = dims[rank - 2], d2 = dims[rank - 1];
  const auto n = static_cast<std::int64_t>(N);
  // A transpose of the two innermost dimensions (each side contiguous along a different one)
  // moves tiles of kTile x kTile elements: read row by row, the strided side touched a new cache
  // line per element, and a 576 x 576 f64 transpose's lines did not stay in L1 from one row to the
  // next.
  constexpr std::int64_t kTile = 16;
  const bool transpose = ((d2.dst == 1 && d1.src == 1) || (d2.src == 1 && d1.dst == 1)) && d1.n >= kTile && d2.n >= kTile;
  auto tiled = [&](std::byte* d, const std::byte* s) {
    for (std::int64_t b0 = 0; b0 < d1.n; b0 += kTile) {
      const std::int64_t b1 = std::min(d1.n, b0 + kTile);
      for (std::int64_t i0 = 0; i0 < d2.n; i0 += kTile) {
        const std::int64_t i1 = std::min(d2.n, i0 + kTile);
        for (std::int64_t b = b0; b < b1; ++b) {
          for (std::int64_t i = i0; i < i1; ++i) {
            std::memcpy(d + (b * d1.dst + i * d2.dst) * n, s + (b * d1.src + i * d2.src) * n, N);
          }
        }
      }
    }
  };
  auto block = [&](std::byte* d, const std::byte* s) {
    for (std::int64_t a = 0; a < d0.n; ++a, d += d0.dst * n, s += d0.src * n) {
      if (transpose) {
        tiled(d, s);
        continue;
      }
      std::byte* dd = d;
      const std::byte* ss = s;
      for (std::int64_t b = 0; b < d1.n; ++b, dd += d1.dst * n, ss += d1.src * n) {
        if (d2.dst == 1 && d2.src == 1 && d2.n >= 16) {  // a long run: one library call
          std::memcpy(dd, ss, static_cast<std::size_t>(d2.n) * N);
        } else {  // element by element: fixed-size copies compile to plain moves
          for (std::int64_t i = 0; i < d2.n; ++i) std::memcpy(dd + i * d2.dst * n, ss + i * d2.src * n, N);
        }
      }
    }
  };
  std::vector<std::int64_t> index(rank - 3, 0);
  std::int64_t d_off = 0, s_off = 0;
  while (true) {
    block(dst + d_off * n, src + s_off * n);
    // Odometer over the outer dimensions; done when all of them wrap around.
    std::size_t k = rank - 3;
    while (true) {
      if (k == 0) return;
      --k;
      d_off += dims[k].dst;
      s_off += dims[k].src;
      if (++index[k] < dims[k].n) break;
      d_off -= dims[k].dst * dims[k].n;
      s_off -= dims[k].src * dims[k].n;
      index[k] = 0;
    }
  }
}
}  // namespace

void strided_copy(std::byte* dst, std::span<const std::int64_t> dst_strides, const std::byte* src,
                  std::span<const std::int64_t> src_strides, const Shape& shape, std::size_t elem_size) {
  std::vector<Dim> dims;
  for (std::size_t k = 0; k < shape.size(); ++k) {
    if (shape[k] == 0) return;
    if (shape[k] == 1) continue;
    Dim d{shape[k], dst_strides[k], src_strides[k]};
    // Merge with the previous (outer) dimension when it steps exactly over this one on both sides.
    if (!dims.empty() && dims.back().dst == d.dst * d.n && dims.back().src == d.src * d.n) {
      d.n *= dims.back().n;
      dims.back() = d;
    } else {
      dims.push_back(d);
    }
  }
  if (dims.empty()) dims.push_back({1, 1, 1});
  switch (elem_size) {
    case 1: copy_loop<1>(dst, src, std::move(dims)); return;
    case 4: copy_loop<4>(dst, src, std::move(dims)); return;
    case 8: copy_loop<8>(dst, src, std::move(dims)); return;
    case 16: copy_loop<16>(dst, src, std::move(dims)); return;
    default: throw Error("strided_copy: unsupported element size " + std::to_string(elem_size));
  }
}

Tensor permuted(const Tensor& a, std::span<const std::int64_t> perm) {
  Shape shape(perm.size());
  const Strides in = row_major_strides(a.shape());
  Strides src(perm.size());
  for (std::size_t k = 0; k < perm.size(); ++k) {
    shape[k] = a.shape()[static_cast<std::size_t>(perm[k])];
    src[k] = in[static_cast<std::size_t>(perm[k])];
  }
  Tensor r = Tensor::uninitialized(TensorType{a.dtype(), shape});  // every element is written
  strided_copy(static_cast<std::byte*>(r.raw_data()), row_major_strides(shape),
               static_cast<const std::byte*>(a.raw_data()), src, shape, dtype_size(a.dtype()));
  return r;
}

std::vector<std::int64_t> inverse_permutation(std::span<const std::int64_t> perm) {
  std::vector<std::int64_t> inv(perm.size());
  for (std::size_t k = 0; k < perm.size(); ++k)
    inv[static_cast<std::size_t>(perm[k])] = static_cast<std::int64_t>(k);
  return inv;
}

std::vector<std::int64_t> complement_axes(std::span<const std::int64_t> axes, std::int64_t rank) {
  std::vector<std::int64_t> rest;
  for (std::int64_t k = 0; k < rank; ++k) {
    if (std::find(axes.begin(), axes.end(), k) == axes.end()) rest.push_back(k);
  }
  return rest;
}

}  // namespace tenferro::detail
