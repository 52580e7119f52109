#pragma once
// Axis arguments of the traced API: a negative axis counts from the end.
#include <cstdint>
#include <string>

#include "tenferro/error.hpp"

namespace tenferro::detail {

/// axis in [-rank, rank) as an index in [0, rank); ShapeError naming `op` otherwise.
inline std::int64_t normalize_axis(const char* op, std::int64_t axis, std::size_t rank) {
  const auto r = static_cast<std::int64_t>(rank);
  if (axis < -r || axis >= r) {
    throw ShapeError(std::string(op) + ": axis " + std::to_string(axis) + " for an operand of rank " + std::to_string(r) +
                     "; expected an axis in [-" + std::to_string(r) + ", " + std::to_string(r) + ")");
  }
  return axis < 0 ? axis + r : axis;
}

}  // namespace tenferro::detail
