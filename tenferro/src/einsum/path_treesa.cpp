// TreeSA: simulated annealing over contraction trees (Kalachev, Panteleev, Zhou and Yung 2021,
// "Recursive multi-tensor contraction for XEB verification of quantum circuits"; the TreeSA of
// OMEinsumContractionOrders). The tree is changed by local rotations and the change is kept or
// undone by the Metropolis rule while the inverse temperature beta rises from kBetaFirst to
// kBetaLast; the best tree seen (by the exact objective) is returned, so the result is never worse
// than the start tree. options.repeats independent chains start from the same tree with their own
// seeded streams; the best chain wins (ties: the lower chain).
//
// The move: at an internal node v = (x, y) with x = (k, o) internal, swap y with k, giving
// v = (k, x') with x' = (o, y). Only x's set of leaves changes, so only x's labels change (a node's
// labels depend on its leaf set alone), and only the costs of x and v. The energy change is local,
// as in TreeSA: the log2 of the ratio of the two nodes' summed costs (Flops); that plus a penalty
// on x's size above a target just below the best largest size so far (Size, after TreeSA's
// sc_target); or the ratio of their costs plus w * x's size (Combined); all in bits. An
// accepted move refreshes the subtree sums (flops, largest size) along the path from x to the
// root, so the exact objective of the whole tree is always at hand without any cancellation.
#include <algorithm>
#include <cmath>

#include "einsum/path_internal.hpp"

namespace tenferro::tn::path_detail {

namespace {

// Schedule: kTemperatures values of beta (per bit of energy) evenly from kBetaFirst to kBetaLast,
// kSweeps * (n - 1) proposals at each. Tuned on random 3-regular graphs of 200 tensors (bond 2,
// einsum_path_measure.cpp): a chain takes about 0.1 s there; more temperatures with fewer
// proposals each did better than the converse at equal work, and the local energy much better
// than the log2 of the whole tree's flops (which freezes the cheap parts of the tree).
constexpr double kBetaFirst = 0.01;
constexpr double kBetaLast = 15.0;
constexpr int kTemperatures = 300;
constexpr int kSweeps = 10;
// Size: energy per bit of a node above the target size (1, 2 and 5 did alike on 3-regular graphs;
// an energy of the node's size alone, without the flops, left the size near greedy's).
constexpr double kSizeWeight = 2.0;

class Annealer {
 public:
  Annealer(const NetInfo& info, const PathOptions& options, const Steps& start)
      : info_(info),
        options_(options),
        n_(info.operands),
        nodes_(2 * info.operands - 1),
        store_(info, 2 * info.operands),
        scratch_(2 * info.operands - 1) {
    const auto count = static_cast<std::size_t>(nodes_);
    left_.assign(count, -1);
    right_.assign(count, -1);
    parent_.assign(count, -1);
    log2_size_.assign(count, 0);
    flops_.assign(count, 0);
    sub_flops_.assign(count, 0);
    sub_size_.assign(count, kNoSize);
    for (int t = 0; t < n_; ++t) {
      store_.set_operand(t, t);
      log2_size_[static_cast<std::size_t>(t)] = store_.log2_size(t);
    }
    for (std::size_t k = 0; k < start.size(); ++k) {
      const int z = n_ + static_cast<int>(k);
      const auto uz = static_cast<std::size_t>(z);
      left_[uz] = start[k].first;
      right_[uz] = start[k].second;
      parent_[static_cast<std::size_t>(start[k].first)] = z;
      parent_[static_cast<std::size_t>(start[k].second)] = z;
      store_.merge(z, start[k].first, start[k].second);
      log2_size_[uz] = store_.log2_size(z);
      flops_[uz] = info_.scaled(store_.log2_union(start[k].first, start[k].second));
      refresh(z);
    }
    root_ = nodes_ - 1;
    best_left_ = left_;
    best_right_ = right_;
    best_flops_ = sub_flops_[static_cast<std::size_t>(root_)];
    best_size_ = sub_size_[static_cast<std::size_t>(root_)];
  }

  void anneal(std::mt19937_64& rng) {
    const int proposals = kSweeps * (n_ - 1);
    for (int step = 0; step < kTemperatures; ++step) {
      const double beta =
          kBetaFirst + (kBetaLast - kBetaFirst) * step / std::max(1, kTemperatures - 1);
      for (int i = 0; i < proposals; ++i) propose(rng, beta);
    }
  }

  double best_flops() const { return best_flops_; }
  double best_size() const { return best_size_; }

  /// The best tree in SSA steps (post-order, left subtree first).
  Steps best_steps() const {
    Steps steps;
    std::vector<int> ssa(static_cast<std::size_t>(nodes_), -1);
    std::vector<std::pair<int, bool>> stack{{root_, false}};
    while (!stack.empty()) {
      const auto [node, expanded] = stack.back();
      stack.pop_back();
      const auto u = static_cast<std::size_t>(node);
      if (node < n_) {
        ssa[u] = node;
      } else if (!expanded) {
        stack.emplace_back(node, true);
        stack.emplace_back(best_right_[u], false);
        stack.emplace_back(best_left_[u], false);
      } else {
        steps.emplace_back(ssa[static_cast<std::size_t>(best_left_[u])],
                           ssa[static_cast<std::size_t>(best_right_[u])]);
        ssa[u] = n_ + static_cast<int>(steps.size()) - 1;
      }
    }
    return steps;
  }

 private:
  void refresh(int node) {
    const auto u = static_cast<std::size_t>(node);
    const auto l = static_cast<std::size_t>(left_[u]);
    const auto r = static_cast<std::size_t>(right_[u]);
    sub_flops_[u] = sub_flops_[l] + sub_flops_[r] + flops_[u];
    sub_size_[u] = std::max({sub_size_[l], sub_size_[r], log2_size_[u]});
  }

  /// The objective of (flops, size) in the scaled linear unit, compared against the best.
  bool beats_best(double flops, double size) const {
    constexpr double kRel = 1e-12;
    switch (options_.objective) {
      case Objective::Flops:
        return flops < best_flops_ * (1 - kRel);
      case Objective::Size:
        if (std::abs(size - best_size_) > 1e-12) return size < best_size_;
        return flops < best_flops_ * (1 - kRel);
      case Objective::Combined: {
        const double w = std::max(0.0, options_.size_weight);
        return flops + w * info_.scaled(size) <
               (best_flops_ + w * info_.scaled(best_size_)) * (1 - kRel);
      }
    }
    return false;
  }

  void propose(std::mt19937_64& rng, double beta) {
    const int v = n_ + uniform_int(rng, nodes_ - n_);
    const auto uv = static_cast<std::size_t>(v);
    const int choice = uniform_int(rng, 4);
    int x = (choice & 2) != 0 ? left_[uv] : right_[uv];
    if (x < n_) x = x == left_[uv] ? right_[uv] : left_[uv];
    if (x < n_) return;  // both children are operands: no rotation at v
    const auto ux = static_cast<std::size_t>(x);
    const int y = x == left_[uv] ? right_[uv] : left_[uv];
    const int keep = (choice & 1) != 0 ? left_[ux] : right_[ux];  // moves up to v
    const int other = keep == left_[ux] ? right_[ux] : left_[ux];  // stays under x, joined by y

    store_.merge(scratch_, other, y);
    const double x_cost = store_.log2_union(other, y);
    const double x_size = store_.log2_size(scratch_);
    const double v_cost = store_.log2_union(keep, scratch_);
    const double x_flops = info_.scaled(x_cost);
    const double v_flops = info_.scaled(v_cost);

    const double old_local = flops_[ux] + flops_[uv];
    const double new_local = x_flops + v_flops;
    double energy = 0;  // in bits
    switch (options_.objective) {
      case Objective::Flops:
        energy = std::log2(new_local / old_local);
        break;
      case Objective::Size: {
        // The flops drive the search (a good tree for flops is small too); sizes above the target
        // (one bit below the best largest size so far) cost kSizeWeight per bit on top.
        const double target = best_size_ - 1;
        energy = std::log2(new_local / old_local) +
                 kSizeWeight * (std::max(x_size, target) - std::max(log2_size_[ux], target));
        break;
      }
      case Objective::Combined: {
        const double w = std::max(0.0, options_.size_weight);
        energy = std::log2((new_local + w * info_.scaled(x_size)) /
                           (old_local + w * info_.scaled(log2_size_[ux])));
        break;
      }
    }
    if (energy > 0 && uniform01(rng) >= std::exp2(-beta * energy)) return;

    // Accept: relink, then refresh x and every ancestor of v.
    left_[uv] = keep;
    right_[uv] = x;
    left_[ux] = other;
    right_[ux] = y;
    parent_[static_cast<std::size_t>(keep)] = v;
    parent_[static_cast<std::size_t>(y)] = x;
    store_.copy(x, scratch_);
    log2_size_[ux] = x_size;
    flops_[ux] = x_flops;
    flops_[uv] = v_flops;
    refresh(x);
    for (int node = v; node >= 0; node = parent_[static_cast<std::size_t>(node)]) refresh(node);
    const auto root = static_cast<std::size_t>(root_);
    if (beats_best(sub_flops_[root], sub_size_[root])) {
      best_flops_ = sub_flops_[root];
      best_size_ = sub_size_[root];
      best_left_ = left_;
      best_right_ = right_;
    }
  }

  const NetInfo& info_;
  const PathOptions& options_;
  int n_;
  int nodes_;  // 2n - 1: operands 0..n-1, contractions n..2n-2, the root last
  LabelStore store_;
  int scratch_;
  int root_ = 0;
  std::vector<int> left_, right_, parent_;
  std::vector<double> log2_size_, flops_;  // per node; flops_: its step's scaled cost
  std::vector<double> sub_flops_, sub_size_;  // over the subtree's contractions
  std::vector<int> best_left_, best_right_;
  double best_flops_ = 0;
  double best_size_ = 0;
};

}  // namespace

Steps treesa_steps(const NetInfo& info, const PathOptions& options, const Steps& start) {
  if (info.operands <= 2) return start;
  return best_of(info, options, start, std::max(1, options.repeats), [&](int chain) {
    // Streams 2^32 + chain: apart from random greedy's streams 1..repeats-1.
    std::mt19937_64 rng(stream_seed(options.seed, (std::uint64_t{1} << 32) + static_cast<std::uint64_t>(chain)));
    Annealer annealer(info, options, start);
    annealer.anneal(rng);
    return annealer.best_steps();
  });
}

}  // namespace tenferro::tn::path_detail
