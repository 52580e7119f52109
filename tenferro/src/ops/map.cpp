// map: one body applied to each slice of its mapped operands along their leading axis, the results
// stacked along a new leading axis (jax.lax.map): a loop with no carry, one op whatever its
// length, whose steps run one after another, so that it holds one step's intermediate values at
// a time where vmap would hold the whole batch's. Order: attributes, shape rule, kernel, JVP rule,
// transpose rule, batching rule, definition.
//
// Operands: any mix of mapped ones (leading extent = the length; the body sees one slice) and
// unmapped ones (the body sees the whole value at every step), marked by MapAttrs::mapped. The
// user's map(f, xs) maps every x it is given; the values f captures are unmapped operands.
//
// Derivatives: the JVP is a map of the body's JVP over the operands and their tangents (a tangent
// is mapped where its operand is), linear in the tangents; it recomputes the step's primal values
// from the operands. The transpose of a linear map is a map of the transposed body over the
// results' cotangents (mapped) and the fixed operands; the cotangent of an unmapped linear operand
// is the sum over the steps of the per-step cotangents. Both are maps again, so every order works.
//
// Batching (vmap): the batch axis of a mapped operand is moved behind the mapped axis, and the
// body is batched inside the map; the results come back with the batch axis first.
#include <algorithm>
#include <numeric>

#include "ir/batching.hpp"
#include "ir/family.hpp"
#include "regions/bodies.hpp"
#include "regions/region_runner.hpp"
#include "regions/steps.hpp"
#include "tenferro/control_flow.hpp"
#include "tenferro/ops/rule.hpp"

namespace tenferro::detail {
namespace {

struct MapAttrs {
  Body body;
  std::vector<bool> mapped;  ///< per operand
  std::int64_t length = 0;

  bool operator==(const MapAttrs& o) const { return length == o.length && mapped == o.mapped && body == o.body; }
  std::size_t hash() const {
    std::size_t h = hash_mix(static_cast<std::size_t>(length), body.region.hash());
    for (bool m : mapped) h = hash_mix(h, m ? 1 : 0);
    return h;
  }
  void print(std::ostream& os) const {
    os << "length=" << length << ", mapped=[";
    for (std::size_t i = 0; i < mapped.size(); ++i) os << (i ? " " : "") << (mapped[i] ? 1 : 0);
    os << "]";
  }
};

TensorType without_leading(const TensorType& t) { return {t.dtype, Shape(t.shape.begin() + 1, t.shape.end())}; }
TensorType with_leading(const TensorType& t, std::int64_t n) {
  Shape s{n};
  s.insert(s.end(), t.shape.begin(), t.shape.end());
  return {t.dtype, s};
}

/// The body's input types for these operands: a mapped operand's slice, an unmapped one whole.
/// Checks that the mapped operands have rank >= 1 and one leading extent, `length`.
std::vector<TensorType> step_types(Types operands, const std::vector<bool>& mapped, std::int64_t length) {
  std::vector<TensorType> types;
  for (std::size_t i = 0; i < operands.size(); ++i) {
    const TensorType& t = operands[i];
    if (!mapped[i]) {
      types.push_back(t);
      continue;
    }
    if (t.rank() == 0 || t.shape[0] != length) {
      throw ShapeError("map: operand " + std::to_string(i) + " is " + t.to_string() +
                       "; every mapped operand needs a leading axis of the map's length " + std::to_string(length));
    }
    types.push_back(without_leading(t));
  }
  return types;
}

std::vector<TensorType> map_shape(Types t, const OpAttrs& a) {
  const auto& s = a.get<MapAttrs>();
  if (s.mapped.size() != t.size()) throw ShapeError("map: the mapped flags do not match the operands");
  const std::vector<TensorType> in = step_types(t, s.mapped, s.length);
  if (in != region_input_types(s.body.region)) {
    throw ShapeError("map: the body takes (" + types_list(region_input_types(s.body.region)) + "), but the steps' operands are (" +
                     types_list(in) + ")");
  }
  std::vector<TensorType> results;
  for (const TensorType& y : region_output_types(s.body.region)) results.push_back(with_leading(y, s.length));
  if (results.empty()) throw ShapeError("map: the body returns nothing");
  return results;
}

StdTensorOp make_map(Body body, std::vector<bool> mapped, std::int64_t length, Types operands) {
  return make_op(op_def(OpKind::Map), operands, OpAttrs(MapAttrs{std::move(body), std::move(mapped), length}));
}

void eval_map(const StdTensorOp& op, Operands in, std::span<Tensor> out) {
  const auto& s = op.attrs.get<MapAttrs>();
  std::vector<TensorType> types;
  for (std::size_t j = 0; j < out.size(); ++j) types.push_back(op.output_type(j));
  run_steps(body_executable(s.body), s.length, false, 0, s.mapped, in, types, out);
}

Tangents jvp_map(const StdTensorOp& op, const JvpArgs& a) {
  const auto& s = op.attrs.get<MapAttrs>();
  const std::size_t n = s.mapped.size(), m = op.output_count();
  std::vector<bool> active(n);
  for (std::size_t i = 0; i < n; ++i) active[i] = a.t[i].has_value();
  const JvpBody jvp = jvp_body(s.body.region, active);
  Tangents result(m);
  if (std::none_of(jvp.present.begin(), jvp.present.end(), [](bool p) { return p; })) return result;
  // Body inputs: [operands' steps..., the active tangents' steps...]; outputs: the present tangents.
  const auto types = region_input_types(s.body.region);
  BodyBuilder bb;
  std::vector<ValueId> args;
  for (std::size_t i = 0; i < n; ++i) args.push_back(bb.input(types[i]));
  for (std::size_t i = 0; i < n; ++i) if (active[i]) args.push_back(bb.input(types[i]));
  Body body(bb.finish(bb.replay(jvp.graph, args), "map"));
  RuleTrace r(a.b);
  std::vector<Traced> operands;
  std::vector<bool> mapped;
  for (std::size_t i = 0; i < n; ++i) {
    operands.push_back(r.fixed(a.x[i]));
    mapped.push_back(s.mapped[i]);
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (!active[i]) continue;
    operands.push_back(r.linear(*a.t[i]));
    mapped.push_back(s.mapped[i]);
  }
  const std::vector<Traced> tangents =
      apply_outputs(make_map(std::move(body), std::move(mapped), s.length, types_of(operands)), operands);
  for (std::size_t j = 0, next = 0; j < m; ++j) {
    if (jvp.present[j]) result[j] = r.result(tangents[next++], op, tidu::RuleKind::Jvp);
  }
  return result;
}

Tangents transpose_map(const StdTensorOp& op, const TransposeArgs& a) {
  const auto& s = op.attrs.get<MapAttrs>();
  const std::size_t n = s.mapped.size(), m = op.output_count();
  std::vector<bool> linear(n);
  for (std::size_t i = 0; i < n; ++i) linear[i] = a.role.is_active(i);
  const auto types = region_input_types(s.body.region);
  const auto out_types = region_output_types(s.body.region);
  const TransposedBody tb = transpose_body(s.body.region, linear);
  // Body inputs: [one cotangent step per result..., fixed operands' steps...]; outputs: the step's
  // cotangent of each linear operand.
  BodyBuilder bb;
  std::vector<ValueId> args;
  for (std::size_t j = 0; j < m; ++j) args.push_back(bb.input(out_types[j]));
  for (std::size_t i = 0; i < n; ++i) if (!linear[i]) args.push_back(bb.input(types[i]));
  const auto cts = bb.replay(tb.graph, args);
  std::vector<ValueId> outs;
  for (std::size_t i = 0, l = 0, next = 0; i < n; ++i) {
    if (!linear[i]) continue;
    outs.push_back(tb.reached[l++] ? cts[next++] : bb.zeros(types[i]));
  }
  Body body(bb.finish(std::move(outs), "map"));
  RuleTrace r(a.b);
  std::vector<Traced> operands;
  std::vector<bool> mapped;
  for (std::size_t j = 0; j < m; ++j) {
    operands.push_back(r.linear_or_zeros(a.cts[j], op.output_type(j)));
    mapped.push_back(true);
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (linear[i]) continue;
    operands.push_back(r.fixed(a.x[i]));
    mapped.push_back(s.mapped[i]);
  }
  const std::vector<Traced> stacked_cts =
      apply_outputs(make_map(std::move(body), std::move(mapped), s.length, types_of(operands)), operands);
  Tangents result(n);
  for (std::size_t i = 0, next = 0; i < n; ++i) {
    if (!linear[i]) continue;
    const Traced& stacked = stacked_cts[next++];
    // An unmapped operand reached every step: its cotangent is the sum over the steps.
    result[i] = r.result(s.mapped[i] ? stacked : apply_unary(ops::reduce(OpKind::ReduceSum, stacked.type(), {0}), stacked),
                         op, tidu::RuleKind::Transpose);
  }
  return result;
}

/// x with axes 0 and 1 swapped.
Traced swap_leading(const Traced& x) {
  std::vector<std::int64_t> perm(x.rank());
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[0], perm[1]);
  return transpose(x, perm);
}

std::vector<BatchedValue> batch_map(const StdTensorOp& op, std::span<const BatchedValue> x, std::int64_t batch_size) {
  const auto& s = op.attrs.get<MapAttrs>();
  const std::size_t n = s.mapped.size(), m = op.output_count();
  std::vector<bool> in(n);
  for (std::size_t i = 0; i < n; ++i) in[i] = x[i].batched;
  const std::vector<bool> out = depends_on(*s.body.region.graph(), in);
  // The mapped operands (batch axis moved behind the mapped one) are map's; the unmapped ones
  // are read by the body from the enclosing trace, so map passes them whole to every step.
  TracedList mapped;
  for (std::size_t i = 0; i < n; ++i) {
    if (s.mapped[i]) mapped.push_back(x[i].batched ? swap_leading(x[i].value) : x[i].value);
  }
  const Branch body = [&](const TracedList& steps) {
    std::vector<BatchedValue> args;
    for (std::size_t i = 0, k = 0; i < n; ++i) args.push_back(s.mapped[i] ? BatchedValue{steps[k++], in[i]} : x[i]);
    return batched_as(batch_graph(*s.body.region.graph(), args, batch_size, steps.at(0)), out, batch_size);
  };
  const TracedList r = tenferro::map(body, mapped);
  std::vector<BatchedValue> results;
  for (std::size_t j = 0; j < m; ++j) results.push_back({out[j] ? swap_leading(r[j]) : r[j], out[j]});
  return results;
}

}  // namespace

const OpDef& def_Map() {
  static const OpDef d{
      .name = "map", .kind = OpKind::Map, .operands = {}, .outputs = 0, .shape_rule = map_shape, .kernel = eval_map,
      .jvp = jvp_map, .transpose = transpose_map,
      .variadic_arity = [](const OpAttrs& a) { return a.get<MapAttrs>().mapped.size(); },
      .regions = [](const StdTensorOp& op) {
        return std::vector<computegraph::GraphPtr<StdTensorOp>>{op.attrs.get<MapAttrs>().body.region.graph()};
      },
      .region_surface = RegionSurface{
          .body_inputs = [](Types given) {
            if (given.empty()) throw ShapeError("map: needs at least one operand to map over");
            if (given[0].rank() == 0) {
              throw ShapeError("map: operand 0 is " + given[0].to_string() + "; mapped operands need a leading axis");
            }
            return step_types(given, std::vector<bool>(given.size(), true), given[0].shape[0]);
          },
          .build = [](computegraph::GraphPtr<StdTensorOp> body, Types operands, std::size_t given) {
            std::vector<bool> mapped(operands.size(), false);
            std::fill(mapped.begin(), mapped.begin() + static_cast<std::ptrdiff_t>(given), true);
            return make_map(Body(Region(std::move(body), "map")), std::move(mapped), operands[0].shape[0], operands);
          }},
      .batch = batch_map};
  return d;
}

}  // namespace tenferro::detail
