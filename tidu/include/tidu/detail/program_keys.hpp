#pragma once
// The outputs and inputs, as keys, of the programs tidu::Transforms compiles for a function with
// primal inputs `inputs` and outputs `outputs`. Each returns {output keys, input keys}; the input
// order is the positional interface the transforms bind at run time.
#include <utility>
#include <vector>

#include "tidu/linearized_graph.hpp"

namespace tidu::detail {

template <class Op>
using KeyList = std::vector<ValueKey<Op>>;

/// jvp: outputs are the primal outputs, then the tangents that exist; inputs are the primal
/// inputs, then one tangent per differentiated input.
template <class Op>
std::pair<KeyList<Op>, KeyList<Op>> jvp_keys(const KeyList<Op>& inputs, const KeyList<Op>& outputs,
                                             const LinearizedGraph<Op>& lin) {
  auto outs = outputs;
  for (const auto& k : lin.tangent_output_keys()) if (k) outs.push_back(*k);
  auto ins = inputs;
  for (std::size_t i = 0; i < lin.tangent_inputs.size(); ++i) ins.push_back(lin.tangent_input_key(i));
  return {std::move(outs), std::move(ins)};
}

/// vjp: outputs are the primal outputs, then the cotangents that exist; inputs are the primal
/// inputs, then one seed per output that has a tangent.
template <class Op>
std::pair<KeyList<Op>, KeyList<Op>> vjp_keys(const KeyList<Op>& inputs, const KeyList<Op>& outputs,
                                             const LinearizedGraph<Op>& transposed) {
  auto outs = outputs;
  for (const auto& k : transposed.tangent_output_keys()) if (k) outs.push_back(*k);
  auto ins = inputs;
  for (std::size_t i = 0; i < transposed.tangent_inputs.size(); ++i) {
    ins.push_back(transposed.tangent_input_key(i));
  }
  return {std::move(outs), std::move(ins)};
}

/// hvp (forward over reverse): outputs are the parts of H v that exist; inputs are the primal
/// inputs, the cotangent seed of the gradient (if the loss depends on the inputs at all), then one
/// direction per differentiated input.
template <class Op>
std::pair<KeyList<Op>, KeyList<Op>> hvp_keys(const KeyList<Op>& inputs, const LinearizedGraph<Op>& transposed,
                                             const LinearizedGraph<Op>& second) {
  KeyList<Op> outs;
  for (const auto& k : second.tangent_output_keys()) if (k) outs.push_back(*k);
  auto ins = inputs;
  for (std::size_t i = 0; i < transposed.tangent_inputs.size(); ++i) {
    ins.push_back(transposed.tangent_input_key(i));
  }
  for (std::size_t i = 0; i < second.tangent_inputs.size(); ++i) ins.push_back(second.tangent_input_key(i));
  return {std::move(outs), std::move(ins)};
}

}  // namespace tidu::detail
