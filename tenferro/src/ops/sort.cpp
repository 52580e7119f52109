// sort: values and permutation along one axis, a multi-output primitive. Order: attributes, shape
// rule, kernel, JVP rule, definition.
//
// Result 0 is the operand sorted along the axis, result 1 (i64) the position along the axis each
// value came from. The sort is stable (equal values keep their order), NaN counts as the largest
// value (last when ascending, first when descending, as NumPy and PyTorch) and complex values sort
// by (real, imaginary).
//
// Derivative: the sorted values are the operand gathered at the permutation, so their tangent is
// the operand tangent gathered the same way, take(dx, perm, axis) with an index of full rank, a
// linear op whose transpose is index_add (scatter-add): reverse mode and every higher order come
// from the set. The permutation is piecewise constant and carries no tangent. At ties the
// derivative follows the stable order (a one-sided derivative).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "ir/batching.hpp"
#include "ir/family.hpp"
#include "tenferro/ops/index_attrs.hpp"
#include "tenferro/ops/make.hpp"
#include "tenferro/ops/record.hpp"
#include "tenferro/ops/rule.hpp"

namespace tenferro {

void SortAttrs::print(std::ostream& os) const {
  os << "axis=" << axis;
  if (descending) os << ", descending";
}

namespace ops {
StdTensorOp sort(const TensorType& x, std::int64_t axis, bool descending) {
  if (axis < 0 || axis >= static_cast<std::int64_t>(x.rank())) {
    throw ShapeError("sort: axis " + std::to_string(axis) + " out of range for operand " + x.to_string() +
                     "; expected an axis in [0, " + std::to_string(x.rank()) + ")");
  }
  detail::require_dtype("sort", x, x.dtype != DType::Bool, "a numeric dtype (not bool)");
  StdTensorOp op = detail::make(OpKind::Sort, x, OpAttrs(SortAttrs{axis, descending}));
  op.more_outs.push_back(TensorType{DType::I64, x.shape});
  return op;
}
}  // namespace ops

namespace detail {
namespace {

/// a < b in the sort order: NaN above everything (NaNs equal among themselves); complex numbers
/// by real part, then imaginary part.
template <class T>
bool less(const T& a, const T& b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a)) return false;
    return std::isnan(b) || a < b;
  } else if constexpr (std::is_integral_v<T>) {
    return a < b;
  } else {
    if (less(a.real(), b.real())) return true;
    if (less(b.real(), a.real())) return false;
    return less(a.imag(), b.imag());
  }
}

void eval_sort(const StdTensorOp& op, Operands in, std::span<Tensor> out) {
  const Tensor& x = *in[0];
  const auto& attrs = op.attrs.get<SortAttrs>();
  const auto axis = static_cast<std::size_t>(attrs.axis);
  const std::int64_t n = x.shape()[axis];
  std::int64_t inner = 1;
  for (std::size_t k = axis + 1; k < x.shape().size(); ++k) inner *= x.shape()[k];
  const std::int64_t outer = n * inner == 0 ? 0 : x.numel() / (n * inner);
  Tensor values = Tensor::uninitialized(op.out);
  Tensor perm = Tensor::uninitialized(op.output_type(1));
  std::int64_t* p = perm.data<std::int64_t>();
  visit_dtype(x.dtype(), [&](auto zero) {
    using T = decltype(zero);
    if constexpr (!std::is_same_v<T, bool>) {
      const T* src = x.data<T>();
      T* dst = values.data<T>();
      std::vector<T> line(static_cast<std::size_t>(n));
      std::vector<std::int64_t> order(static_cast<std::size_t>(n));
      for (std::int64_t o = 0; o < outer; ++o) {
        for (std::int64_t i = 0; i < inner; ++i) {
          const std::int64_t base = o * n * inner + i;
          for (std::int64_t k = 0; k < n; ++k) line[static_cast<std::size_t>(k)] = src[base + k * inner];
          std::iota(order.begin(), order.end(), std::int64_t{0});
          auto at = [&](std::int64_t k) -> const T& { return line[static_cast<std::size_t>(k)]; };
          if (attrs.descending) {
            std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) { return less(at(b), at(a)); });
          } else {
            std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) { return less(at(a), at(b)); });
          }
          for (std::int64_t k = 0; k < n; ++k) {
            const std::int64_t from = order[static_cast<std::size_t>(k)];
            dst[base + k * inner] = at(from);
            p[base + k * inner] = from;
          }
        }
      }
    }
  });
  out[0] = std::move(values);
  out[1] = std::move(perm);
}

Tangents jvp_sort(const StdTensorOp& op, const JvpArgs& a) {
  if (!is_inexact(op.out.dtype)) return {std::nullopt, std::nullopt};
  RuleTrace r(a.b);
  const TensorType& x = type_of(a.x[0]);
  const std::int64_t axis = op.attrs.get<SortAttrs>().axis;
  const Traced dv = apply_binary(ops::take(x, op.output_type(1), axis), r.linear(*a.t[0]), r.fixed(a.y[1]));
  return {r.result(dv, op, tidu::RuleKind::Jvp), std::nullopt};
}

}  // namespace

static std::vector<BatchedValue> batch_sort(const StdTensorOp& op, std::span<const BatchedValue> x, std::int64_t batch_size) {
  (void)batch_size;
  const SortAttrs& a = op.attrs.get<SortAttrs>();
  return detail::all_batched(apply_outputs(ops::sort(x[0].value.type(), a.axis + 1, a.descending), std::span<const Traced>(&x[0].value, 1)));
}

const OpDef& def_Sort() {
  static const OpDef d{
      .name = "sort", .kind = OpKind::Sort, .operands = {kNonlinear}, .outputs = 2,
      .shape_rule =
          [](Types t, const OpAttrs& a) {
            const auto& s = a.get<SortAttrs>();
            const StdTensorOp op = ops::sort(t[0], s.axis, s.descending);
            return std::vector<TensorType>{op.out, op.output_type(1)};
          },
      .kernel = eval_sort, .jvp = jvp_sort, .batch = batch_sort};
  return d;
}

}  // namespace detail
}  // namespace tenferro
