// root (tenferro/control_flow.hpp): Newton's method on a traced function, with derivatives from
// the implicit-function theorem. The function is traced once into a region; its Jacobian in x
// comes from the region's JVP (regions/bodies.hpp), replayed into the trace once per column.
#include <algorithm>
#include <limits>

#include "api/detached_loop.hpp"
#include "api/reduce_identity.hpp"
#include "api/trace_body.hpp"
#include "computegraph/replay.hpp"
#include "regions/bodies.hpp"
#include "tenferro/control_flow.hpp"
#include "tenferro/indexing.hpp"
#include "tenferro/linalg.hpp"
#include "tenferro/ops/record.hpp"

namespace tenferro {

namespace {

/// Replays a closed graph (region or materialized JVP) into the trace of `args`, one per input.
template <class G>
TracedList replay(const G& graph, std::span<const Traced> args) {
  const Traced like = args[0];
  return computegraph::replay(graph, args, [&like](const StdTensorOp& op, const computegraph::OperationRole&,
                                                   std::span<const Traced> in) {
    return in.empty() ? TracedList{detail::record_nullary(like, op)} : apply_outputs(op, in);
  });
}

Traced flatten(const TracedList& parts) {
  TracedList flat;
  for (const Traced& p : parts) flat.push_back(reshape(p, {p.type().numel()}));
  return flat.size() == 1 ? flat[0] : concatenate(std::span<const Traced>(flat), 0);
}

TracedList unflatten(const Traced& flat, const TracedList& like) {
  TracedList parts;
  std::int64_t at = 0;
  for (const Traced& l : like) {
    const std::int64_t n = l.type().numel();
    parts.push_back(reshape(slice(flat, {at}, {at + n}), l.shape()));
    at += n;
  }
  return parts;
}

}  // namespace

TracedList root(const RootFunction& g, const TracedList& x0, const TracedList& params, RootOptions options) {
  if (x0.empty()) throw ShapeError("root: needs at least one unknown");
  if (options.max_iter < 1 || options.derivative_steps < 0 || !(options.tol >= 0)) {
    throw ValueError("root: max_iter must be at least 1, derivative_steps and tol non-negative (got max_iter " +
                     std::to_string(options.max_iter) + ", derivative_steps " + std::to_string(options.derivative_steps) +
                     ", tol " + std::to_string(options.tol) + ")");
  }
  const DType dtype = x0[0].dtype();
  for (const Traced& x : x0) {
    if (x.dtype() != dtype || !is_inexact(dtype)) {
      throw DTypeError("root: the unknowns must share one float or complex dtype; got " + x0[0].type().to_string() +
                       " and " + x.type().to_string());
    }
  }
  const std::size_t nx = x0.size();
  // g, traced once over [x..., params...] (plus what it captures).
  TracedList operands = x0;
  operands.insert(operands.end(), params.begin(), params.end());
  const auto parent = detail::innermost(operands, "root");
  std::vector<TensorType> types;
  for (const Traced& v : operands) types.push_back(v.type());
  const detail::BodyFn fn = [&](std::span<const Traced> args) {
    const TracedList x(args.begin(), args.begin() + static_cast<std::ptrdiff_t>(nx));
    const TracedList p(args.begin() + static_cast<std::ptrdiff_t>(nx), args.end());
    TracedList r = g(x, p);
    std::vector<TensorType> want, got;
    for (const Traced& v : x) want.push_back(v.type());
    for (const Traced& v : r) got.push_back(v.type());
    if (want != got) {
      throw ShapeError("root: g returns (" + detail::types_list(got) + ") for unknowns (" + detail::types_list(want) +
                       "); a square system returns one residual per unknown, of its type");
    }
    return r;
  };
  const detail::TracedBody body = detail::trace_body(parent, types, fn, {}, "root");
  std::vector<bool> active(types.size() + body.captures.size(), false);
  std::fill(active.begin(), active.begin() + static_cast<std::ptrdiff_t>(nx), true);
  const detail::JvpBody jvp = detail::jvp_body(body.region, active);
  std::int64_t n = 0;
  for (const Traced& x : x0) n += x.type().numel();

  auto arguments = [&](const TracedList& x, const TracedList& p) {
    TracedList args = x;
    args.insert(args.end(), p.begin(), p.end());
    args.insert(args.end(), body.captures.begin(), body.captures.end());
    return args;
  };
  // One Newton step: x - J^{-1} g(x), J = dg/dx column by column from the JVP.
  auto newton = [&](const TracedList& x, const TracedList& p) {
    const TracedList args = arguments(x, p);
    const Traced r = flatten(replay(*body.region.graph(), args));
    TracedList columns;
    for (std::int64_t j = 0; j < n; ++j) {
      std::vector<double> basis(static_cast<std::size_t>(n), 0.0);
      basis[static_cast<std::size_t>(j)] = 1.0;
      const Traced e = astype(constant(x[0], Tensor::from(basis, {n})), dtype);
      TracedList with_tangents = args;
      for (const Traced& t : unflatten(e, x)) with_tangents.push_back(t);
      const TracedList tangents = replay(jvp.graph, with_tangents);
      TracedList column;
      for (std::size_t i = 0, next = 0; i < nx; ++i) {
        column.push_back(jvp.present[i] ? tangents[next++] : full_like(x[i], 0.0));
      }
      columns.push_back(flatten(column));
    }
    const Traced jac = stack(std::span<const Traced>(columns), 1);
    const TracedList step = unflatten(linalg::solve(jac, r), x);
    TracedList next;
    for (std::size_t i = 0; i < nx; ++i) next.push_back(x[i] - step[i]);
    return std::pair{next, step};
  };

  // The solve on detached values: carry [x..., largest step (f64), step count (i64)].
  TracedList detached;
  for (const Traced& p : params) detached.push_back(is_inexact(p.dtype()) ? stop_gradient(p) : p);
  TracedList init;
  for (const Traced& x : x0) init.push_back(stop_gradient(x));
  const Traced like = init[0];
  init.push_back(constant(like, Tensor::scalar(std::numeric_limits<double>::infinity())));
  init.push_back(constant(like, Tensor::from(std::vector<std::int64_t>{0}, {})));
  const Traced tol = constant(like, Tensor::scalar(options.tol));
  const Traced limit = constant(like, Tensor::scalar(static_cast<double>(options.max_iter)));
  const Traced one = constant(like, Tensor::from(std::vector<std::int64_t>{1}, {}));
  auto go_on = [&](const TracedList& c) {
    return gt(minimum(c[nx] - tol, limit - astype(c[nx + 1], DType::F64)), tol * 0.0);
  };
  auto iterate = [&](const TracedList& c) {
    auto [next, step] = newton(TracedList(c.begin(), c.begin() + static_cast<std::ptrdiff_t>(nx)), detached);
    Traced moved = abs(flatten(step));
    next.push_back(astype(detail::max_or_identity(moved, {0}), DType::F64));
    next.push_back(c[nx + 1] + one);
    return next;
  };
  TracedList solved = detail::detached_while_loop(go_on, iterate, init);
  solved.erase(solved.begin() + static_cast<std::ptrdiff_t>(nx), solved.end());
  // The derivative: Newton steps from the detached root with live parameters. At a root Newton's
  // map has zero derivative in x, so one step's tangent is -J^{-1} (dg/dp) dp, the implicit
  // function theorem's, and k steps give the exact derivatives up to order k. Their value
  // change (a step of size |g(x*)|) is dropped: the result is bitwise the solve's.
  TracedList refined = solved;
  for (std::int64_t k = 0; k < options.derivative_steps; ++k) refined = newton(refined, params).first;
  TracedList result;
  for (std::size_t i = 0; i < nx; ++i) result.push_back(solved[i] + (refined[i] - stop_gradient(refined[i])));
  return result;
}

}  // namespace tenferro
