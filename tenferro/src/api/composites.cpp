// Composite operations built from primitives (not primitives themselves): statistics and the
// numerically stable neural-network functions. Their derivatives come from the primitives' rules.
#include <algorithm>

#include "tenferro/traced.hpp"
#include "tenferro/ops/record.hpp"
#include "api/reduce_identity.hpp"

namespace tenferro {

namespace {
std::vector<std::int64_t> normalized(std::vector<std::int64_t> axes, std::size_t rank, const char* op) {
  for (auto& a : axes) {
    if (a < -static_cast<std::int64_t>(rank) || a >= static_cast<std::int64_t>(rank)) {
      throw ShapeError(std::string(op) + ": axis " + std::to_string(a) + " is out of range for rank " +
                       std::to_string(rank));
    }
    if (a < 0) a += static_cast<std::int64_t>(rank);
  }
  std::sort(axes.begin(), axes.end());
  return axes;
}

/// Broadcasts a reduction's result back over the reduced axes of `full`.
Traced expand_back(const Traced& reduced, const Shape& full, const std::vector<std::int64_t>& axes) {
  std::vector<std::int64_t> dims;
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(full.size()); ++i) {
    if (!std::binary_search(axes.begin(), axes.end(), i)) dims.push_back(i);
  }
  return apply(ops::broadcast_in_dim(reduced.type(), full, std::move(dims)), {reduced});
}
}  // namespace

Traced var(const Traced& a, std::vector<std::int64_t> axes, double correction) {
  if (!is_inexact(a.dtype())) {
    throw DTypeError("var: operand " + a.type().to_string() + " has the wrong dtype; expected f32, f64, c64 or c128");
  }
  axes = normalized(std::move(axes), a.rank(), "var");
  std::int64_t count = 1;
  for (std::int64_t axis : axes) count *= a.shape()[static_cast<std::size_t>(axis)];
  Traced centered = a - expand_back(mean(a, axes), a.shape(), axes);
  // |x - m|^2, real for complex x (as NumPy, JAX and PyTorch): re^2 + im^2, not (x - m)^2.
  Traced squares = is_complex(a.dtype()) ? real(centered) * real(centered) + imag(centered) * imag(centered)
                                         : centered * centered;
  // count - correction <= 0 divides by zero (inf, or NaN for a zero sum), as in the peers.
  const double divisor = std::max(static_cast<double>(count) - correction, 0.0);
  return sum(squares, axes) / divisor;
}

Traced stddev(const Traced& a, std::vector<std::int64_t> axes, double correction) {
  return sqrt(var(a, std::move(axes), correction));
}

Traced logsumexp(const Traced& x, std::vector<std::int64_t> axes) {
  axes = normalized(std::move(axes), x.rank(), "logsumexp");
  // Shift by the max so exp never overflows. The shift is detached: the result does not depend on
  // it, and differentiating through it would add the max's gradient n (1 - sum(softmax)), zero in
  // exact arithmetic only (about n eps at the max element).
  // Over an empty axis the max is -inf and the result log(0) - inf = -inf (logsumexp of nothing).
  Traced m = stop_gradient(detail::max_or_identity(x, axes));
  Traced s = sum(exp(x - expand_back(m, x.shape(), axes)), axes);
  return log(s) + m;
}

Traced log_softmax(const Traced& x, std::int64_t axis) {
  auto axes = normalized({axis}, x.rank(), "log_softmax");
  return x - expand_back(logsumexp(x, axes), x.shape(), axes);
}

Traced softmax(const Traced& x, std::int64_t axis) { return exp(log_softmax(x, axis)); }

Traced sigmoid(const Traced& x) { return (1.0 + tanh(x * 0.5)) * 0.5; }

Traced relu(const Traced& x) { return where(gt(x, full_like(x, 0.0)), x, full_like(x, 0.0)); }

Traced softplus(const Traced& x) { return maximum(x, full_like(x, 0.0)) + log1p(exp(-abs(x))); }

Traced cross_entropy(const Traced& logits, const Traced& labels) {
  if (logits.shape() != labels.shape()) {
    throw ShapeError("cross_entropy: logits " + logits.type().to_string() + " and labels " +
                     labels.type().to_string() + " must have the same shape");
  }
  Traced per_example = -sum(labels * log_softmax(logits, -1), {-1});
  return per_example.rank() == 0 ? per_example : mean(per_example);
}

}  // namespace tenferro
