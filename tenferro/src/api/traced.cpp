// Traced tensors: recording, NumPy-style broadcasting, and the primitive-backed operations.
#include "tenferro/traced.hpp"
#include "tenferro/semiring.hpp"
#include "tenferro/ops/record.hpp"
#include "tenferro/ops/rule.hpp"
#include "tenferro/ops/semiring_attrs.hpp"

#include "api/trace_body.hpp"
#include "eager_store.hpp"
#include "reduce_identity.hpp"
#include "kernels/layout.hpp"

#include <algorithm>

namespace tenferro {

Shape broadcast_shapes(const char* op, const Shape& a, const Shape& b) {
  const std::size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (std::size_t i = 0; i < rank; ++i) {
    const std::int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const std::int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) {
      throw ShapeError(std::string(op) + ": shapes " + shape_to_string(a) + " and " +
                       shape_to_string(b) + " do not broadcast (axis " + std::to_string(i) +
                       ": " + std::to_string(da) + " vs " + std::to_string(db) + ")");
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

namespace {
using Ref = computegraph::ValueRef<StdTensorOp>;

std::vector<std::int64_t> normalize_axes(const char* op, std::vector<std::int64_t> axes, std::size_t rank) {
  for (auto& a : axes) {
    if (a < -static_cast<std::int64_t>(rank) || a >= static_cast<std::int64_t>(rank)) {
      throw ShapeError(std::string(op) + ": axis " + std::to_string(a) + " is out of range for rank " +
                       std::to_string(rank));
    }
    if (a < 0) a += static_cast<std::int64_t>(rank);
  }
  return axes;
}

std::vector<std::int64_t> all_axes(std::size_t rank) {
  std::vector<std::int64_t> axes(rank);
  for (std::size_t i = 0; i < rank; ++i) axes[i] = static_cast<std::int64_t>(i);
  return axes;
}

template <class Make>
Traced binary(const char* name, const Traced& a, const Traced& b, Make&& make) {
  if (a.shape() == b.shape()) return detail::apply_binary(make(a.type(), b.type()), a, b);  // nothing to broadcast
  Shape shape = broadcast_shapes(name, a.shape(), b.shape());
  Traced x = broadcast_to(a, shape);
  Traced y = broadcast_to(b, shape);
  return detail::apply_binary(make(x.type(), y.type()), x, y);
}

Traced compare(CompareDir dir, const Traced& a, const Traced& b) {
  return binary(compare_dir_name(dir), a, b,
                [&](const TensorType& x, const TensorType& y) { return ops::compare(dir, x, y); });
}
}  // namespace

namespace {
bool encloses(const TraceState* outer, const TraceState* inner) {
  for (const TraceState* t = inner; t; t = t->parent.get()) {
    if (t == outer) return true;
  }
  return false;
}

/// The trace among the operands' that every other operand's trace encloses; Error if none does.
std::shared_ptr<TraceState> innermost_trace(const StdTensorOp& op, std::span<const Traced> inputs) {
  for (const Traced& candidate : inputs) {
    bool all = true;
    for (const Traced& t : inputs) all = all && encloses(t.trace().get(), candidate.trace().get());
    if (all) return candidate.trace();
  }
  throw Error("tenferro " + op.name() + ": operands come from different traces (neither encloses the other)");
}
}  // namespace

computegraph::LocalValueId capture_into(const std::shared_ptr<TraceState>& trace, const Traced& value) {
  if (value.trace() == trace) return value.id();
  if (!trace->parent || !encloses(value.trace().get(), trace.get())) {
    throw Error("tenferro: a value of another trace is used here, and no enclosing trace holds it");
  }
  const computegraph::LocalValueId outer = capture_into(trace->parent, value);
  for (const auto& [parent_id, inner] : trace->captures) {
    if (parent_id == outer) return inner;
  }
  const auto inner = trace->builder.add_input(
      TensorKey{"capture" + std::to_string(trace->captures.size()), value.type()});
  trace->captures.emplace_back(outer, inner);
  return inner;
}

namespace {
/// The trace that `op` applied to `inputs` records into, with the operand references filled in;
/// throws Error for operands of several traces (eager values are mapped first, see eager_unify),
/// for none, or for the wrong count.
std::shared_ptr<TraceState> operand_trace(const StdTensorOp& op, std::span<const Traced>& inputs,
                                          std::vector<Traced>& unified, std::vector<Ref>& refs) {
  // Eager values of a trace that backward() retired (or of another thread), and values with grad
  // inside NoGrad, are moved (or refused) before recording.
  // (Not when a control-flow body's values take part: the body captures the eager values below.)
  const bool in_body = std::any_of(inputs.begin(), inputs.end(), [](const Traced& t) { return t.trace()->parent != nullptr; });
  if (!inputs.empty() && !in_body && inputs[0].trace()->eager && detail::eager_needs_unify(inputs)) {
    unified = detail::eager_unify(op.name(), inputs);
    inputs = unified;
  }
  std::shared_ptr<TraceState> trace;
  refs.reserve(inputs.size());
  bool mixed = false;
  for (const Traced& t : inputs) {
    if (!trace) trace = t.trace();
    mixed = mixed || t.trace() != trace;
    refs.push_back(Ref::local(t.id()));
  }
  if (mixed) {
    // Values of enclosing traces are captured into the innermost one (a body's closure).
    trace = innermost_trace(op, inputs);
    for (std::size_t i = 0; i < inputs.size(); ++i) refs[i] = Ref::local(capture_into(trace, inputs[i]));
  }
  if (!trace) throw Error("tenferro::apply: " + op.name() + " needs a trace (use constant(like, value))");
  if (inputs.size() != op.input_count()) {
    throw Error("tenferro " + op.name() + ": " + std::to_string(inputs.size()) + " operands given; expected " +
                std::to_string(op.input_count()));
  }
  return trace;
}
}  // namespace

namespace {
/// The eager trace that all of `inputs` belong to, when they are values of one live eager trace
/// (the common case of an eager op: it records with no further mapping); else nullptr.
TraceState* plain_eager_trace(std::span<const Traced> inputs) {
  if (inputs.empty()) return nullptr;
  TraceState* trace = inputs[0].trace().get();
  if (!trace->eager || trace->eager->retired) return nullptr;
  for (const Traced& t : inputs) {
    if (t.trace().get() != trace) return nullptr;
  }
  return trace;
}

/// Records `op` on `inputs` (one live eager trace) and returns its first result's id.
computegraph::LocalValueId record_eager(TraceState& trace, StdTensorOp op, std::span<const Traced> inputs) {
  if (inputs.size() != op.input_count()) {
    throw Error("tenferro " + op.name() + ": " + std::to_string(inputs.size()) + " operands given; expected " +
                std::to_string(op.input_count()));
  }
  computegraph::SmallVector<computegraph::LocalValueId, 4> ids;
  for (const Traced& t : inputs) ids.push_back(t.id());
  return detail::eager_record(trace, std::move(op), std::span<const computegraph::LocalValueId>(ids.data(), ids.size()));
}
}  // namespace

namespace {
/// Adds `op` to the graph of `trace` (not eager) and returns its first result's id.
computegraph::LocalValueId add_to_trace(TraceState& trace, StdTensorOp op, std::vector<Ref> refs) {
  const auto role = computegraph::OperationRole::primary();
  return op.output_count() == 1 ? trace.builder.add(std::move(op), std::move(refs), role)
                                : trace.builder.add_operation(std::move(op), std::move(refs), role)[0];
}

/// The one place a traced operation is recorded: into the trace its operands belong to, as a
/// graph operation, or, in an eager trace, run at once (eager_record). Operands of one live eager
/// trace record directly (the common eager case); otherwise operand_trace first unifies eager
/// values and captures values of enclosing traces. Returns the trace and the id of the first
/// result (an operation's results have consecutive ids).
std::pair<std::shared_ptr<TraceState>, computegraph::LocalValueId> record(StdTensorOp op,
                                                                          std::span<const Traced> inputs) {
  if (!inputs.empty() && inputs[0].trace()->rule && inputs.size() == op.input_count()) {
    // Operands of one rule's trace (the common case in a rule) record into the rule's graph.
    TraceState* rule = inputs[0].trace().get();
    computegraph::SmallVector<computegraph::LocalValueId, 4> ids;
    for (const Traced& t : inputs) {
      if (t.trace().get() != rule) break;
      ids.push_back(t.id());
    }
    if (ids.size() == inputs.size()) {
      return {inputs[0].trace(), detail::rule_record(*rule, std::move(op), std::span<const computegraph::LocalValueId>(ids.data(), ids.size()))};
    }
  }
  if (TraceState* eager = plain_eager_trace(inputs)) {
    const std::shared_ptr<TraceState> body = detail::body_being_traced();
    if (!body || !encloses(eager, body.get())) {
      const auto first = record_eager(*eager, std::move(op), inputs);
      return {inputs[0].trace(), first};
    }
    // Inside a body whose enclosing trace is this eager one: staged into the body, the eager
    // operands captured (trace_body.hpp, body_being_traced).
    std::vector<Ref> refs;
    for (const Traced& t : inputs) refs.push_back(Ref::local(capture_into(body, t)));
    const auto role = computegraph::OperationRole::primary();
    const auto first = op.output_count() == 1 ? body->builder.add(std::move(op), std::move(refs), role)
                                              : body->builder.add_operation(std::move(op), std::move(refs), role)[0];
    return {body, first};
  }
  std::vector<Traced> unified;
  std::vector<Ref> refs;
  std::shared_ptr<TraceState> trace = operand_trace(op, inputs, unified, refs);
  if (trace->eager) {
    const auto first = record_eager(*trace, std::move(op), inputs);
    return {std::move(trace), first};
  }
  if (trace->rule) {
    // A rule's trace records into the rule's graph (tenferro/ops/rule.hpp).
    computegraph::SmallVector<computegraph::LocalValueId, 4> ids;
    for (const Ref& r : refs) ids.push_back(r.local_id());
    const auto first = detail::rule_record(*trace, std::move(op), std::span<const computegraph::LocalValueId>(ids.data(), ids.size()));
    return {std::move(trace), first};
  }
  const auto first = add_to_trace(*trace, std::move(op), std::move(refs));
  return {std::move(trace), first};
}
}  // namespace

std::vector<Traced> apply_outputs(StdTensorOp op, std::span<const Traced> inputs) {
  const std::size_t count = op.output_count();
  auto [trace, first] = record(std::move(op), inputs);
  std::vector<Traced> results;
  results.reserve(count);
  for (std::size_t k = 0; k < count; ++k) results.emplace_back(trace, first + static_cast<computegraph::LocalValueId>(k));
  return results;
}

Traced apply(StdTensorOp op, std::initializer_list<Traced> inputs) {
  if (op.output_count() != 1) {
    throw Error("tenferro::apply: " + op.name() + " has " + std::to_string(op.output_count()) +
                " results; use apply_outputs");
  }
  auto [trace, first] = record(std::move(op), std::span<const Traced>(inputs.begin(), inputs.size()));
  return Traced(std::move(trace), first);
}

namespace detail {
Traced apply_unary(StdTensorOp op, const Traced& a) {
  if (a.trace()->rule) {
    const computegraph::LocalValueId ids[1] = {a.id()};
    return Traced(a.trace(), rule_record(*a.trace(), std::move(op), ids));
  }
  return apply(std::move(op), {a});
}

Traced apply_binary(StdTensorOp op, const Traced& a, const Traced& b) {
  if (a.trace()->rule && a.trace() == b.trace()) {
    const computegraph::LocalValueId ids[2] = {a.id(), b.id()};
    return Traced(a.trace(), rule_record(*a.trace(), std::move(op), ids));
  }
  return apply(std::move(op), {a, b});
}
}  // namespace detail

Traced constant(const Traced& like, Tensor value) {
  const std::shared_ptr<TraceState>& trace = like.trace()->eager && like.trace()->eager->retired
                                                 ? detail::current_eager_trace()
                                                 : like.trace();
  if (trace->eager) {
    // A constant made inside a body that this eager trace encloses belongs to the body (see record).
    if (std::shared_ptr<TraceState> body = detail::body_being_traced(); body && encloses(trace.get(), body.get())) {
      return Traced(body, body->builder.add(ops::constant(std::move(value)), {}));
    }
    return Traced(trace, detail::eager_record(*trace, ops::constant(std::move(value)), {}));
  }
  StdTensorOp op = ops::constant(std::move(value));
  if (trace->rule) return Traced(trace, detail::rule_record(*trace, std::move(op), {}));
  return Traced(trace, add_to_trace(*trace, std::move(op), {}));
}

const TensorType& Traced::type() const {
  if (trace_->eager) return trace_->eager->values[id_].type();
  if (trace_->rule) return *trace_->rule->at(id_).type;
  return type_of(trace_->builder.key(id_));
}

Traced full_like(const Traced& like, double value) {
  Traced s = constant(like, Tensor::scalar(value, like.dtype()));
  return broadcast_to(s, like.shape());
}

Traced add(const Traced& a, const Traced& b) { return binary("add", a, b, ops::add); }
Traced sub(const Traced& a, const Traced& b) { return add(a, neg(b)); }
Traced mul(const Traced& a, const Traced& b) { return binary("mul", a, b, ops::mul); }
Traced div(const Traced& a, const Traced& b) { return binary("div", a, b, ops::div); }
Traced pow(const Traced& a, const Traced& b) { return binary("pow", a, b, ops::pow); }
Traced maximum(const Traced& a, const Traced& b) { return binary("maximum", a, b, ops::maximum); }
Traced minimum(const Traced& a, const Traced& b) { return binary("minimum", a, b, ops::minimum); }
Traced eq(const Traced& a, const Traced& b) { return compare(CompareDir::Eq, a, b); }
Traced ne(const Traced& a, const Traced& b) { return compare(CompareDir::Ne, a, b); }
Traced lt(const Traced& a, const Traced& b) { return compare(CompareDir::Lt, a, b); }
Traced le(const Traced& a, const Traced& b) { return compare(CompareDir::Le, a, b); }
Traced gt(const Traced& a, const Traced& b) { return compare(CompareDir::Gt, a, b); }
Traced ge(const Traced& a, const Traced& b) { return compare(CompareDir::Ge, a, b); }

Traced where(const Traced& pred, const Traced& on_true, const Traced& on_false) {
  Shape shape = broadcast_shapes("where", broadcast_shapes("where", pred.shape(), on_true.shape()),
                                 on_false.shape());
  Traced p = broadcast_to(pred, shape), t = broadcast_to(on_true, shape), f = broadcast_to(on_false, shape);
  return apply(ops::select(p.type(), t.type(), f.type()), {p, t, f});
}

Traced where(const Traced& pred, const Traced& on_true, double on_false) {
  return where(pred, on_true, constant(on_true, Tensor::scalar(on_false, on_true.dtype())));
}
Traced where(const Traced& pred, double on_true, const Traced& on_false) {
  return where(pred, constant(on_false, Tensor::scalar(on_true, on_false.dtype())), on_false);
}

Traced clamp(const Traced& x, const Traced& lo, const Traced& hi) {
  // The bounds broadcast to x's shape (x itself never stretches).
  for (const Traced* bound : {&lo, &hi}) {
    const Shape& b = bound->shape();
    bool fits = b.size() <= x.rank();
    for (std::size_t i = 0; fits && i < b.size(); ++i) {
      const std::int64_t d = x.shape()[x.rank() - b.size() + i];
      fits = b[i] == d || b[i] == 1;
    }
    if (!fits) {
      throw ShapeError(std::string("clamp: bound ") + (bound == &lo ? "lo " : "hi ") + bound->type().to_string() +
                       " does not broadcast to the shape of x " + x.type().to_string());
    }
  }
  Traced l = broadcast_to(lo, x.shape()), h = broadcast_to(hi, x.shape());
  return apply(ops::clamp(l.type(), x.type(), h.type()), {l, x, h});
}

Traced operator+(const Traced& a, const Traced& b) { return add(a, b); }
Traced operator-(const Traced& a, const Traced& b) { return sub(a, b); }
Traced operator*(const Traced& a, const Traced& b) { return mul(a, b); }
Traced operator/(const Traced& a, const Traced& b) { return div(a, b); }
Traced operator-(const Traced& a) { return neg(a); }
Traced operator+(const Traced& a, double s) { return add(a, full_like(a, s)); }
Traced operator-(const Traced& a, double s) { return sub(a, full_like(a, s)); }
Traced operator*(const Traced& a, double s) { return mul(a, full_like(a, s)); }
Traced operator/(const Traced& a, double s) { return div(a, full_like(a, s)); }
Traced operator+(double s, const Traced& a) { return add(full_like(a, s), a); }
Traced operator-(double s, const Traced& a) { return sub(full_like(a, s), a); }
Traced operator*(double s, const Traced& a) { return mul(full_like(a, s), a); }
Traced operator/(double s, const Traced& a) { return div(full_like(a, s), a); }

Traced transpose(const Traced& a, std::vector<std::int64_t> perm) {
  perm = normalize_axes("transpose", std::move(perm), a.rank());
  return apply(ops::transpose(a.type(), std::move(perm)), {a});
}
Traced transpose(const Traced& a) {
  auto perm = all_axes(a.rank());
  std::reverse(perm.begin(), perm.end());
  return transpose(a, std::move(perm));
}
Traced reshape(const Traced& a, Shape shape) {
  if (shape == a.shape()) return a;
  return apply(ops::reshape(a.type(), std::move(shape)), {a});
}
Traced broadcast_to(const Traced& a, Shape shape) {
  if (shape == a.shape()) return a;
  if (a.rank() > shape.size()) {
    throw ShapeError("broadcast_to: cannot broadcast " + a.type().to_string() + " to the lower rank shape " +
                     shape_to_string(shape));
  }
  std::vector<std::int64_t> dims(a.rank());
  for (std::size_t i = 0; i < a.rank(); ++i) dims[i] = static_cast<std::int64_t>(shape.size() - a.rank() + i);
  return detail::apply_unary(ops::broadcast_in_dim(a.type(), std::move(shape), std::move(dims)), a);
}
Traced astype(const Traced& a, DType dtype) {
  if (dtype == a.dtype()) return a;
  return apply(ops::convert(a.type(), dtype), {a});
}

Traced sum(const Traced& a) { return sum(a, all_axes(a.rank())); }
Traced sum(const Traced& a, std::vector<std::int64_t> axes) {
  return apply(ops::reduce(OpKind::ReduceSum, a.type(), normalize_axes("sum", std::move(axes), a.rank())), {a});
}
Traced prod(const Traced& a, std::vector<std::int64_t> axes) {
  return apply(ops::reduce(OpKind::ReduceProd, a.type(), normalize_axes("prod", std::move(axes), a.rank())), {a});
}
namespace {
/// NumPy raises for the maximum, minimum, argmax or argmin over an empty axis (there is no element
/// to return); so do these, naming the op, the operand and the axis. A repeated axis is reported
/// first (ShapeError), as NumPy reports it before it looks at the data.
void require_nonempty_axes(const char* op, const Traced& a, const std::vector<std::int64_t>& axes) {
  detail::check_axes(op, "axes", axes, static_cast<std::int64_t>(a.rank()), a.type().to_string());
  for (std::int64_t ax : axes) {
    if (a.shape()[static_cast<std::size_t>(ax)] == 0) {
      throw ValueError(std::string(op) + ": axis " + std::to_string(ax) + " of " + a.type().to_string() +
                       " is empty, and the " + op + " of no elements is not defined (NumPy raises here too); "
                       "reduce non-empty axes, or pad the axis with the identity you want first");
    }
  }
}
}  // namespace

Traced detail::max_or_identity(const Traced& a, std::vector<std::int64_t> axes) {
  return apply(ops::reduce(OpKind::ReduceMax, a.type(), normalize_axes("max", std::move(axes), a.rank())), {a});
}
Traced detail::min_or_identity(const Traced& a, std::vector<std::int64_t> axes) {
  return apply(ops::reduce(OpKind::ReduceMin, a.type(), normalize_axes("min", std::move(axes), a.rank())), {a});
}
Traced max(const Traced& a, std::vector<std::int64_t> axes) {
  axes = normalize_axes("max", std::move(axes), a.rank());
  require_nonempty_axes("max", a, axes);
  return detail::max_or_identity(a, std::move(axes));
}
Traced min(const Traced& a, std::vector<std::int64_t> axes) {
  axes = normalize_axes("min", std::move(axes), a.rank());
  require_nonempty_axes("min", a, axes);
  return detail::min_or_identity(a, std::move(axes));
}

namespace {
std::pair<Traced, Traced> with_index(OpKind kind, const char* name, const Traced& a, std::int64_t axis) {
  const std::int64_t k = normalize_axes(name, {axis}, a.rank())[0];
  require_nonempty_axes(name, a, {k});
  const Traced operand[] = {a};
  std::vector<Traced> r = apply_outputs(ops::reduce_index(kind, a.type(), k), operand);
  return {r[0], r[1]};
}
}  // namespace

std::pair<Traced, Traced> max_with_index(const Traced& a, std::int64_t axis) {
  return with_index(OpKind::ReduceMaxIndex, "max_with_index", a, axis);
}
std::pair<Traced, Traced> min_with_index(const Traced& a, std::int64_t axis) {
  return with_index(OpKind::ReduceMinIndex, "min_with_index", a, axis);
}
Traced argmax(const Traced& a, std::int64_t axis) { return with_index(OpKind::ReduceMaxIndex, "argmax", a, axis).second; }
Traced argmin(const Traced& a, std::int64_t axis) { return with_index(OpKind::ReduceMinIndex, "argmin", a, axis).second; }

Traced stop_gradient(const Traced& a) { return apply(ops::stop_gradient(a.type()), {a}); }
Traced mean(const Traced& a) { return mean(a, all_axes(a.rank())); }
Traced mean(const Traced& a, std::vector<std::int64_t> axes) {
  axes = normalize_axes("mean", std::move(axes), a.rank());
  std::int64_t count = 1;
  for (auto ax : axes) count *= a.shape()[static_cast<std::size_t>(ax)];
  Traced s = sum(a, axes);
  return s / static_cast<double>(count);
}

Traced dot_general(const Traced& a, const Traced& b, DotDims dims) {
  return apply(ops::dot_general(a.type(), b.type(), std::move(dims)), {a, b});
}

Traced semiring_dot_general(const Traced& a, const Traced& b, Semiring semiring, DotDims dims) {
  return apply(ops::semiring_dot_general(a.type(), b.type(), semiring, std::move(dims)), {a, b});
}

std::pair<Traced, Traced> semiring_dot_general_index(const Traced& a, const Traced& b, Semiring semiring,
                                                     DotDims dims) {
  const Traced operands[] = {a, b};
  auto r = apply_outputs(ops::semiring_dot_general_index(a.type(), b.type(), semiring, std::move(dims)), operands);
  return {r[0], r[1]};
}

Traced matmul(const Traced& a, const Traced& b) {
  const auto ra = static_cast<std::int64_t>(a.rank()), rb = static_cast<std::int64_t>(b.rank());
  if (ra == 0 || rb == 0) {
    throw ShapeError("matmul: operands must have rank >= 1, got " + a.type().to_string() + " and " +
                     b.type().to_string());
  }
  DotDims d;
  if (ra <= 2 && rb <= 2) {
    d.lhs_contract = {ra - 1};
    d.rhs_contract = {rb == 1 ? 0 : rb - 2};
  } else if (ra == rb) {
    for (std::int64_t i = 0; i < ra - 2; ++i) {
      d.lhs_batch.push_back(i);
      d.rhs_batch.push_back(i);
    }
    d.lhs_contract = {ra - 1};
    d.rhs_contract = {rb - 2};
  } else {
    throw ShapeError("matmul: batched operands need equal ranks, got " + a.type().to_string() + " and " +
                     b.type().to_string());
  }
  return dot_general(a, b, std::move(d));
}

}  // namespace tenferro
