#pragma once
// Internal: what an EagerTensor refers to (tenferro/eager.hpp).
#include <memory>
#include <mutex>

#include "tenferro/eager.hpp"
#include "tenferro/ops/record.hpp"

namespace tenferro::detail {

struct EagerNode {
  Tensor value;
  /// A leaf was made from a value (or detached); any other tensor is a result with history.
  bool leaf = true;
  bool requires_grad = false;
  /// A result: its value in the trace that recorded it (a strong reference keeps the history).
  std::shared_ptr<TraceState> trace;
  computegraph::LocalValueId id = 0;
  /// A leaf: the input it was last bound to, in a trace it does not keep alive.
  std::mutex mutex;
  std::weak_ptr<TraceState> bound;
  computegraph::LocalValueId bound_id = 0;
  /// What backward() accumulated (leaves that require grad).
  EagerTensor grad;

  static EagerTensor wrap(std::shared_ptr<EagerNode> node) { return EagerTensor(std::move(node)); }
};

}  // namespace tenferro::detail
