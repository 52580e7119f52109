// Tracing callables into body regions (trace_body.hpp).
#include "api/trace_body.hpp"

#include "tenferro/error.hpp"
#include "tenferro/ops/record.hpp"
#include "tenferro/transforms.hpp"

namespace tenferro::detail {

namespace {
bool encloses(const TraceState* outer, const TraceState* inner) {
  for (const TraceState* t = inner; t; t = t->parent.get()) {
    if (t == outer) return true;
  }
  return false;
}

/// The bodies being traced on this thread, innermost last: a construct recorded inside a body
/// nests in that body even when its own operands all come from an enclosing trace.
thread_local std::vector<std::shared_ptr<TraceState>> tracing_bodies;

struct BodyScope {
  explicit BodyScope(std::shared_ptr<TraceState> state) : recording_(state) { tracing_bodies.push_back(std::move(state)); }
  ~BodyScope() { tracing_bodies.pop_back(); }
  BodyScope(const BodyScope&) = delete;
  BodyScope& operator=(const BodyScope&) = delete;

 private:
  RecordingScope recording_;
};

/// The traces being recorded on this thread (functions and bodies), innermost last.
thread_local std::vector<std::shared_ptr<TraceState>> recording_traces;
}  // namespace

RecordingScope::RecordingScope(std::shared_ptr<TraceState> state) { recording_traces.push_back(std::move(state)); }
RecordingScope::~RecordingScope() { recording_traces.pop_back(); }

std::optional<Traced> recording_anchor() {
  if (recording_traces.empty()) return std::nullopt;
  const std::shared_ptr<TraceState>& trace = recording_traces.back();
  return Traced(trace, trace->builder.add(ops::constant(Tensor::scalar(0.0)), {}));
}

std::shared_ptr<TraceState> body_being_traced() {
  return tracing_bodies.empty() ? nullptr : tracing_bodies.back();
}

Traced record_nullary(const Traced& like, const StdTensorOp& op) {
  if (op.kind == OpKind::Constant) return constant(like, *op.attrs.get<ConstantValue>().value);
  Tensor value;
  op.run_kernel({}, std::span<Tensor>(&value, 1));
  return constant(like, std::move(value));
}

std::shared_ptr<TraceState> innermost(std::span<const Traced> values, const std::string& who) {
  std::shared_ptr<TraceState> best;
  for (const Traced& v : values) {
    if (!best || encloses(best.get(), v.trace().get())) {
      best = v.trace();
    } else if (!encloses(v.trace().get(), best.get())) {
      throw Error("tenferro " + who + ": operands come from different traces (neither encloses the other)");
    }
  }
  if (!tracing_bodies.empty()) {
    const auto& body = tracing_bodies.back();
    if (!best || encloses(best.get(), body.get())) best = body;
  }
  if (!best) throw Error("tenferro " + who + ": needs at least one traced operand (none was given)");
  return best;
}

TracedBody trace_body(const std::shared_ptr<TraceState>& parent, std::span<const TensorType> types, const BodyFn& fn,
                      std::span<const Traced> captures, const std::string& who) {
  auto state = std::make_shared<TraceState>();
  state->parent = parent;
  std::vector<Traced> args;
  args.reserve(types.size());
  for (std::size_t i = 0; i < types.size(); ++i) {
    args.emplace_back(state, state->builder.add_input(TensorKey{"a" + std::to_string(i), types[i]}));
  }
  for (const Traced& c : captures) capture_into(state, c);
  std::vector<Traced> results;
  {
    BodyScope scope(state);
    results = fn(args);
  }
  std::vector<computegraph::LocalValueId> outs;
  for (const Traced& r : results) {
    try {
      outs.push_back(capture_into(state, r));
    } catch (const Error&) {
      throw Error("tenferro " + who + ": the body returned a value of an unrelated trace");
    }
  }
  state->builder.set_outputs(std::move(outs));
  TracedBody body;
  for (const auto& [outer, inner] : state->captures) body.captures.emplace_back(parent, outer);
  body.region = Region(state->builder.finish(), who);
  return body;
}

std::pair<std::vector<Region>, std::vector<Traced>> trace_bodies(const std::shared_ptr<TraceState>& parent,
                                                                 std::span<const TensorType> types,
                                                                 std::span<const BodyFn> fns, const std::string& who) {
  std::vector<TracedBody> bodies;
  std::vector<Traced> all;
  auto same = [](const Traced& a, const Traced& b) { return a.trace() == b.trace() && a.id() == b.id(); };
  for (const BodyFn& fn : fns) {
    bodies.push_back(trace_body(parent, types, fn, all, who));
    for (const Traced& c : bodies.back().captures) {
      bool seen = false;
      for (const Traced& a : all) seen = seen || same(a, c);
      if (!seen) all.push_back(c);
    }
  }
  std::vector<Region> regions;
  for (std::size_t i = 0; i < fns.size(); ++i) {
    if (bodies[i].captures.size() != all.size()) bodies[i] = trace_body(parent, types, fns[i], all, who);
    regions.push_back(bodies[i].region);
  }
  return {std::move(regions), std::move(all)};
}

}  // namespace tenferro::detail
