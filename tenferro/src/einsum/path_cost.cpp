// The cost model of einsum_path.hpp: the network as label bitsets, the merge rule that gives a
// node's labels from its children, the cost of a tree, the objective's order, evaluate_path and
// ContractionPath::print. Every optimizer prices trees through these, so all agree on one model.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "einsum/path_internal.hpp"

namespace tenferro::tn {

namespace path_detail {

void check_network(const Network& net) {
  const auto labels = static_cast<Label>(net.size.size());
  for (std::size_t l = 0; l < net.size.size(); ++l) {
    if (net.size[l] < 1) {
      throw std::invalid_argument("einsum path: label " + std::to_string(l) + " has size " +
                                  std::to_string(net.size[l]) + " (sizes must be >= 1)");
    }
  }
  auto check_list = [&](const std::vector<Label>& list, const std::string& what) {
    std::vector<Label> sorted = list;
    std::sort(sorted.begin(), sorted.end());
    for (std::size_t i = 0; i < sorted.size(); ++i) {
      if (sorted[i] < 0 || sorted[i] >= labels) {
        throw std::invalid_argument("einsum path: " + what + " has label " +
                                    std::to_string(sorted[i]) + " outside [0, " +
                                    std::to_string(labels) + ")");
      }
      if (i > 0 && sorted[i] == sorted[i - 1]) {
        throw std::invalid_argument("einsum path: " + what + " repeats label " +
                                    std::to_string(sorted[i]));
      }
    }
  };
  for (std::size_t t = 0; t < net.inputs.size(); ++t) check_list(net.inputs[t], "operand " + std::to_string(t));
  check_list(net.output, "the output");
}

NetInfo::NetInfo(const Network& net)
    : operands(static_cast<int>(net.inputs.size())),
      labels(static_cast<int>(net.size.size())),
      words((static_cast<int>(net.size.size()) + 63) / 64),
      log2_size(net.size.size()),
      size(net.size.size()),
      pair_mask(static_cast<std::size_t>(words), 0),
      single_mask(static_cast<std::size_t>(words), 0),
      hyper_index(net.size.size(), -1),
      inputs(net.inputs) {
  std::vector<int> count(net.size.size(), 0);
  std::vector<bool> in_output(net.size.size(), false);
  for (const auto& in : net.inputs) {
    for (Label l : in) ++count[static_cast<std::size_t>(l)];
  }
  for (Label l : net.output) in_output[static_cast<std::size_t>(l)] = true;
  double total_log2 = std::log2(std::max(1.0, static_cast<double>(operands)));
  for (int l = 0; l < labels; ++l) {
    const auto ul = static_cast<std::size_t>(l);
    size[ul] = static_cast<double>(net.size[ul]);
    log2_size[ul] = std::log2(size[ul]);
    total_log2 += log2_size[ul];
    if (in_output[ul] || count[ul] == 0) continue;
    const std::uint64_t bit = std::uint64_t{1} << (l % 64);
    if (count[ul] == 1) {
      single_mask[ul / 64] |= bit;
    } else if (count[ul] == 2) {
      pair_mask[ul / 64] |= bit;
    } else {
      hyper_index[ul] = static_cast<int>(hyper_label.size());
      hyper_label.push_back(l);
      hyper_total.push_back(count[ul]);
    }
  }
  flop_shift = std::max(0.0, total_log2 - 1000.0);
}

double NetInfo::scaled(double log2_cost) const { return std::exp2(log2_cost - flop_shift); }

double NetInfo::unscaled_log2(double scaled_flops) const {
  return std::log2(scaled_flops) + flop_shift;
}

LabelStore::LabelStore(const NetInfo& info, int nodes)
    : info_(&info),
      words_(info.words),
      hypers_(static_cast<int>(info.hyper_label.size())),
      nodes_(nodes),
      bits_(static_cast<std::size_t>(nodes) * static_cast<std::size_t>(info.words), 0),
      counts_(static_cast<std::size_t>(nodes) * info.hyper_label.size(), 0) {}

int LabelStore::add() {
  bits_.resize(bits_.size() + static_cast<std::size_t>(words_), 0);
  counts_.resize(counts_.size() + static_cast<std::size_t>(hypers_), 0);
  return nodes_++;
}

void LabelStore::set_operand(int node, int operand) {
  std::uint64_t* b = bits(node);
  std::fill(b, b + words_, 0);
  int* c = counts(node);
  std::fill(c, c + hypers_, 0);
  for (Label l : info_->inputs[static_cast<std::size_t>(operand)]) {
    b[l / 64] |= std::uint64_t{1} << (l % 64);
    const int h = info_->hyper_index[static_cast<std::size_t>(l)];
    if (h >= 0) c[h] = 1;
  }
}

void LabelStore::merge(int dst, int x, int y) {
  const std::uint64_t* bx = bits(x);
  const std::uint64_t* by = bits(y);
  std::uint64_t* bz = bits(dst);
  for (int w = 0; w < words_; ++w) {
    const std::uint64_t u = bx[w] | by[w];
    const std::uint64_t summed = (bx[w] & by[w] & info_->pair_mask[static_cast<std::size_t>(w)]) |
                                 (u & info_->single_mask[static_cast<std::size_t>(w)]);
    bz[w] = u & ~summed;
  }
  if (hypers_ == 0) return;
  const int* cx = counts(x);
  const int* cy = counts(y);
  int* cz = counts(dst);
  for (int h = 0; h < hypers_; ++h) {
    cz[h] = cx[h] + cy[h];
    // Every operand carrying the label is inside the node: it is summed here.
    if (cz[h] == info_->hyper_total[static_cast<std::size_t>(h)]) {
      const Label l = info_->hyper_label[static_cast<std::size_t>(h)];
      bz[l / 64] &= ~(std::uint64_t{1} << (l % 64));
    }
  }
}

void LabelStore::copy(int dst, int src) {
  std::copy(bits(src), bits(src) + words_, bits(dst));
  std::copy(counts(src), counts(src) + hypers_, counts(dst));
}

namespace {
template <class Fn>
void for_each_bit(std::uint64_t word, int base, Fn fn) {
  while (word != 0) {
    fn(base + std::countr_zero(word));
    word &= word - 1;
  }
}
}  // namespace

double LabelStore::log2_size(int node) const {
  double sum = 0;
  const std::uint64_t* b = bits(node);
  for (int w = 0; w < words_; ++w) {
    for_each_bit(b[w], w * 64, [&](int l) { sum += info_->log2_size[static_cast<std::size_t>(l)]; });
  }
  return sum;
}

double LabelStore::log2_union(int x, int y) const {
  double sum = 0;
  const std::uint64_t* bx = bits(x);
  const std::uint64_t* by = bits(y);
  for (int w = 0; w < words_; ++w) {
    for_each_bit(bx[w] | by[w], w * 64,
                 [&](int l) { sum += info_->log2_size[static_cast<std::size_t>(l)]; });
  }
  return sum;
}

double LabelStore::size(int node) const {
  double prod = 1;
  const std::uint64_t* b = bits(node);
  for (int w = 0; w < words_; ++w) {
    for_each_bit(b[w], w * 64, [&](int l) { prod *= info_->size[static_cast<std::size_t>(l)]; });
  }
  return prod;
}

double LabelStore::size_union(int x, int y) const {
  double prod = 1;
  const std::uint64_t* bx = bits(x);
  const std::uint64_t* by = bits(y);
  for (int w = 0; w < words_; ++w) {
    for_each_bit(bx[w] | by[w], w * 64,
                 [&](int l) { prod *= info_->size[static_cast<std::size_t>(l)]; });
  }
  return prod;
}

bool LabelStore::shares(int x, int y) const {
  const std::uint64_t* bx = bits(x);
  const std::uint64_t* by = bits(y);
  for (int w = 0; w < words_; ++w) {
    if ((bx[w] & by[w]) != 0) return true;
  }
  return false;
}

std::vector<Label> LabelStore::labels(int node) const {
  std::vector<Label> out;
  const std::uint64_t* b = bits(node);
  for (int w = 0; w < words_; ++w) for_each_bit(b[w], w * 64, [&](int l) { out.push_back(l); });
  return out;
}

TreeCost tree_cost(const NetInfo& info, const Steps& steps) {
  TreeCost cost;
  if (steps.empty()) return cost;
  const int n = info.operands;
  LabelStore store(info, n + static_cast<int>(steps.size()));
  for (int t = 0; t < n; ++t) store.set_operand(t, t);
  double flops = 0;
  double size = kNoSize;
  for (std::size_t k = 0; k < steps.size(); ++k) {
    const int z = n + static_cast<int>(k);
    flops += info.scaled(store.log2_union(steps[k].first, steps[k].second));
    store.merge(z, steps[k].first, steps[k].second);
    size = std::max(size, store.log2_size(z));
  }
  cost.log2_flops = info.unscaled_log2(flops);
  cost.log2_size = size;
  return cost;
}

double objective_log2(const TreeCost& cost, const PathOptions& options) {
  switch (options.objective) {
    case Objective::Flops:
      return cost.log2_flops;
    case Objective::Size:
      return cost.log2_size;
    case Objective::Combined: {
      if (options.size_weight <= 0) return cost.log2_flops;
      const double weighted = cost.log2_size + std::log2(options.size_weight);
      const double top = std::max(cost.log2_flops, weighted);
      return top + std::log2(std::exp2(cost.log2_flops - top) + std::exp2(weighted - top));
    }
  }
  return cost.log2_flops;
}

bool better(const TreeCost& a, const TreeCost& b, const PathOptions& options) {
  // log2 values of the same tree summed in another order differ in the last bits: a difference
  // below kTie is a tie, so that "better" means better and ties fall to the next criterion.
  constexpr double kTie = 1e-12;
  const double oa = objective_log2(a, options);
  const double ob = objective_log2(b, options);
  if (std::abs(oa - ob) > kTie) return oa < ob;
  if (std::abs(a.log2_flops - b.log2_flops) > kTie) return a.log2_flops < b.log2_flops;
  return a.log2_size < b.log2_size - kTie;
}

std::uint64_t stream_seed(std::uint64_t seed, std::uint64_t stream) {
  std::uint64_t z = seed + 0x9e3779b97f4a7c15ULL * (stream + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace path_detail

ContractionPath evaluate_path(const Network& net, std::vector<std::pair<int, int>> steps) {
  path_detail::check_network(net);
  const int n = static_cast<int>(net.inputs.size());
  const std::size_t expected = n == 0 ? 0 : static_cast<std::size_t>(n - 1);
  if (steps.size() != expected) {
    throw std::invalid_argument("einsum path: " + std::to_string(steps.size()) + " steps for " +
                                std::to_string(n) + " operands (expected " +
                                std::to_string(expected) + ")");
  }
  std::vector<bool> used(static_cast<std::size_t>(n) + steps.size(), false);
  for (std::size_t k = 0; k < steps.size(); ++k) {
    const int next = n + static_cast<int>(k);
    for (int id : {steps[k].first, steps[k].second}) {
      if (id < 0 || id >= next) {
        throw std::invalid_argument("einsum path: step " + std::to_string(k) + " names id " +
                                    std::to_string(id) + ", unknown before id " +
                                    std::to_string(next));
      }
      if (used[static_cast<std::size_t>(id)]) {
        throw std::invalid_argument("einsum path: step " + std::to_string(k) + " names id " +
                                    std::to_string(id) + ", already contracted");
      }
      used[static_cast<std::size_t>(id)] = true;
    }
  }
  const path_detail::NetInfo info(net);
  const path_detail::TreeCost cost = path_detail::tree_cost(info, steps);
  ContractionPath path;
  path.steps = std::move(steps);
  path.log2_flops = cost.log2_flops;
  path.log2_size = cost.log2_size;
  path.log2_flops_unsliced = cost.log2_flops;
  return path;
}

std::string ContractionPath::print() const {
  std::string out = "path:";
  if (steps.empty()) out += " (none)";
  for (const auto& [a, b] : steps) out += " (" + std::to_string(a) + "," + std::to_string(b) + ")";
  char buf[160];
  std::snprintf(buf, sizeof buf, " log2 flops %.1f, log2 size %.1f", log2_flops, log2_size);
  out += buf;
  if (!sliced.empty()) {
    out += "; sliced [";
    for (std::size_t i = 0; i < sliced.size(); ++i) {
      out += (i == 0 ? "" : " ") + std::to_string(sliced[i]);
    }
    std::snprintf(buf, sizeof buf, "] into %.0f slices, log2 flops unsliced %.1f", slices,
                  log2_flops_unsliced);
    out += buf;
  }
  return out;
}

}  // namespace tenferro::tn
