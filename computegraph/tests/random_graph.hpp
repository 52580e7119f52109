#pragma once
// Seeded random DAGs over the scalar operation set, for property tests of compile and run.
#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "test_graphs.hpp"

namespace cgtest {

struct RandomGraphOptions {
  int inputs = 3;
  int operations = 40;
  int outputs = 4;  // drawn with repetition; may include inputs
};

/// A random graph over ops of type `Op`, made from ScalarOp descriptors by `wrap`.
template <class Op, class Wrap>
computegraph::GraphPtr<Op> random_graph(unsigned seed, const RandomGraphOptions& options,
                                        Wrap&& wrap) {
  std::mt19937 rng(seed);
  auto pick = [&](std::size_t n) {
    return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng);
  };
  computegraph::GraphBuilder<Op> b;
  std::vector<computegraph::LocalValueId> values;
  for (int i = 0; i < options.inputs; ++i) values.push_back(b.add_input("in" + std::to_string(i)));
  auto operand = [&] {
    // Prefer recent values, so that chains form, but reach back to any value.
    std::size_t n = values.size();
    std::size_t i = pick(3) == 0 ? pick(n) : n - 1 - pick(std::min<std::size_t>(n, 4));
    return computegraph::ValueRef<Op>::local(values[i]);
  };
  for (int k = 0; k < options.operations; ++k) {
    std::vector<computegraph::LocalValueId> outs;
    switch (pick(8)) {
      case 0: outs = b.add_operation(wrap(ScalarOp::add()), {operand(), operand()}); break;
      case 1: outs = b.add_operation(wrap(ScalarOp::mul()), {operand(), operand()}); break;
      case 2: outs = b.add_operation(wrap(ScalarOp::neg()), {operand()}); break;
      case 3: outs = b.add_operation(wrap(ScalarOp::sin()), {operand()}); break;
      case 4: outs = b.add_operation(wrap(ScalarOp::cos()), {operand()}); break;
      case 5: outs = b.add_operation(wrap(ScalarOp::sincos()), {operand()}); break;
      case 6: {
        auto n = static_cast<std::uint32_t>(1 + pick(10));  // up to 10 terms: beyond 8 inline args
        std::vector<computegraph::ValueRef<Op>> terms;
        for (std::uint32_t t = 0; t < n; ++t) terms.push_back(operand());
        outs = b.add_operation(wrap(ScalarOp::sum(n)), terms);
        break;
      }
      default:
        outs = b.add_operation(wrap(ScalarOp::constant(0.25 * static_cast<double>(pick(8)))), {});
    }
    values.insert(values.end(), outs.begin(), outs.end());
  }
  std::vector<computegraph::LocalValueId> outputs;
  for (int i = 0; i < options.outputs; ++i) {
    const std::size_t n = values.size();
    outputs.push_back(values[pick(5) == 0 ? pick(n) : n - 1 - pick(std::min<std::size_t>(n, 8))]);
  }
  b.set_outputs(outputs);
  auto graph = b.finish();
  computegraph::verify(*graph);
  return graph;
}

inline GraphPtr random_scalar_graph(unsigned seed, const RandomGraphOptions& options = {}) {
  return random_graph<ScalarOp>(seed, options, [](ScalarOp op) { return op; });
}

/// Input values for the random graphs' inputs "in0", "in1", ...
inline std::unordered_map<std::string, double> random_inputs(unsigned seed, int n) {
  std::mt19937 rng(seed * 7919u + 1);
  std::uniform_real_distribution<double> dist(-1.5, 1.5);
  std::unordered_map<std::string, double> env;
  for (int i = 0; i < n; ++i) env["in" + std::to_string(i)] = dist(rng);
  return env;
}

/// Both runs perform the same floating-point operations in the same order, so results agree
/// exactly; values may overflow in long product chains, and NaN then matches NaN.
inline bool same_value(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

}  // namespace cgtest
