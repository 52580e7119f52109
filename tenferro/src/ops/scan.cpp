// scan: a loop over a leading axis with a carried state, one primitive carrying its body as a
// region. Order: shape rule, kernel, JVP rule, transpose rule, definition.
//
// Operands [carry..., xs..., consts...]; the body takes [carry..., x_t..., consts...] and returns
// [carry'..., y_t...]; results [final carry..., ys...] with ys stacked along a new leading axis
// (ys[t] = y_t whatever the direction).
//
// Derivatives. The JVP is split so that reverse mode can transpose it (partial evaluation): the
// body's JVP is divided into the operations that do not depend on the tangents and those that do.
// - A primal scan runs the body and stacks, per step, the residuals: the primal values that the
//   linear operations read (the step's carry, intermediate values such as a gate's activation).
//   Values read from x_t or the consts come from the scan's own operands, constants are recomputed.
// - A scan linear in the tangents (carry tangents, xs tangents, consts tangents) runs only the
//   linear operations, reading the residuals as xs.
// The transpose of a linear scan is a scan in the other direction of the transposed body: the
// carry's cotangent flows back step by step, the consts' cotangents are summed in extra carries,
// and the xs' cotangents are stacked. Both derived scans are scans again, so their JVPs and
// transposes come from these same rules: every order works.
//
// Batching (vmap): one scan of the batched body. A carry is batched if it is on entry or becomes
// so in the body (a fixed point over depends_on); batched xs are scanned along their second axis
// (moved first for the scan, the batch second), and batched ys are moved back to batch-first.
#include <algorithm>
#include <numeric>

#include "computegraph/unzip.hpp"
#include "ir/batching.hpp"
#include "ir/family.hpp"
#include "regions/bodies.hpp"
#include "regions/region_runner.hpp"
#include "regions/steps.hpp"
#include "tenferro/control_flow.hpp"
#include "tenferro/ops/rule.hpp"

namespace tenferro {

std::size_t ScanAttrs::hash() const {
  std::size_t h = hash_mix(body.region.hash(), static_cast<std::size_t>(length));
  h = hash_mix(h, reverse);
  h = hash_mix(h, n_carry);
  h = hash_mix(h, n_xs);
  h = hash_mix(h, static_cast<std::size_t>(snapshots));
  h = hash_mix(h, n_fixed_carry);
  return hash_mix(h, n_consts);
}
void ScanAttrs::print(std::ostream& os) const {
  os << "length=" << length << ", carry=" << n_carry << ", xs=" << n_xs << ", consts=" << n_consts;
  if (reverse) os << ", reverse";
  if (snapshots > 0) os << ", snapshots=" << snapshots;
  if (n_fixed_carry > 0) os << ", fixed_carry=" << n_fixed_carry;
}

namespace ops {
StdTensorOp scan(ScanAttrs attrs, std::span<const TensorType> operands) {
  return make_op(op_def(OpKind::Scan), operands, OpAttrs(std::move(attrs)));
}
}  // namespace ops

namespace detail {
namespace {

std::vector<TensorType> scan_shape(Types t, const OpAttrs& a) {
  const auto& s = a.get<ScanAttrs>();
  const std::size_t nc = s.n_carry, nx = s.n_xs, nk = s.n_consts;
  const auto in = region_input_types(s.body.region);
  const auto out = region_output_types(s.body.region);
  auto fail = [&](const std::string& what) -> void {
    throw ShapeError("scan: " + what + " (operands " + types_list(t) + "; body inputs " + types_list(in) +
                     ", outputs " + types_list(out) + ")");
  };
  if (s.length < 0) fail("the length " + std::to_string(s.length) + " is negative");
  if (s.snapshots < 0) fail("snapshots " + std::to_string(s.snapshots) + " is negative");
  if (s.n_fixed_carry > s.n_carry) fail("more fixed carries than carries");
  if (in.size() != nc + nx + nk) fail("the body takes " + std::to_string(in.size()) + " inputs, expected " + std::to_string(nc + nx + nk));
  if (out.size() < nc) fail("the body returns fewer values than the carry has");
  std::vector<TensorType> results;
  for (std::size_t i = 0; i < nc; ++i) {
    if (t[i] != in[i] || out[i] != in[i]) {
      fail("carry " + std::to_string(i) + " is " + t[i].to_string() + " but the body takes " + in[i].to_string() +
           " and returns " + out[i].to_string() + "; the carry must keep its type");
    }
    results.push_back(t[i]);
  }
  for (std::size_t j = 0; j < nx; ++j) {
    const TensorType& x = t[nc + j];
    if (x.rank() == 0 || x.shape[0] != s.length) {
      fail("xs " + std::to_string(j) + " is " + x.to_string() + "; expected a leading axis of the length " +
           std::to_string(s.length));
    }
    TensorType slice{x.dtype, Shape(x.shape.begin() + 1, x.shape.end())};
    if (slice != in[nc + j]) fail("xs " + std::to_string(j) + " slices to " + slice.to_string() + " but the body takes " + in[nc + j].to_string());
  }
  for (std::size_t k = 0; k < nk; ++k) {
    if (t[nc + nx + k] != in[nc + nx + k]) fail("const " + std::to_string(k) + " does not match the body's input");
  }
  for (std::size_t j = nc; j < out.size(); ++j) {
    Shape shape{s.length};
    shape.insert(shape.end(), out[j].shape.begin(), out[j].shape.end());
    results.push_back(TensorType{out[j].dtype, std::move(shape)});
  }
  if (results.empty()) fail("a scan needs a carry or an output");
  return results;
}

void eval_scan(const StdTensorOp& op, Operands in, std::span<Tensor> out) {
  const auto& s = op.attrs.get<ScanAttrs>();
  std::vector<bool> stacked(s.n_xs, true);
  stacked.resize(s.n_xs + s.n_consts, false);
  std::vector<TensorType> types;
  for (std::size_t j = 0; j < out.size(); ++j) types.push_back(op.output_type(j));
  run_steps(body_executable(s.body), s.length, s.reverse, s.n_carry, stacked, in, types, out);
}

/// Carries that carry a tangent: those whose initial value has one, and then every carry the
/// body's new carry makes depend on an active input (a fixed point over the steps). Integer and
/// bool carries never do.
std::vector<bool> active_carries(const ScanAttrs& s, std::vector<bool> active) {
  const auto& g = *s.body.region.graph();
  const auto types = region_input_types(s.body.region);
  for (;;) {
    const auto dep = depends_on(g, active);
    bool changed = false;
    for (std::size_t i = 0; i < s.n_carry; ++i) {
      if (!active[i] && dep[i] && is_inexact(types[i].dtype)) active[i] = changed = true;
    }
    if (!changed) return active;
  }
}

Tangents jvp_checkpointed(const StdTensorOp& op, const JvpArgs& a, const std::vector<bool>& active, const JvpBody& jvp);

Tangents jvp_scan(const StdTensorOp& op, const JvpArgs& a) {
  const auto& s = op.attrs.get<ScanAttrs>();
  const std::size_t nc = s.n_carry, nx = s.n_xs, nk = s.n_consts, ny = op.output_count() - nc;
  const auto in_types = region_input_types(s.body.region);
  std::vector<bool> active(nc + nx + nk);
  for (std::size_t i = 0; i < active.size(); ++i) active[i] = a.t[i].has_value();
  active = active_carries(s, active);
  const JvpBody jvp = jvp_body(s.body.region, active);
  Tangents result(op.output_count());
  bool any = false;
  for (std::size_t j = 0; j < nc + ny; ++j) any = any || jvp.present[j] || (j < nc && active[j]);
  if (!any) return result;
  if (s.snapshots > 0) return jvp_checkpointed(op, a, active, jvp);
  RuleTrace rule(a.b);
  const Materialized& m = jvp.graph;
  // Partial evaluation of the body's JVP (computegraph::unzip): its primal half (what reads no
  // tangent) runs in the primal scan, its linear half in the linear scan. Constants are computed
  // where they are read instead of crossing; of the residuals that cross, x_t and the consts are
  // read from the scan's own operands, and the others (carries, computed values) are stacked per
  // step by the primal scan and read back by the linear scan.
  const std::size_t n_primal = nc + nx + nk;
  std::vector<std::size_t> tangent_inputs(m.inputs().size() - n_primal);
  std::iota(tangent_inputs.begin(), tangent_inputs.end(), n_primal);
  const auto u = computegraph::unzip(
      m, std::span<const std::size_t>(tangent_inputs),
      [](const computegraph::ValueKey<StdTensorOp>& value, std::size_t index) { return StdTensorOp::residual_key(value, index); },
      computegraph::UnzipOptions{.recompute_constants = true});
  std::vector<int> input_of(m.values().size(), -1);
  for (std::size_t i = 0; i < n_primal; ++i) input_of[m.inputs()[i]] = static_cast<int>(i);
  std::vector<std::size_t> residuals, xs, consts;  // positions in u.residual_values; x and const indices
  for (std::size_t k = 0; k < u.residual_values.size(); ++k) {
    const int i = input_of[u.residual_values[k]];
    if (i >= static_cast<int>(nc) && i < static_cast<int>(nc + nx)) xs.push_back(static_cast<std::size_t>(i) - nc);
    else if (i >= static_cast<int>(nc + nx)) consts.push_back(static_cast<std::size_t>(i) - nc - nx);
    else residuals.push_back(k);  // a carry or a computed value
  }
  auto type_of_residual = [&](std::size_t k) { return type_of(m.values()[u.residual_values[k]].key); };

  // The primal scan: the body (on its own input keys, so that its results keep their keys and
  // the executor's merge_scans runs it once with the primal scan), plus every stacked residual as
  // a stacked output.
  std::vector<Traced> stacked;
  if (!residuals.empty()) {
    BodyBuilder rb;
    std::vector<ValueId> args;
    for (const auto& k : s.body.region.input_keys()) args.push_back(rb.input(k.input_key()));
    auto outs = rb.replay(*s.body.region.graph(), args);
    const auto primal_half = rb.replay(u.fixed, std::span<const ValueId>(args.data(), n_primal));
    for (std::size_t k : residuals) outs.push_back(primal_half[k]);
    ScanAttrs r{Body(rb.finish(std::move(outs), "scan")), s.length, s.reverse, s.n_carry, s.n_xs, s.n_consts};
    std::vector<Traced> operands;
    for (const auto& x : a.x) operands.push_back(rule.fixed(x));
    const std::vector<Traced> results = apply_outputs(ops::scan(std::move(r), types_of(operands)), operands);
    stacked.assign(results.begin() + static_cast<std::ptrdiff_t>(nc + ny), results.end());
  }

  // The linear scan: the linear half. Body inputs: [tangent carries, tangent x_t, residuals_t,
  // needed x_t, tangent consts, needed consts].
  BodyBuilder lb;
  std::vector<ValueId> half_args(u.varying.inputs().size());  // [residuals..., tangents...]
  std::vector<ValueId> tangents;
  for (std::size_t i = 0; i < nc; ++i) if (active[i]) tangents.push_back(lb.input(in_types[i]));
  std::vector<ValueId> tx;
  for (std::size_t j = 0; j < nx; ++j) if (active[nc + j]) tx.push_back(lb.input(in_types[nc + j]));
  for (std::size_t k : residuals) half_args[k] = lb.input(type_of_residual(k));
  auto residual_of_input = [&](std::size_t input) {  // the residual position that holds m's input
    const auto at = std::find(u.residual_values.begin(), u.residual_values.end(), m.inputs()[input]);
    return static_cast<std::size_t>(at - u.residual_values.begin());
  };
  for (std::size_t j : xs) half_args[residual_of_input(nc + j)] = lb.input(in_types[nc + j]);
  std::vector<ValueId> tk;
  for (std::size_t q = 0; q < nk; ++q) if (active[nc + nx + q]) tk.push_back(lb.input(in_types[nc + nx + q]));
  for (std::size_t q : consts) half_args[residual_of_input(nc + nx + q)] = lb.input(in_types[nc + nx + q]);
  tangents.insert(tangents.end(), tx.begin(), tx.end());
  tangents.insert(tangents.end(), tk.begin(), tk.end());
  for (std::size_t i = 0; i < tangents.size(); ++i) half_args[u.residual_count() + i] = tangents[i];
  const auto linear_half = lb.replay(u.varying, half_args);
  std::vector<std::optional<ValueId>> per_output(nc + ny);
  for (std::size_t j = 0, next = 0; j < nc + ny; ++j) {
    if (jvp.present[j]) per_output[j] = linear_half[next++];
  }
  std::vector<ValueId> outs;
  for (std::size_t i = 0; i < nc; ++i) {
    if (active[i]) outs.push_back(per_output[i] ? *per_output[i] : lb.zeros(in_types[i]));
  }
  std::vector<std::size_t> ys_with_tangent;
  for (std::size_t j = 0; j < ny; ++j) {
    if (!per_output[nc + j]) continue;
    outs.push_back(*per_output[nc + j]);
    ys_with_tangent.push_back(j);
  }

  std::vector<Traced> operands;
  for (std::size_t i = 0; i < nc; ++i) if (active[i]) operands.push_back(rule.linear_or_zeros(a.t[i], in_types[i]));
  for (std::size_t j = 0; j < nx; ++j) if (active[nc + j]) operands.push_back(rule.linear(*a.t[nc + j]));
  operands.insert(operands.end(), stacked.begin(), stacked.end());
  for (std::size_t j : xs) operands.push_back(rule.fixed(a.x[nc + j]));
  for (std::size_t q = 0; q < nk; ++q) if (active[nc + nx + q]) operands.push_back(rule.linear(*a.t[nc + nx + q]));
  for (std::size_t q : consts) operands.push_back(rule.fixed(a.x[nc + nx + q]));
  const std::size_t n_tc = tangents.size() - tx.size() - tk.size();
  ScanAttrs linear{Body(lb.finish(std::move(outs), "scan")), s.length, s.reverse, static_cast<std::uint32_t>(n_tc),
                   static_cast<std::uint32_t>(tx.size() + residuals.size() + xs.size()),
                   static_cast<std::uint32_t>(tk.size() + consts.size())};
  const std::vector<Traced> tangent_results = apply_outputs(ops::scan(std::move(linear), types_of(operands)), operands);
  std::size_t r = 0;
  for (std::size_t i = 0; i < nc; ++i) if (active[i]) result[i] = rule.result(tangent_results[r++], op, tidu::RuleKind::Jvp);
  for (std::size_t j : ys_with_tangent) result[nc + j] = rule.result(tangent_results[r++], op, tidu::RuleKind::Jvp);
  return result;
}

/// The JVP of a checkpointed scan (ScanAttrs::snapshots >= 1): no residuals cross. One linear
/// scan runs the whole JVP of the step, carrying the primal state as fixed carries beside the
/// tangents; its transpose (scan_adjoint) recomputes that state by the binomial schedule. Body
/// inputs [carry, tangent carries, x_t, tangent x_t, consts, tangent consts] (the tangents of the
/// active ones), outputs [carry', tangent carries', tangent y_t (those present)].
Tangents jvp_checkpointed(const StdTensorOp& op, const JvpArgs& a, const std::vector<bool>& active, const JvpBody& jvp) {
  const auto& s = op.attrs.get<ScanAttrs>();
  const std::size_t nc = s.n_carry, nx = s.n_xs, nk = s.n_consts, ny = op.output_count() - nc;
  const auto in_types = region_input_types(s.body.region);
  BodyBuilder lb;
  std::vector<ValueId> primal, tangents;  // in the region's input order
  std::vector<std::size_t> groups{0, nc, nc + nx, nc + nx + nk};
  for (std::size_t g = 0; g < 3; ++g) {
    for (std::size_t i = groups[g]; i < groups[g + 1]; ++i) primal.push_back(lb.input(in_types[i]));
    for (std::size_t i = groups[g]; i < groups[g + 1]; ++i) if (active[i]) tangents.push_back(lb.input(in_types[i]));
  }
  std::vector<ValueId> outs = lb.replay(*s.body.region.graph(), primal);
  outs.resize(nc);
  std::vector<ValueId> args = primal;
  args.insert(args.end(), tangents.begin(), tangents.end());
  const auto tangent_outs = lb.replay(jvp.graph, args);
  std::vector<std::optional<ValueId>> per_output(nc + ny);
  for (std::size_t j = 0, next = 0; j < nc + ny; ++j) {
    if (jvp.present[j]) per_output[j] = tangent_outs[next++];
  }
  std::size_t n_tc = 0;
  for (std::size_t i = 0; i < nc; ++i) {
    if (!active[i]) continue;
    outs.push_back(per_output[i] ? *per_output[i] : lb.zeros(in_types[i]));
    ++n_tc;
  }
  std::vector<std::size_t> ys_with_tangent;
  for (std::size_t j = 0; j < ny; ++j) {
    if (!per_output[nc + j]) continue;
    outs.push_back(*per_output[nc + j]);
    ys_with_tangent.push_back(j);
  }

  RuleTrace rule(a.b);
  std::vector<Traced> operands;
  std::size_t n_tangents[3] = {0, 0, 0};
  for (std::size_t g = 0; g < 3; ++g) {
    for (std::size_t i = groups[g]; i < groups[g + 1]; ++i) operands.push_back(rule.fixed(a.x[i]));
    for (std::size_t i = groups[g]; i < groups[g + 1]; ++i) {
      if (!active[i]) continue;
      ++n_tangents[g];
      // Zeros for a carry that becomes active in the body.
      operands.push_back(rule.linear_or_zeros(a.t[i], in_types[i]));
    }
  }
  ScanAttrs linear{Body(lb.finish(std::move(outs), "scan")), s.length, s.reverse,
                   static_cast<std::uint32_t>(nc + n_tangents[0]), static_cast<std::uint32_t>(nx + n_tangents[1]),
                   static_cast<std::uint32_t>(nk + n_tangents[2]), s.snapshots, static_cast<std::uint32_t>(nc)};
  const std::vector<Traced> results = apply_outputs(ops::scan(std::move(linear), types_of(operands)), operands);
  auto tangent = [&](std::size_t k) { return rule.result(results[k], op, tidu::RuleKind::Jvp); };
  Tangents result(op.output_count());
  for (std::size_t i = 0, r = nc; i < nc; ++i) if (active[i]) result[i] = tangent(r++);
  for (std::size_t m = 0; m < ys_with_tangent.size(); ++m) result[nc + ys_with_tangent[m]] = tangent(nc + n_tc + m);
  return result;
}

/// The transpose of a checkpointed linear scan (n_fixed_carry >= 1): scan_adjoint, which
/// recomputes the fixed carries by the binomial schedule. Its xs and consts must come fixed first,
/// linear after (the layout jvp_checkpointed makes).
Tangents transpose_checkpointed(const StdTensorOp& op, const TransposeArgs& a) {
  const auto& s = op.attrs.get<ScanAttrs>();
  const std::size_t nc = s.n_carry, nx = s.n_xs, nk = s.n_consts, ny = op.output_count() - nc, nfc = s.n_fixed_carry;
  const auto in_types = region_input_types(s.body.region);
  const auto out_types = region_output_types(s.body.region);
  for (std::size_t i = 0; i < nfc; ++i) if (a.role.is_active(i)) not_linear(op, "a fixed carry is not linear");
  for (std::size_t i = nfc; i < nc; ++i) {
    if (!is_inexact(in_types[i].dtype)) not_linear(op, "an integer carry cannot be linear");
  }
  // Fixed xs and consts come first, the linear ones after: every linear x and const of such a
  // scan is active (jvp_checkpointed passes only tangents that exist), so the split is at the
  // first active one.
  auto first_active = [&](std::size_t begin, std::size_t end) {
    std::size_t k = begin;
    while (k < end && !a.role.is_active(k)) ++k;
    return k;
  };
  const std::size_t nfx = first_active(nc, nc + nx) - nc, nfk = first_active(nc + nx, nc + nx + nk) - nc - nx;
  std::vector<bool> linear(nc + nx + nk, false);
  for (std::size_t i = nfc; i < nc; ++i) linear[i] = true;
  for (std::size_t j = nfx; j < nx; ++j) linear[nc + j] = true;
  for (std::size_t q = nfk; q < nk; ++q) linear[nc + nx + q] = true;
  for (std::size_t i = 0; i < linear.size(); ++i) {
    if (a.role.is_active(i) && !linear[i]) not_linear(op, "a linear x or const before a fixed one");
  }
  const std::size_t nlc = nc - nfc, nlx = nx - nfx, nlk = nk - nfk;

  // The primal body: the step on zero tangents, its fixed carries' results.
  BodyBuilder pb;
  std::vector<ValueId> pargs(nc + nx + nk);
  for (std::size_t i = 0; i < pargs.size(); ++i) {
    if (!linear[i]) pargs[i] = pb.input(in_types[i]);
  }
  for (std::size_t i = 0; i < pargs.size(); ++i) {
    if (linear[i]) pargs[i] = pb.zeros(in_types[i]);
  }
  auto pout = pb.replay(*s.body.region.graph(), pargs);
  pout.resize(nfc);
  Body primal(pb.finish(std::move(pout), "scan"));

  // The adjoint body: the transpose of the step's linear results.
  BodyBuilder sb;
  std::vector<ValueId> sargs;
  for (const TensorType& t : in_types) sargs.push_back(sb.input(t));
  auto sout = sb.replay(*s.body.region.graph(), sargs);
  sout.erase(sout.begin(), sout.begin() + static_cast<std::ptrdiff_t>(nfc));
  const TransposedBody tb = transpose_body(sb.finish(std::move(sout), "scan"), linear);
  BodyBuilder bb;
  std::vector<ValueId> ct_c, acc, ct_y, fixed;
  for (std::size_t i = nfc; i < nc; ++i) ct_c.push_back(bb.input(in_types[i]));
  for (std::size_t q = nfk; q < nk; ++q) acc.push_back(bb.input(in_types[nc + nx + q]));
  for (std::size_t j = 0; j < ny; ++j) ct_y.push_back(bb.input(out_types[nc + j]));
  for (std::size_t i = 0; i < linear.size(); ++i) if (!linear[i]) fixed.push_back(bb.input(in_types[i]));
  std::vector<ValueId> targs = ct_c;
  targs.insert(targs.end(), ct_y.begin(), ct_y.end());
  targs.insert(targs.end(), fixed.begin(), fixed.end());
  const auto cts = bb.replay(tb.graph, targs);
  std::vector<std::optional<ValueId>> per_linear;  // over the linear inputs, in input order
  for (std::size_t next = 0; bool reached : tb.reached) per_linear.push_back(reached ? std::optional<ValueId>(cts[next++]) : std::nullopt);
  std::vector<ValueId> outs;
  for (std::size_t i = 0; i < nlc; ++i) outs.push_back(per_linear[i] ? *per_linear[i] : bb.zeros(in_types[nfc + i]));
  for (std::size_t m = 0; m < nlk; ++m) {
    const auto& ct = per_linear[nlc + nlx + m];
    outs.push_back(ct ? bb.add(acc[m], *ct) : acc[m]);
  }
  for (std::size_t m = 0; m < nlx; ++m) {
    const auto& ct = per_linear[nlc + m];
    outs.push_back(ct ? *ct : bb.zeros(in_types[nc + nfx + m]));
  }
  Body adjoint(bb.finish(std::move(outs), "scan"));

  RuleTrace rule(a.b);
  std::vector<Traced> operands;
  for (std::size_t i = 0; i < nfc; ++i) operands.push_back(rule.fixed(a.x[i]));
  for (std::size_t i = nfc; i < nc; ++i) operands.push_back(rule.linear_or_zeros(a.cts[i], in_types[i]));
  for (std::size_t j = 0; j < ny; ++j) operands.push_back(rule.linear_or_zeros(a.cts[nc + j], op.output_type(nc + j)));
  for (std::size_t j = 0; j < nfx; ++j) operands.push_back(rule.fixed(a.x[nc + j]));
  for (std::size_t q = 0; q < nfk; ++q) operands.push_back(rule.fixed(a.x[nc + nx + q]));
  ScanAdjointAttrs t{std::move(primal), std::move(adjoint), s.body, s.length, s.reverse,
                     std::max<std::int64_t>(s.snapshots, 1), static_cast<std::uint32_t>(nfc), static_cast<std::uint32_t>(nlc),
                     static_cast<std::uint32_t>(ny), static_cast<std::uint32_t>(nfx), static_cast<std::uint32_t>(nlx),
                     static_cast<std::uint32_t>(nfk), static_cast<std::uint32_t>(nlk)};
  const std::vector<Traced> results = apply_outputs(ops::scan_adjoint(std::move(t), types_of(operands)), operands);
  auto cotangent = [&](std::size_t k) { return rule.result(results[k], op, tidu::RuleKind::Transpose); };
  // Results: [ct linear carry, ct linear consts, ct linear xs].
  Tangents result(nc + nx + nk);
  for (std::size_t i = 0; i < nlc; ++i) if (a.role.is_active(nfc + i)) result[nfc + i] = cotangent(i);
  for (std::size_t m = 0; m < nlk; ++m) if (a.role.is_active(nc + nx + nfk + m)) result[nc + nx + nfk + m] = cotangent(nlc + m);
  for (std::size_t m = 0; m < nlx; ++m) if (a.role.is_active(nc + nfx + m)) result[nc + nfx + m] = cotangent(nlc + nlk + m);
  return result;
}

/// The transpose of a scan linear in its carries and in the xs and consts the role marks active.
Tangents transpose_scan(const StdTensorOp& op, const TransposeArgs& a) {
  const auto& s = op.attrs.get<ScanAttrs>();
  if (s.n_fixed_carry > 0) return transpose_checkpointed(op, a);
  const std::size_t nc = s.n_carry, nx = s.n_xs, nk = s.n_consts, ny = op.output_count() - nc;
  const auto in_types = region_input_types(s.body.region);
  const auto out_types = region_output_types(s.body.region);
  std::vector<bool> linear(nc + nx + nk, false);
  for (std::size_t i = 0; i < nc; ++i) {
    if (!is_inexact(in_types[i].dtype)) not_linear(op, "an integer carry cannot be linear");
    linear[i] = true;
  }
  for (std::size_t i = nc; i < linear.size(); ++i) linear[i] = a.role.is_active(i);
  const TransposedBody tb = transpose_body(s.body.region, linear);

  // Transposed body inputs: [ct carry, const accumulators, ct y_t, fixed x_t, fixed consts];
  // outputs: [ct of the step's incoming carry, accumulators + ct consts, ct x_t].
  BodyBuilder bb;
  std::vector<ValueId> ct_c, acc, ct_y, fx, fk;
  std::vector<std::size_t> lx, lk, fx_pos, fk_pos;
  for (std::size_t j = 0; j < nx; ++j) (linear[nc + j] ? lx : fx_pos).push_back(j);
  for (std::size_t q = 0; q < nk; ++q) (linear[nc + nx + q] ? lk : fk_pos).push_back(q);
  for (std::size_t i = 0; i < nc; ++i) ct_c.push_back(bb.input(in_types[i]));
  for (std::size_t q : lk) acc.push_back(bb.input(in_types[nc + nx + q]));
  for (std::size_t j = 0; j < ny; ++j) ct_y.push_back(bb.input(out_types[nc + j]));
  for (std::size_t j : fx_pos) fx.push_back(bb.input(in_types[nc + j]));
  for (std::size_t q : fk_pos) fk.push_back(bb.input(in_types[nc + nx + q]));
  std::vector<ValueId> args = ct_c;
  args.insert(args.end(), ct_y.begin(), ct_y.end());
  args.insert(args.end(), fx.begin(), fx.end());
  args.insert(args.end(), fk.begin(), fk.end());
  const auto cts = bb.replay(tb.graph, args);
  // cts: one per reached linear input, in input order (carries, linear xs, linear consts).
  std::vector<std::optional<ValueId>> per_linear;
  std::size_t next = 0;
  for (bool reached : tb.reached) per_linear.push_back(reached ? std::optional<ValueId>(cts[next++]) : std::nullopt);
  std::vector<ValueId> outs;
  for (std::size_t i = 0; i < nc; ++i) outs.push_back(per_linear[i] ? *per_linear[i] : bb.zeros(in_types[i]));
  for (std::size_t m = 0; m < lk.size(); ++m) {
    const auto& ct = per_linear[nc + lx.size() + m];
    outs.push_back(ct ? bb.add(acc[m], *ct) : acc[m]);
  }
  for (std::size_t m = 0; m < lx.size(); ++m) {
    const auto& ct = per_linear[nc + m];
    outs.push_back(ct ? *ct : bb.zeros(in_types[nc + lx[m]]));
  }

  RuleTrace rule(a.b);
  std::vector<Traced> operands;
  for (std::size_t i = 0; i < nc; ++i) operands.push_back(rule.linear_or_zeros(a.cts[i], in_types[i]));
  for (std::size_t q : lk) operands.push_back(rule.zeros(in_types[nc + nx + q]));
  for (std::size_t j = 0; j < ny; ++j) operands.push_back(rule.linear_or_zeros(a.cts[nc + j], op.output_type(nc + j)));
  for (std::size_t j : fx_pos) operands.push_back(rule.fixed(a.x[nc + j]));
  for (std::size_t q : fk_pos) operands.push_back(rule.fixed(a.x[nc + nx + q]));
  ScanAttrs t{Body(bb.finish(std::move(outs), "scan")), s.length, !s.reverse,
              static_cast<std::uint32_t>(nc + lk.size()), static_cast<std::uint32_t>(ny + fx_pos.size()),
              static_cast<std::uint32_t>(fk_pos.size())};
  const std::vector<Traced> results = apply_outputs(ops::scan(std::move(t), types_of(operands)), operands);
  auto cotangent = [&](std::size_t k) { return rule.result(results[k], op, tidu::RuleKind::Transpose); };
  Tangents result(nc + nx + nk);
  for (std::size_t i = 0; i < nc; ++i) if (a.role.is_active(i)) result[i] = cotangent(i);
  for (std::size_t m = 0; m < lk.size(); ++m) result[nc + nx + lk[m]] = cotangent(nc + m);
  for (std::size_t m = 0; m < lx.size(); ++m) result[nc + lx[m]] = cotangent(nc + lk.size() + m);
  return result;
}

/// x with its two leading axes swapped.
Traced swap_leading(const Traced& x) {
  std::vector<std::int64_t> perm(x.rank());
  std::iota(perm.begin(), perm.end(), std::int64_t{0});
  std::swap(perm[0], perm[1]);
  return transpose(x, std::move(perm));
}

/// vmap of a scan (see the file's comment).
std::vector<BatchedValue> batch_scan(const StdTensorOp& op, std::span<const BatchedValue> x, std::int64_t batch_size) {
  const auto& s = op.attrs.get<ScanAttrs>();
  const std::size_t nc = s.n_carry, nx = s.n_xs;
  const computegraph::Graph<StdTensorOp>& body = *s.body.region.graph();
  std::vector<bool> batched(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) batched[i] = x[i].batched;
  std::vector<bool> out;
  for (bool grew = true; grew;) {
    grew = false;
    out = depends_on(body, batched);
    for (std::size_t i = 0; i < nc; ++i) {
      if (out[i] && !batched[i]) batched[i] = grew = true;
    }
  }
  for (std::size_t i = 0; i < nc; ++i) out[i] = batched[i];
  TracedList init, xs;
  for (std::size_t i = 0; i < nc; ++i) init.push_back(batched[i] ? with_batch_axis(x[i], batch_size) : x[i].value);
  for (std::size_t i = nc; i < nc + nx; ++i) xs.push_back(x[i].batched ? swap_leading(x[i].value) : x[i].value);
  auto step = [&](const TracedList& carry, const TracedList& x_t) {
    std::vector<BatchedValue> in;
    for (std::size_t i = 0; i < nc; ++i) in.push_back({carry[i], batched[i]});
    for (std::size_t i = 0; i < nx; ++i) in.push_back({x_t[i], batched[nc + i]});
    for (std::size_t i = nc + nx; i < x.size(); ++i) in.push_back(x[i]);
    const TracedList r = batched_as(batch_graph(body, in, batch_size, in[0].value), out, batch_size);
    const auto split = r.begin() + static_cast<std::ptrdiff_t>(nc);
    return std::pair{TracedList(r.begin(), split), TracedList(split, r.end())};
  };
  const auto r = scan(step, init, xs, ScanOptions{.length = s.length, .reverse = s.reverse, .checkpoint_snapshots = s.snapshots});
  std::vector<BatchedValue> results;
  for (std::size_t i = 0; i < nc; ++i) results.push_back({r.first[i], batched[i]});
  for (std::size_t j = 0; j < r.second.size(); ++j) {
    const bool b = out[nc + j];
    results.push_back({b ? swap_leading(r.second[j]) : r.second[j], b});
  }
  return results;
}

}  // namespace

const OpDef& def_Scan() {
  static const OpDef d{
      .name = "scan", .kind = OpKind::Scan, .operands = {}, .outputs = 0, .shape_rule = scan_shape,
      .kernel = eval_scan, .jvp = jvp_scan, .transpose = transpose_scan,
      .variadic_arity = [](const OpAttrs& a) -> std::size_t {
        const auto& s = a.get<ScanAttrs>();
        return std::size_t{s.n_carry} + s.n_xs + s.n_consts;
      },
      .regions = [](const StdTensorOp& op) {
        return std::vector<computegraph::GraphPtr<StdTensorOp>>{op.attrs.get<ScanAttrs>().body.region.graph()};
      },
      .batch = batch_scan};
  return d;
}

}  // namespace detail
}  // namespace tenferro
