#pragma once
// Vertex elimination on a Jacobian graph: cross-country accumulation of a Jacobian (docs/
// tenferro.md, "Cross-country Jacobians"; Griewank and Walther, Evaluating Derivatives, ch. 9).
//
// The graph's vertices are the linear values of a linearized program, the independent (x's
// tangent) first and in topological order; an edge u -> v carries the local Jacobian dv/du, with
// u and v flattened row-major (v of m elements, u of n). Eliminating an intermediate vertex v
// replaces every path u -> v -> w by the product J_wv J_vu, added to the edge u -> w, and drops v.
// When only the independent and the dependent are left, the edge between them is the Jacobian.
// Every order of elimination gives the same Jacobian up to rounding; orders differ in cost, which
// the graph predicts from the edges' kinds and the vertices' sizes. Forward elimination (in
// topological order) costs what forward mode costs; reverse elimination what reverse mode costs;
// between them lie orders that neither extreme reaches.
//
// Edges are kept structured: scale * I for a reshape or an addition, diag(d) for an elementwise
// op, a dense m x n matrix otherwise. The graph is generic in what an edge's value is (Algebra
// below): the cost model runs it on no values at all, the trace-time accumulation
// (cross_country.cpp) on recorded tensors.
//
// Cost unit: one element operation (a multiply or an add of one element; one multiply-add of a
// matrix product), plus kOpCost for every operation an elimination records.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <stdexcept>
#include <vector>

#include "tenferro/jacobian.hpp"

namespace tenferro::sparse {

/// The fixed cost of one recorded operation, in element operations: what a small operation costs
/// besides its elements (dispatch, a result buffer, a kernel call), about 0.2-0.3 us on this
/// project's reference machine against about 1 ns per element. It makes many small products
/// dearer than one larger one.
inline constexpr double kOpCost = 256;

enum class EdgeKind : std::uint8_t {
  Identity,  ///< scale * I (m == n): a reshape, an addition, a negation
  Diagonal,  ///< diag(d), d of m elements (m == n): an elementwise op
  Dense,     ///< an m x n matrix
};

template <class P>
struct Edge {
  EdgeKind kind = EdgeKind::Dense;
  double scale = 1;  ///< Identity only
  P value{};         ///< Diagonal: [m]; Dense: [m, n]; unused for Identity
};

/// The kind of J_wv J_vu and its cost (w of m elements, v of k, u of n).
inline EdgeKind product_kind(EdgeKind b, EdgeKind a) {
  if (b == EdgeKind::Identity) return a;
  if (a == EdgeKind::Identity) return b;
  return b == EdgeKind::Diagonal && a == EdgeKind::Diagonal ? EdgeKind::Diagonal : EdgeKind::Dense;
}
inline double product_cost(EdgeKind b, double b_scale, EdgeKind a, double a_scale, double m, double k, double n) {
  if (b == EdgeKind::Identity && a == EdgeKind::Identity) return 0;
  if (b == EdgeKind::Identity) return b_scale == 1 ? 0 : kOpCost + (a == EdgeKind::Dense ? m * n : m);
  if (a == EdgeKind::Identity) return a_scale == 1 ? 0 : kOpCost + (b == EdgeKind::Dense ? m * n : m);
  if (b == EdgeKind::Diagonal && a == EdgeKind::Diagonal) return kOpCost + m;
  if (b == EdgeKind::Dense && a == EdgeKind::Dense) return kOpCost + m * k * n;
  return kOpCost + m * n;  // a row or a column scaling
}
/// The kind of the sum of two edges between the same vertices (m x n), and its cost.
inline EdgeKind sum_kind(EdgeKind a, EdgeKind b) { return std::max(a, b); }
inline double sum_cost(EdgeKind a, EdgeKind b, double m, double n) {
  const EdgeKind k = sum_kind(a, b);
  return k == EdgeKind::Identity ? 0 : kOpCost + (k == EdgeKind::Diagonal ? m : m * n);
}

/// What a candidate step of a cheapest-first order costs now: its products' element operations
/// and, to break ties, its fill (the elements of the edges its products make), smaller first: a
/// step that leaves small edges behind makes later products cheaper.
struct StepCost {
  double cost = 0;
  double fill = 0;
  void add(EdgeKind b, double b_scale, EdgeKind a, double a_scale, double m, double k, double n) {
    cost += product_cost(b, b_scale, a, a_scale, m, k, n);
    const EdgeKind p = product_kind(b, a);
    fill += p == EdgeKind::Dense ? m * n : p == EdgeKind::Diagonal ? m : 0;
  }
  bool operator<(const StepCost& o) const { return cost < o.cost || (cost == o.cost && fill < o.fill); }
};

/// What eliminations compute on edge values. The cost model's algebra: values of no type.
struct NoValues {
  struct Value {};
  Value product(const Edge<Value>&, const Edge<Value>&, EdgeKind, std::int64_t, std::int64_t, std::int64_t) { return {}; }
  Value sum(const Edge<Value>&, const Edge<Value>&, EdgeKind, std::int64_t, std::int64_t) { return {}; }
};

/// A Jacobian graph with edge values P. Algebra (NoValues, cross_country.cpp's) has
///   P product(const Edge<P>& b, const Edge<P>& a, EdgeKind result, m, k, n)  // J_wv J_vu
///   P sum(const Edge<P>& a, const Edge<P>& b, EdgeKind result, m, n)
/// called only where the result is Diagonal or Dense (an Identity result needs no value).
template <class P>
class JacobianGraph {
 public:
  using Value = P;

  int add_vertex(std::int64_t size) {
    size_.push_back(size);
    out_.emplace_back();
    in_.emplace_back();
    return static_cast<int>(size_.size()) - 1;
  }
  std::size_t vertex_count() const { return size_.size(); }
  std::int64_t size(int v) const { return size_[static_cast<std::size_t>(v)]; }
  const std::map<int, Edge<P>>& out_edges(int v) const { return out_[static_cast<std::size_t>(v)]; }
  const std::set<int>& in_edges(int v) const { return in_[static_cast<std::size_t>(v)]; }
  std::size_t edge_count() const {
    std::size_t count = 0;
    for (const auto& o : out_) count += o.size();
    return count;
  }

  /// Adds `e` to the edge from -> to (a sum if there is one); returns the cost of the sum.
  template <class Algebra>
  double add_edge(int from, int to, Edge<P> e, Algebra& algebra) {
    auto& out = out_[static_cast<std::size_t>(from)];
    auto it = out.find(to);
    if (it == out.end()) {
      out.emplace(to, std::move(e));
      in_[static_cast<std::size_t>(to)].insert(from);
      return 0;
    }
    Edge<P>& old = it->second;
    const double m = static_cast<double>(size(to)), n = static_cast<double>(size(from));
    const double cost = sum_cost(old.kind, e.kind, m, n);
    Edge<P> sum{sum_kind(old.kind, e.kind), 1, {}};
    if (sum.kind == EdgeKind::Identity) {
      sum.scale = old.scale + e.scale;
    } else {
      sum.value = algebra.sum(old, e, sum.kind, size(to), size(from));
    }
    old = std::move(sum);
    return cost;
  }

  /// The cost of eliminating v now, counting its products (not the sums with edges already
  /// there, which depend on the rest of the graph).
  StepCost product_costs(int v) const {
    StepCost cost;
    for (const int u : in_edges(v)) {
      const Edge<P>& a = out_edges(u).at(v);
      for (const auto& [w, b] : out_edges(v)) cost.add(b.kind, b.scale, a.kind, a.scale, dsize(w), dsize(v), dsize(u));
    }
    return cost;
  }

  /// Eliminates v (every product, added to the edges it fills); returns the cost.
  template <class Algebra>
  double eliminate(int v, Algebra& algebra) {
    double cost = 0;
    const std::set<int> preds = in_edges(v);
    std::map<int, Edge<P>> succs = std::move(out_[static_cast<std::size_t>(v)]);
    out_[static_cast<std::size_t>(v)].clear();
    for (const auto& [w, b] : succs) in_[static_cast<std::size_t>(w)].erase(v);
    for (const int u : preds) {
      auto& u_out = out_[static_cast<std::size_t>(u)];
      const Edge<P> a = std::move(u_out.at(v));
      u_out.erase(v);
      for (const auto& [w, b] : succs) cost += add_product(u, v, w, b, a, algebra);
    }
    in_[static_cast<std::size_t>(v)].clear();
    return cost;
  }

  /// Front-eliminates the edge u -> v (v an intermediate): for every successor w of v, J_wv J_vu
  /// is added to u -> w, and the edge is dropped. A v left without predecessors carries nothing
  /// any more and loses its out-edges. Eliminating every in-edge of v so eliminates v.
  template <class Algebra>
  double front_eliminate(int u, int v, Algebra& algebra) {
    auto& u_out = out_[static_cast<std::size_t>(u)];
    const Edge<P> a = std::move(u_out.at(v));
    u_out.erase(v);
    in_[static_cast<std::size_t>(v)].erase(u);
    double cost = 0;
    for (const auto& [w, b] : out_[static_cast<std::size_t>(v)]) cost += add_product(u, v, w, b, a, algebra);
    if (in_[static_cast<std::size_t>(v)].empty()) drop_out_edges(v);
    return cost;
  }
  /// Back-eliminates the edge v -> w (v an intermediate): for every predecessor u of v, J_wv J_vu
  /// is added to u -> w, and the edge is dropped; a v left without successors loses its in-edges.
  template <class Algebra>
  double back_eliminate(int v, int w, Algebra& algebra) {
    auto& v_out = out_[static_cast<std::size_t>(v)];
    const Edge<P> b = std::move(v_out.at(w));
    v_out.erase(w);
    in_[static_cast<std::size_t>(w)].erase(v);
    double cost = 0;
    for (const int u : in_[static_cast<std::size_t>(v)]) cost += add_product(u, v, w, b, out_edges(u).at(v), algebra);
    if (v_out.empty()) {
      for (const int u : in_[static_cast<std::size_t>(v)]) out_[static_cast<std::size_t>(u)].erase(v);
      in_[static_cast<std::size_t>(v)].clear();
    }
    return cost;
  }
  /// The cost of front-eliminating u -> v, or of back-eliminating v -> w, now (products only).
  StepCost front_cost(int u, int v) const {
    const Edge<P>& a = out_edges(u).at(v);
    StepCost cost;
    for (const auto& [w, b] : out_edges(v)) cost.add(b.kind, b.scale, a.kind, a.scale, dsize(w), dsize(v), dsize(u));
    return cost;
  }
  StepCost back_cost(int v, int w) const {
    const Edge<P>& b = out_edges(v).at(w);
    StepCost cost;
    for (const int u : in_edges(v)) {
      const Edge<P>& a = out_edges(u).at(v);
      cost.add(b.kind, b.scale, a.kind, a.scale, dsize(w), dsize(v), dsize(u));
    }
    return cost;
  }

 private:
  double dsize(int v) const { return static_cast<double>(size(v)); }
  /// Adds J_wv J_vu (b after a) to the edge u -> w; returns the cost of the product and the sum.
  template <class Algebra>
  double add_product(int u, int v, int w, const Edge<P>& b, const Edge<P>& a, Algebra& algebra) {
    const std::int64_t m = size(w), k = size(v), n = size(u);
    double cost = product_cost(b.kind, b.scale, a.kind, a.scale, static_cast<double>(m), static_cast<double>(k), static_cast<double>(n));
    Edge<P> p{product_kind(b.kind, a.kind), 1, {}};
    if (p.kind == EdgeKind::Identity) {
      p.scale = b.scale * a.scale;
    } else if (b.kind == EdgeKind::Identity && b.scale == 1) {
      p.value = a.value;
    } else if (a.kind == EdgeKind::Identity && a.scale == 1) {
      p.value = b.value;
    } else {
      p.value = algebra.product(b, a, p.kind, m, k, n);
    }
    return cost + add_edge(u, w, std::move(p), algebra);
  }
  void drop_out_edges(int v) {
    for (const auto& [w, e] : out_[static_cast<std::size_t>(v)]) in_[static_cast<std::size_t>(w)].erase(v);
    out_[static_cast<std::size_t>(v)].clear();
  }

  std::vector<std::int64_t> size_;
  std::vector<std::map<int, Edge<P>>> out_;
  std::vector<std::set<int>> in_;
};

/// The structure of a graph with values: the cost model's copy.
template <class P>
JacobianGraph<NoValues::Value> structure_of(const JacobianGraph<P>& g) {
  JacobianGraph<NoValues::Value> s;
  NoValues none;
  for (std::size_t v = 0; v < g.vertex_count(); ++v) s.add_vertex(g.size(static_cast<int>(v)));
  for (std::size_t u = 0; u < g.vertex_count(); ++u) {
    for (const auto& [w, e] : g.out_edges(static_cast<int>(u))) s.add_edge(static_cast<int>(u), w, {e.kind, e.scale, {}}, none);
  }
  return s;
}

/// One step of an edge elimination: front (the edge from -> to is pushed into to's successors)
/// or back (into from's predecessors).
struct EdgeStep {
  int from = 0, to = 0;
  bool front = true;
  bool operator==(const EdgeStep&) const = default;
};

/// An elimination plan and what it costs: the intermediate vertices in order (vertex orders), or
/// edge steps (EliminationOrder::Edges).
struct PlannedOrder {
  EliminationOrder order = EliminationOrder::Forward;
  std::vector<int> vertices;
  std::vector<EdgeStep> edges;
  double cost = 0;
};

/// Runs `plan` on g (the graph it was planned on, or one of the same structure); returns the cost.
template <class P, class Algebra>
double apply_plan(JacobianGraph<P>& g, const PlannedOrder& plan, Algebra& algebra) {
  double cost = 0;
  for (const int v : plan.vertices) cost += g.eliminate(v, algebra);
  for (const EdgeStep& e : plan.edges) cost += e.front ? g.front_eliminate(e.from, e.to, algebra) : g.back_eliminate(e.from, e.to, algebra);
  return cost;
}

/// The elimination cost of `order` on the structure `s` (which it consumes).
inline double elimination_cost(JacobianGraph<NoValues::Value> s, const std::vector<int>& order) {
  NoValues none;
  double cost = 0;
  for (const int v : order) cost += s.eliminate(v, none);
  return cost;
}

/// The cheapest-first order: at each step the vertex whose products cost least now (Markowitz's
/// rule, with each product weighted by its cost instead of counted). With `rng`, each step takes
/// one of the `spread` cheapest at random instead (the search's randomized runs).
inline PlannedOrder greedy_order(JacobianGraph<NoValues::Value> s, const std::vector<int>& intermediates, std::mt19937* rng = nullptr,
                                 std::size_t spread = 1) {
  PlannedOrder result{EliminationOrder::Markowitz, {}, {}, 0};
  NoValues none;
  std::vector<int> left = intermediates;
  std::vector<StepCost> cost(s.vertex_count());
  for (const int v : left) cost[static_cast<std::size_t>(v)] = s.product_costs(v);
  std::vector<std::pair<StepCost, std::size_t>> cheapest;
  while (!left.empty()) {
    cheapest.clear();
    for (std::size_t i = 0; i < left.size(); ++i) cheapest.emplace_back(cost[static_cast<std::size_t>(left[i])], i);
    const std::size_t take = std::min(spread, cheapest.size());
    std::partial_sort(cheapest.begin(), cheapest.begin() + static_cast<std::ptrdiff_t>(take), cheapest.end(),
                      [](const auto& a, const auto& b) { return a.first < b.first || (!(b.first < a.first) && a.second < b.second); });
    std::size_t pick = 0;
    if (rng && take > 1) pick = std::uniform_int_distribution<std::size_t>(0, take - 1)(*rng);
    const std::size_t at = cheapest[pick].second;
    const int v = left[at];
    left[at] = left.back();
    left.pop_back();
    // The vertices whose products change: v's neighbours, before the elimination joins them.
    std::set<int> touched(s.in_edges(v).begin(), s.in_edges(v).end());
    for (const auto& [w, e] : s.out_edges(v)) touched.insert(w);
    result.vertices.push_back(v);
    result.cost += s.eliminate(v, none);
    for (const int t : touched) cost[static_cast<std::size_t>(t)] = s.product_costs(t);
  }
  return result;
}

/// Cheapest first over edges: at each step the front or back elimination of one edge at an
/// intermediate vertex whose products cost least now, until no intermediate vertex has an edge.
/// Vertex elimination is the special case that takes all of a vertex's in-edges in a row; edge
/// steps may also split a vertex's work between its two sides. O(steps x edges).
inline PlannedOrder greedy_edge_order(JacobianGraph<NoValues::Value> s, const std::vector<int>& intermediates) {
  PlannedOrder result{EliminationOrder::Edges, {}, {}, 0};
  NoValues none;
  for (;;) {
    EdgeStep best;
    std::optional<StepCost> best_cost;
    for (const int v : intermediates) {
      for (const int u : s.in_edges(v)) {
        const StepCost c = s.front_cost(u, v);
        if (!best_cost || c < *best_cost) best_cost = c, best = {u, v, true};
      }
      for (const auto& [w, e] : s.out_edges(v)) {
        const StepCost c = s.back_cost(v, w);
        if (!best_cost || c < *best_cost) best_cost = c, best = {v, w, false};
      }
    }
    if (!best_cost) break;
    result.edges.push_back(best);
    result.cost += best.front ? s.front_eliminate(best.from, best.to, none) : s.back_eliminate(best.from, best.to, none);
  }
  return result;
}

/// The orders of EliminationOrder for the graph with the given intermediate vertices (in
/// topological order): Forward, Reverse, Markowitz, Search (the best of Markowitz's order and
/// `search_runs` randomized cheapest-first runs, each step taking one of the three cheapest) and
/// Edges (cheapest-first edge elimination). Best is the cheapest of the five (of the four vertex
/// orders without `edges_in_best`).
inline PlannedOrder plan_order(const JacobianGraph<NoValues::Value>& s, const std::vector<int>& intermediates, EliminationOrder order,
                               int search_runs = 16, bool edges_in_best = true) {
  switch (order) {
    case EliminationOrder::Forward: return {order, intermediates, {}, elimination_cost(s, intermediates)};
    case EliminationOrder::Reverse: {
      std::vector<int> reversed(intermediates.rbegin(), intermediates.rend());
      const double cost = elimination_cost(s, reversed);
      return {order, std::move(reversed), {}, cost};
    }
    case EliminationOrder::Markowitz: return greedy_order(s, intermediates);
    case EliminationOrder::Edges: return greedy_edge_order(s, intermediates);
    case EliminationOrder::Search: {
      PlannedOrder best = greedy_order(s, intermediates);
      std::mt19937 rng(20261128);
      for (int r = 0; r < search_runs; ++r) {
        PlannedOrder run = greedy_order(s, intermediates, &rng, 3);
        if (run.cost < best.cost) best = std::move(run);
      }
      best.order = EliminationOrder::Search;
      return best;
    }
    case EliminationOrder::Best: {
      PlannedOrder best;
      best.cost = std::numeric_limits<double>::infinity();
      for (const EliminationOrder o : {EliminationOrder::Forward, EliminationOrder::Reverse, EliminationOrder::Markowitz,
                                       EliminationOrder::Search, EliminationOrder::Edges}) {
        if (o == EliminationOrder::Edges && !edges_in_best) continue;
        PlannedOrder run = plan_order(s, intermediates, o, search_runs);
        if (run.cost < best.cost) best = std::move(run);
      }
      return best;
    }
  }
  throw std::logic_error("plan_order: unknown order");
}

}  // namespace tenferro::sparse
