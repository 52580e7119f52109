#pragma once
// LinearizedGraph: the result of linearize and of linear_transpose (docs/design.md, "Derivatives").
#include <optional>
#include <utility>
#include <vector>

#include "computegraph/graph.hpp"
#include "tidu/primitive.hpp"

namespace tidu {

template <computegraph::GraphOperation Op>
struct LinearizedGraph {
  using InputKey = typename Op::InputKey;

  /// The new linear graph. Its parents are the graphs it references through External keys.
  computegraph::GraphPtr<Op> graph;
  /// After linearize: (primal input key, local id of its tangent input), one per `wrt` key.
  /// After linear_transpose: (seed key, local id of the seed input), one per active output of the
  /// transposed linear graph.
  std::vector<std::pair<InputKey, LocalValueId>> tangent_inputs;
  /// After linearize: the tangent of each requested output (nullopt: it does not depend on `wrt`).
  /// After linear_transpose: the cotangent of each tangent input of the transposed graph, aligned
  /// with its tangent_inputs (nullopt: no cotangent reaches it).
  std::vector<std::optional<LocalValueId>> tangent_outputs;
  /// The pass id used to make this graph's fresh input keys.
  DiffPassId pass = 0;

  /// Global key of the i-th tangent input (the key a caller binds at run time).
  const ValueKey<Op>& tangent_input_key(std::size_t i) const {
    return graph->key(tangent_inputs[i].second);
  }
  std::vector<InputKey> tangent_input_keys() const {
    std::vector<InputKey> keys;
    for (const auto& [primal, id] : tangent_inputs) keys.push_back(graph->key(id).input_key());
    return keys;
  }
  /// Global keys of the tangent outputs (nullopt where inactive).
  std::vector<std::optional<ValueKey<Op>>> tangent_output_keys() const {
    std::vector<std::optional<ValueKey<Op>>> keys;
    for (const auto& id : tangent_outputs) {
      keys.push_back(id ? std::optional<ValueKey<Op>>(graph->key(*id)) : std::nullopt);
    }
    return keys;
  }
};

namespace detail {
/// Smallest pass id >= 1 for which `make_keys(pass)` names no input already in `view`.
template <computegraph::GraphOperation Op, class MakeKeys>
DiffPassId fresh_pass(const computegraph::ResolvedView<Op>& view, MakeKeys&& make_keys) {
  for (DiffPassId pass = 1;; ++pass) {
    bool clash = false;
    for (const auto& key : make_keys(pass)) {
      if (view.contains(ValueKey<Op>::input(key))) {
        clash = true;
        break;
      }
    }
    if (!clash) return pass;
  }
}
}  // namespace detail

}  // namespace tidu
