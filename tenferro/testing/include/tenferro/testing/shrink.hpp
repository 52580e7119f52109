#pragma once
// Shrinking a failing random program to a small one that still fails the same way, so that the
// printed C++ (to_cpp) is a minimal reproduction.
#include <functional>

#include "tenferro/testing/random_program.hpp"

namespace tenferro::testing {

/// Greedy shrinking: repeatedly tries (1) dropping an output from the loss, (2) making a loss term
/// read an operand of the call that computed it, (3) removing a call and reading another value of
/// the same type (one of its operands, or an earlier value) in its place, (4) removing a call and
/// reading a new input that holds the value it computed, (5) replacing input values by round
/// numbers, keeping each edit after which
/// `still_fails` holds, until no edit helps or `max_tries` calls of still_fails were made. Every
/// candidate is a valid program (it traces); the result has no unused calls or inputs.
RandomProgram shrink(const RandomProgram& program, const std::function<bool(const RandomProgram&)>& still_fails,
                     int max_tries = 2000);

}  // namespace tenferro::testing
