// The contraction-order optimizers (einsum_path.hpp) against independent references: the cost of
// small paths worked out by hand, a brute force over every contraction tree (written here, on
// operand subsets, sharing no code with the library), and the properties each optimizer promises
// (valid trees, never worse than the tree it improves on, reproducible seeds, slices that fit).
#include "tenferro/einsum_path.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <stdexcept>
#include <utility>
#include <vector>

#include "tenferro/error.hpp"

namespace tn = tenferro::tn;

namespace {

using Steps = std::vector<std::pair<int, int>>;

int draw(std::mt19937_64& rng, int k) { return static_cast<int>(rng() % static_cast<std::uint64_t>(k)); }

tn::PathOptions with(tn::Optimizer optimizer, tn::Objective objective = tn::Objective::Flops) {
  tn::PathOptions options;
  options.optimizer = optimizer;
  options.objective = objective;
  return options;
}

/// "ij,jk,kl->il" with i=2, j=3, k=4, l=5.
tn::Network matrix_chain() {
  tn::Network net;
  net.inputs = {{0, 1}, {1, 2}, {2, 3}};
  net.output = {0, 3};
  net.size = {2, 3, 4, 5};
  return net;
}

/// A random network: `labels` labels, each on 1 to 3 distinct operands (hyperedges on 3), about a
/// fifth of them in the output, sizes 2..5. With `connected`, a chain of labels links the operands.
tn::Network random_network(int n, std::uint64_t seed, bool connected) {
  std::mt19937_64 rng(seed);
  tn::Network net;
  net.inputs.assign(static_cast<std::size_t>(n), {});
  auto add = [&](std::vector<int> on) {
    const auto l = static_cast<tn::Label>(net.size.size());
    net.size.push_back(2 + draw(rng, 4));
    for (int t : on) net.inputs[static_cast<std::size_t>(t)].push_back(l);
    if (draw(rng, 5) == 0) net.output.push_back(l);
  };
  if (connected) {
    for (int t = 0; t + 1 < n; ++t) add({t, t + 1});
  }
  const int extra = 2 + draw(rng, n + 2);
  for (int e = 0; e < extra; ++e) {
    std::vector<int> on{draw(rng, n)};
    const int want = 1 + draw(rng, std::min(3, n));
    while (static_cast<int>(on.size()) < want) {
      const int t = draw(rng, n);
      if (std::find(on.begin(), on.end(), t) == on.end()) on.push_back(t);
    }
    add(on);
  }
  return net;
}

/// A random simple 3-regular graph (n even): a tensor per vertex, a label of size `bond` per edge.
tn::Network regular3(int n, int bond, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (;;) {
    std::vector<int> stubs;
    for (int v = 0; v < n; ++v) stubs.insert(stubs.end(), 3, v);
    for (int i = static_cast<int>(stubs.size()) - 1; i > 0; --i) {
      std::swap(stubs[static_cast<std::size_t>(i)], stubs[static_cast<std::size_t>(draw(rng, i + 1))]);
    }
    tn::Network net;
    net.inputs.assign(static_cast<std::size_t>(n), {});
    std::map<std::pair<int, int>, bool> seen;
    bool simple = true;
    for (std::size_t i = 0; i < stubs.size(); i += 2) {
      const int a = std::min(stubs[i], stubs[i + 1]);
      const int b = std::max(stubs[i], stubs[i + 1]);
      simple = simple && a != b && !seen[{a, b}];
      seen[{a, b}] = true;
      net.inputs[static_cast<std::size_t>(a)].push_back(static_cast<tn::Label>(net.size.size()));
      net.inputs[static_cast<std::size_t>(b)].push_back(static_cast<tn::Label>(net.size.size()));
      net.size.push_back(bond);
    }
    if (simple) return net;
  }
}

/// n - 1 steps, each naming two ids made before it, every id but the last used exactly once.
void expect_valid_tree(const Steps& steps, int n) {
  ASSERT_EQ(steps.size(), static_cast<std::size_t>(std::max(0, n - 1)));
  std::vector<int> uses(static_cast<std::size_t>(2 * n), 0);
  for (std::size_t k = 0; k < steps.size(); ++k) {
    for (int id : {steps[k].first, steps[k].second}) {
      ASSERT_GE(id, 0);
      ASSERT_LT(id, n + static_cast<int>(k)) << "step " << k;
      ++uses[static_cast<std::size_t>(id)];
    }
  }
  for (int id = 0; id < 2 * n - 2; ++id) EXPECT_EQ(uses[static_cast<std::size_t>(id)], 1) << "id " << id;
}

// ---- The reference: the cost model on operand subsets, and every tree by brute force ----------

/// The labels of the tensor holding the operands in `set`: all of an operand's own labels, or for
/// two or more operands those carried by the set and by the output or an operand outside it.
std::vector<tn::Label> labels_of(const tn::Network& net, unsigned set) {
  std::vector<tn::Label> out;
  const int n = static_cast<int>(net.inputs.size());
  for (tn::Label l = 0; l < static_cast<tn::Label>(net.size.size()); ++l) {
    bool inside = false;
    bool outside = std::find(net.output.begin(), net.output.end(), l) != net.output.end();
    for (int t = 0; t < n; ++t) {
      const auto& in = net.inputs[static_cast<std::size_t>(t)];
      if (std::find(in.begin(), in.end(), l) == in.end()) continue;
      ((set >> t) & 1U ? inside : outside) = true;
    }
    const bool single = (set & (set - 1)) == 0;
    if (inside && (single || outside)) out.push_back(l);
  }
  return out;
}

double product(const tn::Network& net, const std::vector<tn::Label>& labels) {
  double p = 1;
  for (tn::Label l : labels) p *= static_cast<double>(net.size[static_cast<std::size_t>(l)]);
  return p;
}

struct TreeValue {
  double flops;
  double size;  // largest intermediate; 0 for a lone operand
};

/// Every contraction tree over each subset: trees(S) combines trees(A) and trees(S \ A) for every
/// split with A holding S's lowest operand (so each tree comes once).
class BruteForce {
 public:
  explicit BruteForce(const tn::Network& net) : net_(net) {}

  std::vector<TreeValue> all_trees() { return trees((1U << net_.inputs.size()) - 1); }

 private:
  const std::vector<TreeValue>& trees(unsigned set) {
    auto it = memo_.find(set);
    if (it != memo_.end()) return it->second;
    std::vector<TreeValue> out;
    if ((set & (set - 1)) == 0) {
      out.push_back({0, 0});
    } else {
      const unsigned low = set & (~set + 1);
      const double size = product(net_, labels_of(net_, set));
      for (unsigned a = (set - 1) & set; a != 0; a = (a - 1) & set) {
        if ((a & low) == 0) continue;
        const unsigned b = set & ~a;
        std::vector<tn::Label> joint = labels_of(net_, a);
        for (tn::Label l : labels_of(net_, b)) {
          if (std::find(joint.begin(), joint.end(), l) == joint.end()) joint.push_back(l);
        }
        const double cost = product(net_, joint);
        const std::vector<TreeValue> left = trees(a);
        const std::vector<TreeValue>& right = trees(b);
        for (const TreeValue& x : left) {
          for (const TreeValue& y : right) {
            out.push_back({x.flops + y.flops + cost, std::max({x.size, y.size, size})});
          }
        }
      }
    }
    return memo_[set] = std::move(out);
  }

  const tn::Network& net_;
  std::map<unsigned, std::vector<TreeValue>> memo_;
};

struct Best {
  double flops;             // least flops of any tree
  double size;              // least largest intermediate of any tree
  double flops_at_size;     // least flops among the trees of least size
  double flops_plus_size;   // least flops + size
};

Best best_of(const tn::Network& net) {
  const std::vector<TreeValue> all = BruteForce(net).all_trees();
  Best b{INFINITY, INFINITY, INFINITY, INFINITY};
  for (const TreeValue& t : all) {
    b.flops = std::min(b.flops, t.flops);
    b.size = std::min(b.size, t.size);
    b.flops_plus_size = std::min(b.flops_plus_size, t.flops + t.size);
  }
  for (const TreeValue& t : all) {
    if (t.size == b.size) b.flops_at_size = std::min(b.flops_at_size, t.flops);
  }
  return b;
}

constexpr double kEps = 1e-9;

}  // namespace

// ---- (1) evaluate_path against costs worked out by hand -----------------------------------------

TEST(EvaluatePath, MatrixChainCostsByHand) {
  // ((AB)C): AB costs i*j*k = 2*3*4 = 24 and makes ik (8); (AB)C costs i*k*l = 2*4*5 = 40 and
  // makes il (10, the result, made by a step). Flops 64, size max(8, 10) = 10.
  tn::ContractionPath p = tn::evaluate_path(matrix_chain(), {{0, 1}, {3, 2}});
  EXPECT_NEAR(p.log2_flops, std::log2(24.0 + 40.0), kEps);
  EXPECT_NEAR(p.log2_size, std::log2(10.0), kEps);
  EXPECT_NEAR(p.log2_flops_unsliced, p.log2_flops, kEps);
  EXPECT_TRUE(p.sliced.empty());
  EXPECT_EQ(p.slices, 1);
  // (A(BC)): BC costs j*k*l = 60 and makes jl (15); A(BC) costs i*j*l = 30. Flops 90, size 15.
  p = tn::evaluate_path(matrix_chain(), {{1, 2}, {0, 3}});
  EXPECT_NEAR(p.log2_flops, std::log2(60.0 + 30.0), kEps);
  EXPECT_NEAR(p.log2_size, std::log2(15.0), kEps);
}

TEST(EvaluatePath, HyperedgeBatchAndLoneLabels) {
  // "i,i,i->" with i = 7: the first step keeps i (the third operand carries it): cost 7, size 7;
  // the second sums it: cost 7, a scalar.
  tn::Network hyper{{{0}, {0}, {0}}, {}, {7}};
  tn::ContractionPath p = tn::evaluate_path(hyper, {{0, 1}, {3, 2}});
  EXPECT_NEAR(p.log2_flops, std::log2(14.0), kEps);
  EXPECT_NEAR(p.log2_size, std::log2(7.0), kEps);
  // "bij,bjk->bik" with b=2, i=3, j=4, k=5: one step over b*i*j*k = 120, result b*i*k = 30.
  tn::Network batch{{{0, 1, 2}, {0, 2, 3}}, {0, 1, 3}, {2, 3, 4, 5}};
  p = tn::evaluate_path(batch, {{0, 1}});
  EXPECT_NEAR(p.log2_flops, std::log2(120.0), kEps);
  EXPECT_NEAR(p.log2_size, std::log2(30.0), kEps);
  // "ij,j->" with i=3, j=4: i is on one operand only; the step still spans i*j = 12.
  tn::Network lone{{{0, 1}, {1}}, {}, {3, 4}};
  p = tn::evaluate_path(lone, {{1, 0}});
  EXPECT_NEAR(p.log2_flops, std::log2(12.0), kEps);
  EXPECT_NEAR(p.log2_size, 0.0, kEps);
  // One operand: no steps, nothing to pay.
  p = tn::evaluate_path(tn::Network{{{0}}, {0}, {3}}, {});
  EXPECT_TRUE(p.steps.empty());
  EXPECT_EQ(p.log2_flops, 0);
}

TEST(EvaluatePath, RejectsInvalidStepsAndNetworks) {
  const tn::Network net = matrix_chain();
  EXPECT_THROW(tn::evaluate_path(net, {{0, 1}}), std::invalid_argument);                  // too few
  EXPECT_THROW(tn::evaluate_path(net, {{0, 1}, {3, 2}, {4, 0}}), std::invalid_argument);  // too many
  EXPECT_THROW(tn::evaluate_path(net, {{0, 3}, {1, 2}}), std::invalid_argument);  // 3 not made yet
  EXPECT_THROW(tn::evaluate_path(net, {{0, 1}, {0, 2}}), std::invalid_argument);  // 0 used twice
  EXPECT_THROW(tn::evaluate_path(net, {{0, 0}, {3, 2}}), std::invalid_argument);
  EXPECT_THROW(tn::evaluate_path(net, {{-1, 1}, {3, 2}}), std::invalid_argument);
  tn::Network bad = net;
  bad.inputs[1] = {1, 9};  // label out of range
  EXPECT_THROW(tn::evaluate_path(bad, {{0, 1}, {3, 2}}), std::invalid_argument);
  bad = net;
  bad.inputs[1] = {1, 1};  // repeated within an operand
  EXPECT_THROW(tn::evaluate_path(bad, {{0, 1}, {3, 2}}), std::invalid_argument);
  bad = net;
  bad.size[2] = 0;
  EXPECT_THROW(tn::evaluate_path(bad, {{0, 1}, {3, 2}}), std::invalid_argument);
}

// ---- (2) Optimal against the brute force --------------------------------------------------------

TEST(OptimalPath, MatchesBruteForceOverAllTrees) {
  int checked = 0;
  for (int n = 3; n <= 7; ++n) {
    for (std::uint64_t seed = 0; seed < (n <= 5 ? 30U : 12U); ++seed) {
      const tn::Network net = random_network(n, 1000 * n + seed, /*connected=*/seed % 3 != 0);
      const Best best = best_of(net);
      SCOPED_TRACE("n " + std::to_string(n) + " seed " + std::to_string(seed));
      const tn::ContractionPath flops = tn::optimize_path(net, with(tn::Optimizer::Optimal));
      expect_valid_tree(flops.steps, n);
      EXPECT_NEAR(flops.log2_flops, std::log2(best.flops), kEps);
      const tn::ContractionPath size =
          tn::optimize_path(net, with(tn::Optimizer::Optimal, tn::Objective::Size));
      EXPECT_NEAR(size.log2_size, std::log2(best.size), kEps);
      EXPECT_NEAR(size.log2_flops, std::log2(best.flops_at_size), kEps);
      const tn::ContractionPath combined =
          tn::optimize_path(net, with(tn::Optimizer::Optimal, tn::Objective::Combined));
      EXPECT_NEAR(std::log2(std::exp2(combined.log2_flops) + std::exp2(combined.log2_size)),
                  std::log2(best.flops_plus_size), kEps);
      ++checked;
    }
  }
  EXPECT_EQ(checked, 3 * 30 + 2 * 12);
}

// ---- (3) DP against Optimal ---------------------------------------------------------------------

TEST(DPPath, FlopsEqualOptimalOnConnectedNetworks) {
  for (int n = 2; n <= 8; ++n) {
    for (std::uint64_t seed = 0; seed < 15; ++seed) {
      const tn::Network net = random_network(n, 77 * n + seed, /*connected=*/true);
      SCOPED_TRACE("n " + std::to_string(n) + " seed " + std::to_string(seed));
      const tn::ContractionPath dp = tn::optimize_path(net, with(tn::Optimizer::DP));
      const tn::ContractionPath optimal = tn::optimize_path(net, with(tn::Optimizer::Optimal));
      expect_valid_tree(dp.steps, n);
      EXPECT_NEAR(dp.log2_flops, optimal.log2_flops, kEps);
    }
  }
}

TEST(DPPath, SizeObjectiveIsExactInTheSize) {
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    const tn::Network net = random_network(6, 500 + seed, /*connected=*/true);
    const tn::ContractionPath dp =
        tn::optimize_path(net, with(tn::Optimizer::DP, tn::Objective::Size));
    EXPECT_NEAR(dp.log2_size, std::log2(best_of(net).size), kEps) << "seed " << seed;
  }
}

TEST(DPPath, DisconnectedNetworkGivesAValidTree) {
  // Two chains and a lone vector, linked by no label.
  tn::Network net{{{0, 1}, {1, 2}, {3, 4}, {4, 5}, {6}}, {0, 2, 3, 5}, {2, 3, 4, 5, 6, 7, 8}};
  const tn::ContractionPath dp = tn::optimize_path(net, with(tn::Optimizer::DP));
  expect_valid_tree(dp.steps, 5);
  const tn::ContractionPath optimal = tn::optimize_path(net, with(tn::Optimizer::Optimal));
  EXPECT_NEAR(dp.log2_flops, optimal.log2_flops, kEps);
}

// ---- (4) Greedy and random greedy ---------------------------------------------------------------

TEST(GreedyPath, PicksTheLeastSizeChange) {
  // Chain i=2, j=3, k=4, l=5: (A,B) makes ik: 8 - (6 + 12) = -10; (B,C) makes jl: 15 - (12 + 20)
  // = -17, the least. Then (A, BC).
  const tn::ContractionPath p = tn::optimize_path(matrix_chain(), with(tn::Optimizer::Greedy));
  EXPECT_EQ(p.steps, (Steps{{1, 2}, {0, 3}}));
}

TEST(GreedyPath, RandomGreedyIsValidNeverWorseAndReproducible) {
  for (std::uint64_t seed = 0; seed < 12; ++seed) {
    const tn::Network net = seed % 2 == 0 ? regular3(30, 2, seed)
                                          : random_network(12 + static_cast<int>(seed), seed, seed % 3 == 0);
    const int n = static_cast<int>(net.inputs.size());
    SCOPED_TRACE("seed " + std::to_string(seed));
    for (tn::Objective objective : {tn::Objective::Flops, tn::Objective::Size}) {
      const tn::ContractionPath greedy = tn::optimize_path(net, with(tn::Optimizer::Greedy, objective));
      tn::PathOptions options = with(tn::Optimizer::RandomGreedy, objective);
      options.seed = seed;
      const tn::ContractionPath random = tn::optimize_path(net, options);
      expect_valid_tree(greedy.steps, n);
      expect_valid_tree(random.steps, n);
      if (objective == tn::Objective::Flops) {
        EXPECT_LE(random.log2_flops, greedy.log2_flops + kEps);
      } else {
        EXPECT_LE(random.log2_size, greedy.log2_size + kEps);
      }
      EXPECT_EQ(tn::optimize_path(net, options).steps, random.steps);
    }
  }
}

// ---- (5) TreeSA ---------------------------------------------------------------------------------

TEST(TreeSAPath, NeverWorseThanItsGreedyStart) {
  for (std::uint64_t seed = 0; seed < 6; ++seed) {
    const tn::Network net = random_network(10 + 3 * static_cast<int>(seed), 40 + seed, seed % 2 == 0);
    for (tn::Objective objective : {tn::Objective::Flops, tn::Objective::Size, tn::Objective::Combined}) {
      tn::PathOptions options = with(tn::Optimizer::TreeSA, objective);
      options.repeats = 2;
      options.seed = seed;
      const tn::ContractionPath sa = tn::optimize_path(net, options);
      const tn::ContractionPath greedy = tn::optimize_path(net, with(tn::Optimizer::Greedy, objective));
      expect_valid_tree(sa.steps, static_cast<int>(net.inputs.size()));
      switch (objective) {
        case tn::Objective::Flops:
          EXPECT_LE(sa.log2_flops, greedy.log2_flops + kEps) << "seed " << seed;
          break;
        case tn::Objective::Size:
          EXPECT_LE(sa.log2_size, greedy.log2_size + kEps) << "seed " << seed;
          break;
        case tn::Objective::Combined:
          EXPECT_LE(std::exp2(sa.log2_flops) + std::exp2(sa.log2_size),
                    (std::exp2(greedy.log2_flops) + std::exp2(greedy.log2_size)) * (1 + kEps))
              << "seed " << seed;
          break;
      }
    }
  }
}

TEST(TreeSAPath, BeatsGreedyOnARandomRegularGraph) {
  const tn::Network net = regular3(60, 2, 0);
  tn::PathOptions options = with(tn::Optimizer::TreeSA);
  options.repeats = 4;
  const tn::ContractionPath sa = tn::optimize_path(net, options);
  const tn::ContractionPath greedy = tn::optimize_path(net, with(tn::Optimizer::Greedy));
  expect_valid_tree(sa.steps, 60);
  EXPECT_LT(sa.log2_flops, greedy.log2_flops - 0.5) << sa.print() << "\n" << greedy.print();
  EXPECT_EQ(tn::optimize_path(net, options).steps, sa.steps);  // seeded: reproducible
}

// ---- Auto and the trivial cases -----------------------------------------------------------------

TEST(OptimizePath, TrivialNetworksAndLeftToRight) {
  EXPECT_TRUE(tn::optimize_path(tn::Network{}, {}).steps.empty());
  EXPECT_TRUE(tn::optimize_path(tn::Network{{{0, 1}}, {1}, {2, 3}}, {}).steps.empty());
  // Three scalars: two steps of cost 1 each (an empty index space has one element).
  const tn::ContractionPath scalars = tn::optimize_path(tn::Network{{{}, {}, {}}, {}, {}}, {});
  expect_valid_tree(scalars.steps, 3);
  EXPECT_NEAR(scalars.log2_flops, 1.0, kEps);
  EXPECT_NEAR(scalars.log2_size, 0.0, kEps);
  const tn::ContractionPath ltr = tn::optimize_path(random_network(5, 3, true), with(tn::Optimizer::LeftToRight));
  EXPECT_EQ(ltr.steps, (Steps{{0, 1}, {5, 2}, {6, 3}, {7, 4}}));
  // Auto at every tier gives a valid tree.
  for (int n : {4, 10, 24, 50}) {
    const tn::ContractionPath p = tn::optimize_path(regular3(n, 2, 9), {});
    expect_valid_tree(p.steps, n);
  }
}

// ---- (6) Slicing --------------------------------------------------------------------------------

/// Checks a sliced path against the reference: each step's result without the sliced labels fits
/// the limit, slices is the product of their sizes, and the flops are slices times the cost of one
/// slice.
void expect_sliced_fits(const tn::Network& net, const tn::ContractionPath& p, double limit) {
  const int n = static_cast<int>(net.inputs.size());
  std::vector<unsigned> set(static_cast<std::size_t>(n) + p.steps.size());
  for (int t = 0; t < n; ++t) set[static_cast<std::size_t>(t)] = 1U << t;
  auto unsliced = [&](std::vector<tn::Label> labels) {
    std::erase_if(labels, [&](tn::Label l) { return std::find(p.sliced.begin(), p.sliced.end(), l) != p.sliced.end(); });
    return labels;
  };
  double per_slice = 0;
  double largest = 0;
  for (std::size_t k = 0; k < p.steps.size(); ++k) {
    const unsigned a = set[static_cast<std::size_t>(p.steps[k].first)];
    const unsigned b = set[static_cast<std::size_t>(p.steps[k].second)];
    set[static_cast<std::size_t>(n) + k] = a | b;
    std::vector<tn::Label> joint = labels_of(net, a);
    for (tn::Label l : labels_of(net, b)) {
      if (std::find(joint.begin(), joint.end(), l) == joint.end()) joint.push_back(l);
    }
    per_slice += product(net, unsliced(joint));
    const double size = product(net, unsliced(labels_of(net, a | b)));
    EXPECT_LE(size, limit) << "step " << k;
    largest = std::max(largest, size);
  }
  double slices = 1;
  for (tn::Label l : p.sliced) slices *= static_cast<double>(net.size[static_cast<std::size_t>(l)]);
  EXPECT_EQ(p.slices, slices);
  EXPECT_NEAR(p.log2_flops, std::log2(slices * per_slice), kEps);
  EXPECT_NEAR(p.log2_size, std::log2(largest), kEps);
  EXPECT_GE(p.log2_flops, p.log2_flops_unsliced - kEps);
}

TEST(SlicePath, EveryIntermediateOfASliceFits) {
  for (std::uint64_t seed = 0; seed < 8; ++seed) {
    const tn::Network net = random_network(9, 300 + seed, true);
    const tn::ContractionPath path = tn::optimize_path(net, with(tn::Optimizer::Greedy));
    double largest_input = 1;
    for (const auto& in : net.inputs) {
      double s = 1;
      for (tn::Label l : in) s *= static_cast<double>(net.size[static_cast<std::size_t>(l)]);
      largest_input = std::max(largest_input, s);
    }
    const double limit = std::max(largest_input, std::exp2(path.log2_size - 3));
    const tn::ContractionPath sliced = tn::slice_path(net, path, limit);
    SCOPED_TRACE("seed " + std::to_string(seed) + ": " + sliced.print());
    EXPECT_EQ(sliced.steps, path.steps);
    EXPECT_NEAR(sliced.log2_flops_unsliced, path.log2_flops, kEps);
    if (path.log2_size > std::log2(limit)) {
      EXPECT_FALSE(sliced.sliced.empty());
    }
    expect_sliced_fits(net, sliced, limit);
  }
}

TEST(SlicePath, OutputLabelsMaySliceAndMemoryLimitOption) {
  // "ij,jk->ik" with i = k = 64, j = 2: the output (4096) is above the limit 256; inputs (128) fit.
  const tn::Network net{{{0, 1}, {1, 2}}, {0, 2}, {64, 2, 64}};
  tn::PathOptions options;
  options.memory_limit = 256;
  const tn::ContractionPath p = tn::optimize_path(net, options);
  EXPECT_FALSE(p.sliced.empty());
  expect_sliced_fits(net, p, 256);
  // On a regular graph, through the option.
  const tn::Network graph = regular3(24, 2, 5);
  options.memory_limit = 16;
  const tn::ContractionPath q = tn::optimize_path(graph, options);
  expect_valid_tree(q.steps, 24);
  expect_sliced_fits(graph, q, 16);
}

TEST(SlicePath, RefusesALimitBelowTheLargestInput) {
  const tn::Network net = matrix_chain();  // largest input: k*l = 20
  const tn::ContractionPath path = tn::optimize_path(net, {});
  try {
    tn::slice_path(net, path, 19);
    FAIL() << "expected ValueError";
  } catch (const tenferro::ValueError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("19"), std::string::npos) << what;
    EXPECT_NE(what.find("20"), std::string::npos) << what;
  }
  tn::PathOptions options;
  options.memory_limit = 10;
  EXPECT_THROW(tn::optimize_path(net, options), tenferro::ValueError);
  EXPECT_NO_THROW(tn::slice_path(net, path, 20));
}

// ---- (7) print ----------------------------------------------------------------------------------

TEST(PrintPath, ShowsStepsAndLog2Costs) {
  // Flops 24 + 40 = 64 = 2^6; size 10: log2 3.32.
  const tn::ContractionPath p = tn::evaluate_path(matrix_chain(), {{0, 1}, {3, 2}});
  EXPECT_EQ(p.print(), "path: (0,1) (3,2) log2 flops 6.0, log2 size 3.3");
  const tn::Network net{{{0, 1}, {1, 2}}, {0, 2}, {64, 2, 64}};
  const tn::ContractionPath sliced = tn::slice_path(net, tn::evaluate_path(net, {{0, 1}}), 256);
  const std::string text = sliced.print();
  EXPECT_NE(text.find("path: (0,1) log2 flops"), std::string::npos) << text;
  EXPECT_NE(text.find("sliced ["), std::string::npos) << text;
  EXPECT_NE(text.find("slices, log2 flops unsliced 13.0"), std::string::npos) << text;
}
