// Running independent decompositions at the same time (see passes.hpp). A LAPACK decomposition
// runs on one thread, so that its bits do not depend on the thread count; two of them that do not
// need each other (the two SVDs of a TRG step, the factorizations of independent blocks) can run
// on two threads at once with the same bits. The pass groups such steps greedily in program order
// (a step joins the first group none of whose members it depends on), then orders the steps again
// so that every group comes after what its members read: Kahn's algorithm over the data edges,
// each group one node, always taking the ready node that came first in the old order (a group
// counts as its last member). If two groups would need each other, the program is left as it was.
#include <queue>

#include "passes.hpp"

namespace tenferro::exec {

namespace {
/// Below this many elements in its first operand (about a 128 x 128 matrix) a decomposition is too
/// short for a second thread to pay for the handover.
constexpr std::int64_t kMinElements = 128 * 128;

bool candidate(const Step& s, const std::vector<TensorType>& types) {
  return s.kind == StepKind::Op && s.op.def->concurrent && !s.in.empty() && types[s.in[0]].numel() >= kMinElements;
}
}  // namespace

ExecProgram run_concurrently(ExecProgram p) {
  const std::size_t n = p.steps.size();
  std::vector<std::int64_t> producer(p.types.size(), -1);
  std::vector<std::vector<std::size_t>> readers(p.types.size());
  for (std::size_t i = 0; i < n; ++i) {
    for (ValueId v : p.steps[i].out) producer[v] = static_cast<std::int64_t>(i);
    for (ValueId v : p.steps[i].in) readers[v].push_back(i);
  }
  std::vector<std::size_t> candidates;
  for (std::size_t i = 0; i < n; ++i) {
    if (candidate(p.steps[i], p.types)) candidates.push_back(i);
  }
  if (candidates.size() < 2) return p;

  // Steps that depend on candidate c (c's descendants), one flag vector per candidate.
  auto descendants = [&](std::size_t from) {
    std::vector<char> seen(n, 0);
    std::vector<std::size_t> stack{from};
    while (!stack.empty()) {
      const std::size_t s = stack.back();
      stack.pop_back();
      for (ValueId v : p.steps[s].out) {
        for (std::size_t r : readers[v]) {
          if (!seen[r]) {
            seen[r] = 1;
            stack.push_back(r);
          }
        }
      }
    }
    return seen;
  };
  // group[i]: the group step i belongs to (or -1); groups hold members in program order.
  std::vector<std::int64_t> group(n, -1);
  std::vector<std::vector<std::size_t>> groups;
  std::vector<std::vector<char>> below;  // per group: the union of its members' descendants
  for (std::size_t c : candidates) {
    std::int64_t joined = -1;
    for (std::size_t g = 0; g < groups.size() && joined < 0; ++g) {
      if (!below[g][c]) joined = static_cast<std::int64_t>(g);  // earlier members never depend on c
    }
    const std::vector<char> mine = descendants(c);
    if (joined < 0) {
      groups.push_back({c});
      below.push_back(mine);
      group[c] = static_cast<std::int64_t>(groups.size() - 1);
      continue;
    }
    const auto g = static_cast<std::size_t>(joined);
    groups[g].push_back(c);
    for (std::size_t i = 0; i < n; ++i) below[g][i] |= mine[i];
    group[c] = joined;
  }
  bool any = false;
  for (auto& g : groups) any |= g.size() > 1;
  if (!any) return p;

  // Nodes: a step alone, or a group of two or more (keyed by its last member).
  std::vector<std::size_t> node_of(n);
  std::vector<std::vector<std::size_t>> members;  // per node, its steps
  std::vector<std::size_t> key;
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t g = group[i];
    if (g >= 0 && groups[static_cast<std::size_t>(g)].size() > 1) {
      const auto& m = groups[static_cast<std::size_t>(g)];
      if (i != m.front()) {
        node_of[i] = node_of[m.front()];
        members[node_of[i]].push_back(i);
        key[node_of[i]] = i;
        continue;
      }
    }
    node_of[i] = members.size();
    members.push_back({i});
    key.push_back(i);
  }
  const std::size_t nodes = members.size();
  std::vector<std::vector<std::size_t>> next(nodes);
  std::vector<std::size_t> waiting(nodes, 0);
  for (std::size_t i = 0; i < n; ++i) {
    for (ValueId v : p.steps[i].in) {
      if (producer[v] < 0) continue;
      const std::size_t from = node_of[static_cast<std::size_t>(producer[v])], to = node_of[i];
      if (from == to) continue;
      next[from].push_back(to);
      ++waiting[to];
    }
  }
  using Ready = std::pair<std::size_t, std::size_t>;  // (key, node)
  std::priority_queue<Ready, std::vector<Ready>, std::greater<>> ready;
  for (std::size_t v = 0; v < nodes; ++v) {
    if (waiting[v] == 0) ready.push({key[v], v});
  }
  std::vector<std::size_t> order;
  order.reserve(nodes);
  while (!ready.empty()) {
    const std::size_t v = ready.top().second;
    ready.pop();
    order.push_back(v);
    for (std::size_t w : next[v]) {
      if (--waiting[w] == 0) ready.push({key[w], w});
    }
  }
  if (order.size() != nodes) return p;  // two groups would need each other
  std::vector<Step> steps;
  steps.reserve(nodes);
  for (std::size_t v : order) {
    if (members[v].size() == 1) {
      steps.push_back(std::move(p.steps[members[v][0]]));
      continue;
    }
    Step s;
    s.kind = StepKind::Concurrent;
    auto list = std::make_shared<std::vector<Step>>();
    for (std::size_t i : members[v]) {
      s.in.insert(s.in.end(), p.steps[i].in.begin(), p.steps[i].in.end());
      s.out.insert(s.out.end(), p.steps[i].out.begin(), p.steps[i].out.end());
      list->push_back(std::move(p.steps[i]));
    }
    s.members = std::move(list);
    steps.push_back(std::move(s));
  }
  p.steps = std::move(steps);
  return p;
}

}  // namespace tenferro::exec
