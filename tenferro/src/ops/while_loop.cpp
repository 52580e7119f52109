// while_loop: repeats a body while a condition holds, one primitive carrying the condition and
// the body as regions. Order: shape rule, kernel, JVP rule, transpose rule, definition.
//
// Operands [carry..., consts...]; the condition takes [carry..., consts...] and returns a bool
// scalar; the body takes the same and returns the new carry.
//
// Derivatives: forward mode only. The JVP is a while_loop over the carry and its tangent, whose
// body is the body's JVP and whose condition ignores the tangents; it stops exactly when the
// primal loop does. Reverse mode would need the trip count before the loop runs; the API's
// `max_trips` turns the loop into a scan of conds instead (tenferro/control_flow.hpp), and the
// transpose rule here says so.
//
// Batching (vmap): a carry is batched if it is on entry or becomes so in the body (a fixed point
// over depends_on). With one condition for the whole batch, a while_loop of the batched body.
// With a condition per example, every carry is batched and the loop runs while any example's
// condition holds; an example whose condition fails keeps its carry (a select per step), so each
// example ends where it would alone (jax.lax.while_loop does the same).
#include "ir/batching.hpp"
#include "ir/family.hpp"
#include "regions/bodies.hpp"
#include "regions/region_runner.hpp"
#include "tenferro/control_flow.hpp"
#include "tenferro/ops/rule.hpp"

namespace tenferro {

std::size_t WhileAttrs::hash() const {
  std::size_t h = hash_mix(cond.region.hash(), body.region.hash());
  h = hash_mix(h, n_carry);
  return hash_mix(h, n_consts);
}
void WhileAttrs::print(std::ostream& os) const { os << "carry=" << n_carry << ", consts=" << n_consts; }

namespace ops {
StdTensorOp while_loop(WhileAttrs attrs, std::span<const TensorType> operands) {
  return make_op(op_def(OpKind::WhileLoop), operands, OpAttrs(std::move(attrs)));
}
}  // namespace ops

namespace detail {
namespace {

std::vector<TensorType> while_shape(Types t, const OpAttrs& a) {
  const auto& s = a.get<WhileAttrs>();
  const std::vector<TensorType> operands(t.begin(), t.end());
  const std::vector<TensorType> carry(t.begin(), t.begin() + s.n_carry);
  for (const Body* region : {&s.cond, &s.body}) {
    const auto in = region_input_types(region->region);
    if (in != operands) {
      throw ShapeError(std::string("while_loop: the ") + (region == &s.cond ? "condition" : "body") + " takes (" +
                       types_list(in) + "), but the carry and constants are (" + types_list(operands) + ")");
    }
  }
  const auto c = region_output_types(s.cond.region);
  if (c.size() != 1 || c[0] != TensorType{DType::Bool, {}}) {
    throw DTypeError("while_loop: the condition returns (" + types_list(c) + "); expected one bool scalar");
  }
  const auto out = region_output_types(s.body.region);
  if (out != carry) {
    throw ShapeError("while_loop: the body returns (" + types_list(out) + ") for a carry of (" + types_list(carry) +
                     "); the carry must keep its types");
  }
  if (carry.empty()) throw ShapeError("while_loop: needs a carry");
  return carry;
}

void eval_while(const StdTensorOp& op, Operands in, std::span<Tensor> out) {
  const auto& s = op.attrs.get<WhileAttrs>();
  std::vector<Tensor> args;
  for (const Tensor* t : in) args.push_back(*t);
  for (;;) {
    if (!run_body(s.cond, args)[0].data<bool>()[0]) break;
    std::vector<Tensor> next = run_body(s.body, args);
    for (std::size_t i = 0; i < s.n_carry; ++i) args[i] = std::move(next[i]);
  }
  for (std::size_t i = 0; i < s.n_carry; ++i) {
    // The carry may still be an operand (no step ran, or a body that returns it unchanged).
    bool is_operand = false;
    for (const Tensor* t : in) is_operand = is_operand || args[i].shares_storage_with(*t);
    out[i] = is_operand ? args[i].clone() : args[i];
  }
}

Tangents jvp_while(const StdTensorOp& op, const JvpArgs& a) {
  const auto& s = op.attrs.get<WhileAttrs>();
  const std::size_t nc = s.n_carry, nk = s.n_consts;
  const auto types = region_input_types(s.body.region);
  std::vector<bool> active(nc + nk);
  for (std::size_t i = 0; i < active.size(); ++i) active[i] = a.t[i].has_value();
  for (bool changed = true; changed;) {
    changed = false;
    const auto dep = depends_on(*s.body.region.graph(), active);
    for (std::size_t i = 0; i < nc; ++i) {
      if (!active[i] && dep[i] && is_inexact(types[i].dtype)) active[i] = changed = true;
    }
  }
  const JvpBody jvp = jvp_body(s.body.region, active);
  // New inputs [carry..., tangent carries..., consts..., tangent consts...].
  auto inputs = [&](BodyBuilder& bb, std::vector<ValueId>& primal, std::vector<ValueId>& tangent) {
    std::vector<ValueId> tc, k, tk;
    for (std::size_t i = 0; i < nc; ++i) primal.push_back(bb.input(types[i]));
    for (std::size_t i = 0; i < nc; ++i) if (active[i]) tc.push_back(bb.input(types[i]));
    for (std::size_t q = 0; q < nk; ++q) k.push_back(bb.input(types[nc + q]));
    for (std::size_t q = 0; q < nk; ++q) if (active[nc + q]) tk.push_back(bb.input(types[nc + q]));
    primal.insert(primal.end(), k.begin(), k.end());
    tangent = tc;
    tangent.insert(tangent.end(), tk.begin(), tk.end());
  };
  BodyBuilder cb;
  std::vector<ValueId> primal, tangent;
  inputs(cb, primal, tangent);
  Region cond = cb.finish(cb.replay(*s.cond.region.graph(), primal), "while_loop");
  BodyBuilder bb;
  primal.clear();
  inputs(bb, primal, tangent);
  std::vector<ValueId> outs = bb.replay(*s.body.region.graph(), primal);
  std::vector<ValueId> args = primal;
  args.insert(args.end(), tangent.begin(), tangent.end());
  const auto tangents = bb.replay(jvp.graph, args);
  for (std::size_t i = 0, next = 0; i < nc; ++i) {
    const bool present = jvp.present[i];
    const ValueId t = present ? tangents[next++] : 0;
    if (active[i]) outs.push_back(present ? t : bb.zeros(types[i]));
  }
  WhileAttrs w{Body(std::move(cond)), Body(bb.finish(std::move(outs), "while_loop")), 0, 0};

  RuleTrace r(a.b);
  std::vector<Traced> operands;
  for (std::size_t i = 0; i < nc; ++i) operands.push_back(r.fixed(a.x[i]));
  for (std::size_t i = 0; i < nc; ++i) {
    if (!active[i]) continue;
    operands.push_back(r.linear_or_zeros(a.t[i], types[i]));
    ++w.n_carry;
  }
  w.n_carry += static_cast<std::uint32_t>(nc);
  for (std::size_t q = 0; q < nk; ++q) operands.push_back(r.fixed(a.x[nc + q]));
  for (std::size_t q = 0; q < nk; ++q) if (active[nc + q]) operands.push_back(r.linear(*a.t[nc + q]));
  w.n_consts = static_cast<std::uint32_t>(operands.size()) - w.n_carry;
  const std::vector<Traced> outs_and_tangents = apply_outputs(ops::while_loop(std::move(w), types_of(operands)), operands);
  Tangents result(nc);
  for (std::size_t i = 0, next = nc; i < nc; ++i) {
    if (active[i]) result[i] = r.result(outs_and_tangents[next++], op, tidu::RuleKind::Jvp);
  }
  return result;
}

Tangents transpose_while(const StdTensorOp&, const TransposeArgs&) {
  throw tidu::ADRuleError("while_loop", tidu::RuleKind::Transpose,
                          "reverse-mode differentiation of a while_loop needs a bound on its trip count: give "
                          "WhileOptions{.max_trips = n} (the loop then becomes a scan of n steps)");
}

/// vmap of a while_loop (see the file's comment).
std::vector<BatchedValue> batch_while(const StdTensorOp& op, std::span<const BatchedValue> x, std::int64_t batch_size) {
  const auto& s = op.attrs.get<WhileAttrs>();
  const std::size_t nc = s.n_carry;
  std::vector<bool> batched(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) batched[i] = x[i].batched;
  for (bool grew = true; grew;) {
    grew = false;
    const std::vector<bool> d = depends_on(*s.body.region.graph(), batched);
    for (std::size_t i = 0; i < nc; ++i) {
      if (d[i] && !batched[i]) batched[i] = grew = true;
    }
  }
  const bool per_example = depends_on(*s.cond.region.graph(), batched)[0];
  if (per_example) std::fill(batched.begin(), batched.begin() + static_cast<std::ptrdiff_t>(nc), true);
  const std::vector<bool> carry_batched(batched.begin(), batched.begin() + static_cast<std::ptrdiff_t>(nc));
  // The regions' inputs: the carry (of the loop being traced) and the constants (operands).
  auto inputs = [&](const TracedList& carry) {
    std::vector<BatchedValue> in;
    for (std::size_t i = 0; i < nc; ++i) in.push_back({carry[i], batched[i]});
    for (std::size_t i = nc; i < x.size(); ++i) in.push_back(x[i]);
    return in;
  };
  auto condition = [&](const TracedList& carry) {
    return batch_graph(*s.cond.region.graph(), inputs(carry), batch_size, carry[0])[0];
  };
  auto cond_fn = [&](const TracedList& carry) {
    const BatchedValue go = condition(carry);
    if (!per_example) return go.value;
    return gt(sum(astype(go.value, DType::I64), {0}), constant(go.value, Tensor::from(std::vector<std::int64_t>{0}, {})));
  };
  auto body_fn = [&](const TracedList& carry) {
    TracedList next = batched_as(batch_graph(*s.body.region.graph(), inputs(carry), batch_size, carry[0]), carry_batched,
                                 batch_size);
    if (per_example) {
      const Traced go = condition(carry).value;
      for (std::size_t i = 0; i < nc; ++i) next[i] = where(lanes(go, next[i].shape()), next[i], carry[i]);
    }
    return next;
  };
  TracedList init;
  for (std::size_t i = 0; i < nc; ++i) init.push_back(batched[i] ? with_batch_axis(x[i], batch_size) : x[i].value);
  const TracedList r = while_loop(cond_fn, body_fn, init);
  std::vector<BatchedValue> out;
  for (std::size_t i = 0; i < nc; ++i) out.push_back({r[i], batched[i]});
  return out;
}

}  // namespace

const OpDef& def_WhileLoop() {
  static const OpDef d{
      .name = "while_loop", .kind = OpKind::WhileLoop, .operands = {}, .outputs = 0, .shape_rule = while_shape,
      .kernel = eval_while, .jvp = jvp_while, .transpose = transpose_while,
      .variadic_arity = [](const OpAttrs& a) -> std::size_t {
        const auto& s = a.get<WhileAttrs>();
        return std::size_t{s.n_carry} + s.n_consts;
      },
      .regions = [](const StdTensorOp& op) {
        const auto& s = op.attrs.get<WhileAttrs>();
        return std::vector<computegraph::GraphPtr<StdTensorOp>>{s.cond.region.graph(), s.body.region.graph()};
      },
      .batch = batch_while};
  return d;
}

}  // namespace detail
}  // namespace tenferro
