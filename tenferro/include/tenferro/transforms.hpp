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
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "tenferro/operand_space.hpp"
#include "tenferro/traced.hpp"
#include "tidu/transforms.hpp"

namespace tenferro {

using Tensors = std::vector<Tensor>;
using GraphPtr = computegraph::GraphPtr<StdTensorOp>;

/// The compile cache shared by every transform of this process.
std::shared_ptr<computegraph::CompileCache<StdTensorOp>> default_compile_cache();

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

/// Calls f with args.size() traced arguments and returns its results as a list.
template <class F, std::size_t N = 0>
std::vector<Traced> call_traced(F& f, const std::vector<Traced>& args) {
  if constexpr (N > kMaxArgs) {
    throw BindingError("tenferro: the function cannot be called with " + std::to_string(args.size()) +
                       " Traced arguments");
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

/// Builds the graph of f on arguments of the given types: inputs x0, x1, ...; outputs f's results.
template <class F>
GraphPtr trace_graph(F& f, const std::vector<TensorType>& types) {
  auto state = std::make_shared<TraceState>();
  std::vector<Traced> args;
  for (std::size_t i = 0; i < types.size(); ++i) {
    args.emplace_back(state, state->builder.add_input(TensorKey{"x" + std::to_string(i), types[i]}));
  }
  std::vector<Traced> results = call_traced(f, args);
  std::vector<computegraph::LocalValueId> outs;
  for (const Traced& r : results) {
    if (r.trace() != state) {
      throw Error("tenferro: a traced function returned a value of another trace");
    }
    outs.push_back(r.id());
  }
  state->builder.set_outputs(std::move(outs));
  return state->builder.finish();
}

std::vector<TensorType> types_of(const Tensors& args);
/// Throws DTypeError unless argument `argnum` exists and is float or complex.
void check_wrt(const char* what, const Tensors& args, std::size_t argnum);
/// Throws ShapeError or DTypeError, naming `what`, unless each direction (tangent) has the type
/// of its float or complex primal (directions of integer and bool primals are not checked).
void check_directions(const char* what, const char* kind, const Tensors& primals, const Tensors& directions);
/// Throws unless the graph has one output and the cotangent has its type.
void check_cotangent(const char* what, const GraphPtr& graph, const Tensor& cotangent);
/// Throws unless the graph has one scalar real output (what grad and hessian differentiate).
void check_scalar_loss(const char* what, const GraphPtr& graph);
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
/// Throws ShapeError unless the graph has exactly one output (what jacfwd and jacrev return).
void check_single_output(const char* what, const GraphPtr& graph);

/// One transformed callable's state: f, its traces per signature, and the derived programs.
template <class F>
class FunctionState {
 public:
  explicit FunctionState(F f) : f_(std::move(f)), ad_(default_compile_cache()) {}

  /// The graph of f for these arguments; traced (and restricted to `wrt`) on first use.
  GraphPtr graph(const Tensors& args, const std::vector<std::size_t>* wrt) {
    auto types = types_of(args);
    std::lock_guard lock(mutex_);
    auto it = graphs_.find(types);
    if (it != graphs_.end()) return it->second;
    GraphPtr g = trace_graph(f_, types);
    if (wrt) {
      std::vector<bool> mask(args.size(), false);
      for (std::size_t j : *wrt) mask.at(j) = true;
      ad_.set_wrt(g, std::move(mask));
    }
    graphs_.emplace(std::move(types), g);
    return g;
  }
  tidu::Transforms<StdTensorOp>& ad() { return ad_; }

 private:
  struct TypesLess {
    bool operator()(const std::vector<TensorType>& a, const std::vector<TensorType>& b) const {
      return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end(),
                                          [](const TensorType& x, const TensorType& y) {
                                            return std::tie(x.dtype, x.shape) < std::tie(y.dtype, y.shape);
                                          });
    }
  };
  F f_;
  tidu::Transforms<StdTensorOp> ad_;
  std::mutex mutex_;
  std::map<std::vector<TensorType>, GraphPtr, TypesLess> graphs_;
};

/// What each transformed callable runs, given its state and the arguments.
enum class Mode { Grad, ValueAndGrad, ValueAndGrads, JacFwd, JacRev, Hessian };

template <class F, Mode M>
class Transformed {
 public:
  Transformed(F f, std::vector<std::size_t> argnums)
      : state_(std::make_shared<FunctionState<F>>(std::move(f))), argnums_(std::move(argnums)), argnum_(argnums_.at(0)) {}

  template <class... A>
  auto operator()(const A&... args) const {
    return call(Tensors{args...});
  }

  auto call(const Tensors& args) const {
    const char* name = M == Mode::Grad ? "grad" : M == Mode::JacFwd ? "jacfwd"
                     : M == Mode::JacRev ? "jacrev" : M == Mode::Hessian ? "hessian" : "value_and_grad";
    for (std::size_t j : argnums_) check_wrt(name, args, j);
    GraphPtr g = state_->graph(args, &argnums_);
    auto& ad = state_->ad();
    if constexpr (M == Mode::Grad || M == Mode::ValueAndGrad || M == Mode::ValueAndGrads ||
                  M == Mode::Hessian) {
      check_scalar_loss(name, g);
    }
    if constexpr (M == Mode::Grad) {
      return ad.grad(g, args)[argnum_];
    } else if constexpr (M == Mode::ValueAndGrad) {
      auto [value, grads] = ad.value_and_grad(g, args);
      return std::pair<Tensor, Tensor>{value, grads[argnum_]};
    } else if constexpr (M == Mode::ValueAndGrads) {
      auto [value, grads] = ad.value_and_grad(g, args);
      Tensors selected;
      for (std::size_t j : argnums_) selected.push_back(grads[j]);
      return std::pair<Tensor, Tensors>{value, selected};
    } else {
      std::size_t col0 = 0;
      for (std::size_t j = 0; j < argnum_; ++j) col0 += static_cast<std::size_t>(args[j].numel());
      const Tensor& x = args[argnum_];
      if constexpr (M == Mode::Hessian) {
        Shape shape = x.shape();
        shape.insert(shape.end(), x.shape().begin(), x.shape().end());
        Tensor h = Tensor::uninitialized(TensorType{x.dtype(), std::move(shape)});
        // Only argument argnum_ is differentiated (set_wrt), so its columns are the only ones.
        // Columns run on several threads (ParallelColumns) and store disjoint rows of h.
        ad.hessian_columns(g, args, [&](std::size_t col, const Tensors& hv) {
          store_hessian_column(h, col - col0, hv[argnum_]);
        }, ParallelColumns{});
        return h;
      } else {
        check_single_output(name, g);
        const TensorType& out = type_of(g->key(g->outputs()[0]));
        Shape shape = out.shape;
        shape.insert(shape.end(), x.shape().begin(), x.shape().end());
        // jacfwd writes every entry; jacrev leaves zero the rows no vjp reaches.
        Tensor j = M == Mode::JacFwd ? Tensor::uninitialized(TensorType{out.dtype, std::move(shape)})
                                     : Tensor(TensorType{out.dtype, std::move(shape)});
        // Columns (rows) run on several threads (ParallelColumns) and store disjoint entries of j.
        if constexpr (M == Mode::JacFwd) {
          // Column j of J is stored as row j of J^T (contiguous; a strided column store touches
          // a page per element), then J^T is transposed by tiles.
          const auto rows = static_cast<std::size_t>(out.numel()), cols = static_cast<std::size_t>(x.numel());
          Tensor jt = Tensor::uninitialized(TensorType{out.dtype, {static_cast<std::int64_t>(cols), static_cast<std::int64_t>(rows)}});
          ad.jacobian_columns(g, args, [&](std::size_t col, const Tensors& t) {
            store_matrix_row(jt, col - col0, t[0], /*conjugate=*/false);
          }, ParallelColumns{});
          transpose_matrix_into(j, jt, cols, rows);
        } else {
          ad.jacobian_rows(g, args, [&](std::size_t row, const Tensors& c) {
            store_matrix_row(j, row, c[argnum_], /*conjugate=*/true);  // J's row is conj(J^H e_row)
          }, ParallelColumns{});
        }
        return j;
      }
    }
  }

 private:
  std::shared_ptr<FunctionState<F>> state_;
  std::vector<std::size_t> argnums_;
  std::size_t argnum_;
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
  detail::check_directions("jvp", "tangent", primals, tangents);
  detail::FunctionState<F> state(std::move(f));
  auto [values, dy] = state.ad().jvp(state.graph(primals, nullptr), primals, tangents);
  return {values.at(0), dy.at(0)};
}
/// (f(primals), J^* cotangent) for a function with one output; one cotangent per primal.
template <class F>
std::pair<Tensor, Tensors> vjp(F f, const Tensors& primals, const Tensor& cotangent) {
  detail::FunctionState<F> state(std::move(f));
  GraphPtr g = state.graph(primals, nullptr);
  detail::check_cotangent("vjp", g, cotangent);
  auto [values, ct] = state.ad().vjp(g, primals, Tensors{cotangent});
  return {values.at(0), ct};
}
/// Hessian-vector product of a real scalar function: one direction per primal.
template <class F>
Tensors hvp(F f, const Tensors& primals, const Tensors& directions) {
  detail::check_directions("hvp", "direction", primals, directions);
  detail::FunctionState<F> state(std::move(f));
  GraphPtr g = state.graph(primals, nullptr);
  detail::check_scalar_loss("hvp", g);
  return state.ad().hvp(g, primals, directions);
}

/// A traced program: the graph of f on arguments like `args`, for users who want the pipeline
/// itself (resolve, linearize, linear_transpose, materialize_merge, compile) or its printed IR.
namespace detail {
struct ProgramCache;  // the compiled program, built on the first run (transforms.cpp)
}

class Program {
 public:
  explicit Program(GraphPtr graph);
  const GraphPtr& graph() const { return graph_; }
  std::string print() const;
  /// linearize with respect to every float or complex argument.
  tidu::LinearizedGraph<StdTensorOp> linearize() const;
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
