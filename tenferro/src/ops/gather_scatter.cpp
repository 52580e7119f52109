// gather and scatter with StableHLO's dimension numbers (ops/gather_attrs.hpp says what the numbers
// mean). Order: attributes, shape rules, kernels, AD rules, batching rules, definitions.
//
// Both are linear in their data (indices carry no tangent), and the transposes close the set:
//   gather(x, i)                 -> ct_x = scatter_add(0, i, ct)
//   scatter_add(x, i, u)         -> ct_x = ct,   ct_u = gather(ct, i)
//   scatter_replace(x, i, u)     -> ct_x = scatter_replace(ct, i, 0),   ct_u = gather(ct, i) where
//                                   the update element won its position, 0 where a later one did
// scatter_replace is linear in x and u jointly: every result element is either an element of x or
// one element of u (the last writer, a fact of the indices alone). Its JVP replaces with the
// tangents; the "won" mask of its transpose scatters the updates' ordinal numbers and gathers them
// back, so it is built from these same ops and every order of derivative works.
//
// Kernels: one window per batch position of indices. The window's clamped start is an offset into
// the operand; the window itself is a strided block copy (gather, scatter replace) or a strided
// accumulation (scatter add), so a window of many elements costs one strided loop, not one index
// computation per element.
#include <algorithm>
#include <cstring>
#include <sstream>

#include "ir/batching.hpp"
#include "ir/family.hpp"
#include "kernels/layout.hpp"
#include "kernels/parallel.hpp"
#include "tenferro/indexing.hpp"
#include "tenferro/ops/gather_attrs.hpp"
#include "tenferro/threads.hpp"
#include "tenferro/ops/make.hpp"
#include "tenferro/ops/record.hpp"
#include "tenferro/ops/rule.hpp"

namespace tenferro {

std::size_t GatherDims::hash() const {
  std::size_t h = static_cast<std::size_t>(index_vector_dim);
  for (const auto* v : {&offset_dims, &collapsed_slice_dims, &start_index_map, &slice_sizes}) {
    h = hash_mix(h, hash_ints(*v));
  }
  return h;
}
void GatherDims::print(std::ostream& os) const {
  os << "offset_dims=" << shape_to_string(offset_dims) << ", collapsed=" << shape_to_string(collapsed_slice_dims)
     << ", start_index_map=" << shape_to_string(start_index_map) << ", index_vector_dim=" << index_vector_dim
     << ", slice_sizes=" << shape_to_string(slice_sizes);
}
std::size_t ScatterDims::hash() const {
  std::size_t h = hash_mix(static_cast<std::size_t>(index_vector_dim), static_cast<std::size_t>(mode));
  for (const auto* v : {&update_window_dims, &inserted_window_dims, &scatter_dims_to_operand_dims}) {
    h = hash_mix(h, hash_ints(*v));
  }
  return h;
}
void ScatterDims::print(std::ostream& os) const {
  os << "mode=" << (mode == ScatterMode::Add ? "add" : "replace")
     << ", update_window_dims=" << shape_to_string(update_window_dims)
     << ", inserted=" << shape_to_string(inserted_window_dims)
     << ", to_operand=" << shape_to_string(scatter_dims_to_operand_dims) << ", index_vector_dim=" << index_vector_dim;
}

// ---- shape rules -------------------------------------------------------------------------------

namespace ops {
namespace {

/// Throws the op's ShapeError: its operands, its dimension numbers and what does not fit.
template <class Dims>
[[noreturn]] void fail(const char* op, std::initializer_list<const TensorType*> types, const Dims& dims,
                       const std::string& why) {
  std::ostringstream os;
  os << op << ": operands " << detail::types_string(types) << " with [";
  dims.print(os);
  os << "]: " << why;
  throw ShapeError(os.str());
}

/// Whether `axes` is ascending without repeats, every entry in [0, rank).
bool sorted_axes(const std::vector<std::int64_t>& axes, std::int64_t rank) {
  for (std::size_t k = 0; k < axes.size(); ++k) {
    if (axes[k] < 0 || axes[k] >= rank || (k > 0 && axes[k] <= axes[k - 1])) return false;
  }
  return true;
}
/// Whether every entry is in [0, rank) and none repeats (any order).
bool distinct_axes(std::vector<std::int64_t> axes, std::int64_t rank) {
  std::sort(axes.begin(), axes.end());
  return sorted_axes(axes, rank);
}

/// indices' batch shape (its axes but index_vector_dim) and the length of an index vector.
struct IndexShape {
  Shape batch;
  std::int64_t vector_length = 1;
};
template <class Dims>
IndexShape index_shape(const char* op, std::initializer_list<const TensorType*> types, const TensorType& indices,
                       const Dims& dims, std::size_t map_size) {
  if (indices.dtype != DType::I64) {
    throw DTypeError(std::string(op) + ": indices " + indices.to_string() + "; expected an i64 tensor");
  }
  const auto rank = static_cast<std::int64_t>(indices.rank());
  if (dims.index_vector_dim < 0 || dims.index_vector_dim > rank) {
    fail(op, types, dims, "index_vector_dim expected in [0, " + std::to_string(rank) + "]");
  }
  IndexShape s;
  for (std::int64_t k = 0; k < rank; ++k) {
    (k == dims.index_vector_dim ? s.vector_length : s.batch.emplace_back()) = indices.shape[static_cast<std::size_t>(k)];
  }
  if (static_cast<std::int64_t>(map_size) != s.vector_length) {
    fail(op, types, dims,
         "the index map has " + std::to_string(map_size) + " entries; expected one per index vector entry (" +
             std::to_string(s.vector_length) + ")");
  }
  return s;
}

}  // namespace

StdTensorOp gather(const TensorType& operand, const TensorType& indices, GatherDims dims) {
  const auto types = {&operand, &indices};
  const auto rank = static_cast<std::int64_t>(operand.rank());
  const IndexShape is = index_shape("gather", types, indices, dims, dims.start_index_map.size());
  if (!distinct_axes(dims.start_index_map, rank)) {
    fail("gather", types, dims, "start_index_map expected distinct operand axes");
  }
  if (static_cast<std::int64_t>(dims.slice_sizes.size()) != rank) {
    fail("gather", types, dims, "slice_sizes expected one size per operand axis");
  }
  for (std::size_t d = 0; d < operand.rank(); ++d) {
    if (dims.slice_sizes[d] < 0 || dims.slice_sizes[d] > operand.shape[d]) {
      fail("gather", types, dims, "slice_sizes[" + std::to_string(d) + "] expected in [0, " +
                                      std::to_string(operand.shape[d]) + "]");
    }
  }
  if (!sorted_axes(dims.collapsed_slice_dims, rank)) {
    fail("gather", types, dims, "collapsed_slice_dims expected ascending operand axes");
  }
  for (std::int64_t d : dims.collapsed_slice_dims) {
    if (dims.slice_sizes[static_cast<std::size_t>(d)] != 1) {
      fail("gather", types, dims, "a collapsed axis expected slice size 1");
    }
  }
  const auto out_rank = static_cast<std::int64_t>(dims.offset_dims.size() + is.batch.size());
  if (dims.offset_dims.size() != operand.rank() - dims.collapsed_slice_dims.size() ||
      !sorted_axes(dims.offset_dims, out_rank)) {
    fail("gather", types, dims,
         "offset_dims expected ascending result axes, one per operand axis that is not collapsed");
  }
  Shape shape(static_cast<std::size_t>(out_rank));
  std::size_t next_offset = 0, next_batch = 0, window_axis = 0;
  for (std::int64_t r = 0; r < out_rank; ++r) {
    if (next_offset < dims.offset_dims.size() && dims.offset_dims[next_offset] == r) {
      while (std::binary_search(dims.collapsed_slice_dims.begin(), dims.collapsed_slice_dims.end(),
                                static_cast<std::int64_t>(window_axis))) {
        ++window_axis;
      }
      shape[static_cast<std::size_t>(r)] = dims.slice_sizes[window_axis++];
      ++next_offset;
    } else {
      shape[static_cast<std::size_t>(r)] = is.batch[next_batch++];
    }
  }
  return detail::make(OpKind::Gather, TensorType{operand.dtype, std::move(shape)}, OpAttrs(std::move(dims)));
}

StdTensorOp scatter(const TensorType& operand, const TensorType& indices, const TensorType& updates, ScatterDims dims) {
  const auto types = {&operand, &indices, &updates};
  if (updates.dtype != operand.dtype) {
    throw DTypeError("scatter: operand " + operand.to_string() + ", updates " + updates.to_string() +
                     "; expected updates of the operand's dtype");
  }
  if (dims.mode == ScatterMode::Add) {
    detail::require_dtype("scatter (add)", operand, operand.dtype != DType::Bool, "a numeric dtype (not bool)");
  }
  const auto rank = static_cast<std::int64_t>(operand.rank());
  const IndexShape is = index_shape("scatter", types, indices, dims, dims.scatter_dims_to_operand_dims.size());
  if (!distinct_axes(dims.scatter_dims_to_operand_dims, rank)) {
    fail("scatter", types, dims, "scatter_dims_to_operand_dims expected distinct operand axes");
  }
  if (!sorted_axes(dims.inserted_window_dims, rank)) {
    fail("scatter", types, dims, "inserted_window_dims expected ascending operand axes");
  }
  if (!sorted_axes(dims.update_window_dims, static_cast<std::int64_t>(updates.rank())) ||
      dims.update_window_dims.size() + dims.inserted_window_dims.size() != operand.rank()) {
    fail("scatter", types, dims,
         "update_window_dims expected ascending axes of updates, one per operand axis that is not inserted");
  }
  if (updates.rank() != dims.update_window_dims.size() + is.batch.size()) {
    fail("scatter", types, dims,
         "updates expected rank " + std::to_string(dims.update_window_dims.size() + is.batch.size()) +
             " (window axes plus indices' batch axes)");
  }
  std::size_t next_window = 0, next_batch = 0, operand_axis = 0;
  for (std::size_t u = 0; u < updates.rank(); ++u) {
    if (next_window < dims.update_window_dims.size() &&
        dims.update_window_dims[next_window] == static_cast<std::int64_t>(u)) {
      while (std::binary_search(dims.inserted_window_dims.begin(), dims.inserted_window_dims.end(),
                                static_cast<std::int64_t>(operand_axis))) {
        ++operand_axis;
      }
      if (updates.shape[u] > operand.shape[operand_axis]) {
        fail("scatter", types, dims,
             "updates axis " + std::to_string(u) + " is a window over operand axis " + std::to_string(operand_axis) +
                 "; expected at most its length");
      }
      ++operand_axis;
      ++next_window;
    } else if (updates.shape[u] != is.batch[next_batch++]) {
      fail("scatter", types, dims,
           "updates axis " + std::to_string(u) + " expected the length of indices' batch axis " +
               std::to_string(next_batch - 1));
    }
  }
  return detail::make(OpKind::Scatter, operand, OpAttrs(std::move(dims)));
}

}  // namespace ops

// ---- kernels -----------------------------------------------------------------------------------

namespace detail {
namespace {

/// One op application laid out for its kernel: per batch position, where its window starts in
/// the operand and where its block lies on the other side (gather's result, scatter's updates),
/// and the window's shape with the strides of both sides.
struct WindowPlan {
  std::vector<std::int64_t> operand_offset;  ///< per batch position, elements
  std::vector<std::int64_t> block_offset;    ///< per batch position, elements
  Shape window;                              ///< the window's axes that have a block axis
  Strides operand_strides, block_strides;    ///< over `window`
};

/// The plan for `count` batch positions of indices, whose window spans `window_sizes` operand
/// elements per axis; `block_batch_axes` are the axes of the block side that run over indices'
/// batch axes (in order), `block_window_axes` those that run over the window's uncollapsed axes.
WindowPlan plan_windows(const Tensor& indices, std::int64_t index_vector_dim, const std::vector<std::int64_t>& index_map,
                        const Shape& operand_shape, const Shape& window_sizes, const Shape& block_shape,
                        const std::vector<std::int64_t>& dropped_axes, const std::vector<std::int64_t>& block_window_axes) {
  WindowPlan p;
  const Strides op_strides = row_major_strides(operand_shape);
  const Strides block_strides = row_major_strides(block_shape);
  for (std::size_t d = 0; d < operand_shape.size(); ++d) {
    if (!std::binary_search(dropped_axes.begin(), dropped_axes.end(), static_cast<std::int64_t>(d))) {
      p.window.push_back(window_sizes[d]);
      p.operand_strides.push_back(op_strides[d]);
    }
  }
  std::vector<std::int64_t> block_batch_axes;
  for (std::size_t a = 0; a < block_shape.size(); ++a) {
    if (std::binary_search(block_window_axes.begin(), block_window_axes.end(), static_cast<std::int64_t>(a))) {
      p.block_strides.push_back(block_strides[a]);
    } else {
      block_batch_axes.push_back(static_cast<std::int64_t>(a));
    }
  }
  // indices' batch axes, their strides, and the stride between an index vector's entries.
  const Strides idx_strides = row_major_strides(indices.shape());
  Shape batch;
  Strides batch_strides;
  for (std::size_t k = 0; k < indices.shape().size(); ++k) {
    if (static_cast<std::int64_t>(k) == index_vector_dim) continue;
    batch.push_back(indices.shape()[k]);
    batch_strides.push_back(idx_strides[k]);
  }
  const std::int64_t entry_stride =
      index_vector_dim < static_cast<std::int64_t>(indices.shape().size()) ? idx_strides[static_cast<std::size_t>(index_vector_dim)] : 0;
  const std::int64_t count = numel(batch);
  p.operand_offset.resize(static_cast<std::size_t>(count));
  p.block_offset.resize(static_cast<std::size_t>(count));
  const std::int64_t* idx = indices.data<std::int64_t>();
  std::vector<std::int64_t> g(batch.size(), 0);  // the batch position as a multi-index
  for (std::int64_t b = 0; b < count; ++b) {
    std::int64_t at = 0, block = 0;
    for (std::size_t k = 0; k < g.size(); ++k) {
      at += g[k] * batch_strides[k];
      block += g[k] * block_strides[static_cast<std::size_t>(block_batch_axes[k])];
    }
    std::int64_t offset = 0;
    for (std::size_t k = 0; k < index_map.size(); ++k) {
      const auto d = static_cast<std::size_t>(index_map[k]);
      const std::int64_t start = std::clamp<std::int64_t>(idx[at + static_cast<std::int64_t>(k) * entry_stride], 0,
                                                          operand_shape[d] - window_sizes[d]);
      offset += start * op_strides[d];
    }
    p.operand_offset[static_cast<std::size_t>(b)] = offset;
    p.block_offset[static_cast<std::size_t>(b)] = block;
    for (std::size_t k = g.size(); k-- > 0;) {  // next multi-index, row-major
      if (++g[k] < batch[k]) break;
      g[k] = 0;
    }
  }
  return p;
}

/// dst[i . dst_strides] += src[i . src_strides] over the multi-indices i of `shape`.
template <class T>
void strided_accumulate(T* dst, const std::int64_t* dst_strides, const T* src, const std::int64_t* src_strides,
                        const std::int64_t* shape, std::size_t rank) {
  if (rank == 0) {
    *dst += *src;
    return;
  }
  if (rank == 1) {
    for (std::int64_t i = 0; i < shape[0]; ++i) dst[i * dst_strides[0]] += src[i * src_strides[0]];
    return;
  }
  for (std::int64_t i = 0; i < shape[0]; ++i) {
    strided_accumulate(dst + i * dst_strides[0], dst_strides + 1, src + i * src_strides[0], src_strides + 1, shape + 1,
                       rank - 1);
  }
}

/// The operand's full window sizes for a scatter: 1 on inserted axes, updates' window axes elsewhere.
Shape scatter_window(const ScatterDims& dims, const Shape& operand, const Shape& updates) {
  Shape w(operand.size(), 1);
  std::size_t j = 0;
  for (std::size_t d = 0; d < operand.size(); ++d) {
    if (!std::binary_search(dims.inserted_window_dims.begin(), dims.inserted_window_dims.end(),
                            static_cast<std::int64_t>(d))) {
      w[d] = updates[static_cast<std::size_t>(dims.update_window_dims[j++])];
    }
  }
  return w;
}

Tensor eval_gather(const StdTensorOp& op, Operands in) {
  const auto& dims = op.attrs.get<GatherDims>();
  const Tensor& x = *in[0];
  Tensor r = Tensor::uninitialized(op.out);
  if (r.numel() == 0) return r;
  const WindowPlan p = plan_windows(*in[1], dims.index_vector_dim, dims.start_index_map, x.shape(), dims.slice_sizes,
                                    r.shape(), dims.collapsed_slice_dims, dims.offset_dims);
  const std::size_t es = dtype_size(x.dtype());
  const auto* src = static_cast<const std::byte*>(x.raw_data());
  auto* dst = static_cast<std::byte*>(r.raw_data());
  const auto count = static_cast<std::int64_t>(p.operand_offset.size());
  if (numel(p.window) == 1) {  // one element per window (a point gather): no strided loop
    for (std::int64_t b = 0; b < count; ++b) {
      const auto k = static_cast<std::size_t>(b);
      std::memcpy(dst + p.block_offset[k] * static_cast<std::int64_t>(es),
                  src + p.operand_offset[k] * static_cast<std::int64_t>(es), es);
    }
    return r;
  }
  // Windows are disjoint in the result: threads for copies big enough to repay waking them.
  const int threads = static_cast<double>(r.numel()) * static_cast<double>(es) > (1 << 20) ? num_threads() : 1;
  exec::parallel_ranges(count, threads, [&](std::int64_t lo, std::int64_t hi) {
    for (std::int64_t b = lo; b < hi; ++b) {
      const auto k = static_cast<std::size_t>(b);
      strided_copy(dst + p.block_offset[k] * static_cast<std::int64_t>(es), p.block_strides,
                   src + p.operand_offset[k] * static_cast<std::int64_t>(es), p.operand_strides, p.window, es);
    }
  });
  return r;
}

Tensor eval_scatter(const StdTensorOp& op, Operands in) {
  const auto& dims = op.attrs.get<ScatterDims>();
  const Tensor& updates = *in[2];
  Tensor r = in[0]->clone();
  if (updates.numel() == 0) return r;
  const WindowPlan p =
      plan_windows(*in[1], dims.index_vector_dim, dims.scatter_dims_to_operand_dims, r.shape(),
                   scatter_window(dims, r.shape(), updates.shape()), updates.shape(), dims.inserted_window_dims,
                   dims.update_window_dims);
  // Serial in batch order: windows may overlap, and the last writer (Replace) or the order of the
  // sums (Add) must not depend on the thread count.
  visit_dtype(r.dtype(), [&](auto zero) {
    using T = decltype(zero);
    T* out = r.data<T>();
    const T* u = updates.data<T>();
    for (std::size_t b = 0; b < p.operand_offset.size(); ++b) {
      if (dims.mode == ScatterMode::Replace) {
        strided_copy(reinterpret_cast<std::byte*>(out + p.operand_offset[b]), p.operand_strides,
                     reinterpret_cast<const std::byte*>(u + p.block_offset[b]), p.block_strides, p.window, sizeof(T));
      } else if constexpr (!std::is_same_v<T, bool>) {
        strided_accumulate(out + p.operand_offset[b], p.operand_strides.data(), u + p.block_offset[b],
                           p.block_strides.data(), p.window.data(), p.window.size());
      }
    }
  });
  return r;
}

// ---- AD rules ----------------------------------------------------------------------------------

/// gather of x by the scatter's indices, picking exactly the elements a scatter with `dims` writes:
/// the transpose of scatter-add's update operand (result: updates' type).
StdTensorOp gather_for(const ScatterDims& dims, const TensorType& x, const TensorType& indices, const TensorType& updates) {
  return ops::gather(x, indices,
                     GatherDims{dims.update_window_dims, dims.inserted_window_dims, dims.scatter_dims_to_operand_dims,
                                dims.index_vector_dim, scatter_window(dims, x.shape, updates.shape)});
}

Tangents jvp_gather(const StdTensorOp& op, const JvpArgs& a) {
  if (!is_inexact(op.out.dtype)) return {std::nullopt};
  RuleTrace r(a.b);
  return {r.result(apply_binary(op, r.linear(*a.t[0]), r.fixed(a.x[1])), op, tidu::RuleKind::Jvp)};
}

Tangents jvp_scatter(const StdTensorOp& op, const JvpArgs& a) {
  if (!is_inexact(op.out.dtype)) return {std::nullopt};
  RuleTrace r(a.b);
  const Traced x = r.linear_or_zeros(a.t[0], type_of(a.x[0]));
  const Traced u = r.linear_or_zeros(a.t[2], type_of(a.x[2]));
  return {r.result(apply(op, {x, r.fixed(a.x[1]), u}), op, tidu::RuleKind::Jvp)};
}

Tangents transpose_gather(const StdTensorOp& op, const TransposeArgs& a) {
  if (!a.role.is_active(0) || a.role.is_active(1)) not_linear(op, "gather is linear in its operand only");
  RuleTrace r(a.b);
  const auto& g = op.attrs.get<GatherDims>();
  const Traced ct = r.linear(a.ct());
  const Traced indices = r.fixed(a.x[1]);
  const Traced zero = r.zeros(type_of(a.b.key_of(a.x[0])));
  ScatterDims s{g.offset_dims, g.collapsed_slice_dims, g.start_index_map, g.index_vector_dim, ScatterMode::Add};
  return {r.result(apply(ops::scatter(zero.type(), indices.type(), ct.type(), std::move(s)), {zero, indices, ct}), op,
                   tidu::RuleKind::Transpose),
          std::nullopt};
}

/// Bool, per update element: whether it is the one a replacing scatter leaves at its position.
Traced won_positions(RuleTrace& r, const ScatterDims& dims, const Traced& indices, const TensorType& x,
                     const TensorType& updates) {
  const Shape flat{numel(updates.shape)};
  const Traced iota = r.nullary(ops::iota(flat, 0, DType::I64));
  const Traced ids = apply_unary(ops::reshape(iota.type(), updates.shape), iota);
  const Traced none = broadcast_to(constant(indices, Tensor::scalar(-1.0, DType::I64)), x.shape);
  const Traced owner = apply(ops::scatter(none.type(), indices.type(), ids.type(), dims), {none, indices, ids});
  const Traced back = apply_binary(gather_for(dims, owner.type(), indices.type(), updates), owner, indices);
  return eq(back, ids);
}

Tangents transpose_scatter(const StdTensorOp& op, const TransposeArgs& a) {
  if (a.role.is_active(1)) not_linear(op, "the indices carry no cotangent");
  RuleTrace r(a.b);
  const auto& dims = op.attrs.get<ScatterDims>();
  const Traced ct = r.linear(a.ct());
  const Traced indices = r.fixed(a.x[1]);
  const TensorType& x = type_of(a.b.key_of(a.x[0]));
  const TensorType& updates = type_of(a.b.key_of(a.x[2]));
  Tangents result(3);
  if (a.role.is_active(0)) {
    result[0] = dims.mode == ScatterMode::Add
                    ? a.ct()
                    : r.result(apply(op, {ct, indices, r.zeros(updates)}), op, tidu::RuleKind::Transpose);  // overwritten
  }
  if (a.role.is_active(2)) {
    const Traced picked = apply_binary(gather_for(dims, x, indices.type(), updates), ct, indices);
    if (dims.mode == ScatterMode::Add) {
      result[2] = r.result(picked, op, tidu::RuleKind::Transpose);
    } else {
      const Traced won = won_positions(r, dims, indices, x, updates);
      result[2] = r.result(where(won, picked, r.zeros(updates)), op, tidu::RuleKind::Transpose);
    }
  }
  return result;
}

}  // namespace

// ---- batching rules ----------------------------------------------------------------------------
//
// vmap (ir/batching.hpp). Both ops clamp every start of an index vector into its axis on its own,
// so a batched application is one op on whole batches:
// - indices not batched: the batch is one more window axis of the operand (operand axis 0, start
//   0, the whole batch), placed first in the result (gather) or in the updates (scatter);
// - indices batched, gather's operand not: the batch is indices' first batch axis, which lands
//   first in the result;
// - otherwise (as JAX does): each index vector gets a first entry, its batch position, naming
//   operand axis 0 with a window of size 1 there (collapsed / inserted). That entry is always in
//   range, and windows of different batch positions never meet, so scatter's order of updates
//   within an example (replace: the last wins; add: the order of the sums) is the example's own.

namespace {
Shape with_leading(Shape shape, std::int64_t n) {
  shape.insert(shape.begin(), n);
  return shape;
}
std::vector<std::int64_t> with_front(std::vector<std::int64_t> v, std::int64_t first) {
  v.insert(v.begin(), first);
  return v;
}

/// Batched indices (batch axis first) whose index vectors, along `vector_dim` (indices' rank for an
/// implicit trailing vector of length 1), get a first entry: their batch position. Returns the new
/// indices; their vectors lie along `vector_dim`.
Traced with_batch_positions(const Traced& indices, std::int64_t vector_dim, std::int64_t batch_size) {
  Traced idx = indices;
  if (vector_dim == static_cast<std::int64_t>(idx.rank())) {
    Shape s = idx.shape();
    s.push_back(1);
    idx = reshape(idx, std::move(s));
  }
  std::vector<std::int64_t> positions(static_cast<std::size_t>(batch_size));
  for (std::int64_t b = 0; b < batch_size; ++b) positions[static_cast<std::size_t>(b)] = b;
  Shape column(idx.rank(), 1);
  column[0] = batch_size;
  Shape position_shape = idx.shape();
  position_shape[static_cast<std::size_t>(vector_dim)] = 1;
  const Traced position =
      broadcast_to(constant(idx, Tensor::from(positions, std::move(column))), std::move(position_shape));
  return concatenate({position, idx}, vector_dim);
}
}  // namespace

static std::vector<BatchedValue> batch_gather(const StdTensorOp& op, std::span<const BatchedValue> x,
                                              std::int64_t batch_size) {
  GatherDims d = op.attrs.get<GatherDims>();
  const Traced& operand = x[0].value;
  Traced indices = x[1].value;
  d.offset_dims = shifted(d.offset_dims);
  if (!x[1].batched) {  // the batch as the first window axis
    d.offset_dims.insert(d.offset_dims.begin(), 0);
    d.collapsed_slice_dims = shifted(d.collapsed_slice_dims);
    d.start_index_map = shifted(d.start_index_map);
    d.slice_sizes = with_leading(d.slice_sizes, batch_size);
  } else if (!x[0].batched) {  // the batch as indices' first batch axis
    ++d.index_vector_dim;
  } else if (batch_size == 0) {  // no window to take (and no axis of length 1 to collapse)
    return all_batched({constant(operand, Tensor(TensorType{op.out.dtype, with_leading(op.out.shape, 0)}))});
  } else {  // each index vector with its batch position
    ++d.index_vector_dim;
    indices = with_batch_positions(indices, d.index_vector_dim, batch_size);
    d.collapsed_slice_dims = with_front(shifted(d.collapsed_slice_dims), 0);
    d.start_index_map = with_front(shifted(d.start_index_map), 0);
    d.slice_sizes = with_leading(d.slice_sizes, 1);
  }
  return all_batched({apply(ops::gather(operand.type(), indices.type(), std::move(d)), {operand, indices})});
}

static std::vector<BatchedValue> batch_scatter(const StdTensorOp& op, std::span<const BatchedValue> x,
                                               std::int64_t batch_size) {
  ScatterDims d = op.attrs.get<ScatterDims>();  // its mode (add or replace) kept
  const Traced operand = with_batch_axis(x[0], batch_size), updates = with_batch_axis(x[2], batch_size);
  Traced indices = x[1].value;
  if (batch_size == 0) return all_batched({operand});  // no update to place
  d.update_window_dims = shifted(d.update_window_dims);
  if (!x[1].batched) {  // the batch as the first window axis of the updates
    d.update_window_dims.insert(d.update_window_dims.begin(), 0);
    d.inserted_window_dims = shifted(d.inserted_window_dims);
    d.scatter_dims_to_operand_dims = shifted(d.scatter_dims_to_operand_dims);
  } else {  // each index vector with its batch position
    ++d.index_vector_dim;
    indices = with_batch_positions(indices, d.index_vector_dim, batch_size);
    d.inserted_window_dims = with_front(shifted(d.inserted_window_dims), 0);
    d.scatter_dims_to_operand_dims = with_front(shifted(d.scatter_dims_to_operand_dims), 0);
  }
  return all_batched({apply(ops::scatter(operand.type(), indices.type(), updates.type(), std::move(d)),
                            {operand, indices, updates})});
}

// ---- definitions -------------------------------------------------------------------------------

const OpDef& def_Gather() {
  static const OpDef d{.name = "gather", .kind = OpKind::Gather, .operands = {kLinear, kNoGrad},
                       .shape_rule = single_type(+[](Types t, const OpAttrs& a) {
                         return ops::gather(t[0], t[1], a.get<GatherDims>()).out;
                       }),
                       .kernel = single_result(eval_gather), .jvp = jvp_gather, .transpose = transpose_gather,
                       .dependence = Dependence::Moves, .batch = batch_gather};
  return d;
}
const OpDef& def_Scatter() {
  static const OpDef d{.name = "scatter", .kind = OpKind::Scatter, .operands = {kLinear, kNoGrad, kLinear},
                       .shape_rule = single_type(+[](Types t, const OpAttrs& a) {
                         return ops::scatter(t[0], t[1], t[2], a.get<ScatterDims>()).out;
                       }),
                       .kernel = single_result(eval_scatter), .jvp = jvp_scatter, .transpose = transpose_scatter,
                       .dependence = Dependence::Accumulates,
                       .landing = [](const StdTensorOp& op, std::span<const TensorType> t) {
                         return gather_for(op.attrs.get<ScatterDims>(), t[0], t[1], t[2]);
                       },
                       .batch = batch_scatter};
  return d;
}

}  // namespace detail
}  // namespace tenferro
