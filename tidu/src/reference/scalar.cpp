// Reference scalar set: descriptors, printing, dtype inference and evaluation.
#include "tidu/reference/scalar.hpp"

#include <charconv>
#include <cmath>
#include <optional>
#include <sstream>
#include <type_traits>
#include <vector>

namespace tidu::reference {

namespace {
std::string shortest(double x) {
  char buf[64];
  auto result = std::to_chars(buf, buf + sizeof buf, x);
  return std::string(buf, result.ptr);
}

const char* kind_name(Kind kind) {
  switch (kind) {
    case Kind::Add: return "add";
    case Kind::Mul: return "mul";
    case Kind::Neg: return "neg";
    case Kind::Div: return "div";
    case Kind::Exp: return "exp";
    case Kind::Log: return "log";
    case Kind::Sin: return "sin";
    case Kind::Cos: return "cos";
    case Kind::Conj: return "conj";
    case Kind::Real: return "real";
    case Kind::ToComplex: return "to_complex";
    case Kind::Const: return "const";
  }
  return "?";
}

const char* dtype_name(DType d) { return d == DType::Real ? "real" : "complex"; }

[[noreturn]] void dtype_error(Kind kind, const std::string& what) {
  throw computegraph::Error(std::string("eval ") + kind_name(kind) + ": " + what);
}
}  // namespace

std::ostream& operator<<(std::ostream& os, const Number& n) {
  if (n.dtype == DType::Real) return os << shortest(n.z.real());
  return os << '(' << shortest(n.z.real()) << (n.z.imag() < 0 || std::signbit(n.z.imag()) ? "" : "+")
            << shortest(n.z.imag()) << "i)";
}

std::ostream& operator<<(std::ostream& os, const ScalarKey& key) {
  return os << key.name << (key.dtype == DType::Complex ? ":c" : "");
}

std::size_t ScalarOp::input_count() const {
  switch (kind) {
    case Kind::Add:
    case Kind::Mul:
    case Kind::Div: return 2;
    case Kind::Neg:
    case Kind::Exp:
    case Kind::Log:
    case Kind::Sin:
    case Kind::Cos:
    case Kind::Conj:
    case Kind::Real:
    case Kind::ToComplex: return 1;
    case Kind::Const: return 0;
  }
  return 0;
}

std::size_t ScalarOp::hash() const {
  std::size_t h = static_cast<std::size_t>(kind) * 0x9e3779b97f4a7c15ULL;
  if (kind == Kind::Const) {
    h ^= std::hash<double>{}(constant.z.real()) + 31 * std::hash<double>{}(constant.z.imag()) +
         static_cast<std::size_t>(constant.dtype);
  }
  return h;
}

std::string ScalarOp::name() const {
  if (kind != Kind::Const) return kind_name(kind);
  std::ostringstream os;
  os << "const[" << constant << "]";
  return os.str();
}

namespace {
/// A dtype as a node annotation (0 means unknown).
std::uint8_t annotation_of(DType d) { return d == DType::Real ? 1 : 2; }

/// The dtype `key` has by itself (an input, a constant, or an op whose result dtype is fixed), or
/// nullopt when it is its first operand's.
std::optional<DType> own_dtype(const ValueKey<ScalarOp>& key) {
  if (key.is_input()) return key.input_key().dtype;
  const ScalarOp& op = key.producer_op();
  if (op.kind == Kind::Const) return op.constant.dtype;
  if (op.kind == Kind::Real) return DType::Real;
  if (op.kind == Kind::ToComplex) return DType::Complex;
  return std::nullopt;
}
}  // namespace

DType dtype_of(const ValueKey<ScalarOp>& key) {
  // Down the first operands to a key whose dtype is known (memoized in the node annotation, or
  // its own), then memoize it along the way: O(1) amortized, no allocation. Every op here has
  // one output, so the node's annotation is the key's dtype. `key` holds the chain alive.
  const ValueKey<ScalarOp>* cur = &key;
  DType dtype = DType::Real;
  while (true) {
    if (std::uint8_t a = cur->node_annotation()) {
      dtype = a == annotation_of(DType::Real) ? DType::Real : DType::Complex;
      break;
    }
    if (auto own = own_dtype(*cur)) {
      dtype = *own;
      break;
    }
    cur = &cur->producer_inputs()[0];
  }
  for (const ValueKey<ScalarOp>* p = &key; p != cur; p = &p->producer_inputs()[0]) {
    p->set_node_annotation(annotation_of(dtype));
  }
  return dtype;
}

ScalarKey ScalarOp::cotangent_key(const ValueKey<ScalarOp>& output, DiffPassId pass,
                                  std::size_t index) {
  return {"ct" + std::to_string(pass) + ":" + std::to_string(index), dtype_of(output)};
}

ScalarKey ScalarOp::residual_key(const ValueKey<ScalarOp>& value, std::size_t index) {
  return {"res:" + std::to_string(index), dtype_of(value)};
}

namespace {
/// One op on operand values read by a() and b() (lazily: unary ops have no second operand), in
/// the arithmetic of their type: double for real values, std::complex<double> for complex ones.
template <class A, class B>
Number eval_in(Kind kind, const Number& constant, A a, B b) {
  constexpr bool complex = std::is_same_v<decltype(a()), std::complex<double>>;
  switch (kind) {
    case Kind::Add: return Number(a() + b());
    case Kind::Mul: return Number(a() * b());
    case Kind::Div: return Number(a() / b());
    case Kind::Neg: return Number(-a());
    case Kind::Exp: return Number(std::exp(a()));
    case Kind::Log: return Number(std::log(a()));
    case Kind::Sin: return Number(std::sin(a()));
    case Kind::Cos: return Number(std::cos(a()));
    case Kind::Conj:
      if constexpr (complex) return Number(std::conj(a())); else return Number(a());
    case Kind::Real:
      if constexpr (complex) return Number(a().real()); else dtype_error(kind, "operand is real; expected complex");
    case Kind::ToComplex:
      if constexpr (complex) dtype_error(kind, "operand is complex; expected real"); else return Number(std::complex<double>(a(), 0.0));
    case Kind::Const: return constant;
  }
  dtype_error(kind, "unknown op");
}
}  // namespace

void ScalarOp::eval(Context&, std::span<const Number* const> in, std::span<Number> out) const {
  if (in.size() == 2 && in[0]->dtype != in[1]->dtype) {
    dtype_error(kind, std::string("operands are ") + dtype_name(in[0]->dtype) + " and " +
                          dtype_name(in[1]->dtype) + "; convert with to_complex first");
  }
  const bool real = kind == Kind::Const ? constant.dtype == DType::Real : in[0]->dtype == DType::Real;
  // Real values compute in real arithmetic only: complex multiplication and division (with their
  // inf/nan recovery) cost several times more, and most values of a real program are real.
  if (real) {
    out[0] = eval_in(kind, constant, [&] { return in[0]->z.real(); }, [&] { return in[1]->z.real(); });
  } else {
    out[0] = eval_in(kind, constant, [&] { return in[0]->z; }, [&] { return in[1]->z; });
  }
}

}  // namespace tidu::reference
