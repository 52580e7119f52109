#pragma once
// GraphBuilder: the only way to make a Graph. Validates arity and local references as operations
// are added, computes each value's global key, and deduplicates structurally equal operations
// within the graph (cross-graph deduplication is materialize_merge's job).
//
// A builder is used by one thread at a time; builders on different threads may share keys.
#include <sstream>
#include <string>
#include <utility>

#include "computegraph/detail/builder_tickets.hpp"
#include "computegraph/error.hpp"
#include "computegraph/graph.hpp"

namespace computegraph {

template <class Op>
class GraphBuilder {
 public:
  using InputKey = typename Op::InputKey;

  /// `parents`: graphs whose values the new graph references through External keys.
  explicit GraphBuilder(std::vector<GraphPtr<Op>> parents = {}) {
    graph_ = std::make_shared<Graph<Op>>();
    graph_->parents_ = std::move(parents);
    ticket_ = detail::BuilderTickets::acquire();
  }
  GraphBuilder(GraphBuilder&& other) noexcept
      : graph_(std::move(other.graph_)),
        ticket_(std::exchange(other.ticket_, detail::BuilderTickets::kNone)),
        hints_exact_(other.hints_exact_) {}
  GraphBuilder& operator=(GraphBuilder&& other) noexcept {
    std::swap(graph_, other.graph_);
    std::swap(ticket_, other.ticket_);
    std::swap(hints_exact_, other.hints_exact_);
    return *this;
  }
  GraphBuilder(const GraphBuilder&) = delete;
  GraphBuilder& operator=(const GraphBuilder&) = delete;
  ~GraphBuilder() { detail::BuilderTickets::release(ticket_); }

  /// Declares an input. Declaring the same key twice returns the same value.
  LocalValueId add_input(InputKey key) {
    check_live("add_input");
    auto value_key = ValueKey<Op>::input(std::move(key));
    if (auto existing = graph_->find(value_key)) {
      if (!graph_->values_[*existing].producer) return *existing;
      std::ostringstream msg;
      msg << "GraphBuilder::add_input: input " << value_key.input_key()
          << " is already defined by an operation in this graph";
      throw GraphError(msg.str());
    }
    LocalValueId id = push_value(std::move(value_key), std::nullopt);
    graph_->inputs_.push_back(id);
    return id;
  }

  /// Adds `op` applied to `inputs` and returns its output values. Throws GraphError on an arity
  /// mismatch or an out-of-range local id. An operation equal (by key) to one already in this graph
  /// returns the existing outputs.
  std::vector<LocalValueId> add_operation(Op op, std::vector<ValueRef<Op>> inputs,
                                          OperationRole role = OperationRole::primary()) {
    // The index first: graph_ is null once finished, and insert_operation checks that.
    const LocalOperationId id = insert_operation(std::move(op), std::move(inputs), std::move(role));
    return graph_->operations_[id].outputs.to_vector();
  }

  /// Convenience for single-output operations.
  LocalValueId add(Op op, std::vector<ValueRef<Op>> inputs,
                   OperationRole role = OperationRole::primary()) {
    if (op.output_count() != 1) {
      throw GraphError("GraphBuilder::add: operation " + std::string(op.name()) + " has " +
                       std::to_string(op.output_count()) +
                       " outputs; use add_operation for operations without exactly one output");
    }
    const LocalOperationId id = insert_operation(std::move(op), std::move(inputs), std::move(role));
    return graph_->operations_[id].outputs[0];
  }

  void add_output(LocalValueId id) {
    check_local(id, "add_output");
    graph_->outputs_.push_back(id);
  }
  void set_outputs(std::vector<LocalValueId> ids) {
    for (auto id : ids) check_local(id, "set_outputs");
    graph_->outputs_ = std::move(ids);
  }

  const ValueKey<Op>& key(LocalValueId id) const {
    check_local(id, "key");
    return graph_->values_[id].key;
  }
  const Graph<Op>& graph() const {
    check_live("graph");
    return *graph_;
  }
  std::size_t value_count() const {
    check_live("value_count");
    return graph_->values_.size();
  }

  /// Finishes the graph. Any later use of the builder throws GraphError.
  GraphPtr<Op> finish() {
    check_live("finish");
    graph_->index_values();
    detail::BuilderTickets::release(std::exchange(ticket_, detail::BuilderTickets::kNone));
    return std::move(graph_);
  }

 private:
  /// add_operation's work: validates, deduplicates and appends the operation; returns its index
  /// (the existing one for a duplicate). Allocates nothing beyond what the graph keeps.
  LocalOperationId insert_operation(Op op, std::vector<ValueRef<Op>> inputs, OperationRole role) {
    check_live("add_operation");
    check_operation(op, inputs, role);
    auto op_key = OperationKey<Op>::make(
        op, inputs.size(),
        [&](std::size_t i) -> const ValueKey<Op>& { return graph_->key_of(inputs[i]); }, role);
    // The node is only written through its atomic membership hint.
    auto* node =
        const_cast<detail::KeyNode*>(static_cast<const detail::KeyNode*>(op_key.identity()));
    const std::size_t n_out = op.output_count();
    if (n_out > 0) {
      // All outputs are added together: slot 0 present means the operation is already here.
      if (auto existing = find_operation(node)) return graph_->values_[*existing].producer->first;
    }
    auto op_id = static_cast<LocalOperationId>(graph_->operations_.size());
    std::vector<LocalValueId> outputs;
    outputs.reserve(n_out);
    for (std::size_t slot = 0; slot < n_out; ++slot) {
      auto s = static_cast<std::uint32_t>(slot);
      outputs.push_back(push_value(op_key.output(s), std::pair{op_id, s}));
    }
    if (n_out > 0) claim(node, outputs[0]);
    for (const auto& ref : inputs) {
      graph_->operand_locals_.push_back(ref.is_local() ? ref.local_id()
                                                       : Graph<Op>::kExternalOperand);
    }
    graph_->operand_begin_.push_back(static_cast<std::uint32_t>(graph_->operand_locals_.size()));
    graph_->operations_.push_back(
        {std::move(op), std::move(inputs), std::move(outputs), std::move(role)});
    return op_id;
  }

  LocalValueId push_value(ValueKey<Op> key,
                          std::optional<std::pair<LocalOperationId, std::uint32_t>> producer) {
    auto id = static_cast<LocalValueId>(graph_->values_.size());
    graph_->values_.push_back({std::move(key), producer});
    return id;
  }

  /// The local id of output 0 of the operation `node`, if this graph has it. Answered from the
  /// node's membership hint while hints_exact_ (see builder_tickets.hpp), else from the index.
  std::optional<LocalValueId> find_operation(detail::KeyNode* node) const {
    if (ticket_ != detail::BuilderTickets::kNone) {
      if (node->member_ticket.load(std::memory_order_acquire) == ticket_) {
        const LocalValueId id = node->member_local.load(std::memory_order_relaxed);
        const auto& values = graph_->values_;
        if (id < values.size() && values[id].key.node_identity() == node &&
            values[id].key.output_slot() == 0) {
          return id;
        }
      } else if (hints_exact_) {
        // Every operation this builder added carries its ticket: no other builder overwrites
        // the hint of an active one.
        return std::nullopt;
      }
    }
    return graph_->find_identity(node, 0);
  }

  /// Records in `node` that output 0 of its operation is local value `id` here, unless another
  /// active builder holds the hint: then this builder's hints are no longer complete.
  void claim(detail::KeyNode* node, LocalValueId id) {
    if (ticket_ == detail::BuilderTickets::kNone) return;
    std::uint64_t seen = node->member_ticket.load(std::memory_order_acquire);
    while (true) {
      if (seen != detail::BuilderTickets::kNone && seen != ticket_ &&
          detail::BuilderTickets::active(seen)) {
        hints_exact_ = false;
        return;
      }
      if (node->member_ticket.compare_exchange_weak(seen, ticket_, std::memory_order_acq_rel,
                                                    std::memory_order_acquire)) {
        node->member_local.store(id, std::memory_order_relaxed);
        return;
      }
    }
  }

  void check_live(const char* what) const {
    if (!graph_) throw GraphError(std::string("GraphBuilder::") + what + ": builder already finished");
  }

  void check_local(LocalValueId id, const char* what) const {
    check_live(what);
    if (id >= graph_->values_.size()) {
      throw GraphError(std::string("GraphBuilder::") + what + ": local value %" +
                       std::to_string(id) + " does not exist (graph has " +
                       std::to_string(graph_->values_.size()) + " values)");
    }
  }

  /// The operation's name is built only for a message: name() may allocate, and this check runs
  /// once per added operation.
  void check_operation(const Op& op, const std::vector<ValueRef<Op>>& inputs,
                       const OperationRole& role) const {
    if (inputs.size() != op.input_count()) {
      throw GraphError("GraphBuilder::add_operation: " + std::string(op.name()) + " expects " +
                       std::to_string(op.input_count()) + " inputs, got " +
                       std::to_string(inputs.size()));
    }
    if (role.is_linearized() && role.mask_size() != inputs.size()) {
      throw GraphError("GraphBuilder::add_operation: " + std::string(op.name()) + " has " +
                       std::to_string(inputs.size()) + " inputs but its active_mask has " +
                       std::to_string(role.mask_size()) + " entries");
    }
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      if (inputs[i].is_local() && inputs[i].local_id() >= graph_->values_.size()) {
        throw GraphError("GraphBuilder::add_operation: operand " + std::to_string(i) + " of " +
                         std::string(op.name()) + " is local value %" +
                         std::to_string(inputs[i].local_id()) +
                         ", which does not exist (graph has " +
                         std::to_string(graph_->values_.size()) + " values)");
      }
    }
  }

  std::shared_ptr<Graph<Op>> graph_;
  /// This builder's membership ticket (kNone: none was free; membership then uses the index).
  std::uint64_t ticket_ = detail::BuilderTickets::kNone;
  /// Whether every operation added so far carries this builder's hint.
  bool hints_exact_ = true;
};

}  // namespace computegraph
