// The transformed callables of transforms.hpp without their function's type: tracing per
// signature, and grad, value_and_grad, jacfwd, jacrev, hessian, jvp, vjp and hvp through tidu's
// transforms, which are instantiated for StdTensorOp here, once.
#include <map>
#include <mutex>

#include "api/trace_body.hpp"
#include "computegraph/replay.hpp"
#include "tenferro/operand_space.hpp"
#include "tenferro/transforms.hpp"
#include "tenferro/ops/record.hpp"
#include "tenferro/program.hpp"
#include "tidu/transforms.hpp"

namespace tenferro::detail {

GraphPtr trace_function(const std::function<std::vector<Traced>(const std::vector<Traced>&)>& f,
                        const std::vector<TensorType>& types) {
  auto state = std::make_shared<TraceState>();
  std::vector<Traced> args;
  for (std::size_t i = 0; i < types.size(); ++i) {
    args.emplace_back(state, state->builder.add_input(TensorKey{"x" + std::to_string(i), types[i]}));
  }
  std::vector<Traced> results = f(args);
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

/// One transformed callable's state: f, its traces per signature, and the derived programs.
struct TransformState {
  explicit TransformState(TracedFunction function) : f(std::move(function)), ad(default_compile_cache()) {}

  /// The graph of f for these arguments; traced (and restricted to `wrt`) on first use.
  GraphPtr graph(const Tensors& args, const std::vector<std::size_t>* wrt) { return graph_for(types_of(args), wrt); }

  GraphPtr graph_for(std::vector<TensorType> types, const std::vector<std::size_t>* wrt) {
    const std::size_t count = types.size();
    std::lock_guard lock(mutex);
    auto it = graphs.find(types);
    if (it != graphs.end()) return it->second;
    GraphPtr g = trace_function(f, types);
    if (wrt) {
      std::vector<bool> mask(count, false);
      for (std::size_t j : *wrt) mask.at(j) = true;
      ad.set_wrt(g, std::move(mask));
    }
    graphs.emplace(std::move(types), g);
    return g;
  }

  struct TypesLess {
    bool operator()(const std::vector<TensorType>& a, const std::vector<TensorType>& b) const {
      return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end(),
                                          [](const TensorType& x, const TensorType& y) {
                                            return std::tie(x.dtype, x.shape) < std::tie(y.dtype, y.shape);
                                          });
    }
  };
  TracedFunction f;
  tidu::Transforms<StdTensorOp> ad;
  std::mutex mutex;
  std::map<std::vector<TensorType>, GraphPtr, TypesLess> graphs;
};

TransformedFunction::TransformedFunction(TracedFunction f, std::vector<std::size_t> argnums)
    : state_(std::make_shared<TransformState>(std::move(f))), argnums_(std::move(argnums)) {
  if (argnums_.empty()) throw BindingError("tenferro: a transform needs at least one argnum");
}

namespace {
/// The graph of a scalar loss, after checking the differentiated arguments.
GraphPtr loss_graph(TransformState& state, const char* name, const Tensors& args, const std::vector<std::size_t>& argnums) {
  for (std::size_t j : argnums) check_wrt(name, args, j);
  GraphPtr g = state.graph(args, &argnums);
  check_scalar_loss(name, g);
  return g;
}

/// The offset of argument `argnum`'s first column among all arguments' elements.
std::size_t first_column(const Tensors& args, std::size_t argnum) {
  std::size_t col0 = 0;
  for (std::size_t j = 0; j < argnum; ++j) col0 += static_cast<std::size_t>(args[j].numel());
  return col0;
}

/// A Jacobian of f's single output with respect to args[argnum], allocated (zero for jacrev,
/// which leaves the rows no vjp reaches zero).
Tensor jacobian_result(const char* name, const GraphPtr& g, const Tensor& x, bool zeroed) {
  check_single_output(name, g);
  const TensorType& out = type_of(g->key(g->outputs()[0]));
  Shape shape = out.shape;
  shape.insert(shape.end(), x.shape().begin(), x.shape().end());
  const TensorType type{out.dtype, std::move(shape)};
  return zeroed ? Tensor(type) : Tensor::uninitialized(type);
}
}  // namespace

Tensor TransformedFunction::grad(const Tensors& args) const {
  GraphPtr g = loss_graph(*state_, "grad", args, argnums_);
  return state_->ad.grad(g, args)[argnums_[0]];
}

std::pair<Tensor, Tensor> TransformedFunction::value_and_grad(const Tensors& args) const {
  GraphPtr g = loss_graph(*state_, "value_and_grad", args, argnums_);
  auto [value, grads] = state_->ad.value_and_grad(g, args);
  return {value, grads[argnums_[0]]};
}

std::pair<Tensor, Tensors> TransformedFunction::value_and_grads(const Tensors& args) const {
  GraphPtr g = loss_graph(*state_, "value_and_grad", args, argnums_);
  auto [value, grads] = state_->ad.value_and_grad(g, args);
  Tensors selected;
  for (std::size_t j : argnums_) selected.push_back(grads[j]);
  return {value, selected};
}

std::tuple<Tensor, Tensors, Tensors> TransformedFunction::value_grads_aux(const Tensors& args) const {
  for (std::size_t j : argnums_) check_wrt("grad", args, j);
  GraphPtr g = state_->graph(args, &argnums_);
  check_scalar_output("grad", g);
  // Only the loss's cotangent is read: the other outputs are detached (stop_gradient), so they
  // have no tangent and their entries stay empty.
  Tensors cts(g->outputs().size());
  cts[0] = Tensor::scalar(1.0, type_of(g->key(g->outputs()[0])).dtype);
  auto [values, grads] = state_->ad.vjp(g, args, cts);
  Tensors selected;
  for (std::size_t j : argnums_) selected.push_back(grads[j]);
  Tensors aux(values.begin() + 1, values.end());
  return {values[0], std::move(selected), std::move(aux)};
}

std::pair<Traced, std::vector<Traced>> TransformedFunction::value_and_grads_traced(const std::vector<Traced>& args) const {
  if (args.empty()) throw BindingError("grad: the function needs at least one argument");
  std::vector<TensorType> types;
  for (const Traced& a : args) types.push_back(a.type());
  for (std::size_t j : argnums_) {
    if (j >= types.size()) {
      throw BindingError("grad: argnum " + std::to_string(j) + " of a function called with " + std::to_string(types.size()) +
                         " arguments");
    }
    if (!is_inexact(types[j].dtype)) {
      throw DTypeError("grad: argument " + std::to_string(j) + " is " + types[j].to_string() + "; only float or complex arguments are differentiated");
    }
  }
  GraphPtr g = state_->graph_for(types, &argnums_);
  check_scalar_loss("grad", g);
  const auto [program, layout] = state_->ad.vjp_program_with_layout(g);
  std::vector<Traced> in(args);
  if (program->input_slots().size() > args.size()) {
    in.push_back(constant(args[0], Tensor::scalar(1.0, type_of(g->key(g->outputs()[0])).dtype)));  // the seed
  }
  const Traced like = args[0];
  const auto slots = computegraph::replay_values(
      *program, std::span<const Traced>(in),
      [&like](const StdTensorOp& op, const computegraph::OperationRole&, std::span<const Traced> operands) {
        return operands.empty() ? std::vector<Traced>{record_nullary(like, op)} : apply_outputs(op, operands);
      });
  const auto& outs = program->output_slots();
  Traced value = *slots[outs[0]];
  std::vector<Traced> grads;
  for (std::size_t j : argnums_) {
    grads.push_back(layout[j] >= 0 ? *slots[outs[static_cast<std::size_t>(layout[j])]] : full_like(args[j], 0.0));
  }
  return {value, grads};
}

struct TreeCache::State {
  std::mutex mutex;
  std::map<std::string, std::shared_ptr<TreeEntry>> entries;
};
std::shared_ptr<TreeCache::State> TreeCache::make_state() { return std::make_shared<State>(); }
std::shared_ptr<TreeEntry> TreeCache::find(const std::string& key) const {
  std::lock_guard lock(state_->mutex);
  auto it = state_->entries.find(key);
  return it == state_->entries.end() ? nullptr : it->second;
}
std::shared_ptr<TreeEntry> TreeCache::insert(const std::string& key, std::shared_ptr<TreeEntry> entry) const {
  std::lock_guard lock(state_->mutex);
  return state_->entries.emplace(key, std::move(entry)).first->second;  // the first insert wins
}

Tensor TransformedFunction::hessian(const Tensors& args) const {
  GraphPtr g = loss_graph(*state_, "hessian", args, argnums_);
  const std::size_t argnum = argnums_[0], col0 = first_column(args, argnum);
  const Tensor& x = args[argnum];
  Shape shape = x.shape();
  shape.insert(shape.end(), x.shape().begin(), x.shape().end());
  Tensor h = Tensor::uninitialized(TensorType{x.dtype(), std::move(shape)});
  // Only argument argnum is differentiated (set_wrt), so its columns are the only ones. Columns
  // run on several threads (ParallelColumns) and store disjoint rows of h.
  state_->ad.hessian_columns(g, args, [&](std::size_t col, const Tensors& hv) {
    store_hessian_column(h, col - col0, hv[argnum]);
  }, ParallelColumns{});
  return h;
}

Tensor TransformedFunction::jacfwd(const Tensors& args) const {
  const std::size_t argnum = argnums_[0];
  check_wrt("jacfwd", args, argnum);
  GraphPtr g = state_->graph(args, &argnums_);
  const Tensor& x = args[argnum];
  Tensor j = jacobian_result("jacfwd", g, x, /*zeroed=*/false);
  // Column j of J is stored as row j of J^T (contiguous; a strided column store touches a page
  // per element), then J^T is transposed by tiles. Columns run on several threads.
  const std::size_t col0 = first_column(args, argnum);
  const auto rows = static_cast<std::size_t>(j.numel() / std::max<std::int64_t>(x.numel(), 1));
  const auto cols = static_cast<std::size_t>(x.numel());
  Tensor jt = Tensor::uninitialized(
      TensorType{j.dtype(), {static_cast<std::int64_t>(cols), static_cast<std::int64_t>(rows)}});
  state_->ad.jacobian_columns(g, args, [&](std::size_t col, const Tensors& t) {
    store_matrix_row(jt, col - col0, t[0], /*conjugate=*/false);
  }, ParallelColumns{});
  transpose_matrix_into(j, jt, cols, rows);
  return j;
}

Tensor TransformedFunction::jacrev(const Tensors& args) const {
  const std::size_t argnum = argnums_[0];
  check_wrt("jacrev", args, argnum);
  GraphPtr g = state_->graph(args, &argnums_);
  Tensor j = jacobian_result("jacrev", g, args[argnum], /*zeroed=*/true);
  // Rows run on several threads and store disjoint entries; J's row is conj(J^H e_row).
  state_->ad.jacobian_rows(g, args, [&](std::size_t row, const Tensors& c) {
    store_matrix_row(j, row, c[argnum], /*conjugate=*/true);
  }, ParallelColumns{});
  return j;
}

std::pair<Tensor, Tensor> jvp_of(const TracedFunction& f, const Tensors& primals, const Tensors& tangents) {
  check_directions("jvp", "tangent", primals, tangents);
  TransformState state(f);
  auto [values, dy] = state.ad.jvp(state.graph(primals, nullptr), primals, tangents);
  return {values.at(0), dy.at(0)};
}

std::pair<Tensor, Tensors> vjp_of(const TracedFunction& f, const Tensors& primals, const Tensor& cotangent) {
  TransformState state(f);
  GraphPtr g = state.graph(primals, nullptr);
  check_cotangent("vjp", g, cotangent);
  auto [values, ct] = state.ad.vjp(g, primals, Tensors{cotangent});
  return {values.at(0), ct};
}

Tensors hvp_of(const TracedFunction& f, const Tensors& primals, const Tensors& directions) {
  check_directions("hvp", "direction", primals, directions);
  TransformState state(f);
  GraphPtr g = state.graph(primals, nullptr);
  check_scalar_loss("hvp", g);
  return state.ad.hvp(g, primals, directions);
}

}  // namespace tenferro::detail
