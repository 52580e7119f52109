#pragma once
// Internal to sparse derivatives: the key under which an analysis (a pattern, a coloring, a
// compiled product program) is cached. Detection replays the function on index sets, so integer
// and bool arguments (indices, masks) shape the pattern by their values, not only their types: a
// cached analysis serves a call only when the types and those values are the same.
#include <cstring>
#include <vector>

#include "tenferro/tensor.hpp"
#include "tenferro/transforms.hpp"

namespace tenferro::sparse {

struct ArgumentSignature {
  std::vector<TensorType> types;
  Tensors integers;  ///< the integer and bool arguments' values (empty tensors for float ones)

  static ArgumentSignature of(const Tensors& args) {
    ArgumentSignature s{tenferro::detail::types_of(args), {}};
    for (const Tensor& a : args) s.integers.push_back(is_inexact(a.dtype()) ? Tensor() : a.clone());
    return s;
  }

  bool matches(const Tensors& args) const {
    if (types != tenferro::detail::types_of(args)) return false;
    for (std::size_t i = 0; i < args.size(); ++i) {
      if (!is_inexact(args[i].dtype()) && std::memcmp(integers[i].raw_data(), args[i].raw_data(), args[i].nbytes()) != 0) {
        return false;
      }
    }
    return true;
  }
};

}  // namespace tenferro::sparse
