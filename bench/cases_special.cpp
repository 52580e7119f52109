// Special functions on large vectors: erf, lgamma, atan2 and asinh on 10^7 f64, the function
// alone (special_fwd: y = f(x), every element written) and the gradient of sum(f(x)) (special_grad).
// torch_bench.py runs torch.erf, torch.lgamma, torch.atan2 and torch.asinh on the same inputs.
// Before timing, each checks a few of tenferro's values against libm (stderr on a mismatch).
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "cases.hpp"
#include "tenferro/tenferro.hpp"

namespace bench {

namespace tf = tenferro;

namespace {

std::vector<double> spaced(std::int64_t n, double lo, double hi) {
  std::vector<double> values(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    values[static_cast<std::size_t>(i)] = lo + (hi - lo) * (static_cast<double>(i) + 0.5) / static_cast<double>(n);
  }
  return values;
}

struct SpecialCase {
  const char* name;
  double lo, hi;  // the first argument's range; atan2's second argument runs over (lo2, hi2)
  std::function<tf::Traced(tf::Traced, tf::Traced)> f;
  std::function<double(double, double)> reference;
  double lo2 = 0.5, hi2 = 2.0;
};

void special(const Options& options, const SpecialCase& c, std::int64_t n) {
  const std::vector<double> xs = spaced(n, c.lo, c.hi), ys = spaced(n, c.hi2, c.lo2);  // ys descending
  const tf::Tensor x = tf::Tensor::from(xs, {n}), y = tf::Tensor::from(ys, {n});
  auto f = c.f;
  tf::Program forward = tf::trace(f, x, y);
  auto loss = [f](tf::Traced a, tf::Traced b) { return tf::sum(f(a, b)); };
  auto gradient = tf::grad(loss, 0);
  const tf::Tensor out = forward.run({x, y}).at(0);
  for (std::int64_t i : {std::int64_t{0}, n / 3, n - 1}) {
    const double want = c.reference(xs[static_cast<std::size_t>(i)], ys[static_cast<std::size_t>(i)]);
    const double got = out.data<double>()[i];
    if (!(std::abs(got - want) <= 1e-13 * std::max(1.0, std::abs(want)))) {
      report_failed_check("%s at %g: tenferro gives %.17g, libm %.17g", c.name, xs[static_cast<std::size_t>(i)], got, want);
    }
  }
  const std::vector<Impl> fwd = {{"tenferro", [&] { forward.run({x, y}); }}};
  const std::vector<Impl> bwd = {{"tenferro", [&] { gradient(x, y); }}};
  const std::string size = std::to_string(n);
  const std::string math = " fn=" + std::string(c.name) + " math=" + tf::to_string(tf::math_accuracy());
  for (const auto& [name, impls] : {std::pair{"special_fwd", &fwd}, std::pair{"special_grad", &bwd}}) {
    const auto m = measure(*impls, options.budget_s);
    print_line(std::string(name) + "_" + c.name, "tenferro", size, "f64", m[0].median_s, m[0].memory,
               m[0].repetitions, math);
  }
}

}  // namespace

void run_special(const Options& options) {
  using T = tf::Traced;
  const SpecialCase cases[] = {
      {"erf", -3, 3, [](T a, T) { return tf::erf(a); }, [](double a, double) { return std::erf(a); }},
      {"lgamma", 0.1, 10, [](T a, T) { return tf::lgamma(a); }, [](double a, double) { return std::lgamma(a); }},
      {"atan2", -2, 2, [](T a, T b) { return tf::atan2(a, b); }, [](double a, double b) { return std::atan2(a, b); }},
      {"asinh", -10, 10, [](T a, T) { return tf::asinh(a); }, [](double a, double) { return std::asinh(a); }},
  };
  for (const SpecialCase& c : cases) special(options, c, 10'000'000);
}

}  // namespace bench
