// The tropical matrix product for the baseline x86-64 ISA (16-byte vectors); semiring_gemm_impl.inc.
#include <algorithm>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "parallel.hpp"
#include "semiring_gemm.hpp"

namespace tenferro::detail {
#define SG_VECTOR_BYTES 16
#define SG_TABLE semiring_gemm_sse2
#include "semiring_gemm_impl.inc"
}  // namespace tenferro::detail
