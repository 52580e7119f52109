#pragma once
// Deterministic SSA text for Graph, MaterializedGraph and CompiledProgram (docs/design.md,
// "Printing and verification").
// Values print as %N (slots as sN) in definition order; External references as $N, listed once with
// their key; linearized roles as "linearized[fixed, active]". No pointers, no hash order: equal
// structures print identically, which golden tests rely on.
#include <sstream>
#include <string>
#include <unordered_map>

#include "computegraph/compiled_program.hpp"
#include "computegraph/graph.hpp"
#include "computegraph/key_printer.hpp"
#include "computegraph/materialized_graph.hpp"
#include "computegraph/region.hpp"

namespace computegraph {

namespace detail {
template <class Ids, class Name>
void print_list(std::ostream& os, const Ids& ids, Name&& name) {
  bool first = true;
  for (const auto& id : ids) {
    if (!first) os << ", ";
    first = false;
    name(os, id);
  }
}
inline void print_role(std::ostream& os, const OperationRole& role) {
  if (role.is_linearized()) os << ' ' << role.to_string();
}
}  // namespace detail

namespace detail {
template <GraphOperation Op>
void print_graph(std::ostream& os, const Graph<Op>& graph, const std::string& indent, const char* header);

/// The regions an operation carries (region.hpp), each printed as a nested graph under it.
template <GraphOperation Op>
void print_regions(std::ostream& os, const Op& op, const std::string& indent) {
  const auto regions = regions_of(op);
  for (std::size_t r = 0; r < regions.size(); ++r) {
    const std::string header = "region " + std::to_string(r) + " {\n";
    print_graph(os, *regions[r], indent + "  ", header.c_str());
  }
}

template <GraphOperation Op>
void print_graph(std::ostream& os, const Graph<Op>& graph, const std::string& indent, const char* header) {
  os << indent << header;
  for (LocalValueId id : graph.inputs()) {
    os << indent << "  %" << id << " = input " << graph.key(id).input_key() << '\n';
  }
  // External references, numbered in order of first use.
  std::unordered_map<ValueKey<Op>, std::size_t> externals;
  for (const auto& op : graph.operations()) {
    for (const auto& ref : op.inputs) {
      if (ref.is_external() && externals.emplace(ref.external_key(), externals.size()).second) {
        os << indent << "  $" << externals.size() - 1 << " = external " << key_to_string(ref.external_key())
           << '\n';
      }
    }
  }
  auto name = [&](std::ostream& out, const ValueRef<Op>& ref) {
    if (ref.is_local()) {
      out << '%' << ref.local_id();
    } else {
      out << '$' << externals.at(ref.external_key());
    }
  };
  for (const auto& op : graph.operations()) {
    os << indent << "  ";
    print_list(os, op.outputs, [](std::ostream& out, LocalValueId v) { out << '%' << v; });
    os << " = " << op.operation.name() << '(';
    print_list(os, op.inputs, name);
    os << ')';
    print_role(os, op.role);
    os << '\n';
    print_regions(os, op.operation, indent + "  ");
  }
  os << indent << "  return ";
  print_list(os, graph.outputs(), [](std::ostream& out, LocalValueId v) { out << '%' << v; });
  os << '\n' << indent << "}\n";
}
}  // namespace detail

/// Operations that carry regions (region.hpp) are followed by their regions, indented.
template <GraphOperation Op>
std::string to_string(const Graph<Op>& graph) {
  std::ostringstream os;
  detail::print_graph(os, graph, "", "graph {\n");
  return os.str();
}

template <GraphOperation Op>
std::string to_string(const MaterializedGraph<Op>& graph) {
  std::ostringstream os;
  auto value = [](std::ostream& out, MaterializedValueId v) { out << '%' << v; };
  os << "materialized {\n";
  for (auto v : graph.inputs()) {
    os << "  %" << v << " = input " << graph.values()[v].key.input_key() << '\n';
  }
  for (const auto& op : graph.operations()) {
    os << "  ";
    for (std::uint32_t k = 0; k < op.output_count; ++k) os << (k ? ", %" : "%") << op.first_output + k;
    os << " = " << op.operation.name() << '(';
    detail::print_list(os, op.inputs, value);
    os << ')';
    detail::print_role(os, op.role);
    os << '\n';
    detail::print_regions(os, op.operation, "  ");
  }
  os << "  return ";
  detail::print_list(os, graph.outputs(), value);
  os << "\n}\n";
  return os.str();
}

/// Operands at their last use are marked with '!'; outputs that are never read are listed as drops.
template <GraphOperation Op>
std::string to_string(const CompiledProgram<Op>& program) {
  std::ostringstream os;
  auto slot = [](std::ostream& out, std::uint32_t s) { out << 's' << s; };
  os << "program slots=" << program.slot_count() << " {\n";
  const auto keys = program.input_keys();
  for (std::size_t i = 0; i < keys.size(); ++i) {
    os << "  s" << program.input_slots()[i] << " = input " << keys[i] << '\n';
  }
  for (std::size_t i = 0; i < program.instructions().size(); ++i) {
    const auto& ins = program.instructions()[i];
    os << "  ";
    for (std::uint32_t k = 0; k < ins.output_count; ++k) os << (k ? ", s" : "s") << ins.first_output + k;
    os << " = " << ins.operation.name() << '(';
    auto operands = program.operands(i);
    auto last = program.last_use(i);
    for (std::size_t k = 0; k < operands.size(); ++k) {
      os << (k ? ", s" : "s") << operands[k] << (last[k] ? "!" : "");
    }
    os << ')';
    detail::print_role(os, ins.role);
    for (auto s : program.releases(i)) {
      if (s >= ins.first_output && s < ins.first_output + ins.output_count) os << " drop s" << s;
    }
    os << '\n';
    detail::print_regions(os, ins.operation, "  ");
  }
  os << "  return ";
  detail::print_list(os, program.output_slots(), slot);
  os << "\n}\n";
  return os.str();
}

}  // namespace computegraph
