// optimize_path: checks the network, runs the chosen optimizer (Auto picks by the operand count),
// prices the tree with the shared cost model and slices it when a memory limit is set.
//
// Auto: Optimal up to 6 operands, DP up to 14, RandomGreedy up to 40; above, RandomGreedy and then
// TreeSA started from its tree (kept only where better, so the result is the better of the two),
// with max(1, repeats / 8) chains: 4 for the default 32 repeats, which keeps 200 operands within
// seconds (einsum_path_measure.cpp).
#include <algorithm>
#include <string>

#include "einsum/path_internal.hpp"

namespace tenferro::tn {

namespace {

constexpr int kAutoOptimalMax = 6;
constexpr int kAutoDPMax = 14;
constexpr int kAutoRandomGreedyMax = 40;
constexpr int kAutoTreeSAChainDivisor = 8;

path_detail::Steps left_to_right(int n) {
  path_detail::Steps steps;
  for (int t = 1; t < n; ++t) steps.emplace_back(t == 1 ? 0 : n + t - 2, t);
  return steps;
}

path_detail::Steps find_steps(const path_detail::NetInfo& info, const PathOptions& options) {
  const int n = info.operands;
  if (n <= 1) return {};
  switch (options.optimizer) {
    case Optimizer::Auto: {
      if (n <= kAutoOptimalMax) return path_detail::optimal_steps(info, options);
      if (n <= kAutoDPMax) return path_detail::dp_steps(info, options);
      path_detail::Steps greedy = path_detail::random_greedy_steps(info, options);
      if (n <= kAutoRandomGreedyMax) return greedy;
      PathOptions annealing = options;
      annealing.repeats = std::max(1, options.repeats / kAutoTreeSAChainDivisor);
      return path_detail::treesa_steps(info, annealing, greedy);
    }
    case Optimizer::Optimal:
      return path_detail::optimal_steps(info, options);
    case Optimizer::DP:
      return path_detail::dp_steps(info, options);
    case Optimizer::Greedy:
      return path_detail::greedy_steps(info, {}, nullptr);
    case Optimizer::RandomGreedy:
      return path_detail::random_greedy_steps(info, options);
    case Optimizer::TreeSA:
      return path_detail::treesa_steps(info, options, path_detail::greedy_steps(info, {}, nullptr));
    case Optimizer::LeftToRight:
      return left_to_right(n);
  }
  return {};
}

}  // namespace

ContractionPath optimize_path(const Network& net, const PathOptions& options) {
  path_detail::check_network(net);
  const path_detail::NetInfo info(net);
  ContractionPath path;
  path.steps = find_steps(info, options);
  const path_detail::TreeCost cost = path_detail::tree_cost(info, path.steps);
  path.log2_flops = cost.log2_flops;
  path.log2_size = cost.log2_size;
  path.log2_flops_unsliced = cost.log2_flops;
  if (options.memory_limit) path = slice_path(net, std::move(path), *options.memory_limit);
  return path;
}

}  // namespace tenferro::tn
