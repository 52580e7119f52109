#pragma once
// Deterministic text for keys, used by printers and error messages.
//   input key        -> its operator<< text            e.g. x
//   derived value    -> name(args) ["#slot"] ["'"]     e.g. exp(mul(x, a)), split(x)#1, mul'(a, t)
// A trailing ' marks a linearized operation. Nesting deeper than `max_depth` prints "...".
#include <sstream>
#include <string>

#include "computegraph/value_key.hpp"

namespace computegraph {

template <GraphOperation Op>
void print_key(std::ostream& os, const ValueKey<Op>& key, int max_depth = 6) {
  if (key.is_input()) {
    os << key.input_key();
    return;
  }
  if (max_depth <= 0) {
    os << "...";
    return;
  }
  const Op& op = key.producer_op();
  os << op.name();
  if (key.producer_role().is_linearized()) os << '\'';
  os << '(';
  const auto& inputs = key.producer_inputs();
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (i) os << ", ";
    print_key(os, inputs[i], max_depth - 1);
  }
  os << ')';
  if (op.output_count() != 1) os << '#' << key.output_slot();
}

template <GraphOperation Op>
std::string key_to_string(const ValueKey<Op>& key, int max_depth = 6) {
  std::ostringstream os;
  print_key(os, key, max_depth);
  return os.str();
}

}  // namespace computegraph
