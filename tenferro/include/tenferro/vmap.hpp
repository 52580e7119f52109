#pragma once
// vmap: a function of examples applied to a batch of them, as JAX's vmap. The function is traced
// once on one example, and its graph is replayed with each op's batching rule (OpDef::batch), so
// the batched program is made of whole-batch ops: a batched matmul is one dot_general with a batch
// dimension, a batched svd one svd of a stack of matrices, not a loop.
//
//   auto f = [](tf::Traced w, tf::Traced x) { return tf::tanh(tf::matmul(x, w)); };
//   auto fs = tf::vmap(f, {.in_axes = {std::nullopt, 0}});   // w shared, x batched on axis 0
//   tf::Traced ys = fs(w, xs);                               // inside a traced function, or
//   tf::Tensor ys_now = fs(w_tensor, xs_tensor);             // on tensors (traced, then run)
//
// in_axes gives each argument's batch axis (negative counts from the end) or std::nullopt for an
// argument shared by every batch element; empty means axis 0 for all. out_axes places the batch
// axis of each result (default 0); a result that does not depend on a batched argument is
// broadcast along it. axis_size gives the batch size when no argument is batched. vmap nests
// (vmap of vmap) and composes with the transforms: vmap(grad(f)) gives per-example gradients (grad
// of a function of Traced values records its gradient program into the trace), and grad of a
// function that calls vmap differentiates the batched program.
//
// Every built-in op has a batching rule in its own definition (op_coverage_test checks): control
// flow included (a cond on a per-example predicate selects between its branches, a while_loop
// whose condition differs per example runs until every example is done, each keeping its final
// carry; a scan is one scan of the batched body), random numbers (a batched key draws each
// example's own stream, bit for bit the unbatched draw), conv, gather and scatter, the linear
// algebra on stacks of matrices. Ops registered by users are batched by their rule if they give
// one (OpDef::batch), mapped over the leading axis if elementwise, and otherwise by a loop over the
// batch: each example's op applied to its slices, the results stacked (correct, one application
// per example, and silent). VmapOptions::loop_fallback = false turns that loop into an Error
// naming the op, for programs that must not contain one.
#include <cstdint>
#include <optional>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "tenferro/traced.hpp"
#include "tenferro/transforms.hpp"

namespace tenferro {

struct VmapOptions {
  /// One per argument: its batch axis, or std::nullopt (not batched). Empty: axis 0 for all.
  std::vector<std::optional<std::int64_t>> in_axes = {};
  /// One per result, or one for all: where the batch axis goes (negative counts from the end).
  /// Empty: axis 0.
  std::vector<std::int64_t> out_axes = {};
  /// The batch size when no argument is batched (otherwise, if given, it must agree).
  std::optional<std::int64_t> axis_size = {};
  /// Whether an op without a batching rule (a user-registered op) may be batched by a loop over
  /// the examples; false: vmap throws Error naming the op instead.
  bool loop_fallback = true;
};

namespace detail {
/// f applied to a batch: the batched results, batch axes placed by options.out_axes (vmap.cpp).
/// ShapeError names the argument whose batch axis is out of range or whose batch size differs.
std::vector<Traced> vmap_traced(const TracedFunction& f, std::span<const Traced> args, const VmapOptions& options);

template <class>
using AsTraced = Traced;

template <class F>
class Vmapped {
 public:
  Vmapped(F f, VmapOptions options) : f_(std::move(f)), erased_(erase_function(f_)), options_(std::move(options)) {}

  template <class... A>
    requires(sizeof...(A) > 0)
  auto operator()(const A&... args) const {
    if constexpr ((std::is_same_v<A, Traced> && ...)) {
      const Traced in[] = {args...};
      std::vector<Traced> out = vmap_traced(erased_, std::span<const Traced>(in), options_);
      if constexpr (std::is_same_v<std::invoke_result_t<F&, const AsTraced<A>&...>, Traced>) {
        return out.at(0);
      } else {
        return out;
      }
    } else {
      static_assert((std::is_same_v<A, Tensor> && ...), "tenferro::vmap: call it on Traced values or on Tensors");
      auto traced = [this](AsTraced<A>... xs) {
        const Traced in[] = {xs...};
        return vmap_traced(erased_, std::span<const Traced>(in), options_);
      };
      Tensors results = trace(traced, args...).run(Tensors{args...});
      if constexpr (std::is_same_v<std::invoke_result_t<F&, const AsTraced<A>&...>, Traced>) {
        return results.at(0);
      } else {
        return results;
      }
    }
  }

 private:
  F f_;
  TracedFunction erased_;
  VmapOptions options_;
};
}  // namespace detail

/// f mapped over a batch axis of its arguments (see the header comment).
template <class F>
auto vmap(F f, VmapOptions options = {}) {
  return detail::Vmapped<F>(std::move(f), std::move(options));
}

}  // namespace tenferro
