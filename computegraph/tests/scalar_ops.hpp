#pragma once
// A small scalar operation set used by computegraph's tests and benchmarks. It exists to exercise
// the engine; it is not part of any library.
#include <cmath>
#include <cstdint>
#include <span>
#include <string>

#include "computegraph/computegraph.hpp"

namespace cgtest {

enum class Kind : std::uint8_t { Add, Mul, Neg, Exp, Sin, Cos, SinCos, Const, Sum };

struct ScalarOp {
  using Operand = double;
  struct Context {};
  using InputKey = std::string;

  Kind kind = Kind::Add;
  double value = 0.0;      // Const only
  std::uint32_t arity = 0;  // Sum only

  static ScalarOp add() { return {Kind::Add}; }
  static ScalarOp mul() { return {Kind::Mul}; }
  static ScalarOp neg() { return {Kind::Neg}; }
  static ScalarOp exp() { return {Kind::Exp}; }
  static ScalarOp sin() { return {Kind::Sin}; }
  static ScalarOp cos() { return {Kind::Cos}; }
  static ScalarOp sincos() { return {Kind::SinCos}; }
  static ScalarOp constant(double v) { return {Kind::Const, v}; }
  static ScalarOp sum(std::uint32_t n) { return {Kind::Sum, 0.0, n}; }

  std::size_t input_count() const {
    switch (kind) {
      case Kind::Add:
      case Kind::Mul: return 2;
      case Kind::Neg:
      case Kind::Exp:
      case Kind::Sin:
      case Kind::Cos:
      case Kind::SinCos: return 1;
      case Kind::Const: return 0;
      case Kind::Sum: return arity;
    }
    return 0;
  }
  std::size_t output_count() const { return kind == Kind::SinCos ? 2 : 1; }
  bool operator==(const ScalarOp&) const = default;
  std::size_t hash() const {
    return std::hash<double>{}(value) * 31 + static_cast<std::size_t>(kind) * 7 + arity;
  }
  std::string name() const {
    switch (kind) {
      case Kind::Add: return "add";
      case Kind::Mul: return "mul";
      case Kind::Neg: return "neg";
      case Kind::Exp: return "exp";
      case Kind::Sin: return "sin";
      case Kind::Cos: return "cos";
      case Kind::SinCos: return "sincos";
      case Kind::Const: return "const[" + std::to_string(value) + "]";
      case Kind::Sum: return "sum[" + std::to_string(arity) + "]";
    }
    return "?";
  }

  void eval(Context&, std::span<const double* const> in, std::span<double> out) const {
    switch (kind) {
      case Kind::Add: out[0] = *in[0] + *in[1]; return;
      case Kind::Mul: out[0] = *in[0] * *in[1]; return;
      case Kind::Neg: out[0] = -*in[0]; return;
      case Kind::Exp: out[0] = std::exp(*in[0]); return;
      case Kind::Sin: out[0] = std::sin(*in[0]); return;
      case Kind::Cos: out[0] = std::cos(*in[0]); return;
      case Kind::SinCos:
        out[0] = std::sin(*in[0]);
        out[1] = std::cos(*in[0]);
        return;
      case Kind::Const: out[0] = value; return;
      case Kind::Sum: {
        double s = 0;
        for (const double* x : in) s += *x;
        out[0] = s;
        return;
      }
    }
  }
};

static_assert(computegraph::EvaluableGraphOperation<ScalarOp>);

using Builder = computegraph::GraphBuilder<ScalarOp>;
using Key = computegraph::ValueKey<ScalarOp>;
using Ref = computegraph::ValueRef<ScalarOp>;
using GraphPtr = computegraph::GraphPtr<ScalarOp>;
inline Ref L(computegraph::LocalValueId id) { return Ref::local(id); }
inline Ref X(Key key) { return Ref::external(std::move(key)); }

}  // namespace cgtest
