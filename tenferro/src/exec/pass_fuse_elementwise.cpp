// Elementwise fusion (see passes.hpp).
//
// Grouping walks the steps in order. A one-instruction fused step X (or a full reduction) joins
// the groups of the fused producers of its operands that compute in the same dtype over the same
// element count, merging them into one group, when that creates no cycle (else the first of those
// groups that X can join alone): no path may leave the merged set and come back into it, where a
// group counts as one node, since a kernel needs all of its members' operands (FusionGroups states
// the check and why it is sound). A full reduction's result is never read inside its own group: it
// exists only after the whole loop.
//
// Each group becomes one kernel: its external operands are its inputs (a broadcast_in_dim is read
// through the kernel's input access instead of being materialized: scalar, trailing row, leading
// column, or strided for any other), values read outside the group are its outputs, and scratch
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

bool is_reduction(const Step& s) {
  return s.kind == StepKind::Fused && s.fused->code.empty() && s.fused->outputs[0].mode == OutputMode::SumAll;
}

/// The input access that reads broadcast_in_dim(operand) without materializing it: scalar, inner
/// or outer when the operand fills the trailing or leading axes, else strided (the output's axes
/// merged where the operand steps over them consistently), if at most kMaxStridedRank axes remain.
/// `dims` maps the operand's axes to those of the result, of shape `out`.
std::optional<FusedInput> broadcast_access(const std::vector<std::int64_t>& dims, const Shape& out, const TensorType& operand) {
  const std::int64_t n = operand.numel();
  const std::int64_t out_numel = numel(out);
  FusedInput in;
  if (n == 1) {
    in.access = Access::Scalar;
    return in;
  }
  const std::size_t r = operand.rank();
  bool trailing = true, leading = true;
  for (std::size_t i = 0; i < r; ++i) {
    trailing &= dims[i] == static_cast<std::int64_t>(out.size() - r + i) && operand.shape[i] == out[out.size() - r + i];
    leading &= dims[i] == static_cast<std::int64_t>(i) && operand.shape[i] == out[i];
  }
  if (trailing || leading) {
    in.access = trailing ? Access::Inner : Access::Outer;
    in.period = trailing ? n : out_numel / n;
    return in;
  }
  std::vector<std::int64_t> stride(out.size(), 0);  // the operand's stride along each output axis
  std::int64_t step = 1;
  for (std::size_t i = r; i-- > 0;) {
    if (operand.shape[i] == out[static_cast<std::size_t>(dims[i])]) stride[static_cast<std::size_t>(dims[i])] = step;
    step *= operand.shape[i];
  }
  in.access = Access::Strided;
  for (std::size_t k = 0; k < out.size(); ++k) {
    if (out[k] == 1) continue;
    if (in.rank > 0 && in.stride[in.rank - 1] == stride[k] * out[k]) {  // steps over this axis: merge
      in.extent[in.rank - 1] *= out[k];
      in.stride[in.rank - 1] = stride[k];
      continue;
    }
    if (in.rank == FusedInput::kMaxStridedRank) return std::nullopt;
    in.extent[in.rank] = out[k];
    in.stride[in.rank] = stride[k];
    ++in.rank;
  }
  return in;
}

/// Fusion groups as union-find over step indices (a step is its own group until it joins one),
/// with a topological order of the contracted graph: one node per group, an edge r -> s when a
/// member of s reads a value a member of r produces (a kernel needs all its members' operands
/// before it runs). Steps join in program order, and a step joins only groups of earlier steps.
///
/// Invariant: the contracted graph is acyclic and ord_ (over group roots) is a topological order
/// of it. Initially every step is a group and ord = step index, which holds since steps are in
/// topological order.
///
/// Cycle check (creates_cycle): merging the set S = {x} + candidate groups makes a cycle iff a
/// path leaves S and comes back, i.e. some group u outside S depends on S and S depends on u (or a
/// finished reduction in S is read inside S, which one loop cannot do). Walking backward from
/// S's outside operands finds such a u if there is one. Every group on such a path depends on S,
/// so its ord is greater than lo = min ord over S: the walk may skip any group with ord < lo
/// without missing a cycle. (Step indices are no such bound: a group whose members all come
/// before S's first step can still depend on S once one of its producers' groups has a member
/// after it, which is what an earlier version of this check got wrong.)
///
/// Keeping the order (merge): within the ord window [lo, ord(x)], let A be the groups the walk
/// visited (S's ancestors there) and R the rest. Renumbering the window's slots as A (in their
/// order), then the merged group, then R (in their order) is topological: nothing in A depends on
/// anything in R (an ancestor of A in the window is an ancestor of S, hence in A), S depends on
/// nothing in R (same reason), and order within A and within R is kept. The walk and the
/// renumbering only touch the window, so the pass stays local on long programs.
class FusionGroups {
 public:
  explicit FusionGroups(std::size_t n) : parent_(n), members_(n), ord_(n), at_ord_(n), mark_(n, 0) {
    for (std::size_t i = 0; i < n; ++i) {
      parent_[i] = i;
      members_[i] = {i};
      ord_[i] = i;
      at_ord_[i] = i;
    }
  }
  std::size_t find(std::size_t s) {
    while (parent_[s] != s) s = parent_[s] = parent_[parent_[s]];
    return s;
  }
  /// A group's members in the order they joined: its newest (largest) step last.
  const std::vector<std::size_t>& members(std::size_t root) const { return members_[root]; }

  /// Whether running step x with the groups `cand` (roots of earlier steps' groups) as one
  /// kernel needs a value that depends on that kernel. Marks the groups it walks (for merge).
  bool creates_cycle(const ExecProgram& p, const std::vector<std::size_t>& producer_index, std::size_t x,
                     const std::vector<std::size_t>& cand) {
    const std::size_t n = parent_.size();
    set_stamp_ = ++stamp_;
    walk_stamp_ = ++stamp_;
    std::vector<std::size_t> set = cand;
    set.push_back(x);
    std::size_t lo = ord_[x];
    for (std::size_t r : set) {
      mark_[r] = set_stamp_;
      lo = std::min(lo, ord_[r]);
    }
    std::vector<std::size_t> stack;
    for (std::size_t r : set) {
      for (std::size_t m : members_[r]) {
        for (auto v : p.steps[m].in) {
          const std::size_t q = producer_index[v];
          if (q == n) continue;
          if (mark_[find(q)] == set_stamp_) {
            if (is_reduction(p.steps[q])) return true;  // its sum exists only after the loop
            continue;
          }
          stack.push_back(find(q));
        }
      }
    }
    while (!stack.empty()) {
      const std::size_t r = stack.back();
      stack.pop_back();
      if (mark_[r] == set_stamp_) return true;
      if (mark_[r] == walk_stamp_ || ord_[r] < lo) continue;
      mark_[r] = walk_stamp_;
      for (std::size_t m : members_[r]) {
        for (auto v : p.steps[m].in) {
          if (producer_index[v] < n) stack.push_back(find(producer_index[v]));
        }
      }
    }
    return false;
  }

  /// Merges x with the groups `cand`; the last creates_cycle call must have been for exactly
  /// these and returned false.
  void merge(std::size_t x, const std::vector<std::size_t>& cand) {
    std::size_t lo = ord_[x];
    for (std::size_t r : cand) lo = std::min(lo, ord_[r]);
    std::vector<std::size_t> slots, ancestors, rest;
    for (std::size_t o = lo; o <= ord_[x]; ++o) {
      const std::size_t r = at_ord_[o];
      if (r == kNone) continue;
      slots.push_back(o);
      at_ord_[o] = kNone;
      if (mark_[r] == walk_stamp_) ancestors.push_back(r);
      else if (mark_[r] != set_stamp_) rest.push_back(r);
    }
    const std::size_t root = x;
    for (std::size_t r : cand) {
      parent_[r] = root;
      auto& from = members_[r];
      members_[root].insert(members_[root].end() - 1, from.begin(), from.end());  // x stays last
      from.clear();
    }
    std::size_t next = 0;
    auto place = [&](std::size_t r) {
      ord_[r] = slots[next];
      at_ord_[slots[next++]] = r;
    };
    for (std::size_t r : ancestors) place(r);
    place(root);
    for (std::size_t r : rest) place(r);
  }

 private:
  static constexpr std::size_t kNone = ~std::size_t{0};
  std::vector<std::size_t> parent_;
  std::vector<std::vector<std::size_t>> members_;
  std::vector<std::size_t> ord_;     // of a root: its position in the topological order
  std::vector<std::size_t> at_ord_;  // the root at each position, or kNone
  std::vector<std::size_t> mark_;    // stamps of the last check: set_stamp_ (S), walk_stamp_ (visited)
  std::size_t stamp_ = 0, set_stamp_ = 0, walk_stamp_ = 0;
};

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
        // A reshape keeps the row-major order (element i of the result is element i of the
        // operand), so a reshaped broadcast (an average pool's gradient) is read through the
        // broadcast just the same.
        if (b && b->kind == StepKind::Op && b->op.def->layout == Layout::Reshape) {
          const Step* r = producer_[b->in[0]];
          if (r && r->kind == StepKind::Op && r->op.def->layout == Layout::Broadcast) b = r;
        }
        if (b && b->kind == StepKind::Op && b->op.def->layout == Layout::Broadcast) {
          // A broadcast of a broadcast is one broadcast: operand axis i lands on the outer
          // result's axis dims[inner dims[i]] (a constant broadcast to a matrix and then over a
          // batch, as vmap makes them, is read as a scalar instead of from a materialized matrix).
          ValueId operand_id = b->in[0];
          std::vector<std::int64_t> dims = b->op.attrs.get<BroadcastDims>().dims;
          for (const Step* inner = producer_[operand_id];
               inner && inner->kind == StepKind::Op && inner->op.def->layout == Layout::Broadcast;
               inner = producer_[operand_id]) {
            std::vector<std::int64_t> composed;
            for (std::int64_t d : inner->op.attrs.get<BroadcastDims>().dims) composed.push_back(dims[static_cast<std::size_t>(d)]);
            dims = std::move(composed);
            operand_id = inner->in[0];
          }
          const TensorType& operand = p_.types[operand_id];
          auto a = broadcast_access(dims, b->op.out.shape, operand);
          // Never read through a broadcast of a value this kernel computes itself.
          if (a && readable_as(operand.dtype, k.dtype) && !produced.count(operand_id)) {
            source = operand_id;
            access = *a;
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
      const std::size_t arity = ins.arity;
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
      const bool sin_first = ins.fast == ElementFast::Sin;
      const OpDef* partner_def = q->fused->code[0].def;
      FusedInstr pair = ins;
      pair.fast = ElementFast::Sin;
      pair.trig = Trig::SinCosPair;
      pair.dst = sin_first ? ins.dst : other;
      pair.b = 0;
      pair.c = sin_first ? other : ins.dst;
      pair.def = sin_first ? ins.def : partner_def;
      pair.def2 = sin_first ? partner_def : ins.def;
      pair.formula = &*pair.def->formula;
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
      if (members[it->second]->fused->code[0].fast != one.code[0].fast) {
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
  auto fused = [&](std::size_t i) { return p.steps[i].kind == StepKind::Fused; };
  auto key_of = [&](std::size_t i) {
    const FusedKernel& k = *p.steps[i].fused;
    return std::pair{k.dtype, k.size};
  };
  FusionGroups g(n);
  // Candidate groups for step x, in operand order: fused producers of x's key whose value x
  // reads as an element (not a finished reduction), below the size bound.
  auto candidates = [&](std::size_t x) {
    std::vector<std::size_t> cand;
    for (auto v : p.steps[x].in) {
      const std::size_t q = producer_index[v];
      if (q == n || !fused(q) || is_reduction(p.steps[q]) || key_of(q) != key_of(x)) continue;
      const std::size_t root = g.find(q);
      if (std::find(cand.begin(), cand.end(), root) == cand.end() && g.members(root).size() < kMaxGroupSteps) {
        cand.push_back(root);
      }
    }
    return cand;
  };
  for (std::size_t x = 0; x < n; ++x) {
    if (!fused(x)) continue;
    std::vector<std::size_t> cand = candidates(x);
    // Each merge below follows a walk over exactly the groups it merges (merge reads its marks).
    bool join = false;
    if (cand.size() == 1) {
      join = !g.creates_cycle(p, producer_index, x, cand);
    } else if (cand.size() > 1) {
      join = !g.creates_cycle(p, producer_index, x, cand);
      // All of them at once would make a cycle: join the first group that alone does not.
      for (std::size_t i = 0; !join && i < cand.size(); ++i) {
        if (!g.creates_cycle(p, producer_index, x, {cand[i]})) {
          cand = {cand[i]};
          join = true;
        }
      }
    }
    if (join) g.merge(x, cand);
  }

  // Values read outside their group (or returned) become kernel outputs.
  std::vector<bool> outside(p.types.size(), false);
  for (auto v : p.outputs) outside[v] = true;
  for (std::size_t i = 0; i < n; ++i) {
    for (auto v : p.steps[i].in) {
      const std::size_t q = producer_index[v];
      if (q == n || !fused(q)) continue;
      if (!fused(i) || g.find(i) != g.find(q) || is_reduction(p.steps[q])) outside[v] = true;
    }
  }

  // New steps: one per ungrouped step and per group (at its last member), then a topological
  // order preferring original positions.
  KernelBuilder builder(p, producer);
  std::vector<Step> nodes;
  std::vector<std::size_t> position;
  std::vector<int> node_of_step(n, -1);
  for (std::size_t i = 0; i < n; ++i) {
    if (!fused(i)) {
      node_of_step[i] = static_cast<int>(nodes.size());
      nodes.push_back(p.steps[i]);
      position.push_back(i);
      continue;
    }
    const auto& mem = g.members(g.find(i));
    if (mem.back() != i) continue;  // a group's newest member is its last, and its largest
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
