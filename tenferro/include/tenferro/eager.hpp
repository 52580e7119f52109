#pragma once
// Eager mode: PyTorch-style tensors whose operations run at once and record what they did, with
// backward() filling .grad.
//
//   tf::EagerTensor w(tf::Tensor::ones({3, 2}), /*requires_grad=*/true);
//   tf::EagerTensor x(data);
//   tf::EagerTensor loss = tf::sum(tf::tanh(tf::matmul(x, w)));   // runs now
//   loss.backward();                                                // w.grad() holds d loss / d w
//
// Every function of the traced API takes eager tensors (they convert to Traced values of the
// calling thread's eager trace) and runs its primitives' kernels immediately, so all ops and
// composites, their broadcasting and their errors are the same as when tracing. A result is a
// Traced whose value is already computed; keep it as an EagerTensor to call backward() or read
// value(). Mixed freely with traced code: a function written for tf::grad runs eagerly when it is
// called on eager tensors, and gradients flow through it.
//
// How it works. Each thread records into its own eager trace: a flat tape of values (the tensors)
// and of the operations whose results need grad, appended in O(1) with no graph or key interning;
// an operation whose results need no grad leaves only its results. Elementwise operations run the
// executor's vectorized loops, so eager values equal a compiled program's. backward() builds a
// graph from the part of the tape between the loss and the leaves that require grad,
// differentiates it with the same transforms as tf::grad, and runs the compiled gradient program
// on the primal values the tape already holds (it computes none of them again); the gradient
// program of a structure seen before (a training loop's step) comes from a cache, so no operation
// is ever compiled on its own and a repeated step costs a cache look-up. With create_graph the
// gradient program's operations run eagerly into the trace instead, so the gradients are eager
// tensors that can be differentiated again. A trace is dropped when backward() runs without
// retain_graph (a later backward() through its values throws), or when no tensor refers to it
// (leaves do not keep it alive) and it has grown past 1024 values or 64 MiB of values; until then
// it keeps the values of dead tensors.
//
// Thread safety: independent eager computations on different threads never share state. Using a
// non-leaf tensor of one thread on another throws ValueError; a leaf (a parameter) may be read by
// several threads, but backward() on two threads must not accumulate into the same leaf at once.
#include <memory>
#include <optional>

#include "tenferro/traced.hpp"

namespace tenferro {

namespace detail {
struct EagerNode;
}

struct BackwardOptions {
  /// Keep the recorded operations, so that backward() can run through them again.
  bool retain_graph = false;
  /// Record the gradient computation itself: the gradients are differentiable eager tensors
  /// (implies retain_graph).
  bool create_graph = false;
};

class EagerTensor {
 public:
  /// An undefined tensor (grad() of a leaf that received none).
  EagerTensor() = default;
  /// A leaf holding `value`; with requires_grad, backward() accumulates into grad(). Float or
  /// complex dtypes only when requires_grad (DTypeError otherwise).
  explicit EagerTensor(Tensor value, bool requires_grad = false);
  /// The result of eager operations: a Traced of an eager trace (ValueError for a Traced of a
  /// traced function, which has no value yet). Implicit, so results of tf:: functions convert.
  EagerTensor(const Traced& t);  // NOLINT(google-explicit-constructor)
  /// This tensor in the calling thread's eager trace. Implicit, so tf:: functions take eager tensors.
  operator Traced() const;  // NOLINT(google-explicit-constructor)

  bool defined() const { return node_ != nullptr; }
  const Tensor& value() const;
  const TensorType& type() const { return value().type(); }
  const Shape& shape() const { return value().shape(); }
  DType dtype() const { return value().dtype(); }
  /// True for tensors made from values (and detached ones); false for results of recorded ops.
  bool is_leaf() const;
  bool requires_grad() const;
  /// Leaves only (ValueError for a result, whose requirement follows from its operands).
  void set_requires_grad(bool requires_grad);
  /// The gradient accumulated by backward() (undefined before the first one reaches it).
  EagerTensor grad() const;
  void zero_grad();
  /// The same value as a new leaf without history.
  EagerTensor detach() const;

  /// Accumulates d self / d leaf into every leaf that requires grad and that this tensor depends
  /// on. A real scalar needs no cotangent; any other tensor needs one of its type. Throws
  /// ValueError for a tensor that does not require grad, for a missing or mistyped cotangent, and
  /// for a second backward() through operations that an earlier one freed (pass retain_graph).
  void backward(const std::optional<Tensor>& cotangent = std::nullopt, BackwardOptions options = {}) const;

 private:
  explicit EagerTensor(std::shared_ptr<detail::EagerNode> node) : node_(std::move(node)) {}
  std::shared_ptr<detail::EagerNode> node_;
  friend struct detail::EagerNode;
};

/// backward() of a result held as a Traced of an eager trace.
void backward(const Traced& t, const std::optional<Tensor>& cotangent = std::nullopt, BackwardOptions options = {});

/// The tensor of a Traced of an eager trace (ValueError for a value of a traced function).
const Tensor& eager_value(const Traced& t);

/// Within its scope, this thread's eager operations record no history: their results do not
/// require grad (torch.no_grad). Scopes nest.
class NoGrad {
 public:
  NoGrad();
  ~NoGrad();
  NoGrad(const NoGrad&) = delete;
  NoGrad& operator=(const NoGrad&) = delete;

 private:
  bool previous_;
};

/// Whether this thread's eager operations record history (false inside a NoGrad scope).
bool grad_enabled();

}  // namespace tenferro
