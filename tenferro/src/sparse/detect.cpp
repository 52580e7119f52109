// Sparsity detection as a replay of the graph on index sets, one rule per Dependence.
#include "sparse/detect.hpp"

#include <algorithm>
#include <functional>
#include <limits>
#include <optional>

#include "computegraph/replay.hpp"
#include "sparse/element_sets.hpp"
#include "tenferro/dimension_numbers.hpp"
#include "tenferro/ops/builtin_attrs.hpp"
#include "tenferro/ops/op_def.hpp"

namespace tenferro::sparse {
namespace {

using SetsPtr = std::shared_ptr<const ElementSets>;

/// One value as detection sees it: its type, the argument elements each of its elements depends
/// on (null: none; every integer and bool value, and every float value computed without x), and,
/// for an integer or bool value computed without x, the value itself.
struct Dep {
  TensorType type;
  SetsPtr sets;
  std::optional<Tensor> known;
};

/// The sets of a value of `shape` reduced to its axes `keep` (in that order): element o of the
/// result holds the union over the elements whose kept coordinates are o's.
SetsPtr fiber_union(const ElementSets& s, const Shape& shape, const std::vector<std::size_t>& keep,
                    const std::function<ElementSets::Builder(std::int64_t)>& make_builder) {
  std::int64_t m = 1;
  for (std::size_t a : keep) m *= shape[a];
  if (s.is_uniform()) {
    return std::make_shared<ElementSets>(ElementSets::uniform(m, s.numel() > 0 ? s.all_members() : std::vector<std::int32_t>{}));
  }
  const std::size_t rank = shape.size();
  std::vector<std::int64_t> stride(rank, 0);  // in the result, 0 along reduced axes
  std::int64_t st = 1;
  for (std::size_t j = keep.size(); j-- > 0;) {
    stride[keep[j]] = st;
    st *= shape[keep[j]];
  }
  // Each element's target, walking the multi-index in row-major order.
  const std::int64_t n = s.numel();
  std::vector<std::int64_t> target(static_cast<std::size_t>(n));
  std::vector<std::int64_t> index(rank, 0);
  std::int64_t at = 0;
  for (std::int64_t e = 0; e < n; ++e) {
    target[static_cast<std::size_t>(e)] = at;
    for (std::size_t a = rank; a-- > 0;) {
      at += stride[a];
      if (++index[a] < shape[a]) break;
      at -= stride[a] * shape[a];
      index[a] = 0;
    }
  }
  std::vector<std::int64_t> offsets(static_cast<std::size_t>(m) + 1, 0);
  for (std::int64_t e = 0; e < n; ++e) offsets[static_cast<std::size_t>(target[static_cast<std::size_t>(e)]) + 1] += static_cast<std::int64_t>(s[e].size());
  for (std::size_t o = 0; o < static_cast<std::size_t>(m); ++o) offsets[o + 1] += offsets[o];
  std::vector<std::int32_t> gathered(static_cast<std::size_t>(offsets.back()));
  std::vector<std::int64_t> pos(offsets.begin(), offsets.end() - 1);
  for (std::int64_t e = 0; e < n; ++e) {
    const auto row = s[e];
    std::int64_t& p = pos[static_cast<std::size_t>(target[static_cast<std::size_t>(e)])];
    std::copy(row.begin(), row.end(), gathered.begin() + p);
    p += static_cast<std::int64_t>(row.size());
  }
  ElementSets::Builder builder = make_builder(m);
  for (std::int64_t o = 0; o < m; ++o) {
    builder.add(std::span<const std::int32_t>(gathered).subspan(static_cast<std::size_t>(offsets[static_cast<std::size_t>(o)]),
                                                                static_cast<std::size_t>(offsets[static_cast<std::size_t>(o) + 1] -
                                                                                         offsets[static_cast<std::size_t>(o)])));
    builder.end_element();
  }
  return std::make_shared<ElementSets>(builder.finish());
}

class Detector {
 public:
  explicit Detector(std::int64_t limit) : limit_(limit) {}

  std::vector<Dep> record(const StdTensorOp& op, std::span<const Dep> in) const {
    const OpDef& def = *op.def;
    const std::size_t outs = op.output_count();
    std::vector<Dep> out(outs);
    bool integral = true;
    for (std::size_t s = 0; s < outs; ++s) {
      out[s].type = op.output_type(s);
      integral = integral && !is_inexact(out[s].type.dtype);
    }
    // Integer and bool values that do not depend on x are computed: indices decide where
    // gathers and dynamic slices read.
    const bool known = std::all_of(in.begin(), in.end(), [](const Dep& d) { return d.known.has_value(); });
    if (known && integral) {
      std::vector<const Tensor*> ptrs;
      for (const Dep& d : in) ptrs.push_back(&*d.known);
      std::vector<Tensor> results(outs);
      ExecContext ctx;
      op.eval(ctx, ptrs, results);
      for (std::size_t s = 0; s < outs; ++s) out[s].known = std::move(results[s]);
      return out;
    }
    if (def.never_differentiable()) return out;
    std::vector<std::size_t> from;  // the operands whose elements count
    for (std::size_t k = 0; k < in.size(); ++k) {
      const bool differentiable = def.variadic_arity || k >= def.operands.size() || def.operands[k] != Linearity::NonDifferentiable;
      if (in[k].sets && differentiable && is_inexact(in[k].type.dtype)) from.push_back(k);
    }
    if (from.empty()) return out;
    for (std::size_t s = 0; s < outs; ++s) {
      if (!is_inexact(out[s].type.dtype)) continue;
      std::optional<SetsPtr> sets;
      switch (def.element_dependence()) {
        case Dependence::Elementwise: sets = elementwise(op, in, from, out[s].type); break;
        case Dependence::Moves: sets = moves(op, in, from, s); break;
        case Dependence::Reduces: sets = reduces(op, in, from); break;
        case Dependence::Contracts: sets = contracts(op, in, from); break;
        case Dependence::Accumulates: sets = accumulates(op, in, from); break;
        case Dependence::Branches: sets = branches(op, in, s); break;
        case Dependence::Derived:
        case Dependence::All: break;
      }
      out[s].sets = sets ? *sets : everything(in, from, out[s].type);
    }
    return out;
  }

 private:
  ElementSets::Builder builder(const StdTensorOp& op, std::int64_t numel) const {
    return ElementSets::Builder(numel, limit_, [&op] { return "jacobian_sparsity: " + op.name(); });
  }

  std::function<ElementSets::Builder(std::int64_t)> builders(const StdTensorOp& op) const {
    return [this, &op](std::int64_t numel) { return builder(op, numel); };
  }

  /// Every result element on every element the counted operands depend on.
  static SetsPtr everything(std::span<const Dep> in, const std::vector<std::size_t>& from, const TensorType& type) {
    std::vector<std::int32_t> all;
    for (std::size_t k : from) {
      const auto m = in[k].sets->all_members();
      all.insert(all.end(), m.begin(), m.end());
    }
    sort_distinct(all);
    return std::make_shared<ElementSets>(ElementSets::uniform(type.numel(), std::move(all)));
  }

  std::optional<SetsPtr> elementwise(const StdTensorOp& op, std::span<const Dep> in, const std::vector<std::size_t>& from,
                                     const TensorType& type) const {
    const std::int64_t n = type.numel();
    std::vector<const ElementSets*> src;
    for (std::size_t k : from) {
      const ElementSets& s = *in[k].sets;
      if (s.numel() != n && s.numel() != 1) return std::nullopt;  // not the elementwise shape: All
      src.push_back(&s);
    }
    if (std::all_of(from.begin(), from.end(), [&](std::size_t k) { return in[k].sets == in[from[0]].sets; }) &&
        src[0]->numel() == n) {
      return in[from[0]].sets;
    }
    if (std::all_of(src.begin(), src.end(), [](const ElementSets* s) { return s->is_uniform(); })) {
      return everything(in, from, type);
    }
    ElementSets::Builder b = builder(op, n);
    for (std::int64_t e = 0; e < n; ++e) {
      for (const ElementSets* s : src) b.add((*s)[s->numel() == 1 ? 0 : e]);
      b.end_element(src.size() == 1);
    }
    return std::make_shared<ElementSets>(b.finish());
  }

  /// Runs the op's kernel on labels: float operand k's element e is the number base_k + e + 1
  /// (counted operands only; 0 elsewhere), so that each result element names the element it is
  /// a copy of, or 0 for a fill. Integer operands must be known. nullopt: the op cannot run on
  /// labels here (an index that depends on x, a kernel without f64), and depends on everything.
  std::optional<SetsPtr> moves(const StdTensorOp& op, std::span<const Dep> in, const std::vector<std::size_t>& from,
                               std::size_t slot) const {
    std::vector<TensorType> types;
    std::vector<Tensor> labels;
    std::vector<std::int64_t> base;   // first label of each counted operand
    std::vector<std::size_t> owner;   // its position in `in`
    std::int64_t next = 1;
    for (std::size_t k = 0; k < in.size(); ++k) {
      if (!is_inexact(in[k].type.dtype)) {
        if (!in[k].known) return std::nullopt;
        types.push_back(in[k].type);
        labels.push_back(*in[k].known);
        continue;
      }
      const TensorType t{DType::F64, in[k].type.shape};
      Tensor l = Tensor::uninitialized(t);
      double* p = l.data<double>();
      const bool counted = std::find(from.begin(), from.end(), k) != from.end();
      for (std::int64_t e = 0; e < t.numel(); ++e) p[e] = counted ? static_cast<double>(next + e) : 0.0;
      if (counted) {
        base.push_back(next);
        owner.push_back(k);
        next += t.numel();
      }
      types.push_back(t);
      labels.push_back(std::move(l));
    }
    if (next > (std::int64_t{1} << 52)) return std::nullopt;  // labels exact in f64
    std::vector<Tensor> results(op.output_count());
    try {
      const StdTensorOp moved = make_op(*op.def, types, op.attrs);
      std::vector<const Tensor*> ptrs;
      for (const Tensor& l : labels) ptrs.push_back(&l);
      ExecContext ctx;
      moved.eval(ctx, ptrs, results);
    } catch (const Error&) {
      return std::nullopt;
    }
    const Tensor& r = results[slot];
    if (r.dtype() != DType::F64) return std::nullopt;
    const double* q = r.data<double>();
    ElementSets::Builder b = builder(op, r.numel());
    for (std::int64_t e = 0; e < r.numel(); ++e) {
      const auto label = static_cast<std::int64_t>(q[e]);
      if (label > 0) {
        const std::size_t j = static_cast<std::size_t>(std::upper_bound(base.begin(), base.end(), label) - base.begin()) - 1;
        b.add((*in[owner[j]].sets)[label - base[j]]);
      }
      b.end_element(/*sorted_distinct=*/true);
    }
    return std::make_shared<ElementSets>(b.finish());
  }

  std::optional<SetsPtr> reduces(const StdTensorOp& op, std::span<const Dep> in, const std::vector<std::size_t>& from) const {
    if (!op.attrs.holds<ReduceAxes>() || from.size() != 1 || from[0] != 0 || in.size() != 1) return std::nullopt;
    const Shape& shape = in[0].type.shape;
    std::vector<bool> reduced(shape.size(), false);
    for (std::int64_t a : op.attrs.get<ReduceAxes>().axes) {
      if (a < 0 || a >= static_cast<std::int64_t>(shape.size())) return std::nullopt;
      reduced[static_cast<std::size_t>(a)] = true;
    }
    std::vector<std::size_t> keep;
    for (std::size_t a = 0; a < shape.size(); ++a) {
      if (!reduced[a]) keep.push_back(a);
    }
    SetsPtr r = fiber_union(*in[0].sets, shape, keep, builders(op));
    if (r->numel() != op.out.numel()) return std::nullopt;
    return r;
  }

  std::optional<SetsPtr> contracts(const StdTensorOp& op, std::span<const Dep> in, const std::vector<std::size_t>& from) const {
    if (!op.attrs.holds<DotDims>() || in.size() != 2) return std::nullopt;
    const DotDims& d = op.attrs.get<DotDims>();
    // Each side reduced over its contracted axes to (batch, free), then paired.
    auto side = [&](std::size_t k, const std::vector<std::int64_t>& batch, const std::vector<std::int64_t>& contract,
                    std::int64_t& free_count) -> SetsPtr {
      const Shape& shape = in[k].type.shape;
      std::vector<std::size_t> keep;
      for (std::int64_t a : batch) keep.push_back(static_cast<std::size_t>(a));
      free_count = 1;
      for (std::size_t a = 0; a < shape.size(); ++a) {
        const auto ai = static_cast<std::int64_t>(a);
        if (std::find(batch.begin(), batch.end(), ai) == batch.end() && std::find(contract.begin(), contract.end(), ai) == contract.end()) {
          keep.push_back(a);
          free_count *= shape[a];
        }
      }
      if (std::find(from.begin(), from.end(), k) == from.end()) return nullptr;
      return fiber_union(*in[k].sets, shape, keep, builders(op));
    };
    std::int64_t ni = 1, nj = 1;
    const SetsPtr l = side(0, d.lhs_batch, d.lhs_contract, ni);
    const SetsPtr r = side(1, d.rhs_batch, d.rhs_contract, nj);
    std::int64_t nb = 1;
    for (std::int64_t a : d.lhs_batch) nb *= in[0].type.shape[static_cast<std::size_t>(a)];
    const std::int64_t n = nb * ni * nj;
    if (n != op.out.numel()) return std::nullopt;
    if ((!l || l->is_uniform()) && (!r || r->is_uniform())) return everything(in, from, op.out);
    ElementSets::Builder b = builder(op, n);
    for (std::int64_t bi = 0; bi < nb; ++bi) {
      for (std::int64_t i = 0; i < ni; ++i) {
        for (std::int64_t j = 0; j < nj; ++j) {
          if (l) b.add((*l)[bi * ni + i]);
          if (r) b.add((*r)[bi * nj + j]);
          b.end_element(!l || !r);
        }
      }
    }
    return std::make_shared<ElementSets>(b.finish());
  }

  /// Operands (base, indices, updates): the landing gather (OpDef::landing) run on labels of the
  /// base's elements names, for each update element, the result element it lands on; each result
  /// element gets its base element's set and those of the updates landing on it.
  std::optional<SetsPtr> accumulates(const StdTensorOp& op, std::span<const Dep> in, const std::vector<std::size_t>& from) const {
    if (!op.def->landing || in.size() != 3 || !in[1].known || is_inexact(in[1].type.dtype)) return std::nullopt;
    const bool base = std::find(from.begin(), from.end(), 0) != from.end();
    const bool updates = std::find(from.begin(), from.end(), 2) != from.end();
    const std::int64_t n = op.out.numel();
    if (in[0].type.numel() != n) return std::nullopt;
    std::vector<std::int64_t> target;  // per update element: its result element, or -1
    if (updates) {
      const TensorType types[] = {{DType::F64, in[0].type.shape}, in[1].type, {DType::F64, in[2].type.shape}};
      Tensor labels = Tensor::uninitialized(types[0]);
      double* p = labels.data<double>();
      for (std::int64_t e = 0; e < n; ++e) p[e] = static_cast<double>(e + 1);
      std::vector<Tensor> landed(1);
      try {
        const StdTensorOp gather = op.def->landing(op, types);
        const Tensor* args[] = {&labels, &*in[1].known};
        ExecContext ctx;
        gather.eval(ctx, args, landed);
      } catch (const Error&) {
        return std::nullopt;
      }
      if (landed[0].dtype() != DType::F64 || landed[0].numel() != in[2].type.numel()) return std::nullopt;
      const double* q = landed[0].data<double>();
      target.resize(static_cast<std::size_t>(landed[0].numel()));
      for (std::size_t u = 0; u < target.size(); ++u) target[u] = static_cast<std::int64_t>(q[u]) - 1;
    }
    // The update elements landing on each result element, by counting.
    std::vector<std::int64_t> first(static_cast<std::size_t>(n) + 1, 0);
    for (const std::int64_t t : target) {
      if (t >= 0 && t < n) ++first[static_cast<std::size_t>(t) + 1];
    }
    for (std::size_t o = 0; o < static_cast<std::size_t>(n); ++o) first[o + 1] += first[o];
    std::vector<std::int64_t> landing(static_cast<std::size_t>(first.back()));
    std::vector<std::int64_t> pos(first.begin(), first.end() - 1);
    for (std::size_t u = 0; u < target.size(); ++u) {
      const std::int64_t t = target[u];
      if (t >= 0 && t < n) landing[static_cast<std::size_t>(pos[static_cast<std::size_t>(t)]++)] = static_cast<std::int64_t>(u);
    }
    ElementSets::Builder b = builder(op, n);
    for (std::int64_t o = 0; o < n; ++o) {
      if (base) b.add((*in[0].sets)[o]);
      for (auto k = first[static_cast<std::size_t>(o)]; k < first[static_cast<std::size_t>(o) + 1]; ++k) {
        b.add((*in[2].sets)[landing[static_cast<std::size_t>(k)]]);
      }
      b.end_element();
    }
    return std::make_shared<ElementSets>(b.finish());
  }

  /// Operands (index, operands...): result `slot` of each branch, detected by replaying the
  /// branch's region on the operands, united over the branches (any of them may run).
  std::optional<SetsPtr> branches(const StdTensorOp& op, std::span<const Dep> in, std::size_t slot) const {
    if (!op.def->regions || in.empty()) return std::nullopt;
    const std::span<const Dep> operands = in.subspan(1);
    std::vector<SetsPtr> found;
    for (const auto& region : op.def->regions(op)) {
      if (region->inputs().size() != operands.size() || region->outputs().size() != op.output_count()) return std::nullopt;
      std::vector<Dep> results;
      try {
        results = computegraph::replay(*region, operands,
                                       [this](const StdTensorOp& inner, const computegraph::OperationRole&, std::span<const Dep> args) {
                                         return record(inner, args);
                                       });
      } catch (const computegraph::GraphError&) {
        return std::nullopt;  // a region that reads values outside itself: everything
      }
      if (results[slot].sets) found.push_back(results[slot].sets);
    }
    if (found.empty()) return SetsPtr{};
    if (found.size() == 1 || std::all_of(found.begin(), found.end(), [&](const SetsPtr& f) { return f == found[0]; })) return found[0];
    const std::int64_t n = op.output_type(slot).numel();
    ElementSets::Builder b = builder(op, n);
    for (std::int64_t e = 0; e < n; ++e) {
      for (const SetsPtr& f : found) b.add((*f)[f->numel() == 1 ? 0 : e]);
      b.end_element();
    }
    return std::make_shared<ElementSets>(b.finish());
  }

  std::int64_t limit_;
};

}  // namespace

namespace {
/// Which operations of `g` the value `out` depends on. Detection replays only those: an operation
/// whose result the function discards costs no time and cannot trip max_nonzeros.
std::vector<std::uint8_t> operations_reaching(const computegraph::Graph<StdTensorOp>& g, std::uint32_t out) {
  const auto& ops = g.operations();
  std::vector<std::uint8_t> needed_value(g.values().size(), 0), needed(ops.size(), 0);
  needed_value[out] = 1;
  for (std::size_t i = ops.size(); i-- > 0;) {
    for (const auto v : ops[i].outputs) needed[i] = needed[i] || needed_value[v];
    if (!needed[i]) continue;
    for (const auto v : g.local_operands(static_cast<computegraph::LocalOperationId>(i))) {
      if (v != computegraph::Graph<StdTensorOp>::kExternalOperand) needed_value[v] = 1;
    }
  }
  return needed;
}
}  // namespace

SparsityPattern jacobian_pattern(const computegraph::Graph<StdTensorOp>& g, std::size_t wrt, std::span<const Tensor> args,
                                 std::int64_t max_nonzeros) {
  const auto& inputs = g.inputs();
  if (wrt >= inputs.size() || args.size() != inputs.size()) {
    throw BindingError("jacobian_sparsity: argument " + std::to_string(wrt) + " of a function of " + std::to_string(inputs.size()) +
                       " arguments (" + std::to_string(args.size()) + " given)");
  }
  if (g.outputs().size() != 1) {
    throw ShapeError("jacobian_sparsity: the function has " + std::to_string(g.outputs().size()) + " results; expected one");
  }
  std::vector<Dep> seeds(inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    seeds[i].type = type_of(g.key(inputs[i]));
    if (!is_inexact(seeds[i].type.dtype) && args[i].type() == seeds[i].type) seeds[i].known = args[i];
  }
  const std::int64_t cols = seeds[wrt].type.numel();
  if (cols > std::numeric_limits<std::int32_t>::max()) {
    throw ShapeError("jacobian_sparsity: argument " + std::to_string(wrt) + " has " + std::to_string(cols) +
                     " elements; sparsity detection indexes at most 2^31 - 1");
  }
  seeds[wrt].sets = std::make_shared<ElementSets>(ElementSets::identity(cols));
  const Detector detector(max_nonzeros);
  std::vector<std::optional<Dep>> values(g.values().size());
  for (std::size_t i = 0; i < inputs.size(); ++i) values[inputs[i]] = seeds[i];
  const std::vector<std::uint8_t> needed = operations_reaching(g, g.outputs()[0]);
  computegraph::replay_into(
      g, values,
      [&detector](const StdTensorOp& op, const computegraph::OperationRole&, std::span<const Dep> operands) {
        return detector.record(op, operands);
      },
      [&needed](std::size_t index, const auto&) { return needed[index] != 0; });
  const Dep& y = *values[g.outputs()[0]];
  SparsityPattern p;
  p.rows = y.type.numel();
  p.cols = cols;
  p.row_offsets.assign(static_cast<std::size_t>(p.rows) + 1, 0);
  if (!y.sets) return p;
  if (y.sets->entries() > max_nonzeros) {
    throw Error("jacobian_sparsity: the pattern holds " + std::to_string(y.sets->entries()) + " entries, more than " +
                std::to_string(max_nonzeros) + " (SparseOptions::max_nonzeros); the derivative is close to dense, so jacfwd/jacrev suit it better");
  }
  p.col_indices.reserve(static_cast<std::size_t>(y.sets->entries()));
  for (std::int64_t i = 0; i < p.rows; ++i) {
    const auto row = (*y.sets)[i];
    p.col_indices.insert(p.col_indices.end(), row.begin(), row.end());
    p.row_offsets[static_cast<std::size_t>(i) + 1] = static_cast<std::int64_t>(p.col_indices.size());
  }
  return p;
}

}  // namespace tenferro::sparse
