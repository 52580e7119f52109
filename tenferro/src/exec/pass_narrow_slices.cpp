// Narrowing slices (see passes.hpp): a value that is only ever read through slices is computed
// only where it is read. The rewrites below are repeated until none applies (each makes the
// program strictly cheaper, so they end):
//
// - Sinking. When every reader of a value is a slice (and the program does not return it), each
//   distinct slice becomes the producing op applied to slices of the op's operands, and the
//   producer goes. Producers: one-instruction elementwise kernels, transpose, broadcast_in_dim,
//   extract_diag, slice (composed into one) and dot_general (a slice along a free axis slices that
//   operand; along a batch axis, both). It is done only when the distinct slices together hold at
//   most half the value's elements, so it never adds work, and never cuts one product into
//   several that cover it (the gates of an LSTM). The new slices are sunk in turn.
// - Reassociation. A product of matrices (C (A B), (A B) C, either operand of either product read
//   transposed through dot_general's dimension numbers) is recomputed in the other order when that
//   costs fewer multiply-adds, counting A B's own cost as saved when every other reader of A B is
//   a slice (which then sinks) or a product reassociated with it. Products read a transposed
//   matrix through their dimension numbers first, as fold_transposes would later, so that the
//   products behind transposes are seen; steps left unread are dropped as they appear.
// - Distribution. A product of a sum of two products, (A B + C D) E, becomes A B E + C D E when
//   both terms then reassociate more cheaply than the product and the sum cost.
//
// The derivatives of a truncated decomposition are where this matters: the tangent of U[:, :k] of
// an n x n SVD is U (F o (dP S + S dP^T))[:, :k] with dP = U^T dA V, which the JVP rule states with
// full n x n products; only its first k columns (and dP's first k rows and columns) are read.
// After the pass each product is n x n x k (for TRG at n = 576, k = 24: a 24th of the work).
//
// Results: an elementwise op or a slice gives the same bits on fewer elements. A GEMM on sliced
// operands may sum in another order (another kernel for another shape), and a reassociated product
// rounds differently; like fold_transposes, the pass may change results by rounding only.
#include <algorithm>
#include <map>
#include <optional>

#include "passes.hpp"
#include "tenferro/ops/index_attrs.hpp"

namespace tenferro::exec {

namespace {
using Axes = std::vector<std::int64_t>;

/// One axis of a slice: indices start, start + stride, ... below limit.
struct Window {
  std::int64_t start = 0, limit = 0, stride = 1;
  std::int64_t count() const { return limit <= start ? 0 : (limit - start + stride - 1) / stride; }
};

std::vector<Window> windows_of(const SliceAttrs& s) {
  std::vector<Window> w(s.start.size());
  for (std::size_t a = 0; a < w.size(); ++a) w[a] = {s.start[a], s.limit[a], s.stride[a]};
  return w;
}
std::vector<Window> whole(const Shape& shape) {
  std::vector<Window> w(shape.size());
  for (std::size_t a = 0; a < w.size(); ++a) w[a] = {0, shape[a], 1};
  return w;
}
bool is_whole(const std::vector<Window>& w, const Shape& shape) {
  for (std::size_t a = 0; a < w.size(); ++a) {
    if (w[a].start != 0 || w[a].stride != 1 || w[a].limit != shape[a]) return false;
  }
  return true;
}
/// The window of `inner` (read within an axis of `outer`'s result) as a window of the axis itself.
Window compose(const Window& outer, const Window& inner) {
  const std::int64_t start = outer.start + inner.start * outer.stride;
  const std::int64_t stride = outer.stride * inner.stride;
  const std::int64_t count = inner.count();
  return {start, count == 0 ? start : start + (count - 1) * stride + 1, count == 0 ? 1 : stride};
}

class Narrowing {
 public:
  explicit Narrowing(ExecProgram& p) : p_(p) {}

  /// One round of the rewrites over the whole program; false when nothing changed.
  bool round() {
    index();
    bool changed = read_through_transposes();
    if (changed) index();
    replace_.assign(p_.steps.size(), std::nullopt);
    removed_.assign(p_.steps.size(), false);
    rename_.clear();
    changed |= drop_unread();
    for (std::size_t i = p_.steps.size(); i-- > 0;) {
      for (ValueId v : p_.steps[i].out) changed |= sink_into(v);
    }
    for (std::size_t i = p_.steps.size(); i-- > 0;) {
      for (ValueId v : p_.steps[i].out) changed |= reassociate_readers(v);
    }
    for (std::size_t i = p_.steps.size(); i-- > 0;) changed |= distribute(i);
    if (changed) apply();
    return changed;
  }

 private:
  ExecProgram& p_;
  std::vector<std::int64_t> producer_;                 // step index, -1 for inputs
  std::vector<std::vector<std::size_t>> readers_;      // step indices, once per step
  std::vector<bool> returned_;
  std::vector<std::optional<std::vector<Step>>> replace_;
  std::vector<bool> removed_;
  std::map<ValueId, ValueId> rename_;

  void index() {
    producer_.assign(p_.types.size(), -1);
    readers_.assign(p_.types.size(), {});
    returned_.assign(p_.types.size(), false);
    for (std::size_t i = 0; i < p_.steps.size(); ++i) {
      for (ValueId v : p_.steps[i].out) producer_[v] = static_cast<std::int64_t>(i);
      for (ValueId v : p_.steps[i].in) {
        auto& r = readers_[v];
        if (r.empty() || r.back() != i) r.push_back(i);
      }
    }
    for (ValueId v : p_.outputs) returned_[v] = true;
  }

  bool touched(std::size_t step) const { return replace_[step].has_value() || removed_[step]; }

  ValueId new_value(const TensorType& type) {
    p_.types.push_back(type);
    return static_cast<ValueId>(p_.types.size() - 1);
  }

  /// Appends to `out` a slice of `v` by `w` (nothing when `w` is all of v) and returns the value.
  ValueId slice_of(ValueId v, const std::vector<Window>& w, std::vector<Step>& out) {
    const TensorType& t = p_.types[v];
    if (is_whole(w, t.shape)) return v;
    SliceAttrs s;
    for (const Window& x : w) {
      s.start.push_back(x.start);
      s.limit.push_back(x.limit);
      s.stride.push_back(x.stride);
    }
    Step step;
    step.op = ops::slice(t, std::move(s));
    step.in = {v};
    step.out = {new_value(step.op.out)};
    out.push_back(std::move(step));
    return out.back().out[0];
  }

  /// Whether `s` is an elementwise kernel of one instruction whose operands all have its shape.
  bool narrowable_kernel(const Step& s) const {
    if (s.kind != StepKind::Fused || s.out.size() != 1) return false;
    const FusedKernel& k = *s.fused;
    if (k.code.size() != 1 || k.outputs.size() != 1 || k.outputs[0].mode != OutputMode::Store) return false;
    for (std::size_t i = 0; i < s.in.size(); ++i) {
      if (k.inputs[i].access != Access::Full || p_.types[s.in[i]].shape != p_.types[s.out[0]].shape) return false;
    }
    return true;
  }

  bool narrowable(const Step& s) const {
    if (s.kind == StepKind::Fused) return narrowable_kernel(s);
    const OpDef& d = *s.op.def;
    if (s.out.size() != 1) return false;
    return d.layout == Layout::Transpose || d.layout == Layout::Broadcast || d.layout == Layout::Slice ||
           d.layout == Layout::Diagonal || d.dot_dims_contraction;
  }

  /// Steps computing window `w` of step `s`'s result into `result` (its type already in types).
  std::vector<Step> narrowed(const Step& s, const std::vector<Window>& w, ValueId result) {
    std::vector<Step> out;
    // Copies: slice_of appends to p_.types.
    const TensorType rt = p_.types[result];
    Step clone;
    clone.out = {result};
    if (s.kind == StepKind::Fused) {
      auto k = std::make_shared<FusedKernel>(*s.fused);
      k->size = rt.numel();
      k->compiled = nullptr;
      clone.kind = StepKind::Fused;
      clone.fused = std::move(k);
      for (ValueId v : s.in) clone.in.push_back(slice_of(v, w, out));
      out.push_back(std::move(clone));
      return out;
    }
    const OpDef& d = *s.op.def;
    const TensorType operand = p_.types[s.in[0]];
    if (d.layout == Layout::Transpose) {
      const Axes& perm = s.op.attrs.get<Permutation>().perm;
      std::vector<Window> inner(w.size());
      for (std::size_t r = 0; r < w.size(); ++r) inner[static_cast<std::size_t>(perm[r])] = w[r];
      const ValueId x = slice_of(s.in[0], inner, out);
      clone.op = ops::transpose(p_.types[x], perm);
      clone.in = {x};
    } else if (d.layout == Layout::Broadcast) {
      const auto& b = s.op.attrs.get<BroadcastDims>();
      std::vector<Window> inner = whole(operand.shape);
      for (std::size_t i = 0; i < b.dims.size(); ++i) {
        // An axis of length 1 broadcast to more is read whole; one of full length is sliced.
        const auto r = static_cast<std::size_t>(b.dims[i]);
        if (operand.shape[i] == b.shape[r]) inner[i] = w[r];
      }
      const ValueId x = slice_of(s.in[0], inner, out);
      clone.op = ops::broadcast_in_dim(p_.types[x], rt.shape, b.dims);
      clone.in = {x};
    } else if (d.layout == Layout::Slice) {
      const std::vector<Window> first = windows_of(s.op.attrs.get<SliceAttrs>());
      std::vector<Window> inner(w.size());
      for (std::size_t a = 0; a < w.size(); ++a) inner[a] = compose(first[a], w[a]);
      const ValueId x = slice_of(s.in[0], inner, out);
      if (x == s.in[0]) {  // the composed slice is the whole operand: the result is the operand
        rename_[result] = x;
        return out;
      }
      out.back().out[0] = result;
      p_.types.pop_back();
      return out;
    } else if (d.layout == Layout::Diagonal) {
      const auto& axes = s.op.attrs.get<DiagAxes>();
      // Result axes are the operand's without axis2; the diagonal stays at axis1.
      std::vector<Window> inner(operand.rank());
      std::size_t r = 0;
      for (std::size_t a = 0; a < operand.rank(); ++a) {
        if (static_cast<std::int64_t>(a) == axes.axis2) continue;
        inner[a] = w[r++];
      }
      inner[static_cast<std::size_t>(axes.axis2)] = inner[static_cast<std::size_t>(axes.axis1)];
      const ValueId x = slice_of(s.in[0], inner, out);
      clone.op = ops::extract_diag(p_.types[x], axes.axis1, axes.axis2);
      clone.in = {x};
    } else {  // dot_general: result axes are batch, lhs free, rhs free
      const DotDims& dims = s.op.attrs.get<DotDims>();
      const TensorType lt = p_.types[s.in[0]];
      const TensorType rt2 = p_.types[s.in[1]];
      std::vector<Window> lw = whole(lt.shape), rw = whole(rt2.shape);
      std::size_t r = 0;
      for (std::size_t b = 0; b < dims.lhs_batch.size(); ++b, ++r) {
        lw[static_cast<std::size_t>(dims.lhs_batch[b])] = w[r];
        rw[static_cast<std::size_t>(dims.rhs_batch[b])] = w[r];
      }
      for (std::int64_t a : free_axes(dims.lhs_batch, dims.lhs_contract, lt.rank())) {
        lw[static_cast<std::size_t>(a)] = w[r++];
      }
      for (std::int64_t a : free_axes(dims.rhs_batch, dims.rhs_contract, rt2.rank())) {
        rw[static_cast<std::size_t>(a)] = w[r++];
      }
      const ValueId l = slice_of(s.in[0], lw, out);
      const ValueId rr = slice_of(s.in[1], rw, out);
      clone.op = s.op;
      clone.op.out = rt;
      clone.in = {l, rr};
    }
    out.push_back(std::move(clone));
    return out;
  }

  /// Sinks the slices reading `v` into v's producer (see the file comment).
  bool sink_into(ValueId v) {
    const std::int64_t pi = producer_[v];
    if (pi < 0 || returned_[v] || readers_[v].empty()) return false;
    const Step& prod = p_.steps[static_cast<std::size_t>(pi)];
    if (touched(static_cast<std::size_t>(pi)) || !narrowable(prod)) return false;
    // Every reader a slice of v; group them by window, keeping the first reader of each.
    std::vector<std::pair<SliceAttrs, std::vector<std::size_t>>> groups;
    for (std::size_t r : readers_[v]) {
      const Step& s = p_.steps[r];
      if (touched(r) || s.kind != StepKind::Op || s.op.def->layout != Layout::Slice) return false;
      const SliceAttrs& a = s.op.attrs.get<SliceAttrs>();
      auto g = std::find_if(groups.begin(), groups.end(), [&](const auto& e) { return e.first == a; });
      if (g == groups.end()) {
        groups.push_back({a, {r}});
      } else {
        g->second.push_back(r);
      }
    }
    std::int64_t elements = 0;
    for (const auto& g : groups) {
      const std::int64_t count = p_.types[p_.steps[g.second[0]].out[0]].numel();
      if (count == 0) return false;  // an empty slice costs nothing; empty kernels are not made
      elements += count;
    }
    const bool compose_only = prod.kind == StepKind::Op && prod.op.def->layout == Layout::Slice;
    // Only where it saves at least half: slices covering most of a value (an LSTM's four gates
    // cut from one product) would trade one efficient kernel for several narrow ones and copies
    // of their operands.
    if (!compose_only && 2 * elements > p_.types[v].numel()) return false;
    for (const auto& g : groups) {
      const ValueId result = p_.steps[g.second[0]].out[0];
      replace_[g.second[0]] = narrowed(prod, windows_of(g.first), result);
      for (std::size_t k = 1; k < g.second.size(); ++k) {
        removed_[g.second[k]] = true;
        rename_[p_.steps[g.second[k]].out[0]] = result;
      }
    }
    removed_[static_cast<std::size_t>(pi)] = true;
    return true;
  }

  /// A dot_general of two matrices contracting one axis each, without batch axes.
  static bool matrix_product(const Step& s, const std::vector<TensorType>& types) {
    if (s.kind != StepKind::Op || !s.op.def->dot_dims_contraction || s.out.size() != 1) return false;
    const DotDims& d = s.op.attrs.get<DotDims>();
    return d.lhs_batch.empty() && d.lhs_contract.size() == 1 && types[s.in[0]].rank() == 2 &&
           types[s.in[1]].rank() == 2;
  }

  /// Y = X C (X on Y's `side`) with X = A B, both products of matrices of one definition and
  /// dtype, recomputed as Q (P C): P is the factor of X whose free axis Y contracts, Q the other.
  struct Plan {
    ValueId p = 0, q = 0, c = 0;
    std::int64_t p_free = 0, p_contract = 0, q_contract = 0, c_contract = 0, c_free = 0;
    double old_cost = 0, x_cost = 0, new_cost = 0;  // multiply-adds of Y, of X, of the new pair
  };
  std::optional<Plan> plan(ValueId xv, ValueId cv, std::size_t side, const DotDims& yd, const OpDef* def,
                           DType dt) const {
    const std::int64_t xi = producer_[xv];
    if (xi < 0 || returned_[xv] || touched(static_cast<std::size_t>(xi))) return std::nullopt;
    const Step& x = p_.steps[static_cast<std::size_t>(xi)];
    if (!matrix_product(x, p_.types) || x.op.def != def) return std::nullopt;
    if (p_.types[xv].dtype != dt || p_.types[cv].dtype != dt || p_.types[x.in[0]].dtype != dt ||
        p_.types[x.in[1]].dtype != dt) {
      return std::nullopt;
    }
    const DotDims& xd = x.op.attrs.get<DotDims>();
    // X's axes: [A's free, B's free]. Y contracts X's axis `xc`: the factor P giving that axis is
    // contracted with C; the other factor Q keeps its free axis in Y's result.
    Plan pl;
    const std::int64_t xc = side == 0 ? yd.lhs_contract[0] : yd.rhs_contract[0];
    pl.c_contract = side == 0 ? yd.rhs_contract[0] : yd.lhs_contract[0];
    const std::size_t p_side = static_cast<std::size_t>(xc);  // 0: A, 1: B
    pl.p = x.in[p_side];
    pl.q = x.in[1 - p_side];
    pl.c = cv;
    pl.p_contract = p_side == 0 ? xd.lhs_contract[0] : xd.rhs_contract[0];
    pl.q_contract = p_side == 0 ? xd.rhs_contract[0] : xd.lhs_contract[0];
    pl.p_free = 1 - pl.p_contract;
    pl.c_free = 1 - pl.c_contract;
    const Shape &ps = p_.types[pl.p].shape, &qs = p_.types[pl.q].shape, &cs = p_.types[cv].shape;
    const double k = static_cast<double>(ps[static_cast<std::size_t>(pl.p_contract)]);
    const double pf = static_cast<double>(ps[static_cast<std::size_t>(pl.p_free)]);
    const double qf = static_cast<double>(qs[static_cast<std::size_t>(1 - pl.q_contract)]);
    const double cf = static_cast<double>(cs[static_cast<std::size_t>(pl.c_free)]);
    pl.old_cost = qf * pf * cf;
    pl.x_cost = qf * k * pf;
    pl.new_cost = k * pf * cf + qf * k * cf;
    return pl;
  }

  /// Whether every reader of `v` but step `except` is a slice (so v goes once that step stops
  /// reading it: the slices sink).
  bool only_slices_besides(ValueId v, std::size_t except) const {
    for (std::size_t r : readers_[v]) {
      const Step& s = p_.steps[r];
      if (r != except && !(s.kind == StepKind::Op && s.op.def->layout == Layout::Slice)) return false;
    }
    return true;
  }

  /// The steps computing `result` = Q (P C) (or (C P) Q, by side), with Y's op as the pattern.
  std::vector<Step> reassociated(const StdTensorOp& y_op, const Plan& pl, std::size_t side, ValueId result) {
    const DType dt = y_op.out.dtype;
    const std::int64_t p_kept = p_.types[pl.p].shape[static_cast<std::size_t>(pl.p_contract)];
    const std::int64_t c_kept = p_.types[pl.c].shape[static_cast<std::size_t>(pl.c_free)];
    // Both products are copies of Y's op (its definition: a semiring's product reassociates as
    // the ordinary one does) with new dimension numbers and types.
    Step z;
    z.op = y_op;
    if (side == 0) {  // Z = P C: [P's contracted axis, C's free]
      z.op.attrs = OpAttrs(DotDims{{}, {}, {pl.p_free}, {pl.c_contract}});
      z.op.out = TensorType{dt, Shape{p_kept, c_kept}};
      z.in = {pl.p, pl.c};
    } else {  // Z = C P: [C's free, P's contracted axis]
      z.op.attrs = OpAttrs(DotDims{{}, {}, {pl.c_contract}, {pl.p_free}});
      z.op.out = TensorType{dt, Shape{c_kept, p_kept}};
      z.in = {pl.c, pl.p};
    }
    z.out = {new_value(z.op.out)};
    const ValueId zv = z.out[0];
    Step y2;
    y2.op = y_op;
    y2.op.out = p_.types[result];
    if (side == 0) {  // Y = X C -> Q Z: [Q's free, C's free]
      y2.op.attrs = OpAttrs(DotDims{{}, {}, {pl.q_contract}, {0}});
      y2.in = {pl.q, zv};
    } else {  // Y = C X -> Z Q: [C's free, Q's free]
      y2.op.attrs = OpAttrs(DotDims{{}, {}, {1}, {pl.q_contract}});
      y2.in = {zv, pl.q};
    }
    y2.out = {result};
    std::vector<Step> out;
    out.push_back(std::move(z));
    out.push_back(std::move(y2));
    return out;
  }

  /// Reassociates the products that read the product X = `xv`: all of them when that costs fewer
  /// multiply-adds counting X's own cost as saved (X is then read by nothing but slices, which
  /// sink), else each one that is cheaper on its own.
  bool reassociate_readers(ValueId xv) {
    const std::int64_t xi = producer_[xv];
    if (xi < 0 || returned_[xv] || touched(static_cast<std::size_t>(xi)) ||
        !matrix_product(p_.steps[static_cast<std::size_t>(xi)], p_.types)) {
      return false;
    }
    struct Reader {
      std::size_t step, side;
      Plan plan;
    };
    std::vector<Reader> products;
    bool others = false;  // a reader that keeps X whole
    double old_cost = 0, new_cost = 0;
    for (std::size_t r : readers_[xv]) {
      const Step& y = p_.steps[r];
      if (y.kind == StepKind::Op && y.op.def->layout == Layout::Slice) continue;
      if (touched(r) || !matrix_product(y, p_.types) || y.in[0] == y.in[1]) {
        others = true;
        continue;
      }
      const std::size_t side = y.in[0] == xv ? 0 : 1;
      const auto pl = plan(xv, y.in[1 - side], side, y.op.attrs.get<DotDims>(), y.op.def, y.op.out.dtype);
      if (!pl) {
        others = true;
        continue;
      }
      products.push_back({r, side, *pl});
      old_cost += pl->old_cost;
      new_cost += pl->new_cost;
    }
    if (products.empty()) return false;
    const bool all = !others && new_cost < old_cost + products[0].plan.x_cost;
    bool changed = false;
    for (const Reader& r : products) {
      if (!all && !(r.plan.new_cost < r.plan.old_cost)) continue;
      const Step& y = p_.steps[r.step];
      replace_[r.step] = reassociated(y.op, r.plan, r.side, y.out[0]);
      changed = true;
    }
    if (all && products.size() == readers_[xv].size()) removed_[static_cast<std::size_t>(xi)] = true;
    return changed;
  }

  /// Rewrites every matrix product that reads a transposed matrix to read the matrix itself
  /// through its dimension numbers, as fold_transposes does later, so that the products the
  /// transpose hides are seen by reassociation.
  bool read_through_transposes() {
    bool changed = false;
    for (Step& y : p_.steps) {
      if (!matrix_product(y, p_.types)) continue;
      for (std::size_t side = 0; side < 2; ++side) {
        const std::int64_t ti = producer_[y.in[side]];
        if (ti < 0) continue;
        const Step& t = p_.steps[static_cast<std::size_t>(ti)];
        if (t.kind != StepKind::Op || t.op.def->layout != Layout::Transpose || p_.types[t.in[0]].rank() != 2) continue;
        DotDims d = y.op.attrs.get<DotDims>();
        auto& contract = side == 0 ? d.lhs_contract : d.rhs_contract;
        if (t.op.attrs.get<Permutation>().perm[0] == 1) contract[0] = 1 - contract[0];
        y.op.attrs = OpAttrs(std::move(d));
        y.in[side] = t.in[0];
        changed = true;
      }
    }
    return changed;
  }

  /// Drops steps this pass can narrow (single-result and pure) whose result nothing reads.
  bool drop_unread() {
    bool changed = false;
    for (std::size_t i = 0; i < p_.steps.size(); ++i) {
      const Step& s = p_.steps[i];
      if (touched(i) || !narrowable(s) || returned_[s.out[0]] || !readers_[s.out[0]].empty()) continue;
      removed_[i] = true;
      changed = true;
    }
    return changed;
  }

  /// Distributes Y = step i, a product reading a sum S = X1 + X2 of products, over the sum:
  /// Y = X1 C + X2 C, when reassociating both new products then costs fewer multiply-adds than Y
  /// (and the Xs, if nothing else needs them).
  bool distribute(std::size_t i) {
    const Step& y = p_.steps[i];
    if (touched(i) || !matrix_product(y, p_.types)) return false;
    const DotDims& yd = y.op.attrs.get<DotDims>();
    for (std::size_t side = 0; side < 2; ++side) {
      const ValueId sv = y.in[side];
      const std::int64_t si = producer_[sv];
      if (si < 0 || returned_[sv] || touched(static_cast<std::size_t>(si))) continue;
      const Step& s = p_.steps[static_cast<std::size_t>(si)];
      if (!narrowable_kernel(s) || s.fused->code[0].fast != ElementFast::Add || s.in.size() != 2) continue;
      const ValueId cv = y.in[1 - side];
      double before = 0, after = 0;
      bool ok = true;
      const bool s_freed = only_slices_besides(sv, i);
      for (ValueId xv : s.in) {
        const auto pl = plan(xv, cv, side, yd, y.op.def, y.op.out.dtype);
        if (!pl) {
          ok = false;
          break;
        }
        // Each term must be worth reassociating on its own (reassociate's test, X_j freed when
        // only S and slices read it and S goes).
        const bool x_freed = s_freed && only_slices_besides(xv, static_cast<std::size_t>(si));
        if (!(pl->new_cost < pl->old_cost + (x_freed ? pl->x_cost : 0.0))) ok = false;
        before += x_freed ? pl->x_cost : 0.0;
        after += pl->new_cost;
      }
      if (!ok) continue;
      // Y itself costs what one term X_j C costs before reassociation.
      before += plan(s.in[0], cv, side, yd, y.op.def, y.op.out.dtype)->old_cost;
      if (!(after < before)) continue;
      std::vector<Step> out;
      std::vector<ValueId> terms;
      for (ValueId xv : s.in) {
        Step t = y;
        t.in[side] = xv;
        t.out = {new_value(y.op.out)};
        terms.push_back(t.out[0]);
        out.push_back(std::move(t));
      }
      Step add;
      add.kind = StepKind::Fused;
      auto k = std::make_shared<FusedKernel>(*s.fused);
      k->size = y.op.out.numel();
      k->compiled = nullptr;
      add.fused = std::move(k);
      add.in = terms;
      add.out = y.out;
      out.push_back(std::move(add));
      replace_[i] = std::move(out);
      if (readers_[sv].size() == 1) removed_[static_cast<std::size_t>(si)] = true;
      return true;
    }
    return false;
  }

  void apply() {
    std::vector<Step> steps;
    steps.reserve(p_.steps.size());
    for (std::size_t i = 0; i < p_.steps.size(); ++i) {
      if (removed_[i]) continue;
      if (replace_[i]) {
        for (Step& s : *replace_[i]) steps.push_back(std::move(s));
      } else {
        steps.push_back(std::move(p_.steps[i]));
      }
    }
    auto resolve = [&](ValueId v) {
      for (auto it = rename_.find(v); it != rename_.end(); it = rename_.find(v)) v = it->second;
      return v;
    };
    for (Step& s : steps) {
      for (ValueId& v : s.in) v = resolve(v);
    }
    for (ValueId& v : p_.outputs) v = resolve(v);
    p_.steps = std::move(steps);
  }
};
}  // namespace

ExecProgram narrow_slices(ExecProgram p) {
  Narrowing n(p);
  for (int round = 0; round < 1000 && n.round(); ++round) {
  }
  return p;
}

}  // namespace tenferro::exec
