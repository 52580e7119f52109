#pragma once
// Attributes and descriptor factory of the convolution primitive (tenferro/conv.hpp says what it
// computes; src/ops/conv.cpp implements it).
#include <cstdint>
#include <ostream>
#include <vector>

#include "tenferro/ops/op_attrs.hpp"
#include "tenferro/ops/std_tensor_op.hpp"

namespace tenferro {

/// conv's window: per spatial axis the stride, the padding before and after (negative values cut),
/// the input (lhs) dilation and the kernel (rhs) dilation; the number of feature groups; and which
/// of axes 0 and 1 holds what (StableHLO's dimension numbers, with the spatial axes fixed at
/// 2, 3, ..): by default input [N, C, spatial..], kernel [O, C / groups, window..], result
/// [N, O, spatial'..]; `lhs_batch_axis` = 1 reads the input as [C, N, ..], `rhs_out_axis` = 1 the
/// kernel as [C / groups, O, ..], `out_batch_axis` = 1 writes the result as [O, N, ..]. The
/// transposes use these so that a kernel gradient needs no physical transpose of the (large) input
/// and cotangent.
struct ConvAttrs {
  std::vector<std::int64_t> strides, pad_lo, pad_hi, lhs_dilation, rhs_dilation;
  std::int64_t groups = 1;
  std::int64_t lhs_batch_axis = 0, rhs_out_axis = 0, out_batch_axis = 0;  ///< each 0 or 1
  bool operator==(const ConvAttrs&) const = default;
  bool default_layout() const { return lhs_batch_axis == 0 && rhs_out_axis == 0 && out_batch_axis == 0; }
  std::size_t hash() const {
    std::size_t h = static_cast<std::size_t>(groups);
    for (const auto* v : {&strides, &pad_lo, &pad_hi, &lhs_dilation, &rhs_dilation}) h = hash_mix(h, hash_ints(*v));
    return hash_mix(h, static_cast<std::size_t>(lhs_batch_axis + 2 * rhs_out_axis + 4 * out_batch_axis));
  }
  // strides=[..], pad=[lo..]/[hi..], lhs_dilation=.., rhs_dilation=.., groups=g, and for another
  // layout than the default dims=[b,f]x[o,i]->[b,f] (each pair in the order of axes 0 and 1).
  void print(std::ostream& os) const;
};

namespace ops {
/// In the default layout (see ConvAttrs for the others):
/// out[n, o, y] = sum over c in o's group and window positions k of
/// lhs~[n, c, y * stride + k * rhs_dilation] * rhs[o, c, k], where lhs~ is the input dilated by
/// lhs_dilation (zeros between elements) and padded by pad_lo / pad_hi (zeros). Floats and
/// complex (f32, f64, c64, c128); one entry per spatial axis in each list of attrs.
StdTensorOp conv(const TensorType& lhs, const TensorType& rhs, ConvAttrs attrs);
}  // namespace ops

}  // namespace tenferro
