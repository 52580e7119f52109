#pragma once
// The list of built-in operations: one line per op, naming its definition (ops/op_def.hpp). The
// definition itself (name, arity, outputs, linearity, attributes, shape rule, kernel, JVP and
// transpose rules) lives in the op family's file under src/ops/; this list only gives built-in ops
// a dense id, so that the executor can switch over the elementwise ones it fuses.
// Adding an op: write its definition in its family file, then add one line here.
#include <cstdint>

namespace tenferro {

#define TENFERRO_BUILTIN_OPS(X)                                                            \
  /* arith.cpp */ X(Add) X(Mul) X(Neg) X(Div) X(Conj) X(Real) X(Imag)                      \
  /* minmax_select.cpp */ X(Abs) X(Sign) X(Maximum) X(Minimum) X(Compare) X(Select)        \
  X(Clamp)                                                                                 \
  /* analytic.cpp */ X(Exp) X(Log) X(Sin) X(Cos) X(Tanh) X(Sqrt) X(Rsqrt) X(Pow) X(Expm1)  \
  X(Log1p)                                                                                 \
  /* trig_hyperbolic.cpp */ X(Tan) X(Asin) X(Acos) X(Atan) X(Sinh) X(Cosh) X(Asinh) X(Acosh)  \
  X(Atanh) X(Atan2)                                                                        \
  /* powers_logs.cpp */ X(Log2) X(Log10) X(Exp2) X(Cbrt) X(Hypot)                          \
  /* special.cpp */ X(Erf) X(Erfc) X(Erfinv) X(Erfcinv) X(Erfcx) X(Lgamma) X(Digamma) X(Polygamma) X(BesselI0)   \
  X(BesselI0e) X(BesselI1) X(BesselI1e)                                                    \
  /* rounding.cpp */ X(Floor) X(Ceil) X(Round) X(Trunc) X(Frac) X(Fmod) X(Remainder) X(Frexp) \
  /* dot_general.cpp */ X(DotGeneral)                                                      \
  /* semiring_dot.cpp */ X(SemiringDot) X(SemiringDotIndex)                                \
  /* reduce.cpp */ X(ReduceSum) X(ReduceProd) X(ReduceMax) X(ReduceMin)                    \
  /* reduce_index.cpp */ X(ReduceMaxIndex) X(ReduceMinIndex)                                               \
  /* structural.cpp */ X(Transpose) X(Reshape) X(BroadcastInDim) X(Convert) X(ExtractDiag) \
  X(EmbedDiag)                                                                             \
  /* slice_pad.cpp */ X(Slice) X(Pad)                                                      \
  /* index_ops.cpp */ X(Take) X(IndexAdd) X(Cumsum) X(Reverse) /* sort.cpp */ X(Sort)       \
  /* dynamic_slice.cpp */ X(DynamicSlice) X(DynamicUpdateSlice) /* gather_scatter.cpp */ X(Gather) X(Scatter) \
  /* random_bits.cpp */ X(RandomBits) X(RandomUniform) /* conv.cpp */ X(Conv)              \
  /* svd.cpp */ X(Svd) X(SvdValues) /* eigh.cpp */ X(Eigh) X(EighValues) /* eig.cpp */ X(Eig) /* qr.cpp */ X(Qr) /* cholesky.cpp */ X(Cholesky)  \
  /* triangular_solve.cpp */ X(TriangularSolve) /* solve_lu.cpp */ X(Solve) X(Lu) X(LuPivotsToPermutation) \
  /* expm.cpp */ X(Expm) X(ExpmFrechet)                                                    \
  /* stop_gradient.cpp */ X(StopGradient)                                                  \
  /* scan.cpp */ X(Scan) /* cond.cpp */ X(Cond) /* while_loop.cpp */ X(WhileLoop)          \
  /* constants.cpp */ X(Constant) X(Iota) X(Zeros)

/// Dense ids of the built-in ops, in list order; Custom marks every registered op (op_def.hpp).
enum class OpKind : std::uint8_t {
#define TENFERRO_ENUM(name) name,
  TENFERRO_BUILTIN_OPS(TENFERRO_ENUM)
#undef TENFERRO_ENUM
  Custom
};

inline constexpr std::size_t kBuiltinOpCount = static_cast<std::size_t>(OpKind::Custom);

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
