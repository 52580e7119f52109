#pragma once
// The attribute types of the built-in ops (see ops/op_attrs.hpp for the contract). Each is read by
// its op family's file; their printed forms are the bracketed text of the printed IR.
#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "tenferro/dimension_numbers.hpp"
#include "tenferro/ops/op_attrs.hpp"
#include "tenferro/ops/op_kind.hpp"
#include "tenferro/tensor.hpp"

namespace tenferro {

/// reduce_*: the reduced axes, ascending.
struct ReduceAxes {
  std::vector<std::int64_t> axes;
  bool operator==(const ReduceAxes&) const = default;
  std::size_t hash() const { return hash_ints(axes); }
  void print(std::ostream& os) const;  // axes=[..]
};

/// reduce_max_index / reduce_min_index: the one reduced axis.
struct ReduceAxis {
  std::int64_t axis = 0;
  bool operator==(const ReduceAxis&) const = default;
  std::size_t hash() const { return static_cast<std::size_t>(axis); }
  void print(std::ostream& os) const;  // axis=k
};

/// extract_diag / embed_diag: the diagonal's two axes (kept at axis1; axis2 dropped/inserted).
struct DiagAxes {
  std::int64_t axis1 = 0, axis2 = 0;
  bool operator==(const DiagAxes&) const = default;
  std::size_t hash() const { return hash_mix(static_cast<std::size_t>(axis1), static_cast<std::size_t>(axis2)); }
  void print(std::ostream& os) const;  // axes=[a1, a2]
};

/// transpose: result axis k is operand axis perm[k].
struct Permutation {
  std::vector<std::int64_t> perm;
  bool operator==(const Permutation&) const = default;
  std::size_t hash() const { return hash_ints(perm); }
  void print(std::ostream& os) const;  // perm=[..]
};

/// reshape: the result shape.
struct ReshapeTo {
  Shape shape;
  bool operator==(const ReshapeTo&) const = default;
  std::size_t hash() const { return hash_ints(shape); }
  void print(std::ostream& os) const;  // shape=[..]
};

/// broadcast_in_dim: the result shape and, for each operand axis, the result axis it maps to.
struct BroadcastDims {
  Shape shape;
  std::vector<std::int64_t> dims;
  bool operator==(const BroadcastDims&) const = default;
  std::size_t hash() const { return hash_mix(hash_ints(shape), hash_ints(dims)); }
  void print(std::ostream& os) const;  // shape=[..], dims=[..]
};

/// convert: the result dtype.
struct ConvertTo {
  DType dtype = DType::F64;
  bool operator==(const ConvertTo&) const = default;
  std::size_t hash() const { return static_cast<std::size_t>(dtype); }
  void print(std::ostream& os) const;  // f32
};

/// checkpoint_name: the name a checkpoint policy keeps the value by.
struct CheckpointNameAttr {
  std::string name;
  bool operator==(const CheckpointNameAttr&) const = default;
  std::size_t hash() const { return std::hash<std::string>{}(name); }
  void print(std::ostream& os) const { os << '"' << name << '"'; }
};

/// compare: the direction.
struct CompareAttrs {
  CompareDir dir = CompareDir::Eq;
  bool operator==(const CompareAttrs&) const = default;
  std::size_t hash() const { return static_cast<std::size_t>(dir); }
  void print(std::ostream& os) const;  // lt
};

/// constant: the value, compared by content (a private copy the op owns).
struct ConstantValue {
  std::shared_ptr<const Tensor> value;
  bool operator==(const ConstantValue& other) const;
  std::size_t hash() const;
  void print(std::ostream& os) const;  // the value if it has at most 4 elements, else its type
};

/// iota: the result type and the counting dimension.
struct IotaAttrs {
  TensorType type;
  std::int64_t dim = 0;
  bool operator==(const IotaAttrs&) const = default;
  std::size_t hash() const { return hash_mix(type.hash(), static_cast<std::size_t>(dim)); }
  void print(std::ostream& os) const;  // f64[3], dim=0
};

/// zeros: the result type.
struct ZerosAttrs {
  TensorType type;
  bool operator==(const ZerosAttrs&) const = default;
  std::size_t hash() const { return type.hash(); }
  void print(std::ostream& os) const;  // f64[3]
};

}  // namespace tenferro
