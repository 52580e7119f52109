#pragma once
// Stage hooks: IR dumps and verification after each pipeline stage (docs/design.md,
// "Printing and verification").
//
//   COMPUTEGRAPH_DUMP=materialize,compile   print the IR after the named stages to stderr
//                                           ("all" dumps every stage; tidu adds linearize, transpose)
//   COMPUTEGRAPH_VERIFY=1                   run verify() after each stage in release builds too
//                                           (debug builds always verify)
#include <iostream>
#include <string>
#include <string_view>

#include "computegraph/printer.hpp"
#include "computegraph/verify.hpp"

namespace computegraph {

/// True if COMPUTEGRAPH_DUMP names `stage` (or "all"). Read once per process.
bool dump_enabled(std::string_view stage);
/// True if COMPUTEGRAPH_VERIFY is set to a non-zero value. Read once per process.
bool verify_requested();

namespace detail {
inline bool verify_after_stages() {
#ifndef NDEBUG
  return true;
#else
  return verify_requested();
#endif
}

/// Called by each stage on its result.
template <class Ir>
void after_stage(std::string_view stage, const Ir& ir) {
  if (verify_after_stages()) verify(ir);
  if (dump_enabled(stage)) std::cerr << "// after " << stage << "\n" << to_string(ir);
}
}  // namespace detail

}  // namespace computegraph
