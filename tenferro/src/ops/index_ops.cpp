// take, index_add, cumsum and reverse: data movement along one axis (or several, for reverse).
// Order: attributes, shape rules, kernels, AD rules, definitions.
//
// Each is linear in its data operands (the index operand of take and index_add carries no
// tangent), and the transposes close the set:
//   take(x, idx)             -> ct_x = index_add(0, idx, ct)      (scatter-add: repeats accumulate)
//   index_add(b, idx, u)     -> ct_b = ct, ct_u = take(ct, idx)
//   cumsum(x, reverse)       -> ct_x = cumsum(ct, !reverse)
//   reverse(x, axes)         -> ct_x = reverse(ct, axes)
// take and index_add take a 1-D index (the same positions for every slice: numpy.take,
// torch.index_add) or an index of the operand's rank (one position per element: take_along_axis,
// torch.scatter_add). Kernels view an operand as [outer, n, inner] around the axis; index entries
// may be negative (counted from the end, as in NumPy), and one outside [-n, n) throws ValueError
// naming it.
#include <algorithm>
#include <cstring>

#include "ir/batching.hpp"
#include "ir/family.hpp"
#include "kernels/layout.hpp"
#include "kernels/parallel.hpp"
#include "tenferro/ops/index_attrs.hpp"
#include "tenferro/threads.hpp"
#include "tenferro/ops/make.hpp"
#include "tenferro/ops/record.hpp"
#include "tenferro/ops/rule.hpp"

namespace tenferro {

void AxisAttrs::print(std::ostream& os) const {
  os << "axis=" << axis;
  if (reverse) os << ", reverse";
}
void ReverseAxes::print(std::ostream& os) const { os << "axes=" << shape_to_string(axes); }

// ---- shape rules -------------------------------------------------------------------------------

namespace ops {

namespace {
void check_axis(const char* op, const TensorType& x, std::int64_t axis) {
  if (axis < 0 || axis >= static_cast<std::int64_t>(x.rank())) {
    throw ShapeError(std::string(op) + ": axis " + std::to_string(axis) + " out of range for operand " + x.to_string() +
                     "; expected an axis in [0, " + std::to_string(x.rank()) + ")");
  }
}
/// The shape of take's result / index_add's updates: x's shape with `axis` of the index's length
/// (a 1-D index) or the index's shape (an index of x's rank, which must match x off the axis).
Shape indexed_shape(const char* op, const TensorType& x, const TensorType& idx, std::int64_t axis) {
  if (idx.dtype != DType::I64) {
    throw DTypeError(std::string(op) + ": index operand " + idx.to_string() + "; expected an i64 tensor");
  }
  Shape shape = x.shape;
  if (idx.rank() == 1) {
    shape[static_cast<std::size_t>(axis)] = idx.shape[0];
    return shape;
  }
  bool fits = idx.rank() == x.rank();
  for (std::size_t k = 0; fits && k < x.rank(); ++k) {
    fits = static_cast<std::int64_t>(k) == axis || idx.shape[k] == x.shape[k];
  }
  if (!fits) {
    throw ShapeError(std::string(op) + ": index operand " + idx.to_string() + " for operand " + x.to_string() +
                     " along axis " + std::to_string(axis) + "; expected a 1-D index or one of rank " +
                     std::to_string(x.rank()) + " whose other axes match the operand's");
  }
  return idx.shape;
}
}  // namespace

StdTensorOp take(const TensorType& x, const TensorType& idx, std::int64_t axis) {
  check_axis("take", x, axis);
  Shape shape = indexed_shape("take", x, idx, axis);
  return detail::make(OpKind::Take, TensorType{x.dtype, std::move(shape)}, OpAttrs(AxisAttrs{axis, false}));
}

StdTensorOp index_add(const TensorType& base, const TensorType& idx, const TensorType& updates, std::int64_t axis) {
  check_axis("index_add", base, axis);
  Shape expect = indexed_shape("index_add", base, idx, axis);
  if (updates.dtype != base.dtype || updates.shape != expect) {
    throw ShapeError("index_add: base " + base.to_string() + ", index " + idx.to_string() + ", updates " +
                     updates.to_string() + "; expected updates " + TensorType{base.dtype, expect}.to_string());
  }
  detail::require_dtype("index_add", base, base.dtype != DType::Bool, "a numeric dtype (not bool)");
  return detail::make(OpKind::IndexAdd, base, OpAttrs(AxisAttrs{axis, false}));
}

StdTensorOp cumsum(const TensorType& x, std::int64_t axis, bool reverse) {
  check_axis("cumsum", x, axis);
  detail::require_dtype("cumsum", x, x.dtype != DType::Bool, "a numeric dtype (not bool)");
  return detail::make(OpKind::Cumsum, x, OpAttrs(AxisAttrs{axis, reverse}));
}

StdTensorOp reverse(const TensorType& x, std::vector<std::int64_t> axes) {
  std::sort(axes.begin(), axes.end());
  detail::check_axes("reverse", "axes", axes, static_cast<std::int64_t>(x.rank()), x.to_string());
  return detail::make(OpKind::Reverse, x, OpAttrs(ReverseAxes{std::move(axes)}));
}

}  // namespace ops

// ---- kernels -----------------------------------------------------------------------------------

namespace detail {
namespace {

/// The operand as [outer, n, inner] around `axis`.
struct AxisView {
  std::int64_t outer = 1, n = 1, inner = 1;
};
AxisView around(const Shape& shape, std::int64_t axis) {
  AxisView v;
  for (std::size_t k = 0; k < shape.size(); ++k) {
    const auto a = static_cast<std::int64_t>(k);
    (a < axis ? v.outer : a == axis ? v.n : v.inner) *= shape[k];
  }
  return v;
}

/// The index entries as positions in [0, n), read in place: checked once on construction
/// (ValueError naming the op and the first entry outside [-n, n)); a negative entry counts from
/// the end. Not copied: a gather of 10^6 rows spent a tenth of its time writing and reading a
/// copy of its index.
class Positions {
 public:
  Positions(const char* op, const Tensor& idx, std::int64_t n) : at_(idx.data<std::int64_t>()), size_(idx.numel()), n_(n) {
    for (std::int64_t j = 0; j < size_; ++j) {
      if (at_[j] < -n || at_[j] >= n) {
        throw ValueError(std::string(op) + ": index " + std::to_string(at_[j]) + " (entry " + std::to_string(j) +
                         ") is out of range for an axis of length " + std::to_string(n) + "; expected [-" +
                         std::to_string(n) + ", " + std::to_string(n) + ")");
      }
    }
  }
  std::int64_t operator[](std::int64_t j) const { return at_[j] < 0 ? at_[j] + n_ : at_[j]; }
  std::int64_t size() const { return size_; }

 private:
  const std::int64_t* at_;
  std::int64_t size_, n_;
};

/// take with an index of x's rank (take_along_axis): r[o, j, i] = x[o, idx[o, j, i], i].
Tensor take_along(const StdTensorOp& op, const Tensor& x, const Tensor& idx) {
  const AxisView v = around(x.shape(), op.attrs.get<AxisAttrs>().axis);
  const Positions p("take", idx, v.n);
  const std::int64_t m = idx.numel() == 0 ? 0 : idx.numel() / (v.outer * v.inner);
  Tensor r = Tensor::uninitialized(op.out);
  const std::size_t es = dtype_size(x.dtype());
  const auto* src = static_cast<const std::byte*>(x.raw_data());
  auto* dst = static_cast<std::byte*>(r.raw_data());
  for (std::int64_t o = 0; o < v.outer; ++o) {
    for (std::int64_t j = 0; j < m; ++j) {
      for (std::int64_t i = 0; i < v.inner; ++i) {
        const std::int64_t q = (o * m + j) * v.inner + i;
        const std::int64_t from = (o * v.n + p[q]) * v.inner + i;
        std::memcpy(dst + static_cast<std::size_t>(q) * es, src + static_cast<std::size_t>(from) * es, es);
      }
    }
  }
  return r;
}

Tensor eval_take(const StdTensorOp& op, Operands in) {
  const Tensor& x = *in[0];
  if (in[1]->shape().size() != 1) return take_along(op, x, *in[1]);
  const AxisView v = around(x.shape(), op.attrs.get<AxisAttrs>().axis);
  const Positions p("take", *in[1], v.n);
  Tensor r = Tensor::uninitialized(op.out);
  const std::int64_t m = p.size();
  const std::size_t row = static_cast<std::size_t>(v.inner) * dtype_size(x.dtype());
  const auto* src = static_cast<const std::byte*>(x.raw_data());
  auto* dst = static_cast<std::byte*>(r.raw_data());
  const std::int64_t rows = v.outer * m;
  // Rows are independent: threads for copies big enough to repay waking them.
  const int threads = static_cast<double>(rows) * static_cast<double>(row) > (1 << 20) ? num_threads() : 1;
  exec::parallel_ranges(rows, threads, [&](std::int64_t lo, std::int64_t hi) {
    std::int64_t o = lo / m, j = lo % m;  // row q of the result is slice o's j-th pick
    for (std::int64_t q = lo; q < hi; ++q) {
      std::memcpy(dst + static_cast<std::size_t>(q) * row, src + static_cast<std::size_t>(o * v.n + p[j]) * row, row);
      if (++j == m) {
        j = 0;
        ++o;
      }
    }
  });
  return r;
}

Tensor eval_index_add(const StdTensorOp& op, Operands in) {
  const Tensor& base = *in[0];
  const Tensor& updates = *in[2];
  const AxisView v = around(base.shape(), op.attrs.get<AxisAttrs>().axis);
  const Positions p("index_add", *in[1], v.n);
  Tensor r = base.clone();
  const bool along = in[1]->shape().size() != 1;  // an index of base's rank: one entry per update
  const std::int64_t m = along ? (p.size() == 0 ? 0 : p.size() / (v.outer * v.inner)) : p.size();
  visit_dtype(base.dtype(), [&](auto zero) {
    using T = decltype(zero);
    if constexpr (!std::is_same_v<T, bool>) {
      T* out = r.data<T>();
      const T* u = updates.data<T>();
      if (along) {  // r[o, idx[o, j, i], i] += u[o, j, i], in update order
        for (std::int64_t o = 0; o < v.outer; ++o) {
          for (std::int64_t j = 0; j < m; ++j) {
            for (std::int64_t i = 0; i < v.inner; ++i) {
              const std::int64_t q = (o * m + j) * v.inner + i;
              out[(o * v.n + p[q]) * v.inner + i] += u[q];
            }
          }
        }
        return;
      }
      // Serial over the index (repeated entries add into one row), vectorizable over the row.
      for (std::int64_t o = 0; o < v.outer; ++o) {
        for (std::int64_t j = 0; j < m; ++j) {
          T* d = out + (o * v.n + p[j]) * v.inner;
          const T* s = u + (o * m + j) * v.inner;
          for (std::int64_t i = 0; i < v.inner; ++i) d[i] += s[i];
        }
      }
    }
  });
  return r;
}

Tensor eval_cumsum(const StdTensorOp& op, Operands in) {
  const Tensor& x = *in[0];
  const auto& a = op.attrs.get<AxisAttrs>();
  const AxisView v = around(x.shape(), a.axis);
  Tensor r = Tensor::uninitialized(op.out);
  visit_dtype(x.dtype(), [&](auto zero) {
    using T = decltype(zero);
    if constexpr (!std::is_same_v<T, bool>) {
      const T* src = x.data<T>();
      T* dst = r.data<T>();
      for (std::int64_t o = 0; o < v.outer; ++o) {
        const std::int64_t base = o * v.n * v.inner;
        // Row by row along the axis, each row added to the running row: the inner loop is
        // contiguous (and vectorizes) whatever the axis.
        for (std::int64_t t = 0; t < v.n; ++t) {
          const std::int64_t k = a.reverse ? v.n - 1 - t : t;
          const T* s = src + base + k * v.inner;
          T* d = dst + base + k * v.inner;
          if (t == 0) {
            std::copy(s, s + v.inner, d);
          } else {
            const T* prev = d + (a.reverse ? v.inner : -v.inner);
            for (std::int64_t i = 0; i < v.inner; ++i) d[i] = prev[i] + s[i];
          }
        }
      }
    }
  });
  return r;
}

Tensor eval_reverse(const StdTensorOp& op, Operands in) {
  const Tensor& x = *in[0];
  Tensor r = Tensor::uninitialized(op.out);
  if (r.numel() == 0) return r;
  // A copy whose source steps backwards along the reversed axes, from their last element.
  Strides src = row_major_strides(x.shape());
  std::int64_t offset = 0;
  for (std::int64_t k : op.attrs.get<ReverseAxes>().axes) {
    const auto i = static_cast<std::size_t>(k);
    offset += (x.shape()[i] - 1) * src[i];
    src[i] = -src[i];
  }
  const std::size_t es = dtype_size(x.dtype());
  strided_copy(static_cast<std::byte*>(r.raw_data()), row_major_strides(r.shape()),
               static_cast<const std::byte*>(x.raw_data()) + offset * static_cast<std::int64_t>(es), src, r.shape(), es);
  return r;
}

// ---- AD rules ----------------------------------------------------------------------------------

/// Linear ops in their data operands: the JVP is the op on the tangents (a fixed zero standing in
/// for an absent one is only needed by index_add, whose two data operands are jointly linear).
Tangents jvp_linear_data(const StdTensorOp& op, const JvpArgs& a) {
  if (!is_inexact(op.out.dtype)) return {std::nullopt};
  RuleTrace r(a.b);
  if (op.kind == OpKind::Take) {
    return {r.result(apply_binary(op, r.linear(*a.t[0]), r.fixed(a.x[1])), op, tidu::RuleKind::Jvp)};
  }
  if (op.kind == OpKind::IndexAdd) {
    const Traced base = r.linear_or_zeros(a.t[0], type_of(a.x[0]));
    const Traced upd = r.linear_or_zeros(a.t[2], type_of(a.x[2]));
    return {r.result(apply(op, {base, r.fixed(a.x[1]), upd}), op, tidu::RuleKind::Jvp)};
  }
  return {r.result(apply_unary(op, r.linear(*a.t[0])), op, tidu::RuleKind::Jvp)};
}

Tangents transpose_take(const StdTensorOp& op, const TransposeArgs& a) {
  if (!a.role.is_active(0) || a.role.is_active(1)) not_linear(op, "take is linear in its data operand only");
  RuleTrace r(a.b);
  const Traced zero = r.zeros(type_of(a.b.key_of(a.x[0])));
  const Traced index = r.fixed(a.x[1]);
  const Traced ct = r.linear(a.ct());
  const std::int64_t axis = op.attrs.get<AxisAttrs>().axis;
  return {r.result(apply(ops::index_add(zero.type(), index.type(), ct.type(), axis), {zero, index, ct}), op,
                   tidu::RuleKind::Transpose),
          std::nullopt};
}

/// The take whose transpose index_add is: for each update element, the base element it adds into.
StdTensorOp index_add_landing(const StdTensorOp& op, std::span<const TensorType> t) {
  return ops::take(t[0], t[1], op.attrs.get<AxisAttrs>().axis);
}

Tangents transpose_index_add(const StdTensorOp& op, const TransposeArgs& a) {
  if (a.role.is_active(1)) not_linear(op, "the index operand carries no cotangent");
  Tangents result(3);
  if (a.role.is_active(0)) result[0] = a.ct();
  if (a.role.is_active(2)) {
    RuleTrace r(a.b);
    const Traced ct = r.linear(a.ct());
    const Traced index = r.fixed(a.x[1]);
    const TensorType types[] = {ct.type(), index.type(), type_of(a.b.key_of(a.x[2]))};
    result[2] = r.result(apply_binary(index_add_landing(op, types), ct, index), op, tidu::RuleKind::Transpose);
  }
  return result;
}

Tangents transpose_cumsum(const StdTensorOp& op, const TransposeArgs& a) {
  if (!a.role.is_active(0)) not_linear(op, "its only operand is fixed");
  RuleTrace r(a.b);
  const auto& attrs = op.attrs.get<AxisAttrs>();
  const Traced ct = r.linear(a.ct());
  return {r.result(apply_unary(ops::cumsum(ct.type(), attrs.axis, !attrs.reverse), ct), op, tidu::RuleKind::Transpose)};
}

Tangents transpose_reverse(const StdTensorOp& op, const TransposeArgs& a) {
  if (!a.role.is_active(0)) not_linear(op, "its only operand is fixed");
  RuleTrace r(a.b);
  return {r.result(apply_unary(op, r.linear(a.ct())), op, tidu::RuleKind::Transpose)};
}

}  // namespace

// ---- definitions -------------------------------------------------------------------------------

// vmap (ir/batching.hpp). An index not batched is the same for every example: the op along the
// shifted axis, every data operand with the batch axis. An index of the operand's rank gets the
// batch axis too. A batched 1-D index idx[b, j] becomes the index of the operand's rank (take along
// the axis) that repeats it over the other axes: r[b, o, j, i] = x[b, o, idx[b, j], i], so the
// op's own kernel runs once on the whole batch and keeps its semantics exactly: negative entries
// count from the end, and one outside [-n, n) throws ValueError. (A gather would clamp instead.)
// index_add along the axis adds each update in the same order as the 1-D form.

namespace {
/// The batched 1-D index [B, m] repeated to the shape of a take along `axis` (shifted past the
/// batch axis) of a batched operand of shape `data`: [B, data[1..axis), m, data(axis..)].
Traced along_axis(const Traced& index, const Shape& data, std::int64_t axis) {
  Shape shape = data, column(data.size(), 1);
  const auto a = static_cast<std::size_t>(axis);
  shape[a] = column[a] = index.shape()[1];
  column[0] = index.shape()[0];
  return broadcast_to(reshape(index, std::move(column)), std::move(shape));
}
}  // namespace

static std::vector<BatchedValue> batch_take(const StdTensorOp& op, std::span<const BatchedValue> x, std::int64_t batch_size) {
  const std::int64_t axis = op.attrs.get<AxisAttrs>().axis + 1;
  const std::size_t index_rank = x[1].value.rank() - (x[1].batched ? 1 : 0);
  const Traced data = detail::with_batch_axis(x[0], batch_size);
  Traced index = x[1].value;
  if (index_rank == 1 && x[1].batched) {
    index = along_axis(index, data.shape(), axis);
  } else if (index_rank != 1) {
    index = detail::with_batch_axis(x[1], batch_size);
  }
  return detail::all_batched({apply(ops::take(data.type(), index.type(), axis), {data, index})});
}

static std::vector<BatchedValue> batch_index_add(const StdTensorOp& op, std::span<const BatchedValue> x,
                                                 std::int64_t batch_size) {
  const std::int64_t axis = op.attrs.get<AxisAttrs>().axis + 1;
  const std::size_t index_rank = x[1].value.rank() - (x[1].batched ? 1 : 0);
  const Traced base = detail::with_batch_axis(x[0], batch_size), updates = detail::with_batch_axis(x[2], batch_size);
  Traced index = x[1].value;
  if (index_rank == 1 && x[1].batched) {
    index = along_axis(index, updates.shape(), axis);
  } else if (index_rank != 1) {
    index = detail::with_batch_axis(x[1], batch_size);
  }
  return detail::all_batched(
      {apply(ops::index_add(base.type(), index.type(), updates.type(), axis), {base, index, updates})});
}

const OpDef& def_Take() {
  static const OpDef d{.name = "take", .kind = OpKind::Take, .operands = {kLinear, kNoGrad},
                       .shape_rule = single_type(+[](Types t, const OpAttrs& a) {
                         return ops::take(t[0], t[1], a.get<AxisAttrs>().axis).out;
                       }),
                       .kernel = single_result(eval_take), .jvp = jvp_linear_data, .transpose = transpose_take, .dependence = Dependence::Moves, .batch = batch_take};
  return d;
}
const OpDef& def_IndexAdd() {
  static const OpDef d{.name = "index_add", .kind = OpKind::IndexAdd, .operands = {kLinear, kNoGrad, kLinear},
                       .shape_rule = single_type(+[](Types t, const OpAttrs& a) {
                         return ops::index_add(t[0], t[1], t[2], a.get<AxisAttrs>().axis).out;
                       }),
                       .kernel = single_result(eval_index_add), .jvp = jvp_linear_data,
                       .transpose = transpose_index_add, .dependence = Dependence::Accumulates,
                       .landing = index_add_landing, .batch = batch_index_add};
  return d;
}
static std::vector<BatchedValue> batch_cumsum(const StdTensorOp& op, std::span<const BatchedValue> x, std::int64_t batch_size) {
  (void)batch_size;
  const AxisAttrs& a = op.attrs.get<AxisAttrs>();
  return detail::all_batched({apply(ops::cumsum(x[0].value.type(), a.axis + 1, a.reverse), {x[0].value})});
}

const OpDef& def_Cumsum() {
  static const OpDef d{.name = "cumsum", .kind = OpKind::Cumsum, .operands = {kLinear},
                       .shape_rule = single_type(+[](Types t, const OpAttrs& a) {
                         const auto& c = a.get<AxisAttrs>();
                         return ops::cumsum(t[0], c.axis, c.reverse).out;
                       }),
                       .kernel = single_result(eval_cumsum), .jvp = jvp_linear_data, .transpose = transpose_cumsum, .batch = batch_cumsum};
  return d;
}
static std::vector<BatchedValue> batch_reverse(const StdTensorOp& op, std::span<const BatchedValue> x, std::int64_t batch_size) {
  (void)batch_size;
  return detail::all_batched(
      {apply(ops::reverse(x[0].value.type(), detail::shifted(op.attrs.get<ReverseAxes>().axes)), {x[0].value})});
}

const OpDef& def_Reverse() {
  static const OpDef d{.name = "reverse", .kind = OpKind::Reverse, .operands = {kLinear},
                       .shape_rule = single_type(+[](Types t, const OpAttrs& a) {
                         return ops::reverse(t[0], a.get<ReverseAxes>().axes).out;
                       }),
                       .kernel = single_result(eval_reverse), .jvp = jvp_linear_data, .transpose = transpose_reverse, .dependence = Dependence::Moves, .batch = batch_reverse};
  return d;
}

}  // namespace detail
}  // namespace tenferro
