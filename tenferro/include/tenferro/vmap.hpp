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
// Arguments and results may be trees (tenferro/tree.hpp: vectors, maps, tuples, registered
// structs of Traced values or of Tensors): an ensemble is vmap over a struct of parameters, and
// vmap(grad(f)) of a loss of structured parameters returns their structure with a batch axis on
// every leaf. in_axes gives each argument's batch axis (negative counts from the end), applied to
// every leaf of the argument, or std::nullopt for an argument shared by every batch element; with
// as many entries as leaves (and a different count of arguments) it gives one per leaf, in
// flattened order. Empty means axis 0 for all. Errors name a leaf by its path ("argument 0.b",
// "argument 1[2]['key']"). out_axes places the batch
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
#include <memory>
#include <string>
#include <tuple>
#include <optional>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "tenferro/traced.hpp"
#include "tenferro/transforms.hpp"
#include "tenferro/tree.hpp"

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
/// in_axes has one entry per argument (or none: 0 for all). `names` (one per argument, or empty:
/// "argument i") name the arguments in errors. ShapeError names the argument whose batch axis is
/// out of range or whose batch size differs.
std::vector<Traced> vmap_traced(const TracedFunction& f, std::span<const Traced> args, const VmapOptions& options,
                                std::span<const std::string> names = {});

/// Traced, for any type: a parameter pack of as many Traced as there are A.
template <class>
using AsTraced = Traced;

template <class F>
class Vmapped {
 public:
  Vmapped(F f, VmapOptions options) : f_(std::move(f)), options_(std::move(options)) {}

  /// On trees of Traced values (inside a traced function) or of Tensors (traced, then run): the
  /// results as the tree f returns, of the same leaf kind as the arguments.
  template <class... A>
    requires(sizeof...(A) > 0)
  auto operator()(const A&... args) const {
    static_assert((is_tree_v<A> && ...), "tenferro::vmap: every argument must be a tree of Traced values or of Tensors "
                                         "(tenferro/tree.hpp)");
    constexpr bool traced = (std::is_same_v<with_leaf_t<A, Traced>, A> && ...);
    static_assert(traced || (std::is_same_v<with_leaf_t<A, Tensor>, A> && ...),
                  "tenferro::vmap: call it on trees of Traced values or on trees of Tensors, not a mix");
    using Result = std::invoke_result_t<const F&, const with_leaf_t<A, Traced>&...>;
    // The leaves, their names ("argument 1[2].w") and, per leaf, its argument's in_axes entry
    // unless in_axes has one entry per leaf.
    std::vector<std::conditional_t<traced, Traced, Tensor>> leaves;
    std::vector<std::string> names;
    std::vector<std::size_t> argument_of;
    std::size_t k = 0;
    (tree_for_each_path(args, "argument " + std::to_string(k++),
                        [&](const std::string& path, const auto& leaf) {
                          leaves.push_back(leaf);
                          names.push_back(path);
                          argument_of.push_back(k - 1);
                        }),
     ...);
    VmapOptions options = options_;
    if (!options.in_axes.empty() && options.in_axes.size() == sizeof...(A)) {
      std::vector<std::optional<std::int64_t>> per_leaf;
      for (std::size_t a : argument_of) per_leaf.push_back(options.in_axes[a]);
      options.in_axes = std::move(per_leaf);
    }
    // f on the leaves: the argument trees rebuilt from them, the result flattened (its structure
    // kept to rebuild the batched results).
    auto structure = std::make_shared<std::optional<with_leaf_t<Result, LeafIndex>>>();
    auto flat = [this, structure, &args...](const std::vector<Traced>& xs) {
      std::size_t next = 0;
      auto rebuild = [&](const auto& arg) { return tree_map<Traced>(arg, [&](const auto&) { return xs.at(next++); }); };
      const Result r = [&] { return std::apply([&](const auto&... trees) { return f_(trees...); }, std::tuple<with_leaf_t<A, Traced>...>{rebuild(args)...}); }();
      std::vector<Traced> out;
      std::size_t count = 0;
      structure->emplace(tree_map<LeafIndex>(r, [&](const Traced&) { return LeafIndex{count++}; }));
      tree_for_each(r, [&](const Traced& t) { out.push_back(t); });
      return out;
    };
    auto batched = [&](const std::vector<Traced>& xs) { return vmap_traced(flat, xs, options, names); };
    std::vector<std::conditional_t<traced, Traced, Tensor>> out;
    if constexpr (traced) {
      out = batched(leaves);
    } else {
      out = Program(trace_function(batched, types_of(leaves))).run(leaves);
    }
    return tree_map<std::conditional_t<traced, Traced, Tensor>>(**structure, [&](LeafIndex i) { return out.at(i.index); });
  }

 private:
  F f_;
  VmapOptions options_;
};
}  // namespace detail

/// f mapped over a batch axis of its arguments (see the header comment).
template <class F>
auto vmap(F f, VmapOptions options = {}) {
  return detail::Vmapped<F>(std::move(f), std::move(options));
}

}  // namespace tenferro
