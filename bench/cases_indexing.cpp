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

// Convolution cases: 3 x 3 conv2d layers with padding 1, forward (conv_fwd) and the gradient of
// sum(conv(x, w) * c) with respect to both operands (conv_grad): batch 32, 16 -> 32 features,
// 32 x 32 (f32), and the bar shape, batch 32, 64 -> 64 features, 56 x 56 (f32 and f64).
// cnn_step: one value_and_grad of examples/cnn.cpp's network (two convolutions with ReLU, max and
// average pooling, dropout, a dense layer; 64 images of 12 x 12, f64). torch_bench.py's run_conv
// times the same with torch.nn.functional and autograd.
template <class E>
void conv_layer(const Options& options, std::int64_t batch, std::int64_t in, std::int64_t out, std::int64_t side,
                const char* dtype) {
  using T = tf::Traced;
  std::mt19937_64 rng(9);
  std::normal_distribution<double> normal;
  auto random = [&](tf::Shape shape) {
    std::vector<E> v(static_cast<std::size_t>(tf::numel(shape)));
    for (auto& e : v) e = static_cast<E>(normal(rng));
    return tf::Tensor::from(v, std::move(shape));
  };
  const tf::Tensor x = random({batch, in, side, side}), w = random({out, in, 3, 3}), c = random({batch, out, side, side});
  auto layer = [](T a, T b) { return tf::conv(a, b, {.padding = {1}}); };
  tf::Program forward = tf::trace(layer, x, w);
  auto grad = tf::value_and_grad([&](T a, T b, T d) { return tf::sum(layer(a, b) * d); }, {0, 1});
  const auto f = measure({{"tenferro", [&] { forward.run({x, w}); }}}, options.budget_s);
  const auto g = measure({{"tenferro", [&] { grad(x, w, c); }}}, options.budget_s);
  const std::string size = std::to_string(batch) + "x" + std::to_string(in) + "x" + std::to_string(side) + "x" +
                           std::to_string(side) + "_k3x3x" + std::to_string(out);
  print_line("conv_fwd", "tenferro", size, dtype, f[0].median_s, f[0].memory, f[0].repetitions);
  print_line("conv_grad", "tenferro", size, dtype, g[0].median_s, g[0].memory, g[0].repetitions);
}

void cnn_step(const Options& options) {
  using T = tf::Traced;
  constexpr std::int64_t kImages = 64, kSide = 12;
  std::mt19937_64 rng(10);
  std::normal_distribution<double> normal;
  auto random = [&](tf::Shape shape, double scale) {
    std::vector<double> v(static_cast<std::size_t>(tf::numel(shape)));
    for (auto& e : v) e = scale * normal(rng);
    return tf::Tensor::from(v, std::move(shape));
  };
  std::vector<double> labels;
  for (std::int64_t n = 0; n < kImages; ++n) {
    labels.push_back(n % 2 == 0 ? 1.0 : 0.0);
    labels.push_back(n % 2 == 0 ? 0.0 : 1.0);
  }
  const std::vector<tf::Tensor> args = {random({8, 1, 3, 3}, 0.47), random({16, 8, 3, 3}, 0.17), random({144, 2}, 0.08),
                                        tf::Tensor::zeros({2}), random({kImages, 1, kSide, kSide}, 1.0),
                                        tf::Tensor::from(labels, {kImages, 2}), tf::random::key(7)};
  auto loss = [](T w1, T w2, T w3, T b3, T x, T y, T key) {
    const T h1 = tf::max_pool(tf::relu(tf::conv(x, w1, {.padding = {1}})), {2});
    const T h2 = tf::avg_pool(tf::relu(tf::conv(h1, w2, {.padding = {1}})), {2});
    const T flat = tf::reshape(h2, {kImages, 16 * 3 * 3});
    return tf::cross_entropy(tf::matmul(tf::dropout(key, flat, 0.25), w3) + b3, y);
  };
  auto step = tf::value_and_grad(loss, {0, 1, 2, 3});
  const auto m = measure({{"tenferro", [&] { step(args[0], args[1], args[2], args[3], args[4], args[5], args[6]); }}},
                         options.budget_s);
  print_line("cnn_step", "tenferro", "64x1x12x12", "f64", m[0].median_s, m[0].memory, m[0].repetitions);
}

void run_conv(const Options& options) {
  conv_layer<float>(options, 32, 16, 32, 32, "f32");
  conv_layer<float>(options, 32, 64, 64, 56, "f32");
  conv_layer<double>(options, 32, 64, 64, 56, "f64");
  cnn_step(options);
}

}  // namespace bench
