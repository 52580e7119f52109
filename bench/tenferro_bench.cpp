// tenferro benchmarks: the MLP forward and gradient (784-512-512-10, tanh, softmax cross-entropy,
// batch 256) in f32 and f64, and dot_general against a direct OpenBLAS GEMM at 1024^3.
// Prints one DESIGN.md line per case: case=... impl=... size=... median_s=... [key=value...].
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "tenferro/tenferro.hpp"
#include "timing.hpp"

namespace tf = tenferro;

namespace {

template <class T>
tf::Tensor random_tensor(tf::Shape shape, double scale, std::mt19937& rng) {
  std::normal_distribution<double> normal(0.0, scale);
  std::vector<T> values(static_cast<std::size_t>(tf::numel(shape)));
  for (auto& v : values) v = static_cast<T>(normal(rng));
  return tf::Tensor::from(values, std::move(shape));
}

template <class T>
void bench_mlp(const char* dtype) {
  constexpr std::int64_t kBatch = 256, kIn = 784, kHidden = 512, kOut = 10;
  std::mt19937 rng(1);
  std::vector<tf::Tensor> args = {
      random_tensor<T>({kIn, kHidden}, 0.03, rng), random_tensor<T>({kHidden}, 0.01, rng),
      random_tensor<T>({kHidden, kHidden}, 0.04, rng), random_tensor<T>({kHidden}, 0.01, rng),
      random_tensor<T>({kHidden, kOut}, 0.04, rng), random_tensor<T>({kOut}, 0.01, rng),
      random_tensor<T>({kBatch, kIn}, 1.0, rng)};
  std::vector<T> labels(kBatch * kOut, T(0));
  for (std::int64_t i = 0; i < kBatch; ++i) labels[static_cast<std::size_t>(i * kOut + i % kOut)] = T(1);
  args.push_back(tf::Tensor::from(labels, {kBatch, kOut}));

  auto loss = [](tf::Traced w1, tf::Traced b1, tf::Traced w2, tf::Traced b2, tf::Traced w3,
                 tf::Traced b3, tf::Traced x, tf::Traced y) {
    tf::Traced h1 = tf::tanh(tf::matmul(x, w1) + b1);
    tf::Traced h2 = tf::tanh(tf::matmul(h1, w2) + b2);
    return tf::cross_entropy(tf::matmul(h2, w3) + b3, y);
  };
  tf::Program forward = tf::trace(loss, args[0], args[1], args[2], args[3], args[4], args[5], args[6], args[7]);
  auto grads = tf::value_and_grad(loss, {0, 1, 2, 3, 4, 5});

  const double fwd = bench::median_seconds([&] { forward.run(args); }, 11, /*warm_up=*/true);
  const double grad = bench::median_seconds([&] {
    grads(args[0], args[1], args[2], args[3], args[4], args[5], args[6], args[7]);
  }, 11, /*warm_up=*/true);
  std::printf("case=mlp_fwd impl=tenferro dtype=%s size=784-512-512-10x256 median_s=%.6g\n", dtype, fwd);
  std::printf("case=mlp_grad impl=tenferro dtype=%s size=784-512-512-10x256 median_s=%.6g grad_over_fwd=%.3f\n",
              dtype, grad, grad / fwd);
}

template <class T>
void bench_dot(const char* dtype) {
  constexpr std::int64_t n = 1024;
  std::mt19937 rng(2);
  tf::Tensor a = random_tensor<T>({n, n}, 1.0, rng), b = random_tensor<T>({n, n}, 1.0, rng);
  auto mm = [](tf::Traced x, tf::Traced y) { return tf::matmul(x, y); };
  tf::Program program = tf::trace(mm, a, b);
  tf::Tensor c = tf::Tensor::zeros({n, n}, a.dtype());
  const auto [ours, blas] = bench::median_seconds_interleaved([&] { program.run({a, b}); }, [&] {
    if constexpr (std::is_same_v<T, float>) {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data<float>(), n,
                  b.data<float>(), n, 0.0f, c.data<float>(), n);
    } else {
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, a.data<double>(), n,
                  b.data<double>(), n, 0.0, c.data<double>(), n);
    }
  }, 15);
  std::printf("case=dot_general impl=openblas dtype=%s size=1024 median_s=%.6g\n", dtype, blas);
  std::printf("case=dot_general impl=tenferro dtype=%s size=1024 median_s=%.6g ratio_vs_blas=%.3f\n", dtype,
              ours, blas / ours);
}

}  // namespace

int main() {
  bench_dot<double>("f64");
  bench_dot<float>("f32");
  bench_mlp<double>("f64");
  bench_mlp<float>("f32");
  return 0;
}
