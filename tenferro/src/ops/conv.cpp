// conv: N-dimensional convolution with strides, padding, input and kernel dilation, feature
// groups and batch / feature axes in either order (StableHLO's convolution with the spatial axes
// fixed after them). Order: attributes, shape rule, kernel, AD rules, definition; the CPU kernel
// itself is in kernels/conv_kernel.cpp.
//
// Derivatives: conv is bilinear, so its JVP is conv(dx, w) + conv(x, dw), and each transpose is
// again a conv (so every order works):
// - input: ct_x = conv(ct, w'), w' the kernel with its groups' in/out features swapped (for one
//   group just by reading the kernel's feature axes the other way round), its window flipped and
//   conjugated; the forward strides become the input dilation, the forward input dilation the
//   strides, and the padding is lo' = k~ - 1 - lo, hi' = x~ + k~ - 1 - y~ - lo' with x~, k~, y~
//   the dilated extents of input, window and result.
// - kernel: per group, ct_w = conv(conj(x) read with batch and features swapped, ct likewise,
//   the result written in the kernel's layout), the forward kernel dilation becoming the strides
//   and the forward strides the kernel dilation, padding lo, hi' = y~ - x~ + k~ - 1 - lo; the
//   groups' results are placed along the output features by pad and summed. The swaps are layout
//   attributes, not transposes: no copy of the (large) input or cotangent.
//
// Batching (vmap): one conv per batched conv, the batch folded into an axis of the op, as JAX
// does (batch_conv below).
#include <algorithm>
#include <complex>
#include <numeric>

#include "ir/batching.hpp"
#include "ir/family.hpp"
#include "kernels/conv_kernel.hpp"
#include "tenferro/ops/conv_attrs.hpp"
#include "tenferro/ops/index_attrs.hpp"
#include "tenferro/ops/make.hpp"
#include "tenferro/ops/record.hpp"
#include "tenferro/ops/rule.hpp"

namespace tenferro {

void ConvAttrs::print(std::ostream& os) const {
  os << "strides=" << shape_to_string(strides) << ", pad=" << shape_to_string(pad_lo) << "/" << shape_to_string(pad_hi)
     << ", lhs_dilation=" << shape_to_string(lhs_dilation) << ", rhs_dilation=" << shape_to_string(rhs_dilation)
     << ", groups=" << groups;
  if (!default_layout()) {
    os << ", dims=" << (lhs_batch_axis == 0 ? "[b,f]" : "[f,b]") << "x" << (rhs_out_axis == 0 ? "[o,i]" : "[i,o]")
       << "->" << (out_batch_axis == 0 ? "[b,f]" : "[f,b]");
  }
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
  for (std::int64_t axis : {a.lhs_batch_axis, a.rhs_out_axis, a.out_batch_axis}) {
    if (axis != 0 && axis != 1) {
      fail("dimension numbers: batch axis " + std::to_string(a.lhs_batch_axis) + ", kernel output axis " +
           std::to_string(a.rhs_out_axis) + ", result batch axis " + std::to_string(a.out_batch_axis) +
           "; expected each 0 or 1 (the spatial axes follow axes 0 and 1)");
    }
  }
  const auto axis = [](std::int64_t i) { return static_cast<std::size_t>(i); };
  const std::int64_t n = lhs.shape[axis(a.lhs_batch_axis)], c = lhs.shape[axis(1 - a.lhs_batch_axis)];
  const std::int64_t o = rhs.shape[axis(a.rhs_out_axis)], ci = rhs.shape[axis(1 - a.rhs_out_axis)];
  if (a.groups < 1 || c % a.groups != 0 || o % a.groups != 0 || ci * a.groups != c) {
    fail(std::to_string(a.groups) + " feature groups: expected the input's features (" + std::to_string(c) +
         ") and the kernel's outputs (" + std::to_string(o) + ") to split into that many groups, and the kernel's " +
         "input-feature axis of length features / groups");
  }
  Shape out = a.out_batch_axis == 0 ? Shape{n, o} : Shape{o, n};
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

// ---- kernel ------------------------------------------------------------------------------------

Tensor eval_conv(const StdTensorOp& op, Operands in) {
  return convolution(op.attrs.get<ConvAttrs>(), op.out, *in[0], *in[1]);
}

// ---- AD rules ----------------------------------------------------------------------------------

Tangents jvp_conv(const StdTensorOp& op, const JvpArgs& a) {
  RuleTrace r(a.b);
  std::optional<Traced> dx, dw;
  if (a.t[0]) dx = apply_binary(op, r.linear(*a.t[0]), r.fixed(a.x[1]));
  if (a.t[1]) dw = apply_binary(op, r.fixed(a.x[0]), r.linear(*a.t[1]));
  return {r.result(sum_present(dx, dw), op, tidu::RuleKind::Jvp)};
}

/// v sliced to [from, from + length) along `axis`.
Traced slice_axis(const Traced& v, std::int64_t axis, std::int64_t from, std::int64_t length) {
  const TensorType& t = v.type();
  std::vector<std::int64_t> start(t.rank(), 0), limit(t.shape.begin(), t.shape.end()), stride(t.rank(), 1);
  start[static_cast<std::size_t>(axis)] = from;
  limit[static_cast<std::size_t>(axis)] = from + length;
  return apply_unary(ops::slice(t, SliceAttrs{start, limit, stride}), v);
}

/// w' for the input's cotangent, from w in either layout: conjugated, window flipped, and for
/// several groups its groups' in/out features swapped into the default layout:
/// w'[g cg + c, o', k] = conj w[g og + o', c, k]. For one group the swap is only a layout (the
/// caller reads w' with its feature axes the other way round).
Traced input_transpose_kernel(const ConvAttrs& f, const Traced& w_fixed) {
  const TensorType& w = w_fixed.type();
  const std::size_t s = w.rank() - 2;
  Traced wt = conj_if_complex(w_fixed);
  if (f.groups > 1) {
    const bool out_first = f.rhs_out_axis == 0;
    const std::int64_t o = w.shape[out_first ? 0 : 1], cg = w.shape[out_first ? 1 : 0], og = o / f.groups;
    // [G og, cg, k..] -> [G, og, cg, k..] or [cg, G og, k..] -> [cg, G, og, k..]; then [G, cg, og, k..].
    Shape grouped = out_first ? Shape{f.groups, og, cg} : Shape{cg, f.groups, og};
    grouped.insert(grouped.end(), w.shape.begin() + 2, w.shape.end());
    wt = apply_unary(ops::reshape(w, grouped), wt);
    ops::Axes perm(grouped.size());
    std::iota(perm.begin(), perm.end(), 0);
    if (out_first) {
      std::swap(perm[1], perm[2]);
    } else {
      std::swap(perm[0], perm[1]);
    }
    wt = apply_unary(ops::transpose(wt.type(), perm), wt);
    Shape swapped = {f.groups * cg, og};
    swapped.insert(swapped.end(), w.shape.begin() + 2, w.shape.end());
    wt = apply_unary(ops::reshape(wt.type(), swapped), wt);
  }
  std::vector<std::int64_t> window_axes(s);
  std::iota(window_axes.begin(), window_axes.end(), 2);
  return apply_unary(ops::reverse(wt.type(), window_axes), wt);
}

/// The cotangent of the input: conv(ct, w') (see the file comment), read in ct's layout and
/// written in the input's.
Traced transpose_input(RuleTrace& r, const StdTensorOp& op, const TransposeArgs& a) {
  const auto& f = op.attrs.get<ConvAttrs>();
  const TensorType& x = type_of(a.b.key_of(a.x[0]));
  const TensorType& w = type_of(a.b.key_of(a.x[1]));
  const std::size_t s = x.rank() - 2;
  const Traced wt = input_transpose_kernel(f, r.fixed(a.x[1]));
  ConvAttrs t;
  t.groups = f.groups;
  t.lhs_batch_axis = f.out_batch_axis;
  t.rhs_out_axis = f.groups == 1 ? 1 - f.rhs_out_axis : 0;
  t.out_batch_axis = f.lhs_batch_axis;
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
  const Traced ct = r.linear(a.ct());
  return apply_binary(ops::conv(ct.type(), wt.type(), std::move(t)), ct, wt);
}

/// The cotangent of the kernel: per group, conv(conj x_g, ct_g) with both read batch-and-features
/// swapped (the input's features are the new batch, the cotangent's features the new outputs,
/// the batch summed over) and written in the kernel's layout, placed at the group's output
/// features.
Traced transpose_kernel(RuleTrace& r, const StdTensorOp& op, const TransposeArgs& a) {
  const auto& f = op.attrs.get<ConvAttrs>();
  const TensorType& x = type_of(a.b.key_of(a.x[0]));
  const TensorType& w = type_of(a.b.key_of(a.x[1]));
  const std::size_t s = x.rank() - 2;
  const std::int64_t w_out = f.rhs_out_axis, x_feature = 1 - f.lhs_batch_axis, ct_feature = 1 - f.out_batch_axis;
  const std::int64_t o = w.shape[static_cast<std::size_t>(w_out)], cg = w.shape[static_cast<std::size_t>(1 - w_out)];
  const std::int64_t og = o / f.groups;
  ConvAttrs t;
  t.lhs_batch_axis = x_feature;
  t.rhs_out_axis = ct_feature;
  t.out_batch_axis = 1 - w_out;
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
  const Traced xc = conj_if_complex(r.fixed(a.x[0]));
  const Traced ct = r.linear(a.ct());
  std::optional<Traced> total;
  for (std::int64_t grp = 0; grp < f.groups; ++grp) {
    const Traced lhs = f.groups == 1 ? xc : slice_axis(xc, x_feature, grp * cg, cg);
    const Traced rhs = f.groups == 1 ? ct : slice_axis(ct, ct_feature, grp * og, og);
    Traced part = apply_binary(ops::conv(lhs.type(), rhs.type(), t), lhs, rhs);
    if (f.groups > 1) {  // placed at [grp og, (grp + 1) og) of the kernel's output-feature axis
      const TensorType pt = part.type();
      PadAttrs pad{std::vector<std::int64_t>(pt.rank(), 0), std::vector<std::int64_t>(pt.rank(), 0),
                   std::vector<std::int64_t>(pt.rank(), 0)};
      pad.low[static_cast<std::size_t>(w_out)] = grp * og;
      pad.high[static_cast<std::size_t>(w_out)] = o - (grp + 1) * og;
      const Traced zero = r.zeros(TensorType{pt.dtype, {}});
      part = apply_binary(ops::pad(pt, zero.type(), pad), part, zero);
    }
    total = sum_present(total, part);
  }
  return *total;
}

Tangents transpose_conv(const StdTensorOp& op, const TransposeArgs& a) {
  if (a.role.is_active(0) == a.role.is_active(1)) not_linear(op, "conv is linear only when exactly one operand is active");
  Tangents result(2);
  // An empty result carries no cotangent: none flows back (the operand's is zero).
  if (op.out.numel() == 0 || type_of(a.b.key_of(a.x[0])).numel() == 0 || type_of(a.b.key_of(a.x[1])).numel() == 0) {
    return result;
  }
  RuleTrace r(a.b);
  const std::size_t k = a.role.is_active(0) ? 0 : 1;
  result[k] = r.result(k == 0 ? transpose_input(r, op, a) : transpose_kernel(r, op, a), op, tidu::RuleKind::Transpose);
  return result;
}

// ---- batching rule -----------------------------------------------------------------------------

/// x = [B, d0, d1, rest..] with the batch B folded into d_axis (axis 0 or 1 of the unbatched
/// value) read as [outer, inner]: that axis becomes [outer, B, inner] (outer = 1: B-major). At most
/// one transpose, none when the batch already sits there.
Traced fold_batch(const Traced& x, std::int64_t axis, std::int64_t outer) {
  const Shape& s = x.shape();
  const auto at = static_cast<std::size_t>(axis) + 1;
  const std::int64_t b = s[0], inner = s[at] / outer;
  Shape split;  // [B, d0, d1, rest..] with d_axis split into [outer, inner]
  for (std::size_t k = 0; k < s.size(); ++k) {
    if (k == at) {
      split.push_back(outer);
      split.push_back(inner);
    } else {
      split.push_back(s[k]);
    }
  }
  // Axes of `split`: 0 = B, then the unbatched axes with `outer` at `at` and `inner` at at + 1.
  std::vector<std::int64_t> perm;
  for (std::int64_t k = 1; k < static_cast<std::int64_t>(split.size()); ++k) {
    perm.push_back(k);
    if (k == static_cast<std::int64_t>(at)) perm.push_back(0);
  }
  const bool identity = at == 1 && outer == 1;  // B already directly before d0
  Traced r = identity ? x : transpose(tenferro::reshape(x, split), std::move(perm));
  Shape folded(s.begin() + 1, s.end());
  folded[at - 1] = outer * b * inner;
  return tenferro::reshape(r, std::move(folded));
}

/// The inverse of fold_batch for a result y = [e0, e1, rest..] whose axis `axis` is
/// [outer, B, inner]: [B, e0, e1, rest..] with that axis [outer, inner].
Traced unfold_batch(const Traced& y, std::int64_t axis, std::int64_t outer, std::int64_t b) {
  const Shape& s = y.shape();
  const auto at = static_cast<std::size_t>(axis);
  const std::int64_t inner = s[at] / (outer * b);
  Shape split;  // y with `axis` split into [outer, B, inner]
  for (std::size_t k = 0; k < s.size(); ++k) {
    if (k == at) {
      split.push_back(outer);
      split.push_back(b);
      split.push_back(inner);
    } else {
      split.push_back(s[k]);
    }
  }
  Traced r = tenferro::reshape(y, split);
  if (!(at == 0 && outer == 1)) {  // B not yet first: move it there
    std::vector<std::int64_t> perm{static_cast<std::int64_t>(at) + 1};
    for (std::int64_t k = 0; k < static_cast<std::int64_t>(split.size()); ++k) {
      if (k != static_cast<std::int64_t>(at) + 1) perm.push_back(k);
    }
    r = transpose(r, std::move(perm));
  }
  Shape unfolded{b};
  unfolded.insert(unfolded.end(), s.begin(), s.end());
  unfolded[at + 1] = outer * inner;
  return tenferro::reshape(r, std::move(unfolded));
}

/// vmap: one conv on whole batches, the batch folded into an axis of the conv (as JAX does), in
/// any layout (each fold reads the layout flags; at most one transpose per operand and result):
/// - input batched only: B folded into the input's batch axis (N -> B N, B-major), unfolded from
///   the result's batch axis;
/// - kernel batched only: B folded into the kernel's output features inside each group
///   (O = [G, O/G] -> [G, B, O/G], so that each group's outputs stay contiguous), unfolded from the
///   result's features;
/// - both: B folded into the input's features and the kernel's outputs, B-major, with B G groups
///   (the feature_group_count trick: group b G + g pairs example b's features of group g with its
///   kernel's outputs of group g), unfolded from the result's features. This is the case of the
///   kernel's cotangent under per-example gradients (conv of a batched input and cotangent).
/// An empty batch (which cannot be B G groups) takes the loop, which gives the empty result.
std::vector<BatchedValue> batch_conv(const StdTensorOp& op, std::span<const BatchedValue> x, std::int64_t batch_size) {
  if (batch_size == 0) return batch_by_loop(op, x, batch_size);
  ConvAttrs a = op.attrs.get<ConvAttrs>();
  const std::int64_t groups = a.groups;
  const std::int64_t lhs_feature = 1 - a.lhs_batch_axis, out_feature = 1 - a.out_batch_axis;
  Traced lhs = x[0].value, rhs = x[1].value;
  std::int64_t out_axis = 0, out_outer = 1;
  if (x[0].batched && x[1].batched) {
    lhs = fold_batch(lhs, lhs_feature, 1);
    rhs = fold_batch(rhs, a.rhs_out_axis, 1);
    a.groups = groups * batch_size;
    out_axis = out_feature;
  } else if (x[0].batched) {
    lhs = fold_batch(lhs, a.lhs_batch_axis, 1);
    out_axis = a.out_batch_axis;
  } else {
    rhs = fold_batch(rhs, a.rhs_out_axis, groups);
    out_axis = out_feature;
    out_outer = groups;
  }
  const Traced y = apply(ops::conv(lhs.type(), rhs.type(), std::move(a)), {lhs, rhs});
  return all_batched({unfold_batch(y, out_axis, out_outer, batch_size)});
}

}  // namespace

const OpDef& def_Conv() {
  static const OpDef d{.name = "conv", .kind = OpKind::Conv, .operands = {kBilinear, kBilinear},
                       .shape_rule = single_type(+[](Types t, const OpAttrs& a) {
                         return ops::conv(t[0], t[1], a.get<ConvAttrs>()).out;
                       }),
                       .kernel = single_result(eval_conv), .jvp = jvp_conv, .transpose = transpose_conv,
                       .batch = batch_conv};
  return d;
}

}  // namespace detail
}  // namespace tenferro
