#pragma once
// Tropical semiring algebra: contraction where "sum" is max (or min) and "product" is + (or *).
//
//   semiring    sum   product   zero (sum's identity)   one
//   max-plus    max   +         -inf                    0
//   min-plus    min   +         +inf                    0
//   max-times   max   *         0                       1      (entries >= 0)
//
// semiring_dot_general is dot_general's contraction in one of these semirings: the same
// dimension numbers, result axes and shape rule, computed by a fused, cache-blocked, vectorized
// kernel (never a broadcast-then-reduce, which would hold M*K*N elements). Contracting zero
// elements gives the zero element. einsum takes a semiring in its options (tenferro/einsum.hpp).
//
// Products the semiring defines but IEEE arithmetic does not (-inf + inf in max-plus, 0 * inf in
// max-times) give the zero element, as the semiring's absorbing rule says; a NaN entry likewise
// never wins. Ties: the first winner along the contracted positions (row-major over the lhs
// contracting axes in the order given) is kept, which is what the index result reports.
//
// Semiring ops are not differentiable by design (custom algebra has no AD; docs/design.md,
// "Custom algebra"): linearizing a program that contains one throws ADRuleError naming the op.
#include <cstdint>
#include <utility>

#include "tenferro/dimension_numbers.hpp"
#include "tenferro/traced.hpp"

namespace tenferro {

enum class Semiring : std::uint8_t {
  Standard,  ///< sum and product: ordinary algebra (dot_general, differentiable)
  MaxPlus,
  MinPlus,
  MaxTimes,
};
const char* semiring_name(Semiring s);  // "standard", "max_plus", "min_plus", "max_times"
/// The sum's identity: -inf, +inf, 0 (0 for Standard).
double semiring_zero(Semiring s);

Traced semiring_dot_general(const Traced& a, const Traced& b, Semiring semiring, DotDims dims);
/// Values and, for each result element, the flat index (i64, row-major over the lhs contracting
/// axes) of the first contracted position that attains it; 0 when none does (every product is the
/// zero element).
std::pair<Traced, Traced> semiring_dot_general_index(const Traced& a, const Traced& b, Semiring semiring,
                                                     DotDims dims);

}  // namespace tenferro
