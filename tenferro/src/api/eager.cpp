// Eager mode (tenferro/eager.hpp): the per-thread eager trace, running ops as they are recorded,
// eager tensors and their leaf bindings. backward() is in eager_backward.cpp.
#include "tenferro/eager.hpp"
#include "tenferro/ops/record.hpp"

#include <array>
#include <mutex>

#include "eager_node.hpp"
#include "eager_store.hpp"
#include "exec/fused_kernel.hpp"

namespace tenferro {

namespace {
thread_local bool grad_mode = true;

std::string thread_error(const std::string& op) {
  return op + ": an operand is an eager tensor computed on another thread; a tensor with history belongs to the "
              "thread that computed it (pass its detach() or value() instead)";
}
}  // namespace

bool grad_enabled() { return grad_mode; }
NoGrad::NoGrad() : previous_(grad_mode) { grad_mode = false; }
NoGrad::~NoGrad() { grad_mode = previous_; }

namespace detail {

std::shared_ptr<TraceState> current_eager_trace() {
  thread_local std::shared_ptr<TraceState> trace;
  // use_count 1: only this variable refers to the trace, so no tensor can reach its history (leaves
  // refer to it weakly). It is still reused, so that a loop of operations without grad does not
  // build a trace per operation, until it holds many values or much memory: then it is dropped.
  constexpr std::size_t kMaxValues = std::size_t{1} << 10, kMaxBytes = std::size_t{64} << 20;
  const bool unreferenced = trace && trace.use_count() == 1;
  if (!trace || trace->eager->retired ||
      (unreferenced && (trace->eager->values.size() > kMaxValues || trace->eager->bytes > kMaxBytes))) {
    trace = std::make_shared<TraceState>();
    trace->eager = std::make_shared<EagerStore>();
  }
  return trace;
}

computegraph::LocalValueId eager_record(TraceState& trace, StdTensorOp op,
                                        std::span<const computegraph::LocalValueId> operands) {
  EagerStore& st = *trace.eager;
  // Operand pointers and results on the stack for the common counts: this runs once per eager op.
  constexpr std::size_t kInline = 4;
  std::array<const Tensor*, kInline> in_inline{};
  std::vector<const Tensor*> in_heap;
  const std::size_t arity = operands.size();
  if (arity > kInline) in_heap.resize(arity);
  const std::span<const Tensor*> in(arity > kInline ? in_heap.data() : in_inline.data(), arity);
  bool needs_grad = false;
  for (std::size_t i = 0; i < arity; ++i) {
    in[i] = &st.values[operands[i]];
    needs_grad = needs_grad || st.needs_grad[operands[i]] != 0;
  }
  needs_grad = needs_grad && grad_mode && !op.def->never_differentiable() && op.kind != OpKind::StopGradient;
  const std::size_t count = op.output_count();
  std::array<Tensor, 1> one_result;
  std::vector<Tensor> many_results;
  if (count > 1) many_results.resize(count);
  const std::span<Tensor> results = count > 1 ? std::span<Tensor>(many_results) : std::span<Tensor>(one_result);
  // Elementwise ops and full sums run the executor's loops (vectorized math, no zero-filling), so
  // that they give the bits a compiled program gives; other ops run their kernels.
  if (!exec::run_op_fused(op, in, results)) op.run_kernel(in, results);
  const auto first = static_cast<computegraph::LocalValueId>(st.values.size());
  std::int32_t producer = -1;
  if (needs_grad) {
    producer = static_cast<std::int32_t>(st.ops.size());
    st.ops.push_back({std::move(op), {operands.begin(), operands.end()}, first, static_cast<std::uint32_t>(count)});
  }
  for (Tensor& r : results) {
    const bool inexact = is_inexact(r.dtype());
    st.add(std::move(r), needs_grad && inexact, producer);
  }
  return first;
}

computegraph::LocalValueId eager_input(TraceState& trace, Tensor value, bool needs_grad, bool freed) {
  EagerStore& st = *trace.eager;
  const auto id = st.add(std::move(value), needs_grad, -1);
  st.freed[id] = freed ? 1 : 0;
  return id;
}

bool eager_needs_unify(std::span<const Traced> inputs) {
  const std::shared_ptr<TraceState>& first = inputs[0].trace();
  if (first->eager->retired) return true;
  for (const Traced& t : inputs) {
    if (t.trace() != first) return true;
  }
  return false;
}

std::vector<Traced> eager_unify(const std::string& op, std::span<const Traced> inputs) {
  const std::shared_ptr<TraceState> current = current_eager_trace();
  std::vector<Traced> out;
  out.reserve(inputs.size());
  for (const Traced& t : inputs) {
    const std::shared_ptr<TraceState>& trace = t.trace();
    if (!trace->eager) {
      throw ValueError(op + ": an operand is a value of a traced function and another an eager tensor; "
                            "expected operands of one trace");
    }
    if (trace->eager->owner != std::this_thread::get_id()) throw ValueError(thread_error(op));
    if (trace == current) {
      out.push_back(t);
      continue;
    }
    // A value of a trace that backward() retired: a leaf binds again (gradients still reach it);
    // any other value becomes an input that remembers that its history is gone.
    const EagerStore& st = *trace->eager;
    if (auto leaf = st.leaf[t.id()].lock()) {
      out.push_back(static_cast<Traced>(EagerNode::wrap(std::move(leaf))));
      continue;
    }
    const bool needs_grad = st.needs_grad[t.id()] != 0;
    out.emplace_back(current, eager_input(*current, st.values[t.id()], needs_grad, needs_grad));
  }
  return out;
}

}  // namespace detail

using detail::EagerNode;

EagerTensor::EagerTensor(Tensor value, bool requires_grad) : node_(std::make_shared<EagerNode>()) {
  if (requires_grad && !is_inexact(value.dtype())) {
    throw DTypeError("EagerTensor: requires_grad for a tensor of dtype " + std::string(dtype_name(value.dtype())) +
                     "; expected a float or complex dtype");
  }
  node_->value = std::move(value);
  node_->requires_grad = requires_grad;
}

EagerTensor::EagerTensor(const Traced& t) {
  const auto& st = t.trace()->eager;
  if (!st) {
    throw ValueError("EagerTensor: " + t.type().to_string() +
                     " is a value of a traced function, which has no value until its program runs; eager "
                     "tensors come from eager operations");
  }
  if (auto leaf = st->leaf[t.id()].lock()) {  // a leaf's own binding: the leaf itself
    node_ = std::move(leaf);
    return;
  }
  node_ = std::make_shared<EagerNode>();
  node_->value = st->values[t.id()];
  if (st->needs_grad[t.id()]) {  // a result with history: keep the trace
    node_->leaf = false;
    node_->requires_grad = true;
    node_->trace = t.trace();
    node_->id = t.id();
  } else {  // no history worth keeping: a leaf, bound where it was computed
    node_->bound = t.trace();
    node_->bound_id = t.id();
  }
}

EagerTensor::operator Traced() const {
  if (!node_) throw ValueError("EagerTensor: the tensor is undefined (a grad() that no backward() reached)");
  if (!node_->leaf) {
    if (node_->trace->eager->owner != std::this_thread::get_id()) throw ValueError(thread_error("EagerTensor"));
    return Traced(node_->trace, node_->id);  // a retired trace's value moves when an op uses it
  }
  std::lock_guard lock(node_->mutex);
  std::shared_ptr<TraceState> current = detail::current_eager_trace();
  if (node_->bound.lock() == current) return Traced(current, node_->bound_id);
  const bool needs_grad = node_->requires_grad && grad_mode;
  const auto id = detail::eager_input(*current, node_->value, needs_grad, false);
  if (needs_grad) current->eager->leaf[id] = node_;
  // Bindings made under NoGrad need no grad: they are not reused outside it.
  if (grad_mode) {
    node_->bound = current;
    node_->bound_id = id;
  }
  return Traced(current, id);
}

const Tensor& EagerTensor::value() const {
  if (!node_) throw ValueError("EagerTensor: the tensor is undefined (a grad() that no backward() reached)");
  return node_->value;
}
bool EagerTensor::is_leaf() const { return !node_ || node_->leaf; }
bool EagerTensor::requires_grad() const { return node_ && node_->requires_grad; }

void EagerTensor::set_requires_grad(bool requires_grad) {
  if (!node_ || !node_->leaf) {
    throw ValueError("EagerTensor::set_requires_grad: only a leaf's requirement can be set (a result's follows from "
                     "its operands); detach() it first");
  }
  if (requires_grad && !is_inexact(node_->value.dtype())) {
    throw DTypeError("EagerTensor::set_requires_grad: dtype " + std::string(dtype_name(node_->value.dtype())) +
                     "; expected a float or complex dtype");
  }
  std::lock_guard lock(node_->mutex);
  node_->requires_grad = requires_grad;
  node_->bound.reset();  // bind again, with the new requirement
}

EagerTensor EagerTensor::grad() const { return node_ ? node_->grad : EagerTensor(); }
void EagerTensor::zero_grad() {
  if (node_) node_->grad = EagerTensor();
}
EagerTensor EagerTensor::detach() const { return EagerTensor(value(), false); }

const Tensor& eager_value(const Traced& t) {
  if (!t.trace()->eager) {
    throw ValueError("eager_value: " + t.type().to_string() + " is a value of a traced function; expected an eager value");
  }
  return t.trace()->eager->values[t.id()];
}

}  // namespace tenferro
