// The elementwise mathematics of tenferro/math.hpp: primitives recorded through their factories,
// and composites whose derivatives come from the primitives' rules.
#include "tenferro/math.hpp"

#include <cmath>
#include <limits>
#include <numbers>
#include <sstream>

#include "tenferro/linalg.hpp"
#include "tenferro/ops/record.hpp"

namespace tenferro {

namespace {
/// a and b broadcast to one shape.
std::pair<Traced, Traced> broadcast_pair(const char* name, const Traced& a, const Traced& b) {
  const Shape shape = broadcast_shapes(name, a.shape(), b.shape());
  return {broadcast_to(a, shape), broadcast_to(b, shape)};
}

/// DTypeError naming `name` unless x is f32 or f64.
void require_real_float(const char* name, const Traced& x) {
  if (!is_floating(x.dtype())) {
    throw DTypeError(std::string(name) + ": operand " + x.type().to_string() +
                     " has the wrong dtype; expected f32 or f64");
  }
}
}  // namespace



Traced logaddexp(const Traced& a, const Traced& b) {
  require_real_float("logaddexp", a);
  require_real_float("logaddexp", b);
  auto [x, y] = broadcast_pair("logaddexp", a, b);
  // Where x == y (both infinite included, where x - y is NaN) the gap is 0: log(2 e^x).
  Traced gap = where(eq(x, y), full_like(x, 0.0), -abs(x - y));
  return maximum(x, y) + log1p(exp(gap));
}

Traced xlogy(const Traced& x, const Traced& y) {
  require_real_float("xlogy", x);
  require_real_float("xlogy", y);
  auto [a, b] = broadcast_pair("xlogy", x, y);
  // Where x == y == 0, log(0) is replaced by log(1) inside and the result by 0 outside (both
  // branches guarded, "double where"), so no value or derivative is NaN there. Elsewhere the
  // product x log y itself, so d/dx = log y holds at x = 0 too.
  Traced zero = full_like(a, 0.0);
  Traced both_zero = eq(where(eq(a, zero), b, full_like(b, 1.0)), zero);
  Traced safe_y = where(both_zero, full_like(b, 1.0), b);
  return where(both_zero, zero, a * log(safe_y));
}

std::pair<Traced, Traced> frexp(const Traced& x) {
  const Traced operand[] = {x};
  auto r = apply_outputs(make_op(op_def(OpKind::Frexp), {x.type()}), operand);
  return {r[0], r[1]};
}

Traced ldexp(const Traced& x, const Traced& e) {
  require_real_float("ldexp", x);
  if (is_complex(e.dtype()) || e.dtype() == DType::Bool) {
    throw DTypeError("ldexp: exponent " + e.type().to_string() + " has the wrong dtype; expected an integer-valued real tensor");
  }
  return x * exp2(astype(e, x.dtype()));
}



Traced polygamma(int n, const Traced& x) {
  if (n < 0) throw ValueError("polygamma: order n = " + std::to_string(n) + "; expected n >= 0");
  if (!is_floating(x.dtype())) {
    throw DTypeError("polygamma: operand " + x.type().to_string() + " has the wrong dtype; expected f32 or f64");
  }
  // The order travels as an operand of x's type (exact for any order up to 2^24).
  return apply(ops::binary(OpKind::Polygamma, x.type(), x.type()), {full_like(x, n), x});
}

Traced mvlgamma(const Traced& x, int p) {
  if (p < 1) throw ValueError("mvlgamma: dimension p = " + std::to_string(p) + "; expected p >= 1");
  require_real_float("mvlgamma", x);
  Traced total = lgamma(x);
  for (int j = 1; j < p; ++j) total = total + lgamma(x - 0.5 * j);
  return total + 0.25 * p * (p - 1) * std::log(std::numbers::pi);
}


Traced ndtr(const Traced& x) {
  require_real_float("ndtr", x);
  return erfc(x * -std::numbers::sqrt2 / 2) * 0.5;
}


Traced log_ndtr(const Traced& x) {
  require_real_float("log_ndtr", x);
  // Each branch sees only arguments of its own side (double where), so neither the value nor a
  // derivative of the unselected branch (erfcx overflowing for large x, log of 0) leaks in.
  const Traced lower = lt(x, full_like(x, -1.0));
  const Traced xl = where(lower, x, full_like(x, -1.0));
  const Traced xu = where(lower, full_like(x, -1.0), x);
  const Traced low_tail = log(erfcx(xl * (-std::numbers::sqrt2 / 2)) * 0.5) - xl * xl * 0.5;
  const Traced upper = log1p(erfc(xu * (std::numbers::sqrt2 / 2)) * -0.5);
  return where(lower, low_tail, upper);
}

Traced ndtri(const Traced& p) {
  require_real_float("ndtri", p);
  return erfcinv(p * 2.0) * -std::numbers::sqrt2;
}

Traced sinc(const Traced& x) {
  require_real_float("sinc", x);
  // Below |pi x| = 1e-2 the series 1 - z^2/6 + z^4/120 is exact to the last bit (the next term is
  // z^6/5040 < 2e-16), and its derivatives are those of sinc to order 4 at 0; elsewhere
  // sin(z) / z with z kept away from 0 (double where).
  Traced z = x * std::numbers::pi;
  Traced small = lt(abs(z), full_like(z, 1e-2));
  Traced z2 = z * z;
  Traced series = 1.0 - z2 * (1.0 / 6) + z2 * z2 * (1.0 / 120);
  Traced safe_z = where(small, full_like(z, 1.0), z);
  return where(small, series, sin(safe_z) / safe_z);
}

Traced round(const Traced& x, int decimals) {
  require_real_float("round", x);
  if (decimals == 0) return round(x);
  if (decimals < 0) {  // by division, as numpy.round: 10^-d is then exact
    const double scale = std::pow(10.0, -decimals);
    return round(x / scale) * scale;
  }
  const double scale = std::pow(10.0, decimals);
  return round(x * scale) / scale;
}

namespace {
std::vector<std::int64_t> every_axis(std::size_t rank) {
  std::vector<std::int64_t> axes(rank);
  for (std::size_t i = 0; i < rank; ++i) axes[i] = static_cast<std::int64_t>(i);
  return axes;
}

/// The reduced value broadcast back over `axes` of x's shape (axes normalized, any order).
Traced expand_over(const Traced& reduced, const Shape& shape, std::vector<std::int64_t> axes) {
  Shape kept = shape;
  for (auto a : axes) kept[static_cast<std::size_t>(a)] = 1;
  return broadcast_to(reshape(reduced, kept), shape);
}

std::vector<std::int64_t> normalized_axes(const char* name, std::vector<std::int64_t> axes, std::size_t rank) {
  for (auto& a : axes) {
    if (a < -static_cast<std::int64_t>(rank) || a >= static_cast<std::int64_t>(rank)) {
      throw ShapeError(std::string(name) + ": axis " + std::to_string(a) + " is out of range for rank " + std::to_string(rank));
    }
    if (a < 0) a += static_cast<std::int64_t>(rank);
  }
  return axes;
}

/// An order as NumPy spells it: 2, 0.5, inf, -inf.
std::string ord_name(double ord) {
  if (std::isinf(ord)) return ord > 0 ? "inf" : "-inf";
  std::ostringstream os;
  os << ord;
  return os.str();
}

/// Whether any of `axes` (normalized) has size 0: a reduction over no elements.
bool reduces_nothing(const Shape& shape, const std::vector<std::int64_t>& axes) {
  for (auto a : axes) {
    if (shape[static_cast<std::size_t>(a)] == 0) return true;
  }
  return false;
}

/// The ShapeError of a max / min over no elements (which has no identity; NumPy raises there too).
[[noreturn]] void empty_extremum(const char* op, const Traced& x, const std::string& ord, const char* what) {
  throw ShapeError(std::string(op) + ": ord " + ord + " of operand " + x.type().to_string() + " takes the " + what +
                   " over no elements, which is undefined; expected a nonzero size along the reduced axes");
}
}  // namespace

Traced vector_norm(const Traced& x, double ord) { return vector_norm(x, ord, every_axis(x.rank())); }

Traced vector_norm(const Traced& x, double ord, std::vector<std::int64_t> axes) {
  if (!is_inexact(x.dtype())) {
    throw DTypeError("vector_norm: operand " + x.type().to_string() + " has the wrong dtype; expected f32, f64, c64 or c128");
  }
  if (std::isnan(ord)) throw ValueError("vector_norm: ord = nan; expected a number or +-inf");
  constexpr double inf = std::numeric_limits<double>::infinity();
  axes = normalized_axes("vector_norm", std::move(axes), x.rank());
  const Traced a = abs(x);  // real
  if (reduces_nothing(x.shape(), axes)) {
    // The sum of no terms is 0, so the norm is 0^(1/p): 0 for p >= 0 and inf for p < 0 (NumPy's
    // values); a constant, so its derivative is 0 to every order. The max / min of no elements has
    // no value.
    if (std::isinf(ord)) empty_extremum("vector_norm", x, ord_name(ord), ord > 0 ? "max of |x|" : "min of |x|");
    const Traced zero = sum(a, axes);
    return ord < 0 ? zero + inf : zero;
  }
  if (ord == inf) return max(a, axes);
  if (ord == -inf) return min(a, axes);
  if (ord == 0) return sum(astype(ne(a, full_like(a, 0.0)), a.dtype()), axes);
  if (ord == 1) return sum(a, axes);
  // m (sum (|x| / m)^p)^(1/p) with m the detached max |x| (p > 0) or min |x| (p < 0), the terms
  // that dominate the sum: each term is then at most 1 and the one at m is 1, so the value is
  // exact in every range, and the derivative (m detached) is that of the norm. Where m is 0 (every
  // |x| for p > 0; some |x| for p < 0, where |0|^p = inf) the norm is 0: m = 1 inside and the
  // result 0 outside (double where), value 0 and gradient 0. Where m is inf, m = 1 inside too, so
  // that inf / inf never appears: the sum is inf (p > 0) or 0 (p < 0), the root inf either way.
  const Traced m = stop_gradient(ord > 0 ? max(a, axes) : min(a, axes));
  const Traced zero = eq(m, full_like(m, 0.0));
  const Traced unscaled = eq(m, full_like(m, inf));
  const Traced safe_m = where(zero, full_like(m, 1.0), where(unscaled, full_like(m, 1.0), m));
  const Traced scaled = a / expand_over(safe_m, a.shape(), axes);
  Traced powered = scaled * scaled;
  if (ord != 2) {
    // p |x|^(p-1), the power's derivative, is infinite at x = 0 for p < 1 (and |0|^p = inf for
    // p < 0): zeros go through the power as 1 and come out as 0 (double where), so their terms are
    // 0 with derivative 0 (PyTorch's subgradient); for p < 0 the result there is 0 anyway (m = 0).
    const Traced at_zero = eq(a, full_like(a, 0.0));
    const Traced safe = where(at_zero, full_like(a, 1.0), scaled);
    powered = where(at_zero, full_like(a, 0.0), pow(safe, full_like(safe, ord)));
  }
  Traced total = sum(powered, axes);
  // The guard also keeps the root's derivative away from total = 0.
  const Traced safe_total = where(zero, full_like(total, 1.0), total);
  const Traced root = ord == 2 ? sqrt(safe_total) : pow(safe_total, full_like(safe_total, 1.0 / ord));
  return where(zero, full_like(root, 0.0), root * safe_m);
}

Traced matrix_norm(const Traced& x, const std::string& ord) {
  if (x.rank() < 2) throw ShapeError("matrix_norm: operand " + x.type().to_string() + " has rank < 2; expected a (batch of) matrices");
  const auto r = static_cast<std::int64_t>(x.rank());
  if (ord == "fro") return vector_norm(x, 2, {r - 2, r - 1});
  if (ord == "nuc") return sum(linalg::svdvals(x), {-1});
  throw ValueError("matrix_norm: ord \"" + ord + "\"; expected \"fro\" or \"nuc\" (or a number: 1, -1, 2, -2, inf, -inf)");
}

Traced matrix_norm(const Traced& x, double ord) {
  if (x.rank() < 2) throw ShapeError("matrix_norm: operand " + x.type().to_string() + " has rank < 2; expected a (batch of) matrices");
  if (!is_inexact(x.dtype())) {
    throw DTypeError("matrix_norm: operand " + x.type().to_string() + " has the wrong dtype; expected f32, f64, c64 or c128");
  }
  const auto r = static_cast<std::int64_t>(x.rank());
  const std::int64_t rows = x.shape()[x.rank() - 2], cols = x.shape().back();
  constexpr double inf = std::numeric_limits<double>::infinity();
  // Each order ends in a max / min: over the columns (1, -1), the rows (inf, -inf) or the singular
  // values (2, -2). Over no elements it has no value (NumPy raises); the column and row sums over
  // no elements are 0, as NumPy's.
  const bool over_columns = ord == 1 || ord == -1, over_rows = ord == inf || ord == -inf, spectral = ord == 2 || ord == -2;
  if ((over_columns && cols == 0) || (over_rows && rows == 0) || (spectral && std::min(rows, cols) == 0)) {
    empty_extremum("matrix_norm", x, ord_name(ord),
                   over_columns ? "extremum over the columns" : over_rows ? "extremum over the rows" : "extremum of the singular values");
  }
  const Traced a = abs(x);
  if (ord == 1) return max(sum(a, {r - 2}), {r - 2});    // column sums, then over columns
  if (ord == -1) return min(sum(a, {r - 2}), {r - 2});
  if (ord == inf) return max(sum(a, {r - 1}), {r - 2});  // row sums, then over rows
  if (ord == -inf) return min(sum(a, {r - 1}), {r - 2});
  if (ord == 2) return max(linalg::svdvals(x), {-1});   // the largest singular value
  if (ord == -2) return min(linalg::svdvals(x), {-1});  // the smallest
  throw ValueError("matrix_norm: ord = " + ord_name(ord) + "; expected 1, -1, 2, -2, inf, -inf, \"fro\" or \"nuc\"");
}

Traced isnan(const Traced& x) { return ne(x, x); }
Traced isinf(const Traced& x) {
  if (!is_inexact(x.dtype())) return ne(x, x);  // integers and bools are never infinite
  return eq(abs(x), full_like(abs(x), std::numeric_limits<double>::infinity()));
}
Traced isfinite(const Traced& x) {
  if (!is_inexact(x.dtype())) return eq(x, x);
  return lt(abs(x), full_like(abs(x), std::numeric_limits<double>::infinity()));
}

}  // namespace tenferro
