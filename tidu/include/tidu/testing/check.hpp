#pragma once
// The AD test kit (docs/design.md, "Testing derivatives"): numerical checks of linearize and
// linear_transpose for any evaluable Primitive set whose Operand has an OperandSpace with
// add_scaled, inner and random_like (tidu/operand_space.hpp).
//
//   check_jvp(f, x)   J t from the linear graph against central finite differences of f along a
//                     seeded random tangent t (fourth-order stencil, error O(h^4))
//   check_vjp(f, x)   the adjoint identity Re<ct, J t> = Re<J^* ct, t> for the transpose of the
//                     linear graph, with random t and ct (exact up to rounding)
//   check_grads(f, x, order, modes)
//                     both checks for f, then for every function reachable by order-1 forward or
//                     reverse steps (ad_function.hpp): at order 2 that is FoF, RoF, FoR and RoR
//
// Checks never throw for a failing rule: an exception from a transform is a failed check whose
// message names it. A result lists every check run, so callers can assert that checks ran.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "computegraph/printer.hpp"
#include "tidu/operand_space.hpp"
#include "tidu/testing/ad_function.hpp"

namespace tidu::testkit {

enum class Mode : std::uint8_t { Forward, Reverse };

struct CheckOptions {
  /// Finite-difference step along t (t's real and imaginary parts are uniform in [-1, 1]). The
  /// stencil's error is O(step^4 |f^(5)|); deep compositions at order 3 have large fifth
  /// derivatives, hence a small step (for float operands, use a larger step, eps and rtol).
  double step = 1e-4;
  /// JVP: |J t - fd| <= atol + rtol * max(|J t|, |fd|) + rounding, where rounding =
  /// 1000 eps max(1, |f|) / step bounds the cancellation in the difference quotient.
  double rtol = 1e-6;
  double atol = 1e-9;
  /// Unit roundoff of the operands' arithmetic.
  double eps = std::numeric_limits<double>::epsilon();
  /// Adjoint: |<ct, J t> - <J^* ct, t>| <= atol + adjoint_rtol * (|ct| |J t| + |J^* ct| |t|).
  double adjoint_rtol = 1e-10;
  /// Seeds the random tangents, cotangents and step seeds (combined with each check's name).
  std::uint64_t seed = 0x5eed;
};

struct CheckResult {
  bool ok = true;
  /// Names of the checks run, e.g. "F", "R", "FoF", "RoF", "FoR", "RoR".
  std::vector<std::string> checks;
  /// One block per failure: the check, the numbers, and the IR involved.
  std::string message;
  /// The largest error / tolerance of the checks run (each passes below 1).
  double worst_ratio = 0;

  void fail(const std::string& what) {
    ok = false;
    message += what;
    if (!what.empty() && what.back() != '\n') message += '\n';
  }
  void merge(const CheckResult& other) {
    ok = ok && other.ok;
    checks.insert(checks.end(), other.checks.begin(), other.checks.end());
    message += other.message;
    worst_ratio = std::max(worst_ratio, other.worst_ratio);
  }
};

namespace detail {
/// A generator seeded by the options and a name (FNV-1a, so every check has its own stream).
inline std::mt19937_64 rng_for(const CheckOptions& opts, const std::string& name) {
  std::uint64_t h = 0xcbf29ce484222325ULL ^ opts.seed;
  for (char c : name) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
  return std::mt19937_64(h);
}

template <class T>
double norm(std::span<const T> values) {
  double sum = 0;
  for (const auto& v : values) sum += OperandSpace<T>::inner(v, v);
  return std::sqrt(sum);
}

template <class T>
void print_value(std::ostream& os, const T& v) {
  if constexpr (requires { os << v; }) {
    os << v;
  } else {
    os << "<operand>";
  }
}

template <class Op>
std::string ir_of(const char* title, const LinearizedGraph<Op>& g) {
  return std::string("--- ") + title + " ---\n" + computegraph::to_string(*g.graph);
}
}  // namespace detail

/// J t (from linearize) against central finite differences of fn along a random t.
template <Primitive Op>
CheckResult check_jvp(const AdFunction<Op>& fn, std::span<const typename Op::Operand> x,
                      const CheckOptions& opts = {}) {
  using Operand = typename Op::Operand;
  using Space = OperandSpace<Operand>;
  const std::string name = compose_path('F', fn.path);
  CheckResult result;
  result.checks.push_back(name);
  try {
    LinearizedGraph<Op> lin = linearize_function(fn);
    auto rng = detail::rng_for(opts, name);
    std::vector<Operand> t;
    for (const auto& xj : x) t.push_back(Space::random_like(xj, rng));
    auto keys = input_keys(fn);
    for (const auto& k : lin.tangent_input_keys()) keys.push_back(k);
    auto outputs = fn.outputs;
    for (const auto& k : present_keys(lin)) outputs.push_back(k);
    Probe<Op> probe({lin.graph}, outputs, keys);

    auto run_at = [&](double s) {
      std::vector<Operand> xs;
      for (std::size_t j = 0; j < x.size(); ++j) xs.push_back(Space::add_scaled(x[j], s, t[j]));
      auto in = input_values(fn, std::span<const Operand>(xs));
      in.insert(in.end(), t.begin(), t.end());
      return probe.run(in);
    };
    const std::size_t n = fn.outputs.size();
    auto out = run_at(0.0);
    std::vector<Operand> jvp, fd;
    for (std::size_t i = 0, k = n; i < n; ++i) {
      jvp.push_back(lin.tangent_outputs[i] ? out[k++] : Space::zeros_like(out[i]));
      fd.push_back(Space::zeros_like(out[i]));
    }
    const double h = opts.step;
    double f_scale = detail::norm(std::span<const Operand>(out.data(), n));
    constexpr std::pair<double, double> kStencil[] = {{-2, 1}, {-1, -8}, {1, 8}, {2, -1}};
    for (auto [s, w] : kStencil) {
      auto ys = run_at(s * h);
      f_scale = std::max(f_scale, detail::norm(std::span<const Operand>(ys.data(), n)));
      for (std::size_t i = 0; i < n; ++i) fd[i] = Space::add_scaled(fd[i], w / (12 * h), ys[i]);
    }
    double err2 = 0;
    for (std::size_t i = 0; i < n; ++i) {
      Operand d = Space::add_scaled(jvp[i], -1.0, fd[i]);
      err2 += Space::inner(d, d);
    }
    const double err = std::sqrt(err2);
    const double tol = opts.atol +
                       opts.rtol * std::max(detail::norm(std::span<const Operand>(jvp)),
                                            detail::norm(std::span<const Operand>(fd))) +
                       1000 * opts.eps * std::max(1.0, f_scale) / h;
    result.worst_ratio = err / tol;
    if (!(err <= tol)) {
      std::ostringstream msg;
      msg.precision(12);
      msg << name << ": J t differs from central finite differences (step " << h << "): |J t - fd| = "
          << err << " > tol " << tol << "\n";
      for (std::size_t i = 0; i < n; ++i) {
        msg << "  output " << i << ": J t = ";
        detail::print_value(msg, jvp[i]);
        msg << ", fd = ";
        detail::print_value(msg, fd[i]);
        msg << (lin.tangent_outputs[i] ? "" : " (no tangent output)") << "\n";
      }
      result.fail(msg.str() + detail::ir_of("linear graph", lin));
    }
  } catch (const computegraph::Error& e) {
    result.fail(name + ": threw " + e.what());
  }
  return result;
}

/// The adjoint identity for linear_transpose of fn's linear graph, with random t and ct.
template <Primitive Op>
CheckResult check_vjp(const AdFunction<Op>& fn, std::span<const typename Op::Operand> x,
                      const CheckOptions& opts = {}) {
  using Operand = typename Op::Operand;
  using Space = OperandSpace<Operand>;
  const std::string name = compose_path('R', fn.path);
  CheckResult result;
  result.checks.push_back(name);
  try {
    LinearizedGraph<Op> lin = linearize_function(fn);
    LinearizedGraph<Op> tr = linear_transpose(lin);
    auto y = evaluate(fn, x);
    auto rng = detail::rng_for(opts, name);
    std::vector<Operand> t, ct;
    for (const auto& xj : x) t.push_back(Space::random_like(xj, rng));
    for (std::size_t i = 0; i < y.size(); ++i) {
      if (lin.tangent_outputs[i]) ct.push_back(Space::random_like(y[i], rng));
    }
    auto keys = input_keys(fn);
    for (const auto& k : lin.tangent_input_keys()) keys.push_back(k);
    for (const auto& k : tr.tangent_input_keys()) keys.push_back(k);
    auto outputs = present_keys(lin);
    for (const auto& k : present_keys(tr)) outputs.push_back(k);
    Probe<Op> probe({tr.graph}, outputs, keys);
    auto in = input_values(fn, x);
    in.insert(in.end(), t.begin(), t.end());
    in.insert(in.end(), ct.begin(), ct.end());
    auto out = probe.run(in);

    std::vector<Operand> jt(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(ct.size()));
    std::vector<Operand> jct;
    for (std::size_t j = 0, k = ct.size(); j < x.size(); ++j) {
      jct.push_back(tr.tangent_outputs[j] ? out[k++] : Space::zeros_like(x[j]));
    }
    double lhs = 0, rhs = 0;
    for (std::size_t i = 0; i < ct.size(); ++i) lhs += Space::inner(ct[i], jt[i]);
    for (std::size_t j = 0; j < x.size(); ++j) rhs += Space::inner(jct[j], t[j]);
    auto nrm = [](const std::vector<Operand>& v) { return detail::norm(std::span<const Operand>(v)); };
    const double tol = opts.atol + opts.adjoint_rtol * (nrm(ct) * nrm(jt) + nrm(jct) * nrm(t));
    result.worst_ratio = std::abs(lhs - rhs) / tol;
    if (!(std::abs(lhs - rhs) <= tol)) {
      std::ostringstream msg;
      msg.precision(17);
      msg << name << ": adjoint identity fails: Re<ct, J t> = " << lhs << ", Re<J^* ct, t> = " << rhs
          << ", |difference| = " << std::abs(lhs - rhs) << " > tol " << tol << "\n";
      result.fail(msg.str() + detail::ir_of("linear graph", lin) + detail::ir_of("transposed graph", tr));
    }
  } catch (const computegraph::Error& e) {
    result.fail(name + ": threw " + e.what());
  }
  return result;
}

/// check_jvp / check_vjp (as `modes` says) of fn and of every function order-1 steps away.
template <Primitive Op>
CheckResult check_grads(const AdFunction<Op>& fn, std::span<const typename Op::Operand> x, int order,
                        const std::vector<Mode>& modes = {Mode::Forward, Mode::Reverse},
                        const CheckOptions& opts = {}) {
  using Operand = typename Op::Operand;
  using Space = OperandSpace<Operand>;
  CheckResult result;
  std::vector<AdFunction<Op>> level{fn};
  for (int k = 1; k <= order; ++k) {
    std::vector<AdFunction<Op>> next;
    for (const auto& f : level) {
      for (Mode m : modes) {
        result.merge(m == Mode::Forward ? check_jvp(f, x, opts) : check_vjp(f, x, opts));
        if (k == order) continue;
        const char letter = m == Mode::Forward ? 'F' : 'R';
        auto rng = detail::rng_for(opts, "step " + compose_path(letter, f.path));
        SeedFn<Op> seed = [&rng](const Operand& like) { return Space::random_like(like, rng); };
        try {
          next.push_back(m == Mode::Forward ? forward_step(f, x, seed) : reverse_step(f, x, seed));
        } catch (const computegraph::Error& e) {
          result.fail(compose_path(letter, f.path) + " step: threw " + e.what());
        }
      }
    }
    level = std::move(next);
  }
  return result;
}

template <Primitive Op>
CheckResult check_grads(const computegraph::GraphPtr<Op>& f, std::span<const typename Op::Operand> x,
                        int order, const std::vector<Mode>& modes = {Mode::Forward, Mode::Reverse},
                        const CheckOptions& opts = {}) {
  return check_grads(function_of(f), x, order, modes, opts);
}

}  // namespace tidu::testkit
