#pragma once
// Internals shared by the contraction-order optimizers (einsum_path.hpp): the network digested
// into label bitsets (NetInfo), a store of the label sets of tree nodes with the merge rule of the
// cost model (LabelStore), the cost of a tree in SSA steps, the objective's order, and the
// optimizers' entry points, which return bare steps (optimize_path prices and slices them).
//
// The key fact every optimizer relies on: the labels of a node of a contraction tree depend only on
// its set of leaves S (a label of S is kept iff the output or an operand outside S carries it),
// never on the order of the other contractions. So each node's labels come from its two children
// alone (merge), a tree's cost is the sum over its nodes, and a local change of the tree changes
// the labels of the changed nodes only.
#include <cstdint>
#include <limits>
#include <random>
#include <utility>
#include <vector>

#include "tenferro/einsum_path.hpp"

namespace tenferro::tn::path_detail {

using Steps = std::vector<std::pair<int, int>>;

inline constexpr double kNoSize = -std::numeric_limits<double>::infinity();

/// std::invalid_argument unless labels are in range and distinct per operand and sizes >= 1.
void check_network(const Network& net);

/// The network as label bitsets. Labels fall in four classes for the merge rule: kept (in the
/// output), pair (on exactly two operands: summed when both children carry it), single (on one
/// operand: summed at its first contraction) and hyper (on three or more: counted per node).
struct NetInfo {
  explicit NetInfo(const Network& net);

  int operands = 0;
  int labels = 0;
  int words = 0;                   ///< 64-bit words per label set
  std::vector<double> log2_size;   ///< per label
  std::vector<double> size;        ///< per label
  std::vector<std::uint64_t> pair_mask;
  std::vector<std::uint64_t> single_mask;
  std::vector<Label> hyper_label;  ///< hyper labels (not in the output), dense index h
  std::vector<int> hyper_total;    ///< operands carrying hyper_label[h]
  std::vector<int> hyper_index;    ///< per label: h, or -1
  std::vector<std::vector<Label>> inputs;
  /// Flops are carried as doubles scaled by 2^-flop_shift so that no sum of costs overflows (the
  /// shift is 0 unless the product of all label sizes times n passes 2^1000).
  double flop_shift = 0;

  /// exp2(log2_cost - flop_shift): a step's cost as a scaled double.
  double scaled(double log2_cost) const;
  /// log2 of a scaled flop count.
  double unscaled_log2(double scaled_flops) const;
};

/// The label sets of tree nodes, flat (words bits and one count per hyper label per node).
class LabelStore {
 public:
  LabelStore(const NetInfo& info, int nodes);

  /// Appends an empty node and returns its index.
  int add();
  void set_operand(int node, int operand);
  /// dst := the labels of contracting x and y (dst distinct from both).
  void merge(int dst, int x, int y);
  void copy(int dst, int src);
  double log2_size(int node) const;
  /// log2 of the product of the sizes of the labels of x or y: the cost of contracting them.
  double log2_union(int x, int y) const;
  /// The exact product of the label sizes as a double (exact below 2^53; deterministic order).
  double size(int node) const;
  double size_union(int x, int y) const;
  /// Whether x and y carry a common label (their contraction is not an outer product).
  bool shares(int x, int y) const;
  /// The node's labels in increasing order.
  std::vector<Label> labels(int node) const;

 private:
  // data() + offset, not &v[offset]: with no labels (or no hyper labels) the vectors are empty.
  const std::uint64_t* bits(int node) const { return bits_.data() + offset(node, words_); }
  std::uint64_t* bits(int node) { return bits_.data() + offset(node, words_); }
  const int* counts(int node) const { return counts_.data() + offset(node, hypers_); }
  int* counts(int node) { return counts_.data() + offset(node, hypers_); }
  static std::size_t offset(int node, int stride) {
    return static_cast<std::size_t>(node) * static_cast<std::size_t>(stride);
  }

  const NetInfo* info_;
  int words_;
  int hypers_;
  int nodes_;
  std::vector<std::uint64_t> bits_;
  std::vector<int> counts_;
};

/// A tree's cost: log2 flops (sum over steps) and log2 of the largest step result.
struct TreeCost {
  double log2_flops = 0;
  double log2_size = 0;
};

/// The cost of steps that form a valid tree (not checked). No steps: zeros.
TreeCost tree_cost(const NetInfo& info, const Steps& steps);

/// The objective as one number to minimize: log2 flops, log2 size, or log2(flops + w * size).
double objective_log2(const TreeCost& cost, const PathOptions& options);
/// Whether a is strictly better than b: by the objective, ties broken by flops then size.
bool better(const TreeCost& a, const TreeCost& b, const PathOptions& options);

/// The best by the objective among `start` and make(k) for k in [0, count) (the first kept at
/// ties): the loop of the seeded multi-run optimizers (random greedy, TreeSA's chains).
template <class Make>
Steps best_of(const NetInfo& info, const PathOptions& options, Steps start, int count, Make make) {
  Steps best = std::move(start);
  TreeCost best_cost = tree_cost(info, best);
  for (int k = 0; k < count; ++k) {
    Steps steps = make(k);
    const TreeCost cost = tree_cost(info, steps);
    if (better(cost, best_cost, options)) {
      best = std::move(steps);
      best_cost = cost;
    }
  }
  return best;
}

/// A uniform double in [0, 1) from the raw 64 bits (std distributions are not portable).
inline double uniform01(std::mt19937_64& rng) {
  return static_cast<double>(rng() >> 11) * 0x1.0p-53;
}
/// A uniform integer in [0, k) (the modulo bias is below 2^-50 for the k used here).
inline int uniform_int(std::mt19937_64& rng, int k) {
  return static_cast<int>(rng() % static_cast<std::uint64_t>(k));
}
/// A seed for stream `stream` of a run seeded with `seed` (splitmix64 mixing).
std::uint64_t stream_seed(std::uint64_t seed, std::uint64_t stream);

/// Greedy (path_greedy.cpp). alpha scales the removed sizes in the score size(r) - alpha *
/// (size(a) + size(b)); temperature 0 is deterministic, above it choices among the best few
/// candidates are Boltzmann-sampled with rng.
struct GreedyParams {
  double alpha = 1.0;
  double temperature = 0.0;
};
Steps greedy_steps(const NetInfo& info, const GreedyParams& params, std::mt19937_64* rng);
/// Best of options.repeats greedy runs by the objective; run 0 is the deterministic greedy.
Steps random_greedy_steps(const NetInfo& info, const PathOptions& options);

/// Exhaustive branch and bound (path_optimal.cpp); at most 64 operands.
Steps optimal_steps(const NetInfo& info, const PathOptions& options);
/// Dynamic programming over subsets (path_dp.cpp); at most 64 operands.
Steps dp_steps(const NetInfo& info, const PathOptions& options);
/// Simulated annealing over trees from `start` (path_treesa.cpp); options.repeats chains.
Steps treesa_steps(const NetInfo& info, const PathOptions& options, const Steps& start);

}  // namespace tenferro::tn::path_detail
