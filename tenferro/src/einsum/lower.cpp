// einsum lowered to core primitives (tenferro/einsum.hpp states the scheme), and the process-wide
// cache of contraction paths.
#include <algorithm>
#include <map>
#include <mutex>
#include <sstream>
#include <stdexcept>

#include "einsum_internal.hpp"
#include "api/reduce_identity.hpp"
#include "tenferro/semiring.hpp"
#include "tenferro/ops/record.hpp"

namespace tenferro::tn::detail {

namespace {

/// The semiring's sum over `axes`: reduce_sum, or reduce_max / reduce_min for the tropical ones.
/// Over an empty axis it is the semiring's zero (semiring.hpp): the reductions' identities for
/// max-plus and min-plus, and 0 for max-times, whose entries are non-negative.
Traced semiring_sum(const Traced& x, std::vector<std::int64_t> axes, Semiring semiring) {
  switch (semiring) {
    case Semiring::Standard: return sum(x, std::move(axes));
    case Semiring::MinPlus: return tenferro::detail::min_or_identity(x, std::move(axes));
    case Semiring::MaxPlus: return tenferro::detail::max_or_identity(x, std::move(axes));
    case Semiring::MaxTimes: {
      const Traced m = tenferro::detail::max_or_identity(x, std::move(axes));
      return x.type().numel() == 0 ? full_like(m, 0.0) : m;
    }
  }
  return sum(x, std::move(axes));
}

bool contains(const std::vector<Label>& labels, Label l) {
  return std::find(labels.begin(), labels.end(), l) != labels.end();
}

/// One operand's preprocessing, as a plan that the network and the lowering both follow.
struct OperandPlan {
  std::vector<std::int64_t> squeezed;           // axes dropped by a reshape (length-1 broadcasts)
  std::vector<std::pair<std::int64_t, std::int64_t>> diagonals;  // extract_diag(axis1, axis2), in order
  std::vector<std::int64_t> summed;             // axes reduced after the diagonals
  std::vector<Label> labels;                    // the labels left, in axis order
};

/// Plans every operand's preprocessing: squeezes first, then diagonals (a repeated label keeps its
/// first axis), then sums of labels that no other operand and not the output carry.
std::vector<OperandPlan> plan_operands(const Subscripts& s, std::span<const Shape> shapes) {
  std::vector<OperandPlan> plans(s.inputs.size());
  std::vector<int> holders(s.size.size(), 0);
  for (std::size_t k = 0; k < s.inputs.size(); ++k) {
    OperandPlan& p = plans[k];
    for (std::size_t a = 0; a < s.inputs[k].size(); ++a) {
      const Label l = s.inputs[k][a];
      if (shapes[k][a] == 1 && s.size[static_cast<std::size_t>(l)] > 1) {
        p.squeezed.push_back(static_cast<std::int64_t>(a));
      } else {
        p.labels.push_back(l);
      }
    }
    for (std::size_t i = 0; i < p.labels.size(); ++i) {
      for (std::size_t j = i + 1; j < p.labels.size();) {
        if (p.labels[j] == p.labels[i]) {
          p.diagonals.emplace_back(static_cast<std::int64_t>(i), static_cast<std::int64_t>(j));
          p.labels.erase(p.labels.begin() + static_cast<std::ptrdiff_t>(j));
        } else {
          ++j;
        }
      }
    }
    for (Label l : p.labels) ++holders[static_cast<std::size_t>(l)];
  }
  for (OperandPlan& p : plans) {
    std::vector<Label> kept;
    for (std::size_t a = 0; a < p.labels.size(); ++a) {
      const Label l = p.labels[a];
      if (holders[static_cast<std::size_t>(l)] == 1 && !contains(s.output, l)) {
        p.summed.push_back(static_cast<std::int64_t>(a));
      } else {
        kept.push_back(l);
      }
    }
    p.labels = std::move(kept);
  }
  return plans;
}

Traced apply_plan(Traced x, const OperandPlan& p, Semiring semiring) {
  if (!p.squeezed.empty()) {
    Shape shape;
    for (std::size_t a = 0; a < x.rank(); ++a) {
      if (!std::binary_search(p.squeezed.begin(), p.squeezed.end(), static_cast<std::int64_t>(a))) {
        shape.push_back(x.shape()[a]);
      }
    }
    x = reshape(x, std::move(shape));
  }
  for (auto [a1, a2] : p.diagonals) x = apply(ops::extract_diag(x.type(), a1, a2), {x});
  if (!p.summed.empty()) x = semiring_sum(x, p.summed, semiring);
  return x;
}

/// A traced tensor with its labels, one per axis.
struct Labelled {
  Traced value;
  std::vector<Label> labels;
};

/// Sums the labels of `t` that are not in `keep`.
Labelled sum_unneeded(Labelled t, const std::vector<Label>& partner, const std::vector<bool>& needed,
                      Semiring semiring) {
  std::vector<std::int64_t> axes;
  std::vector<Label> kept;
  for (std::size_t a = 0; a < t.labels.size(); ++a) {
    const Label l = t.labels[a];
    if (!needed[static_cast<std::size_t>(l)] && !contains(partner, l)) {
      axes.push_back(static_cast<std::int64_t>(a));
    } else {
      kept.push_back(l);
    }
  }
  if (axes.empty()) return t;
  return {semiring_sum(t.value, std::move(axes), semiring), std::move(kept)};
}

std::int64_t position(const std::vector<Label>& labels, Label l) {
  return std::find(labels.begin(), labels.end(), l) - labels.begin();
}

/// The free labels of `x` (those `y` does not carry), in x's order.
std::vector<Label> free_of(const std::vector<Label>& x, const std::vector<Label>& y) {
  std::vector<Label> f;
  for (Label l : x) {
    if (!contains(y, l)) f.push_back(l);
  }
  return f;
}

/// One pairwise contraction: shared labels that `needed` marks are batch axes, the other shared
/// ones are contracted; the result's labels are batch, lhs free, rhs free. `final_order`, when
/// given, is the output's label order: the last step then lists its batch axes in that order and
/// takes the operand whose free labels come first in the output as lhs, so that the result needs
/// no transpose whenever one exists without it.
Labelled contract(Labelled a, Labelled b, const std::vector<bool>& needed, Semiring semiring,
                  const std::vector<Label>* final_order) {
  a = sum_unneeded(std::move(a), b.labels, needed, semiring);
  b = sum_unneeded(std::move(b), a.labels, needed, semiring);
  // Shared labels in the order of the larger operand, so that its axes keep their memory order
  // and the GEMM reads it in place (the smaller one is the one packed if any is).
  const bool a_leads = a.value.type().numel() >= b.value.type().numel();
  const std::vector<Label>& order = a_leads ? a.labels : b.labels;
  const std::vector<Label>& other = a_leads ? b.labels : a.labels;
  std::vector<Label> batch, contracted;
  for (Label l : order) {
    if (!contains(other, l)) continue;
    (needed[static_cast<std::size_t>(l)] ? batch : contracted).push_back(l);
  }
  if (final_order) {
    std::stable_sort(batch.begin(), batch.end(),
                     [&](Label x, Label y) { return position(*final_order, x) < position(*final_order, y); });
    std::vector<Label> swapped = batch;
    for (const auto* side : {&b.labels, &a.labels}) {
      for (Label l : free_of(*side, side == &b.labels ? a.labels : b.labels)) swapped.push_back(l);
    }
    if (swapped == *final_order) std::swap(a, b);
  }
  DotDims dims;
  for (Label l : batch) {
    dims.lhs_batch.push_back(position(a.labels, l));
    dims.rhs_batch.push_back(position(b.labels, l));
  }
  for (Label l : contracted) {
    dims.lhs_contract.push_back(position(a.labels, l));
    dims.rhs_contract.push_back(position(b.labels, l));
  }
  std::vector<Label> result = batch;
  for (Label l : free_of(a.labels, b.labels)) result.push_back(l);
  for (Label l : free_of(b.labels, a.labels)) result.push_back(l);
  if (semiring == Semiring::Standard) return {dot_general(a.value, b.value, std::move(dims)), std::move(result)};
  return {semiring_dot_general(a.value, b.value, semiring, std::move(dims)), std::move(result)};
}

}  // namespace

Network network_of(const Subscripts& s, std::span<const Shape> shapes) {
  Network net;
  for (OperandPlan& p : plan_operands(s, shapes)) net.inputs.push_back(std::move(p.labels));
  net.output = s.output;
  net.size = s.size;
  return net;
}

Traced lower(const Subscripts& s, std::span<const Traced> operands, const std::vector<std::pair<int, int>>& steps,
             Semiring semiring) {
  std::vector<Shape> shapes;
  for (const Traced& x : operands) shapes.push_back(x.shape());
  const std::vector<OperandPlan> plans = plan_operands(s, shapes);
  std::vector<std::optional<Labelled>> live;  // SSA ids; empty once consumed
  for (std::size_t k = 0; k < operands.size(); ++k) live.push_back(Labelled{apply_plan(operands[k], plans[k], semiring), plans[k].labels});

  std::vector<bool> in_output(s.size.size(), false);
  for (Label l : s.output) in_output[static_cast<std::size_t>(l)] = true;
  for (std::size_t step = 0; step < steps.size(); ++step) {
    const auto [i, j] = steps[step];
    Labelled a = std::move(*live[static_cast<std::size_t>(i)]);
    Labelled b = std::move(*live[static_cast<std::size_t>(j)]);
    live[static_cast<std::size_t>(i)].reset();
    live[static_cast<std::size_t>(j)].reset();
    // A label stays needed if the output or a tensor not in this step carries it.
    std::vector<bool> needed = in_output;
    for (const auto& t : live) {
      if (!t) continue;
      for (Label l : t->labels) needed[static_cast<std::size_t>(l)] = true;
    }
    const bool last = step + 1 == steps.size();
    live.emplace_back(contract(std::move(a), std::move(b), needed, semiring, last ? &s.output : nullptr));
  }
  std::optional<Labelled> last;
  for (auto& t : live) {
    if (t) last = std::move(t);
  }
  // Every label left is an output label (the others were summed on the way); order them.
  std::vector<std::int64_t> perm;
  for (Label l : s.output) perm.push_back(position(last->labels, l));
  bool identity = true;
  for (std::size_t a = 0; a < perm.size(); ++a) identity = identity && perm[a] == static_cast<std::int64_t>(a);
  return identity ? last->value : transpose(last->value, std::move(perm));
}

ContractionPath path_for(const Network& given, const Options& options) {
  // A label of size 0 makes every tensor that carries it empty, and the contraction's result is
  // zeros (or the semiring's zero) of the output's shape, whatever the order (NumPy's semantics).
  // The cost model counts sizes >= 1 only, so such labels are priced as size 1: the path is a valid
  // order, and its kernels run over the empty tensors.
  Network net = given;
  for (auto& n : net.size) n = std::max<std::int64_t>(n, 1);
  if (!options.explicit_path.empty()) {
    try {
      return evaluate_path(net, options.explicit_path);
    } catch (const std::invalid_argument& e) {
      throw ValueError(std::string("einsum: invalid explicit path: ") + e.what());
    }
  }
  std::ostringstream key;
  for (const auto& in : net.inputs) {
    for (Label l : in) key << l << ' ';
    key << ',';
  }
  key << "->";
  for (Label l : net.output) key << l << ' ';
  key << '|';
  for (auto n : net.size) key << n << ' ';
  const PathOptions& o = options.path;
  key << '|' << static_cast<int>(o.optimizer) << ' ' << static_cast<int>(o.objective) << ' ' << o.size_weight << ' '
      << (o.memory_limit ? *o.memory_limit : -1.0) << ' ' << o.repeats << ' ' << o.seed;
  static std::mutex mutex;
  static std::map<std::string, ContractionPath> cache;
  {
    std::lock_guard lock(mutex);
    if (auto it = cache.find(key.str()); it != cache.end()) return it->second;
  }
  ContractionPath path = optimize_path(net, o);  // outside the lock: a search may take seconds
  std::lock_guard lock(mutex);
  return cache.emplace(key.str(), std::move(path)).first->second;
}

}  // namespace tenferro::tn::detail
