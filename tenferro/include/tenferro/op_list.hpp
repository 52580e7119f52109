#pragma once
// The list of built-in operations, one entry per op, in the order of their dense ids (OpKind,
// tenferro/ops/op_kind.hpp). Each op's definition (name, arity, linearity, attributes, shape
// rule, kernel, JVP and transpose rules) lives in its family's file under src/ops/; this list
// names it, and for a function that is one op (elementwise, a matrix function or a region op) it
// also names the function:
//
//   X(Kind)              an op; its functions (if any) are written by hand
//   U(X, Kind, name)     also the function Traced name(const Traced&), and tf.name in Python
//   B(X, Kind, name)     also Traced name(const Traced&, const Traced&) (broadcasting), and tf.name
//   M(X, Kind, name, n)  also std::array<Traced, n> linalg::name(const Traced&): a matrix function
//                        of one operand, no attributes and n results, and tf.linalg.name (a tuple)
//   R(X, Kind, name)     also TracedList name(const Branch& f, const TracedList& operands): a region
//                        op of one body traced from f (OpDef::region_surface), and tf.name(f, *operands)
//
// The functions of U and B entries are declared, defined and bound to Python from this list
// (traced.hpp, src/api/elementwise_functions.cpp, python/src/traced_py.cpp), and those of M entries
// likewise (linalg.hpp, src/api/linalg.cpp, python/src/linalg_py.cpp), and those of R entries
// (control_flow.hpp, src/api/control_flow.cpp, python/src/control_py.cpp), so adding such an op is
// its definition plus one line here. Macros only: the user tier includes this header to declare the
// functions, and the op tier (op_kind.hpp) to number the ops.
//
// Expand with five macros; U, B, M and R receive X so that a consumer that wants only the kinds
// can pass TENFERRO_OP_LIST_KIND for U, B and R and TENFERRO_OP_LIST_KIND_M for M
// (TENFERRO_BUILTIN_OPS below).
#define TENFERRO_OP_LIST(X, U, B, M, R)                                                                     \
  /* arith.cpp */ X(Add) X(Mul) U(X, Neg, neg) X(Div) U(X, Conj, conj) U(X, Real, real) U(X, Imag, imag)    \
  /* minmax_select.cpp */ U(X, Abs, abs) U(X, Sign, sign) X(Maximum) X(Minimum) X(Compare) X(Select)        \
    X(Clamp)                                                                                                \
  /* analytic.cpp */ U(X, Exp, exp) U(X, Log, log) U(X, Sin, sin) U(X, Cos, cos) U(X, Tanh, tanh)           \
    U(X, Sqrt, sqrt) U(X, Rsqrt, rsqrt) X(Pow) U(X, Expm1, expm1) U(X, Log1p, log1p)                        \
  /* trig_hyperbolic.cpp */ U(X, Tan, tan) U(X, Asin, asin) U(X, Acos, acos) U(X, Atan, atan)               \
    U(X, Sinh, sinh) U(X, Cosh, cosh) U(X, Asinh, asinh) U(X, Acosh, acosh) U(X, Atanh, atanh)              \
    B(X, Atan2, atan2)                                                                                      \
  /* powers_logs.cpp */ U(X, Log2, log2) U(X, Log10, log10) U(X, Exp2, exp2) U(X, Cbrt, cbrt)               \
    B(X, Hypot, hypot)                                                                                      \
  /* special.cpp */ U(X, Erf, erf) U(X, Erfc, erfc) U(X, Erfinv, erfinv) U(X, Erfcinv, erfcinv)             \
    U(X, Erfcx, erfcx) U(X, Lgamma, lgamma) U(X, Digamma, digamma) X(Polygamma) U(X, BesselI0, i0)          \
    U(X, BesselI0e, i0e) U(X, BesselI1, i1) U(X, BesselI1e, i1e)                                            \
  /* rounding.cpp */ U(X, Floor, floor) U(X, Ceil, ceil) U(X, Round, round) U(X, Trunc, trunc)              \
    U(X, Frac, frac) B(X, Fmod, fmod) B(X, Remainder, remainder) X(Frexp)                                   \
  /* dot_general.cpp */ X(DotGeneral)                                                                       \
  /* semiring_dot.cpp */ X(SemiringDot) X(SemiringDotIndex)                                                 \
  /* reduce.cpp */ X(ReduceSum) X(ReduceProd) X(ReduceMax) X(ReduceMin)                                     \
  /* reduce_index.cpp */ X(ReduceMaxIndex) X(ReduceMinIndex)                                                \
  /* structural.cpp */ X(Transpose) X(Reshape) X(BroadcastInDim) X(Convert) X(ExtractDiag) X(EmbedDiag)     \
  /* slice_pad.cpp */ X(Slice) X(Pad)                                                                       \
  /* index_ops.cpp */ X(Take) X(IndexAdd) X(Cumsum) X(Reverse)                                              \
  /* sort.cpp */ X(Sort)                                                                                    \
  /* dynamic_slice.cpp */ X(DynamicSlice) X(DynamicUpdateSlice)                                             \
  /* gather_scatter.cpp */ X(Gather) X(Scatter)                                                             \
  /* random_bits.cpp */ X(RandomBits) X(RandomUniform)                                                      \
  /* conv.cpp */ X(Conv)                                                                                    \
  /* svd.cpp */ X(Svd) X(SvdValues)                                                                         \
  /* eigh.cpp */ X(Eigh) X(EighValues)                                                                      \
  /* eig.cpp */ X(Eig)                                                                                      \
  /* qr.cpp */ X(Qr)                                                                                        \
  /* polar.cpp */ M(X, Polar, polar, 2)                                                                     \
  /* cholesky.cpp */ X(Cholesky)                                                                            \
  /* triangular_solve.cpp */ X(TriangularSolve)                                                             \
  /* solve_lu.cpp */ X(Solve) X(Lu) X(LuPivotsToPermutation)                                                \
  /* expm.cpp */ X(Expm) X(ExpmFrechet)                                                                     \
  /* stop_gradient.cpp */ X(StopGradient) X(CheckpointName)                                               \
  /* scan.cpp */ X(Scan) /* scan_adjoint.cpp */ X(ScanAdjoint)                                             \
  /* cond.cpp */ X(Cond)                                                                                    \
  /* while_loop.cpp */ X(WhileLoop)                                                                         \
  /* map.cpp */ R(X, Map, map)                                                                              \
  /* constants.cpp */ X(Constant) X(Iota) X(Zeros)

/// For consumers of the list that want one X(Kind) per op.
#define TENFERRO_OP_LIST_KIND(X, kind, name) X(kind)
#define TENFERRO_OP_LIST_KIND_M(X, kind, name, n) X(kind)
#define TENFERRO_BUILTIN_OPS(X) \
  TENFERRO_OP_LIST(X, TENFERRO_OP_LIST_KIND, TENFERRO_OP_LIST_KIND, TENFERRO_OP_LIST_KIND_M, TENFERRO_OP_LIST_KIND)
/// For consumers that want only the functions: pass as X, and as the entries they skip.
#define TENFERRO_OP_LIST_NONE(kind)
#define TENFERRO_OP_LIST_SKIP(X, kind, name)
#define TENFERRO_OP_LIST_SKIP_M(X, kind, name, n)
