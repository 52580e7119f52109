// The transformed callables of transforms.hpp without their function's type: tracing per
// signature, and grad, value_and_grad, jacfwd, jacrev, hessian, jvp, vjp and hvp through tidu's
// transforms, which are instantiated for StdTensorOp here, once.
#include <map>
#include <mutex>

#include "api/trace_body.hpp"
#include "computegraph/replay.hpp"
#include "tenferro/operand_space.hpp"
#include "tenferro/transforms.hpp"
#include "tenferro/vmap.hpp"
#include "tenferro/ops/record.hpp"
#include "tenferro/program.hpp"
#include "tidu/transforms.hpp"

namespace tenferro::detail {

GraphPtr trace_function(const TracedFunction& f,
                        const std::vector<TensorType>& types) {
  auto state = std::make_shared<TraceState>();
  std::vector<Traced> args;
  for (std::size_t i = 0; i < types.size(); ++i) {
    args.emplace_back(state, state->builder.add_input(TensorKey{"x" + std::to_string(i), types[i]}));
  }
  std::vector<Traced> results;
  {
    const RecordingScope recording(state);
    results = f(args);
  }
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
  /// The batched Jacobian programs (jacobian_traced traced on tensors' types), per kind and signature.
  std::map<std::vector<TensorType>, std::shared_ptr<Program>, TypesLess> jacobian_programs[3];
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

namespace {
/// The slots of `program` with its instructions recorded into the trace of `in` (one value per
/// input slot).
std::vector<std::optional<Traced>> record_program(const computegraph::CompiledProgram<StdTensorOp>& program,
                                                  std::span<const Traced> in, const Traced& like) {
  return computegraph::replay_values(
      program, in, [&like](const StdTensorOp& op, const computegraph::OperationRole&, std::span<const Traced> operands) {
        return operands.empty() ? std::vector<Traced>{record_nullary(like, op)} : apply_outputs(op, operands);
      });
}

/// I_n as n examples of `x`'s type (batch axis first): example k is the k-th coordinate vector.
Traced basis_like(const Traced& x) {
  const std::int64_t n = numel(x.shape());
  std::vector<double> eye(static_cast<std::size_t>(n * n), 0.0);
  for (std::int64_t k = 0; k < n; ++k) eye[static_cast<std::size_t>(k * n + k)] = 1.0;
  Shape shape = x.shape();
  shape.insert(shape.begin(), n);
  return astype(constant(x, Tensor::from(eye, std::move(shape))), x.dtype());
}

/// cols [n, out...] (column k of the Jacobian, J e_k, for each of x's n coordinates) as the
/// Jacobian [out..., x...].
Traced columns_to_jacobian(const Traced& cols, const Shape& out, const Shape& x) {
  const std::int64_t n = numel(x), m = numel(out);
  Shape shape = out;
  shape.insert(shape.end(), x.begin(), x.end());
  return reshape(transpose(reshape(cols, {n, m})), std::move(shape));
}

/// f's jvp program recorded on primals and tangents (one per primal; those of the wrt positions
/// are read): f's outputs and, per output, its tangent (nullopt where it does not depend on x).
std::pair<std::vector<Traced>, std::vector<std::optional<Traced>>> record_jvp(tidu::Transforms<StdTensorOp>& ad, const GraphPtr& g,
                                                                              std::span<const Traced> primals,
                                                                              std::span<const Traced> tangents) {
  const auto [program, layout] = ad.jvp_program_with_layout(g);
  std::vector<Traced> in(primals.begin(), primals.end());
  for (std::size_t j : ad.wrt_positions(g)) in.push_back(tangents[j]);
  const auto slots = record_program(*program, in, primals[0]);
  const auto& outs = program->output_slots();
  std::vector<Traced> values;
  std::vector<std::optional<Traced>> dys;
  for (std::size_t i = 0; i < layout.size(); ++i) {
    values.push_back(*slots[outs[i]]);
    dys.push_back(layout[i] >= 0 ? std::optional<Traced>(*slots[outs[static_cast<std::size_t>(layout[i])]]) : std::nullopt);
  }
  return {std::move(values), std::move(dys)};
}
}  // namespace

namespace {
const char* jacobian_name(TransformedFunction::JacobianKind kind) {
  using K = TransformedFunction::JacobianKind;
  return kind == K::Forward ? "jacfwd" : kind == K::Reverse ? "jacrev" : "hessian";
}
}  // namespace

GraphPtr TransformedFunction::checked_graph(const std::vector<Traced>& args, JacobianKind kind) const {
  const char* name = jacobian_name(kind);
  const std::size_t argnum = argnums_[0];
  if (argnum >= args.size()) {
    throw BindingError(std::string(name) + ": argnum " + std::to_string(argnum) + " but the call has " + std::to_string(args.size()) +
                       " arguments");
  }
  const Traced& x = args[argnum];
  if (!is_inexact(x.dtype())) {
    throw DTypeError(std::string(name) + ": argument " + std::to_string(argnum) + " is " + x.type().to_string() +
                     "; only float or complex arguments are differentiated");
  }
  std::vector<TensorType> types;
  for (const Traced& a : args) types.push_back(a.type());
  GraphPtr g = state_->graph_for(types, &argnums_);
  if (kind == JacobianKind::Hessian) check_scalar_loss(name, g);
  check_single_output(name, g);
  return g;
}

Traced TransformedFunction::products_traced(const std::vector<Traced>& args, JacobianKind kind, const Traced& directions) const {
  const char* name = jacobian_name(kind);
  GraphPtr g = checked_graph(args, kind);
  const std::size_t argnum = argnums_[0];
  const Traced& x = args[argnum];
  auto& ad = state_->ad;
  const TensorType out = type_of(g->key(g->outputs()[0]));
  // A direction is a vector of x's type (an output's, for jacrev): the stack has one more axis.
  const TensorType& along = kind == JacobianKind::Reverse ? out : x.type();
  const Shape& d = directions.shape();
  if (d.empty() || !std::equal(d.begin() + 1, d.end(), along.shape.begin(), along.shape.end()) ||
      directions.dtype() != along.dtype) {
    throw ShapeError(std::string(name) + ": directions " + directions.type().to_string() + "; expected a stack [k, " +
                     along.to_string() + "] of " + (kind == JacobianKind::Reverse ? "output" : "argument") + " vectors");
  }
  // Each direction is one example of a vmap: the direction-free part of the derivative program is
  // recorded once, its linear part batched.
  VmapOptions options;
  if (kind == JacobianKind::Forward) {
    const TracedFunction column = [&](const std::vector<Traced>& t) {
      std::vector<Traced> tangents(args.size(), t[0]);
      auto jvp = record_jvp(ad, g, args, tangents);
      return std::vector<Traced>{jvp.second[0] ? *jvp.second[0] : full_like(jvp.first[0], 0.0)};
    };
    return vmap_traced(column, std::span<const Traced>(&directions, 1), options)[0];
  }
  if (kind == JacobianKind::Reverse) {
    const auto [program, layout] = ad.vjp_program_with_layout(g);
    const bool seeded = program->input_slots().size() > args.size();
    const TracedFunction row = [&, &program = program, &layout = layout](const std::vector<Traced>& ct) {
      std::vector<Traced> in(args);
      if (seeded) in.push_back(ct[0]);
      const auto slots = record_program(*program, in, args[0]);
      const std::ptrdiff_t at = layout[argnum];
      if (at < 0) return std::vector<Traced>{astype(full_like(x, 0.0), out.dtype)};
      // The row is conj(J^H w), in the output's dtype: its real part where the output is real and
      // x complex (as the column sweep stores it).
      const Traced r = conj(*slots[program->output_slots()[static_cast<std::size_t>(at)]]);
      return std::vector<Traced>{is_complex(r.dtype()) && !is_complex(out.dtype) ? real(r) : r};
    };
    return vmap_traced(row, std::span<const Traced>(&directions, 1), options)[0];
  }
  const auto hvp = ad.hvp_program_with_layout(g);
  const TracedFunction column = [&](const std::vector<Traced>& v) {
    std::vector<Traced> in(args);
    if (hvp.seeded) in.push_back(constant(args[0], Tensor::scalar(1.0, out.dtype)));
    in.push_back(v[0]);  // the one wrt position: argnum
    const auto slots = record_program(*hvp.program, in, args[0]);
    const std::ptrdiff_t at = hvp.layout[argnum];
    return std::vector<Traced>{at >= 0 ? *slots[hvp.program->output_slots()[static_cast<std::size_t>(at)]] : full_like(x, 0.0)};
  };
  return vmap_traced(column, std::span<const Traced>(&directions, 1), options)[0];
}

Traced TransformedFunction::jacobian_traced(const std::vector<Traced>& args, JacobianKind kind) const {
  GraphPtr g = checked_graph(args, kind);
  const Traced& x = args[argnums_[0]];
  const TensorType out = type_of(g->key(g->outputs()[0]));
  // Each column (row for jacrev) is the product with one coordinate vector.
  if (kind == JacobianKind::Forward) return columns_to_jacobian(products_traced(args, kind, basis_like(x)), out.shape, x.shape());
  if (kind == JacobianKind::Reverse) {
    const Traced y_like = full_like(constant(x, Tensor(out)), 0.0);
    Traced rows = products_traced(args, kind, basis_like(y_like));  // [m, x...]
    Shape shape = out.shape;
    shape.insert(shape.end(), x.shape().begin(), x.shape().end());
    return reshape(rows, std::move(shape));
  }
  return columns_to_jacobian(products_traced(args, kind, basis_like(x)), x.shape(), x.shape());
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

namespace {
/// Whether a Jacobian of `columns` columns (rows for jacrev) of the function `g` runs as one
/// batched program (vmap of the derivative program over the coordinate vectors) rather than as a
/// sweep of the derivative program's linear part, one run per column. The batched program pays
/// no per-column dispatch but holds every value of the derivative program once per column, plus
/// the identity it multiplies and a final transpose: measured (docs/tenferro.md, "Jacobians"), it
/// is 4x faster at 20-50 columns of a small function, even at about 200 columns of a function
/// with about 1000 values, and 2-4x slower at 1000 columns, where memory traffic dominates. So it
/// is taken while columns x values of g stays under kBatchedElements.
bool batched_jacobian(const GraphPtr& g, std::int64_t columns) {
  constexpr double kBatchedElements = 131072.0;
  double values = 0;
  for (std::size_t id = 0; id < g->values().size(); ++id) {
    values += static_cast<double>(type_of(g->key(static_cast<computegraph::LocalValueId>(id))).numel());
  }
  return columns > 0 && values * static_cast<double>(columns) <= kBatchedElements;
}
}  // namespace

Tensor TransformedFunction::batched_jacobian_run(const Tensors& args, JacobianKind kind) const {
  const auto types = types_of(args);
  std::shared_ptr<Program> program;
  {
    std::lock_guard lock(state_->mutex);
    auto& programs = state_->jacobian_programs[static_cast<int>(kind)];
    if (auto it = programs.find(types); it != programs.end()) program = it->second;
  }
  if (!program) {
    const TransformedFunction self = *this;
    GraphPtr g = trace_function([&self, kind](const std::vector<Traced>& xs) { return std::vector<Traced>{self.jacobian_traced(xs, kind)}; },
                                types);
    std::lock_guard lock(state_->mutex);
    program = state_->jacobian_programs[static_cast<int>(kind)].emplace(types, std::make_shared<Program>(std::move(g))).first->second;
  }
  return program->run(args)[0];
}

Tensor TransformedFunction::hessian(const Tensors& args) const {
  GraphPtr g = loss_graph(*state_, "hessian", args, argnums_);
  if (batched_jacobian(g, args[argnums_[0]].numel())) return batched_jacobian_run(args, JacobianKind::Hessian);
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
  if (batched_jacobian(g, x.numel())) return batched_jacobian_run(args, JacobianKind::Forward);
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
  check_single_output("jacrev", g);
  if (batched_jacobian(g, type_of(g->key(g->outputs()[0])).numel())) return batched_jacobian_run(args, JacobianKind::Reverse);
  Tensor j = jacobian_result("jacrev", g, args[argnum], /*zeroed=*/true);
  // Rows run on several threads and store disjoint entries; J's row is conj(J^H e_row).
  state_->ad.jacobian_rows(g, args, [&](std::size_t row, const Tensors& c) {
    store_matrix_row(j, row, c[argnum], /*conjugate=*/true);
  }, ParallelColumns{});
  return j;
}

std::pair<Traced, Traced> jvp_traced_of(const TracedFunction& f, const std::vector<Traced>& primals,
                                        const std::vector<Traced>& tangents) {
  if (primals.empty()) throw BindingError("jvp: the function needs at least one argument");
  if (tangents.size() != primals.size()) {
    throw BindingError("jvp: " + std::to_string(primals.size()) + " primals but " + std::to_string(tangents.size()) + " tangents");
  }
  std::vector<TensorType> types;
  for (std::size_t j = 0; j < primals.size(); ++j) {
    if (tangents[j].type() != primals[j].type()) {
      throw ShapeError("jvp: tangent " + std::to_string(j) + " is " + tangents[j].type().to_string() + " for a primal " +
                       primals[j].type().to_string() + "; expected the primal's type");
    }
    types.push_back(primals[j].type());
  }
  TransformState state(f);
  GraphPtr g = state.graph_for(types, nullptr);
  check_single_output("jvp", g);
  auto [values, dys] = record_jvp(state.ad, g, primals, tangents);
  return {values[0], dys[0] ? *dys[0] : full_like(values[0], 0.0)};
}

std::pair<Traced, std::vector<Traced>> vjp_traced_of(const TracedFunction& f, const std::vector<Traced>& primals,
                                                     const Traced& cotangent) {
  if (primals.empty()) throw BindingError("vjp: the function needs at least one argument");
  std::vector<TensorType> types;
  for (const Traced& p : primals) types.push_back(p.type());
  TransformState state(f);
  GraphPtr g = state.graph_for(types, nullptr);
  check_single_output("vjp", g);
  const TensorType out = type_of(g->key(g->outputs()[0]));
  if (cotangent.type() != out) {
    throw ShapeError("vjp: the cotangent has type " + cotangent.type().to_string() + "; expected " + out.to_string() +
                     ", the type of the function's output");
  }
  const auto [program, layout] = state.ad.vjp_program_with_layout(g);
  std::vector<Traced> in(primals);
  if (program->input_slots().size() > primals.size()) in.push_back(cotangent);
  const auto slots = record_program(*program, in, primals[0]);
  const auto& outs = program->output_slots();
  std::vector<Traced> cts;
  for (std::size_t j = 0; j < primals.size(); ++j) {
    cts.push_back(layout[j] >= 0 ? *slots[outs[static_cast<std::size_t>(layout[j])]] : full_like(primals[j], 0.0));
  }
  return {*slots[outs[0]], std::move(cts)};
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
