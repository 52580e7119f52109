// shrink (shrink.hpp).
#include "tenferro/testing/shrink.hpp"
#include "tenferro/ops/record.hpp"

#include <cmath>
#include <optional>

#include "check_math.hpp"
#include "fuzz_internal.hpp"

namespace tenferro::testing {

namespace {

/// The types of the values of `p`, by tracing it: nullopt if the API rejects a call with a
/// typed error (the candidate is not a valid program). An untyped exception (the kind of failure
/// being shrunk) ends the list early: the values from there on have no known type.
std::optional<std::vector<TensorType>> value_types(const RandomProgram& p) {
  auto trace = std::make_shared<TraceState>();
  std::vector<Traced> values;
  for (std::size_t i = 0; i < p.inputs.size(); ++i) {
    values.emplace_back(trace, trace->builder.add_input(TensorKey{"x" + std::to_string(i), p.inputs[i].type()}));
  }
  try {
    for (const FuzzNode& n : p.nodes) values.push_back(apply_node(n, values));
  } catch (const ShapeError&) {
    return std::nullopt;
  } catch (const DTypeError&) {
    return std::nullopt;
  } catch (...) {
  }
  std::vector<TensorType> types;
  for (const Traced& v : values) types.push_back(v.type());
  return types;
}

/// p with call k removed and its readers reading value `replacement` instead.
RandomProgram without_node(const RandomProgram& p, std::size_t k, int replacement) {
  const int removed = static_cast<int>(p.inputs.size() + k);
  RandomProgram out = p;
  out.nodes.erase(out.nodes.begin() + static_cast<std::ptrdiff_t>(k));
  auto remap = [&](int v) { return v == removed ? replacement : v > removed ? v - 1 : v; };
  for (auto& n : out.nodes) {
    for (int& a : n.args) a = remap(a);
  }
  for (int& o : out.outputs) o = remap(o);
  return out;
}

/// The concrete values of p's values (inputs first) at its inputs; nullopt if p does not run.
std::optional<std::vector<Tensor>> concrete_values(const RandomProgram& p) {
  try {
    const RandomProgram* q = &p;
    auto values = [q](const auto&... a) { return apply_values(*q, std::vector<Traced>{a...}); };
    return Program(detail::trace_graph(values, detail::types_of(p.inputs))).run(p.inputs);
  } catch (...) {
    return std::nullopt;
  }
}

/// p with call k removed and its readers reading a new input holding `value` (the value the call
/// computed), so what follows sees the same numbers.
RandomProgram input_for_node(const RandomProgram& p, std::size_t k, const Tensor& value) {
  const int old_inputs = static_cast<int>(p.inputs.size());
  RandomProgram shifted = p;
  shifted.inputs.push_back(value);
  auto shift = [&](int v) { return v >= old_inputs ? v + 1 : v; };
  for (auto& n : shifted.nodes) {
    for (int& a : n.args) a = shift(a);
  }
  for (int& o : shifted.outputs) o = shift(o);
  return without_node(shifted, k, old_inputs);
}

/// A round number near x: the candidates tried in place of an input element.
double rounded(double x, int digits) {
  const double scale = std::pow(10.0, digits);
  return std::round(x * scale) / scale;
}

}  // namespace

RandomProgram shrink(const RandomProgram& program, const std::function<bool(const RandomProgram&)>& still_fails,
                     int max_tries) {
  RandomProgram best = without_dead_values(program);
  if (!still_fails(best)) best = program;
  int tries = 0;
  auto attempt = [&](const RandomProgram& candidate) {
    if (tries >= max_tries || candidate.inputs.empty() || candidate.outputs.empty()) return false;
    const RandomProgram pruned = without_dead_values(candidate);
    if (!value_types(pruned)) return false;
    ++tries;
    if (!still_fails(pruned)) return false;
    best = pruned;
    return true;
  };
  bool progress = true;
  while (progress && tries < max_tries) {
    progress = false;
    // (1) fewer loss terms
    for (std::size_t o = 0; best.outputs.size() > 1 && o < best.outputs.size(); ++o) {
      RandomProgram c = best;
      c.outputs.erase(c.outputs.begin() + static_cast<std::ptrdiff_t>(o));
      if (attempt(c)) {
        progress = true;
        break;
      }
    }
    if (progress) continue;
    // (2) a loss term reads an operand of the call that computed it (the loss takes a value of
    // any type, so the call then drops out even where no value of its type could stand in)
    for (std::size_t o = 0; o < best.outputs.size() && !progress; ++o) {
      const int v = best.outputs[o] - static_cast<int>(best.inputs.size());
      if (v < 0) continue;
      for (int r : best.nodes[static_cast<std::size_t>(v)].args) {
        RandomProgram c = best;
        c.outputs[o] = r;
        if (attempt(c)) {
          progress = true;
          break;
        }
      }
    }
    if (progress) continue;
    // (3) fewer calls, from the last: read an operand or an earlier value of the same type
    const auto types = value_types(best);
    if (!types) break;
    for (std::size_t k = best.nodes.size(); k-- > 0 && !progress;) {
      const int v = static_cast<int>(best.inputs.size() + k);
      std::vector<int> replacements(best.nodes[k].args.begin(), best.nodes[k].args.end());
      for (int u = 0; u < v; ++u) replacements.push_back(u);
      for (int r : replacements) {
        if (static_cast<std::size_t>(std::max(r, v)) >= types->size()) continue;
        const auto& tr = (*types)[static_cast<std::size_t>(r)];
        const auto& tv = (*types)[static_cast<std::size_t>(v)];
        if (tr.dtype != tv.dtype || tr.shape != tv.shape) continue;
        if (attempt(without_node(best, k, r))) {
          progress = true;
          break;
        }
      }
    }
    if (progress) continue;
    // (4) fewer calls, from the last: a new input holding the value the call computed (for a call
    // whose type no other value has)
    if (const auto values = concrete_values(best)) {
      for (std::size_t k = best.nodes.size(); k-- > 0 && !progress;) {
        const std::size_t v = best.inputs.size() + k;
        if (v < values->size() && attempt(input_for_node(best, k, (*values)[v]))) progress = true;
      }
    }
    if (progress) continue;
    // (5) round input values: 0, then one and two decimals
    for (std::size_t i = 0; i < best.inputs.size() && !progress; ++i) {
      for (int digits : {0, 1, 2}) {
        RandomProgram c = best;
        Tensor& t = c.inputs[i];
        t = t.clone();
        bool changed = false;
        for (std::int64_t e = 0; e < t.numel(); ++e) {
          const c128 x = t.element(e);
          const c128 r(rounded(x.real(), digits), rounded(x.imag(), digits));
          if (r == x) continue;
          changed = true;
          set_element(t, e, r);
        }
        if (changed && attempt(c)) {
          progress = true;
          break;
        }
      }
    }
  }
  return best;
}

}  // namespace tenferro::testing
