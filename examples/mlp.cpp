// Trains a small multilayer perceptron (2 -> 32 -> 32 -> 3, tanh, softmax cross-entropy) on
// synthetic data (three Gaussian blobs) with plain gradient descent, printing the loss as it falls.
//
// The loss is an ordinary C++ lambda of traced tensors; tf::value_and_grad traces and compiles it
// once, and every step afterwards only runs the compiled value-and-gradient program.
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "tenferro/tenferro.hpp"

namespace tf = tenferro;

namespace {

constexpr std::int64_t kSamples = 300, kFeatures = 2, kHidden = 32, kClasses = 3;

tf::Tensor random_normal(tf::Shape shape, double scale, std::mt19937& rng) {
  std::normal_distribution<double> normal(0.0, scale);
  std::vector<double> values(static_cast<std::size_t>(tf::numel(shape)));
  for (auto& v : values) v = normal(rng);
  return tf::Tensor::from(values, std::move(shape));
}

/// Three blobs around the vertices of a triangle; labels one-hot.
void make_data(tf::Tensor& x, tf::Tensor& y, std::mt19937& rng) {
  std::normal_distribution<double> noise(0.0, 1.0);
  std::vector<double> xs, ys;
  for (std::int64_t i = 0; i < kSamples; ++i) {
    const std::int64_t c = i % kClasses;
    const double angle = 2.0 * M_PI * static_cast<double>(c) / kClasses;
    xs.push_back(2.0 * std::cos(angle) + noise(rng));
    xs.push_back(2.0 * std::sin(angle) + noise(rng));
    for (std::int64_t k = 0; k < kClasses; ++k) ys.push_back(k == c ? 1.0 : 0.0);
  }
  x = tf::Tensor::from(xs, {kSamples, kFeatures});
  y = tf::Tensor::from(ys, {kSamples, kClasses});
}

tf::Traced logits(const tf::Traced& w1, const tf::Traced& b1, const tf::Traced& w2,
                  const tf::Traced& b2, const tf::Traced& w3, const tf::Traced& b3,
                  const tf::Traced& x) {
  tf::Traced h1 = tf::tanh(tf::matmul(x, w1) + b1);
  tf::Traced h2 = tf::tanh(tf::matmul(h1, w2) + b2);
  return tf::matmul(h2, w3) + b3;
}

/// p -= rate * g, in place.
void descend(tf::Tensor& p, const tf::Tensor& g, double rate) {
  double* pv = p.data<double>();
  const double* gv = g.data<double>();
  for (std::int64_t i = 0; i < p.numel(); ++i) pv[i] -= rate * gv[i];
}

}  // namespace

int main() {
  std::mt19937 rng(7);
  tf::Tensor x, y;
  make_data(x, y, rng);
  std::vector<tf::Tensor> params = {
      random_normal({kFeatures, kHidden}, 1.0 / std::sqrt(double(kFeatures)), rng), tf::Tensor::zeros({kHidden}),
      random_normal({kHidden, kHidden}, 1.0 / std::sqrt(double(kHidden)), rng), tf::Tensor::zeros({kHidden}),
      random_normal({kHidden, kClasses}, 1.0 / std::sqrt(double(kHidden)), rng), tf::Tensor::zeros({kClasses})};

  auto loss = [](tf::Traced w1, tf::Traced b1, tf::Traced w2, tf::Traced b2, tf::Traced w3,
                 tf::Traced b3, tf::Traced xs, tf::Traced labels) {
    return tf::cross_entropy(logits(w1, b1, w2, b2, w3, b3, xs), labels);
  };
  auto loss_and_grads = tf::value_and_grad(loss, {0, 1, 2, 3, 4, 5});

  const double rate = 0.5;
  double first = 0.0, last = 0.0;
  for (int step = 0; step <= 200; ++step) {
    auto [value, grads] = loss_and_grads(params[0], params[1], params[2], params[3], params[4],
                                         params[5], x, y);
    last = value.item<double>();
    if (step == 0) first = last;
    if (step % 20 == 0) std::printf("step %3d  loss %.6f\n", step, last);
    for (std::size_t k = 0; k < params.size(); ++k) descend(params[k], grads[k], rate);
  }

  auto predict = [](tf::Traced w1, tf::Traced b1, tf::Traced w2, tf::Traced b2, tf::Traced w3,
                    tf::Traced b3, tf::Traced xs) { return logits(w1, b1, w2, b2, w3, b3, xs); };
  tf::Tensor out = tf::trace(predict, params[0], params[1], params[2], params[3], params[4],
                             params[5], x)
                       .run({params[0], params[1], params[2], params[3], params[4], params[5], x})[0];
  std::int64_t correct = 0;
  for (std::int64_t i = 0; i < kSamples; ++i) {
    std::int64_t best = 0;
    for (std::int64_t k = 1; k < kClasses; ++k) {
      if (out.at<double>({i, k}) > out.at<double>({i, best})) best = k;
    }
    correct += y.at<double>({i, best}) == 1.0;
  }
  std::printf("loss %.4f -> %.4f, training accuracy %.1f%%\n", first, last,
              100.0 * static_cast<double>(correct) / kSamples);
  return last < first ? 0 : 1;
}
