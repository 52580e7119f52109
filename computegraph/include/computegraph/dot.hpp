#pragma once
// Graphviz DOT export for Graph and MaterializedGraph. One node per value, labelled like the text
// printer; edges run from operands to results. External references are dashed boxes.
#include <sstream>
#include <string>
#include <unordered_map>

#include "computegraph/graph.hpp"
#include "computegraph/key_printer.hpp"
#include "computegraph/materialized_graph.hpp"

namespace computegraph {

namespace detail {
inline std::string dot_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}
inline std::string op_label(const std::string& name, const OperationRole& role) {
  return role.is_linearized() ? name + "\\n" + dot_escape(role.to_string()) : name;
}
}  // namespace detail

template <GraphOperation Op>
std::string to_dot(const Graph<Op>& graph, const std::string& name = "graph") {
  std::ostringstream os;
  os << "digraph \"" << detail::dot_escape(name) << "\" {\n  node [fontname=\"monospace\"];\n";
  for (LocalValueId id : graph.inputs()) {
    std::ostringstream label;
    label << '%' << id << " = input " << graph.key(id).input_key();
    os << "  v" << id << " [shape=box, label=\"" << detail::dot_escape(label.str()) << "\"];\n";
  }
  std::unordered_map<ValueKey<Op>, std::size_t> externals;
  for (const auto& op : graph.operations()) {
    for (const auto& ref : op.inputs) {
      if (ref.is_external() && externals.emplace(ref.external_key(), externals.size()).second) {
        os << "  e" << externals.size() - 1 << " [shape=box, style=dashed, label=\"$"
           << externals.size() - 1 << " = "
           << detail::dot_escape(key_to_string(ref.external_key())) << "\"];\n";
      }
    }
  }
  for (const auto& op : graph.operations()) {
    for (LocalValueId out : op.outputs) {
      os << "  v" << out << " [label=\"%" << out << " = "
         << detail::op_label(detail::dot_escape(op.operation.name()), op.role) << "\"];\n";
      for (const auto& ref : op.inputs) {
        if (ref.is_local()) {
          os << "  v" << ref.local_id() << " -> v" << out << ";\n";
        } else {
          os << "  e" << externals.at(ref.external_key()) << " -> v" << out << ";\n";
        }
      }
    }
  }
  for (LocalValueId id : graph.outputs()) os << "  v" << id << " [peripheries=2];\n";
  os << "}\n";
  return os.str();
}

template <GraphOperation Op>
std::string to_dot(const MaterializedGraph<Op>& graph, const std::string& name = "materialized") {
  std::ostringstream os;
  os << "digraph \"" << detail::dot_escape(name) << "\" {\n  node [fontname=\"monospace\"];\n";
  for (auto v : graph.inputs()) {
    std::ostringstream label;
    label << '%' << v << " = input " << graph.values()[v].key.input_key();
    os << "  v" << v << " [shape=box, label=\"" << detail::dot_escape(label.str()) << "\"];\n";
  }
  for (const auto& op : graph.operations()) {
    for (std::uint32_t k = 0; k < op.output_count; ++k) {
      auto out = op.first_output + k;
      os << "  v" << out << " [label=\"%" << out << " = "
         << detail::op_label(detail::dot_escape(op.operation.name()), op.role) << "\"];\n";
      for (auto in : op.inputs) os << "  v" << in << " -> v" << out << ";\n";
    }
  }
  for (auto v : graph.outputs()) os << "  v" << v << " [peripheries=2];\n";
  os << "}\n";
  return os.str();
}

}  // namespace computegraph
