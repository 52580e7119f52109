#pragma once
// Elementwise mathematics on traced tensors beyond the core operators of traced.hpp: inverse
// trigonometric and hyperbolic functions, logarithms and powers in other bases, the error
// function, rounding and remainders, and composites built from them. Binary functions broadcast
// (NumPy rules). Functions marked "real" accept f32 and f64 and throw DTypeError naming the
// function and the dtype for complex (or integer) operands; the others also accept c64 and c128
// (principal branches, as in NumPy, JAX and PyTorch).
//
// Accuracy: a function on a tensor runs through the vector math library that MathAccuracy selects
// (tenferro/math_accuracy.hpp: SLEEF's 1-ULP functions (erfc 1.5 ULP, hypot 0.5 ULP) for
// Precise, glibc's libmvec (within 4 ULP) for Fast); a rank-0 program and complex operands use
// libm. lgamma's vector form is SLEEF's in both settings.
//
// A function shown below as `//   name(x)` is one op: traced.hpp declares it from the op list
// (tenferro/op_list.hpp); what it computes is described here.
#include <string>
#include <vector>

#include "tenferro/traced.hpp"

namespace tenferro {

// ---- trigonometric and hyperbolic ----
//   tan(x)
//   asin(x)
//   acos(x)
//   atan(x)
//   sinh(x)
//   cosh(x)
//   asinh(x)
//   acosh(x)
//   atanh(x)
// The angle of the point (x, y) in (-pi, pi], with IEEE signed zeros (atan2(+0, -1) = pi,
// atan2(-0, -1) = -pi); real.
//   atan2(y, x)

// ---- logarithms, powers ----
//   log2(x)
//   log10(x)
//   exp2(x)
// The real cube root (cbrt(-8) = -2); real.
//   cbrt(x)
// sqrt(a^2 + b^2) without overflow or underflow of the squares; real.
//   hypot(a, b)
/// log(exp(a) + exp(b)) without overflow: max(a, b) + log1p(exp(-|a - b|)); real.
Traced logaddexp(const Traced& a, const Traced& b);
/// x log(y), and 0 where x == 0 (also for y == 0), as scipy.special.xlogy; d/dx = log y also at
/// x = 0; real.
Traced xlogy(const Traced& x, const Traced& y);
/// The mantissa m in [1/2, 1) (x's sign) and the i64 exponent e of x = m 2^e, as numpy.frexp
/// (x = 0, inf, NaN: m = x, e = 0); real. The mantissa's derivative is 2^-e; e has none.
std::pair<Traced, Traced> frexp(const Traced& x);
/// x 2^e, with `e` an integer-valued tensor of any real dtype (i64 included); real x. Exact while
/// 2^e is a finite number of x's dtype.
Traced ldexp(const Traced& x, const Traced& e);

// ---- error function and the normal distribution ----
// real.
//   erf(x)
// 1 - erf(x), accurate where erf(x) is close to 1; real.
//   erfc(x)
// The inverse of erf on [-1, 1]: erfinv(+-1) = +-inf, NaN outside; real.
//   erfinv(x)

// ---- gamma and Bessel functions (real) ----
// log |Gamma(x)|; +inf at 0 and the negative integers (the poles).
//   lgamma(x)
// psi(x) = d/dx log Gamma(x); digamma(+0) = -inf, NaN at the negative integers.
//   digamma(x)
/// The n-th derivative of digamma, n >= 0 (ValueError naming polygamma and n otherwise).
Traced polygamma(int n, const Traced& x);
/// The multivariate log-gamma function of dimension p >= 1: p(p-1)/4 log(pi) + sum_{j<p}
/// lgamma(x - j/2).
Traced mvlgamma(const Traced& x, int p);
// Modified Bessel functions of the first kind of order 0 and 1, and their exponentially scaled
// forms i0e(x) = exp(-|x|) i0(x), i1e(x) = exp(-|x|) i1(x) (finite for every finite x).
//   i0(x)
//   i0e(x)
//   i1(x)
//   i1e(x)

// The inverse of erfc on [0, 2] (accurate for tiny arguments, where erfinv(1 - q) is not); real.
//   erfcinv(x)
// The scaled complementary error function exp(x^2) erfc(x), finite where erfc underflows; real.
//   erfcx(x)
/// The standard normal CDF, erfc(-x / sqrt 2) / 2 (accurate in the lower tail); real.
Traced ndtr(const Traced& x);
/// log(ndtr(x)), accurate in both tails: log(erfcx(-x / sqrt 2) / 2) - x^2 / 2 below x = -1,
/// log1p(-erfc(x / sqrt 2) / 2) above; real.
Traced log_ndtr(const Traced& x);
/// The inverse of ndtr on (0, 1): -sqrt(2) erfcinv(2p), accurate in both tails; real.
Traced ndtri(const Traced& p);
/// sin(pi x) / (pi x), 1 at 0 (a Taylor polynomial near 0, so derivatives of every order are
/// right there); real.
Traced sinc(const Traced& x);

// ---- rounding and remainders (real) ----
// The rounding functions are piecewise constant: their derivative is zero (also at the jumps,
// where it does not exist), as in the peers.
//   floor(x)
//   ceil(x)
// To the nearest integer, ties to even (round(0.5) = 0, round(1.5) = 2), as NumPy, JAX, PyTorch.
//   round(x)
/// To `decimals` decimal places: round(x 10^d) / 10^d, as numpy.round (negative d rounds to tens,
/// hundreds, ...).
Traced round(const Traced& x, int decimals);
//   trunc(x)
// The fractional part x - trunc(x), with x's sign (frac(-2.5) = -0.5), as torch.frac; derivative 1
// (also at the integers, as PyTorch); frac(+-inf) = NaN.
//   frac(x)
// The C remainder a - trunc(a / b) b (the dividend's sign), as std::fmod and torch.fmod.
//   fmod(a, b)
// The floored remainder a - floor(a / b) b (the divisor's sign), as Python's % and
// torch.remainder.
//   remainder(a, b)

// ---- norms (float or complex operands; real results) ----
/// The vector p-norm over `axes` (all axes when omitted), as numpy.linalg.norm / torch.linalg.
/// vector_norm: ord = 2 (default), 1, any p > 0, any p < 0 (sum(|x|^p)^(1/p): 0 where some x is 0,
/// with gradient 0 there), +-inf (max / min of |x|), 0 (the count of nonzeros, not
/// differentiable). The p-norms are scaled by the detached max |x| (min |x| for p < 0), so they
/// neither overflow nor underflow where the result is finite; at x = 0 the norm is 0 with
/// gradient 0 (a subgradient, as PyTorch). Over no elements (a size-0 axis among `axes`) the norm
/// is 0 for p >= 0 and inf for p < 0, with derivative 0, as NumPy; ord = +-inf there throws
/// ShapeError (the max / min of nothing, where NumPy raises too).
Traced vector_norm(const Traced& x, double ord = 2);
Traced vector_norm(const Traced& x, double ord, std::vector<std::int64_t> axes);
/// Matrix norms over the last two axes (batched over the leading ones): "fro" (default), "nuc"
/// (sum of singular values), and by number 1 (max column sum of |x|), -1 (min column sum), inf
/// (max row sum), -inf (min row sum), 2 (largest singular value), -2 (smallest). Differentiable
/// (the singular values through linalg::svdvals). linalg::matrix_norm is the same function.
/// Empty matrices follow NumPy: "fro" and "nuc" are 0 (derivative 0); an order whose final max /
/// min runs over no elements (1, -1 with no columns; inf, -inf with no rows; 2, -2 with either)
/// throws ShapeError naming the order, where NumPy raises; the others are 0.
Traced matrix_norm(const Traced& x, const std::string& ord = "fro");
Traced matrix_norm(const Traced& x, double ord);

// ---- classification (bool results, never differentiated) ----
Traced isnan(const Traced& x);
Traced isinf(const Traced& x);
Traced isfinite(const Traced& x);

}  // namespace tenferro
