#pragma once
// Shared fixtures of computegraph's tests: pipeline shorthands and the example graphs that several
// test files use. Every graph made here passes verify().
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <unordered_map>
#include <vector>

#include "scalar_ops.hpp"

namespace cgtest {

using computegraph::OperationRole;
using Graph = computegraph::Graph<ScalarOp>;
using Materialized = computegraph::MaterializedGraph<ScalarOp>;
using Program = computegraph::CompiledProgram<ScalarOp>;
using View = computegraph::ResolvedView<ScalarOp>;
using OpKey = computegraph::OperationKey<ScalarOp>;

inline OperationRole primary() { return OperationRole::primary(); }
inline OperationRole linearized(std::vector<bool> mask) {
  return OperationRole::linearized(std::move(mask));
}

/// gtest printers (found by ADL through the template argument ScalarOp).
inline void PrintTo(const Key& key, std::ostream* os) { *os << computegraph::key_to_string(key); }
inline void PrintTo(const Ref& ref, std::ostream* os) {
  if (ref.is_local()) {
    *os << '%' << ref.local_id();
  } else {
    *os << "external " << computegraph::key_to_string(ref.external_key());
  }
}

inline Key in(const std::string& name) { return Key::input(name); }
/// The key of output `slot` of `op` applied to `inputs`, built without any graph.
inline Key key_of(ScalarOp op, std::vector<Key> inputs, OperationRole role = primary(),
                  std::uint32_t slot = 0) {
  return OpKey::make(op, std::move(inputs), std::move(role)).output(slot);
}

/// Finishes a builder and checks the graph.
inline GraphPtr finish(Builder& builder) {
  GraphPtr graph = builder.finish();
  computegraph::verify(*graph);
  return graph;
}

inline Materialized materialize(const View& view, const std::vector<Key>& outputs,
                                const std::vector<Key>& leading = {}) {
  return computegraph::materialize_merge(view, std::span<const Key>(outputs),
                                         std::span<const Key>(leading));
}

/// resolve -> materialize_merge -> compile, verifying every stage.
inline Program compile_outputs(const std::vector<GraphPtr>& roots, const std::vector<Key>& outputs,
                               const std::vector<Key>& leading = {}) {
  auto graph = materialize(computegraph::resolve(roots), outputs, leading);
  computegraph::verify(graph);
  auto program = computegraph::compile(graph);
  computegraph::verify(program);
  return program;
}
inline Program compile_graph(const GraphPtr& graph) {
  return compile_outputs({graph}, graph->output_keys());
}

/// The scalar example of docs/design.md ("Worked examples"): inputs x, a; returns exp(mul(x, a)).
inline GraphPtr exp_ax_graph() {
  Builder b;
  auto x = b.add_input("x");
  auto a = b.add_input("a");
  auto ax = b.add(ScalarOp::mul(), {L(x), L(a)});
  b.add_output(b.add(ScalarOp::exp(), {L(ax)}));
  return finish(b);
}

/// The JVP of exp(a*x) in x, as a linear graph over `primal` (an exp_ax_graph): input dx, returns
/// mul(exp(a x), mul(a, dx)), both multiplications linearized[fixed, active]. The primal values a
/// and exp(a x) are External references into the parent.
inline GraphPtr exp_ax_jvp_graph(const GraphPtr& primal) {
  Builder b({primal});
  auto dx = b.add_input("dx");
  const Key& y = primal->key(primal->outputs()[0]);
  auto t = b.add(ScalarOp::mul(), {X(in("a")), L(dx)}, linearized({false, true}));
  b.add_output(b.add(ScalarOp::mul(), {X(y), L(t)}, linearized({false, true})));
  return finish(b);
}

/// Multi-output example: input x; returns (cos(sin(x)^2) + cos(x), cos(x), cos(sin(x)^2) + cos(x)).
/// The first sincos has both outputs read, the second only its cos (its sin output is unused); the
/// product reads one slot twice; cos(x) is both read and returned; one output is returned twice.
inline GraphPtr sincos_graph() {
  Builder b;
  auto x = b.add_input("x");
  auto sc = b.add_operation(ScalarOp::sincos(), {L(x)});
  auto sin2 = b.add(ScalarOp::mul(), {L(sc[0]), L(sc[0])});
  auto sc2 = b.add_operation(ScalarOp::sincos(), {L(sin2)});
  auto y = b.add(ScalarOp::add(), {L(sc2[1]), L(sc[1])});
  b.set_outputs({y, sc[1], y});
  return finish(b);
}
inline double sincos_closed_form(double x) {
  return std::cos(std::sin(x) * std::sin(x)) + std::cos(x);
}

/// Reference interpreter: evaluates a key from its structure alone (no graph, no compile),
/// memoized per key. Input values come from `env`.
class KeyInterpreter {
 public:
  explicit KeyInterpreter(std::unordered_map<std::string, double> env) : env_(std::move(env)) {}
  double operator()(const Key& key) {
    if (key.is_input()) return env_.at(key.input_key());
    auto it = memo_.find(key);
    if (it != memo_.end()) return it->second;
    std::vector<double> args;
    for (const Key& input : key.producer_inputs()) args.push_back((*this)(input));
    std::vector<const double*> ptrs;
    for (const double& arg : args) ptrs.push_back(&arg);
    const ScalarOp& op = key.producer_op();
    std::vector<double> outs(op.output_count());
    ScalarOp::Context ctx;
    op.eval(ctx, ptrs, outs);
    double result = outs[key.output_slot()];
    memo_.emplace(key, result);
    return result;
  }

 private:
  std::unordered_map<std::string, double> env_;
  std::unordered_map<Key, double> memo_;
};

}  // namespace cgtest
