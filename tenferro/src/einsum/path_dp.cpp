// DP: dynamic programming over subsets of operands with a cost cap (Pfeifer, Haegeman and
// Verstraete 2014, "Faster identification of optimal contraction sequences for tensor networks").
//
// best[S] is the cheapest tree over the operand set S, built level by level (|S| = 2, 3, ...) from
// pairs of smaller solved sets. Pfeifer's cost cap: a set is kept only when its cost is at most the
// cap; a round that does not reach the full set raises the cap (by the smallest label size, at
// least a factor 2) and starts over. Sets priced under a low cap are few, so the early rounds are
// cheap, and the round that reaches the full set is exact: every subtree of an optimal tree costs
// at most the optimum, so that tree was within the cap.
//
// Outer products: pairs of sets sharing no label are joined too (the cap keeps those pairs few).
// Pfeifer's restriction to pairs sharing a label is only asymptotically optimal: an outer product of
// two small tensors that meet a large one (A_i B_j C_ijk) can beat every product-free order, and a
// tensor whose lone labels are summed at its first contraction is best joined with a small tensor of
// another connected part. So disconnected networks are solved whole too, not part by part.
//
// Objectives: Flops is exact. Size keeps per set the tree of least largest intermediate (exact in
// the size; its flops tie-break is per set, so heuristic), Combined the least flops + w * size per
// set (heuristic: the size term is not additive over subtrees).
#include <algorithm>
#include <bit>
#include <cmath>
#include <memory>
#include <numeric>
#include <string>
#include <unordered_map>

#include "einsum/path_internal.hpp"
#include "tenferro/error.hpp"

namespace tenferro::tn::path_detail {

namespace {

constexpr double kTie = 1e-12;

struct Entry {
  std::uint64_t mask;
  double flops;        // scaled, over the subtree
  double log2_size;    // largest intermediate of the subtree (kNoSize for an operand)
  double own_log2_size;
  int left;            // entries; -1 for an operand
  int right;
};

class SubsetDP {
 public:
  SubsetDP(const NetInfo& info, const PathOptions& options, std::vector<int> operands)
      : info_(info), options_(options), operands_(std::move(operands)) {}

  /// Solves the operand set, raising the cap until a round reaches the full set; appends the steps
  /// (SSA ids) and returns the root's id.
  int solve(Steps& steps) {
    double cap = start_cap();
    const double step = cap_step();
    while (!round(cap)) cap += step;
    return emit(found_, steps);
  }

 private:
  double value_log2(double scaled_flops, double log2_size) const {
    switch (options_.objective) {
      case Objective::Flops:
        return info_.unscaled_log2(scaled_flops);
      case Objective::Size:
        return log2_size;
      case Objective::Combined:
        return info_.unscaled_log2(scaled_flops +
                                   std::max(0.0, options_.size_weight) * info_.scaled(log2_size));
    }
    return 0;
  }

  /// Whether (flops, size) is strictly better than the entry, under the objective.
  bool improves(double flops, double log2_size, const Entry& e) const {
    switch (options_.objective) {
      case Objective::Flops:
        return flops < e.flops;
      case Objective::Size:
        if (std::abs(log2_size - e.log2_size) > kTie) return log2_size < e.log2_size;
        return flops < e.flops;
      case Objective::Combined:
        return value_log2(flops, log2_size) < value_log2(e.flops, e.log2_size);
    }
    return false;
  }

  /// A lower bound of the objective (log2): the largest operand is contracted once (flops), the
  /// final result is an intermediate (size).
  double start_cap() const {
    LabelStore store(info_, 1);
    double largest = 0;
    for (int t : operands_) {
      store.set_operand(0, t);
      largest = std::max(largest, store.log2_size(0));
    }
    return options_.objective == Objective::Size ? 0.0 : largest;
  }

  /// The cap grows by the smallest label size of the component (Pfeifer), at least a factor 2.
  double cap_step() const {
    double smallest = 0;
    for (int t : operands_) {
      for (Label l : info_.inputs[static_cast<std::size_t>(t)]) {
        const double s = info_.log2_size[static_cast<std::size_t>(l)];
        if (s > 0 && (smallest == 0 || s < smallest)) smallest = s;
      }
    }
    return std::max(1.0, smallest);
  }

  /// One DP pass under the cap; true when the full set was reached (then found_ is its entry).
  bool round(double cap_log2) {
    const int k = static_cast<int>(operands_.size());
    entries_.clear();
    index_.clear();
    store_ = std::make_unique<LabelStore>(info_, 0);
    scratch_ = store_->add();
    levels_.assign(static_cast<std::size_t>(k) + 1, {});
    std::uint64_t full = 0;
    for (int t : operands_) {
      const int e = add_entry({std::uint64_t{1} << t, 0.0, kNoSize, 0.0, -1, -1});
      store_->set_operand(slot(e), t);
      entries_[static_cast<std::size_t>(e)].own_log2_size = store_->log2_size(slot(e));
      levels_[1].push_back(e);
      full |= std::uint64_t{1} << t;
    }
    if (k == 1) {
      found_ = 0;
      return true;
    }
    for (int c = 2; c <= k; ++c) {
      for (int d = 1; 2 * d <= c; ++d) {
        const auto& small = levels_[static_cast<std::size_t>(d)];
        const auto& large = levels_[static_cast<std::size_t>(c - d)];
        for (std::size_t i = 0; i < small.size(); ++i) {
          for (std::size_t j = d == c - d ? i + 1 : 0; j < large.size(); ++j) {
            join(small[i], large[j], c, cap_log2);
          }
        }
      }
    }
    const auto it = index_.find(full);
    if (it == index_.end()) return false;
    found_ = it->second;
    return true;
  }

  void join(int a, int b, int level, double cap_log2) {
    const Entry& ea = entries_[static_cast<std::size_t>(a)];
    const Entry& eb = entries_[static_cast<std::size_t>(b)];
    if ((ea.mask & eb.mask) != 0) return;
    const double flops = ea.flops + eb.flops + info_.scaled(store_->log2_union(slot(a), slot(b)));
    const double child_size = std::max(ea.log2_size, eb.log2_size);
    // Combined is at least the flops: the flops alone may already pass the cap.
    if (options_.objective != Objective::Size && info_.unscaled_log2(flops) > cap_log2) return;
    const std::uint64_t mask = ea.mask | eb.mask;
    const auto it = index_.find(mask);
    if (it != index_.end()) {
      Entry& e = entries_[static_cast<std::size_t>(it->second)];
      const double size = std::max(child_size, e.own_log2_size);
      if (improves(flops, size, e)) {
        e.flops = flops;
        e.log2_size = size;
        e.left = a;
        e.right = b;
      }
      return;
    }
    store_->merge(scratch_, slot(a), slot(b));
    const double own = store_->log2_size(scratch_);
    const double size = std::max(child_size, own);
    if (value_log2(flops, size) > cap_log2) return;
    const int e = add_entry({mask, flops, size, own, a, b});
    store_->copy(slot(e), scratch_);
    levels_[static_cast<std::size_t>(level)].push_back(e);
  }

  int add_entry(const Entry& entry) {
    const int e = static_cast<int>(entries_.size());
    entries_.push_back(entry);
    index_.emplace(entry.mask, e);
    store_->add();
    return e;
  }

  static int slot(int entry) { return entry + 1; }  // store node 0 is the scratch

  int emit(int e, Steps& steps) const {
    const Entry& entry = entries_[static_cast<std::size_t>(e)];
    if (entry.left < 0) return std::countr_zero(entry.mask);
    const int a = emit(entry.left, steps);
    const int b = emit(entry.right, steps);
    steps.emplace_back(a, b);
    return info_.operands + static_cast<int>(steps.size()) - 1;
  }

  const NetInfo& info_;
  const PathOptions& options_;
  std::vector<int> operands_;
  std::vector<Entry> entries_;
  std::unordered_map<std::uint64_t, int> index_;
  std::unique_ptr<LabelStore> store_;
  int scratch_ = 0;
  std::vector<std::vector<int>> levels_;
  int found_ = -1;
};

}  // namespace

Steps dp_steps(const NetInfo& info, const PathOptions& options) {
  if (info.operands <= 1) return {};
  if (info.operands > 64) {
    throw ValueError("einsum path: the DP optimizer takes at most 64 operands, got " +
                     std::to_string(info.operands));
  }
  std::vector<int> operands(static_cast<std::size_t>(info.operands));
  std::iota(operands.begin(), operands.end(), 0);
  Steps steps;
  SubsetDP(info, options, std::move(operands)).solve(steps);
  return steps;
}

}  // namespace tenferro::tn::path_detail
