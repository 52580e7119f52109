#pragma once
// Attributes and descriptor factories of the counter-based random-number primitives
// (tenferro/random.hpp says what they compute; src/ops/random_bits.cpp implements them).
#include <cstdint>
#include <ostream>

#include "tenferro/ops/op_attrs.hpp"
#include "tenferro/ops/std_tensor_op.hpp"

namespace tenferro {

/// random_bits and random_uniform: the result's shape per key (and random_uniform's dtype), and
/// the counters they read: word j of the stream comes from Threefry-2x32 on the counter pair
/// (stream, offset + j / 2), so different streams and offsets of one key never share a counter.
struct RandomAttrs {
  Shape shape;
  DType dtype = DType::I64;
  std::uint32_t stream = 0;
  std::uint32_t offset = 0;
  bool operator==(const RandomAttrs&) const = default;
  std::size_t hash() const {
    return hash_mix(hash_mix(hash_ints(shape), static_cast<std::size_t>(dtype)),
                    (static_cast<std::size_t>(stream) << 32) | offset);
  }
  void print(std::ostream& os) const;  // shape=[..], dtype=f64, stream=s, offset=o
};

namespace ops {
/// Random 32-bit words as i64 values in [0, 2^32), of attrs.shape, from a key (an i64[2] tensor of
/// two 32-bit words). A stack of keys i64[k.., 2] gives [k.., attrs.shape..], each key's block the
/// draw of that key alone (vmap batches the ops this way). DTypeError for a key that is not i64,
/// ShapeError for one whose last axis is not 2 or a negative dimension in attrs.shape.
StdTensorOp random_bits(const TensorType& key, RandomAttrs attrs);
/// Uniform values in [0, 1) of attrs.shape and attrs.dtype (f32: 24 random bits from one word;
/// f64: 53 bits from two words), from a key or a stack of keys as random_bits.
StdTensorOp random_uniform(const TensorType& key, RandomAttrs attrs);
}  // namespace ops

}  // namespace tenferro
