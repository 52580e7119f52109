#pragma once
// ScalarGraph: a small builder for graphs of the reference scalar set, with dtype checks.
//   ScalarGraph g;
//   auto x = g.input("x"), a = g.input("a");
//   g.output(g.exp(g.mul(a, x)));
//   auto graph = g.finish();
#include <string>

#include "computegraph/graph_builder.hpp"
#include "tidu/reference/scalar.hpp"

namespace tidu::reference {

class ScalarGraph {
 public:
  using Id = computegraph::LocalValueId;

  Id input(const std::string& name, DType dtype = DType::Real);
  Id constant(Number value);
  Id add(Id a, Id b) { return binary(Kind::Add, a, b); }
  Id mul(Id a, Id b) { return binary(Kind::Mul, a, b); }
  Id div(Id a, Id b) { return binary(Kind::Div, a, b); }
  Id neg(Id a) { return unary(Kind::Neg, a); }
  Id exp(Id a) { return unary(Kind::Exp, a); }
  Id log(Id a) { return unary(Kind::Log, a); }
  Id sin(Id a) { return unary(Kind::Sin, a); }
  Id cos(Id a) { return unary(Kind::Cos, a); }
  Id conj(Id a) { return unary(Kind::Conj, a); }
  /// Real part (complex -> real).
  Id real(Id a);
  /// Real -> complex embedding.
  Id to_complex(Id a);

  void output(Id id) { builder_.add_output(id); }
  /// O(1) amortized (see dtype_of).
  DType dtype(Id id) const { return dtype_of(builder_.key(id)); }
  const computegraph::GraphBuilder<ScalarOp>& builder() const { return builder_; }
  computegraph::GraphPtr<ScalarOp> finish() { return builder_.finish(); }

 private:
  Id unary(Kind kind, Id a);
  Id binary(Kind kind, Id a, Id b);
  computegraph::GraphBuilder<ScalarOp> builder_;
};

}  // namespace tidu::reference
