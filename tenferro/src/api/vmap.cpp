// vmap (tenferro/vmap.hpp): the function traced on one example, its graph replayed with each op's
// batching rule. Batched values carry the batch axis first throughout; the arguments' batch axes
// are moved there on entry and the results' moved to out_axes on exit.
#include "tenferro/vmap.hpp"

#include <string>

#include "api/trace_body.hpp"
#include "ir/batching.hpp"
#include "tenferro/ops/record.hpp"

namespace tenferro::detail {

namespace {
/// x with axis `from` moved to position `to` (both in range).
Traced move_axis(const Traced& x, std::int64_t from, std::int64_t to) {
  if (from == to) return x;
  std::vector<std::int64_t> perm;
  for (std::int64_t k = 0; k < static_cast<std::int64_t>(x.rank()); ++k) {
    if (k != from) perm.push_back(k);
  }
  perm.insert(perm.begin() + to, from);
  return transpose(x, std::move(perm));
}

std::string shape_text(const Shape& s) {
  std::string out = "[";
  for (std::size_t k = 0; k < s.size(); ++k) out += (k ? ", " : "") + std::to_string(s[k]);
  return out + "]";
}

}  // namespace

std::vector<Traced> vmap_traced(const TracedFunction& f, std::span<const Traced> args, const VmapOptions& options,
                                std::span<const std::string> names) {
  const std::size_t n = args.size();
  auto name = [&](std::size_t i) { return names.empty() ? "argument " + std::to_string(i) : names[i]; };
  if (n == 0) throw BindingError("vmap: the function needs at least one argument");
  if (!options.in_axes.empty() && options.in_axes.size() != n) {
    throw BindingError("vmap: in_axes has " + std::to_string(options.in_axes.size()) + " entries for " +
                       std::to_string(n) + (names.empty() ? " arguments" : " leaves (give one entry per argument or per leaf)"));
  }
  std::optional<std::int64_t> size = options.axis_size;
  std::string size_from = "axis_size";
  if (size && *size < 0) throw ValueError("vmap: axis_size " + std::to_string(*size) + " is negative");
  std::vector<BatchedValue> inputs;
  std::vector<TensorType> example_types;
  for (std::size_t i = 0; i < n; ++i) {
    const std::optional<std::int64_t> axis = options.in_axes.empty() ? std::optional<std::int64_t>(0) : options.in_axes[i];
    const Traced& x = args[i];
    if (!axis) {
      inputs.push_back({x, false});
      example_types.push_back(x.type());
      continue;
    }
    const auto rank = static_cast<std::int64_t>(x.rank());
    const std::int64_t a = *axis < 0 ? *axis + rank : *axis;
    if (a < 0 || a >= rank) {
      throw ShapeError("vmap: in_axes " + std::to_string(*axis) + " of " + name(i) + " is not an axis of its shape " +
                       shape_text(x.shape()));
    }
    const std::int64_t d = x.shape()[static_cast<std::size_t>(a)];
    if (size && *size != d) {
      throw ShapeError("vmap: " + name(i) + " of shape " + shape_text(x.shape()) + " has " + std::to_string(d) +
                       " elements along its batch axis " + std::to_string(a) + ", but " + size_from + " gives " +
                       std::to_string(*size));
    }
    size = d;
    size_from = name(i);
    inputs.push_back({move_axis(x, a, 0), true});
    Shape example = x.shape();
    example.erase(example.begin() + a);
    example_types.push_back({x.dtype(), std::move(example)});
  }
  if (!size) throw ValueError("vmap: no argument is batched (every in_axes entry is nullopt); give axis_size");
  const std::int64_t batch_size = *size;

  const std::shared_ptr<TraceState> parent = innermost(args, "vmap");
  const TracedBody body = trace_body(
      parent, example_types, [&f](std::span<const Traced> xs) { return f(std::vector<Traced>(xs.begin(), xs.end())); }, {},
      "vmap");
  for (const Traced& c : body.captures) inputs.push_back({c, false});

  const LoopFallbackScope fallback(options.loop_fallback);
  const std::vector<BatchedValue> results = batch_graph(*body.region.graph(), inputs, batch_size, args[0]);

  if (options.out_axes.size() > 1 && options.out_axes.size() != results.size()) {
    throw BindingError("vmap: out_axes has " + std::to_string(options.out_axes.size()) + " entries for " +
                       std::to_string(results.size()) + " results");
  }
  std::vector<Traced> out;
  for (std::size_t k = 0; k < results.size(); ++k) {
    const Traced r = with_batch_axis(results[k], batch_size);
    const std::int64_t axis = options.out_axes.empty() ? 0 : options.out_axes[options.out_axes.size() == 1 ? 0 : k];
    const auto rank = static_cast<std::int64_t>(r.rank());
    const std::int64_t a = axis < 0 ? axis + rank : axis;
    if (a < 0 || a >= rank) {
      throw ShapeError("vmap: out_axes[" + std::to_string(k) + "] = " + std::to_string(axis) + " is not an axis of result " +
                       std::to_string(k) + " of shape " + shape_text(r.shape()) + " (the batch axis included)");
    }
    out.push_back(move_axis(r, 0, a));
  }
  return out;
}

}  // namespace tenferro::detail
