// Indexing and convolution cases. Indexing: take of 10^6 rows out of a 10^6 x 16 f64 table (take_fwd) and the gradient of
// sum(take(x, idx) * w), a scatter-add of w (take_grad); cumsum of 10^7 f64 (cumsum_fwd).
// torch_bench.py's run_indexing times index_select, its autograd (index_add_) and cumsum on the
// same sizes.
#include <random>
#include <string>
#include <vector>

#include "cases.hpp"
#include "tenferro/tenferro.hpp"

namespace bench {

namespace tf = tenferro;

void run_indexing(const Options& options) {
  using T = tf::Traced;
  constexpr std::int64_t rows = 1000000, cols = 16;
  std::mt19937_64 rng(5);
  std::uniform_int_distribution<std::int64_t> pick(0, rows - 1);
  std::normal_distribution<double> normal;
  std::vector<std::int64_t> idx(static_cast<std::size_t>(rows));
  for (auto& i : idx) i = pick(rng);
  std::vector<double> table(static_cast<std::size_t>(rows * cols)), weights(table.size());
  for (auto& v : table) v = normal(rng);
  for (auto& v : weights) v = normal(rng);
  const tf::Tensor x = tf::Tensor::from(table, {rows, cols}), w = tf::Tensor::from(weights, {rows, cols});
  const tf::Tensor i = tf::Tensor::from(idx, {rows});
  tf::Program take = tf::trace([](T a, T b) { return tf::take(a, b, 0); }, x, i);
  auto grad = tf::grad([](T a, T b, T c) { return tf::sum(tf::take(a, b, 0) * c); });
  const auto m = measure({{"tenferro", [&] { take.run({x, i}); }}}, options.budget_s);
  const auto g = measure({{"tenferro", [&] { grad(x, i, w); }}}, options.budget_s);
  const std::string size = "1e6x16";
  print_line("take_fwd", "tenferro", size, "f64", m[0].median_s, m[0].memory, m[0].repetitions);
  print_line("take_grad", "tenferro", size, "f64", g[0].median_s, g[0].memory, g[0].repetitions);

  constexpr std::int64_t n = 10000000;
  std::vector<double> v(static_cast<std::size_t>(n));
  for (auto& e : v) e = normal(rng);
  const tf::Tensor y = tf::Tensor::from(v, {n});
  tf::Program cumsum = tf::trace([](T a) { return tf::cumsum(a, 0); }, y);
  const auto c = measure({{"tenferro", [&] { cumsum.run({y}); }}}, options.budget_s);
  print_line("cumsum_fwd", "tenferro", "1e7", "f64", c[0].median_s, c[0].memory, c[0].repetitions);
}

}  // namespace bench

namespace bench {

// Convolution cases: a CNN layer, f32, batch 32, 16 -> 32 features, 32 x 32 images, 3 x 3 kernel,
// padding 1 (conv_fwd), and the gradient of sum(conv(x, w) * c) with respect to both (conv_grad).
// torch_bench.py's run_conv times torch.nn.functional.conv2d and its autograd on the same shapes.
void run_conv(const Options& options) {
  namespace tf = tenferro;
  using T = tf::Traced;
  std::mt19937_64 rng(9);
  std::normal_distribution<float> normal;
  auto random = [&](tf::Shape shape) {
    std::vector<float> v(static_cast<std::size_t>(tf::numel(shape)));
    for (auto& e : v) e = normal(rng);
    return tf::Tensor::from(v, std::move(shape));
  };
  const tf::Tensor x = random({32, 16, 32, 32}), w = random({32, 16, 3, 3}), c = random({32, 32, 32, 32});
  auto layer = [](T a, T b) { return tf::conv(a, b, {.padding = {1}}); };
  tf::Program forward = tf::trace(layer, x, w);
  auto grad = tf::value_and_grad([&](T a, T b, T d) { return tf::sum(layer(a, b) * d); }, {0, 1});
  const auto f = measure({{"tenferro", [&] { forward.run({x, w}); }}}, options.budget_s);
  const auto g = measure({{"tenferro", [&] { grad(x, w, c); }}}, options.budget_s);
  const std::string size = "32x16x32x32_k3x3x32";
  print_line("conv_fwd", "tenferro", size, "f32", f[0].median_s, f[0].memory, f[0].repetitions);
  print_line("conv_grad", "tenferro", size, "f32", g[0].median_s, g[0].memory, g[0].repetitions);
}

}  // namespace bench
