#include "tidu/reference/scalar_graph.hpp"

namespace tidu::reference {

namespace {
using Ref = computegraph::ValueRef<ScalarOp>;
const char* dtype_word(DType d) { return d == DType::Real ? "real" : "complex"; }
}  // namespace

ScalarGraph::Id ScalarGraph::input(const std::string& name, DType dtype) {
  if (name.empty() || name.find(':') != std::string::npos) {
    throw computegraph::GraphError("ScalarGraph::input: invalid name '" + name +
                                   "' (non-empty, without ':')");
  }
  return builder_.add_input(ScalarKey{name, dtype});
}

ScalarGraph::Id ScalarGraph::constant(Number value) {
  return builder_.add(ScalarOp::constant_of(value), {});
}

ScalarGraph::Id ScalarGraph::unary(Kind kind, Id a) {
  return builder_.add(ScalarOp::make(kind), {Ref::local(a)});
}

ScalarGraph::Id ScalarGraph::binary(Kind kind, Id a, Id b) {
  DType da = dtype(a), db = dtype(b);
  if (da != db) {
    throw computegraph::GraphError("ScalarGraph: " + ScalarOp::make(kind).name() +
                                   " needs operands of one dtype, got " + dtype_word(da) + " and " +
                                   dtype_word(db) + "; convert with to_complex");
  }
  return builder_.add(ScalarOp::make(kind), {Ref::local(a), Ref::local(b)});
}

ScalarGraph::Id ScalarGraph::real(Id a) {
  if (dtype(a) != DType::Complex) {
    throw computegraph::GraphError("ScalarGraph: real needs a complex operand, got real");
  }
  return unary(Kind::Real, a);
}

ScalarGraph::Id ScalarGraph::to_complex(Id a) {
  if (dtype(a) != DType::Real) {
    throw computegraph::GraphError("ScalarGraph: to_complex needs a real operand, got complex");
  }
  return unary(Kind::ToComplex, a);
}

}  // namespace tidu::reference
