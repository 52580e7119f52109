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
// grad and value_and_grad take trees of tensors (tenferro/tree.hpp), any number of arguments, and
// return gradients in the differentiated argument's structure; the other transforms take up to 8
// Tensor arguments. f returns a Traced or a std::vector<Traced> (with has_aux: a pair of a Traced
// loss and any tree of Traced).
//
// Only the tracing of f is a template here: everything after it (linearizing, transposing,
// compiling, running, and tidu's machinery instantiated for StdTensorOp) is compiled once in
// src/api/transformed.cpp, so a user's file that calls these compiles quickly; and no header of
// the graph engine is included (tenferro/program.hpp has the traced program itself, for users
// who want the pipeline).
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include "tenferro/function.hpp"
#include "tenferro/traced.hpp"
#include "tenferro/tree.hpp"

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
/// Appends ts (out of line: the range insert is a noticeable part of a user file's compile time).
void collect(std::vector<Traced>& out, const std::vector<Traced>& ts);

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
GraphPtr trace_function(const Function<std::vector<Traced>(const std::vector<Traced>&)>& f,
                        const std::vector<TensorType>& types);

/// Builds the graph of f on arguments of the given types: inputs x0, x1, ...; outputs f's results.
template <class F>
GraphPtr trace_graph(F& f, const std::vector<TensorType>& types) {
  return trace_function([&f](const std::vector<Traced>& args) { return call_traced(f, args); }, types);
}

std::vector<TensorType> types_of(const Tensors& args);
/// A value (a fresh scalar constant) of the innermost trace this thread is recording, a traced
/// function's or a control-flow body's; nullopt when none is. Python's control-flow functions
/// record into it when their operands are all concrete, so that a body may read the traced values
/// of the function around it (its closure), as in JAX.
std::optional<Traced> recording_anchor();
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
  void operator()(std::size_t count, const Function<void(std::size_t, std::size_t)>& body) const;
};
/// to = from^T for `from` viewed as a rows x cols row-major matrix; both have the same dtype.
void transpose_matrix_into(Tensor& to, const Tensor& from, std::size_t rows, std::size_t cols);
/// Stores `values` (conjugated if asked) as row `row` of m, viewed as a rows x values.numel()
/// row-major matrix, converting to m's dtype (the real part for a real m).
void store_matrix_row(Tensor& m, std::size_t row, const Tensor& values, bool conjugate);

/// f as a function of a list of traced arguments (call_traced).
using TracedFunction = Function<std::vector<Traced>(const std::vector<Traced>&)>;
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
  /// For a function whose output 0 is a real scalar loss and whose other outputs are auxiliary
  /// values (not differentiated): (loss, the gradient for each argnum, the other outputs).
  std::tuple<Tensor, Tensors, Tensors> value_grads_aux(const Tensors& args) const;
  /// For Traced arguments (inside a traced function: vmap, another transform's trace): the loss
  /// and its gradients for the argnums, recorded into the arguments' trace as the gradient
  /// program's operations.
  std::pair<Traced, std::vector<Traced>> value_and_grads_traced(const std::vector<Traced>& args) const;
  Tensor jacfwd(const Tensors& args) const;
  Tensor jacrev(const Tensors& args) const;
  Tensor hessian(const Tensors& args) const;
  /// For Traced arguments: the Jacobian [output..., x...] (Hessian [x..., x...]) of the argnum,
  /// recorded into the arguments' trace as vmap over the coordinate vectors of the jvp (jacfwd,
  /// hessian: of the hvp) or of the vjp (jacrev) program.
  enum class JacobianKind { Forward, Reverse, Hessian };
  Traced jacobian_traced(const std::vector<Traced>& args, JacobianKind kind) const;
  /// For Traced arguments: the derivative applied to each of a stack of directions, recorded
  /// into the arguments' trace as one vmap of the derivative program over them. Forward: the
  /// directions are [k, x...] and the result is [k, output...] (J v per direction); Reverse: [k,
  /// output...] to [k, x...] (w^T J, conj(J^H w) for complex values); Hessian: [k, x...] to [k,
  /// x...] (H v). Throws ShapeError naming the transform if the directions have another type.
  /// Sparse Jacobians and Hessians (tenferro/sparse.hpp) run it on the seed matrices of their
  /// colorings; jacobian_traced runs it on the coordinate vectors.
  Traced products_traced(const std::vector<Traced>& args, JacobianKind kind, const Traced& directions) const;

 private:
  /// f's graph for the arguments' types after checking them for the Jacobian of that kind.
  GraphPtr checked_graph(const std::vector<Traced>& args, JacobianKind kind) const;
  /// jacobian_traced compiled for the arguments' types (once per signature) and run on them.
  Tensor batched_jacobian_run(const Tensors& args, JacobianKind kind) const;

  std::shared_ptr<TransformState> state_;
  std::vector<std::size_t> argnums_;
};

// The direct forms (transformed.cpp).
std::pair<Tensor, Tensor> jvp_of(const TracedFunction& f, const Tensors& primals, const Tensors& tangents);
std::pair<Traced, Traced> jvp_traced_of(const TracedFunction& f, const std::vector<Traced>& primals,
                                        const std::vector<Traced>& tangents);
std::pair<Traced, std::vector<Traced>> vjp_traced_of(const TracedFunction& f, const std::vector<Traced>& primals,
                                                     const Traced& cotangent);
std::pair<Tensor, Tensors> vjp_of(const TracedFunction& f, const Tensors& primals, const Tensor& cotangent);
Tensors hvp_of(const TracedFunction& f, const Tensors& primals, const Tensors& directions);

/// What each transformed callable runs.
enum class Mode { Grad, ValueAndGrad, ValueAndGrads, JacFwd, JacRev, Hessian };

/// The structure of trees beyond their types (vector lengths, map keys, optional presence), as a
/// key: equal keys and equal types mean equal leaf layouts.
template <class T>
void tree_key(std::string& key, const T& tree) {
  using U = std::remove_cvref_t<T>;
  if constexpr (is_tree_leaf<U>::value) {
    key += 'L';
  } else if constexpr (registered_tree_struct<U>) {
    std::apply([&](const auto&... field) { (tree_key(key, field), ...); }, TreeFields<U>::tie(tree));
  } else if constexpr (requires { typename U::key_type; }) {
    key += '{';
    for (const auto& [name, value] : tree) {
      key += std::to_string(name.size()) + ':' + name;
      tree_key(key, value);
    }
    key += '}';
  } else if constexpr (requires { tree.has_value(); }) {
    key += tree.has_value() ? '?' : '-';
    if (tree.has_value()) tree_key(key, *tree);
  } else if constexpr (requires { std::tuple_size<U>::value; } && !requires { tree.size(); }) {
    std::apply([&](const auto&... element) { (tree_key(key, element), ...); }, tree);
  } else {
    key += '[' + std::to_string(tree.size());
    for (const auto& element : tree) tree_key(key, element);
    key += ']';
  }
}

/// A tree transform's derived function for one argument structure: the transformed function
/// over the flattened leaves, and (with aux) the structure of the auxiliary result, recorded when
/// the function is traced.
struct TreeEntry {
  TransformedFunction impl;
  std::shared_ptr<void> aux_structure;
};
/// The tree transforms of one transformed callable, by argument structure (thread-safe).
struct TreeCache {
  std::shared_ptr<TreeEntry> find(const std::string& key) const;
  std::shared_ptr<TreeEntry> insert(const std::string& key, std::shared_ptr<TreeEntry> entry) const;

 private:
  struct State;
  std::shared_ptr<State> state_ = make_state();
  static std::shared_ptr<State> make_state();
};

/// The argument a transform differentiates: Index (std::integral_constant, fixed at compile time)
/// or std::size_t (chosen at run time: the arguments must then be trees of one type).
template <class Sel, class... A>
const auto& selected_argument(Sel sel, const A&... args) {
  if constexpr (std::is_same_v<Sel, std::size_t>) {
    using First = std::tuple_element_t<0, std::tuple<A...>>;
    static_assert((std::is_same_v<A, First> && ...),
                  "tenferro: the arguments are trees of different types, so the differentiated one must be "
                  "chosen at compile time: tf::grad(f, tf::argnum<I>)");
    const First* all[] = {&args...};
    if (sel >= sizeof...(A)) throw BindingError("tenferro: argnum " + std::to_string(sel) + " of a function called with " +
                                                std::to_string(sizeof...(A)) + " arguments");
    return *all[sel];
  } else {
    static_assert(Sel::value < sizeof...(A), "tenferro: argnum<I> beyond the arguments");
    return std::get<Sel::value>(std::tie(args...));
  }
}

/// The structure (a tree of leaf positions) of the aux result of a function returning (loss, aux).
template <class Result, bool Aux>
struct aux_structure_of {
  using type = int;  // no aux
};
template <class Result>
struct aux_structure_of<Result, true> {
  static_assert(requires { typename Result::second_type; },
                "tenferro: with has_aux the function must return std::pair<Traced, aux tree>");
  using type = with_leaf_t<typename Result::second_type, LeafIndex>;
};

template <class F, Mode M, class Sel = std::size_t, bool Aux = false>
class Transformed {
 public:
  Transformed(F f, std::vector<std::size_t> argnums)
      : f_(f), impl_(erase_function(std::move(f)), argnums), argnums_(std::move(argnums)) {}

  template <class... A>
    requires(sizeof...(A) > 0)
  auto operator()(const A&... args) const {
    if constexpr ((std::is_same_v<A, Traced> && ...)) {
      // Inside a trace: the derivative program is recorded into it (vmap(grad(f)), grad of grad,
      // vmap(jacfwd(f))).
      static_assert(!Aux, "tenferro: on Traced arguments, transforms take functions without aux");
      if constexpr (M == Mode::JacFwd || M == Mode::JacRev || M == Mode::Hessian) {
        using K = TransformedFunction::JacobianKind;
        return impl_.jacobian_traced(std::vector<Traced>{args...},
                                     M == Mode::JacFwd ? K::Forward : M == Mode::JacRev ? K::Reverse : K::Hessian);
      } else {
        auto [value, grads] = impl_.value_and_grads_traced(std::vector<Traced>{args...});
        if constexpr (M == Mode::Grad) {
          return grads.at(0);
        } else if constexpr (M == Mode::ValueAndGrad) {
          return std::make_pair(value, grads.at(0));
        } else {
          return std::make_pair(value, grads);
        }
      }
    } else if constexpr (!Aux && (std::is_same_v<A, Tensor> && ...) && sizeof...(A) <= kMaxArgs) {
      return call(Tensors{args...});
    } else {
      return call_tree(args...);
    }
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
  /// Trees of tensors (or more than kMaxArgs tensors, or a function with aux): the function is
  /// traced on the trees' leaves, once per argument structure and signature.
  template <class... A>
  auto call_tree(const A&... args) const {
    static_assert((is_tree_v<A> && ...), "tenferro: every argument of a transformed function must be a tree of "
                                         "tensors (tenferro/tree.hpp)");
    static_assert(M == Mode::Grad || M == Mode::ValueAndGrad || M == Mode::ValueAndGrads,
                  "tenferro: jacfwd, jacrev and hessian take up to 8 Tensor arguments; grad and value_and_grad "
                  "take trees");
    using Result = std::invoke_result_t<F&, with_leaf_t<A, Traced>...>;
    // Trees of Tensors, or trees of Traced values inside a traced function (vmap(grad(f)) over
    // structured parameters), whose gradient program is then recorded into their trace.
    constexpr bool traced = (std::is_same_v<with_leaf_t<A, Traced>, A> && ...);
    static_assert(traced || (std::is_same_v<with_leaf_t<A, Tensor>, A> && ...),
                  "tenferro: the arguments must all be trees of Tensors or all trees of Traced values");
    static_assert(!(traced && Aux), "tenferro: on Traced arguments, transforms take functions without aux");
    using Leaf = std::conditional_t<traced, Traced, Tensor>;
    std::vector<Leaf> flat;
    std::vector<std::size_t> first;  // argument k's leaves are flat[first[k], first[k + 1])
    (
        [&](const auto& arg) {
          first.push_back(flat.size());
          tree_for_each(arg, [&](const Leaf& t) { flat.push_back(t); });
        }(args),
        ...);
    first.push_back(flat.size());
    std::string key;
    ((key += typeid(A).name(), key += ';', tree_key(key, args)), ...);
    std::shared_ptr<TreeEntry> entry = cache_.find(key);
    if (!entry) entry = cache_.insert(key, make_entry<Result>(first, args...));
    // Not a structured binding: clang 14 cannot capture one in the lambdas below.
    std::tuple<Leaf, std::vector<Leaf>, std::vector<Leaf>> computed = [&] {
      if constexpr (traced) {
        auto r = entry->impl.value_and_grads_traced(flat);
        return std::tuple<Leaf, std::vector<Leaf>, std::vector<Leaf>>{std::move(r.first), std::move(r.second), {}};
      } else {
        return entry->impl.value_grads_aux(flat);
      }
    }();
    Leaf& value = std::get<0>(computed);
    const std::vector<Leaf>& grads = std::get<1>(computed);
    const std::vector<Leaf>& aux = std::get<2>(computed);
    // The gradient of each selected argument: its tree, filled with the selected leaves' gradients.
    std::size_t next = 0;
    auto gradient_of = [&](const auto& arg) { return tree_map<Leaf>(arg, [&](const Leaf&) { return grads.at(next++); }); };
    auto result = [&] {
      if constexpr (M == Mode::ValueAndGrads) {
        using G = decltype(gradient_of(selected_argument(std::size_t{0}, args...)));
        std::vector<G> gs;
        for (std::size_t j : argnums_) gs.push_back(gradient_of(selected_argument(j, args...)));
        return gs;
      } else {
        return gradient_of(selected_argument(selection(), args...));
      }
    }();
    if constexpr (Aux) {
      const auto& structure = *std::static_pointer_cast<typename aux_structure_of<Result, Aux>::type>(entry->aux_structure);
      auto aux_tree = tree_map<Leaf>(structure, [&](LeafIndex i) { return aux.at(i.index); });
      if constexpr (M == Mode::Grad) {
        return std::make_pair(std::move(result), std::move(aux_tree));
      } else {
        return std::make_pair(std::make_pair(std::move(value), std::move(aux_tree)), std::move(result));
      }
    } else if constexpr (M == Mode::Grad) {
      return result;
    } else {
      return std::make_pair(std::move(value), std::move(result));
    }
  }

  Sel selection() const {
    if constexpr (std::is_same_v<Sel, std::size_t>) {
      return argnums_.at(0);
    } else {
      return Sel{};
    }
  }

  template <class Result, class... A>
  std::shared_ptr<TreeEntry> make_entry(const std::vector<std::size_t>& first, const A&... args) const {
    // The leaves each selected argument owns, in order: the derived function's argnums.
    std::vector<std::size_t> selected;
    if constexpr (M == Mode::ValueAndGrads) {
      selected = argnums_;
    } else if constexpr (std::is_same_v<Sel, std::size_t>) {
      selected = {argnums_.at(0)};
    } else {
      selected = {Sel::value};
    }
    std::vector<std::size_t> leaves;
    for (std::size_t j : selected) {
      if (j + 1 >= first.size()) throw BindingError("tenferro: argnum " + std::to_string(j) + " beyond the arguments");
      for (std::size_t k = first[j]; k < first[j + 1]; ++k) leaves.push_back(k);
    }
    if (leaves.empty()) throw BindingError("tenferro: the differentiated arguments have no tensors");
    // The arguments' structures, as trees of leaf positions.
    std::size_t counter = 0;
    auto count = [&](const auto&) { return LeafIndex{counter++}; };
    // A braced list evaluates left to right (make_tuple's arguments would not): leaf k of the
    // flattened arguments gets index k.
    const std::tuple<with_leaf_t<A, LeafIndex>...> structures{tree_map<LeafIndex>(args, count)...};
    std::shared_ptr<void> aux_structure;
    using AuxStructure = typename aux_structure_of<Result, Aux>::type;
    auto aux_holder = std::make_shared<AuxStructure>();
    aux_structure = aux_holder;
    TracedFunction fn = [f = f_, structures, aux_holder](const std::vector<Traced>& flat) {
      auto pick = [&](LeafIndex i) { return flat.at(i.index); };
      auto r = std::apply([&](const auto&... s) { return f(tree_map<Traced>(s, pick)...); }, structures);
      std::vector<Traced> out;
      if constexpr (Aux) {
        out.push_back(r.first);
        std::size_t n = 0;
        *aux_holder = tree_map<LeafIndex>(r.second, [&](const Traced&) { return LeafIndex{n++}; });
        tree_for_each(r.second, [&](const Traced& t) { out.push_back(stop_gradient(t)); });
      } else {
        collect(out, r);
      }
      return out;
    };
    return std::make_shared<TreeEntry>(TreeEntry{TransformedFunction(std::move(fn), std::move(leaves)), aux_structure});
  }

  F f_;
  TransformedFunction impl_;
  std::vector<std::size_t> argnums_;
  TreeCache cache_;
};
}  // namespace detail

/// Selects argument I at compile time: tf::grad(f, tf::argnum<1>). Needed when the arguments are
/// trees of different types (the gradient has the selected argument's type).
template <std::size_t I>
inline constexpr std::integral_constant<std::size_t, I> argnum{};
/// Marks a function that returns (loss, aux), aux any tree of Traced values carried through
/// without being differentiated: grad returns (gradient, aux); value_and_grad ((loss, aux),
/// gradient), as JAX's has_aux.
struct HasAux {};
inline constexpr HasAux has_aux{};

/// d f / d args[argnum] of a function returning a real scalar. Arguments may be trees of tensors
/// (tenferro/tree.hpp: vectors, maps, tuples, registered structs, ...), any number of them; the
/// gradient is a tree of the differentiated argument's structure.
template <class F>
auto grad(F f) { return detail::Transformed<F, detail::Mode::Grad, std::integral_constant<std::size_t, 0>>(std::move(f), {0}); }
template <class F>
auto grad(F f, std::size_t argnum) { return detail::Transformed<F, detail::Mode::Grad>(std::move(f), {argnum}); }
template <class F, std::size_t I>
auto grad(F f, std::integral_constant<std::size_t, I>) {
  return detail::Transformed<F, detail::Mode::Grad, std::integral_constant<std::size_t, I>>(std::move(f), {I});
}
/// With aux: (gradient, aux).
template <class F, std::size_t I = 0>
auto grad(F f, HasAux, std::integral_constant<std::size_t, I> = {}) {
  return detail::Transformed<F, detail::Mode::Grad, std::integral_constant<std::size_t, I>, true>(std::move(f), {I});
}
/// (f(args), d f / d args[argnum]); trees as grad.
template <class F>
auto value_and_grad(F f) {
  return detail::Transformed<F, detail::Mode::ValueAndGrad, std::integral_constant<std::size_t, 0>>(std::move(f), {0});
}
template <class F>
auto value_and_grad(F f, std::size_t argnum) {
  return detail::Transformed<F, detail::Mode::ValueAndGrad>(std::move(f), {argnum});
}
template <class F, std::size_t I>
auto value_and_grad(F f, std::integral_constant<std::size_t, I>) {
  return detail::Transformed<F, detail::Mode::ValueAndGrad, std::integral_constant<std::size_t, I>>(std::move(f), {I});
}
/// With aux: ((f's loss, aux), gradient).
template <class F, std::size_t I = 0>
auto value_and_grad(F f, HasAux, std::integral_constant<std::size_t, I> = {}) {
  return detail::Transformed<F, detail::Mode::ValueAndGrad, std::integral_constant<std::size_t, I>, true>(std::move(f), {I});
}
/// (f(args), [d f / d args[j] for j in argnums]): one compiled gradient program for all of them.
/// Trees: the arguments must be trees of one type (each gradient has it).
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
/// The same inside a trace (vmap of jvp: a batch of tangents, Jacobian columns): the jvp
/// program recorded into the primals' trace. One tangent per primal, of its type.
template <class F>
std::pair<Traced, Traced> jvp(F f, const std::vector<Traced>& primals, const std::vector<Traced>& tangents) {
  return detail::jvp_traced_of(detail::erase_function(std::move(f)), primals, tangents);
}
/// (f(primals), J^* cotangent) for a function with one output; one cotangent per primal.
template <class F>
std::pair<Tensor, Tensors> vjp(F f, const Tensors& primals, const Tensor& cotangent) {
  return detail::vjp_of(detail::erase_function(std::move(f)), primals, cotangent);
}
/// The same inside a trace (vmap of vjp: a batch of cotangents, Jacobian rows).
template <class F>
std::pair<Traced, std::vector<Traced>> vjp(F f, const std::vector<Traced>& primals, const Traced& cotangent) {
  return detail::vjp_traced_of(detail::erase_function(std::move(f)), primals, cotangent);
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
  /// Peak bytes of tensor storage for a run on `args` (the caller's arguments not counted): as
  /// planned from the executor's run plan (the results of every step, in-place reuse and shared
  /// storage as the executor does them), and as measured around one run by a MemoryMeter (so
  /// also what kernels allocate for themselves, and the values inside control-flow bodies, which
  /// the plan leaves out). For a gradient: trace a function that calls tf::grad on its Traced
  /// arguments.
  struct MemoryStats {
    std::size_t planned_peak_bytes = 0;
    std::size_t measured_peak_bytes = 0;
  };
  MemoryStats memory_stats(const Tensors& args) const;
  /// The planned peak alone (memory_stats' plan), without a run.
  std::size_t planned_peak_bytes() const;

 private:
  GraphPtr graph_;
  std::shared_ptr<detail::ProgramCache> cache_;  // shared by copies, like the graph
};

template <class F, class... A>
Program trace(F f, const A&... args) {
  return Program(detail::trace_graph(f, detail::types_of(Tensors{args...})));
}

}  // namespace tenferro
