// backward() of eager mode (tenferro/eager.hpp): the taped operations between the loss and the
// leaves become a graph, differentiated by the transforms of tf::grad; its gradient program reads
// the primal values the tape holds (tidu's vjp_program_at_values) and is cached by the graph's
// structure, so a training loop's repeated step compiles nothing and recomputes nothing.
#include <unordered_map>

#include "eager_node.hpp"
#include "eager_store.hpp"
#include "computegraph/replay.hpp"
#include "tenferro/operand_space.hpp"
#include "tenferro/transforms.hpp"
#include "tenferro/ops/record.hpp"
#include "tenferro/program.hpp"
#include "tidu/transforms.hpp"

namespace tenferro {

namespace {
using computegraph::LocalValueId;
using Ref = computegraph::ValueRef<StdTensorOp>;

/// The part of an eager trace that backward() differentiates, as a graph of its own: inputs are
/// the values where the walk from the loss stops (leaves, and values that need no grad), in trace
/// order; `wrt` marks those that need one.
struct Cut {
  GraphPtr graph;
  std::vector<LocalValueId> inputs;  // trace ids of the graph's inputs
  std::vector<bool> wrt;
  std::vector<LocalValueId> trace_of;  // per value of `graph`: its id in the trace
};

Cut cut_graph(const TraceState& trace, LocalValueId loss) {
  const detail::EagerStore& st = *trace.eager;
  const std::size_t n = st.values.size();
  enum : std::uint8_t { kNone, kComputed, kInput };
  std::vector<std::uint8_t> mark(n, kNone);
  std::vector<std::uint8_t> op_used(st.ops.size(), 0);
  std::vector<LocalValueId> stack{loss};
  while (!stack.empty()) {
    const LocalValueId v = stack.back();
    stack.pop_back();
    if (mark[v] != kNone) continue;
    if (!st.needs_grad[v] || st.producer[v] < 0) {
      if (st.needs_grad[v] && st.freed[v]) {
        throw ValueError("backward: a value on the way to the leaves was computed by operations that an earlier "
                         "backward() freed; pass BackwardOptions{.retain_graph = true} to that call");
      }
      mark[v] = kInput;
      continue;
    }
    const auto p = static_cast<std::size_t>(st.producer[v]);
    const detail::EagerOp& op = st.ops[p];
    op_used[p] = 1;
    for (std::uint32_t k = 0; k < op.output_count; ++k) mark[op.first_output + k] = kComputed;
    for (LocalValueId in : op.inputs) {
      if (mark[in] == kNone) stack.push_back(in);
    }
  }
  Cut cut;
  computegraph::GraphBuilder<StdTensorOp> b;
  std::vector<LocalValueId> local(n, 0);
  auto note = [&](LocalValueId graph_id, LocalValueId trace_id) {
    if (cut.trace_of.size() <= graph_id) cut.trace_of.resize(graph_id + 1);
    cut.trace_of[graph_id] = trace_id;
  };
  for (LocalValueId v = 0; v < n; ++v) {
    if (mark[v] != kInput) continue;
    local[v] = b.add_input(TensorKey{"x" + std::to_string(cut.inputs.size()), st.values[v].type()});
    note(local[v], v);
    cut.inputs.push_back(v);
    cut.wrt.push_back(st.needs_grad[v] != 0);
  }
  for (std::size_t p = 0; p < st.ops.size(); ++p) {
    if (!op_used[p]) continue;
    const detail::EagerOp& op = st.ops[p];
    std::vector<Ref> refs;
    for (LocalValueId in : op.inputs) refs.push_back(Ref::local(local[in]));
    const auto ids = b.add_operation(op.op, std::move(refs), computegraph::OperationRole::primary());
    for (std::size_t k = 0; k < ids.size(); ++k) {
      local[op.first_output + k] = ids[k];
      note(ids[k], op.first_output + static_cast<LocalValueId>(k));
    }
  }
  b.set_outputs({local[loss]});
  cut.graph = b.finish();
  return cut;
}

/// This thread's gradient programs: one graph per structure (the loss's key and the wrt mask), so
/// that the transforms' derived programs are found again for an equal step.
struct BackwardCache {
  struct Entry {
    TensorValueKey loss;
    std::vector<bool> wrt;
    GraphPtr graph;
  };
  static constexpr std::size_t kCapacity = 512;
  std::unique_ptr<tidu::Transforms<StdTensorOp>> ad = fresh();
  std::unordered_map<std::size_t, std::vector<Entry>> entries;
  std::size_t size = 0;

  static std::unique_ptr<tidu::Transforms<StdTensorOp>> fresh() {
    return std::make_unique<tidu::Transforms<StdTensorOp>>(default_compile_cache());
  }
  /// The cached graph equal to `cut`'s, or `cut`'s own (then cached).
  GraphPtr find(const Cut& cut) {
    const TensorValueKey& loss = cut.graph->key(cut.graph->outputs()[0]);
    auto& bucket = entries[loss.hash()];
    for (const Entry& e : bucket) {
      if (e.loss == loss && e.wrt == cut.wrt) return e.graph;
    }
    if (size >= kCapacity) {  // structures keep changing: start over rather than grow
      entries.clear();
      ad = fresh();
      size = 0;
    }
    ad->set_wrt(cut.graph, cut.wrt);
    entries[loss.hash()].push_back({loss, cut.wrt, cut.graph});
    ++size;
    return cut.graph;
  }
};

/// grad += g, as an eager value (with history when g has one) or a plain leaf.
void accumulate(detail::EagerNode& leaf, const EagerTensor& g) {
  if (!leaf.grad.defined()) {
    leaf.grad = g;
    return;
  }
  if (g.is_leaf() && leaf.grad.is_leaf()) {
    const Tensor& a = leaf.grad.value();
    const StdTensorOp add = ops::add(a.type(), g.value().type());
    const Tensor* in[] = {&a, &g.value()};
    Tensor sum[1];
    add.run_kernel(in, sum);
    leaf.grad = EagerTensor(std::move(sum[0]));
    return;
  }
  leaf.grad = add(static_cast<Traced>(leaf.grad), static_cast<Traced>(g));
}

/// The trace ids of `graph`'s computed values, in its value order (the extra inputs of
/// vjp_program_at_values). `graph` is the cached graph equal to the cut's: when it is another
/// graph, its values are found in the trace by key, so that a structure recorded in another order
/// still binds right.
std::vector<LocalValueId> computed_value_ids(const Cut& cut, const GraphPtr& graph) {
  std::vector<LocalValueId> ids;
  if (graph == cut.graph) {
    for (LocalValueId v = 0; v < graph->values().size(); ++v) {
      if (graph->values()[v].producer) ids.push_back(cut.trace_of[v]);
    }
    return ids;
  }
  std::unordered_map<TensorValueKey, LocalValueId> by_key;
  for (LocalValueId v = 0; v < cut.graph->values().size(); ++v) {
    if (cut.graph->values()[v].producer) by_key.emplace(cut.graph->key(v), cut.trace_of[v]);
  }
  for (LocalValueId v = 0; v < graph->values().size(); ++v) {
    if (graph->values()[v].producer) ids.push_back(by_key.at(graph->key(v)));
  }
  return ids;
}

/// The gradient program's operations run eagerly into `trace`, reading the primal values the
/// trace holds: the gradients are eager values with history (create_graph).
std::vector<std::optional<Traced>> replay_gradients(const std::shared_ptr<TraceState>& trace, const Cut& cut,
                                                    const GraphPtr& graph, tidu::Transforms<StdTensorOp>& ad,
                                                    const Tensor& cotangent) {
  const auto [program, layout] = ad.vjp_program_at_values(graph);
  const std::vector<LocalValueId> known = computed_value_ids(cut, graph);
  std::vector<Traced> args;
  for (LocalValueId v : cut.inputs) args.emplace_back(trace, v);
  if (program->input_slots().size() != cut.inputs.size() + known.size()) {
    args.push_back(constant(Traced(trace, cut.inputs[0]), cotangent));  // the seed
  }
  for (LocalValueId v : known) args.emplace_back(trace, v);
  const auto slots = computegraph::replay_values(
      *program, std::span<const Traced>(args),
      [&trace](const StdTensorOp& op, const computegraph::OperationRole&, std::span<const Traced> in) {
        if (!in.empty()) return apply_outputs(op, in);
        // Constants and other ops without operands: run at once into the eager trace.
        const auto first = detail::eager_record(*trace, op, {});
        std::vector<Traced> out;
        for (std::uint32_t k = 0; k < op.output_count(); ++k) out.emplace_back(trace, first + k);
        return out;
      });
  std::vector<std::optional<Traced>> grads(cut.inputs.size());
  for (std::size_t k = 0; k < cut.inputs.size(); ++k) {
    if (layout[k] >= 0) grads[k] = slots[program->output_slots()[static_cast<std::size_t>(layout[k])]];
  }
  return grads;
}

/// The gradients of the cut's inputs (zeros where none reaches), by the gradient program that
/// reads the primal values the trace already holds instead of computing them again
/// (vjp_program_at_values).
std::vector<Tensor> run_gradient_program(const std::shared_ptr<TraceState>& trace, const Cut& cut, const GraphPtr& graph,
                                         tidu::Transforms<StdTensorOp>& ad, std::vector<Tensor> args,
                                         const Tensor& cotangent) {
  const detail::EagerStore& st = *trace->eager;
  const auto [program, layout] = ad.vjp_program_at_values(graph);
  const std::vector<LocalValueId> known = computed_value_ids(cut, graph);
  const std::size_t seeds = program->input_slots().size() - cut.inputs.size() - known.size();
  if (seeds != 0) args.push_back(cotangent);
  for (LocalValueId v : known) args.push_back(st.values[v]);
  std::vector<Tensor> out = computegraph::run_compiled(*program, std::span<const Tensor>(args));
  std::vector<Tensor> grads;
  for (std::size_t k = 0; k < cut.inputs.size(); ++k) {
    grads.push_back(layout[k] >= 0 ? std::move(out[static_cast<std::size_t>(layout[k])])
                                   : Tensor::zeros(args[k].shape(), args[k].dtype()));
  }
  return grads;
}

void run_backward(const std::shared_ptr<TraceState>& trace, LocalValueId loss, const std::optional<Tensor>& cotangent,
                  BackwardOptions options) {
  detail::EagerStore& st = *trace->eager;
  if (st.owner != std::this_thread::get_id()) {
    throw ValueError("backward: the tensor was computed on another thread; call backward() on the thread that "
                     "computed it");
  }
  if (st.retired) {
    throw ValueError("backward: the operations behind this tensor were freed by an earlier backward(); pass "
                     "BackwardOptions{.retain_graph = true} to that call to run backward through them again");
  }
  const Tensor& y = st.values[loss];
  if (!st.needs_grad[loss]) {
    throw ValueError("backward: the tensor " + y.type().to_string() +
                     " does not require grad (no leaf with requires_grad reaches it, or it was computed under "
                     "NoGrad)");
  }
  Tensor ct;
  if (cotangent) {
    if (cotangent->type() != y.type()) {
      throw ValueError("backward: cotangent " + cotangent->type().to_string() + " for a tensor " +
                       y.type().to_string() + "; expected one of the tensor's type");
    }
    ct = *cotangent;
  } else {
    if (!y.shape().empty() || is_complex(y.dtype())) {
      throw ValueError("backward: the tensor " + y.type().to_string() +
                       " is not a real scalar; pass a cotangent of its type");
    }
    ct = Tensor::ones({}, y.dtype());
  }
  thread_local BackwardCache cache;
  const Cut cut = cut_graph(*trace, loss);
  const GraphPtr graph = cache.find(cut);
  std::vector<Tensor> args;
  for (LocalValueId v : cut.inputs) args.push_back(st.values[v]);
  std::vector<std::pair<std::shared_ptr<detail::EagerNode>, EagerTensor>> updates;
  if (options.create_graph) {
    const auto grads = replay_gradients(trace, cut, graph, *cache.ad, ct);
    for (std::size_t k = 0; k < cut.inputs.size(); ++k) {
      auto leaf = st.leaf[cut.inputs[k]].lock();
      if (cut.wrt[k] && leaf && grads[k]) updates.emplace_back(std::move(leaf), EagerTensor(*grads[k]));
    }
  } else {
    std::vector<Tensor> grads = run_gradient_program(trace, cut, graph, *cache.ad, std::move(args), ct);
    for (std::size_t k = 0; k < cut.inputs.size(); ++k) {
      auto leaf = st.leaf[cut.inputs[k]].lock();
      if (cut.wrt[k] && leaf) updates.emplace_back(std::move(leaf), EagerTensor(std::move(grads[k])));
    }
    if (!options.retain_graph) st.retired = true;
  }
  for (auto& [leaf, g] : updates) accumulate(*leaf, g);
}
}  // namespace

void EagerTensor::backward(const std::optional<Tensor>& cotangent, BackwardOptions options) const {
  if (!node_) throw ValueError("backward: the tensor is undefined");
  if (node_->leaf) {
    throw ValueError("backward: the tensor " + node_->value.type().to_string() +
                     " does not require grad (a leaf: made from a value, detached, or computed from no tensor "
                     "that requires grad)");
  }
  run_backward(node_->trace, node_->id, cotangent, options);
}

void backward(const Traced& t, const std::optional<Tensor>& cotangent, BackwardOptions options) {
  if (!t.trace()->eager) {
    throw ValueError("backward: " + t.type().to_string() + " is a value of a traced function; use tf::grad or "
                     "tf::vjp for those");
  }
  run_backward(t.trace(), t.id(), cotangent, options);
}

}  // namespace tenferro
