#pragma once
// unzip: partial evaluation of a materialized graph by input dependence.
//
// A program that is run many times with some inputs fixed and the others varying (a linear
// program run once per Jacobian column, say) recomputes, on every run, everything that depends
// only on the fixed inputs. unzip splits it in two, as the unzipping of Radul et al., *You Only
// Linearize Once* (section 6, seen as partial evaluation), splits a linearized function into its
// non-linear partial and its linear residual:
//
//   fixed    the operations that read no varying input, directly or through other values. Its
//            inputs are the graph's other inputs, in their order. Its outputs are the residuals:
//            every fixed value that a varying operation reads or that is an output of the graph,
//            in value order.
//   varying  the other operations. Its inputs are one new input per residual, in the order of
//            fixed's outputs, then the varying inputs in their order. Its outputs are the graph's
//            outputs, aligned with them (a fixed output is returned as the residual input that
//            holds it).
//
// Running `fixed` once and `varying` on its residuals for each new value of the varying inputs
// gives the graph's outputs. Values keep their keys (a value computed by `varying` is the same
// value as in the graph); the residual inputs get input keys from `residual_key(value_key, index)`,
// which the op set provides (it must give distinct keys that no varying input has, carrying the
// value's type where the op set's keys hold one). Cost: O(values + operand references).
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "computegraph/dump.hpp"
#include "computegraph/error.hpp"
#include "computegraph/materialized_graph.hpp"

namespace computegraph {

template <GraphOperation Op>
struct UnzippedGraph {
  MaterializedGraph<Op> fixed;
  MaterializedGraph<Op> varying;
  /// The value of the unzipped graph that each residual holds, in residual order (a graph input
  /// the varying part reads is a residual too: the caller may pass it through instead).
  std::vector<MaterializedValueId> residual_values;
  /// Number of residuals: fixed's outputs, and the leading inputs of varying.
  std::size_t residual_count() const { return fixed.outputs().size(); }
};

struct UnzipOptions {
  /// Values that depend on no input at all (constants and what is computed from them only) are
  /// computed in each part that reads them instead of crossing as residuals: a residual is
  /// stored (per step, when the varying part runs in a loop) while a constant costs nothing to
  /// recompute. A constant the graph returns is computed in the varying part.
  bool recompute_constants = false;
};

template <GraphOperation Op>
class Unzipper {
 public:
  template <class ResidualKey>
  static UnzippedGraph<Op> run(const MaterializedGraph<Op>& graph,
                               std::span<const std::size_t> varying_inputs,
                               ResidualKey&& residual_key, const UnzipOptions& options = {}) {
    const auto& values = graph.values();
    const auto& ops = graph.operations();
    const auto& inputs = graph.inputs();

    // 1. Which values vary: the varying inputs and, in topological order, every output of an
    //    operation that reads a varying value.
    std::vector<std::uint8_t> input_varies(inputs.size(), 0);
    std::vector<std::uint8_t> varies(values.size(), 0);
    for (std::size_t p : varying_inputs) {
      if (p >= inputs.size()) {
        throw BindingError("unzip: varying input position " + std::to_string(p) +
                           " is out of range (the graph has " + std::to_string(inputs.size()) +
                           " inputs)");
      }
      input_varies[p] = 1;
      varies[inputs[p]] = 1;
    }
    std::vector<std::uint8_t> op_varies(ops.size(), 0);
    for (std::size_t i = 0; i < ops.size(); ++i) {
      for (auto v : ops[i].inputs) op_varies[i] |= varies[v];
      for (std::uint32_t k = 0; k < ops[i].output_count; ++k) varies[ops[i].first_output + k] = op_varies[i];
    }

    // 1b. With recompute_constants: which values are constant (no input reaches them), and which
    //     parts need each constant operation (backwards: a part needs a constant its operations
    //     read, directly or through other constants). part[i] bit 1: fixed, bit 2: varying.
    std::vector<std::uint8_t> constant(values.size(), 0);
    std::vector<std::uint8_t> part(ops.size(), 0);
    for (std::size_t i = 0; i < ops.size(); ++i) part[i] = op_varies[i] ? 2 : 1;
    if (options.recompute_constants) {
      std::vector<std::uint8_t> op_constant(ops.size(), 0);
      for (std::size_t i = 0; i < ops.size(); ++i) {
        op_constant[i] = 1;
        for (auto v : ops[i].inputs) op_constant[i] &= constant[v];
        for (std::uint32_t k = 0; k < ops[i].output_count; ++k) constant[ops[i].first_output + k] = op_constant[i];
      }
      std::vector<std::uint8_t> wanted(values.size(), 0);  // the parts that read each value
      for (auto v : graph.outputs()) wanted[v] |= 2;
      for (std::size_t i = ops.size(); i-- > 0;) {
        if (op_constant[i]) {
          part[i] = 0;
          for (std::uint32_t k = 0; k < ops[i].output_count; ++k) part[i] |= wanted[ops[i].first_output + k];
        }
        for (auto v : ops[i].inputs) wanted[v] |= part[i];
      }
    }

    // 2. Residuals: fixed values read by a varying operation or returned by the graph (constants
    //    are not, with recompute_constants: the varying part computes them).
    std::vector<std::uint8_t> residual(values.size(), 0);
    for (std::size_t i = 0; i < ops.size(); ++i) {
      if (!op_varies[i]) continue;
      for (auto v : ops[i].inputs) residual[v] |= !varies[v] && !constant[v];
    }
    for (auto v : graph.outputs()) residual[v] |= !varies[v] && !constant[v];

    UnzippedGraph<Op> result;
    std::vector<MaterializedValueId> id(values.size(), kNone);

    // 3. The fixed graph: fixed inputs, fixed operations, residuals out.
    auto& fixed = result.fixed;
    for (std::size_t p = 0; p < inputs.size(); ++p) {
      if (!input_varies[p]) fixed.inputs_.push_back(id[inputs[p]] = add_value(fixed, values[inputs[p]].key));
    }
    copy_operations(graph, part, 1, id, fixed);
    for (MaterializedValueId v = 0; v < values.size(); ++v) {
      if (!residual[v]) continue;
      fixed.outputs_.push_back(id[v]);
      result.residual_values.push_back(v);
    }

    // 4. The varying graph: residual inputs, then varying inputs, varying operations.
    auto& varying = result.varying;
    std::size_t index = 0;
    for (MaterializedValueId v = 0; v < values.size(); ++v) {
      if (!residual[v]) continue;
      const auto key = ValueKey<Op>::input(residual_key(values[v].key, index++));
      varying.inputs_.push_back(id[v] = add_value(varying, key));
    }
    for (std::size_t p = 0; p < inputs.size(); ++p) {
      if (input_varies[p]) varying.inputs_.push_back(id[inputs[p]] = add_value(varying, values[inputs[p]].key));
    }
    copy_operations(graph, part, 2, id, varying);
    for (auto v : graph.outputs()) varying.outputs_.push_back(id[v]);
    return result;
  }

 private:
  static constexpr MaterializedValueId kNone = std::numeric_limits<MaterializedValueId>::max();

  static MaterializedValueId add_value(MaterializedGraph<Op>& g, const ValueKey<Op>& key) {
    g.values_.push_back({key, std::nullopt, 0});
    return static_cast<MaterializedValueId>(g.values_.size() - 1);
  }

  /// Appends the operations whose `part` has bit `which` to `out`, in order, mapping operands
  /// through `id` and recording their outputs there.
  static void copy_operations(const MaterializedGraph<Op>& graph, const std::vector<std::uint8_t>& part,
                              std::uint8_t which, std::vector<MaterializedValueId>& id,
                              MaterializedGraph<Op>& out) {
    const auto& ops = graph.operations();
    std::size_t operand_count = 0;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      if (part[i] & which) operand_count += ops[i].inputs.size();
    }
    // The operations' input spans point into out.operands_: reserve it once, never reallocate.
    out.operands_.reserve(operand_count);
    for (std::size_t i = 0; i < ops.size(); ++i) {
      if (!(part[i] & which)) continue;
      const auto& op = ops[i];
      const auto begin = out.operands_.size();
      for (auto v : op.inputs) out.operands_.push_back(id[v]);
      MaterializedOperation<Op> copy{op.operation, {out.operands_.data() + begin, op.inputs.size()},
                                     static_cast<MaterializedValueId>(out.values_.size()),
                                     op.output_count, op.role};
      const auto producer = static_cast<std::uint32_t>(out.operations_.size());
      for (std::uint32_t k = 0; k < op.output_count; ++k) {
        const auto v = op.first_output + k;
        id[v] = static_cast<MaterializedValueId>(out.values_.size());
        out.values_.push_back({graph.values()[v].key, producer, k});
      }
      out.operations_.push_back(std::move(copy));
    }
  }
};

/// Splits `graph` into the part that depends only on the inputs not listed in `varying_inputs`
/// (positions in graph.inputs()) and the part that does not (see the file comment). Throws
/// BindingError if a position is out of range.
template <GraphOperation Op, class ResidualKey>
UnzippedGraph<Op> unzip(const MaterializedGraph<Op>& graph, std::span<const std::size_t> varying_inputs,
                        ResidualKey&& residual_key, const UnzipOptions& options = {}) {
  auto result = Unzipper<Op>::run(graph, varying_inputs, residual_key, options);
  detail::after_stage("unzip", result.fixed);
  detail::after_stage("unzip", result.varying);
  return result;
}

}  // namespace computegraph
