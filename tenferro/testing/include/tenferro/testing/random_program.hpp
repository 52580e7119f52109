#pragma once
// Random programs over the traced API, for testing the whole pipeline (trace, AD transforms,
// compile, executor passes) on compositions nobody wrote by hand.
//
// A RandomProgram is a straight-line list of calls of the public traced API (tenferro/traced.hpp)
// on its inputs and earlier results. It is data, so it can be generated from a seed, printed as
// the C++ a user would write (to_cpp), shrunk to a smaller program that fails the same way
// (shrink.hpp), and applied to Traced arguments any number of times (apply_program).
//
// The loss of a program is a real scalar: the sum over its outputs of sum(v) (complex: real plus
// imaginary part of the sum; integer and bool: converted to the program's real dtype first). Its
// "y" is the first output itself, the vector-valued function that jvp, vjp, jacfwd and jacrev see.
//
// How an op joins: a function of the op list that is one op (a U or B entry of
// tenferro/op_list.hpp) needs nothing here; it is drawn as FuzzOp::Unary or FuzzOp::Binary, with
// its dtypes, operand domain and jumps read from its op's definition (listed_functions.hpp). Any
// other call of the traced API is a FuzzOp of its own: a case in fuzz_ops.cpp (apply_node,
// node_cpp, fuzz_op_name), its operands in generate.cpp, and in indicators.cpp if it has a kink
// or a jump.
#include <cstdint>
#include <string>
#include <vector>

#include "tenferro/ops/op_kind.hpp"
#include "tenferro/tenferro.hpp"
#include "tenferro/testing/listed_functions.hpp"

namespace tenferro::testing {

/// One call of the traced API. The spelling of each is to_cpp's; fuzz_ops.cpp's table lists them.
enum class FuzzOp : std::uint8_t {
  // a function of the op list (a U or B entry of tenferro/op_list.hpp: tf::exp(x), tf::atan2(a, b),
  // ...), the one whose op is the node's `function` (listed_functions.hpp)
  Unary, Binary,
  // elementwise functions that are not one op of the list: composites, and trigamma,
  // polygamma(1, x)
  Sigmoid, Relu, Softplus, Trigamma,
  // (x - stop_gradient(x)) + stop_gradient(x): x, through a detached value
  DetachedIdentity,
  // elementwise, binary (broadcasting)
  Add, Sub, Mul, Div, Pow, Maximum, Minimum, Logaddexp,
  Eq, Ne, Lt, Le, Gt, Ge,
  // with a double on one side: a + s, a - s, a * s, a / s, s - a, s / a
  AddScalar, SubScalar, MulScalar, DivScalar, ScalarSub, ScalarDiv,
  Where, Clamp, FullLike,
  // shapes and dtypes
  Transpose, TransposeAll, Reshape, BroadcastTo, Astype,
  // slicing and padding (ints: start, limit, stride / low, high, interior, one entry per axis each)
  Slice, Pad,
  // windows at starts given as i64 constants, clamped into range (ints: starts, sizes, and for the
  // update the starts the window (taken at the first starts) is written back to)
  DynamicSlice, DynamicUpdateSlice,
  // dropout(key(ints[0]), x, scalar): a random mask from a constant key
  Dropout,
  // slices of x along axis ints[0] at positions ints[1..] (from -2 to dim + 1: clamped) by gather;
  // Scatter writes those slices, squared, back by replacing scatter (ints[1] = 1, positions from
  // ints[2]) or adds them by scatter-add (ints[1] = 0)
  Gather, Scatter,
  // conv(x, w) with a constant kernel w [2, C, 2..] (ints: stride, padding, dilation)
  Conv,
  // control flow: a scan over x's leading axis (carry c from x[0]; c <- sin(c) x_t + c / 2, output
  // y_t = c x_t stacked; ints[0] = 1 scans in reverse), and a three-way switch on the constant
  // index ints[0] (clamped) between sin(x), x * x and exp(x) / 2; a checkpoint (tf::checkpoint) of
  // tanh(x) * x + sin(x) / 2, whose derivative recomputes its values, or with ints[0] = 1 or 2 a
  // checkpoint under CheckpointPolicy SaveDots or SaveNamed of a function with a contraction and
  // a named value; the first function through tf::rematerialize cut into ints[0] (1 to 4)
  // consecutive checkpoints or, where ints[1] is not 0, to a memory budget of 2^ints[1] bytes
  // (without checkpoints where no plan fits it); a map (tf::map) over x's leading axis of
  // tanh(x_t) * x_t + sin(x_t) * w with w = x[0] captured (passed whole to every step)
  Scan, Cond, Checkpoint, Rematerialize, Map,
  // scans, flips and sorting (ints: the axis and 0/1 for reverse or descending / the axes)
  Cumsum, Reverse, Cumprod, Sort,
  // reductions
  SumAll, Sum, Prod, Max, Min, MeanAll, Mean, Var, Logsumexp, Softmax, LogSoftmax,
  // value-and-index reductions over one axis: the values (max_with_index(x, k).first), the index
  MaxWithIndex, MinWithIndex, Argmax, Argmin,
  // contractions
  DotGeneral, Matmul, CrossEntropy,
};

/// The API name of an op ("sigmoid", "dot_general", ...); "unary" and "binary" for the op list's
/// functions, whose names fuzz_name gives.
const char* fuzz_op_name(FuzzOp op);

/// A call: `args` index the program's values (its inputs first, then one value per earlier node).
struct FuzzNode {
  FuzzOp op = FuzzOp::Unary;
  std::vector<int> args;
  std::vector<std::int64_t> ints;  // axes, a permutation, a shape, or slice/pad's three lists
  DotDims dims;                    // dot_general
  DType dtype = DType::F64;        // astype
  double scalar = 0;               // scalar ops and full_like
  OpKind function = OpKind::Neg;   // Unary and Binary: the op of the op list's function called
};

/// The API name of a node's call: fuzz_op_name, or for Unary and Binary the function's ("exp").
const char* fuzz_name(const FuzzNode& node);

struct RandomProgram {
  std::uint64_t seed = 0;
  std::vector<Tensor> inputs;  // argument values; their types are the traced inputs' types
  std::vector<FuzzNode> nodes;
  std::vector<int> outputs;    // values summed into the loss; outputs[0] is y
  /// The real dtype of the loss: f64, or f32 for programs of single precision.
  DType loss_dtype = DType::F64;

  std::size_t value_count() const { return inputs.size() + nodes.size(); }
};

struct GenerateOptions {
  int min_nodes = 4;
  int max_nodes = 12;
  /// Probability that the program computes in single precision (f32, c64; some f64 via astype).
  double single_precision = 0.3;
  /// Probability that some inputs are complex.
  double complex_inputs = 0.3;
  /// Probability that one axis is large (a few thousand elements), so that kernels split their
  /// work into chunks and run on several threads.
  double large = 0.05;
  /// Probability that one axis of the inputs' common shape has length 0 (NumPy's semantics for
  /// empty tensors through every op and derivative; the axis is dropped where an input's shape
  /// sets it to 1 or omits it).
  double empty = 0.05;
};

/// A valid random program (every call traces without error), reproducible from `seed`.
RandomProgram generate_program(std::uint64_t seed, const GenerateOptions& options = {});

/// Applies the program's calls to `args` (one Traced per input); returns every value.
std::vector<Traced> apply_values(const RandomProgram& program, const std::vector<Traced>& args);
/// The program's loss (a real scalar) on traced arguments.
Traced apply_loss(const RandomProgram& program, const std::vector<Traced>& args);
/// The program's y (its first output) on traced arguments.
Traced apply_y(const RandomProgram& program, const std::vector<Traced>& args);

/// The program as the C++ a user would write: a lambda over tf::Traced arguments returning the
/// loss, and the input tensors (values printed exactly).
std::string to_cpp(const RandomProgram& program);

/// The program with every f32 value computed in f64 and every c64 value in c128 (inputs widened,
/// astype targets widened): a more accurate twin for checking single-precision results.
RandomProgram widened(const RandomProgram& program);

/// The values reachable from the outputs only (unused nodes and inputs are dropped, indices
/// renumbered); used after edits that leave nodes unread.
RandomProgram without_dead_values(const RandomProgram& program);

}  // namespace tenferro::testing
