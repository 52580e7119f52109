// Greedy contraction orders (opt_einsum's heuristic) and the random greedy built on it.
//
// Greedy: while more than one tensor remains, contract the pair, among pairs sharing a label, with
// the least score size(result) - alpha * (size(a) + size(b)) (alpha = 1: the growth of memory),
// ties broken by the smaller flops, then the lower SSA ids. When no remaining pair shares a label
// (disconnected parts), the two smallest tensors make an outer product. Sizes are exact products
// in double (exact below 2^53, rounded the same way everywhere), so the choice is deterministic.
//
// Random greedy: run 0 is the greedy itself; every other run draws alpha and a temperature from its
// own seeded stream and picks among the best kBranch candidates of each step with probabilities
// exp(-(score - best) / (T * max(1, |best|))). The best run by the objective wins (ties: the
// earlier run), so random greedy is never worse than greedy.
#include <algorithm>
#include <cmath>
#include <queue>

#include "einsum/path_internal.hpp"

namespace tenferro::tn::path_detail {

namespace {

constexpr int kBranch = 8;

struct Candidate {
  double score;
  double flops;
  int a;  // a < b
  int b;
};

/// Orders the priority queue so that top() is the least score, then flops, then ids.
struct WorseCandidate {
  bool operator()(const Candidate& x, const Candidate& y) const {
    if (x.score != y.score) return x.score > y.score;
    if (x.flops != y.flops) return x.flops > y.flops;
    if (x.a != y.a) return x.a > y.a;
    return x.b > y.b;
  }
};

class Greedy {
 public:
  Greedy(const NetInfo& info, const GreedyParams& params, std::mt19937_64* rng)
      : params_(params),
        rng_(rng),
        n_(info.operands),
        store_(info, 2 * info.operands),  // 2n - 1 tree nodes and one scratch node
        scratch_(2 * info.operands - 1),
        alive_(static_cast<std::size_t>(2 * info.operands), false),
        size_(static_cast<std::size_t>(2 * info.operands), 0),
        holders_(static_cast<std::size_t>(info.labels)) {}

  Steps run() {
    Steps steps;
    if (n_ <= 1) return steps;
    for (int t = 0; t < n_; ++t) {
      store_.set_operand(t, t);
      add_node(t);
    }
    std::vector<std::pair<int, int>> pairs;
    for (const auto& holders : holders_) {
      for (std::size_t i = 0; i < holders.size(); ++i) {
        for (std::size_t j = i + 1; j < holders.size(); ++j) pairs.emplace_back(holders[i], holders[j]);
      }
    }
    std::sort(pairs.begin(), pairs.end());
    pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
    for (const auto& [a, b] : pairs) push(a, b);

    for (int next = n_; next < 2 * n_ - 1; ++next) {
      const auto [a, b] = choose();
      steps.emplace_back(a, b);
      contract(a, b, next);
    }
    return steps;
  }

 private:
  void add_node(int node) {
    alive_[static_cast<std::size_t>(node)] = true;
    size_[static_cast<std::size_t>(node)] = store_.size(node);
    for (Label l : store_.labels(node)) holders_[static_cast<std::size_t>(l)].push_back(node);
  }

  void remove_node(int node) {
    alive_[static_cast<std::size_t>(node)] = false;
    for (Label l : store_.labels(node)) {
      auto& h = holders_[static_cast<std::size_t>(l)];
      h.erase(std::find(h.begin(), h.end(), node));
    }
  }

  void push(int a, int b) {
    if (a > b) std::swap(a, b);
    store_.merge(scratch_, a, b);
    const double removed = size_[static_cast<std::size_t>(a)] + size_[static_cast<std::size_t>(b)];
    heap_.push({store_.size(scratch_) - params_.alpha * removed, store_.size_union(a, b), a, b});
  }

  bool valid(const Candidate& c) const {
    return alive_[static_cast<std::size_t>(c.a)] && alive_[static_cast<std::size_t>(c.b)];
  }

  std::pair<int, int> choose() {
    std::vector<Candidate> best;
    const std::size_t want = params_.temperature > 0 && rng_ != nullptr ? kBranch : 1;
    while (!heap_.empty() && best.size() < want) {
      const Candidate c = heap_.top();
      heap_.pop();
      if (valid(c)) best.push_back(c);
    }
    if (best.empty()) return smallest_pair();
    std::size_t pick = 0;
    if (best.size() > 1) {
      // Boltzmann weights relative to the best score, the temperature scaled by its magnitude.
      const double scale = params_.temperature * std::max(1.0, std::abs(best[0].score));
      std::vector<double> weight(best.size());
      double total = 0;
      for (std::size_t i = 0; i < best.size(); ++i) {
        weight[i] = std::exp(-(best[i].score - best[0].score) / scale);
        total += weight[i];
      }
      double u = uniform01(*rng_) * total;
      for (pick = 0; pick + 1 < best.size(); ++pick) {
        u -= weight[pick];
        if (u < 0) break;
      }
      for (std::size_t i = 0; i < best.size(); ++i) {
        if (i != pick) heap_.push(best[i]);
      }
    }
    return {best[pick].a, best[pick].b};
  }

  /// No remaining pair shares a label: the outer product of the two smallest tensors.
  std::pair<int, int> smallest_pair() const {
    int first = -1;
    int second = -1;
    auto smaller = [&](int x, int y) {
      return size_[static_cast<std::size_t>(x)] < size_[static_cast<std::size_t>(y)];
    };
    for (int node = 0; node < 2 * n_ - 1; ++node) {
      if (!alive_[static_cast<std::size_t>(node)]) continue;
      if (first < 0 || smaller(node, first)) {
        second = first;
        first = node;
      } else if (second < 0 || smaller(node, second)) {
        second = node;
      }
    }
    return {std::min(first, second), std::max(first, second)};
  }

  void contract(int a, int b, int z) {
    store_.merge(z, a, b);
    remove_node(a);
    remove_node(b);
    add_node(z);
    std::vector<int> neighbours;
    for (Label l : store_.labels(z)) {
      for (int h : holders_[static_cast<std::size_t>(l)]) {
        if (h != z) neighbours.push_back(h);
      }
    }
    std::sort(neighbours.begin(), neighbours.end());
    neighbours.erase(std::unique(neighbours.begin(), neighbours.end()), neighbours.end());
    for (int h : neighbours) push(h, z);
  }

  GreedyParams params_;
  std::mt19937_64* rng_;
  int n_;
  LabelStore store_;
  int scratch_;
  std::vector<bool> alive_;
  std::vector<double> size_;
  std::vector<std::vector<int>> holders_;  // per label: the live nodes carrying it
  std::priority_queue<Candidate, std::vector<Candidate>, WorseCandidate> heap_;
};

}  // namespace

Steps greedy_steps(const NetInfo& info, const GreedyParams& params, std::mt19937_64* rng) {
  return Greedy(info, params, rng).run();
}

Steps random_greedy_steps(const NetInfo& info, const PathOptions& options) {
  return best_of(info, options, greedy_steps(info, {}, nullptr), options.repeats - 1, [&](int k) {
    std::mt19937_64 rng(stream_seed(options.seed, static_cast<std::uint64_t>(k + 1)));
    GreedyParams params;
    params.alpha = 0.5 + uniform01(rng);                          // [0.5, 1.5)
    params.temperature = std::exp2(-7.0 + 7.0 * uniform01(rng));  // [2^-7, 1), log-uniform
    return greedy_steps(info, params, &rng);
  });
}

}  // namespace tenferro::tn::path_detail
