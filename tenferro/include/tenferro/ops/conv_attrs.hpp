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
/// the input (lhs) dilation and the kernel (rhs) dilation; and the number of feature groups.
/// Layouts are fixed: input [N, C, spatial..], kernel [O, C / groups, window..], result
/// [N, O, spatial'..].
struct ConvAttrs {
  std::vector<std::int64_t> strides, pad_lo, pad_hi, lhs_dilation, rhs_dilation;
  std::int64_t groups = 1;
  bool operator==(const ConvAttrs&) const = default;
  std::size_t hash() const {
    std::size_t h = static_cast<std::size_t>(groups);
    for (const auto* v : {&strides, &pad_lo, &pad_hi, &lhs_dilation, &rhs_dilation}) h = hash_mix(h, hash_ints(*v));
    return h;
  }
  void print(std::ostream& os) const;  // strides=[..], pad=[lo..]/[hi..], lhs_dilation=.., rhs_dilation=.., groups=g
};

namespace ops {
/// out[n, o, y] = sum over c in o's group and window positions k of
/// lhs~[n, c, y * stride + k * rhs_dilation] * rhs[o, c, k], where lhs~ is the input dilated by
/// lhs_dilation (zeros between elements) and padded by pad_lo / pad_hi (zeros). Floats and
/// complex (f32, f64, c64, c128); one entry per spatial axis in each list of attrs.
StdTensorOp conv(const TensorType& lhs, const TensorType& rhs, ConvAttrs attrs);
}  // namespace ops

}  // namespace tenferro
