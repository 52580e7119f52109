#pragma once
// Traced tensors: the values user programs are written in. Every operation on a Traced records an
// op into its trace's graph; nothing is computed until the traced function is compiled and run
// (see tenferro/transforms.hpp: grad, jvp, vjp, ...). The trace itself is opaque here:
// tenferro/ops/record.hpp, the tier for writers of custom ops, opens it.
//
// Binary operations broadcast NumPy-style (shapes aligned at the trailing axis; size-1 axes
// stretch), lowered to broadcast_in_dim so the transpose reduces back. Shape and dtype errors are
// thrown here, at trace time, as ShapeError/DTypeError naming the op and the operand types.
#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "tenferro/dimension_numbers.hpp"
#include "tenferro/op_list.hpp"
#include "tenferro/tensor.hpp"

namespace tenferro {

class IndexExpr;  // tenferro/index_expr.hpp

struct TraceState;  // tenferro/ops/record.hpp

class Traced {
 public:
  /// The id of a value within its trace's graph (computegraph's LocalValueId).
  using ValueId = std::uint32_t;

  Traced(std::shared_ptr<TraceState> trace, ValueId id)
      : trace_(std::move(trace)), id_(id) {}

  const TensorType& type() const;
  const Shape& shape() const { return type().shape; }
  DType dtype() const { return type().dtype; }
  std::size_t rank() const { return type().shape.size(); }
  ValueId id() const { return id_; }
  const std::shared_ptr<TraceState>& trace() const { return trace_; }
  /// NumPy-style indexing: x[{1, tf::range(0, 4, 2), tf::ellipsis, tf::newaxis}]
  /// (tenferro/index_expr.hpp).
  Traced operator[](const IndexExpr& expr) const;

 private:
  std::shared_ptr<TraceState> trace_;
  ValueId id_;
};

/// A constant in `like`'s trace.
Traced constant(const Traced& like, Tensor value);
/// A scalar constant of `like`'s dtype broadcast to `like`'s shape.
Traced full_like(const Traced& like, double value);

/// The shape that a and b broadcast to (NumPy rules), or ShapeError naming `op`, both shapes and
/// the first axis that does not broadcast.
Shape broadcast_shapes(const char* op, const Shape& a, const Shape& b);

// ---- elementwise (binary ones broadcast; more functions in tenferro/math.hpp) ----
Traced add(const Traced& a, const Traced& b);
Traced sub(const Traced& a, const Traced& b);
Traced mul(const Traced& a, const Traced& b);
Traced div(const Traced& a, const Traced& b);
Traced pow(const Traced& a, const Traced& b);
Traced maximum(const Traced& a, const Traced& b);
Traced minimum(const Traced& a, const Traced& b);

// The elementwise functions that are one op each: one declaration per U and B entry of the op
// list (tenferro/op_list.hpp): neg, exp, log, sin, cos, tanh, sqrt, rsqrt, expm1, log1p, abs,
// sign, conj, real, imag here, and those tenferro/math.hpp describes (tan ... remainder). Unary:
// Traced name(const Traced& x); binary: Traced name(const Traced& a, const Traced& b),
// broadcasting. Each admits the dtypes its op's formula covers (DTypeError naming the op and them
// otherwise; docs/tenferro.md lists them).
#define TENFERRO_DECLARE_UNARY(X, kind, name) Traced name(const Traced& x);
#define TENFERRO_DECLARE_BINARY(X, kind, name) Traced name(const Traced& a, const Traced& b);
TENFERRO_OP_LIST(TENFERRO_OP_LIST_NONE, TENFERRO_DECLARE_UNARY, TENFERRO_DECLARE_BINARY, TENFERRO_OP_LIST_SKIP_M, TENFERRO_OP_LIST_SKIP)
#undef TENFERRO_DECLARE_UNARY
#undef TENFERRO_DECLARE_BINARY

/// Comparisons give bool tensors (never differentiated).
Traced eq(const Traced& a, const Traced& b);
Traced ne(const Traced& a, const Traced& b);
Traced lt(const Traced& a, const Traced& b);
Traced le(const Traced& a, const Traced& b);
Traced gt(const Traced& a, const Traced& b);
Traced ge(const Traced& a, const Traced& b);
/// Elementwise `pred ? on_true : on_false` (broadcasting all three).
Traced where(const Traced& pred, const Traced& on_true, const Traced& on_false);
/// where with a scalar on one side, of the other side's dtype: where(x > 0, x, 0.0).
Traced where(const Traced& pred, const Traced& on_true, double on_false);
Traced where(const Traced& pred, double on_true, const Traced& on_false);
Traced clamp(const Traced& x, const Traced& lo, const Traced& hi);

Traced operator+(const Traced& a, const Traced& b);
Traced operator-(const Traced& a, const Traced& b);
Traced operator*(const Traced& a, const Traced& b);
Traced operator/(const Traced& a, const Traced& b);
Traced operator-(const Traced& a);
Traced operator+(const Traced& a, double s);
Traced operator-(const Traced& a, double s);
Traced operator*(const Traced& a, double s);
Traced operator/(const Traced& a, double s);
Traced operator+(double s, const Traced& a);
Traced operator-(double s, const Traced& a);
Traced operator*(double s, const Traced& a);
Traced operator/(double s, const Traced& a);

// ---- shapes ----
/// Axes may be negative (counted from the end).
Traced transpose(const Traced& a, std::vector<std::int64_t> perm);
/// Reverses the axes.
Traced transpose(const Traced& a);
Traced reshape(const Traced& a, Shape shape);
Traced broadcast_to(const Traced& a, Shape shape);
Traced astype(const Traced& a, DType dtype);

// ---- reductions: sum(x) reduces every axis; sum(x, {}) reduces none ----
Traced sum(const Traced& a);
Traced sum(const Traced& a, std::vector<std::int64_t> axes);
Traced prod(const Traced& a, std::vector<std::int64_t> axes);
Traced max(const Traced& a, std::vector<std::int64_t> axes);
Traced min(const Traced& a, std::vector<std::int64_t> axes);
/// The maximum along `axis` (may be negative) and the index of its first occurrence (i64), as in
/// torch.max(a, dim); real dtypes. The values' derivative follows the chosen element; the index
/// has none. NaN counts as the maximum (its first occurrence is chosen).
std::pair<Traced, Traced> max_with_index(const Traced& a, std::int64_t axis);
std::pair<Traced, Traced> min_with_index(const Traced& a, std::int64_t axis);
/// The index (i64) of the first maximum / minimum along `axis`.
Traced argmax(const Traced& a, std::int64_t axis);
Traced argmin(const Traced& a, std::int64_t axis);
Traced mean(const Traced& a);
Traced mean(const Traced& a, std::vector<std::int64_t> axes);
/// Variance over `axes`: sum(|x - mean|^2) / (n - correction), n the number of reduced elements
/// (correction 0: the population variance; 1: the unbiased sample variance, Bessel's correction).
/// Real for complex operands (|x - m|^2 = re^2 + im^2), as in NumPy, JAX and PyTorch; n <=
/// correction divides by zero. Float or complex operands.
Traced var(const Traced& a, std::vector<std::int64_t> axes, double correction = 0);
/// Standard deviation, sqrt(var(a, axes, correction)) (named stddev: `std` is the standard library's
/// namespace).
Traced stddev(const Traced& a, std::vector<std::int64_t> axes, double correction = 0);

// ---- differentiation control ----
/// The value of `a`, with derivative zero: no tangent flows through it and no cotangent back.
Traced stop_gradient(const Traced& a);

// ---- contraction ----
Traced dot_general(const Traced& a, const Traced& b, DotDims dims);
/// Matrix product: 1-d and 2-d operands as in NumPy; higher ranks are batches of matrices over
/// equal leading axes.
Traced matmul(const Traced& a, const Traced& b);

// ---- neural-network composites (numerically stable) ----
/// log(sum(exp(x), axes)), shifted by the max.
Traced logsumexp(const Traced& x, std::vector<std::int64_t> axes);
Traced softmax(const Traced& x, std::int64_t axis = -1);
Traced log_softmax(const Traced& x, std::int64_t axis = -1);
/// 1 / (1 + exp(-x)), computed as (1 + tanh(x/2)) / 2.
Traced sigmoid(const Traced& x);
/// max(x, 0) with gradient 0 at 0.
Traced relu(const Traced& x);
/// log(1 + exp(x)) = max(x, 0) + log1p(exp(-|x|)).
Traced softplus(const Traced& x);
/// Mean over the batch of -sum(labels * log_softmax(logits)) along the last axis; labels are
/// probabilities (for example one-hot) of the logits' shape.
Traced cross_entropy(const Traced& logits, const Traced& labels);

}  // namespace tenferro
