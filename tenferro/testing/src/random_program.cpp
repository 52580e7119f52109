// RandomProgram: applying a program to traced arguments, printing it, widening and pruning it.
#include "tenferro/testing/random_program.hpp"

#include <algorithm>
#include <functional>

#include "fuzz_internal.hpp"

namespace tenferro::testing {

std::vector<Traced> apply_values(const RandomProgram& program, const std::vector<Traced>& args) {
  if (args.size() != program.inputs.size()) {
    throw BindingError("fuzz: the program takes " + std::to_string(program.inputs.size()) + " arguments, got " +
                       std::to_string(args.size()));
  }
  std::vector<Traced> values = args;
  values.reserve(program.value_count());
  for (const FuzzNode& n : program.nodes) values.push_back(apply_node(n, values));
  return values;
}

namespace {
/// One output's share of the loss: a real scalar of the loss dtype.
Traced loss_term(const Traced& v, DType loss_dtype) {
  Traced t = v;
  if (!is_inexact(t.dtype())) t = astype(t, loss_dtype);
  Traced s = sum(t);
  if (is_complex(s.dtype())) s = real(s) + imag(s);
  return astype(s, loss_dtype);
}
}  // namespace

Traced apply_loss(const RandomProgram& program, const std::vector<Traced>& args) {
  const auto values = apply_values(program, args);
  Traced loss = loss_term(values.at(static_cast<std::size_t>(program.outputs.at(0))), program.loss_dtype);
  for (std::size_t i = 1; i < program.outputs.size(); ++i) {
    loss = loss + loss_term(values.at(static_cast<std::size_t>(program.outputs[i])), program.loss_dtype);
  }
  return loss;
}

Traced apply_y(const RandomProgram& program, const std::vector<Traced>& args) {
  return apply_values(program, args).at(static_cast<std::size_t>(program.outputs.at(0)));
}

std::string to_cpp(const RandomProgram& p) {
  std::string s = "// random program, seed " + std::to_string(p.seed) + "\n";
  s += "auto f = [](";
  for (std::size_t i = 0; i < p.inputs.size(); ++i) s += (i ? ", " : "") + std::string("tf::Traced ") + value_name(static_cast<int>(i));
  s += ") {\n";
  for (std::size_t k = 0; k < p.nodes.size(); ++k) {
    s += "  auto " + value_name(static_cast<int>(p.inputs.size() + k)) + " = " + node_cpp(p.nodes[k]) + ";\n";
  }
  const std::string loss_dtype = p.loss_dtype == DType::F32 ? "tf::DType::F32" : "tf::DType::F64";
  s += "  // the loss: the sum of every output's elements (complex: real + imaginary part)\n";
  s += "  auto term = [](tf::Traced v) {\n";
  s += "    if (!tf::is_inexact(v.dtype())) v = tf::astype(v, " + loss_dtype + ");\n";
  s += "    auto s = tf::sum(v);\n";
  s += "    if (tf::is_complex(s.dtype())) s = tf::real(s) + tf::imag(s);\n";
  s += "    return tf::astype(s, " + loss_dtype + ");\n";
  s += "  };\n";
  s += "  return ";
  for (std::size_t i = 0; i < p.outputs.size(); ++i) s += (i ? " + " : "") + std::string("term(") + value_name(p.outputs[i]) + ")";
  s += ";  // y = " + value_name(p.outputs.at(0)) + "\n};\n";
  for (std::size_t i = 0; i < p.inputs.size(); ++i) {
    s += "tf::Tensor a" + std::to_string(i) + " = " + tensor_cpp(p.inputs[i]) + ";\n";
  }
  return s;
}

namespace {
DType widen(DType d) { return d == DType::F32 ? DType::F64 : d == DType::C64 ? DType::C128 : d; }

Tensor widen(const Tensor& t) {
  const DType to = widen(t.dtype());
  if (to == t.dtype()) return t;
  Tensor w(TensorType{to, t.shape()});
  for (std::int64_t i = 0; i < t.numel(); ++i) {
    const c128 x = t.element(i);
    if (to == DType::C128) w.data<c128>()[i] = x;
    else w.data<double>()[i] = x.real();
  }
  return w;
}
}  // namespace

RandomProgram widened(const RandomProgram& program) {
  RandomProgram w = program;
  for (auto& t : w.inputs) t = widen(t);
  for (auto& n : w.nodes) {
    if (n.op == FuzzOp::Astype) n.dtype = widen(n.dtype);
  }
  w.loss_dtype = DType::F64;
  return w;
}

RandomProgram without_dead_values(const RandomProgram& program) {
  const int inputs = static_cast<int>(program.inputs.size());
  const int count = static_cast<int>(program.value_count());
  std::vector<bool> live(static_cast<std::size_t>(count), false);
  for (int o : program.outputs) live[static_cast<std::size_t>(o)] = true;
  for (int v = count - 1; v >= inputs; --v) {
    if (!live[static_cast<std::size_t>(v)]) continue;
    for (int a : program.nodes[static_cast<std::size_t>(v - inputs)].args) live[static_cast<std::size_t>(a)] = true;
  }
  std::vector<int> renumber(static_cast<std::size_t>(count), -1);
  RandomProgram out;
  out.seed = program.seed;
  out.loss_dtype = program.loss_dtype;
  for (int v = 0; v < inputs; ++v) {
    if (!live[static_cast<std::size_t>(v)]) continue;
    renumber[static_cast<std::size_t>(v)] = static_cast<int>(out.inputs.size());
    out.inputs.push_back(program.inputs[static_cast<std::size_t>(v)]);
  }
  int next = static_cast<int>(out.inputs.size());
  for (int v = inputs; v < count; ++v) {
    if (!live[static_cast<std::size_t>(v)]) continue;
    FuzzNode n = program.nodes[static_cast<std::size_t>(v - inputs)];
    for (int& a : n.args) a = renumber[static_cast<std::size_t>(a)];
    renumber[static_cast<std::size_t>(v)] = next++;
    out.nodes.push_back(std::move(n));
  }
  for (int o : program.outputs) out.outputs.push_back(renumber[static_cast<std::size_t>(o)]);
  return out;
}

}  // namespace tenferro::testing
