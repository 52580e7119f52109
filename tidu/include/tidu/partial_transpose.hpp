#pragma once
// partial_transpose: a linear graph cut in two, the part after the cut transposed and the part
// before it left forward (docs/design.md, "Derivatives"). The building block of mixed modes:
// with J the linear graph's map from its tangent inputs t to its tangent outputs y, and c the
// cut's values, J = J_R J_P, where J_P maps t to c (forward) and J_R maps c to y; the result
// holds J_P as a forward linear graph and J_R^T as a transposed one, so that
//   ybar^T (J t) = (J_R^T ybar)^T (J_P t)
// and a Jacobian is the product of J_R (rows: one transposed run per output element) and J_P
// (columns: one forward run per input element): cheaper than either extreme when the cut is
// narrow and the inputs and outputs are many.
//
// Contract:
// - `cut` names local values of linear.graph that depend on its tangent inputs (linear values,
//   not fixed ones), and it separates: every path from a tangent input to a tangent output passes
//   through a cut value. A tangent output may itself be a cut value.
// - forward: linear.graph with linear's tangent inputs and the cut values as tangent outputs.
// - transposed: linear_transpose of the part after the cut: one seed per active tangent output of
//   `linear`, and output i the cotangent of cut[i] (nullopt if none reaches it).
// Errors: GraphError naming the value if a cut value is not local to the graph or does not depend
// on the tangent inputs, or if a tangent output depends on them along a path that avoids the cut.
#include <string>
#include <vector>

#include "computegraph/error.hpp"
#include "computegraph/key_printer.hpp"
#include "tidu/linear_transpose.hpp"
#include "tidu/linearized_graph.hpp"

namespace tidu {

template <computegraph::GraphOperation Op>
struct PartialTranspose {
  /// t -> c = J_P t.
  LinearizedGraph<Op> forward;
  /// ybar -> cbar = J_R^T ybar.
  LinearizedGraph<Op> transposed;
};

template <Primitive Op>
PartialTranspose<Op> partial_transpose(const LinearizedGraph<Op>& linear, const std::vector<LocalValueId>& cut,
                                       typename Op::ADContext& ctx) {
  const computegraph::Graph<Op>& g = *linear.graph;
  const std::size_t count = g.values().size();
  std::vector<bool> is_cut(count, false);
  for (const LocalValueId c : cut) {
    if (c >= count) {
      throw computegraph::GraphError("partial_transpose: cut value " + std::to_string(c) + " is not a value of the linear graph (" +
                                     std::to_string(count) + " values)");
    }
    is_cut[c] = true;
  }
  // reaches[v]: v depends on a tangent input (through the cut or not); avoids[v]: along a path
  // that passes through no cut value. Operations are in topological order.
  std::vector<bool> reaches(count, false), avoids(count, false);
  for (const auto& [primal, t] : linear.tangent_inputs) reaches[t] = avoids[t] = true;
  const auto& ops = g.operations();
  for (std::size_t op = 0; op < ops.size(); ++op) {
    bool r = false, a = false;
    for (const LocalValueId u : g.local_operands(static_cast<computegraph::LocalOperationId>(op))) {
      if (u == computegraph::Graph<Op>::kExternalOperand) continue;
      r = r || reaches[u];
      a = a || (avoids[u] && !is_cut[u]);
    }
    for (const LocalValueId v : ops[op].outputs) {
      reaches[v] = r;
      avoids[v] = a;
    }
  }
  for (const LocalValueId c : cut) {
    if (!reaches[c]) {
      throw computegraph::GraphError("partial_transpose: cut value " + std::to_string(c) + " (" + computegraph::key_to_string(g.key(c), 2) +
                                     ") does not depend on the tangent inputs");
    }
  }
  for (std::size_t i = 0; i < linear.tangent_outputs.size(); ++i) {
    const auto& y = linear.tangent_outputs[i];
    if (y && avoids[*y] && !is_cut[*y]) {
      throw computegraph::GraphError("partial_transpose: tangent output " + std::to_string(i) + " (" + computegraph::key_to_string(g.key(*y), 2) +
                                     ") depends on the tangent inputs along a path that avoids the cut");
    }
  }
  PartialTranspose<Op> result;
  result.forward.graph = linear.graph;
  result.forward.tangent_inputs = linear.tangent_inputs;
  for (const LocalValueId c : cut) result.forward.tangent_outputs.emplace_back(c);
  result.forward.pass = linear.pass;
  result.transposed = detail::transpose_onto(linear, cut, ctx);
  return result;
}

template <Primitive Op>
PartialTranspose<Op> partial_transpose(const LinearizedGraph<Op>& linear, const std::vector<LocalValueId>& cut) {
  typename Op::ADContext ctx{};
  return partial_transpose(linear, cut, ctx);
}

}  // namespace tidu
