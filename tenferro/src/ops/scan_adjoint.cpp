// scan_adjoint: the reverse sweep of a scan checkpointed by the binomial schedule
// (ScanOptions::checkpoint_snapshots). Order: shape rule, kernel, expansion, JVP rule, transpose
// rule, batching rule, definition. Layout: ScanAdjointAttrs (control_attrs.hpp).
//
// Where it comes from. The JVP of a scan with ScanAttrs::snapshots >= 1 stacks no residuals: it
// is one linear scan whose body is the whole JVP of the step, carrying the primal state (fixed
// carries) beside the tangents (scan.cpp). Transposing that scan needs the primal state before
// every step in reverse order; this op recomputes those states from the initial one, storing at
// most `snapshots` of them, by the binomial schedule (regions/revolve.hpp): for each step in
// reverse it runs the adjoint body, which recomputes the step's linearization point from the state
// and pulls the cotangents back through it.
//
// Derivatives. The op is linear in the cotangents it pulls back and computes exactly what its
// expansion computes: a forward scan that stacks the state before each step, then a reverse scan
// of the adjoint body over them. Its JVP is that expansion's JVP (recorded as a checkpoint cond,
// so it too recomputes from its operands), and its transpose is the linear scan it came from.
// Higher orders and vmap go through the expansion: correct at every order, with the memory of
// the plain scan's derivatives there; only first-order reverse mode runs the binomial schedule.
#include <algorithm>
#include <numeric>

#include "ir/batching.hpp"
#include "ir/family.hpp"
#include "regions/bodies.hpp"
#include "regions/region_runner.hpp"
#include "regions/revolve.hpp"
#include "tenferro/ops/rule.hpp"

namespace tenferro {

std::size_t ScanAdjointAttrs::hash() const {
  std::size_t h = hash_mix(step.region.hash(), static_cast<std::size_t>(length));
  h = hash_mix(h, primal.region.hash());
  h = hash_mix(h, adjoint.region.hash());
  h = hash_mix(h, static_cast<std::size_t>(snapshots));
  h = hash_mix(h, reverse);
  for (std::uint32_t n : {n_fixed_carry, n_linear_carry, n_ys, n_fixed_xs, n_linear_xs, n_fixed_consts, n_linear_consts}) {
    h = hash_mix(h, n);
  }
  return h;
}
void ScanAdjointAttrs::print(std::ostream& os) const {
  os << "length=" << length << ", snapshots=" << snapshots << ", carry=" << n_fixed_carry << "+" << n_linear_carry
     << ", ys=" << n_ys << ", xs=" << n_fixed_xs << "+" << n_linear_xs << ", consts=" << n_fixed_consts << "+"
     << n_linear_consts;
  if (reverse) os << ", reverse";
}

namespace ops {
StdTensorOp scan_adjoint(ScanAdjointAttrs attrs, std::span<const TensorType> operands) {
  return make_op(op_def(OpKind::ScanAdjoint), operands, OpAttrs(std::move(attrs)));
}
}  // namespace ops

namespace detail {
namespace {

TensorType stacked(const TensorType& t, std::int64_t length) {
  Shape shape{length};
  shape.insert(shape.end(), t.shape.begin(), t.shape.end());
  return TensorType{t.dtype, std::move(shape)};
}

/// Offsets of the operand and step-input groups.
struct Groups {
  std::size_t fc, lc, ny, fx, lx, fk, lk;
  explicit Groups(const ScanAdjointAttrs& s)
      : fc(s.n_fixed_carry), lc(s.n_linear_carry), ny(s.n_ys), fx(s.n_fixed_xs), lx(s.n_linear_xs), fk(s.n_fixed_consts),
        lk(s.n_linear_consts) {}
  // Operands: [fixed carry, ct linear carry, ct ys, fixed xs, fixed consts].
  std::size_t op_ct_carry() const { return fc; }
  std::size_t op_ct_ys() const { return fc + lc; }
  std::size_t op_xs() const { return fc + lc + ny; }
  std::size_t op_consts() const { return fc + lc + ny + fx; }
  std::size_t operands() const { return fc + lc + ny + fx + fk; }
  // Step inputs: [fixed carry, linear carry, fixed x, linear x, fixed consts, linear consts].
  std::size_t in_fx() const { return fc + lc; }
  std::size_t in_lx() const { return fc + lc + fx; }
  std::size_t in_fk() const { return fc + lc + fx + lx; }
  std::size_t in_lk() const { return fc + lc + fx + lx + fk; }
};

/// The operand types the attributes call for (from the step body's types).
std::vector<TensorType> expected_operands(const ScanAdjointAttrs& s) {
  const Groups g(s);
  const auto in = region_input_types(s.step.region), out = region_output_types(s.step.region);
  if (in.size() != g.in_lk() + g.lk || out.size() != g.fc + g.lc + g.ny) {
    throw ShapeError("scan_adjoint: the step body takes " + std::to_string(in.size()) + " inputs and returns " +
                     std::to_string(out.size()) + "; the counts call for " + std::to_string(g.in_lk() + g.lk) + " and " +
                     std::to_string(g.fc + g.lc + g.ny));
  }
  std::vector<TensorType> t(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(g.fc + g.lc));
  for (std::size_t j = 0; j < g.ny; ++j) t.push_back(stacked(out[g.fc + g.lc + j], s.length));
  for (std::size_t j = 0; j < g.fx; ++j) t.push_back(stacked(in[g.in_fx() + j], s.length));
  for (std::size_t q = 0; q < g.fk; ++q) t.push_back(in[g.in_fk() + q]);
  return t;
}

std::vector<TensorType> adjoint_shape(Types t, const OpAttrs& a) {
  const auto& s = a.get<ScanAdjointAttrs>();
  const Groups g(s);
  if (s.length < 0) throw ShapeError("scan_adjoint: the length " + std::to_string(s.length) + " is negative");
  if (s.snapshots < 1) throw ValueError("scan_adjoint: snapshots is " + std::to_string(s.snapshots) + "; expected at least 1");
  const auto expected = expected_operands(s);
  if (std::vector<TensorType>(t.begin(), t.end()) != expected) {
    throw ShapeError("scan_adjoint: the operands are (" + types_list(t) + "); the bodies call for (" + types_list(expected) + ")");
  }
  const auto in = region_input_types(s.step.region);
  std::vector<TensorType> results(in.begin() + static_cast<std::ptrdiff_t>(g.fc), in.begin() + static_cast<std::ptrdiff_t>(g.fc + g.lc));
  for (std::size_t q = 0; q < g.lk; ++q) results.push_back(in[g.in_lk() + q]);
  for (std::size_t j = 0; j < g.lx; ++j) results.push_back(stacked(in[g.in_lx() + j], s.length));
  return results;
}

/// The address of step t of a stacked tensor.
void* step_address(const Tensor& stacked_tensor, std::int64_t t, std::int64_t length) {
  const auto* base = static_cast<const std::byte*>(stacked_tensor.raw_data());
  return const_cast<std::byte*>(base) + static_cast<std::size_t>(t) * (stacked_tensor.nbytes() / static_cast<std::size_t>(length));
}

/// A view of step 0 of a stacked tensor, moved along it with repoint_view.
Tensor step_view(const Tensor& stacked_tensor) {
  TensorType type{stacked_tensor.dtype(), Shape(stacked_tensor.shape().begin() + 1, stacked_tensor.shape().end())};
  return Tensor::wrap(std::move(type), const_cast<void*>(stacked_tensor.raw_data()), std::make_shared<Tensor>(stacked_tensor));
}

void eval_scan_adjoint(const StdTensorOp& op, Operands in, std::span<Tensor> out) {
  const auto& s = op.attrs.get<ScanAdjointAttrs>();
  const Groups g(s);
  const std::int64_t n = s.length;
  for (std::size_t j = 0; j < g.lx; ++j) out[g.lc + g.lk + j] = Tensor::uninitialized(op.output_type(g.lc + g.lk + j));
  // The adjoint body's inputs [ct linear carry, accumulators, ct y_t, fixed carry, fixed x_t,
  // fixed consts] and outputs [ct linear carry, accumulators, ct linear x_t]; the primal body's
  // inputs [fixed carry, fixed x_t, fixed consts].
  const std::size_t a_acc = g.lc, a_cty = g.lc + g.lk, a_c = a_cty + g.ny, a_x = a_c + g.fc, a_k = a_x + g.fx;
  std::vector<Tensor> aargs(a_k + g.fk), pargs(g.fc + g.fx + g.fk);
  for (std::size_t i = 0; i < g.lc; ++i) aargs[i] = *in[g.op_ct_carry() + i];
  for (std::size_t q = 0; q < g.lk; ++q) {
    const TensorType& t = op.output_type(g.lc + q);
    aargs[a_acc + q] = Tensor::zeros(t.shape, t.dtype);
  }
  for (std::size_t q = 0; q < g.fk; ++q) aargs[a_k + q] = pargs[g.fc + g.fx + q] = *in[g.op_consts() + q];
  if (n > 0) {
    for (std::size_t j = 0; j < g.ny; ++j) aargs[a_cty + j] = step_view(*in[g.op_ct_ys() + j]);
    for (std::size_t j = 0; j < g.fx; ++j) aargs[a_x + j] = pargs[g.fc + j] = step_view(*in[g.op_xs() + j]);
  }
  std::vector<Tensor> into(g.lc + g.lk + g.lx);
  for (std::size_t j = 0; j < g.lx && n > 0; ++j) into[g.lc + g.lk + j] = step_view(out[g.lc + g.lk + j]);
  // Two sets of buffers for the carried cotangents and accumulators, written alternately.
  std::vector<Tensor> buffers[2];
  for (auto& set : buffers) {
    for (std::size_t k = 0; k < g.lc + g.lk; ++k) set.push_back(n > 0 ? Tensor::uninitialized(op.output_type(k)) : Tensor());
  }
  const std::int64_t snapshots = std::min(s.snapshots, std::max<std::int64_t>(n - 1, 0));
  std::vector<std::vector<Tensor>> slots(static_cast<std::size_t>(snapshots) + 2);
  for (std::size_t i = 0; i < g.fc; ++i) slots[0].push_back(*in[i]);
  const auto primal = body_executable(s.primal), adjoint = body_executable(s.adjoint);
  auto data_index = [&](std::int64_t step) { return s.reverse ? n - 1 - step : step; };
  std::int64_t turns = 0;
  ReverseSweep sweep;
  // Two sets of state buffers for the steps of an advance that are not kept; the state it ends
  // on is a fresh set, which its slot keeps.
  std::vector<Tensor> scratch[2];
  for (auto& set : scratch) {
    for (std::size_t i = 0; i < g.fc && n > 1; ++i) set.push_back(Tensor::uninitialized(in[i]->type()));
  }
  sweep.advance = [&](std::int64_t from_slot, std::int64_t from, std::int64_t to, std::int64_t into_slot) {
    const auto& start = slots[static_cast<std::size_t>(from_slot)];
    std::copy(start.begin(), start.end(), pargs.begin());
    for (std::int64_t step = from; step < to; ++step) {
      const std::int64_t t = data_index(step);
      for (std::size_t j = 0; j < g.fx; ++j) repoint_view(pargs[g.fc + j], step_address(*in[g.op_xs() + j], t, n));
      if (step + 1 == to) {
        slots[static_cast<std::size_t>(into_slot)] = primal.run(pargs);
      } else {
        auto& next = scratch[step % 2];
        primal.run(pargs, next);
        std::copy(next.begin(), next.end(), pargs.begin());
      }
    }
  };
  sweep.turn = [&](std::int64_t slot, std::int64_t step) {
    const std::int64_t t = data_index(step);
    const auto& state = slots[static_cast<std::size_t>(slot)];
    std::copy(state.begin(), state.end(), aargs.begin() + static_cast<std::ptrdiff_t>(a_c));
    for (std::size_t j = 0; j < g.ny; ++j) repoint_view(aargs[a_cty + j], step_address(*in[g.op_ct_ys() + j], t, n));
    for (std::size_t j = 0; j < g.fx; ++j) repoint_view(aargs[a_x + j], step_address(*in[g.op_xs() + j], t, n));
    for (std::size_t j = 0; j < g.lx; ++j) repoint_view(into[g.lc + g.lk + j], step_address(out[g.lc + g.lk + j], t, n));
    auto& next = buffers[turns++ % 2];
    std::copy(next.begin(), next.end(), into.begin());
    adjoint.run(aargs, into);
    std::copy(next.begin(), next.end(), aargs.begin());
  };
  reverse_with_snapshots(n, snapshots, sweep);
  for (std::size_t k = 0; k < g.lc + g.lk; ++k) out[k] = n == 0 && k < g.lc ? aargs[k].clone() : aargs[k];
}

/// What a run holds beyond its results (OpDef::running_bytes): the stored and scratch states, the
/// advance's two state buffers, one of the two sets of carried cotangents and accumulators (the
/// other ends as the results), and the larger of its bodies' plans (the kernel above).
std::size_t running_bytes(const StdTensorOp& op) {
  const auto& s = op.attrs.get<ScanAdjointAttrs>();
  const Groups g(s);
  const std::int64_t n = s.length;
  auto bytes = [](const TensorType& t) { return static_cast<std::size_t>(numel(t.shape)) * dtype_size(t.dtype); };
  const auto step_in = region_input_types(s.step.region);
  std::size_t state = 0, carried = 0;
  for (std::size_t i = 0; i < g.fc; ++i) state += bytes(step_in[i]);
  for (std::size_t k = 0; k < g.lc + g.lk; ++k) carried += bytes(op.output_type(k));
  const std::int64_t snapshots = std::min(s.snapshots, std::max<std::int64_t>(n - 1, 0));
  std::size_t held = static_cast<std::size_t>(revolve_slots_used(n, snapshots)) * state;
  if (n > 1) held += 2 * state;
  if (n > 0) held += carried;  // the other set becomes the results
  return held + std::max(body_planned_transient_bytes(s.primal.region.graph()), body_planned_transient_bytes(s.adjoint.region.graph()));
}

/// The op as plain scans (see the file's comment): the region from the operands to the results.
Region expanded(const ScanAdjointAttrs& s) {
  const Groups g(s);
  const auto operand_types = expected_operands(s);
  const auto step_in = region_input_types(s.step.region);
  BodyBuilder bb;
  std::vector<ValueId> in;
  for (const TensorType& t : operand_types) in.push_back(bb.input(t));
  auto types_of_ids = [&](std::span<const ValueId> ids) {
    std::vector<TensorType> types;
    for (ValueId v : ids) types.push_back(bb.type(v));
    return types;
  };
  // The forward scan: the primal body, stacking the state before each step.
  BodyBuilder pb;
  std::vector<ValueId> pin;
  for (std::size_t i = 0; i < g.fc; ++i) pin.push_back(pb.input(step_in[i]));
  for (std::size_t j = 0; j < g.fx; ++j) pin.push_back(pb.input(step_in[g.in_fx() + j]));
  for (std::size_t q = 0; q < g.fk; ++q) pin.push_back(pb.input(step_in[g.in_fk() + q]));
  std::vector<ValueId> pout = pb.replay(*s.primal.region.graph(), pin);
  pout.insert(pout.end(), pin.begin(), pin.begin() + static_cast<std::ptrdiff_t>(g.fc));
  std::vector<ValueId> fwd_in(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(g.fc));
  fwd_in.insert(fwd_in.end(), in.begin() + static_cast<std::ptrdiff_t>(g.op_xs()), in.end());
  ScanAttrs forward{Body(pb.finish(std::move(pout), "scan_adjoint")), s.length, s.reverse, static_cast<std::uint32_t>(g.fc),
                    static_cast<std::uint32_t>(g.fx), static_cast<std::uint32_t>(g.fk)};
  const auto states = bb.primal(ops::scan(std::move(forward), types_of_ids(fwd_in)), fwd_in);
  // The reverse scan of the adjoint body over them.
  std::vector<ValueId> rev_in(in.begin() + static_cast<std::ptrdiff_t>(g.op_ct_carry()),
                              in.begin() + static_cast<std::ptrdiff_t>(g.op_ct_ys()));
  for (std::size_t q = 0; q < g.lk; ++q) rev_in.push_back(bb.zeros(step_in[g.in_lk() + q]));
  rev_in.insert(rev_in.end(), in.begin() + static_cast<std::ptrdiff_t>(g.op_ct_ys()), in.begin() + static_cast<std::ptrdiff_t>(g.op_xs()));
  rev_in.insert(rev_in.end(), states.begin() + static_cast<std::ptrdiff_t>(g.fc), states.end());
  rev_in.insert(rev_in.end(), in.begin() + static_cast<std::ptrdiff_t>(g.op_xs()), in.end());
  ScanAttrs backward{s.adjoint, s.length, !s.reverse, static_cast<std::uint32_t>(g.lc + g.lk),
                     static_cast<std::uint32_t>(g.ny + g.fc + g.fx), static_cast<std::uint32_t>(g.fk)};
  auto results = bb.primal(ops::scan(std::move(backward), types_of_ids(rev_in)), rev_in);
  return bb.finish(std::move(results), "scan_adjoint");
}

/// The JVP: the expansion's, recorded as a checkpoint cond linear in the tangents.
Tangents jvp_scan_adjoint(const StdTensorOp& op, const JvpArgs& a) {
  const auto& s = op.attrs.get<ScanAdjointAttrs>();
  const std::size_t n = op.input_count(), m = op.output_count();
  const Region e = expanded(s);
  const auto types = region_input_types(e);
  std::vector<bool> active(n);
  for (std::size_t i = 0; i < n; ++i) active[i] = a.t[i].has_value();
  const JvpBody jvp = jvp_body(e, active);
  Tangents result(m);
  if (std::none_of(jvp.present.begin(), jvp.present.end(), [](bool p) { return p; })) return result;
  // Branch inputs: [tangents of the active operands..., operands...].
  BodyBuilder bb;
  std::vector<ValueId> tangents, args;
  for (std::size_t i = 0; i < n; ++i) if (active[i]) tangents.push_back(bb.input(types[i]));
  for (std::size_t i = 0; i < n; ++i) args.push_back(bb.input(types[i]));
  args.insert(args.end(), tangents.begin(), tangents.end());
  CondAttrs linear;
  linear.checkpoint = true;
  linear.branches.emplace_back(bb.finish(bb.replay(jvp.graph, args), "scan_adjoint"));
  RuleTrace rule(a.b);
  std::vector<Traced> operands{rule.zeros(TensorType{DType::I64, {}})};  // the branch index
  for (std::size_t i = 0; i < n; ++i) if (active[i]) operands.push_back(rule.linear(*a.t[i]));
  for (std::size_t i = 0; i < n; ++i) operands.push_back(rule.fixed(a.x[i]));
  linear.n_operands = static_cast<std::uint32_t>(operands.size() - 1);
  const std::vector<Traced> linear_results = apply_outputs(ops::cond(std::move(linear), types_of(operands)), operands);
  for (std::size_t j = 0, next = 0; j < m; ++j) {
    if (jvp.present[j]) result[j] = rule.result(linear_results[next++], op, tidu::RuleKind::Jvp);
  }
  return result;
}

/// The transpose: the checkpointed linear scan this op is the transpose of.
Tangents transpose_scan_adjoint(const StdTensorOp& op, const TransposeArgs& a) {
  const auto& s = op.attrs.get<ScanAdjointAttrs>();
  const Groups g(s);
  for (std::size_t i = 0; i < g.fc; ++i) if (a.role.is_active(i)) not_linear(op, "the fixed carry is not a linear operand");
  for (std::size_t i = g.op_xs(); i < g.operands(); ++i) {
    if (a.role.is_active(i)) not_linear(op, "the fixed xs and consts are not linear operands");
  }
  const auto step_in = region_input_types(s.step.region);
  RuleTrace rule(a.b);
  std::vector<Traced> operands;
  auto cotangent = [&](std::size_t result, const TensorType& type) {
    operands.push_back(rule.linear_or_zeros(a.cts[result], type));
  };
  for (std::size_t i = 0; i < g.fc; ++i) operands.push_back(rule.fixed(a.x[i]));
  for (std::size_t i = 0; i < g.lc; ++i) cotangent(i, step_in[g.fc + i]);
  for (std::size_t j = 0; j < g.fx; ++j) operands.push_back(rule.fixed(a.x[g.op_xs() + j]));
  for (std::size_t j = 0; j < g.lx; ++j) cotangent(g.lc + g.lk + j, op.output_type(g.lc + g.lk + j));
  for (std::size_t q = 0; q < g.fk; ++q) operands.push_back(rule.fixed(a.x[g.op_consts() + q]));
  for (std::size_t q = 0; q < g.lk; ++q) cotangent(g.lc + q, step_in[g.in_lk() + q]);
  ScanAttrs linear{s.step, s.length, s.reverse, static_cast<std::uint32_t>(g.fc + g.lc), static_cast<std::uint32_t>(g.fx + g.lx),
                   static_cast<std::uint32_t>(g.fk + g.lk), s.snapshots, static_cast<std::uint32_t>(g.fc)};
  const std::vector<Traced> results = apply_outputs(ops::scan(std::move(linear), types_of(operands)), operands);
  auto transposed = [&](std::size_t k) { return rule.result(results[k], op, tidu::RuleKind::Transpose); };
  // The scan's results: [fixed carry', linear carry', ys].
  Tangents result(g.operands());
  for (std::size_t i = 0; i < g.lc; ++i) if (a.role.is_active(g.op_ct_carry() + i)) result[g.op_ct_carry() + i] = transposed(g.fc + i);
  for (std::size_t j = 0; j < g.ny; ++j) if (a.role.is_active(g.op_ct_ys() + j)) result[g.op_ct_ys() + j] = transposed(g.fc + g.lc + j);
  return result;
}

/// vmap: the expansion, batched.
std::vector<BatchedValue> batch_scan_adjoint(const StdTensorOp& op, std::span<const BatchedValue> x, std::int64_t batch_size) {
  const Region e = expanded(op.attrs.get<ScanAdjointAttrs>());
  return batch_graph(*e.graph(), x, batch_size, x[0].value);
}

}  // namespace

const OpDef& def_ScanAdjoint() {
  static const OpDef d{
      .name = "scan_adjoint", .kind = OpKind::ScanAdjoint, .operands = {}, .outputs = 0, .shape_rule = adjoint_shape,
      .kernel = eval_scan_adjoint, .jvp = jvp_scan_adjoint, .transpose = transpose_scan_adjoint,
      .variadic_arity = [](const OpAttrs& a) -> std::size_t { return Groups(a.get<ScanAdjointAttrs>()).operands(); },
      .regions = [](const StdTensorOp& op) {
        const auto& s = op.attrs.get<ScanAdjointAttrs>();
        return std::vector<computegraph::GraphPtr<StdTensorOp>>{s.primal.region.graph(), s.adjoint.region.graph(),
                                                                s.step.region.graph()};
      },
      .running_bytes = running_bytes,
      .batch = batch_scan_adjoint};
  return d;
}

}  // namespace detail
}  // namespace tenferro
