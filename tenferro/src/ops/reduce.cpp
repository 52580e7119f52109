// Reductions: reduce_sum, reduce_prod, reduce_max, reduce_min over a set of axes.
// Order: shape/dtype rules, kernels, JVP rules, transpose rules, definitions.
//
// The result drops the reduced axes; an empty axis list is the identity (a copy). Summation order
// is deterministic: each result element is a left fold, in row-major order of the reduced
// indices, of its operand elements, starting from the identity of the reduction (0, 1, -inf, +inf).
// There is no reassociation and no threading, so results are bitwise reproducible. max and min
// propagate NaN.
//
// Derivatives (integer results carry none):
// - reduce_sum: linear; its transpose broadcasts the cotangent back over the reduced axes.
// - reduce_prod: dy = sum_i prod_{j != i} x_j dx_i, computed without dividing by zero; exact
//   at inputs with zeros through second order (see the rule).
// - reduce_max/min: the tangent of the extremal elements, split equally among ties (the mean of
//   their tangents). Where a slice holds a NaN its result is NaN and so is its tangent.
#include <algorithm>
#include <cmath>
#include <limits>


#include "ir/batching.hpp"
#include "ir/family.hpp"
#include "kernels/layout.hpp"
#include "kernels/parallel.hpp"
#include "tenferro/threads.hpp"
#include "tenferro/ops/make.hpp"
#include "tenferro/ops/record.hpp"
#include "tenferro/ops/rule.hpp"

namespace tenferro {

// ---- shape/dtype rules -------------------------------------------------------------------------

namespace ops {

StdTensorOp reduce(OpKind kind, const TensorType& a, Axes axes) {
  if (kind == OpKind::ReduceSum || kind == OpKind::ReduceProd) {
    detail::require_dtype(op_def(kind).name.c_str(), a, a.dtype != DType::Bool, "a numeric dtype (not bool)");
  } else if (kind == OpKind::ReduceMax || kind == OpKind::ReduceMin) {
    detail::require_dtype(op_def(kind).name.c_str(), a,
                          a.dtype == DType::F32 || a.dtype == DType::F64 || a.dtype == DType::I64,
                          "a real dtype (f32, f64 or i64)");
  } else {
    throw Error("ops::reduce: " + op_def(kind).name + " is not a reduction");
  }
  const char* name = op_def(kind).name.c_str();
  detail::check_axes(name, "axes", axes, static_cast<std::int64_t>(a.rank()), a.to_string());
  std::sort(axes.begin(), axes.end());
  Shape shape;
  for (std::int64_t k : detail::complement_axes(axes, static_cast<std::int64_t>(a.rank()))) {
    shape.push_back(a.shape[static_cast<std::size_t>(k)]);
  }
  return detail::make(kind, TensorType{a.dtype, std::move(shape)}, OpAttrs(ReduceAxes{std::move(axes)}));
}

}  // namespace ops

// ---- kernels -----------------------------------------------------------------------------------

namespace detail {
namespace {

/// Folds `x` into `out` (initialized to the reduction's identity) with `f`, visiting the operand
/// in row-major order; out_strides[k] is the result stride of operand axis k (0 if reduced).
/// Each result element folds its operand elements in row-major order whatever the thread count:
/// threads split the outermost dimension only when it is kept (disjoint results).
template <class T, class F>
void fold(const T* x, T* out, const Shape& shape, const Strides& out_strides, F&& f) {
  // Merge adjacent axes that step the result consistently (runs of reduced or of kept axes).
  struct Dim {
    std::int64_t n, os;
  };
  std::vector<Dim> dims;
  std::int64_t total = 1;
  for (std::size_t k = 0; k < shape.size(); ++k) {
    if (shape[k] == 0) return;
    total *= shape[k];
    if (shape[k] == 1) continue;
    if (!dims.empty() && dims.back().os == out_strides[k] * shape[k]) {
      dims.back() = {dims.back().n * shape[k], out_strides[k]};
    } else {
      dims.push_back({shape[k], out_strides[k]});
    }
  }
  while (dims.size() < 3) dims.insert(dims.begin(), Dim{1, 0});
  // The three innermost dimensions as nested loops (a "plane"), an odometer over the rest: short
  // runs (the windows of a pool, [.., 6, 2, 6, 2] reduced over the 2s) do not pay the odometer
  // per run, and a reduced innermost pair is folded as one step of a loop over the kept axis.
  const std::size_t nd = dims.size();
  const Dim d2 = dims[nd - 3], d1 = dims[nd - 2], d0 = dims[nd - 1];
  const std::int64_t plane_size = d2.n * d1.n * d0.n;
  auto plane = [&](const T* xp, std::int64_t o) {
    for (std::int64_t a = 0; a < d2.n; ++a, o += d2.os) {
      if (d0.os == 0 && d0.n == 2 && d1.os == 1) {  // out[j] over pairs x[2j], x[2j + 1]
        T* dst = out + o;
        for (std::int64_t j = 0; j < d1.n; ++j) dst[j] = f(f(dst[j], xp[2 * j]), xp[2 * j + 1]);
        xp += 2 * d1.n;
        continue;
      }
      for (std::int64_t j = 0, oj = o; j < d1.n; ++j, oj += d1.os, xp += d0.n) {
        if (d0.os == 0) {  // inner run reduced into one element
          T acc = out[oj];
          for (std::int64_t i = 0; i < d0.n; ++i) acc = f(acc, xp[i]);
          out[oj] = acc;
        } else {
          for (std::int64_t i = 0; i < d0.n; ++i) out[oj + i * d0.os] = f(out[oj + i * d0.os], xp[i]);
        }
      }
    }
  };
  // Planes [first, last) of the odometer over dims[0 .. nd - 3).
  auto planes = [&](std::int64_t first, std::int64_t last) {
    std::vector<std::int64_t> index(nd - 3, 0);
    std::int64_t o = 0;
    for (std::size_t k = nd - 3, rest = static_cast<std::size_t>(first); k-- > 0;) {
      index[k] = static_cast<std::int64_t>(rest) % dims[k].n;
      rest /= static_cast<std::size_t>(dims[k].n);
      o += index[k] * dims[k].os;
    }
    for (std::int64_t p = first; p < last; ++p) {
      plane(x + p * plane_size, o);
      for (std::size_t k = nd - 3; k-- > 0;) {
        o += dims[k].os;
        if (++index[k] < dims[k].n) break;
        o -= dims[k].os * dims[k].n;
        index[k] = 0;
      }
    }
  };
  const std::int64_t count = total / plane_size;
  const bool split = nd > 3 && dims[0].os != 0 && total >= (std::int64_t{1} << 15) && num_threads() > 1;
  if (!split) {
    planes(0, count);
    return;
  }
  const std::int64_t per_outer = count / dims[0].n;  // planes per index of the outermost dimension
  // Each plane is reduced on its own, so the cut into ranges does not change the bits.
  exec::parallel_ranges(dims[0].n, num_threads(),
                        [&](std::int64_t lo, std::int64_t hi) { planes(lo * per_outer, hi * per_outer); });
}

template <class T>
bool is_nan(T v) {
  if constexpr (std::is_floating_point_v<T>) return std::isnan(v);
  return false;
}
template <class T>
T lowest() {
  if constexpr (std::numeric_limits<T>::has_infinity) return -std::numeric_limits<T>::infinity();
  return std::numeric_limits<T>::lowest();
}
template <class T>
T highest() {
  if constexpr (std::numeric_limits<T>::has_infinity) return std::numeric_limits<T>::infinity();
  return std::numeric_limits<T>::max();
}

/// The reduced axes of a reduction op.
const std::vector<std::int64_t>& axes_of(const StdTensorOp& op) { return op.attrs.get<ReduceAxes>().axes; }

enum class Fold { Sum, Prod, Max, Min };

Tensor eval_reduce(const StdTensorOp& op, Operands in, Fold fold_kind) {
  const Tensor& a = *in[0];
  const auto& axes = axes_of(op);
  if (axes.empty()) return a.clone();
  Tensor r(op.out);
  // The result stride of each operand axis: 0 for reduced axes.
  const Strides rs = row_major_strides(op.out.shape);
  Strides os(a.rank(), 0);
  for (std::size_t k = 0, j = 0; k < a.rank(); ++k) {
    if (!std::binary_search(axes.begin(), axes.end(), static_cast<std::int64_t>(k)))
      os[k] = rs[j++];
  }
  visit_dtype(a.dtype(), [&](auto zero) {
    using T = decltype(zero);
    if constexpr (!std::is_same_v<T, bool>) {
      const T* x = a.data<T>();
      T* z = r.data<T>();
      const std::int64_t n = r.numel();
      switch (fold_kind) {
        case Fold::Sum: fold(x, z, a.shape(), os, [](T s, T v) { return s + v; }); break;
        case Fold::Prod:
          std::fill_n(z, n, T(1));
          fold(x, z, a.shape(), os, [](T s, T v) { return s * v; });
          break;
        case Fold::Max:
        case Fold::Min:
          if constexpr (std::is_arithmetic_v<T>) {
            // NaN propagates: a NaN accumulator loses every comparison and stays, a NaN v is taken.
            // Ties keep the accumulator (the first of equal values, so max(+0, -0) is +0). Written
            // as two plain selects, which compile to max/min and a blend without branches:
            // data-dependent branches mispredict on half of random inputs.
            const bool max = fold_kind == Fold::Max;
            std::fill_n(z, n, max ? lowest<T>() : highest<T>());
            if (max) {
              fold(x, z, a.shape(), os, [](T s, T v) {
                const T m = v > s ? v : s;
                return is_nan(v) ? v : m;
              });
            } else {
              fold(x, z, a.shape(), os, [](T s, T v) {
                const T m = v < s ? v : s;
                return is_nan(v) ? v : m;
              });
            }
          }
          break;
      }
    }
  });
  return r;
}
}  // namespace

// ---- JVP rules ---------------------------------------------------------------------------------

namespace {
/// What the reduction rules share for one reduction op: broadcasting a reduced value back over
/// the reduced axes, constants, and sums over the reduced axes.
class ReduceRule {
 public:
  ReduceRule(RuleTrace& r, const StdTensorOp& op, const TensorType& in) : r_(r), op_(op), in_(in) {}

  /// A value of the reduced type broadcast back over the reduced axes (the operand's shape).
  Traced broadcast_back(const Traced& v) const { return apply_unary(broadcast_op(v.type()), v); }
  StdTensorOp broadcast_op(const TensorType& reduced) const {
    return ops::broadcast_in_dim(reduced, in_.shape,
                                 complement_axes(axes_of(op_), static_cast<std::int64_t>(in_.rank())));
  }
  /// A fixed tensor of `type` with every element `value` (`like`: any value of the rule's trace).
  Traced full(const Traced& like, const TensorType& type, double value) const {
    if (value == 0.0) return r_.zeros(type);
    return broadcast_to(constant(like, Tensor::scalar(value, type.dtype)), type.shape);
  }
  Traced sum(const Traced& v) const { return apply_unary(ops::reduce(OpKind::ReduceSum, v.type(), axes_of(op_)), v); }

 private:
  RuleTrace& r_;
  const StdTensorOp& op_;
  const TensorType& in_;
};
}  // namespace

namespace {
Tangents jvp_reduce(const StdTensorOp& op, const JvpArgs& a) {
  if (!is_inexact(op.out.dtype)) return {std::nullopt};  // integers carry no tangent
  RuleTrace r(a.b);
  const Traced t = r.linear(*a.t[0]);
  if (op.kind == OpKind::ReduceSum || axes_of(op).empty()) {  // linear (or the identity)
    return {r.result(apply_unary(op, t), op, tidu::RuleKind::Jvp)};
  }
  const TensorType& in = type_of(a.x[0]);
  const TensorType real{real_dtype(in.dtype), in.shape};
  ReduceRule rule(r, op, in);
  const Traced x = r.fixed(a.x[0]);
  if (op.kind == OpKind::ReduceMax || op.kind == OpKind::ReduceMin) {
    // The derivative goes to the extremal elements, split equally among ties:
    // dy = reduce_sum(mask * t) / count with mask = (x == broadcast(y)), count = reduce_sum(mask).
    // Dividing after the sum divides on the reduced shape, and the transpose,
    // mask * broadcast(ct / count), reads one broadcast (a max pool's gradient).
    const Traced m = astype(eq(x, rule.broadcast_back(r.fixed(a.y[0]))), in.dtype);
    const Traced count = rule.sum(m);
    return {r.result(rule.sum(m * t) / count, op, tidu::RuleKind::Jvp)};
  }
  // dy = sum_i t_i * o_i with o_i = prod_{j != i} x_j, the product of the others, computed
  // without dividing by zero. Per slice, with c the number of zeros, p the product of the
  // nonzero elements and s the sum of the zero elements (value 0, tangent their tangents):
  //   x_i != 0:  o_i = (p / x_i) * g,  g = 1 if c == 0, s if c == 1, 0 if c >= 2
  //   x_i == 0:  o_i = p * h,          h = 1 if c == 1, s - x_i if c == 2, 0 if c >= 3
  // The factors s and s - x_i are 0 but carry the tangent of the remaining zero, so the
  // derivative of o (the second derivative of the product) is exact at zeros as well: the
  // rule is exact through second order everywhere. p / x_i may overflow where the exact
  // product of the others would not (as in the usual y / x_i rule). Values that record are
  // named one per line (see "Order" in tenferro/ops/rule.hpp).
  const Traced zeros = rule.full(x, in, 0.0);
  const Traced ones = rule.full(x, in, 1.0);
  const Traced is_zero = eq(x, zeros);
  const Traced x_or_one = where(is_zero, ones, x);
  const Traced p = rule.broadcast_back(apply_unary(ops::reduce(OpKind::ReduceProd, in, axes_of(op)), x_or_one));
  const Traced s = rule.broadcast_back(rule.sum(where(is_zero, x, zeros)));
  const Traced c = rule.broadcast_back(rule.sum(astype(is_zero, real.dtype)));
  auto count_is = [&](double k) { return eq(c, rule.full(x, real, k)); };
  const Traced c0 = count_is(0);
  const Traced c1 = count_is(1);
  const Traced s_if_one = where(c1, s, zeros);
  const Traced g = where(c0, ones, s_if_one);
  const Traced s_minus_x = s - x;
  const Traced c2 = count_is(2);
  const Traced s_minus_x_if_two = where(c2, s_minus_x, zeros);
  const Traced h = where(c1, ones, s_minus_x_if_two);
  const Traced q = p / x_or_one;
  const Traced ph = p * h;
  const Traced qg = q * g;
  const Traced others = where(is_zero, ph, qg);
  return {r.result(rule.sum(others * t), op, tidu::RuleKind::Jvp)};
}

// ---- transpose rules ---------------------------------------------------------------------------

Tangents transpose_reduce(const StdTensorOp& op, const TransposeArgs& a) {
  if (op.kind != OpKind::ReduceSum && !axes_of(op).empty()) {
    not_linear(op, "only reduce_sum (or a reduction over no axes) is linear");
  }
  if (!a.role.is_active(0)) not_linear(op, "its only operand is fixed");
  // The adjoint of summing over axes is broadcasting back along them (docs/design.md,
  // "Vector example 2").
  RuleTrace r(a.b);
  const ReduceRule rule(r, op, type_of(a.b.key_of(a.x[0])));
  return {r.result(rule.broadcast_back(r.linear(a.ct())), op, tidu::RuleKind::Transpose)};
}

TensorType reduce_type(Types t, const OpAttrs& attrs, OpKind kind) {
  return ops::reduce(kind, t[0], attrs.get<ReduceAxes>().axes).out;
}
}  // namespace

// ---- definitions -------------------------------------------------------------------------------
// Every reduction admits a transpose: reduce_sum is linear, and the others over no axes are the
// identity (their JVP emits the op itself then).

/// vmap: the reduced axes, past the batch axis.
static std::vector<BatchedValue> batch_reduce(const StdTensorOp& op, std::span<const BatchedValue> x, std::int64_t batch_size) {
  (void)batch_size;
  return detail::all_batched(
      {apply(ops::reduce(op.kind, x[0].value.type(), detail::shifted(op.attrs.get<ReduceAxes>().axes)), {x[0].value})});
}

const OpDef& def_ReduceSum() {
  static const OpDef d{
      .name = "reduce_sum", .kind = OpKind::ReduceSum, .operands = {kLinear},
      .shape_rule = single_type(+[](Types t, const OpAttrs& a) { return reduce_type(t, a, OpKind::ReduceSum); }),
      .kernel = single_result(+[](const StdTensorOp& op, Operands in) { return eval_reduce(op, in, Fold::Sum); }),
      .jvp = jvp_reduce, .transpose = transpose_reduce, .fusion = Fusion::SumReduction, .batch = batch_reduce};
  return d;
}

const OpDef& def_ReduceProd() {
  static const OpDef d{
      .name = "reduce_prod", .kind = OpKind::ReduceProd, .operands = {kNonlinear},
      .shape_rule = single_type(+[](Types t, const OpAttrs& a) { return reduce_type(t, a, OpKind::ReduceProd); }),
      .kernel = single_result(+[](const StdTensorOp& op, Operands in) { return eval_reduce(op, in, Fold::Prod); }),
      .jvp = jvp_reduce, .transpose = transpose_reduce, .fusion = Fusion::Reduction, .batch = batch_reduce};
  return d;
}

const OpDef& def_ReduceMax() {
  static const OpDef d{
      .name = "reduce_max", .kind = OpKind::ReduceMax, .operands = {kNonlinear},
      .shape_rule = single_type(+[](Types t, const OpAttrs& a) { return reduce_type(t, a, OpKind::ReduceMax); }),
      .kernel = single_result(+[](const StdTensorOp& op, Operands in) { return eval_reduce(op, in, Fold::Max); }),
      .jvp = jvp_reduce, .transpose = transpose_reduce, .fusion = Fusion::Reduction, .batch = batch_reduce};
  return d;
}

const OpDef& def_ReduceMin() {
  static const OpDef d{
      .name = "reduce_min", .kind = OpKind::ReduceMin, .operands = {kNonlinear},
      .shape_rule = single_type(+[](Types t, const OpAttrs& a) { return reduce_type(t, a, OpKind::ReduceMin); }),
      .kernel = single_result(+[](const StdTensorOp& op, Operands in) { return eval_reduce(op, in, Fold::Min); }),
      .jvp = jvp_reduce, .transpose = transpose_reduce, .fusion = Fusion::Reduction, .batch = batch_reduce};
  return d;
}

}  // namespace detail
}  // namespace tenferro
