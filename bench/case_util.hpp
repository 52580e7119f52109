#pragma once
// Helpers the case files share: random inputs, and comparing a case's results between two
// implementations before timing them (a faster variant must compute the same thing).
#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "tenferro/tensor.hpp"

namespace bench {

/// A tensor of `shape` with normal entries of standard deviation `scale`, in Element's dtype.
template <class Element>
tenferro::Tensor random_tensor(tenferro::Shape shape, double scale, std::mt19937& rng) {
  std::normal_distribution<double> normal(0.0, scale);
  std::vector<Element> values(static_cast<std::size_t>(tenferro::numel(shape)));
  for (auto& v : values) v = static_cast<Element>(normal(rng));
  return tenferro::Tensor::from(values, std::move(shape));
}

/// The largest |a - b| over corresponding tensors, each relative to the largest |b| of its tensor;
/// infinity on a shape or count mismatch.
inline double max_relative_difference(const std::vector<tenferro::Tensor>& a, const std::vector<tenferro::Tensor>& b) {
  if (a.size() != b.size()) return INFINITY;
  double worst = 0;
  for (std::size_t k = 0; k < a.size(); ++k) {
    if (a[k].shape() != b[k].shape()) return INFINITY;
    double scale = 0;
    for (std::int64_t i = 0; i < b[k].numel(); ++i) scale = std::max(scale, std::abs(b[k].element(i).real()));
    for (std::int64_t i = 0; i < a[k].numel(); ++i) {
      worst = std::max(worst, std::abs(a[k].element(i).real() - b[k].element(i).real()) / (scale + 1e-30));
    }
  }
  return worst;
}

}  // namespace bench
