// Invalid calls at random (invalid_program.hpp): each must throw a typed error naming the call.
// The ASan/UBSan build runs this too, so a crash or an out-of-bounds read on bad input fails it.
// TENFERRO_INVALID_PROGRAMS sets how many seeds run.
#include <gtest/gtest.h>

#include <cstdlib>

#include "tenferro/testing/invalid_program.hpp"

namespace tt = tenferro::testing;

TEST(InvalidPrograms, EveryInvalidCallGivesATypedErrorNamingIt) {
  const char* env = std::getenv("TENFERRO_INVALID_PROGRAMS");
  const std::uint64_t count = env ? std::strtoull(env, nullptr, 10) : 2000;
  int failures = 0;
  for (std::uint64_t seed = 0; seed < count && failures < 20; ++seed) {
    const tt::InvalidReport r = tt::check_invalid_call(seed);
    if (r.ok) continue;
    ++failures;
    ADD_FAILURE() << "seed " << seed << ": " << r.call << "\n  " << r.message;
  }
}
