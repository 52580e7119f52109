#include "computegraph/detail/key_node.hpp"

namespace computegraph::detail {

namespace {
// Trivially destructible thread-locals: safe to use from static destructors that drop keys.
thread_local KeyNode* pending_head = nullptr;
thread_local bool draining = false;
}  // namespace

void release(KeyNode* node) noexcept {
  if (node->refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  node->next_pending = pending_head;
  pending_head = node;
  if (draining) return;  // an outer call on this thread is already disposing
  draining = true;
  while (pending_head != nullptr) {
    KeyNode* dead = pending_head;
    pending_head = dead->next_pending;
    dead->dispose(dead);  // may push the dead node's children onto the list
  }
  draining = false;
}

}  // namespace computegraph::detail
