// Reference scalar set: descriptors, printing, dtype inference and evaluation.
#include "tidu/reference/scalar.hpp"

#include <charconv>
#include <cmath>
#include <sstream>
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

DType dtype_of(const ValueKey<ScalarOp>& key, ScalarADContext* ctx) {
  // Keys whose dtype is their first operand's; `key` holds the whole chain alive.
  std::vector<const ValueKey<ScalarOp>*> path;
  const ValueKey<ScalarOp>* cur = &key;
  DType dtype = DType::Real;
  while (true) {
    if (ctx) {
      if (const DType* known = ctx->dtypes.find(*cur)) {
        dtype = *known;
        break;
      }
    }
    const ValueKey<ScalarOp>& k = *cur;
    if (k.is_input()) {
      dtype = k.input_key().dtype;
      break;
    }
    const ScalarOp& op = k.producer_op();
    if (op.kind == Kind::Const) {
      dtype = op.constant.dtype;
      break;
    }
    if (op.kind == Kind::Real || op.kind == Kind::ToComplex) {
      dtype = op.kind == Kind::Real ? DType::Real : DType::Complex;
      break;
    }
    path.push_back(cur);
    cur = &k.producer_inputs()[0];
  }
  if (ctx) {
    for (const auto* p : path) {
      ctx->dtypes.assign(*p, dtype);
      ctx->held.push_back(*p);
    }
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

void ScalarOp::eval(Context&, std::span<const Number* const> in, std::span<Number> out) const {
  if (in.size() == 2 && in[0]->dtype != in[1]->dtype) {
    dtype_error(kind, std::string("operands are ") + dtype_name(in[0]->dtype) + " and " +
                          dtype_name(in[1]->dtype) + "; convert with to_complex first");
  }
  const bool real = kind == Kind::Const ? constant.dtype == DType::Real : in[0]->dtype == DType::Real;
  // Real values compute in real arithmetic only: complex multiplication and division (with their
  // inf/nan recovery) cost several times more, and most values of a real program are real.
  if (real) {
    auto a = [&] { return in[0]->z.real(); };
    auto b = [&] { return in[1]->z.real(); };
    switch (kind) {
      case Kind::Add: out[0] = Number(a() + b()); return;
      case Kind::Mul: out[0] = Number(a() * b()); return;
      case Kind::Div: out[0] = Number(a() / b()); return;
      case Kind::Neg: out[0] = Number(-a()); return;
      case Kind::Exp: out[0] = Number(std::exp(a())); return;
      case Kind::Log: out[0] = Number(std::log(a())); return;
      case Kind::Sin: out[0] = Number(std::sin(a())); return;
      case Kind::Cos: out[0] = Number(std::cos(a())); return;
      case Kind::Conj: out[0] = Number(a()); return;
      case Kind::Real: dtype_error(kind, "operand is real; expected complex");
      case Kind::ToComplex: out[0] = Number(std::complex<double>(a(), 0.0)); return;
      case Kind::Const: out[0] = constant; return;
    }
    return;
  }
  auto a = [&] { return in[0]->z; };
  auto b = [&] { return in[1]->z; };
  switch (kind) {
    case Kind::Add: out[0] = Number(a() + b()); return;
    case Kind::Mul: out[0] = Number(a() * b()); return;
    case Kind::Div: out[0] = Number(a() / b()); return;
    case Kind::Neg: out[0] = Number(-a()); return;
    case Kind::Exp: out[0] = Number(std::exp(a())); return;
    case Kind::Log: out[0] = Number(std::log(a())); return;
    case Kind::Sin: out[0] = Number(std::sin(a())); return;
    case Kind::Cos: out[0] = Number(std::cos(a())); return;
    case Kind::Conj: out[0] = Number(std::conj(a())); return;
    case Kind::Real: out[0] = Number(a().real()); return;
    case Kind::ToComplex: dtype_error(kind, "operand is complex; expected real");
    case Kind::Const: out[0] = constant; return;
  }
}

}  // namespace tidu::reference
