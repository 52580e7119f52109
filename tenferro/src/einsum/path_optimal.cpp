// Optimal: exhaustive depth-first search over pairwise contraction sequences with branch and bound.
//
// A state is the set of remaining tensors, each the set of operands it holds (a 64-bit mask). From
// a state every pair may be contracted, outer products included, cheapest step first so that good
// bounds come early. Two prunings keep it exact:
//   * bound: the cost so far only grows along a branch (flops add up, the largest size can only
//     rise), so a branch whose partial cost already loses to the best complete path is cut;
//   * memo: the cost of finishing depends on the state only, so a branch reaching a state that an
//     earlier branch reached at least as cheaply (for Size and Combined: no higher flops and no
//     larger size, a Pareto front per state) is cut.
// The search starts with the greedy path as the best, so its bound is useful from the first leaf.
// It returns the minimum of the objective (ties: flops, then size) over all trees; the work grows
// like the number of set partitions, practical up to about 10 operands.
#include <algorithm>
#include <cmath>
#include <string>
#include <unordered_map>

#include "einsum/path_internal.hpp"
#include "tenferro/error.hpp"

namespace tenferro::tn::path_detail {

namespace {

constexpr double kTie = 1e-12;

struct MaskListHash {
  std::size_t operator()(const std::vector<std::uint64_t>& masks) const {
    std::uint64_t h = 0x84222325cbf29ce4ULL;
    for (std::uint64_t m : masks) h = (h ^ m) * 0x100000001b3ULL + (h >> 29);
    return static_cast<std::size_t>(h);
  }
};

/// A partial or complete cost: scaled flops and the log2 of the largest intermediate.
struct Partial {
  double flops;
  double log2_size;
};

class BranchAndBound {
 public:
  BranchAndBound(const NetInfo& info, const PathOptions& options)
      : info_(info),
        options_(options),
        n_(info.operands),
        store_(info, 2 * info.operands - 1),
        mask_(static_cast<std::size_t>(2 * info.operands - 1), 0) {}

  Steps run() {
    best_steps_ = greedy_steps(info_, {}, nullptr);
    const TreeCost greedy = tree_cost(info_, best_steps_);
    best_ = {info_.scaled(greedy.log2_flops), greedy.log2_size};
    std::vector<int> live;
    for (int t = 0; t < n_; ++t) {
      store_.set_operand(t, t);
      mask_[static_cast<std::size_t>(t)] = std::uint64_t{1} << t;
      live.push_back(t);
    }
    search(live, {0.0, kNoSize}, 0);
    return best_steps_;
  }

 private:
  /// The value a partial cost has under the objective (flops in the scaled unit).
  double value(const Partial& p) const {
    switch (options_.objective) {
      case Objective::Flops:
        return p.flops;
      case Objective::Size:
        return p.log2_size;
      case Objective::Combined:
        return p.flops + std::max(0.0, options_.size_weight) * info_.scaled(p.log2_size);
    }
    return p.flops;
  }

  /// Whether a partial cost cannot lead to a complete path strictly better than the best (log2
  /// sizes within kTie are equal: the same product summed from other factors may differ in the
  /// last bit).
  bool beaten(const Partial& p) const {
    switch (options_.objective) {
      case Objective::Flops:
        return p.flops >= best_.flops;
      case Objective::Size:
        if (std::abs(p.log2_size - best_.log2_size) > kTie) return p.log2_size > best_.log2_size;
        return p.flops >= best_.flops;
      case Objective::Combined:
        return value(p) >= value(best_);
    }
    return true;
  }

  /// Records the state's cost; false when an earlier visit was at least as cheap.
  bool record(std::vector<std::uint64_t> key, const Partial& p) {
    auto& front = memo_[std::move(key)];
    const bool flops_only = options_.objective == Objective::Flops;
    for (const Partial& q : front) {
      if (q.flops <= p.flops && (flops_only || q.log2_size <= p.log2_size + kTie)) return false;
    }
    std::erase_if(front, [&](const Partial& q) {
      return p.flops <= q.flops && (flops_only || p.log2_size <= q.log2_size);
    });
    front.push_back(p);
    return true;
  }

  void search(const std::vector<int>& live, const Partial& so_far, int depth) {
    if (live.size() == 1) {
      if (!beaten(so_far)) {
        best_ = so_far;
        best_steps_ = steps_;
      }
      return;
    }
    struct Pair {
      double log2_cost;
      int a;
      int b;
    };
    std::vector<Pair> pairs;
    for (std::size_t i = 0; i < live.size(); ++i) {
      for (std::size_t j = i + 1; j < live.size(); ++j) {
        pairs.push_back({store_.log2_union(live[i], live[j]), live[i], live[j]});
      }
    }
    std::stable_sort(pairs.begin(), pairs.end(),
                     [](const Pair& x, const Pair& y) { return x.log2_cost < y.log2_cost; });
    const int z = n_ + depth;  // the SSA id of this depth's result, and its slot in the store
    std::vector<int> next;
    std::vector<std::uint64_t> key;
    for (const Pair& pair : pairs) {
      Partial p{so_far.flops + info_.scaled(pair.log2_cost), so_far.log2_size};
      if (beaten(p)) {
        // Pairs are sorted by cost: under the flops objective every later pair loses too.
        if (options_.objective == Objective::Flops) break;
        continue;
      }
      store_.merge(z, pair.a, pair.b);
      p.log2_size = std::max(p.log2_size, store_.log2_size(z));
      if (beaten(p)) continue;
      mask_[static_cast<std::size_t>(z)] =
          mask_[static_cast<std::size_t>(pair.a)] | mask_[static_cast<std::size_t>(pair.b)];
      next.clear();
      key.clear();
      for (int node : live) {
        if (node != pair.a && node != pair.b) next.push_back(node);
      }
      next.push_back(z);
      for (int node : next) key.push_back(mask_[static_cast<std::size_t>(node)]);
      std::sort(key.begin(), key.end());
      if (!record(key, p)) continue;
      steps_.emplace_back(pair.a, pair.b);
      search(next, p, depth + 1);
      steps_.pop_back();
    }
  }

  const NetInfo& info_;
  const PathOptions& options_;
  int n_;
  LabelStore store_;
  std::vector<std::uint64_t> mask_;  // per store node: the operands it holds
  Steps steps_;                      // the current branch
  Partial best_{0, 0};
  Steps best_steps_;
  std::unordered_map<std::vector<std::uint64_t>, std::vector<Partial>, MaskListHash> memo_;
};

}  // namespace

Steps optimal_steps(const NetInfo& info, const PathOptions& options) {
  if (info.operands <= 1) return {};
  if (info.operands > 64) {
    throw ValueError("einsum path: the Optimal optimizer takes at most 64 operands, got " +
                     std::to_string(info.operands));
  }
  return BranchAndBound(info, options).run();
}

}  // namespace tenferro::tn::path_detail
