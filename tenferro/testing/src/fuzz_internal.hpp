#pragma once
// Helpers shared by the random-program sources (not part of the testing library's interface).
#include <string>
#include <vector>

#include "tenferro/testing/random_program.hpp"

namespace tenferro::testing {

/// Calls the traced API for one node on the values so far.
Traced apply_node(const FuzzNode& node, const std::vector<Traced>& values);
/// slice's (start, limit, stride) or pad's (low, high, interior): thirds of a node's ints.
struct ThreeLists {
  std::vector<std::int64_t> first, second, third;
};
ThreeLists three_lists(const std::vector<std::int64_t>& ints);
/// "v<i>", the name of value i in printed programs.
std::string value_name(int i);
/// The node's call as a C++ expression over value names.
std::string node_cpp(const FuzzNode& node);
/// A tensor as a C++ expression (tf::Tensor::from with every value printed exactly).
std::string tensor_cpp(const Tensor& t);

}  // namespace tenferro::testing

namespace tenferro::testing {
/// Values that change exactly where the program jumps: comparisons, conversions to an integer or
/// bool, the jumps and branch cuts of the op list's functions (function_jump_indicators: sign,
/// floor, the complex log, ...); with `kinks`, also where its derivative jumps: the branch taken
/// by abs, relu, maximum, minimum, clamp and max/min reductions of real values.
std::vector<Traced> jump_indicators(const RandomProgram& program, const std::vector<Traced>& values, bool kinks);
}  // namespace tenferro::testing

namespace tenferro::testing {
/// One scalar per jump of the program (a comparison of two different values, a conversion to an
/// integer or bool, a jump or branch cut of an op list's function: function_jump_margins): the
/// smallest relative distance of its operands from the threshold over the elements
/// (|a - b| / (|a| + |b| + 1); distance to the nearest integer or to zero). A margin within
/// rounding means another computation may jump the other way. With `kinks`, also the kinks of
/// real values (maximum, minimum, clamp, abs, relu, and max/min reductions: the gap to the
/// runner-up), where derivatives jump.
std::vector<Traced> jump_margins(const RandomProgram& program, const std::vector<Traced>& values, bool kinks);
}  // namespace tenferro::testing
