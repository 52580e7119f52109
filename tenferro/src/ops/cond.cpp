// cond: runs one of several branches, chosen by an integer index, one primitive carrying the
// branches as regions. Order: shape rule, kernel, JVP rule, transpose rule, definition.
//
// Operands [index, operands...]: the index is an i64 or bool scalar, clamped into
// [0, branches) (jax.lax.switch's convention); every branch takes the operands and returns
// results of the same types. Only the chosen branch runs.
//
// Derivatives: the JVP is a cond, on the same index, of the branches' JVPs (each recomputes its
// primal values from the operands; a cond marked reads_results passes its results as operands too
// and the JVP reads them instead of recomputing them), linear in the operands' tangents; a branch
// whose result has no tangent returns zeros for it. The transpose of a linear cond is a cond of the transposed
// branches. Both are conds again, so every order works.
//
// Batching (vmap): with one index for the whole batch, a cond of the batched branches; a result
// is batched if it is in any branch. With an index per example, every branch runs on the whole
// batch and each example takes its own branch's results by a select (jax.lax.cond does the
// same), so every branch runs for every example: values an untaken branch computes are dropped,
// derivatives included (select passes none to the unselected side).
#include <algorithm>
#include <optional>

#include "ir/batching.hpp"
#include "ir/family.hpp"
#include "regions/bodies.hpp"
#include "regions/region_runner.hpp"
#include "tenferro/control_flow.hpp"
#include "tenferro/ops/rule.hpp"

namespace tenferro {

std::size_t CondAttrs::hash() const {
  std::size_t h = n_operands;
  if (checkpoint) h = hash_mix(h, 0x63686b70u);
  if (reads_results) h = hash_mix(h, 0x72657375u);
  for (const Body& b : branches) h = hash_mix(h, b.region.hash());
  return h;
}
void CondAttrs::print(std::ostream& os) const {
  if (checkpoint) {
    os << "checkpoint, " << (reads_results ? "reads_results, " : "") << "operands=" << n_operands;
  } else {
    os << "branches=" << branches.size() << ", operands=" << n_operands;
  }
}

namespace ops {
StdTensorOp cond(CondAttrs attrs, std::span<const TensorType> operands) {
  return make_op(op_def(OpKind::Cond), operands, OpAttrs(std::move(attrs)));
}
}  // namespace ops

namespace detail {
namespace {

std::vector<TensorType> cond_shape(Types t, const OpAttrs& a) {
  const auto& s = a.get<CondAttrs>();
  if (s.branches.empty()) throw ShapeError("cond: needs at least one branch");
  const TensorType& index = t[0];
  if (index.rank() != 0 || !(index.dtype == DType::I64 || index.dtype == DType::Bool)) {
    throw DTypeError("cond: the index is " + index.to_string() + "; expected an i64 or bool scalar");
  }
  const std::vector<TensorType> operands(t.begin() + 1, t.end());
  const auto results = region_output_types(s.branches[0].region);
  for (std::size_t b = 0; b < s.branches.size(); ++b) {
    const auto in = region_input_types(s.branches[b].region);
    if (in != operands) {
      throw ShapeError("cond: branch " + std::to_string(b) + " takes (" + types_list(in) + "), but the operands are (" +
                       types_list(operands) + ")");
    }
    const auto out = region_output_types(s.branches[b].region);
    if (out != results) {
      throw ShapeError("cond: branch " + std::to_string(b) + " returns (" + types_list(out) + ") but branch 0 returns (" +
                       types_list(results) + "); every branch must return the same types");
    }
  }
  if (results.empty()) throw ShapeError("cond: the branches return nothing");
  return results;
}

std::int64_t read_index(const Tensor& index) {
  if (index.dtype() == DType::Bool) return index.data<bool>()[0] ? 1 : 0;
  return index.data<std::int64_t>()[0];
}

void eval_cond(const StdTensorOp& op, Operands in, std::span<Tensor> out) {
  const auto& s = op.attrs.get<CondAttrs>();
  const auto last = static_cast<std::int64_t>(s.branches.size()) - 1;
  const std::int64_t b = std::clamp<std::int64_t>(read_index(*in[0]), 0, last);
  std::vector<Tensor> args;
  for (std::size_t i = 1; i < in.size(); ++i) args.push_back(*in[i]);
  // Fresh result buffers: a branch that returns an operand unchanged copies it, so results never
  // alias operands.
  for (std::size_t j = 0; j < out.size(); ++j) out[j] = Tensor::uninitialized(op.output_type(j));
  run_body(s.branches[static_cast<std::size_t>(b)], args, out);
}

/// Replays a branch's JVP graph (inputs [operands..., tangents...]) into `bb`, reading the
/// branch's results from `results` (inputs of `bb` holding the cond's own results) instead of
/// recomputing them: an operation all of whose results are branch results is not replayed. So a
/// checkpoint's derivative recomputes only what lies between its operands and its results (an
/// SVD whose factors a checkpoint returns is not run again for their derivative), and a branch's
/// JVP never repeats work the primal cond has done. Returns the JVP graph's outputs.
std::vector<ValueId> replay_reading_results(BodyBuilder& bb, const Materialized& jvp, std::span<const ValueId> args,
                                            const Region& branch, std::span<const ValueId> results) {
  std::vector<std::optional<ValueId>> values(jvp.values().size());
  for (std::size_t i = 0; i < args.size(); ++i) values[jvp.inputs()[i]] = args[i];
  // The keys the results hold, and through an identity op (checkpoint_name) the key of its operand
  // too: the derivative of the op that computed a named value reads the operand, not the name.
  const BodyGraph& g = *branch.graph();
  std::vector<std::pair<TensorValueKey, ValueId>> known;
  for (std::size_t j = 0; j < g.outputs().size(); ++j) {
    ValueId v = g.outputs()[j];
    for (;;) {
      known.emplace_back(g.key(v), results[j]);
      const auto& producer = g.values()[v].producer;
      if (!producer) break;
      const auto& node = g.operations()[producer->first];
      if (!node.operation.def->identity_on_values || node.inputs.size() != 1 || !node.inputs[0].is_local()) break;
      v = node.inputs[0].local_id();
    }
  }
  std::vector<bool> given(values.size(), false);
  for (std::size_t v = 0; v < values.size(); ++v) {
    if (values[v]) continue;  // an input stays an input
    for (const auto& [key, result] : known) {
      if (jvp.values()[v].key == key) {
        values[v] = result;
        given[v] = true;
        break;
      }
    }
  }
  computegraph::replay_into(jvp, values, bb.recorder(), [&](std::size_t, const auto& node) {
    for (std::uint32_t k = 0; k < node.output_count; ++k) {
      if (!given[node.first_output + k]) return true;
    }
    return false;
  });
  std::vector<ValueId> outs;
  for (auto o : jvp.outputs()) outs.push_back(*values[o]);
  return outs;
}

Tangents jvp_cond(const StdTensorOp& op, const JvpArgs& a) {
  const auto& s = op.attrs.get<CondAttrs>();
  const std::size_t n = s.n_operands, m = op.output_count();
  std::vector<bool> active(n);
  for (std::size_t i = 0; i < n; ++i) active[i] = a.t[1 + i].has_value();
  std::vector<JvpBody> jvps;
  std::vector<bool> present(m, false);
  for (const Body& branch : s.branches) {
    jvps.push_back(jvp_body(branch.region, active));
    for (std::size_t j = 0; j < m; ++j) present[j] = present[j] || jvps.back().present[j];
  }
  Tangents result(m);
  if (std::none_of(present.begin(), present.end(), [](bool p) { return p; })) return result;
  const auto types = region_input_types(s.branches[0].region);
  CondAttrs linear;
  linear.checkpoint = s.checkpoint;
  for (std::size_t b = 0; b < jvps.size(); ++b) {
    const JvpBody& jvp = jvps[b];
    // Branch inputs: [tangents of the active operands..., operands..., the cond's results...].
    BodyBuilder bb;
    std::vector<ValueId> tangents, operands, results_in;
    for (std::size_t i = 0; i < n; ++i) if (active[i]) tangents.push_back(bb.input(types[i]));
    for (std::size_t i = 0; i < n; ++i) operands.push_back(bb.input(types[i]));
    if (s.reads_results) {
      for (std::size_t j = 0; j < m; ++j) results_in.push_back(bb.input(op.output_type(j)));
    }
    std::vector<ValueId> args = operands;
    args.insert(args.end(), tangents.begin(), tangents.end());
    const auto outs = s.reads_results ? replay_reading_results(bb, jvp.graph, args, s.branches[b].region, results_in)
                                      : bb.replay(jvp.graph, args);
    std::vector<ValueId> results;
    for (std::size_t j = 0, next = 0; j < m; ++j) {
      if (jvp.present[j]) {
        const ValueId t = outs[next++];
        if (present[j]) results.push_back(t);
      } else if (present[j]) {
        results.push_back(bb.zeros(op.output_type(j)));
      }
    }
    linear.branches.emplace_back(bb.finish(std::move(results), "cond"));
  }
  RuleTrace r(a.b);
  std::vector<Traced> operands{r.fixed(a.x[0])};
  for (std::size_t i = 0; i < n; ++i) if (active[i]) operands.push_back(r.linear(*a.t[1 + i]));
  for (std::size_t i = 0; i < n; ++i) operands.push_back(r.fixed(a.x[1 + i]));
  for (std::size_t j = 0; j < m && s.reads_results; ++j) operands.push_back(r.fixed(a.y[j]));
  linear.n_operands = static_cast<std::uint32_t>(operands.size() - 1);
  const std::vector<Traced> tangents = apply_outputs(ops::cond(std::move(linear), types_of(operands)), operands);
  for (std::size_t j = 0, next = 0; j < m; ++j) {
    if (present[j]) result[j] = r.result(tangents[next++], op, tidu::RuleKind::Jvp);
  }
  return result;
}

/// The transpose of a cond linear in the operands the role marks active (never the index).
Tangents transpose_cond(const StdTensorOp& op, const TransposeArgs& a) {
  const auto& s = op.attrs.get<CondAttrs>();
  const std::size_t n = s.n_operands, m = op.output_count();
  if (a.role.is_active(0)) not_linear(op, "the index is not a linear operand");
  std::vector<bool> linear(n);
  for (std::size_t i = 0; i < n; ++i) linear[i] = a.role.is_active(1 + i);
  const auto types = region_input_types(s.branches[0].region);
  CondAttrs transposed;
  transposed.checkpoint = s.checkpoint;
  for (const Body& branch : s.branches) {
    const TransposedBody tb = transpose_body(branch.region, linear);
    // Branch inputs: [one cotangent per result..., fixed operands...].
    BodyBuilder bb;
    std::vector<ValueId> args;
    for (std::size_t j = 0; j < m; ++j) args.push_back(bb.input(op.output_type(j)));
    for (std::size_t i = 0; i < n; ++i) if (!linear[i]) args.push_back(bb.input(types[i]));
    const auto cts = bb.replay(tb.graph, args);
    std::vector<ValueId> results;
    for (std::size_t i = 0, l = 0, next = 0; i < n; ++i) {
      if (!linear[i]) continue;
      results.push_back(tb.reached[l++] ? cts[next++] : bb.zeros(types[i]));
    }
    transposed.branches.emplace_back(bb.finish(std::move(results), "cond"));
  }
  RuleTrace r(a.b);
  std::vector<Traced> operands{r.fixed(a.x[0])};
  for (std::size_t j = 0; j < m; ++j) operands.push_back(r.linear_or_zeros(a.cts[j], op.output_type(j)));
  for (std::size_t i = 0; i < n; ++i) if (!linear[i]) operands.push_back(r.fixed(a.x[1 + i]));
  transposed.n_operands = static_cast<std::uint32_t>(operands.size() - 1);
  const std::vector<Traced> cts = apply_outputs(ops::cond(std::move(transposed), types_of(operands)), operands);
  Tangents result(1 + n);
  for (std::size_t i = 0, next = 0; i < n; ++i) {
    if (linear[i]) result[1 + i] = r.result(cts[next++], op, tidu::RuleKind::Transpose);
  }
  return result;
}

/// vmap of a cond (see the file's comment).
std::vector<BatchedValue> batch_cond(const StdTensorOp& op, std::span<const BatchedValue> x, std::int64_t batch_size) {
  const auto& s = op.attrs.get<CondAttrs>();
  const std::size_t n = s.n_operands, m = op.output_count();
  const std::span<const BatchedValue> operands = x.subspan(1);
  std::vector<bool> in(n), out(m, false);
  for (std::size_t i = 0; i < n; ++i) in[i] = operands[i].batched;
  if (x[0].batched) out.assign(m, true);
  for (const Body& branch : s.branches) {
    const std::vector<bool> d = depends_on(*branch.region.graph(), in);
    for (std::size_t j = 0; j < m; ++j) out[j] = out[j] || d[j];
  }
  auto run = [&](const Body& branch, std::span<const BatchedValue> args) {
    return batched_as(batch_graph(*branch.region.graph(), args, batch_size, args.empty() ? x[0].value : args[0].value), out,
                      batch_size);
  };
  std::vector<BatchedValue> results;
  if (!x[0].batched) {
    std::vector<Branch> branches;
    for (const Body& branch : s.branches) {
      branches.push_back([&run, &branch, &in](const TracedList& args) {
        std::vector<BatchedValue> b;
        for (std::size_t i = 0; i < args.size(); ++i) b.push_back({args[i], in[i]});
        return run(branch, b);
      });
    }
    TracedList values;
    for (const BatchedValue& v : operands) values.push_back(v.value);
    const TracedList r = switch_case_op(x[0].value, branches, values, s.checkpoint, s.reads_results);
    for (std::size_t j = 0; j < m; ++j) results.push_back({r[j], out[j]});
    return results;
  }
  // One index per example: the branch each example takes, clamped as the kernel clamps.
  const Traced& index = x[0].value;
  const auto last = static_cast<std::int64_t>(s.branches.size()) - 1;
  const Traced k = index.dtype() == DType::Bool
                       ? astype(index, DType::I64)
                       : minimum(maximum(index, constant(index, Tensor::from(std::vector<std::int64_t>{0}, {}))),
                                 constant(index, Tensor::from(std::vector<std::int64_t>{last}, {})));
  std::vector<Traced> chosen = run(s.branches[0], operands);
  for (std::size_t b = 1; b < s.branches.size(); ++b) {
    const std::vector<Traced> r = run(s.branches[b], operands);
    const Traced takes = eq(k, constant(k, Tensor::from(std::vector<std::int64_t>{static_cast<std::int64_t>(b)}, {})));
    for (std::size_t j = 0; j < m; ++j) chosen[j] = where(lanes(takes, r[j].shape()), r[j], chosen[j]);
  }
  for (Traced& v : chosen) results.push_back({std::move(v), true});
  return results;
}

}  // namespace

const OpDef& def_Cond() {
  static const OpDef d{
      .name = "cond", .kind = OpKind::Cond, .operands = {}, .outputs = 0, .shape_rule = cond_shape,
      .kernel = eval_cond, .jvp = jvp_cond, .transpose = transpose_cond,
      .variadic_arity = [](const OpAttrs& a) -> std::size_t { return 1 + std::size_t{a.get<CondAttrs>().n_operands}; },
      .regions = [](const StdTensorOp& op) {
        std::vector<computegraph::GraphPtr<StdTensorOp>> graphs;
        for (const Body& b : op.attrs.get<CondAttrs>().branches) graphs.push_back(b.region.graph());
        return graphs;
      },
      .dependence = Dependence::Branches,
      .batch = batch_cond};
  return d;
}

}  // namespace detail
}  // namespace tenferro
