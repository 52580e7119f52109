#pragma once
// Invalid programs at random: a call of the traced API or of a transform with a wrong shape,
// axis, dtype, permutation, dimension numbers, argument count or argument value, on the values
// of a valid random program (random_program.hpp). Every such call must throw a typed error
// (ShapeError, DTypeError or BindingError) whose message names the call (or the primitive it
// lowers to): never a crash, an abort, an untyped exception or a result.
#include <cstdint>
#include <string>
#include <vector>

namespace tenferro::testing {

struct InvalidReport {
  bool ok = true;
  std::string call;     // the invalid call, as C++ over the program's values
  std::string message;  // what went wrong (empty when ok)
};

/// Builds the invalid call of `seed` (a mutation drawn at random, applied to a value of the
/// random program of the same seed) and checks the error it throws.
InvalidReport check_invalid_call(std::uint64_t seed);

}  // namespace tenferro::testing
