// Picks the vector-math table for this CPU once.
#include "vector_math.hpp"

namespace tenferro::exec {

const VectorMathTable& vector_math() {
  static const VectorMathTable& table = [&]() -> const VectorMathTable& {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return vector_math_avx2();
    return vector_math_sse2();
  }();
  return table;
}

}  // namespace tenferro::exec
