#pragma once
// The closed primitive set StdTensorOp, listed exactly once (STYLE.md practice 6).
// X(Enum, "printed name", arity, flags). Arity is the number of operands.
// Flags: E = elementwise (operands and result share a shape), L = linear in all its operands
// (needs only a transpose rule for its linear uses), C = creates a value from attributes only.
#include <cstdint>

namespace tenferro {

#define TENFERRO_STD_TENSOR_OPS(X)                 \
  /* elementwise arithmetic */                     \
  X(Add, "add", 2, "EL")                           \
  X(Mul, "mul", 2, "E")                            \
  X(Neg, "neg", 1, "EL")                           \
  X(Div, "div", 2, "E")                            \
  X(Conj, "conj", 1, "EL")                         \
  X(Real, "real", 1, "EL")                         \
  X(Imag, "imag", 1, "EL")                         \
  X(Abs, "abs", 1, "E")                            \
  X(Sign, "sign", 1, "E")                          \
  X(Maximum, "maximum", 2, "E")                    \
  X(Minimum, "minimum", 2, "E")                    \
  X(Compare, "compare", 2, "E")                    \
  X(Select, "select", 3, "E")                      \
  X(Clamp, "clamp", 3, "E")                        \
  /* analytic */                                   \
  X(Exp, "exp", 1, "E")                            \
  X(Log, "log", 1, "E")                            \
  X(Sin, "sin", 1, "E")                            \
  X(Cos, "cos", 1, "E")                            \
  X(Tanh, "tanh", 1, "E")                          \
  X(Sqrt, "sqrt", 1, "E")                          \
  X(Rsqrt, "rsqrt", 1, "E")                        \
  X(Pow, "pow", 2, "E")                            \
  X(Expm1, "expm1", 1, "E")                        \
  X(Log1p, "log1p", 1, "E")                        \
  /* contraction */                                \
  X(DotGeneral, "dot_general", 2, "")              \
  /* reductions */                                 \
  X(ReduceSum, "reduce_sum", 1, "L")               \
  X(ReduceProd, "reduce_prod", 1, "")              \
  X(ReduceMax, "reduce_max", 1, "")                \
  X(ReduceMin, "reduce_min", 1, "")                \
  /* structural */                                 \
  X(Transpose, "transpose", 1, "L")                \
  X(Reshape, "reshape", 1, "L")                    \
  X(BroadcastInDim, "broadcast_in_dim", 1, "L")    \
  X(Convert, "convert", 1, "L")                    \
  X(ExtractDiag, "extract_diag", 1, "L")           \
  X(EmbedDiag, "embed_diag", 1, "L")               \
  /* constants */                                  \
  X(Constant, "constant", 0, "C")                  \
  X(Iota, "iota", 0, "C")                          \
  X(Zeros, "zeros", 0, "C")

enum class OpKind : std::uint8_t {
#define TENFERRO_ENUM(name, str, arity, flags) name,
  TENFERRO_STD_TENSOR_OPS(TENFERRO_ENUM)
#undef TENFERRO_ENUM
};

struct OpInfo {
  const char* name;
  std::uint8_t arity;
  bool elementwise;
  bool linear;
  bool creation;
};

namespace detail {
constexpr bool has_flag(const char* flags, char f) {
  for (; *flags; ++flags) {
    if (*flags == f) return true;
  }
  return false;
}
}  // namespace detail

inline constexpr OpInfo kOpInfo[] = {
#define TENFERRO_INFO(name, str, arity, flags) \
  {str, arity, detail::has_flag(flags, 'E'), detail::has_flag(flags, 'L'), detail::has_flag(flags, 'C')},
    TENFERRO_STD_TENSOR_OPS(TENFERRO_INFO)
#undef TENFERRO_INFO
};

constexpr const OpInfo& op_info(OpKind kind) { return kOpInfo[static_cast<std::size_t>(kind)]; }

/// Directions of `compare`.
enum class CompareDir : std::uint8_t { Eq, Ne, Lt, Le, Gt, Ge };
constexpr const char* compare_dir_name(CompareDir d) {
  switch (d) {
    case CompareDir::Eq: return "eq";
    case CompareDir::Ne: return "ne";
    case CompareDir::Lt: return "lt";
    case CompareDir::Le: return "le";
    case CompareDir::Gt: return "gt";
    case CompareDir::Ge: return "ge";
  }
  return "?";
}

}  // namespace tenferro
