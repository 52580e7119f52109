// The control-flow API (tenferro/control_flow.hpp): traces the callables into regions and records
// the scan, cond and while_loop primitives (src/ops/scan.cpp, cond.cpp, while_loop.cpp).
#include "tenferro/control_flow.hpp"

#include <cmath>
#include <limits>
#include <numeric>

#include "api/detached_loop.hpp"
#include "api/reduce_identity.hpp"
#include "api/trace_body.hpp"
#include "regions/bodies.hpp"
#include "tenferro/indexing.hpp"
#include "tenferro/ops/control_attrs.hpp"
#include "tenferro/ops/record.hpp"

namespace tenferro {

namespace {
using detail::BodyFn;

std::vector<TensorType> types_of(const TracedList& values) {
  std::vector<TensorType> types;
  for (const Traced& v : values) types.push_back(v.type());
  return types;
}

/// Throws ShapeError naming `who` unless `got` has the types of `expected` (a carry).
void require_carry_types(const std::string& who, const TracedList& expected, const TracedList& got) {
  const auto want = types_of(expected), have = types_of(got);
  if (want != have) {
    throw ShapeError(who + ": the body returns a carry of (" + detail::types_list(have) + ") for a carry of (" +
                     detail::types_list(want) + "); the carry must keep its count, shapes and dtypes");
  }
}

TracedList record(const StdTensorOp& op, const TracedList& operands) { return apply_outputs(op, operands); }
}  // namespace

namespace {
/// xs[begin:end] along the leading axis.
Traced leading_slice(const Traced& x, std::int64_t begin, std::int64_t end) {
  std::vector<std::int64_t> start(x.rank(), 0), limit(x.shape().begin(), x.shape().end());
  start[0] = begin;
  limit[0] = end;
  return slice(x, std::move(start), std::move(limit));
}

/// x [n, ...] as [n / k, k, ...] and back.
Traced blocked(const Traced& x, std::int64_t k) {
  Shape shape = x.shape();
  shape[0] /= k;
  shape.insert(shape.begin() + 1, k);
  return reshape(x, std::move(shape));
}
Traced unblocked(const Traced& x) {
  Shape shape(x.shape().begin() + 1, x.shape().end());
  shape[0] *= x.shape()[0];
  return reshape(x, std::move(shape));
}

/// The scan, forward, in nested checkpointed blocks: with block sizes [k, rest...] (descending),
/// an outer scan over the full blocks of k steps whose step is a checkpoint of the same scan over
/// those k steps with blocks [rest...], then the remaining steps with blocks [rest...]; with no
/// block sizes, the plain scan.
std::pair<TracedList, TracedList> scan_nested(const ScanBody& f, const TracedList& init, const TracedList& xs,
                                              std::int64_t length, std::span<const std::int64_t> sizes) {
  if (sizes.empty() || length == 0) return scan(f, init, xs, ScanOptions{.length = length});
  const std::int64_t k = sizes[0], blocks = length / k, full = blocks * k;
  const std::span<const std::int64_t> rest = sizes.subspan(1);
  TracedList carry = init, ys;
  if (blocks > 0) {
    TracedList block_xs;
    for (const Traced& x : xs) block_xs.push_back(blocked(full == length ? x : leading_slice(x, 0, full), k));
    const std::size_t nc = init.size();
    auto block = [&](const TracedList& c, const TracedList& bx) {
      const Branch run = [&](const TracedList& operands) {
        const TracedList c0(operands.begin(), operands.begin() + static_cast<std::ptrdiff_t>(nc));
        const TracedList x0(operands.begin() + static_cast<std::ptrdiff_t>(nc), operands.end());
        auto inner = scan_nested(f, c0, x0, k, rest);
        TracedList out = inner.first;
        out.insert(out.end(), inner.second.begin(), inner.second.end());
        return out;
      };
      TracedList operands = c;
      operands.insert(operands.end(), bx.begin(), bx.end());
      const TracedList r = checkpoint(run, operands);
      return std::pair{TracedList(r.begin(), r.begin() + static_cast<std::ptrdiff_t>(nc)),
                       TracedList(r.begin() + static_cast<std::ptrdiff_t>(nc), r.end())};
    };
    auto outer = scan(block, init, block_xs, ScanOptions{.length = blocks});
    carry = outer.first;
    for (const Traced& y : outer.second) ys.push_back(unblocked(y));
  }
  if (full < length) {
    TracedList tail_xs;
    for (const Traced& x : xs) tail_xs.push_back(leading_slice(x, full, length));
    auto tail = scan_nested(f, carry, tail_xs, length - full, rest);
    carry = tail.first;
    if (ys.empty()) {
      ys = tail.second;
    } else {
      for (std::size_t j = 0; j < ys.size(); ++j) ys[j] = concatenate(std::vector<Traced>{ys[j], tail.second[j]}, 0);
    }
  }
  return {carry, ys};
}

}  // namespace

std::pair<TracedList, TracedList> scan(const ScanBody& f, const TracedList& init, const TracedList& xs,
                                       ScanOptions options) {
  if (options.checkpoint_every < 0 || options.checkpoint_snapshots < 0) {
    throw ValueError("scan: checkpoint_every " + std::to_string(options.checkpoint_every) + " and checkpoint_snapshots " +
                     std::to_string(options.checkpoint_snapshots) + " must not be negative");
  }
  if (options.checkpoint_every > 0 && options.checkpoint_snapshots > 0) {
    throw ValueError("scan: give checkpoint_every or checkpoint_snapshots, not both");
  }
  if (options.checkpoint_every > 0) {
    std::optional<std::int64_t> length = options.length;
    for (const Traced& x : xs) {
      if (x.rank() > 0) length = x.shape()[0];
    }
    if (!length) throw ShapeError("scan: without xs the length must be given (ScanOptions::length)");
    if (*length < 0) throw ShapeError("scan: the length " + std::to_string(*length) + " is negative");
    const std::vector<std::int64_t> sizes{options.checkpoint_every};
    // A reverse scan is the forward scan of the reversed xs, its ys reversed back.
    TracedList in = xs;
    if (options.reverse) {
      for (Traced& x : in) x = reverse(x, {0});
    }
    auto r = scan_nested(f, init, in, *length, sizes);
    if (options.reverse) {
      for (Traced& y : r.second) y = reverse(y, {0});
    }
    return r;
  }
  std::optional<std::int64_t> length = options.length;
  for (std::size_t j = 0; j < xs.size(); ++j) {
    if (xs[j].rank() == 0) {
      throw ShapeError("scan: xs " + std::to_string(j) + " is a scalar " + xs[j].type().to_string() +
                       "; xs are scanned along their leading axis");
    }
    const std::int64_t n = xs[j].shape()[0];
    if (length && *length != n) {
      throw ShapeError("scan: xs " + std::to_string(j) + " has leading extent " + std::to_string(n) + " but the length is " +
                       std::to_string(*length));
    }
    length = n;
  }
  if (!length) throw ShapeError("scan: without xs the length must be given (ScanOptions::length)");
  if (*length < 0) throw ShapeError("scan: the length " + std::to_string(*length) + " is negative");
  TracedList operands = init;
  operands.insert(operands.end(), xs.begin(), xs.end());
  const auto parent = detail::innermost(operands, "scan");
  std::vector<TensorType> types = types_of(init);
  for (const Traced& x : xs) types.push_back(TensorType{x.dtype(), Shape(x.shape().begin() + 1, x.shape().end())});
  const BodyFn body = [&](std::span<const Traced> args) {
    TracedList carry(args.begin(), args.begin() + static_cast<std::ptrdiff_t>(init.size()));
    TracedList x(args.begin() + static_cast<std::ptrdiff_t>(init.size()), args.end());
    auto [next, ys] = f(carry, x);
    require_carry_types("scan", carry, next);
    next.insert(next.end(), ys.begin(), ys.end());
    return next;
  };
  detail::TracedBody traced = detail::trace_body(parent, types, body, {}, "scan");
  operands.insert(operands.end(), traced.captures.begin(), traced.captures.end());
  ScanAttrs attrs{Body(traced.region), *length, options.reverse, static_cast<std::uint32_t>(init.size()),
                  static_cast<std::uint32_t>(xs.size()), static_cast<std::uint32_t>(traced.captures.size()),
                  options.checkpoint_snapshots};
  const TracedList results = record(ops::scan(std::move(attrs), types_of(operands)), operands);
  const auto split = results.begin() + static_cast<std::ptrdiff_t>(init.size());
  return {TracedList(results.begin(), split), TracedList(split, results.end())};
}

TracedList fori_loop(std::int64_t lower, std::int64_t upper, const ForiBody& body, const TracedList& init,
                     LoopCheckpointing checkpointing) {
  if (upper < lower) {
    throw ShapeError("fori_loop: upper bound " + std::to_string(upper) + " is below lower bound " + std::to_string(lower) +
                     " (a negative trip count)");
  }
  if (init.empty()) throw ShapeError("fori_loop: needs a carry");
  std::vector<std::int64_t> steps(static_cast<std::size_t>(upper - lower));
  std::iota(steps.begin(), steps.end(), lower);
  const Traced is = constant(init[0], Tensor::from(steps, {upper - lower}));
  auto step = [&](const TracedList& carry, const TracedList& x) {
    TracedList next = body(x[0], carry);
    return std::pair{std::move(next), TracedList{}};
  };
  return scan(step, init, {is}, {.checkpoint_every = checkpointing.every, .checkpoint_snapshots = checkpointing.snapshots}).first;
}

namespace {
/// The region op `kind` of an R entry of the op list on `operands`, its body traced from f
/// (OpDef::region_surface says on which input types and how the op is built).
TracedList record_region_op(OpKind kind, const Branch& f, const TracedList& operands) {
  const OpDef& def = op_def(kind);
  const std::vector<TensorType> types = def.region_surface->body_inputs(types_of(operands));
  const auto parent = detail::innermost(operands, def.name);
  const detail::BodyFn fn = [&f](std::span<const Traced> args) { return f(TracedList(args.begin(), args.end())); };
  detail::TracedBody body = detail::trace_body(parent, types, fn, {}, def.name);
  TracedList all = operands;
  all.insert(all.end(), body.captures.begin(), body.captures.end());
  return record(def.region_surface->build(body.region.graph(), types_of(all), operands.size()), all);
}
}  // namespace

#define TENFERRO_DEFINE_REGION(X, kind, name) \
  TracedList name(const Branch& f, const TracedList& operands) { return record_region_op(OpKind::kind, f, operands); }
TENFERRO_OP_LIST(TENFERRO_OP_LIST_NONE, TENFERRO_OP_LIST_SKIP, TENFERRO_OP_LIST_SKIP, TENFERRO_OP_LIST_SKIP_M,
                 TENFERRO_DEFINE_REGION)
#undef TENFERRO_DEFINE_REGION

TracedList switch_case(const Traced& index, const std::vector<Branch>& branches, const TracedList& operands) {
  return detail::switch_case_op(index, branches, operands, false);
}

TracedList checkpoint(const Branch& f, const TracedList& operands) {
  if (operands.empty()) throw ShapeError("checkpoint: needs at least one operand (the values f's intermediates are recomputed from)");
  return detail::switch_case_op(constant(operands[0], Tensor::from(std::vector<std::int64_t>{0}, {})), {f}, operands, true);
}

TracedList detail::checkpoint_reading_results(const Branch& f, const TracedList& operands) {
  if (operands.empty()) throw ShapeError("checkpoint: needs at least one operand (the values f's intermediates are recomputed from)");
  return switch_case_op(constant(operands[0], Tensor::from(std::vector<std::int64_t>{0}, {})), {f}, operands, true, true);
}

TracedList detail::switch_case_op(const Traced& index, const std::vector<Branch>& branches, const TracedList& operands,
                                  bool checkpoint, bool reads_results) {
  if (branches.empty()) throw ShapeError("cond: needs at least one branch");
  const TensorType& it = index.type();
  if (it.rank() != 0 || !(it.dtype == DType::I64 || it.dtype == DType::Bool)) {
    throw DTypeError("cond: the index (predicate) is " + it.to_string() + "; expected an i64 or bool scalar");
  }
  TracedList all{index};
  all.insert(all.end(), operands.begin(), operands.end());
  const auto parent = detail::innermost(all, "cond");
  const auto types = types_of(operands);
  std::vector<BodyFn> fns;
  for (const Branch& branch : branches) {
    fns.push_back([&branch](std::span<const Traced> args) { return branch(TracedList(args.begin(), args.end())); });
  }
  auto [regions, captures] = detail::trace_bodies(parent, types, fns, "cond");
  const auto results0 = detail::region_output_types(regions[0]);
  for (std::size_t b = 1; b < regions.size(); ++b) {
    const auto results = detail::region_output_types(regions[b]);
    if (results != results0) {
      throw ShapeError("cond: branch " + std::to_string(b) + " returns (" + detail::types_list(results) +
                       ") but branch 0 returns (" + detail::types_list(results0) + "); every branch must return the same types");
    }
  }
  all.insert(all.end(), captures.begin(), captures.end());
  CondAttrs attrs;
  for (Region& r : regions) attrs.branches.emplace_back(std::move(r));
  attrs.n_operands = static_cast<std::uint32_t>(all.size() - 1);
  attrs.checkpoint = checkpoint;
  attrs.reads_results = reads_results;
  return record(ops::cond(std::move(attrs), types_of(all)), all);
}

TracedList cond(const Traced& pred, const Branch& on_true, const Branch& on_false, const TracedList& operands) {
  return switch_case(pred, {on_false, on_true}, operands);
}

namespace {
/// The while_loop primitive over init; with `detach`, its captured operands pass through
/// stop_gradient (detail::detached_while_loop).
TracedList record_while(const LoopCondition& cond_fn, const LoopBody& body, const TracedList& init, bool detach);
}  // namespace

TracedList while_loop(const LoopCondition& cond_fn, const LoopBody& body, const TracedList& init, WhileOptions options) {
  if (init.empty()) throw ShapeError("while_loop: needs a carry");
  if (options.max_trips) {
    if (*options.max_trips < 0) {
      throw ShapeError("while_loop: max_trips " + std::to_string(*options.max_trips) + " is negative");
    }
    // A scan of max_trips steps, each running the body only while the condition holds.
    auto step = [&](const TracedList& carry, const TracedList&) {
      const Traced go = cond_fn(carry);
      TracedList next = cond(go, [&](const TracedList& c) {
        TracedList n = body(c);
        require_carry_types("while_loop", c, n);
        return n;
      }, [](const TracedList& c) { return c; }, carry);
      return std::pair{std::move(next), TracedList{}};
    };
    return scan(step, init, {}, ScanOptions{.length = *options.max_trips}).first;
  }
  return record_while(cond_fn, body, init, false);
}

TracedList detail::detached_while_loop(const LoopCondition& cond_fn, const LoopBody& body, const TracedList& init) {
  TracedList detached;
  for (const Traced& v : init) detached.push_back(is_inexact(v.dtype()) ? stop_gradient(v) : v);
  return record_while(cond_fn, body, detached, true);
}

namespace {
TracedList record_while(const LoopCondition& cond_fn, const LoopBody& body, const TracedList& init, bool detach) {
  const auto parent = detail::innermost(init, "while_loop");
  const auto types = types_of(init);
  const std::size_t nc = init.size();
  const BodyFn c = [&](std::span<const Traced> args) {
    const Traced p = cond_fn(TracedList(args.begin(), args.begin() + static_cast<std::ptrdiff_t>(nc)));
    if (p.type() != TensorType{DType::Bool, {}}) {
      throw DTypeError("while_loop: the condition returns " + p.type().to_string() + "; expected a bool scalar");
    }
    return TracedList{p};
  };
  const BodyFn b = [&](std::span<const Traced> args) {
    TracedList carry(args.begin(), args.begin() + static_cast<std::ptrdiff_t>(nc));
    TracedList next = body(carry);
    require_carry_types("while_loop", carry, next);
    return next;
  };
  // Both regions take [carry..., constants...]: trace_bodies gives them one capture list.
  const BodyFn fns[] = {c, b};
  auto [regions, captures] = detail::trace_bodies(parent, types, fns, "while_loop");
  TracedList operands = init;
  for (const Traced& v : captures) operands.push_back(detach && is_inexact(v.dtype()) ? stop_gradient(v) : v);
  WhileAttrs attrs{Body(regions[0]), Body(regions[1]), static_cast<std::uint32_t>(nc),
                   static_cast<std::uint32_t>(captures.size())};
  return record(ops::while_loop(std::move(attrs), types_of(operands)), operands);
}
}  // namespace

TracedList fixed_point(const FixedPointMap& f, const TracedList& x0, const TracedList& params,
                       FixedPointOptions options) {
  if (x0.empty()) throw ShapeError("fixed_point: needs at least one unknown");
  if (options.max_iter < 1 || options.derivative_steps < 0 || !(options.tol >= 0)) {
    throw ValueError("fixed_point: max_iter must be at least 1, derivative_steps and tol non-negative (got max_iter " +
                     std::to_string(options.max_iter) + ", derivative_steps " + std::to_string(options.derivative_steps) +
                     ", tol " + std::to_string(options.tol) + ")");
  }
  const std::size_t n = x0.size();
  auto apply = [&](const TracedList& x, const TracedList& p) {
    TracedList next = f(x, p);
    require_carry_types("fixed_point", x, next);
    return next;
  };
  // The solve, on detached values: carry [x..., largest step so far (f64), step count (i64)].
  TracedList detached_params;
  for (const Traced& p : params) detached_params.push_back(stop_gradient(p));
  TracedList init;
  for (const Traced& x : x0) init.push_back(stop_gradient(x));
  const Traced like = init[0];
  init.push_back(constant(like, Tensor::scalar(std::numeric_limits<double>::infinity())));
  init.push_back(constant(like, Tensor::from(std::vector<std::int64_t>{0}, {})));
  const Traced tol = constant(like, Tensor::scalar(options.tol));
  const Traced limit = constant(like, Tensor::from(std::vector<std::int64_t>{options.max_iter}, {}));
  const Traced one = constant(like, Tensor::from(std::vector<std::int64_t>{1}, {}));
  // Go on while the last step moved more than tol and fewer than max_iter steps ran: both
  // margins positive (in f64).
  auto cond_fn = [&](const TracedList& c) {
    return gt(minimum(c[n] - tol, astype(limit, DType::F64) - astype(c[n + 1], DType::F64)), tol * 0.0);
  };
  auto body = [&](const TracedList& c) {
    const TracedList x(c.begin(), c.begin() + static_cast<std::ptrdiff_t>(n));
    TracedList next = apply(x, detached_params);
    Traced step = constant(like, Tensor::scalar(0.0));
    for (std::size_t i = 0; i < n; ++i) {
      Traced moved = abs(next[i] - x[i]);
      std::vector<std::int64_t> axes(moved.rank());
      std::iota(axes.begin(), axes.end(), std::int64_t{0});
      if (!axes.empty()) moved = detail::max_or_identity(moved, axes);  // -inf for empty unknowns
      step = maximum(step, astype(moved, DType::F64));
    }
    next.push_back(step);
    next.push_back(c[n + 1] + one);
    return next;
  };
  TracedList solved = detail::detached_while_loop(cond_fn, body, init);
  solved.erase(solved.begin() + static_cast<std::ptrdiff_t>(n), solved.end());
  if (options.derivative_steps == 0) return solved;
  // The derivative: derivative_steps applications of f from the detached solution. The value
  // stays x*; the tangent follows t <- (df/dx) t + (df/dp) dp, the Richardson iteration of the
  // implicit-function theorem's linear system.
  auto step = [&](const TracedList& x, const TracedList&) { return std::pair{apply(x, params), TracedList{}}; };
  const TracedList refined = scan(step, solved, {}, ScanOptions{.length = options.derivative_steps}).first;
  TracedList result;
  for (std::size_t i = 0; i < n; ++i) result.push_back(solved[i] + (refined[i] - stop_gradient(refined[i])));
  return result;
}

}  // namespace tenferro
