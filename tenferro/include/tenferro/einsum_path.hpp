#pragma once
// Namespace tn (tensor networks): `tenferro::einsum` is the function.
// Contraction-order optimization for tensor networks (einsum's path), independent of tensors,
// dtypes and graphs: the input is a hypergraph of index labels with sizes, the output a
// contraction tree, printed with its cost.
//
//   tn::Network net;                           // "ij,jk,kl->il" with i=2, j=3, k=4, l=5
//   net.inputs = {{0, 1}, {1, 2}, {2, 3}};
//   net.output = {0, 3};
//   net.size = {2, 3, 4, 5};
//   tn::ContractionPath p = tn::optimize_path(net, {});
//   // p.steps: pairs of SSA ids; operands are 0..n-1 and step k makes id n+k.
//
// Cost model (the one every optimizer minimizes and every path reports):
//   * contracting tensors A and B costs the product of the sizes of all labels of A and B (one
//     multiply-add per element of the joint index space; summed labels and kept labels alike);
//   * a label of A or B is kept in the result when the output or any tensor not yet contracted
//     (other than A and B) carries it, and summed otherwise;
//   * flops of a path: the sum over its steps; size: the largest intermediate (elements; inputs
//     and the final result are not intermediates, but the final result counts when it is made by
//     a step); the objective is flops, size, or flops + size_weight * size (Objective::Combined).
// Labels that occur on one operand only and not in the output are summed before any contraction
// (by einsum's lowering), so a Network given here need not hold them, but optimizers accept them.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tenferro::tn {

/// An index label: a dense id in [0, size.size()).
using Label = std::int32_t;

/// A tensor network: each operand's labels (distinct within an operand), the output's labels,
/// and every label's length (>= 1).
struct Network {
  std::vector<std::vector<Label>> inputs;
  std::vector<Label> output;
  std::vector<std::int64_t> size;
};

enum class Optimizer {
  Auto,          ///< optimal up to 6 operands, dp up to 14, random-greedy up to 40 + treesa above
  Optimal,       ///< exhaustive search over contraction trees (branch and bound), small networks
                 ///< (at most 64 operands, else ValueError; ~10 is practical)
  DP,            ///< dynamic programming over operand subsets with Pfeifer et al.'s cost cap
                 ///< (2014), outer products included: exact in flops; medium (at most 64 operands)
  Greedy,        ///< pairwise greedy on the size change (opt_einsum's heuristic), deterministic
  RandomGreedy,  ///< best of `repeats` greedy runs with Boltzmann-sampled choices (seeded)
  TreeSA,        ///< simulated annealing over contraction trees (Kalachev et al. 2021), seeded
  LeftToRight,   ///< ((0 1) 2) 3 ...: what torch.einsum does without opt_einsum
};

enum class Objective { Flops, Size, Combined };

struct PathOptions {
  Optimizer optimizer = Optimizer::Auto;
  Objective objective = Objective::Flops;
  /// Weight of the size term in Objective::Combined: cost = flops + size_weight * size.
  double size_weight = 1.0;
  /// Largest intermediate allowed (elements). When the best path's intermediates exceed it, labels
  /// are sliced (fixed to each of their values in turn, the slices summed or stacked) until every
  /// intermediate of one slice fits; the extra flops are reported.
  std::optional<double> memory_limit;
  /// RandomGreedy: number of greedy runs; TreeSA: number of independent annealing chains. Auto
  /// above 40 operands: `repeats` greedy runs, then max(1, repeats / 8) chains from the best.
  int repeats = 32;
  std::uint64_t seed = 0;
};

/// A contraction tree in SSA form and its cost under the model above.
struct ContractionPath {
  /// steps[k] = (a, b): contract the tensors with SSA ids a and b into id n + k (n operands).
  std::vector<std::pair<int, int>> steps;
  double log2_flops = 0;      ///< log2 of the summed step costs of one slice times the slice count
  double log2_size = 0;       ///< log2 of the largest intermediate of one slice
  std::vector<Label> sliced;  ///< labels fixed per slice (empty: no slicing)
  double slices = 1;          ///< the number of slices (product of the sliced labels' sizes)
  /// log2 flops of the same tree unsliced (log2_flops - this is the slicing overhead).
  double log2_flops_unsliced = 0;
  /// "path: (0,1) (3,2) ... log2 flops 12.3, log2 size 8.0" plus the slicing when there is one.
  /// (With no steps, for 0 or 1 operand, the log2 fields stay 0.)
  std::string print() const;
};

/// The cost of a given tree on the network (steps in SSA form, exactly n - 1 of them for n >= 1
/// operands; std::invalid_argument if a step names an unknown or already contracted id, or if the
/// network is malformed: a label out of range or repeated within an operand, a size below 1).
ContractionPath evaluate_path(const Network& net, std::vector<std::pair<int, int>> steps);

/// Finds a contraction tree for the network with the chosen optimizer and objective, then slices
/// it to the memory limit if one is given. Optimal is exact for every objective; DP exact for
/// Flops and in the size for Size (heuristic for Combined); RandomGreedy and TreeSA keep their best
/// run by the objective (TreeSA also anneals on it); Greedy and LeftToRight ignore it.
ContractionPath optimize_path(const Network& net, const PathOptions& options);

/// Adds sliced labels to `path` (greedily, among the labels of the largest intermediates, the one
/// that lowers the peak most, then with the least extra flops) until its largest intermediate of
/// one slice is at most `limit` elements. A sliced label is removed from every tensor of a slice,
/// inputs and output included (each slice then writes its part of the output). ValueError if the
/// limit is below the largest input: inputs must fit whole.
ContractionPath slice_path(const Network& net, ContractionPath path, double limit);

}  // namespace tenferro::tn
