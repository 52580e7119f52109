// Elementwise fusion (see passes.hpp).
//
// Grouping walks the steps in order. A one-instruction fused step X (or a full reduction) joins
// the groups of the fused producers of its operands that compute in the same dtype over the same
// element count, merging them into one group, when that creates no cycle (else the first of those
// groups that X can join alone): no path may leave the merged set and come back into it (creates_cycle walks back from the set's outside operands,
// treating each group as one node, since a kernel needs all of its members' operands). A full
// reduction's result is never read inside its own group: it exists only after the whole loop.
//
// Each group becomes one kernel: its external operands are its inputs (a broadcast_in_dim of a
// scalar, of a trailing row or of a leading column is read through the kernel's input access
// instead of being materialized), values read outside the group are its outputs, and scratch
// registers are reused once dead. Steps are then re-emitted in a topological order that keeps the
// original order where it can; a group runs where its last member was.
#include <algorithm>
#include <map>
#include <numeric>
#include <queue>

#include "computegraph/error.hpp"
#include "passes.hpp"

namespace tenferro::exec {

namespace {
constexpr std::size_t kMaxGroupSteps = 96;  // bounds the scratch registers of one kernel

struct Grouping {
  std::vector<int> parent;  // union-find over group ids
  std::vector<std::vector<std::size_t>> members;
  std::vector<std::size_t> last;  // of a root: the largest step index among its members
  int find(int g) {
    while (parent[static_cast<std::size_t>(g)] != g) g = parent[static_cast<std::size_t>(g)] = parent[static_cast<std::size_t>(parent[static_cast<std::size_t>(g)])];
    return g;
  }
};

bool is_reduction(const Step& s) {
  return s.kind == StepKind::Fused && s.fused->code.empty() && s.fused->outputs[0].mode == OutputMode::SumAll;
}

/// The input access that reads broadcast_in_dim(operand) without materializing it, if any.
std::optional<std::pair<Access, std::int64_t>> broadcast_access(const StdTensorOp& op, const TensorType& operand) {
  const auto& dims = op.attrs.axes;
  const Shape& out = op.out.shape;
  const std::int64_t n = operand.numel();
  if (n == 1) return std::pair{Access::Scalar, std::int64_t{1}};
  const std::size_t r = operand.rank();
  bool trailing = true, leading = true;
  for (std::size_t i = 0; i < r; ++i) {
    trailing &= dims[i] == static_cast<std::int64_t>(out.size() - r + i) && operand.shape[i] == out[out.size() - r + i];
    leading &= dims[i] == static_cast<std::int64_t>(i) && operand.shape[i] == out[i];
  }
  if (trailing) return std::pair{Access::Inner, n};
  if (leading) return std::pair{Access::Outer, op.out.numel() / n};
  return std::nullopt;
}

class KernelBuilder {
 public:
  KernelBuilder(const ExecProgram& p, const std::vector<const Step*>& producer) : p_(p), producer_(producer) {}

  /// The fused step of `members` (in program order); `outside` marks values read outside them.
  Step build(const std::vector<const Step*>& members, const std::vector<bool>& outside) {
    FusedKernel k;
    k.dtype = members.front()->fused->dtype;
    k.size = members.front()->fused->size;
    Step step;
    step.kind = StepKind::Fused;
    std::map<ValueId, std::uint16_t> reg;  // value -> register holding it
    std::map<ValueId, std::size_t> produced;
    for (std::size_t m = 0; m < members.size(); ++m) {
      for (auto v : members[m]->out) produced[v] = m;
    }
    // Inputs: external operands in order of first use.
    for (const Step* s : members) {
      for (std::size_t i = 0; i < s->in.size(); ++i) {
        ValueId v = s->in[i];
        if (produced.count(v) || reg.count(v)) continue;
        ValueId source = v;
        FusedInput access;
        const Step* b = producer_[v];
        if (b && b->kind == StepKind::Op && b->op.kind == OpKind::BroadcastInDim) {
          const TensorType& operand = p_.types[b->in[0]];
          auto a = broadcast_access(b->op, operand);
          // Never read through a broadcast of a value this kernel computes itself.
          if (a && readable_as(operand.dtype, k.dtype) && !produced.count(b->in[0])) {
            source = b->in[0];
            access = {a->first, a->second};
          }
        }
        reg[v] = static_cast<std::uint16_t>(step.in.size());
        step.in.push_back(source);
        k.inputs.push_back(access);
      }
    }
    // Last reader of each value inside the kernel, to free scratch registers. Operands of
    // reductions are summed after the block's last instruction, so their registers stay pinned.
    std::map<ValueId, std::size_t> last_read;
    for (std::size_t m = 0; m < members.size(); ++m) {
      for (auto v : members[m]->in) {
        if (last_read[v] != kPinned) last_read[v] = members[m]->fused->code.empty() ? kPinned : m;
      }
    }
    const std::vector<std::size_t> partner = sincos_partners(members);
    std::vector<std::uint16_t> free_regs;
    std::uint16_t next = static_cast<std::uint16_t>(k.inputs.size());
    auto allocate = [&] {
      if (free_regs.empty()) return next++;
      const std::uint16_t r = free_regs.back();
      free_regs.pop_back();
      return r;
    };
    // Value v now lives in register r: an output if read outside, else freed at once if unread.
    auto place = [&](ValueId v, std::uint16_t r) {
      reg[v] = r;
      if (outside[v]) {
        k.outputs.push_back({r, OutputMode::Store});
        step.out.push_back(v);
      } else if (!last_read.count(v)) {
        free_regs.push_back(r);  // read by nobody (left for dead-code elimination)
      }
    };
    for (std::size_t m = 0; m < members.size(); ++m) {
      const Step* s = members[m];
      const FusedKernel& one = *s->fused;
      if (one.code.empty()) {  // a full reduction of its operand
        k.outputs.push_back({reg.at(s->in[0]), OutputMode::SumAll});
        step.out.push_back(s->out[0]);
        continue;
      }
      FusedInstr ins = one.code[0];
      const std::size_t arity = op_info(ins.kind).arity;
      std::uint16_t ops[3] = {0, 0, 0};
      for (std::size_t i = 0; i < arity; ++i) ops[i] = reg.at(s->in[i]);
      ins.a = ops[0];
      ins.b = ops[1];
      ins.c = ops[2];
      // Operands dying here (not kept as outputs) free their scratch registers first, so the
      // result may overwrite one of them: every kernel loop reads element j before writing it.
      for (std::size_t i = 0; i < arity; ++i) release_if_dead(s->in[i], m, last_read, produced, outside, reg, free_regs);
      if (partner[m] == kDone) continue;  // computed with its partner
      ins.dst = allocate();
      if (partner[m] == kAlone) {
        k.code.push_back(ins);
        place(s->out[0], ins.dst);
        continue;
      }
      // The first of a sin and cos pair: both results now. The operand is read again by the
      // partner, so neither result register is the operand's.
      const Step* q = members[partner[m]];
      const std::uint16_t other = allocate();
      const bool sin_first = ins.kind == OpKind::Sin;
      FusedInstr pair{OpKind::Sin, CompareDir::Eq, Trig::SinCosPair, sin_first ? ins.dst : other, ins.a, 0,
                      sin_first ? other : ins.dst};
      k.code.push_back(pair);
      place(s->out[0], ins.dst);
      place(q->out[0], other);
    }
    k.register_count = next;
    step.fused = std::make_shared<const FusedKernel>(std::move(k));
    return step;
  }

 private:
  static constexpr std::size_t kAlone = ~std::size_t{0};     // computed by itself
  static constexpr std::size_t kDone = ~std::size_t{0} - 1;  // computed with an earlier partner

  /// Per member: for the first of a SinCosHalf sin and cos of one operand, the index of the
  /// other (kDone for that other), kAlone for everything else.
  static std::vector<std::size_t> sincos_partners(const std::vector<const Step*>& members) {
    std::vector<std::size_t> partner(members.size(), kAlone);
    std::map<ValueId, std::size_t> first;  // operand -> first unpaired half of sincos reading it
    for (std::size_t m = 0; m < members.size(); ++m) {
      const FusedKernel& one = *members[m]->fused;
      if (one.code.empty() || one.code[0].trig != Trig::SinCosHalf) continue;
      auto [it, fresh] = first.emplace(members[m]->in[0], m);
      if (fresh) continue;
      if (members[it->second]->fused->code[0].kind != one.code[0].kind) {
        partner[it->second] = m;
        partner[m] = kDone;
        first.erase(it);
      }
    }
    return partner;
  }

  void release_if_dead(ValueId v, std::size_t m, const std::map<ValueId, std::size_t>& last_read,
                       const std::map<ValueId, std::size_t>& produced, const std::vector<bool>& outside,
                       std::map<ValueId, std::uint16_t>& reg, std::vector<std::uint16_t>& free_regs) {
    if (!produced.count(v) || outside[v] || last_read.at(v) != m) return;
    auto it = reg.find(v);
    if (it == reg.end() || it->second == kFreed) return;
    free_regs.push_back(it->second);
    it->second = kFreed;
  }
  static constexpr std::uint16_t kFreed = 0xffff;
  static constexpr std::size_t kPinned = ~std::size_t{0};
  const ExecProgram& p_;
  const std::vector<const Step*>& producer_;
};
}  // namespace

ExecProgram fuse_elementwise(ExecProgram p) {
  const std::size_t n = p.steps.size();
  std::vector<const Step*> producer(p.types.size(), nullptr);
  std::vector<std::size_t> producer_index(p.types.size(), n);
  for (std::size_t i = 0; i < n; ++i) {
    for (auto v : p.steps[i].out) {
      producer[v] = &p.steps[i];
      producer_index[v] = i;
    }
  }
  Grouping g;
  std::vector<int> group(n, -1);
  auto key_of = [&](std::size_t i) {
    const FusedKernel& k = *p.steps[i].fused;
    return std::pair{k.dtype, k.size};
  };
  // Whether running the groups `cand` and step x as one kernel would need a value that depends on
  // the kernel itself: a path that leaves the merged set and comes back, found by a backward walk
  // from the set's outside operands in which a group counts as one node (it runs as one kernel,
  // so it needs every member's operands). A finished sum read inside the set counts too.
  // Steps are in topological order, so a node (a step, or a group as a whole) whose last step
  // comes before the set's first cannot depend on the set: the walk stops there, which keeps it
  // local instead of revisiting the whole program behind a long chain of kernels.
  std::vector<std::size_t> seen(n, 0);
  std::size_t walk = 0;
  auto creates_cycle = [&](std::size_t x, const std::vector<int>& cand) {
    auto in_set = [&](std::size_t q) {
      return q == x || (group[q] >= 0 && std::find(cand.begin(), cand.end(), g.find(group[q])) != cand.end());
    };
    ++walk;
    std::vector<std::size_t> stack;
    auto push_operands = [&](std::size_t step) {
      for (auto v : p.steps[step].in) {
        if (producer_index[v] < n) stack.push_back(producer_index[v]);
      }
    };
    std::vector<std::size_t> set_steps = {x};
    for (int c : cand) {
      const auto& mem = g.members[static_cast<std::size_t>(c)];
      set_steps.insert(set_steps.end(), mem.begin(), mem.end());
    }
    const std::size_t first = *std::min_element(set_steps.begin(), set_steps.end());
    auto before_set = [&](std::size_t q) {
      return (group[q] < 0 ? q : g.last[static_cast<std::size_t>(g.find(group[q]))]) < first;
    };
    for (std::size_t m : set_steps) {
      for (auto v : p.steps[m].in) {
        const std::size_t q = producer_index[v];
        if (q == n) continue;
        if (in_set(q)) {
          if (is_reduction(p.steps[q])) return true;
          continue;
        }
        stack.push_back(q);
      }
    }
    while (!stack.empty()) {
      const std::size_t q = stack.back();
      stack.pop_back();
      if (seen[q] == walk || before_set(q)) continue;
      seen[q] = walk;
      if (in_set(q)) return true;
      if (group[q] >= 0) {
        for (std::size_t mm : g.members[static_cast<std::size_t>(g.find(group[q]))]) {
          seen[mm] = walk;
          push_operands(mm);
        }
      } else {
        push_operands(q);
      }
    }
    return false;
  };
  for (std::size_t x = 0; x < n; ++x) {
    const Step& s = p.steps[x];
    if (s.kind != StepKind::Fused) continue;
    // Candidate groups: fused producers of the same key whose value is read as an element (not a
    // finished reduction).
    std::vector<int> cand;
    for (auto v : s.in) {
      const std::size_t q = producer_index[v];
      if (q == n || group[q] < 0 || is_reduction(p.steps[q]) || key_of(q) != key_of(x)) continue;
      const int id = g.find(group[q]);
      if (std::find(cand.begin(), cand.end(), id) == cand.end() &&
          g.members[static_cast<std::size_t>(id)].size() < kMaxGroupSteps) {
        cand.push_back(id);
      }
    }
    if (cand.size() > 1 && creates_cycle(x, cand)) {
      // All of them at once would make a cycle: join the first group that alone does not.
      std::vector<int> single;
      for (int c : cand) {
        if (!creates_cycle(x, {c})) {
          single = {c};
          break;
        }
      }
      cand = std::move(single);
    }
    int id;
    if (!cand.empty() && !creates_cycle(x, cand)) {
      id = cand[0];
      for (std::size_t c = 1; c < cand.size(); ++c) {
        auto& from = g.members[static_cast<std::size_t>(cand[c])];
        auto& to = g.members[static_cast<std::size_t>(id)];
        to.insert(to.end(), from.begin(), from.end());
        from.clear();
        g.last[static_cast<std::size_t>(id)] =
            std::max(g.last[static_cast<std::size_t>(id)], g.last[static_cast<std::size_t>(cand[c])]);
        g.parent[static_cast<std::size_t>(cand[c])] = id;
      }
    } else {
      id = static_cast<int>(g.parent.size());
      g.parent.push_back(id);
      g.members.emplace_back();
      g.last.push_back(x);
    }
    g.members[static_cast<std::size_t>(id)].push_back(x);
    g.last[static_cast<std::size_t>(id)] = x;  // x follows every member
    group[x] = id;
  }

  // Values read outside their group (or returned) become kernel outputs.
  std::vector<bool> outside(p.types.size(), false);
  for (auto v : p.outputs) outside[v] = true;
  for (std::size_t i = 0; i < n; ++i) {
    for (auto v : p.steps[i].in) {
      const std::size_t q = producer_index[v];
      if (q == n || group[q] < 0) continue;
      if (group[i] < 0 || g.find(group[i]) != g.find(group[q]) || is_reduction(p.steps[q])) outside[v] = true;
    }
  }

  // New steps: one per ungrouped step and per group (at its last member), then a topological
  // order preferring original positions.
  KernelBuilder builder(p, producer);
  std::vector<Step> nodes;
  std::vector<std::size_t> position;
  std::vector<int> node_of_step(n, -1);
  for (std::size_t i = 0; i < n; ++i) {
    if (group[i] < 0) {
      node_of_step[i] = static_cast<int>(nodes.size());
      nodes.push_back(p.steps[i]);
      position.push_back(i);
      continue;
    }
    const auto& mem = g.members[static_cast<std::size_t>(g.find(group[i]))];
    if (mem.back() != i) continue;
    std::vector<std::size_t> sorted = mem;
    std::sort(sorted.begin(), sorted.end());
    std::vector<const Step*> steps;
    for (auto m : sorted) steps.push_back(&p.steps[m]);
    const int node = static_cast<int>(nodes.size());
    for (auto m : sorted) node_of_step[m] = node;
    nodes.push_back(builder.build(steps, outside));
    position.push_back(i);
  }
  // Kahn's algorithm over value edges, smallest original position first.
  std::vector<int> node_of_value(p.types.size(), -1);
  for (std::size_t k = 0; k < nodes.size(); ++k) {
    for (auto v : nodes[k].out) node_of_value[v] = static_cast<int>(k);
  }
  std::vector<std::vector<std::size_t>> users(nodes.size());
  std::vector<std::size_t> pending(nodes.size(), 0);
  for (std::size_t k = 0; k < nodes.size(); ++k) {
    std::vector<int> deps;
    for (auto v : nodes[k].in) {
      if (node_of_value[v] >= 0) deps.push_back(node_of_value[v]);
    }
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    for (int d : deps) users[static_cast<std::size_t>(d)].push_back(k);
    pending[k] = deps.size();
  }
  using Item = std::pair<std::size_t, std::size_t>;  // (position, node)
  std::priority_queue<Item, std::vector<Item>, std::greater<>> ready;
  for (std::size_t k = 0; k < nodes.size(); ++k) {
    if (pending[k] == 0) ready.push({position[k], k});
  }
  std::vector<Step> ordered;
  while (!ready.empty()) {
    const std::size_t k = ready.top().second;
    ready.pop();
    for (auto u : users[k]) {
      if (--pending[u] == 0) ready.push({position[u], u});
    }
    ordered.push_back(std::move(nodes[k]));
  }
  if (ordered.size() != nodes.size()) {
    throw computegraph::GraphError("fuse_elementwise: internal error: the fused steps form a cycle in\n" +
                                   to_string(p));
  }
  p.steps = std::move(ordered);
  return p;
}

}  // namespace tenferro::exec
