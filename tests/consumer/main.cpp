// The consumer project's program: d/dw sum(exp(w * x)) = x exp(w * x), and the trace of a matrix
// product by einsum, against closed forms. Exit status 0 when both match.
#include <cmath>
#include <cstdio>

#include "tenferro/tenferro.hpp"

namespace tf = tenferro;

int main() {
  const tf::Tensor w = tf::Tensor::from({0.5, -1.0}), x = tf::Tensor::from({1.0, 2.0});
  auto loss = [](tf::Traced a, tf::Traced b) { return tf::sum(tf::exp(a * b)); };
  const tf::Tensor g = tf::grad(loss)(w, x);
  int failures = 0;
  for (std::int64_t i = 0; i < 2; ++i) {
    const double xi = x.at<double>({i}), want = xi * std::exp(w.at<double>({i}) * xi);
    if (std::abs(g.at<double>({i}) - want) > 1e-14 * std::abs(want)) {
      std::fprintf(stderr, "grad[%lld] = %.17g, expected %.17g\n", static_cast<long long>(i), g.at<double>({i}), want);
      ++failures;
    }
  }
  const tf::Tensor a = tf::Tensor::from<double>({{1, 2}, {3, 4}}), b = tf::Tensor::from<double>({{5, 6}, {7, 8}});
  const double trace = tf::einsum("ij,ji->", {a, b}).item<double>();  // 1*5 + 2*7 + 3*6 + 4*8
  if (trace != 69.0) {
    std::fprintf(stderr, "einsum trace = %.17g, expected 69\n", trace);
    ++failures;
  }
  std::printf("consumer: %s\n", failures ? "FAILED" : "ok");
  return failures ? 1 : 0;
}
