// rematerialize (tenferro/control_flow.hpp): f traced once on its own, its operations cut into
// consecutive checkpoints, as few as keep the planned peak of the gradient program within the
// memory limit. checkpoint(f, policy) cuts the same way where its policy says what to keep.
//
// Why this works on any graph: the operations of a traced graph are in topological order, so any
// cut of that order into consecutive ranges is a sequence of checkpoints, each taking the values
// defined before it that it reads and returning those that later ranges or f's results read. The
// gradient then keeps only those boundary values, and recomputes one range at a time. Ranges are
// cut where their results' bytes are about equal. The plan (Program::planned_peak_bytes, the
// executor's run plan) is that of the gradient of the sum of f's float results with respect to
// its float operands; candidates are tried from no checkpoint up, each compiled once.
#include <algorithm>
#include <limits>
#include <string>

#include "api/trace_body.hpp"
#include "computegraph/replay.hpp"
#include "regions/revolve.hpp"
#include "tenferro/ops/control_attrs.hpp"
#include "tenferro/control_flow.hpp"
#include "tenferro/ops/builtin_attrs.hpp"
#include "tenferro/ops/make.hpp"
#include "tenferro/ops/record.hpp"
#include "tenferro/program.hpp"
#include "tenferro/transforms.hpp"

namespace tenferro {

namespace {

using Graph = computegraph::Graph<StdTensorOp>;

/// How the automatic schedule checkpoints f's loops: 0 leaves them as they are; r >= 1 gives each
/// scan of f (not already checkpointed) binomial checkpointing with the fewest snapshots that
/// recompute each step at most r times (ScanOptions::checkpoint_snapshots).
using LoopRepetitions = std::int64_t;

/// `op` as recorded under `loops`: a scan gets its snapshots.
StdTensorOp with_loop_schedule(const StdTensorOp& op, std::span<const Traced> in, LoopRepetitions loops) {
  if (loops <= 0 || op.kind != OpKind::Scan) return op;
  ScanAttrs attrs = op.attrs.get<ScanAttrs>();
  if (attrs.snapshots > 0 || attrs.length < 3) return op;
  attrs.snapshots = detail::revolve_snapshots_for(attrs.length, loops);
  if (attrs.snapshots >= attrs.length - 1) return op;  // every carry: the plain scan's memory
  std::vector<TensorType> types;
  for (const Traced& x : in) types.push_back(x.type());
  return ops::scan(std::move(attrs), types);
}

/// f's operations [begin, end) of `g` recorded on `values` (one per value of g that they read;
/// the others stay as they are); like: a value of the trace for constants.
void record_range(const Graph& g, std::size_t begin, std::size_t end, std::vector<std::optional<Traced>>& values,
                  const Traced& like, LoopRepetitions loops) {
  computegraph::replay_into(
      g, values,
      [&](const StdTensorOp& op, const computegraph::OperationRole&, std::span<const Traced> in) {
        return in.empty() ? std::vector<Traced>{detail::record_nullary(like, op)}
                          : apply_outputs(with_loop_schedule(op, in, loops), in);
      },
      [begin, end](std::size_t index, const auto&) { return index >= begin && index < end; });
}

/// g (closed, inputs = operands) recorded on `operands` with its operations in `cuts.size() - 1`
/// checkpoints [cuts[s], cuts[s + 1]) (one range: no checkpoint).
TracedList record_segmented(const Graph& g, const std::vector<std::size_t>& cuts, const TracedList& operands,
                            LoopRepetitions loops = 0) {
  std::vector<std::optional<Traced>> values(g.values().size());
  for (std::size_t i = 0; i < operands.size(); ++i) values[g.inputs()[i]] = operands[i];
  const Traced like = operands.at(0);
  if (cuts.size() <= 2) {
    record_range(g, 0, g.operations().size(), values, like, loops);
  } else {
    // Where each value is defined (operation index; inputs: -1) and last read (f's results: end).
    const std::size_t n = g.operations().size();
    std::vector<std::ptrdiff_t> defined(g.values().size(), -1);
    std::vector<std::size_t> last_read(g.values().size(), 0);
    for (std::size_t i = 0; i < n; ++i) {
      for (auto v : g.operations()[i].outputs) defined[v] = static_cast<std::ptrdiff_t>(i);
      for (auto v : g.local_operands(static_cast<computegraph::LocalOperationId>(i))) last_read[v] = std::max(last_read[v], i);
    }
    for (auto v : g.outputs()) last_read[v] = n;
    for (std::size_t s = 0; s + 1 < cuts.size(); ++s) {
      const std::size_t begin = cuts[s], end = cuts[s + 1];
      std::vector<computegraph::LocalValueId> reads, writes;
      for (std::size_t i = begin; i < end; ++i) {
        for (auto v : g.local_operands(static_cast<computegraph::LocalOperationId>(i))) {
          if (defined[v] < static_cast<std::ptrdiff_t>(begin) && std::find(reads.begin(), reads.end(), v) == reads.end()) {
            reads.push_back(v);
          }
        }
        for (auto v : g.operations()[i].outputs) {
          if (last_read[v] >= end) writes.push_back(v);
        }
      }
      if (writes.empty()) continue;  // nothing later reads it: dead code, left out
      TracedList in;
      for (auto v : reads) in.push_back(*values[v]);
      if (in.empty()) in.push_back(like);  // a range of constants: a checkpoint needs an operand
      const Branch branch = [&g, begin, end, &reads, &writes, loops](const TracedList& args) {
        std::vector<std::optional<Traced>> local(g.values().size());
        for (std::size_t k = 0; k < reads.size(); ++k) local[reads[k]] = args[k];
        record_range(g, begin, end, local, args.at(0), loops);
        TracedList out;
        for (auto v : writes) out.push_back(*local[v]);
        return out;
      };
      // Each range's results are the values kept between ranges: its derivative reads them.
      const TracedList out = detail::checkpoint_reading_results(branch, in);
      for (std::size_t k = 0; k < writes.size(); ++k) values[writes[k]] = out[k];
    }
  }
  TracedList results;
  for (auto v : g.outputs()) results.push_back(*values.at(v));
  return results;
}

/// `count` ranges of g's operations with about equal bytes of results each.
std::vector<std::size_t> even_cuts(const Graph& g, std::size_t count) {
  const std::size_t n = g.operations().size();
  std::vector<double> bytes(n + 1, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    double b = 0;
    for (auto v : g.operations()[i].outputs) {
      const TensorType& t = type_of(g.key(v));
      b += static_cast<double>(t.numel()) * static_cast<double>(dtype_size(t.dtype));
    }
    bytes[i + 1] = bytes[i] + b;
  }
  std::vector<std::size_t> cuts{0};
  for (std::size_t s = 1; s < count; ++s) {
    const double target = bytes[n] * static_cast<double>(s) / static_cast<double>(count);
    const auto at = static_cast<std::size_t>(std::lower_bound(bytes.begin(), bytes.end(), target) - bytes.begin());
    if (at > cuts.back() && at < n) cuts.push_back(at);
  }
  cuts.push_back(n);
  return cuts;
}

/// The planned peak of the gradient of sum(float results) of g segmented at `cuts`, with respect
/// to the float operands.
std::size_t planned_gradient_peak(const Graph& g, const std::vector<std::size_t>& cuts, LoopRepetitions loops,
                                  const std::vector<TensorType>& types) {
  std::vector<std::size_t> wrt;
  for (std::size_t i = 0; i < types.size(); ++i) {
    if (is_inexact(types[i].dtype)) wrt.push_back(i);
  }
  const detail::TracedFunction loss = [&](const std::vector<Traced>& xs) {
    Traced total = constant(xs.at(0), Tensor::scalar(0.0));
    for (const Traced& y : record_segmented(g, cuts, xs, loops)) {
      if (!is_inexact(y.dtype())) continue;
      const Traced s = sum(is_complex(y.dtype()) ? real(y) : y);
      total = total + astype(s, DType::F64);
    }
    return std::vector<Traced>{total};
  };
  const detail::TransformedFunction gradient(loss, wrt);
  const GraphPtr program = detail::trace_function(
      [&](const std::vector<Traced>& xs) {
        std::vector<Traced> out = gradient.value_and_grads_traced(xs).second;
        return out;
      },
      types);
  return Program(program).planned_peak_bytes();
}

}  // namespace

TracedList checkpoint(const Branch& f, const TracedList& operands, CheckpointPolicy policy) {
  return checkpoint(f, operands, CheckpointOptions{.policy = policy});
}

TracedList checkpoint(const Branch& f, const TracedList& operands, const CheckpointOptions& options) {
  switch (options.policy) {
    case CheckpointPolicy::SaveNothing: return checkpoint(f, operands);
    case CheckpointPolicy::SaveEverything: return f(operands);
    case CheckpointPolicy::SaveDots:
    case CheckpointPolicy::SaveNamed: break;
  }
  if (operands.empty()) throw ShapeError("checkpoint: needs at least one operand (the values f's intermediates are recomputed from)");
  // f as a body of the enclosing trace: the values it reads from there become operands after
  // f's own.
  std::vector<TensorType> types;
  for (const Traced& x : operands) types.push_back(x.type());
  const auto parent = detail::innermost(std::span<const Traced>(operands), "checkpoint");
  const detail::TracedBody body = detail::trace_body(
      parent, types, [&f](std::span<const Traced> args) { return f(TracedList(args.begin(), args.end())); }, {}, "checkpoint");
  const Graph& g = *body.region.graph();
  // A cut after every value the policy keeps: each range ends with the operation that makes it.
  auto kept = [&options](const StdTensorOp& op) {
    if (options.policy == CheckpointPolicy::SaveDots) return op.def->dot_dims_contraction;
    if (op.kind != OpKind::CheckpointName) return false;
    const std::string& name = op.attrs.get<CheckpointNameAttr>().name;
    return options.names.empty() || std::find(options.names.begin(), options.names.end(), name) != options.names.end();
  };
  const std::size_t n = g.operations().size();
  std::vector<std::size_t> cuts{0};
  for (std::size_t i = 0; i + 1 < n; ++i) {
    if (kept(g.operations()[i].operation)) cuts.push_back(i + 1);
  }
  cuts.push_back(n);
  if (cuts.size() == 2) return checkpoint(f, operands);
  TracedList all = operands;
  all.insert(all.end(), body.captures.begin(), body.captures.end());
  return record_segmented(g, cuts, all);
}

Traced checkpoint_name(const Traced& x, std::string name) { return apply(ops::checkpoint_name(x.type(), std::move(name)), {x}); }

TracedList rematerialize(const Branch& f, const TracedList& operands, RematOptions options) {
  if (operands.empty()) throw ShapeError("rematerialize: needs at least one operand");
  std::vector<TensorType> types;
  bool any_float = false;
  for (const Traced& x : operands) {
    types.push_back(x.type());
    any_float = any_float || is_inexact(x.dtype());
  }
  const GraphPtr g = detail::trace_function([&f](const std::vector<Traced>& xs) { return f(xs); }, types);
  const std::size_t n = g->operations().size();
  if (options.memory_limit > 0 && options.checkpoints > 0) {
    throw ValueError("rematerialize: give memory_limit or checkpoints, not both");
  }
  std::vector<std::size_t> chosen{0, n};
  LoopRepetitions loops = 0;
  if (options.checkpoints > 1 && n > 1) chosen = even_cuts(*g, options.checkpoints);
  if (options.memory_limit > 0 && any_float && n > 1) {
    // Candidates in order of the recomputation they cost: no checkpoint; then ranges (2, 3, 4, 6,
    // 9, ... of them: each recomputed once, about one forward pass); then binomial checkpointing
    // of f's scans recomputing each step at most r = 2, 3, 4, 6, 8 times besides the pass that
    // rebuilds its residuals (about r + 1 passes over the loops), alone and with ranges. The
    // first whose plan fits is recorded.
    bool has_scan = false;
    for (const auto& node : g->operations()) has_scan = has_scan || node.operation.kind == OpKind::Scan;
    std::vector<std::pair<std::size_t, LoopRepetitions>> candidates;
    std::vector<std::size_t> counts;
    for (std::size_t count = 1; count <= n; count = count < 2 ? 2 : count + std::max<std::size_t>(1, count / 2)) {
      counts.push_back(count);
    }
    for (std::size_t count : counts) candidates.emplace_back(count, 0);
    if (has_scan) {
      for (LoopRepetitions r : {2, 3, 4, 6, 8}) {
        for (std::size_t count : counts) {
          if (count > 4) break;
          candidates.emplace_back(count, r);
        }
      }
    }
    std::size_t best_plan = std::numeric_limits<std::size_t>::max(), best_count = 1;
    LoopRepetitions best_loops = 0;
    bool fits = false;
    for (const auto& [count, r] : candidates) {
      const std::vector<std::size_t> cuts = even_cuts(*g, count);
      const std::size_t plan = planned_gradient_peak(*g, cuts, r, types);
      if (plan < best_plan) {
        best_plan = plan;
        best_count = cuts.size() - 1;
        best_loops = r;
      }
      if (plan <= options.memory_limit) {
        chosen = cuts;
        loops = r;
        fits = true;
        break;
      }
    }
    if (!fits) {
      throw ValueError("rematerialize: memory_limit " + std::to_string(options.memory_limit) +
                       " bytes is below every planned peak of the gradient; the lowest is " + std::to_string(best_plan) +
                       " bytes, with " + std::to_string(best_count) + " checkpoints" +
                       (best_loops > 0 ? " and loops recomputing each step up to " + std::to_string(best_loops) + " times" : ""));
    }
  }
  return record_segmented(*g, chosen, operands, loops);
}

}  // namespace tenferro
