#pragma once
// AdFunction: a function of a primal graph's arguments built by repeated AD steps, the unit that
// the AD test kit checks (docs/design.md, "Derivatives": the n-th derivative is
// (resolve -> linearize) x n, with linear_transpose at any step).
//
//   function_of(F0)       the primal graph: its inputs are the arguments, its outputs the results
//   forward_step(f, ...)  the tangent outputs of L = linearize(resolve(f.roots), f.outputs, f.args);
//                         L's tangent inputs become seeds (fixed inputs) with the given values
//   reverse_step(f, ...)  the cotangent outputs of linear_transpose(L); its seeds likewise
//
// Every step differentiates with respect to the primal arguments again, so `forward_step` of
// `reverse_step(F0)` is forward-over-reverse ("FoR"). Results that do not depend on
// the arguments (nullopt tangent or cotangent outputs) are dropped: their derivative is zero.
#include <functional>
#include <span>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "computegraph/compile.hpp"
#include "computegraph/materialize.hpp"
#include "computegraph/resolve.hpp"
#include "tidu/linear_transpose.hpp"
#include "tidu/linearize.hpp"

namespace tidu::testkit {

template <class Op>
struct AdFunction {
  using Operand = typename Op::Operand;
  using InputKey = typename Op::InputKey;

  /// resolve(roots) defines every output (roots[0] is the graph the last step made).
  std::vector<computegraph::GraphPtr<Op>> roots;
  std::vector<ValueKey<Op>> outputs;
  /// The differentiable arguments, in order; every step differentiates with respect to them.
  std::vector<InputKey> args;
  /// Fixed inputs with their values: primal inputs that are not arguments, and the tangents and
  /// cotangents earlier steps introduced.
  std::vector<std::pair<InputKey, Operand>> seeds;
  /// Steps applied, outermost first (docs/design.md, "Derivatives"): "" (primal), "F", "R",
  /// "FoR", ...
  std::string path;
};

/// The step name of a check or step `letter` ('F' or 'R') applied over `path`.
inline std::string compose_path(char letter, const std::string& path) {
  return path.empty() ? std::string(1, letter) : std::string(1, letter) + "o" + path;
}

/// The primal graph as a function of all its inputs, in declaration order.
template <Primitive Op>
AdFunction<Op> function_of(const computegraph::GraphPtr<Op>& f) {
  AdFunction<Op> fn;
  fn.roots = {f};
  fn.outputs = f->output_keys();
  for (auto id : f->inputs()) fn.args.push_back(f->key(id).input_key());
  return fn;
}

/// A compiled program for some outputs of a view whose inputs are exactly `inputs`, in that
/// order. Throws computegraph::GraphError if the outputs read any other input.
template <computegraph::EvaluableGraphOperation Op>
class Probe {
 public:
  using Operand = typename Op::Operand;
  using InputKey = typename Op::InputKey;

  Probe(const std::vector<computegraph::GraphPtr<Op>>& roots,
        std::span<const ValueKey<Op>> outputs, std::span<const InputKey> inputs) {
    std::vector<ValueKey<Op>> leading;
    for (const auto& k : inputs) leading.push_back(ValueKey<Op>::input(k));
    program_ = computegraph::compile(computegraph::materialize_merge(
        computegraph::resolve(roots), outputs, std::span<const ValueKey<Op>>(leading)));
    if (program_.input_keys().size() != inputs.size()) {
      std::ostringstream msg;
      msg << "Probe: the outputs read input " << program_.input_keys()[inputs.size()]
          << ", which is neither an argument nor a seed";
      throw computegraph::GraphError(msg.str());
    }
  }
  /// Runs through the op set's own executor when it has one (computegraph::run_compiled), so
  /// the AD checks exercise the code users run.
  std::vector<Operand> run(std::span<const Operand> inputs) const {
    return computegraph::run_compiled(program_, inputs);
  }

 private:
  computegraph::CompiledProgram<Op> program_;
};

/// Input keys of `fn`: its arguments, then its seeds.
template <class Op>
std::vector<typename Op::InputKey> input_keys(const AdFunction<Op>& fn) {
  std::vector<typename Op::InputKey> keys = fn.args;
  for (const auto& [key, value] : fn.seeds) keys.push_back(key);
  return keys;
}

/// Input values of `fn` at arguments `x`: x, then the seed values.
template <class Op>
std::vector<typename Op::Operand> input_values(const AdFunction<Op>& fn,
                                               std::span<const typename Op::Operand> x) {
  std::vector<typename Op::Operand> values(x.begin(), x.end());
  for (const auto& [key, value] : fn.seeds) values.push_back(value);
  return values;
}

/// fn(x).
template <Primitive Op>
std::vector<typename Op::Operand> evaluate(const AdFunction<Op>& fn,
                                           std::span<const typename Op::Operand> x) {
  auto keys = input_keys(fn);
  Probe<Op> probe(fn.roots, fn.outputs, keys);
  auto in = input_values(fn, x);
  return probe.run(in);
}

/// Linearizes fn with respect to its arguments (the graph each step and check starts from).
template <Primitive Op>
LinearizedGraph<Op> linearize_function(const AdFunction<Op>& fn) {
  return linearize(computegraph::resolve(fn.roots), std::span<const ValueKey<Op>>(fn.outputs),
                   std::span<const typename Op::InputKey>(fn.args));
}

/// `seed(like)`: the value bound to a new seed shaped like the operand `like`.
template <class Op>
using SeedFn = std::function<typename Op::Operand(const typename Op::Operand& like)>;

/// Keys of the tangent (or cotangent) outputs of `g` that are present, in order.
template <class Op>
std::vector<ValueKey<Op>> present_keys(const LinearizedGraph<Op>& g) {
  std::vector<ValueKey<Op>> keys;
  for (const auto& k : g.tangent_output_keys()) {
    if (k) keys.push_back(*k);
  }
  return keys;
}

/// x -> J_fn(x) t, with t = seed(x_j) per argument.
template <Primitive Op>
AdFunction<Op> forward_step(const AdFunction<Op>& fn, std::span<const typename Op::Operand> x,
                            const SeedFn<Op>& seed) {
  LinearizedGraph<Op> lin = linearize_function(fn);
  AdFunction<Op> next{{lin.graph}, present_keys(lin), fn.args, fn.seeds, compose_path('F', fn.path)};
  for (std::size_t j = 0; j < lin.tangent_inputs.size(); ++j) {
    next.seeds.emplace_back(lin.tangent_input_key(j).input_key(), seed(x[j]));
  }
  return next;
}

/// x -> J_fn(x)^* ct, with ct = seed(y_i) per result y_i = fn(x)_i that depends on x.
template <Primitive Op>
AdFunction<Op> reverse_step(const AdFunction<Op>& fn, std::span<const typename Op::Operand> x,
                            const SeedFn<Op>& seed) {
  LinearizedGraph<Op> lin = linearize_function(fn);
  LinearizedGraph<Op> tr = linear_transpose(lin);
  auto y = evaluate(fn, x);
  AdFunction<Op> next{{tr.graph}, present_keys(tr), fn.args, fn.seeds, compose_path('R', fn.path)};
  std::size_t seed_index = 0;
  for (std::size_t i = 0; i < lin.tangent_outputs.size(); ++i) {
    if (!lin.tangent_outputs[i]) continue;
    next.seeds.emplace_back(tr.tangent_input_key(seed_index++).input_key(), seed(y[i]));
  }
  return next;
}

}  // namespace tidu::testkit
