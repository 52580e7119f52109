#pragma once
// The attributes and descriptor factories of the semiring contractions (tenferro/semiring.hpp
// has the algebra; src/ops/semiring_dot.cpp implements them).
#include <cstddef>
#include <ostream>

#include "tenferro/ops/std_tensor_op.hpp"
#include "tenferro/semiring.hpp"

namespace tenferro {

/// semiring_dot_general's attributes: the semiring and dot_general's dimension numbers.
struct SemiringDims {
  Semiring semiring = Semiring::MaxPlus;
  DotDims dims;
  bool operator==(const SemiringDims&) const = default;
  std::size_t hash() const;
  void print(std::ostream& os) const;  // max_plus, batch=[..][..], contract=[..][..]
};

namespace ops {
/// The contraction of dot_general in a tropical semiring (not Standard): real operands (f32, f64)
/// of one dtype; result type as dot_general's.
StdTensorOp semiring_dot_general(const TensorType& a, const TensorType& b, Semiring semiring, DotDims dims);
/// The same with a second result: for each result element, the flat index (i64, row-major over
/// the lhs contracting axes) of the first contracted position that attains it; 0 when none does
/// (every product is the zero element).
StdTensorOp semiring_dot_general_index(const TensorType& a, const TensorType& b, Semiring semiring, DotDims dims);
}  // namespace ops

}  // namespace tenferro
