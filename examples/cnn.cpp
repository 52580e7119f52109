// Trains a small convolutional network on synthetic images: two convolutions with ReLU, max and
// average pooling, dropout and a dense layer, with softmax cross-entropy and plain gradient
// descent; prints the loss as it falls and the training accuracy.
//
// The images (1 x 12 x 12) show horizontal or vertical bars at random positions under noise; the
// class is the bars' direction. Everything random (data, initial weights, dropout masks) comes from
// tenferro's pure random numbers: the dropout key is an argument of the compiled step, a new one
// per step, so each step draws a new mask without retracing, and the gradient passes through
// exactly the mask the forward pass used.
#include <cmath>
#include <cstdio>
#include <vector>

#include "tenferro/tenferro.hpp"

namespace tf = tenferro;
using T = tf::Traced;

namespace {

constexpr std::int64_t kImages = 64, kSide = 12, kClasses = 2;

/// Images [N, 1, 12, 12] and one-hot labels [N, 2]: even images have a horizontal bar, odd ones a
/// vertical bar, at a random row or column, plus noise.
void make_data(tf::Tensor& x, tf::Tensor& y) {
  const tf::Tensor key = tf::random::key(12);
  auto draw = [](T k) {
    auto keys = tf::random::split(k, 2);
    return std::vector<T>{tf::random::normal(keys[0], {kImages, 1, kSide, kSide}) * 0.3,
                          tf::astype(tf::random::bits(keys[1], {kImages}), tf::DType::F64)};
  };
  const auto r = tf::trace(draw, key).run({key});
  x = r.at(0).clone();
  std::vector<double> labels;
  for (std::int64_t n = 0; n < kImages; ++n) {
    const auto line = static_cast<std::int64_t>(r.at(1).data<double>()[n]) % (kSide - 2) + 1;
    for (std::int64_t i = 0; i < kSide; ++i) {
      const std::int64_t at = n % 2 == 0 ? line * kSide + i : i * kSide + line;  // row or column `line`
      x.data<double>()[n * kSide * kSide + at] += 1.0;
    }
    labels.push_back(n % 2 == 0 ? 1.0 : 0.0);
    labels.push_back(n % 2 == 0 ? 0.0 : 1.0);
  }
  y = tf::Tensor::from(labels, {kImages, kClasses});
}

/// conv(1 -> 8, 3x3) relu, max_pool 2 -> conv(8 -> 16, 3x3) relu, avg_pool 2 -> dropout -> dense.
T logits(const T& w1, const T& w2, const T& w3, const T& b3, const T& x, const T& key, double drop) {
  const T h1 = tf::max_pool(tf::relu(tf::conv(x, w1, {.padding = {1}})), {2});   // [N, 8, 6, 6]
  const T h2 = tf::avg_pool(tf::relu(tf::conv(h1, w2, {.padding = {1}})), {2});  // [N, 16, 3, 3]
  const T flat = tf::reshape(h2, {kImages, 16 * 3 * 3});
  return tf::matmul(tf::dropout(key, flat, drop), w3) + b3;
}

}  // namespace

int main() {
  tf::Tensor x, y;
  make_data(x, y);
  // He-scaled initial weights from one key.
  auto init = [](T k) {
    auto keys = tf::random::split(k, 3);
    return std::vector<T>{tf::random::normal(keys[0], {8, 1, 3, 3}) * std::sqrt(2.0 / 9),
                          tf::random::normal(keys[1], {16, 8, 3, 3}) * std::sqrt(2.0 / 72),
                          tf::random::normal(keys[2], {144, kClasses}) * std::sqrt(1.0 / 144)};
  };
  const tf::Tensor init_key = tf::random::key(3);
  std::vector<tf::Tensor> params = tf::trace(init, init_key).run({init_key});
  params.push_back(tf::Tensor::zeros({kClasses}));

  auto loss = [](T w1, T w2, T w3, T b3, T images, T labels, T key) {
    return tf::cross_entropy(logits(w1, w2, w3, b3, images, key, 0.25), labels);
  };
  auto step_of = tf::value_and_grad(loss, {0, 1, 2, 3});

  const double rate = 0.1;
  double first = 0, last = 0;
  for (std::int64_t step = 0; step <= 60; ++step) {
    // A new dropout key per step, an argument of the compiled step (no retracing).
    const tf::Tensor key = tf::random::key(1000 + static_cast<std::uint64_t>(step));
    auto [value, grads] = step_of(params[0], params[1], params[2], params[3], x, y, key);
    last = value.item<double>();
    if (step == 0) first = last;
    if (step % 10 == 0) std::printf("step %3lld  loss %.6f\n", static_cast<long long>(step), last);
    for (std::size_t p = 0; p < params.size(); ++p) {
      double* w = params[p].data<double>();
      for (std::int64_t i = 0; i < params[p].numel(); ++i) w[i] -= rate * grads[p].data<double>()[i];
    }
  }
  // Training accuracy without dropout.
  auto predict = tf::trace([](T w1, T w2, T w3, T b3, T images, T key) { return logits(w1, w2, w3, b3, images, key, 0.0); },
                           params[0], params[1], params[2], params[3], x, tf::random::key(0));
  const tf::Tensor out = predict.run({params[0], params[1], params[2], params[3], x, tf::random::key(0)}).at(0);
  std::int64_t correct = 0;
  for (std::int64_t n = 0; n < kImages; ++n) {
    const bool says_horizontal = out.data<double>()[n * 2] > out.data<double>()[n * 2 + 1];
    correct += says_horizontal == (n % 2 == 0);
  }
  std::printf("loss %.4f -> %.4f; training accuracy %lld / %lld\n", first, last, static_cast<long long>(correct),
              static_cast<long long>(kImages));
  if (!(last < first)) {
    std::printf("FAILED: the loss did not fall\n");
    return 1;
  }
  return 0;
}
