#pragma once
// The dense ids of the built-in ops, numbered by the op list (tenferro/op_list.hpp, where adding
// an op takes one line), and compare's directions.
#include <cstddef>
#include <cstdint>

#include "tenferro/op_list.hpp"

namespace tenferro {

/// Dense ids of the built-in ops, in list order; Custom marks every registered op (op_def.hpp).
enum class OpKind : std::uint8_t {
#define TENFERRO_ENUM(name) name,
  TENFERRO_BUILTIN_OPS(TENFERRO_ENUM)
#undef TENFERRO_ENUM
  Custom
};

inline constexpr std::size_t kBuiltinOpCount = static_cast<std::size_t>(OpKind::Custom);

/// Directions of `compare`.
enum class CompareDir : std::uint8_t { Eq, Ne, Lt, Le, Gt, Ge };
constexpr const char* compare_dir_name(CompareDir d) {
  switch (d) {
    case CompareDir::Eq: return "eq";
    case CompareDir::Ne: return "ne";
    case CompareDir::Lt: return "lt";
    case CompareDir::Le: return "le";
    case CompareDir::Gt: return "gt";
    case CompareDir::Ge: return "ge";
  }
  return "?";
}

}  // namespace tenferro
