// The tropical matrix product for CPUs with AVX2 (32-byte vectors; compiled with -mavx2);
// semiring_gemm_impl.inc. semiring_gemm() picks it at run time.
#include <algorithm>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "parallel.hpp"
#include "semiring_gemm.hpp"

namespace tenferro::detail {
#define SG_VECTOR_BYTES 32
#define SG_TABLE semiring_gemm_avx2
#include "semiring_gemm_impl.inc"

}  // namespace tenferro::detail
