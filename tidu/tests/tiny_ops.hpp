#pragma once
// TinyOp: a small real-valued op set (Operand = double) for tests that need rules the reference
// set does not have: deliberately wrong rules (the AD test kit must catch them), missing rules and
// rules that break the contract (tidu must report them as ADRuleError). It also shows the kit
// working over a second operand type.
#include <cmath>
#include <span>
#include <string>

#include "tidu/operand_space.hpp"
#include "tidu/primitive.hpp"
#include "tidu/reference/scalar.hpp"

namespace tidutest {

enum class TinyKind : std::uint8_t {
  Add, Mul, Sin, Cos, Scale,  // correct rules; Scale(c) is x -> c x
  SquareBadJvp,       // x^2 with JVP 3x dx
  ScaleBadTranspose,  // x -> c x with transpose ct -> (c + 1) ct
  SquareViaBadDouble, // x^2 with JVP BadDouble(x) dx: right at first order only
  BadDouble,          // x -> 2x with JVP 3 dx (its transpose, of x -> 2x, is right)
  Cube,               // x^3 without a JVP rule
  NoTranspose,        // x -> x, linear, without a transpose rule
  TwoTangents,        // x -> x whose JVP returns two tangents
  LeakyScale,         // (c, x) -> c x whose transpose also returns a cotangent for fixed c
};

struct TinyOp {
  using Operand = double;
  struct Context {};
  using InputKey = tidu::reference::ScalarKey;
  struct ADContext {};

  TinyKind kind = TinyKind::Add;
  double c = 0;  // Scale, ScaleBadTranspose

  bool operator==(const TinyOp&) const = default;
  std::size_t hash() const { return static_cast<std::size_t>(kind) * 1000003u + std::hash<double>{}(c); }
  std::size_t input_count() const {
    return kind == TinyKind::Add || kind == TinyKind::Mul || kind == TinyKind::LeakyScale ? 2 : 1;
  }
  std::size_t output_count() const { return 1; }
  std::string name() const;
  void eval(Context&, std::span<const double* const> in, std::span<double> out) const;

  static TinyOp add() { return {TinyKind::Add, 0}; }
  tidu::Tangents jvp_rule(tidu::PrimitiveBuilder<TinyOp>& b, std::span<const tidu::ValueKey<TinyOp>> x,
                          std::span<const tidu::ValueKey<TinyOp>> y,
                          std::span<const std::optional<tidu::LocalValueId>> t, ADContext&) const;
  tidu::Tangents transpose_rule(tidu::PrimitiveBuilder<TinyOp>& b,
                                std::span<const std::optional<tidu::LocalValueId>> ct,
                                std::span<const tidu::PrimitiveValue<TinyOp>> in,
                                const tidu::OperationRole& role, ADContext&) const;
  static InputKey cotangent_key(const tidu::ValueKey<TinyOp>&, tidu::DiffPassId pass, std::size_t i) {
    return {"ct" + std::to_string(pass) + ":" + std::to_string(i), tidu::reference::DType::Real};
  }
};

inline std::string TinyOp::name() const {
  static const char* const names[] = {"tiny.add",  "tiny.mul", "tiny.sin", "tiny.cos", "tiny.scale",
                                      "tiny.square_bad_jvp", "tiny.scale_bad_transpose",
                                      "tiny.square_via_bad_double", "tiny.bad_double", "tiny.cube",
                                      "tiny.no_transpose", "tiny.two_tangents", "tiny.leaky_scale"};
  std::string n = names[static_cast<int>(kind)];
  if (kind == TinyKind::Scale || kind == TinyKind::ScaleBadTranspose) n += "[" + std::to_string(c) + "]";
  return n;
}

inline void TinyOp::eval(Context&, std::span<const double* const> in, std::span<double> out) const {
  const double a = *in[0];
  switch (kind) {
    case TinyKind::Add: out[0] = a + *in[1]; return;
    case TinyKind::Mul:
    case TinyKind::LeakyScale: out[0] = a * *in[1]; return;
    case TinyKind::Sin: out[0] = std::sin(a); return;
    case TinyKind::Cos: out[0] = std::cos(a); return;
    case TinyKind::Scale:
    case TinyKind::ScaleBadTranspose: out[0] = c * a; return;
    case TinyKind::SquareBadJvp:
    case TinyKind::SquareViaBadDouble: out[0] = a * a; return;
    case TinyKind::BadDouble: out[0] = 2 * a; return;
    case TinyKind::Cube: out[0] = a * a * a; return;
    case TinyKind::NoTranspose:
    case TinyKind::TwoTangents: out[0] = a; return;
  }
}

namespace tiny_detail {
using PV = tidu::PrimitiveValue<TinyOp>;
inline tidu::LocalValueId emit(tidu::PrimitiveBuilder<TinyOp>& b, TinyOp op, std::vector<PV> in,
                               tidu::OperationRole role) {
  return b.add(op, std::move(in), std::move(role));
}
inline tidu::LocalValueId scale_by(tidu::PrimitiveBuilder<TinyOp>& b, PV fixed, tidu::LocalValueId t) {
  return emit(b, {TinyKind::Mul, 0}, {std::move(fixed), PV::local(t)}, tidu::linear_role({false, true}));
}
}  // namespace tiny_detail

inline tidu::Tangents TinyOp::jvp_rule(tidu::PrimitiveBuilder<TinyOp>& b,
                                       std::span<const tidu::ValueKey<TinyOp>> x,
                                       std::span<const tidu::ValueKey<TinyOp>>,
                                       std::span<const std::optional<tidu::LocalValueId>> t,
                                       ADContext&) const {
  using namespace tiny_detail;
  auto primal = [&](TinyOp op, PV in) {
    return PV::local(emit(b, op, {std::move(in)}, tidu::OperationRole::primary()));
  };
  auto sum = [&](tidu::LocalValueId u, tidu::LocalValueId v) {
    return emit(b, add(), {PV::local(u), PV::local(v)}, tidu::linear_role({true, true}));
  };
  auto linear_self = [&] {
    return tidu::Tangents{emit(b, *this, {PV::local(*t[0])}, tidu::linear_role({true}))};
  };
  switch (kind) {
    case TinyKind::Add:
      if (t[0] && t[1]) return {sum(*t[0], *t[1])};
      return {t[0] ? t[0] : t[1]};
    case TinyKind::Mul: {
      std::optional<tidu::LocalValueId> da, db;
      if (t[0]) da = scale_by(b, PV::external(x[1]), *t[0]);
      if (t[1]) db = scale_by(b, PV::external(x[0]), *t[1]);
      if (da && db) return {sum(*da, *db)};
      return {da ? da : db};
    }
    case TinyKind::Sin: return {scale_by(b, primal({TinyKind::Cos, 0}, PV::external(x[0])), *t[0])};
    case TinyKind::Cos: {
      PV s = primal({TinyKind::Sin, 0}, PV::external(x[0]));
      return {scale_by(b, primal({TinyKind::Scale, -1}, s), *t[0])};
    }
    case TinyKind::Scale:
    case TinyKind::ScaleBadTranspose:
    case TinyKind::NoTranspose: return linear_self();
    case TinyKind::BadDouble:
      return {emit(b, {TinyKind::Scale, 3}, {PV::local(*t[0])}, tidu::linear_role({true}))};
    case TinyKind::SquareBadJvp:
      return {scale_by(b, primal({TinyKind::Scale, 3}, PV::external(x[0])), *t[0])};
    case TinyKind::SquareViaBadDouble:
      return {scale_by(b, primal({TinyKind::BadDouble, 0}, PV::external(x[0])), *t[0])};
    case TinyKind::TwoTangents: return {t[0], t[0]};
    case TinyKind::LeakyScale:
      if (t[0]) throw tidu::ADRuleError(name(), tidu::RuleKind::Jvp, "the scale must be fixed");
      return {emit(b, *this, {PV::external(x[0]), PV::local(*t[1])}, tidu::linear_role({false, true}))};
    case TinyKind::Cube: break;
  }
  throw tidu::ADRuleError::missing(name(), tidu::RuleKind::Jvp);
}

inline tidu::Tangents TinyOp::transpose_rule(tidu::PrimitiveBuilder<TinyOp>& b,
                                             std::span<const std::optional<tidu::LocalValueId>> ct,
                                             std::span<const tidu::PrimitiveValue<TinyOp>> in,
                                             const tidu::OperationRole& role, ADContext&) const {
  using namespace tiny_detail;
  auto scaled = [&](double factor) {
    return tidu::Tangents{emit(b, {TinyKind::Scale, factor}, {PV::local(*ct[0])}, tidu::linear_role({true}))};
  };
  switch (kind) {
    case TinyKind::Add:
      return {role.is_active(0) ? ct[0] : std::nullopt, role.is_active(1) ? ct[0] : std::nullopt};
    case TinyKind::Mul: {
      const std::size_t active = role.is_active(0) ? 0 : 1;
      tidu::Tangents r(2);
      r[active] = scale_by(b, in[1 - active], *ct[0]);
      return r;
    }
    case TinyKind::Scale: return scaled(c);
    case TinyKind::ScaleBadTranspose: return scaled(c + 1);
    case TinyKind::BadDouble: return scaled(2);
    case TinyKind::LeakyScale: return {*ct[0], scale_by(b, in[0], *ct[0])};
    case TinyKind::Sin:
    case TinyKind::Cos:
    case TinyKind::SquareBadJvp:
    case TinyKind::SquareViaBadDouble:
    case TinyKind::Cube:
    case TinyKind::NoTranspose:
    case TinyKind::TwoTangents: break;
  }
  throw tidu::ADRuleError::missing(name(), tidu::RuleKind::Transpose);
}

/// Builds TinyOp graphs: g.op(kind, {a, b}) with an optional constant.
class TinyGraph {
 public:
  using Id = tidu::LocalValueId;
  Id input(const std::string& name) { return b_.add_input({name, tidu::reference::DType::Real}); }
  Id op(TinyKind kind, std::vector<Id> in, double c = 0) {
    std::vector<tidu::PrimitiveValue<TinyOp>> refs;
    for (Id id : in) refs.push_back(tidu::PrimitiveValue<TinyOp>::local(id));
    return b_.add(TinyOp{kind, c}, std::move(refs));
  }
  void output(Id id) { b_.add_output(id); }
  computegraph::GraphPtr<TinyOp> finish() { return b_.finish(); }

 private:
  computegraph::GraphBuilder<TinyOp> b_;
};

}  // namespace tidutest

static_assert(tidu::Primitive<tidutest::TinyOp>);

/// Real numbers as one-coordinate operands (for the AD test kit and Transforms).
template <>
struct tidu::OperandSpace<double> {
  using Scalar = double;
  static std::size_t size(double) { return 1; }
  static double zeros_like(double) { return 0; }
  static double basis_like(double, std::size_t) { return 1; }
  static double coordinate(double x, std::size_t) { return x; }
  static double conj(double s) { return s; }
  static double add_scaled(double x, double h, double v) { return x + h * v; }
  static double inner(double a, double b) { return a * b; }
  static double random_like(double, std::mt19937_64& rng) { return tidu::uniform_pm1(rng); }
};
