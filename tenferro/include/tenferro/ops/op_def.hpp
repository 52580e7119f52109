#pragma once
// OpDef: everything the system knows about one operation, in one place.
//
// A definition holds the op's name, operand and output counts, how each operand enters the op
// (its linearity), the shape/dtype rule, the CPU kernel, the JVP rule and, for ops linear in some
// operand, the transpose rule. Built-in ops define theirs in their family file (src/ops/*.cpp) and
// are listed once in ops/op_kind.hpp; everything generic (printing, hashing, compile-cache identity,
// evaluation, the AD entry points, closure checks) reads the definition. Users register their own
// operations through the same type (register_op), see tenferro/custom_op.hpp.
//
// Contracts of the rules:
// - shape_rule(operand types, attrs) returns one TensorType per output or throws ShapeError or
//   DTypeError whose message names the op, the operand types and what was expected.
// - kernel(op, operands, results) fills `results` (one Tensor per output, of the op's output
//   types); operands already match the op's operand types (checked by the caller).
// - jvp(op, args) returns one tangent per output (nullopt where it is zero), emitting linear ops
//   with linear_role(active mask) and fixed values with the primary role; args.t[i] is nullopt for
//   operands without a tangent. Ops whose operands are all NonDifferentiable need no JVP rule.
// - transpose(op, args) returns one cotangent per operand (nullopt for fixed operands); only
//   operands declared Linear or Bilinear are ever active when it is called (checked by the caller,
//   with an ADRuleError naming the op and operand otherwise).
#include <cstddef>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "computegraph/graph.hpp"
#include "computegraph/value_key.hpp"
#include "tenferro/math_accuracy.hpp"
#include "tenferro/ops/op_attrs.hpp"
#include "tenferro/ops/op_kind.hpp"
#include "tenferro/tensor.hpp"
#include "tenferro/traced.hpp"
#include "tidu/primitive.hpp"

namespace tenferro {

struct StdTensorOp;
using TensorValueKey = computegraph::ValueKey<StdTensorOp>;

/// How an operand enters an op, as seen by differentiation.
enum class Linearity : std::uint8_t {
  Linear,             ///< the op is linear in this operand (others fixed): transposable
  Bilinear,           ///< linear in this operand while the other Bilinear operands are fixed (mul)
  Nonlinear,          ///< differentiable, not linear: JVP only
  NonDifferentiable,  ///< no tangent flows through it (a predicate, an index, a compared value)
};
const char* linearity_name(Linearity l);

/// What a JVP rule sees: the builder, primal operand and result keys, and the operand tangents.
struct JvpArgs {
  tidu::PrimitiveBuilder<StdTensorOp>& b;
  std::span<const TensorValueKey> x;
  std::span<const TensorValueKey> y;
  std::span<const std::optional<tidu::LocalValueId>> t;
};

/// What a transpose rule sees: the builder, the result cotangents (nullopt where none flows), the
/// operands (all External: fixed ones are values, active ones only name slots) and the role.
struct TransposeArgs {
  tidu::PrimitiveBuilder<StdTensorOp>& b;
  std::span<const std::optional<tidu::LocalValueId>> cts;
  std::span<const tidu::PrimitiveValue<StdTensorOp>> x;
  const computegraph::OperationRole& role;
  /// The cotangent of output `slot`; the caller guarantees that output 0 of a single-output op has one.
  tidu::LocalValueId ct(std::size_t slot = 0) const { return *cts[slot]; }
};

using ShapeRule = std::function<std::vector<TensorType>(std::span<const TensorType> operands, const OpAttrs& attrs)>;
using Kernel = std::function<void(const StdTensorOp& op, std::span<const Tensor* const> operands,
                                  std::span<Tensor> results)>;
using JvpRule = std::function<tidu::Tangents(const StdTensorOp& op, const JvpArgs& args)>;
using TransposeRule = std::function<tidu::Tangents(const StdTensorOp& op, const TransposeArgs& args)>;

/// A value of a batched computation (vmap, tenferro/vmap.hpp): the traced value and whether its
/// leading axis is the batch axis (otherwise the value is the same for every batch element).
struct BatchedValue {
  Traced value;
  bool batched = false;
};
/// A batching rule: the op applied to every batch element of its operands, as ops on whole
/// batches. Operands and results that are batched carry the batch axis first; at least one
/// operand is batched; `batch_size` is the batch axis's length. Returns one value per result.
using BatchRule =
    std::function<std::vector<BatchedValue>(const StdTensorOp& op, std::span<const BatchedValue> operands,
                                            std::int64_t batch_size)>;

/// The executor's own loops for an elementwise formula: a formula that names one is run by the
/// scalar interpreter's typed opcodes and the fused kernels' dedicated loop (exec/ maps each id,
/// with no list of ops), instead of through its function pointers. The ids are implementation
/// choices of the executor (ir/elementwise_formulas.hpp gives the arithmetic of each), so a new op
/// names one only if it computes exactly that function; every other formula leaves it None and runs
/// through its scalar functions and block forms.
enum class ElementFast : std::uint8_t {
  None,
  Add, Mul, Div, Neg,
  Identity,  ///< the value itself on real dtypes (conj, real)
  Zero,      ///< zero on real dtypes (imag)
  Abs, Sign, Maximum, Minimum,
  Clamp,     ///< (lo, v, hi)
  Compare,   ///< the direction is the formula's parameter (ElementFormula::param); bool result
  Select,    ///< (bool predicate, on_true, on_false)
  Exp, Log, Sin, Cos, Tanh, Sqrt, Rsqrt, Pow, Expm1, Log1p,
  Convert,   ///< to the result's dtype
  Dot,       ///< a contraction's value on rank-0 operands: 0 + x * y (OpDef::rank0_formula)
};

/// The one-element formula of an elementwise op with one result: the single source of its
/// arithmetic. The reference kernel (when the definition gives no kernel), the fused-kernel
/// interpreter and the scalar interpreter all evaluate the op from it, so an op that has a formula
/// needs no case in any executor file. Unary ops ignore the second argument (the callers pass the
/// first again). A null member means the formula does not cover that dtype (the shape rule must
/// then reject it, or the definition give a kernel that covers it).
///
/// The block forms are optional: y[0..n) = f(a[j], b[j]) for the fused kernels, typically through
/// the vector math library that `accuracy` selects (SLEEF or libmvec, tenferro/math_accuracy.hpp);
/// y may equal a or b. Without one a fused kernel loops over the scalar function. As for the
/// built-in transcendental functions, a block form may differ from the scalar function in the last
/// bits, within the library's documented ULP bound.
///
/// `fast` names the executor's dedicated loop for the formula (ElementFast), `param` reads the
/// formula's parameter from an application's attributes (compare's direction), and `arity3` marks
/// the three-operand formulas (select, clamp), which have no two-argument scalar function: their
/// arithmetic is their fast form's.
struct ElementFormula {
  float (*f32)(float, float) = nullptr;
  double (*f64)(double, double) = nullptr;
  c64 (*c64_fn)(c64, c64) = nullptr;
  c128 (*c128_fn)(c128, c128) = nullptr;
  std::int64_t (*i64)(std::int64_t, std::int64_t) = nullptr;
  void (*f32_block)(MathAccuracy accuracy, const float* a, const float* b, float* y, std::int64_t n) = nullptr;
  void (*f64_block)(MathAccuracy accuracy, const double* a, const double* b, double* y, std::int64_t n) = nullptr;
  ElementFast fast = ElementFast::None;
  std::uint8_t (*param)(const OpAttrs& attrs) = nullptr;

  bool covers(DType d) const;
};

/// How the executor's fusion pass treats an op (exec/pass_fuse_elementwise.cpp).
enum class Fusion : std::uint8_t {
  Barrier,       ///< runs by its kernel, alone
  Elementwise,   ///< an instruction of a fused loop kernel (needs a formula)
  Reduction,     ///< reduces axes of its one operand (on a rank-0 operand: the operand itself)
  SumReduction,  ///< a Reduction that sums: a fused kernel may end in its full sum
};

/// Ops that only rearrange, repeat or select their operand's elements. The executor reads through
/// transposes, reshapes and broadcasts in place; slices and diagonals run their kernels, and the
/// pass narrow_slices sinks them into the ops that produce their operands (exec/passes.hpp).
enum class Layout : std::uint8_t {
  None,
  Transpose,  ///< attrs Permutation
  Reshape,    ///< attrs ReshapeTo: row-major order kept
  Broadcast,  ///< attrs BroadcastDims
  Slice,      ///< attrs SliceAttrs: a strided window of the operand
  Diagonal,   ///< attrs DiagAxes: the diagonal of two axes (extract_diag)
};

/// Where tests draw an elementwise op's operands (the last operand's, for a binary op): a region
/// well inside where the op is smooth, so that finite differences check its derivative. The
/// coverage test derives an op's case from it (tests/op_coverage_test.cpp), from operands a, b
/// of the checker's random values; the random programs (tenferro/testing) draw the operands of
/// the op list's functions by it (exp(a) for Positive, ...: generate.cpp).
enum class Domain : std::uint8_t {
  Any,       ///< smooth everywhere: the values as drawn
  Positive,  ///< away from 0 and the negative axis (log2, lgamma; a divisor: fmod): a + 2
  AboveOne,  ///< above 1 (acosh): a + 3
  Centered,  ///< well inside (-1, 1) (asin, atanh, erfinv): 0.3 a
  NearOne,   ///< well inside (0, 2) (erfcinv): 1 + 0.5 a
  Steps,     ///< piecewise constant (floor, round): 3 a, its derivative 0 between the jumps
};

/// Where an elementwise op is not smooth on real operands in its Domain (OpDef::discontinuity):
/// the random programs (tenferro/testing/src/indicators.cpp) evaluate, at every point of a
/// central difference, which side of each jump or kink the operands lie on, and compare the
/// difference with a derivative only where no point crossed one; they also skip comparing two
/// computations of a program whose operands lie within rounding of a jump. A claim of fewer jumps
/// than the op has fails the test ListedFunctions.EachIsSmoothWhereItsTraitsSaySo (central
/// differences against the op's JVP wherever the trait says the op is smooth). Isolated points
/// of the complex plane (abs at 0) need no entry; a binary op's singular point does where a
/// program meets it along a line (hypot(x, x) = sqrt(2) |x|).
enum class Discontinuity : std::uint8_t {
  None,                     ///< continuously differentiable
  KinkAtZero,               ///< the derivative jumps where an operand crosses 0 (abs, i0e;
                            ///< hypot(x, x) = sqrt(2) |x|)
  JumpAtZero,               ///< the value jumps where the operand crosses 0 (sign)
  JumpsAtIntegers,          ///< the value jumps where the operand crosses an integer (floor,
                            ///< ceil, trunc, frac)
  JumpsAtHalfIntegers,      ///< ... crosses an integer plus 1/2 (round)
  JumpsAtQuotientIntegers,  ///< where a / b crosses an integer (fmod, remainder)
  JumpsAtNegativeXAxis,     ///< (a, b) as the point (b, a): where b < 0, the value jumps as a
                            ///< crosses 0 (atan2's cut)
};

/// A complex function's branch cut (OpDef::branch_cut): its value jumps where a complex operand
/// crosses the real axis (`imaginary`: the imaginary axis) outside [from, to] (log: the real
/// axis left of 0; asin: outside [-1, 1]; atan: the imaginary axis outside [-i, i]). Read as
/// Discontinuity is, and checked by the same test.
struct BranchCut {
  bool imaginary = false;
  double from = 0;
  double to = std::numeric_limits<double>::infinity();
};

/// How each element of an op's float results depends on the elements of its operands: what
/// sparsity detection (tenferro/sparse.hpp) propagates through the op. Operands declared
/// NonDifferentiable never count; a claim stricter than the truth would give a wrong sparse
/// Jacobian, so an op without a precise rule keeps All, which holds for every op.
enum class Dependence : std::uint8_t {
  Derived,      ///< from the other traits: Elementwise for elementwise ops (and ops that fuse as
                ///< elementwise), Moves for layout ops, Reduces for reductions, else All
  All,          ///< every result element on every element of every operand
  Elementwise,  ///< result element i on element i of each operand (rank-0 operands: their one)
  Moves,        ///< each result element is a copy of one float operand element or of none (a
                ///< fill): detection runs the op's kernel on element labels, with its integer
                ///< operands (indices, starts) at their values where those are known
  Reduces,      ///< attrs ReduceAxes: result element on the elements of its reduced fiber
  Contracts,    ///< attrs DotDims: result (b, i, j) on lhs (b, i, :) and rhs (b, :, j)
  Accumulates,  ///< operands (base, indices, updates): each result element on its base element
                ///< and on the update elements that land on it (scatter-add, index_add), read
                ///< from OpDef::landing run on labels, with the indices at their values
  Branches,     ///< operands (index, operands...) and one region per branch taking the operands
                ///< (cond, checkpoint): result i on what result i of any branch depends on,
                ///< found by detecting through each branch
};

/// How a region op of the op list's R entries (op_list.hpp) is applied as name(f, operands): the
/// generic function traces f into the op's one body on fresh inputs of the types `body_inputs`
/// gives for the types of the operands the caller passes (it throws ShapeError or DTypeError naming
/// the op if the op cannot take them), then `build` makes the op from the body's graph and the
/// types of all its operands: the `given` ones the caller passed, then the values the body
/// captured from enclosing traces.
struct RegionSurface {
  std::function<std::vector<TensorType>(std::span<const TensorType> given)> body_inputs;
  std::function<StdTensorOp(computegraph::GraphPtr<StdTensorOp> body, std::span<const TensorType> operands,
                            std::size_t given)>
      build;
};

struct OpDef {
  std::string name;               ///< printed name; unique among registered ops
  OpKind kind = OpKind::Custom;   ///< built-in id (op_kind.hpp), Custom for registered ops
  std::vector<Linearity> operands = {};  ///< one entry per operand
  std::size_t outputs = 1;
  bool elementwise = false;  ///< operands and results share one shape, element by element
  ShapeRule shape_rule = {};
  Kernel kernel = {};
  JvpRule jvp = {};              ///< built-in ops: empty only if every operand is NonDifferentiable
  TransposeRule transpose = {};  ///< built-in ops: present if some operand is Linear or Bilinear
  /// Elementwise ops with one result: the formula (see ElementFormula). A definition with a formula
  /// may leave `kernel` empty; register_op and the built-in table then derive it.
  std::optional<ElementFormula> formula = {};
  /// Where tests draw the operands of an elementwise op (Domain).
  Domain domain = Domain::Any;
  /// Where an elementwise op is not smooth: on real operands (Discontinuity) and, for an op that
  /// takes complex operands, its branch cut (none: holomorphic, or smooth as a real function, on
  /// the whole plane but for isolated points).
  Discontinuity discontinuity = Discontinuity::None;
  std::optional<BranchCut> branch_cut = {};
  /// Traits the executor's passes read (exec/): how the op fuses, whether it only rearranges its
  /// operand, whether it is the identity on values (stop_gradient), whether its result is all
  /// zeros, and what it computes on rank-0 operands where that is an elementwise formula
  /// (dot_general: the product). Registered ops keep the defaults (a barrier).
  Fusion fusion = Fusion::Barrier;
  Layout layout = Layout::None;
  bool identity_on_values = false;
  bool all_zeros = false;
  /// A contraction whose attributes are DotDims (dot_general): the executor reads a transposed
  /// operand through its dimension numbers instead of materializing the transpose.
  bool dot_dims_contraction = false;
  /// A kernel that is one long single-threaded call per matrix (a LAPACK decomposition, whose
  /// results do not depend on the thread count because it runs on one): the executor may run
  /// independent applications at the same time, one per thread (pass run_concurrently).
  bool concurrent = false;
  std::optional<ElementFormula> rank0_formula = {};
  /// Optional: prints the bracketed attribute text (default: the attributes' own print).
  std::function<void(std::ostream&, const StdTensorOp&)> print_attrs = {};
  /// Variadic ops (the control-flow ops, control_attrs.hpp): the operand count of one
  /// application, from its attributes. Such a definition leaves `operands` empty (the JVP and
  /// transpose rules decide per application which operands carry tangents) and sets `outputs` to
  /// 0 (the shape rule gives one type per result).
  std::function<std::size_t(const OpAttrs&)> variadic_arity = {};
  /// Ops that carry regions (computegraph/region.hpp: loop bodies, branches): their graphs, for
  /// printing and verification.
  std::function<std::vector<computegraph::GraphPtr<StdTensorOp>>(const StdTensorOp&)> regions = {};
  /// Optional, for ops that run bodies and hold storage of their own meanwhile (scan_adjoint's
  /// stored carries): the bytes an application holds at its peak beyond its results, its bodies'
  /// own plans included, for the executor's planned peak. Without it the executor counts the
  /// largest body's plan.
  std::function<std::size_t(const StdTensorOp&)> running_bytes = {};

  /// How result elements depend on operand elements (Dependence), for sparsity detection.
  Dependence dependence = Dependence::Derived;
  /// Ops of Dependence::Accumulates: for an application `op` on operands of these types (base,
  /// indices, updates), the op that reads, from a value of the base's type and the indices, for
  /// each update element the result element it lands on: the gather whose transpose the op is.
  std::function<StdTensorOp(const StdTensorOp& op, std::span<const TensorType> operands)> landing = {};
  /// Region ops of the op list's R entries: how name(f, operands) builds the op (RegionSurface).
  std::optional<RegionSurface> region_surface = {};
  /// Last, so that any definition can end with it. How vmap batches the op (BatchRule;
  /// src/ir/batching.hpp). Ops without one are batched by a loop over the batch elements
  /// (correct for any op, slower; tenferro/vmap.hpp); elementwise ops get the leading-axis rule.
  BatchRule batch = {};
  std::size_t arity() const { return operands.size(); }
  /// True if some operand is Linear or Bilinear.
  bool has_linear_operand() const;
  /// True if no operand carries a tangent (the op's results never have one).
  bool never_differentiable() const;
  /// `dependence` with Derived resolved from the other traits.
  Dependence element_dependence() const;
};

/// The definition of a built-in op.
const OpDef& op_def(OpKind kind);

/// Registers a user-defined op and returns its definition, valid for the life of the process.
/// Throws Error if the name is empty or taken (built-in or registered), if `kind` is not Custom,
/// or if the shape rule or the kernel is missing. The AD rules may be left out for an op that is
/// never differentiated: differentiating it then throws ADRuleError naming the op and the rule.
const OpDef& register_op(OpDef def);

/// Every op the process knows: the built-ins in list order, then registered ops in order.
std::vector<const OpDef*> registered_ops();

/// The op definition named `name`, or nullptr.
const OpDef* find_op(const std::string& name);

}  // namespace tenferro
