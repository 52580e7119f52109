// The contraction-order optimizers alone (tenferro/einsum_path.hpp), one result line per run:
// log2 flops and search time of Greedy, RandomGreedy, TreeSA and Auto on random 3-regular graphs
// (bond 2, scalar output; seeds 0..2), and of Optimal and DP on random connected networks of 8
// and 14 operands. Run by `scripts/bench paths [sizes...]` (default 60 100 200).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "tenferro/einsum_path.hpp"

namespace tn = tenferro::tn;

namespace {

int draw(std::mt19937_64& rng, int k) { return static_cast<int>(rng() % static_cast<std::uint64_t>(k)); }

/// A random simple 3-regular graph on n vertices (n even): each vertex a tensor, each edge a label
/// of size `bond` on its two ends, scalar output. Pairing model, redrawn until simple.
tn::Network regular3(int n, int bond, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (;;) {
    std::vector<int> stubs;
    for (int v = 0; v < n; ++v) stubs.insert(stubs.end(), 3, v);
    for (int i = static_cast<int>(stubs.size()) - 1; i > 0; --i) std::swap(stubs[static_cast<std::size_t>(i)], stubs[static_cast<std::size_t>(draw(rng, i + 1))]);
    tn::Network net;
    net.inputs.assign(static_cast<std::size_t>(n), {});
    std::vector<std::vector<int>> adjacent(static_cast<std::size_t>(n));
    bool simple = true;
    for (std::size_t i = 0; i < stubs.size() && simple; i += 2) {
      const int a = stubs[i];
      const int b = stubs[i + 1];
      for (int c : adjacent[static_cast<std::size_t>(a)]) simple = simple && c != b;
      simple = simple && a != b;
      adjacent[static_cast<std::size_t>(a)].push_back(b);
      adjacent[static_cast<std::size_t>(b)].push_back(a);
      const auto label = static_cast<tn::Label>(net.size.size());
      net.size.push_back(bond);
      net.inputs[static_cast<std::size_t>(a)].push_back(label);
      net.inputs[static_cast<std::size_t>(b)].push_back(label);
    }
    if (simple) return net;
  }
}

/// A random connected network of n operands: a chain of labels plus extra labels on 2 or 3
/// random operands, sizes 2..8, two labels in the output.
tn::Network random_network(int n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  tn::Network net;
  net.inputs.assign(static_cast<std::size_t>(n), {});
  auto add_label = [&](std::vector<int> on) {
    const auto label = static_cast<tn::Label>(net.size.size());
    net.size.push_back(2 + draw(rng, 7));
    for (int t : on) net.inputs[static_cast<std::size_t>(t)].push_back(label);
    return label;
  };
  for (int t = 0; t + 1 < n; ++t) add_label({t, t + 1});
  for (int extra = 0; extra < n; ++extra) {
    const int a = draw(rng, n);
    int b = draw(rng, n);
    while (b == a) b = draw(rng, n);
    std::vector<int> on{a, b};
    if (draw(rng, 4) == 0) {
      int c = draw(rng, n);
      while (c == a || c == b) c = draw(rng, n);
      on.push_back(c);
    }
    add_label(on);
  }
  net.output = {add_label({draw(rng, n)}), add_label({draw(rng, n)})};
  if (net.output[0] == net.output[1]) net.output.pop_back();
  return net;
}

struct Run {
  double log2_flops;
  double seconds;
};

Run run(const tn::Network& net, tn::PathOptions options) {
  const auto start = std::chrono::steady_clock::now();
  const tn::ContractionPath path = tn::optimize_path(net, options);
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  return {path.log2_flops, took.count()};
}

tn::PathOptions with(tn::Optimizer optimizer, std::uint64_t seed) {
  tn::PathOptions options;
  options.optimizer = optimizer;
  options.seed = seed;
  return options;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(std::atoi(argv[i]));
  if (sizes.empty()) sizes = {60, 100, 200};
  auto line = [](const char* case_name, const char* impl, const std::string& size, const Run& r) {
    std::printf("case=%s impl=%s size=%s median_s=%.6g log2_flops=%.4g\n", case_name, impl, size.c_str(), r.seconds,
                r.log2_flops);
    std::fflush(stdout);
  };
  for (int n : sizes) {
    for (std::uint64_t seed = 0; seed < 3; ++seed) {
      const tn::Network net = regular3(n, 2, seed);
      const std::string size = std::to_string(n) + "x2-seed" + std::to_string(seed);
      line("path_rrg", "greedy", size, run(net, with(tn::Optimizer::Greedy, seed)));
      line("path_rrg", "random_greedy", size, run(net, with(tn::Optimizer::RandomGreedy, seed)));
      line("path_rrg", "treesa", size, run(net, with(tn::Optimizer::TreeSA, seed)));
      line("path_rrg", "auto", size, run(net, with(tn::Optimizer::Auto, seed)));
    }
  }
  for (std::uint64_t seed = 0; seed < 3; ++seed) {
    const tn::Network small = random_network(8, seed);
    const tn::Network medium = random_network(14, seed);
    const std::string s8 = "8-seed" + std::to_string(seed), s14 = "14-seed" + std::to_string(seed);
    line("path_random", "optimal", s8, run(small, with(tn::Optimizer::Optimal, seed)));
    line("path_random", "dp", s8, run(small, with(tn::Optimizer::DP, seed)));
    line("path_random", "dp", s14, run(medium, with(tn::Optimizer::DP, seed)));
    line("path_random", "greedy", s14, run(medium, with(tn::Optimizer::Greedy, seed)));
  }
  return 0;
}
