// The dense cases: the MLP and matmul against OpenBLAS.
#include <cblas.h>

#include <random>
#include <type_traits>
#include <vector>

#include "case_util.hpp"
#include "cases.hpp"
#include "tenferro/tenferro.hpp"

namespace bench {

namespace tf = tenferro;

namespace {

template <class T>
void mlp(const Options& options, const char* dtype) {
  constexpr std::int64_t kBatch = 256, kIn = 784, kHidden = 512, kOut = 10;
  const char* size = "784-512-512-10x256";
  std::mt19937 rng(1);
  // w1, b1, w2, b2, w3, b3, x, one-hot labels.
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
  // Tracing happens here and (for the gradient) in the first, untimed call inside measure().
  tf::Program forward = tf::trace(loss, args[0], args[1], args[2], args[3], args[4], args[5], args[6], args[7]);
  auto grads = tf::value_and_grad(loss, {0, 1, 2, 3, 4, 5});

  // Interleaved, so that grad_over_fwd compares runs made under the same load.
  const auto m = measure({{"fwd", [&] { forward.run(args); }},
                          {"grad", [&] { grads(args[0], args[1], args[2], args[3], args[4], args[5], args[6], args[7]); }}},
                         options.budget_s);
  const Measurement& fwd = m.at(0);
  const Measurement& grad = m.at(1);
  print_line("mlp_fwd", "tenferro", size, dtype, fwd.median_s, fwd.memory, fwd.repetitions);
  print_line("mlp_grad", "tenferro", size, dtype, grad.median_s, grad.memory, grad.repetitions,
             field("grad_over_fwd", grad.median_s / fwd.median_s));
}

template <class T>
void matmul(const Options& options, const char* dtype) {
  constexpr std::int64_t n = 1024;
  std::mt19937 rng(2);
  tf::Tensor a = random_tensor<T>({n, n}, 1.0, rng), b = random_tensor<T>({n, n}, 1.0, rng);
  tf::Program program = tf::trace([](tf::Traced x, tf::Traced y) { return tf::matmul(x, y); }, a, b);
  tf::Tensor c = tf::Tensor::zeros({n, n}, a.dtype());
  auto blas = [&] {
    if constexpr (std::is_same_v<T, float>) {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data<float>(), n,
                  b.data<float>(), n, 0.0f, c.data<float>(), n);
    } else {
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, a.data<double>(), n,
                  b.data<double>(), n, 0.0, c.data<double>(), n);
    }
  };
  const auto m = measure({{"tenferro", [&] { program.run({a, b}); }}, {"openblas", blas}}, options.budget_s);
  print_line("matmul", "openblas", "1024", dtype, m[1].median_s, m[1].memory, m[1].repetitions);
  print_line("matmul", "tenferro", "1024", dtype, m[0].median_s, m[0].memory, m[0].repetitions,
             field("ratio_vs_blas", m[0].median_s / m[1].median_s));
}

}  // namespace

void run_mlp(const Options& options) {
  if (selected(options, "mlp_f32")) mlp<float>(options, "f32");
  if (selected(options, "mlp_f64")) mlp<double>(options, "f64");
}

void run_matmul(const Options& options) {
  matmul<float>(options, "f32");
  matmul<double>(options, "f64");
}

}  // namespace bench
