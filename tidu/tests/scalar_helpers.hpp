#pragma once
// Shared helpers for tests over the reference scalar set: transforms with vector arguments, and
// compiled runs that bind inputs by key name.
#include <gtest/gtest.h>

#include <complex>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "computegraph/computegraph.hpp"
#include "tidu/reference/scalar_graph.hpp"
#include "tidu/tidu.hpp"

namespace tidutest {

using tidu::LinearizedGraph;
using tidu::reference::DType;
using tidu::reference::Number;
using tidu::reference::ScalarGraph;
using tidu::reference::ScalarKey;
using tidu::reference::ScalarOp;
using Key = computegraph::ValueKey<ScalarOp>;
using GraphPtr = computegraph::GraphPtr<ScalarOp>;
using Keys = std::vector<Key>;
using cd = std::complex<double>;

inline ScalarKey real_key(const std::string& name) { return {name, DType::Real}; }
inline ScalarKey complex_key(const std::string& name) { return {name, DType::Complex}; }

inline LinearizedGraph<ScalarOp> linearize_keys(const std::vector<GraphPtr>& roots, const Keys& outputs,
                                                const std::vector<ScalarKey>& wrt) {
  return tidu::linearize(computegraph::resolve(roots), std::span<const Key>(outputs),
                         std::span<const ScalarKey>(wrt));
}

/// Keys of the present tangent (or cotangent) outputs.
inline Keys outputs_of(const LinearizedGraph<ScalarOp>& g) {
  Keys keys;
  for (const auto& k : g.tangent_output_keys()) {
    if (k) keys.push_back(*k);
  }
  return keys;
}

inline computegraph::MaterializedGraph<ScalarOp> materialize(const std::vector<GraphPtr>& roots,
                                                             const Keys& outputs) {
  return computegraph::materialize_merge(computegraph::resolve(roots), std::span<const Key>(outputs));
}

/// Compiles `outputs` of resolve(roots) and runs it, binding each program input by name from
/// `values`; inputs not named there (tangent and cotangent seeds, whose names contain ':') get
/// `seed` (unit seeds by default), as a number of the key's dtype.
inline std::vector<Number> run_named(const std::vector<GraphPtr>& roots, const Keys& outputs,
                                     const std::map<std::string, Number>& values,
                                     double seed = 1.0) {
  auto program = computegraph::compile(materialize(roots, outputs));
  std::vector<std::pair<ScalarKey, Number>> bindings;
  for (const auto& key : program.input_keys()) {
    auto it = values.find(key.name);
    if (it != values.end()) {
      bindings.emplace_back(key, it->second);
    } else {
      EXPECT_NE(key.name.find(':'), std::string::npos) << "unbound primal input " << key.name;
      bindings.emplace_back(key, key.dtype == DType::Real ? Number(seed) : Number(cd(seed, 0)));
    }
  }
  return program.run_by_key(std::span<const std::pair<ScalarKey, Number>>(bindings));
}

/// |a - b| <= tol * max(1, |b|).
inline ::testing::AssertionResult near(const Number& actual, cd expected, double tol = 1e-12) {
  double err = std::abs(actual.z - expected);
  if (err <= tol * std::max(1.0, std::abs(expected))) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "got " << actual << ", expected " << expected
                                       << " (error " << err << ")";
}

/// Number of operations of `graph` whose op has this kind.
inline std::size_t count_kind(const computegraph::Graph<ScalarOp>& graph, tidu::reference::Kind kind) {
  std::size_t n = 0;
  for (const auto& op : graph.operations()) n += op.operation.kind == kind;
  return n;
}

}  // namespace tidutest
