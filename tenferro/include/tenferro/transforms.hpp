#pragma once
// Functional transforms over ordinary C++ callables of Traced tensors, taking and returning
// concrete Tensors (JAX-style):
//
//   auto loss = [](tf::Traced w, tf::Traced x) { return tf::sum(tf::exp(w * x)); };
//   tf::Tensor g = tf::grad(loss)(w, x);                 // d loss / d w (argument 0)
//   auto [y, dy] = tf::jvp(loss, {w, x}, {dw, dx});      // value and directional derivative
//   tf::Tensor H = tf::hessian(loss)(w, x);              // shape w.shape + w.shape
//
// A transformed callable (grad, value_and_grad, jacfwd, jacrev, hessian) traces f once per
// argument signature (dtypes and shapes), linearizes once, and afterwards only runs compiled
// programs: a call costs a cache look-up plus the runs. The direct forms (jvp, vjp, hvp) trace on
// every call, but compiled programs of equal structure come from a process-wide compile cache.
// f may take up to 8 Traced arguments and return a Traced or a std::vector<Traced>.
//
// Only the tracing of f is a template here: everything after it (linearizing, transposing,
// compiling, running, and tidu's machinery instantiated for StdTensorOp) is compiled once in
// src/api/transformed.cpp, so a user's file that calls these compiles quickly; and no header of
// the graph engine is included (tenferro/program.hpp has the traced program itself, for users
// who want the pipeline).
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tenferro/traced.hpp"

// The graph engine's type that Program names, declared only (tenferro/program.hpp includes it).
namespace computegraph {
template <class Op>
class Graph;
}  // namespace computegraph

namespace tenferro {

struct StdTensorOp;  // tenferro/ops/std_tensor_op.hpp
/// A traced program's graph (tenferro/program.hpp).
using GraphPtr = std::shared_ptr<const computegraph::Graph<StdTensorOp>>;

using Tensors = std::vector<Tensor>;
namespace detail {
constexpr std::size_t kMaxArgs = 8;

template <class F, std::size_t... I>
constexpr bool invocable_with(std::index_sequence<I...>) {
  return std::is_invocable_v<F&, decltype((void)I, std::declval<const Traced&>())...>;
}

inline void collect(std::vector<Traced>& out, const Traced& t) { out.push_back(t); }
inline void collect(std::vector<Traced>& out, const std::vector<Traced>& ts) {
  out.insert(out.end(), ts.begin(), ts.end());
}

/// Throws BindingError: the function cannot be called with `count` Traced arguments (out of line,
/// so that a user's file instantiates no string formatting).
[[noreturn]] void throw_arity_mismatch(std::size_t count);

/// Calls f with args.size() traced arguments and returns its results as a list.
template <class F, std::size_t N = 0>
std::vector<Traced> call_traced(F& f, const std::vector<Traced>& args) {
  if constexpr (N > kMaxArgs) {
    throw_arity_mismatch(args.size());
  } else {
    if constexpr (invocable_with<F>(std::make_index_sequence<N>{})) {
      if (args.size() == N) {
        std::vector<Traced> out;
        [&]<std::size_t... I>(std::index_sequence<I...>) { collect(out, f(args[I]...)); }(
            std::make_index_sequence<N>{});
        return out;
      }
    }
    return call_traced<F, N + 1>(f, args);
  }
}

/// The graph of a list-of-arguments function on arguments of the given types: inputs x0, x1,
/// ...; outputs its results (transformed.cpp).
GraphPtr trace_function(const std::function<std::vector<Traced>(const std::vector<Traced>&)>& f,
                        const std::vector<TensorType>& types);

/// Builds the graph of f on arguments of the given types: inputs x0, x1, ...; outputs f's results.
template <class F>
GraphPtr trace_graph(F& f, const std::vector<TensorType>& types) {
  return trace_function([&f](const std::vector<Traced>& args) { return call_traced(f, args); }, types);
}

std::vector<TensorType> types_of(const Tensors& args);
/// Throws DTypeError unless argument `argnum` exists and is float or complex.
void check_wrt(const char* what, const Tensors& args, std::size_t argnum);
/// Throws ShapeError or DTypeError, naming `what`, unless each direction (tangent) has the type
/// of its float or complex primal (directions of integer and bool primals are not checked).
void check_directions(const char* what, const char* kind, const Tensors& primals, const Tensors& directions);
/// Stores `column` = H e_col (n elements of h's dtype) into h viewed as an n x n row-major matrix.
/// A real Hessian is symmetric (second derivatives commute), so the column is written as row
/// `col`: one contiguous copy instead of n stores n elements apart, which touch a different page
/// each (the strided store cost more than computing the column). Complex Hessians are written as
/// columns.
void store_hessian_column(Tensor& h, std::size_t col, const Tensor& column);
/// The column schedule of tenferro's column sweeps (tidu::SequentialColumns' contract): [0, count)
/// in chunks of 32 columns handed to tenferro::num_threads() threads as they free up, or run whole
/// on the calling thread when there are fewer columns than 32 per thread or the caller
/// is already inside a parallel region. Each column's values are the same for any split. An
/// exception from any thread is rethrown here.
struct ParallelColumns {
  void operator()(std::size_t count, const std::function<void(std::size_t, std::size_t)>& body) const;
};
/// to = from^T for `from` viewed as a rows x cols row-major matrix; both have the same dtype.
void transpose_matrix_into(Tensor& to, const Tensor& from, std::size_t rows, std::size_t cols);
/// Stores `values` (conjugated if asked) as row `row` of m, viewed as a rows x values.numel()
/// row-major matrix, converting to m's dtype (the real part for a real m).
void store_matrix_row(Tensor& m, std::size_t row, const Tensor& values, bool conjugate);

/// f as a function of a list of traced arguments (call_traced).
using TracedFunction = std::function<std::vector<Traced>(const std::vector<Traced>&)>;
template <class F>
TracedFunction erase_function(F f) {
  return [f = std::move(f)](const std::vector<Traced>& args) mutable { return call_traced(f, args); };
}

struct TransformState;  // f, its traces per signature and tidu's transforms (transformed.cpp)

/// A transformed callable without its function's type: every entry point is compiled once.
class TransformedFunction {
 public:
  TransformedFunction(TracedFunction f, std::vector<std::size_t> argnums);
  Tensor grad(const Tensors& args) const;
  std::pair<Tensor, Tensor> value_and_grad(const Tensors& args) const;
  std::pair<Tensor, Tensors> value_and_grads(const Tensors& args) const;
  Tensor jacfwd(const Tensors& args) const;
  Tensor jacrev(const Tensors& args) const;
  Tensor hessian(const Tensors& args) const;

 private:
  std::shared_ptr<TransformState> state_;
  std::vector<std::size_t> argnums_;
};

// The direct forms (transformed.cpp).
std::pair<Tensor, Tensor> jvp_of(const TracedFunction& f, const Tensors& primals, const Tensors& tangents);
std::pair<Tensor, Tensors> vjp_of(const TracedFunction& f, const Tensors& primals, const Tensor& cotangent);
Tensors hvp_of(const TracedFunction& f, const Tensors& primals, const Tensors& directions);

/// What each transformed callable runs.
enum class Mode { Grad, ValueAndGrad, ValueAndGrads, JacFwd, JacRev, Hessian };

template <class F, Mode M>
class Transformed {
 public:
  Transformed(F f, std::vector<std::size_t> argnums) : impl_(erase_function(std::move(f)), std::move(argnums)) {}

  template <class... A>
  auto operator()(const A&... args) const {
    return call(Tensors{args...});
  }

  auto call(const Tensors& args) const {
    if constexpr (M == Mode::Grad) {
      return impl_.grad(args);
    } else if constexpr (M == Mode::ValueAndGrad) {
      return impl_.value_and_grad(args);
    } else if constexpr (M == Mode::ValueAndGrads) {
      return impl_.value_and_grads(args);
    } else if constexpr (M == Mode::JacFwd) {
      return impl_.jacfwd(args);
    } else if constexpr (M == Mode::JacRev) {
      return impl_.jacrev(args);
    } else {
      return impl_.hessian(args);
    }
  }

 private:
  TransformedFunction impl_;
};
}  // namespace detail

/// d f / d args[argnum] of a function returning a real scalar.
template <class F>
auto grad(F f, std::size_t argnum = 0) { return detail::Transformed<F, detail::Mode::Grad>(std::move(f), {argnum}); }
/// (f(args), d f / d args[argnum]).
template <class F>
auto value_and_grad(F f, std::size_t argnum = 0) {
  return detail::Transformed<F, detail::Mode::ValueAndGrad>(std::move(f), {argnum});
}
/// (f(args), [d f / d args[j] for j in argnums]): one compiled gradient program for all of them.
template <class F>
auto value_and_grad(F f, std::vector<std::size_t> argnums) {
  if (argnums.empty()) throw BindingError("value_and_grad: argnums is empty");
  return detail::Transformed<F, detail::Mode::ValueAndGrads>(std::move(f), std::move(argnums));
}
/// Jacobian of f's (single) output with respect to args[argnum]: shape out.shape + arg.shape.
template <class F>
auto jacfwd(F f, std::size_t argnum = 0) { return detail::Transformed<F, detail::Mode::JacFwd>(std::move(f), {argnum}); }
template <class F>
auto jacrev(F f, std::size_t argnum = 0) { return detail::Transformed<F, detail::Mode::JacRev>(std::move(f), {argnum}); }
/// Hessian of a real scalar f with respect to args[argnum]: shape arg.shape + arg.shape.
template <class F>
auto hessian(F f, std::size_t argnum = 0) { return detail::Transformed<F, detail::Mode::Hessian>(std::move(f), {argnum}); }

/// (f(primals), J tangents) for a function with one output.
template <class F>
std::pair<Tensor, Tensor> jvp(F f, const Tensors& primals, const Tensors& tangents) {
  return detail::jvp_of(detail::erase_function(std::move(f)), primals, tangents);
}
/// (f(primals), J^* cotangent) for a function with one output; one cotangent per primal.
template <class F>
std::pair<Tensor, Tensors> vjp(F f, const Tensors& primals, const Tensor& cotangent) {
  return detail::vjp_of(detail::erase_function(std::move(f)), primals, cotangent);
}
/// Hessian-vector product of a real scalar function: one direction per primal.
template <class F>
Tensors hvp(F f, const Tensors& primals, const Tensors& directions) {
  return detail::hvp_of(detail::erase_function(std::move(f)), primals, directions);
}

namespace detail {
/// The compiled program, built on the first run (transforms.cpp).
struct ProgramCache;
}  // namespace detail

/// A traced program: the graph of f on arguments like `args` (trace, below).
class Program {
 public:
  explicit Program(GraphPtr graph);
  /// The graph (tenferro/program.hpp makes it usable).
  const GraphPtr& graph() const { return graph_; }
  std::string print() const;
  /// Runs the primal program.
  Tensors run(const Tensors& args) const;
  /// Runs the primal program writing its results into `outputs` (one tensor per result, of the
  /// result's type; ShapeError otherwise): fused kernels write straight into their storage, so a
  /// loop that reuses its output tensors allocates nothing for them.
  void run_into(const Tensors& args, Tensors& outputs) const;
  /// The program as the executor runs it (after its passes; exec_options.hpp), as text.
  std::string print_executable() const;

 private:
  GraphPtr graph_;
  std::shared_ptr<detail::ProgramCache> cache_;  // shared by copies, like the graph
};

template <class F, class... A>
Program trace(F f, const A&... args) {
  return Program(detail::trace_graph(f, detail::types_of(Tensors{args...})));
}

}  // namespace tenferro
