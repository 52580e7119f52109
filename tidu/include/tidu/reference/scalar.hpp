#pragma once
// A reference scalar primitive set: real and complex double operands, closed under its own AD
// rules. It is tidu's test bed and the worked example of implementing `tidu::Primitive`
// (docs/tidu.md walks through it).
//
// Types are static: an input key carries its dtype, and every op keeps its operands' dtype except
// `real` (complex -> real) and `to_complex` (real -> complex). Binary ops need equal dtypes.
// Real values compute in real arithmetic (log(-1) is NaN, not i*pi).
#include <complex>
#include <cstdint>
#include <ostream>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "computegraph/error.hpp"
#include "tidu/operand_space.hpp"
#include "tidu/primitive.hpp"

namespace tidu::reference {

enum class DType : std::uint8_t { Real, Complex };

/// A run-time scalar: a complex number and whether it is of complex dtype (real ones have 0 imag).
struct Number {
  std::complex<double> z{};
  DType dtype = DType::Real;

  Number() = default;
  Number(double x) : z(x, 0.0) {}  // NOLINT: implicit on purpose, numbers read like numbers
  Number(std::complex<double> c) : z(c), dtype(DType::Complex) {}  // NOLINT
  bool operator==(const Number&) const = default;
};
std::ostream& operator<<(std::ostream& os, const Number& n);

/// Input key: a name and a dtype. Names of user inputs must not contain ':' (reserved for
/// derived keys: "t<pass>:<name>" for tangents, "ct<pass>:<index>" for cotangent seeds,
/// "res:<index>" for the residual inputs of split programs).
struct ScalarKey {
  std::string name;
  DType dtype = DType::Real;

  ScalarKey tangent_of(DiffPassId pass) const {
    return {"t" + std::to_string(pass) + ":" + name, dtype};
  }
  bool operator==(const ScalarKey&) const = default;
};
/// Prints the name; complex keys get the suffix ":c".
std::ostream& operator<<(std::ostream& os, const ScalarKey& key);

}  // namespace tidu::reference

// The std::hash specialization is not part of the documented API (Doxygen skips it).
/// \cond
template <>
struct std::hash<tidu::reference::ScalarKey> {
  std::size_t operator()(const tidu::reference::ScalarKey& k) const noexcept {
    return std::hash<std::string>{}(k.name) * 3 + static_cast<std::size_t>(k.dtype);
  }
};
/// \endcond

namespace tidu::reference {

enum class Kind : std::uint8_t {
  Add, Mul, Neg, Div, Exp, Log, Sin, Cos, Conj, Real, ToComplex, Const
};

struct ScalarADContext;

struct ScalarOp {
  using Operand = Number;
  struct Context {};
  using InputKey = ScalarKey;
  using ADContext = ScalarADContext;

  Kind kind = Kind::Add;
  Number constant{};  // Const only

  static ScalarOp make(Kind k) { return ScalarOp{k, {}}; }
  static ScalarOp constant_of(Number value) { return ScalarOp{Kind::Const, value}; }

  // GraphOperation
  std::size_t input_count() const;
  std::size_t output_count() const { return 1; }
  bool operator==(const ScalarOp&) const = default;
  std::size_t hash() const;
  std::string name() const;
  // EvaluableGraphOperation; throws computegraph::Error on a dtype mismatch.
  void eval(Context&, std::span<const Number* const> in, std::span<Number> out) const;

  // Primitive
  static ScalarOp add() { return make(Kind::Add); }
  Tangents jvp_rule(PrimitiveBuilder<ScalarOp>& b, std::span<const ValueKey<ScalarOp>> primal_in,
                    std::span<const ValueKey<ScalarOp>> primal_out,
                    std::span<const std::optional<LocalValueId>> tangent_in,
                    ADContext& ctx) const;
  Tangents transpose_rule(PrimitiveBuilder<ScalarOp>& b,
                          std::span<const std::optional<LocalValueId>> cotangent_out,
                          std::span<const PrimitiveValue<ScalarOp>> inputs,
                          const OperationRole& role, ADContext& ctx) const;
  static ScalarKey cotangent_key(const ValueKey<ScalarOp>& output, DiffPassId pass,
                                 std::size_t index);
  // ResidualKeyed: "res:<index>" with the value's dtype.
  static ScalarKey residual_key(const ValueKey<ScalarOp>& value, std::size_t index);
};

/// The reference set's AD context: rules need no per-transform state (dtypes are memoized in the
/// key nodes, see dtype_of).
struct ScalarADContext {};

/// The static dtype of a value. O(1) amortized: memoized in the key nodes' annotations
/// (ValueKey::node_annotation), so it costs no table lookup and is safe from any thread.
DType dtype_of(const ValueKey<ScalarOp>& key);

}  // namespace tidu::reference


static_assert(tidu::Primitive<tidu::reference::ScalarOp>);
static_assert(computegraph::EvaluableGraphOperation<tidu::reference::ScalarOp>);

/// Numbers are one-coordinate operands; the coordinate is the complex value.
template <>
struct tidu::OperandSpace<tidu::reference::Number> {
  using Number = tidu::reference::Number;
  using Scalar = std::complex<double>;
  static std::size_t size(const Number&) { return 1; }
  static Number zeros_like(const Number& x) {
    return x.dtype == tidu::reference::DType::Real ? Number(0.0) : Number(Scalar(0.0, 0.0));
  }
  static Number basis_like(const Number& x, std::size_t) {
    return x.dtype == tidu::reference::DType::Real ? Number(1.0) : Number(Scalar(1.0, 0.0));
  }
  static Scalar coordinate(const Number& x, std::size_t) { return x.z; }
  static Scalar conj(const Scalar& s) { return std::conj(s); }
  // For the AD test kit: the result keeps x's dtype; the inner product is Re(conj(a) * b).
  static Number add_scaled(const Number& x, double h, const Number& v) {
    Number r = x;
    r.z += h * v.z;
    return r;
  }
  static double inner(const Number& a, const Number& b) { return (std::conj(a.z) * b.z).real(); }
  static Number random_like(const Number& x, std::mt19937_64& rng) {
    double re = tidu::uniform_pm1(rng);
    if (x.dtype == tidu::reference::DType::Real) return Number(re);
    return Number(Scalar(re, tidu::uniform_pm1(rng)));
  }
};
