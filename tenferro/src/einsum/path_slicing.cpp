// slice_path: greedy slicing of a contraction tree to a memory limit, in the manner of cotengra.
//
// Slicing a label fixes it to each of its values in turn: every tensor of one slice (the inputs
// included) loses the label, so a step's cost and result shrink by the label's size when they carry
// it, and the slices' results are summed (a summed label) or fill their part of the output (an
// output label). While the largest intermediate of one slice is above the limit, the label to add
// is chosen among the labels of the largest intermediates: the one giving the lowest new peak, then
// the fewest intermediates left at that peak (so that ties of several peak tensors still make
// progress), then the least total flops (slices x flops per slice), then the lowest id. The tree
// itself is kept. Inputs must fit whole: a limit below the largest input is refused (ValueError).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "einsum/path_internal.hpp"
#include "tenferro/error.hpp"

namespace tenferro::tn {

namespace {

constexpr double kTol = 1e-9;  // log2 values this close are equal

struct SliceState {
  double peak = 0;     // log2 of the largest intermediate of one slice
  int at_peak = 0;     // intermediates of that size
  double log2_flops = 0;  // all slices together
};

class Slicer {
 public:
  Slicer(const path_detail::NetInfo& info, const path_detail::Steps& steps)
      : info_(info), sliced_(static_cast<std::size_t>(info.labels), false) {
    const int n = info.operands;
    path_detail::LabelStore store(info, n + static_cast<int>(steps.size()));
    for (int t = 0; t < n; ++t) store.set_operand(t, t);
    for (std::size_t k = 0; k < steps.size(); ++k) {
      const int z = n + static_cast<int>(k);
      store.merge(z, steps[k].first, steps[k].second);
      std::vector<Label> joint = store.labels(steps[k].first);
      const std::vector<Label> b = store.labels(steps[k].second);
      joint.insert(joint.end(), b.begin(), b.end());
      std::sort(joint.begin(), joint.end());
      joint.erase(std::unique(joint.begin(), joint.end()), joint.end());
      joint_.push_back(std::move(joint));
      result_.push_back(store.labels(z));
    }
  }

  void slice(Label l) { sliced_[static_cast<std::size_t>(l)] = true; }
  bool is_sliced(Label l) const { return sliced_[static_cast<std::size_t>(l)]; }

  /// Cost of one slice with the current sliced labels plus `extra` (-1: none).
  SliceState state(Label extra) const {
    SliceState s;
    s.peak = path_detail::kNoSize;
    double per_slice = 0;
    double log2_slices = 0;
    for (int l = 0; l < info_.labels; ++l) {
      if (is_sliced(l) || l == extra) log2_slices += info_.log2_size[static_cast<std::size_t>(l)];
    }
    for (std::size_t k = 0; k < joint_.size(); ++k) {
      per_slice += info_.scaled(log2_kept(joint_[k], extra));
      const double size = log2_kept(result_[k], extra);
      if (size > s.peak + kTol) {
        s.peak = size;
        s.at_peak = 1;
      } else if (size >= s.peak - kTol) {
        ++s.at_peak;
      }
    }
    s.log2_flops = info_.unscaled_log2(per_slice) + log2_slices;
    return s;
  }

  /// The unsliced labels of the intermediates at the current peak, in increasing order.
  std::vector<Label> candidates(double peak) const {
    std::vector<Label> out;
    for (const auto& labels : result_) {
      if (log2_kept(labels, -1) < peak - kTol) continue;
      for (Label l : labels) {
        if (!is_sliced(l) && info_.size[static_cast<std::size_t>(l)] > 1) out.push_back(l);
      }
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }

 private:
  double log2_kept(const std::vector<Label>& labels, Label extra) const {
    double sum = 0;
    for (Label l : labels) {
      if (!is_sliced(l) && l != extra) sum += info_.log2_size[static_cast<std::size_t>(l)];
    }
    return sum;
  }

  const path_detail::NetInfo& info_;
  std::vector<bool> sliced_;
  std::vector<std::vector<Label>> joint_;   // per step: the labels of both operands
  std::vector<std::vector<Label>> result_;  // per step: the labels of the result
};

std::string number(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  return buf;
}

}  // namespace

ContractionPath slice_path(const Network& net, ContractionPath path, double limit) {
  path_detail::check_network(net);
  const path_detail::NetInfo info(net);
  double largest_input = 1;
  for (const auto& in : net.inputs) {
    double size = 1;
    for (Label l : in) size *= info.size[static_cast<std::size_t>(l)];
    largest_input = std::max(largest_input, size);
  }
  if (!(limit >= largest_input)) {
    throw ValueError("einsum path: memory limit " + number(limit) +
                     " is below the largest input (" + number(largest_input) +
                     " elements); inputs are never sliced to fit, so no slicing can reach it");
  }
  if (path.steps.empty()) return path;

  Slicer slicer(info, path.steps);
  for (Label l : path.sliced) slicer.slice(l);
  const double log2_limit = std::log2(limit);
  SliceState current = slicer.state(-1);
  while (current.peak > log2_limit + kTol) {
    Label choice = -1;
    SliceState best;
    for (Label l : slicer.candidates(current.peak)) {
      const SliceState s = slicer.state(l);
      const bool wins =
          choice < 0 || s.peak < best.peak - kTol ||
          (s.peak <= best.peak + kTol &&
           (s.at_peak < best.at_peak ||
            (s.at_peak == best.at_peak && s.log2_flops < best.log2_flops - kTol)));
      if (wins) {
        choice = l;
        best = s;
      }
    }
    // A peak intermediate above the limit (>= 1 element) carries an unsliced label of size > 1.
    slicer.slice(choice);
    path.sliced.push_back(choice);
    current = best;
  }
  path.slices = 1;
  for (Label l : path.sliced) path.slices *= info.size[static_cast<std::size_t>(l)];
  path.log2_flops_unsliced = path_detail::tree_cost(info, path.steps).log2_flops;
  if (!path.sliced.empty()) {
    path.log2_flops = current.log2_flops;
    path.log2_size = current.peak;
  }
  return path;
}

}  // namespace tenferro::tn
