#pragma once
// verify: structural checks run after every stage in tests and debug builds (docs/design.md,
// "Printing and verification").
// Each throws GraphError naming the operation and ids involved; none modifies its argument.
//
// verify(Graph)             arity (inputs, outputs, active_mask), single assignment, local references
//                           defined before use, keys consistent with their operations, outputs exist,
//                           External references resolvable through the graph's parents.
// verify(MaterializedGraph) arity, topological order, single assignment, inputs are input keys.
// verify(CompiledProgram)   SSA (every slot written once), operands written before they are read.
// The regions an operation carries (region.hpp) are verified too, to any depth: each must be a
// closed graph (no parents, no External operands) that passes verify(Graph).
#include <string>
#include <vector>

#include "computegraph/compiled_program.hpp"
#include "computegraph/error.hpp"
#include "computegraph/graph.hpp"
#include "computegraph/key_printer.hpp"
#include "computegraph/materialized_graph.hpp"
#include "computegraph/region.hpp"
#include "computegraph/resolve.hpp"

namespace computegraph {

namespace detail {
[[noreturn]] inline void verify_fail(const std::string& what) {
  throw GraphError("verify: " + what);
}
template <GraphOperation Op>
void verify_regions(const Op& op, const std::string& where);
inline std::string arity_message(const std::string& op, std::size_t index, const char* what,
                                 std::size_t expected, std::size_t got) {
  return "operation #" + std::to_string(index) + " (" + op + ") expects " +
         std::to_string(expected) + " " + what + ", has " + std::to_string(got);
}
}  // namespace detail

template <GraphOperation Op>
void verify(const Graph<Op>& graph) {
  const auto& values = graph.values();
  const auto& ops = graph.operations();
  std::vector<std::uint8_t> defined(values.size(), 0);
  for (LocalValueId id : graph.inputs()) {
    if (id >= values.size()) detail::verify_fail("input %" + std::to_string(id) + " does not exist");
    if (values[id].producer) detail::verify_fail("input %" + std::to_string(id) + " has a producer");
    if (!values[id].key.is_input()) {
      detail::verify_fail("input %" + std::to_string(id) + " has a derived key");
    }
    defined[id] = 1;
  }
  std::vector<GraphPtr<Op>> parents = graph.parents();
  ResolvedView<Op> parent_view{std::span<const GraphPtr<Op>>(parents)};
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const auto& op = ops[i];
    const std::string name = op.operation.name();
    if (op.inputs.size() != op.operation.input_count()) {
      detail::verify_fail(detail::arity_message(name, i, "inputs", op.operation.input_count(),
                                                op.inputs.size()));
    }
    if (op.outputs.size() != op.operation.output_count()) {
      detail::verify_fail(detail::arity_message(name, i, "outputs", op.operation.output_count(),
                                                op.outputs.size()));
    }
    if (op.role.is_linearized() && op.role.mask_size() != op.inputs.size()) {
      detail::verify_fail(detail::arity_message(name, i, "active_mask entries", op.inputs.size(),
                                                op.role.mask_size()));
    }
    detail::verify_regions(op.operation, "operation #" + std::to_string(i) + " (" + name + ")");
    std::vector<ValueKey<Op>> input_keys;
    for (const auto& ref : op.inputs) {
      if (ref.is_local()) {
        if (ref.local_id() >= values.size() || !defined[ref.local_id()]) {
          detail::verify_fail("operation #" + std::to_string(i) + " (" + name + ") reads %" +
                              std::to_string(ref.local_id()) + " before it is defined");
        }
      } else if (!graph.find(ref.external_key()) && !parent_view.contains(ref.external_key())) {
        detail::verify_fail("operation #" + std::to_string(i) + " (" + name +
                            ") references external " + key_to_string(ref.external_key()) +
                            ", which no parent graph defines");
      }
      input_keys.push_back(graph.key_of(ref));
    }
    auto op_key = OperationKey<Op>::make(op.operation, std::move(input_keys), op.role);
    for (std::uint32_t slot = 0; slot < op.outputs.size(); ++slot) {
      LocalValueId out = op.outputs[slot];
      if (out >= values.size()) detail::verify_fail("output %" + std::to_string(out) + " missing");
      if (defined[out]) {
        detail::verify_fail("%" + std::to_string(out) + " is assigned twice (operation #" +
                            std::to_string(i) + ", " + name + ")");
      }
      const auto& producer = values[out].producer;
      if (!producer || producer->first != i || producer->second != slot) {
        detail::verify_fail("%" + std::to_string(out) + " does not name operation #" +
                            std::to_string(i) + " slot " + std::to_string(slot) + " as producer");
      }
      if (!(values[out].key == op_key.output(slot))) {
        detail::verify_fail("%" + std::to_string(out) + " has key " +
                            key_to_string(values[out].key) + ", expected " +
                            key_to_string(op_key.output(slot)));
      }
      defined[out] = 1;
    }
  }
  for (LocalValueId id = 0; id < values.size(); ++id) {
    if (!defined[id]) detail::verify_fail("%" + std::to_string(id) + " is never defined");
  }
  for (LocalValueId id : graph.outputs()) {
    if (id >= values.size()) {
      detail::verify_fail("graph output %" + std::to_string(id) + " does not exist");
    }
  }
}

template <GraphOperation Op>
void verify(const MaterializedGraph<Op>& graph) {
  const auto& values = graph.values();
  std::vector<std::uint8_t> defined(values.size(), 0);
  for (auto v : graph.inputs()) {
    if (v >= values.size() || values[v].producer || !values[v].key.is_input()) {
      detail::verify_fail("materialized input %" + std::to_string(v) + " is not an input value");
    }
    defined[v] = 1;
  }
  const auto& ops = graph.operations();
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const auto& op = ops[i];
    const std::string name = op.operation.name();
    if (op.inputs.size() != op.operation.input_count() ||
        op.output_count != op.operation.output_count()) {
      detail::verify_fail("materialized operation #" + std::to_string(i) + " (" + name +
                          ") has the wrong arity");
    }
    detail::verify_regions(op.operation, "materialized operation #" + std::to_string(i) + " (" + name + ")");
    for (auto v : op.inputs) {
      if (v >= values.size() || !defined[v]) {
        detail::verify_fail("materialized operation #" + std::to_string(i) + " (" + name +
                            ") reads %" + std::to_string(v) + " before it is defined");
      }
    }
    for (std::uint32_t k = 0; k < op.output_count; ++k) {
      auto v = op.first_output + k;
      if (v >= values.size() || defined[v] || values[v].producer != i) {
        detail::verify_fail("materialized value %" + std::to_string(v) +
                            " is not a single assignment of operation #" + std::to_string(i));
      }
      defined[v] = 1;
    }
  }
  for (auto v : graph.outputs()) {
    if (v >= values.size() || !defined[v]) {
      detail::verify_fail("materialized output %" + std::to_string(v) + " is not defined");
    }
  }
}

template <GraphOperation Op>
void verify(const CompiledProgram<Op>& program) {
  std::vector<std::uint8_t> written(program.slot_count(), 0);
  auto write = [&](std::uint32_t s, const std::string& by) {
    if (s >= written.size() || written[s]) {
      detail::verify_fail("slot s" + std::to_string(s) + " written twice or out of range (" + by + ")");
    }
    written[s] = 1;
  };
  for (auto s : program.input_slots()) write(s, "input");
  for (std::size_t i = 0; i < program.instructions().size(); ++i) {
    const auto& ins = program.instructions()[i];
    const std::string where = "instruction #" + std::to_string(i) + " (" + ins.operation.name() + ")";
    for (auto s : program.operands(i)) {
      if (s >= written.size() || !written[s]) {
        detail::verify_fail(where + " reads s" + std::to_string(s) + " before it is written");
      }
    }
    for (std::uint32_t k = 0; k < ins.output_count; ++k) write(ins.first_output + k, where);
  }
  for (auto s : program.output_slots()) {
    if (s >= written.size() || !written[s]) {
      detail::verify_fail("program output s" + std::to_string(s) + " is never written");
    }
  }
}

namespace detail {
template <GraphOperation Op>
void verify_regions(const Op& op, const std::string& where) {
  const auto regions = regions_of(op);
  for (std::size_t r = 0; r < regions.size(); ++r) {
    const std::string what = where + ", region " + std::to_string(r);
    if (!regions[r]) verify_fail(what + " is null");
    try {
      Region<Op>(regions[r], what);  // closed
      verify(*regions[r]);
    } catch (const GraphError& e) {
      verify_fail(what + ": " + e.what());
    }
  }
}
}  // namespace detail

}  // namespace computegraph
