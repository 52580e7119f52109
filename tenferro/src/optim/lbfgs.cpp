// L-BFGS with a strong-Wolfe line search (tenferro/optim.hpp). The objective's value and gradient
// are one compiled program (TransformedFunction::value_and_grads over every argument); the
// iteration itself is host code on one f64 vector holding every argument's elements in order.
//
// The line search is Nocedal and Wright's Algorithm 3.5 (bracketing) with Algorithm 3.6 (zoom),
// trial steps from the minimizer of the cubic through the two ends' values and slopes, kept away
// from the ends. For a quadratic objective that cubic is the function itself, so with c2 near 0
// the search returns the exact minimizer along the direction, and L-BFGS then takes conjugate
// directions: n iterations for n unknowns.
#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>

#include "tenferro/error.hpp"
#include "tenferro/optim.hpp"

namespace tenferro::optim::detail {

namespace {

using Vec = std::vector<double>;

double dot(const Vec& a, const Vec& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

double max_abs(const Vec& a) {
  double m = 0;
  for (double v : a) m = std::max(m, std::abs(v));
  return m;
}

/// The objective on the flat vector: value and gradient, counting evaluations.
class Objective {
 public:
  Objective(const tenferro::detail::TracedFunction& f, const Tensors& x0)
      : impl_(f, all_argnums(x0.size())), like_(x0) {
    for (const Tensor& x : x0) {
      if (x.dtype() != DType::F64 && x.dtype() != DType::F32) {
        throw DTypeError("optim::lbfgs: an argument of type " + x.type().to_string() + "; expected f32 or f64 tensors");
      }
      n_ += static_cast<std::size_t>(x.numel());
    }
  }

  std::size_t size() const { return n_; }
  int evaluations() const { return evaluations_; }

  Vec flatten(const Tensors& xs) const {
    Vec v;
    v.reserve(n_);
    for (const Tensor& x : xs) {
      for (std::int64_t i = 0; i < x.numel(); ++i) v.push_back(x.element(i).real());
    }
    return v;
  }

  Tensors unflatten(const Vec& v) const {
    Tensors out;
    std::size_t at = 0;
    for (const Tensor& l : like_) {
      std::vector<double> part(v.begin() + static_cast<std::ptrdiff_t>(at),
                               v.begin() + static_cast<std::ptrdiff_t>(at + static_cast<std::size_t>(l.numel())));
      at += static_cast<std::size_t>(l.numel());
      if (l.dtype() == DType::F64) {
        out.push_back(Tensor::from(part, l.shape()));
      } else {
        out.push_back(Tensor::from(std::vector<float>(part.begin(), part.end()), l.shape()));
      }
    }
    return out;
  }

  /// f(x) and its gradient into g.
  double operator()(const Vec& x, Vec& g) {
    ++evaluations_;
    auto [value, grads] = impl_.value_and_grads(unflatten(x));
    if (value.numel() != 1 || is_complex(value.dtype())) {
      throw DTypeError("optim::lbfgs: f returns " + value.type().to_string() + "; expected a real scalar");
    }
    g = flatten(grads);
    return value.element(0).real();
  }

 private:
  static std::vector<std::size_t> all_argnums(std::size_t n) {
    std::vector<std::size_t> a(n);
    for (std::size_t i = 0; i < n; ++i) a[i] = i;
    return a;
  }
  tenferro::detail::TransformedFunction impl_;
  Tensors like_;
  std::size_t n_ = 0;
  int evaluations_ = 0;
};

/// The minimizer of the cubic with values f0, f1 and slopes d0, d1 at a0, a1, clamped into the
/// open interval between lo and hi shrunk by 10% at each end (a bisection if the cubic has none).
double cubic_step(double a0, double f0, double d0, double a1, double f1, double d1, double lo, double hi) {
  const double d1_ = d0 + d1 - 3 * (f0 - f1) / (a0 - a1);
  const double disc = d1_ * d1_ - d0 * d1;
  double a = 0.5 * (lo + hi);
  if (disc >= 0) {
    const double d2 = std::copysign(std::sqrt(disc), a1 - a0);
    const double denom = d1 - d0 + 2 * d2;
    if (denom != 0) a = a1 - (a1 - a0) * (d1 + d2 - d1_) / denom;
  }
  const double left = std::min(lo, hi), right = std::max(lo, hi), margin = 0.1 * (right - left);
  if (!std::isfinite(a)) a = 0.5 * (lo + hi);
  return std::clamp(a, left + margin, right - margin);
}

struct Point {
  double a = 0, f = 0, d = 0;  // step, value, slope along the direction
  Vec x, g;
};

/// A step along p from (x, f0, g0) satisfying the strong Wolfe conditions; false if none was
/// found within max_linesearch evaluations (the best point seen is returned then).
bool line_search(Objective& obj, const Vec& x, double f0, const Vec& g0, const Vec& p, double a_init,
                 const LbfgsOptions& o, Point& out, std::string& why) {
  const double d0 = dot(g0, p);
  auto eval = [&](double a) {
    Point q;
    q.a = a;
    q.x = x;
    for (std::size_t i = 0; i < x.size(); ++i) q.x[i] += a * p[i];
    q.f = obj(q.x, q.g);
    q.d = dot(q.g, p);
    return q;
  };
  auto armijo = [&](const Point& q) { return q.f <= f0 + o.c1 * q.a * d0; };
  auto curvature = [&](const Point& q) { return std::abs(q.d) <= o.c2 * std::abs(d0); };
  Point prev{0, f0, d0, x, g0};
  double a = a_init;
  int evals = 0;
  Point lo, hi;
  bool bracketed = false;
  while (evals < o.max_linesearch) {
    Point q = eval(a);
    ++evals;
    if (!std::isfinite(q.f)) {  // overshot into a region where f is not finite: step back
      a = 0.5 * (prev.a + a);
      continue;
    }
    if (!armijo(q) || (evals > 1 && q.f >= prev.f)) {
      lo = prev, hi = q, bracketed = true;
      break;
    }
    if (curvature(q)) {
      out = std::move(q);
      return true;
    }
    if (q.d >= 0) {
      lo = q, hi = prev, bracketed = true;
      break;
    }
    // Still descending: extrapolate, by the cubic's minimizer when it lies ahead.
    const double next = cubic_step(prev.a, prev.f, prev.d, q.a, q.f, q.d, q.a + 1.1 * (q.a - prev.a), q.a + 10 * (q.a - prev.a));
    prev = std::move(q);
    a = next;
  }
  if (!bracketed) {
    why = "line search failed: no step satisfied the strong Wolfe conditions in " + std::to_string(o.max_linesearch) +
          " evaluations";
    return false;
  }
  // Zoom: lo satisfies sufficient decrease and has the lowest value seen; hi bounds the interval.
  while (evals < o.max_linesearch) {
    const double a_new = cubic_step(lo.a, lo.f, lo.d, hi.a, hi.f, hi.d, lo.a, hi.a);
    Point q = eval(a_new);
    ++evals;
    if (!std::isfinite(q.f) || !armijo(q) || q.f >= lo.f) {
      hi = std::move(q);
    } else {
      if (curvature(q)) {
        out = std::move(q);
        return true;
      }
      if (q.d * (hi.a - lo.a) >= 0) hi = lo;
      lo = std::move(q);
    }
    if (std::abs(hi.a - lo.a) <= 1e-16 * std::max(1.0, std::abs(lo.a))) break;
  }
  if (lo.a > 0 && lo.f < f0) {  // sufficient decrease without the curvature condition: still progress
    out = std::move(lo);
    return true;
  }
  why = "line search failed: the interval shrank to nothing without a step satisfying the strong Wolfe conditions";
  return false;
}

}  // namespace

LbfgsResult lbfgs_of(const tenferro::detail::TracedFunction& f, const Tensors& x0, const LbfgsOptions& o) {
  if (o.history < 1 || o.max_iter < 0 || o.max_linesearch < 1 || !(o.gtol >= 0) || !(o.ftol >= 0) ||
      !(0 < o.c1 && o.c1 < o.c2 && o.c2 < 1)) {
    throw ValueError("optim::lbfgs: needs history >= 1, max_iter >= 0, max_linesearch >= 1, gtol and ftol >= 0 and "
                     "0 < c1 < c2 < 1 (got history " + std::to_string(o.history) + ", c1 " + std::to_string(o.c1) +
                     ", c2 " + std::to_string(o.c2) + ")");
  }
  if (x0.empty()) throw ValueError("optim::lbfgs: no arguments to optimize");
  Objective obj(f, x0);
  Vec x = obj.flatten(x0), g;
  double fx = obj(x, g);
  LbfgsResult r;
  std::deque<std::pair<Vec, Vec>> pairs;  // (s, y), oldest first
  std::deque<double> rhos;
  auto finish = [&](bool converged, std::string message) {
    r.x = obj.unflatten(x);
    r.grad = obj.unflatten(g);
    r.value = fx;
    r.evaluations = obj.evaluations();
    r.converged = converged;
    r.message = std::move(message);
    return r;
  };
  if (!std::isfinite(fx)) return finish(false, "f is not finite at x0");
  const std::size_t n = x.size();
  Vec p(n), q(n);
  std::vector<double> alpha;
  for (r.iterations = 0; r.iterations < o.max_iter; ++r.iterations) {
    if (max_abs(g) <= o.gtol) return finish(true, "gradient below gtol");
    // Two-loop recursion: p = -H g, H0 = (s'y / y'y) I from the newest pair.
    q = g;
    alpha.assign(pairs.size(), 0.0);
    for (std::size_t k = pairs.size(); k-- > 0;) {
      alpha[k] = rhos[k] * dot(pairs[k].first, q);
      for (std::size_t i = 0; i < n; ++i) q[i] -= alpha[k] * pairs[k].second[i];
    }
    const double gamma = pairs.empty() ? 1.0 : dot(pairs.back().first, pairs.back().second) /
                                                   dot(pairs.back().second, pairs.back().second);
    for (std::size_t i = 0; i < n; ++i) q[i] *= gamma;
    for (std::size_t k = 0; k < pairs.size(); ++k) {
      const double beta = rhos[k] * dot(pairs[k].second, q);
      for (std::size_t i = 0; i < n; ++i) q[i] += pairs[k].first[i] * (alpha[k] - beta);
    }
    for (std::size_t i = 0; i < n; ++i) p[i] = -q[i];
    if (dot(p, g) >= 0) {  // not a descent direction (lost positive definiteness): restart
      pairs.clear();
      rhos.clear();
      for (std::size_t i = 0; i < n; ++i) p[i] = -g[i];
    }
    // The first step is scaled so that it moves by at most 1 (the curvature is unknown yet).
    const double a_init = pairs.empty() ? std::min(1.0, 1.0 / std::max(max_abs(g), 1e-300)) : 1.0;
    Point next;
    std::string why;
    if (!line_search(obj, x, fx, g, p, a_init, o, next, why)) return finish(false, why);
    Vec s(n), y(n);
    for (std::size_t i = 0; i < n; ++i) s[i] = next.x[i] - x[i], y[i] = next.g[i] - g[i];
    const double sy = dot(s, y);
    const double f_old = fx;
    x = std::move(next.x);
    g = std::move(next.g);
    fx = next.f;
    if (sy > 1e-300) {  // keep only pairs of positive curvature (the update stays positive definite)
      pairs.emplace_back(std::move(s), std::move(y));
      rhos.push_back(1.0 / sy);
      if (static_cast<int>(pairs.size()) > o.history) {
        pairs.pop_front();
        rhos.pop_front();
      }
    }
    if (o.ftol > 0 && f_old - fx <= o.ftol * std::max({std::abs(f_old), std::abs(fx), 1.0})) {
      ++r.iterations;
      return finish(true, "value change below ftol");
    }
  }
  if (max_abs(g) <= o.gtol) return finish(true, "gradient below gtol");
  return finish(false, "max_iter reached");
}

}  // namespace tenferro::optim::detail
