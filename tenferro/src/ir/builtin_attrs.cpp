// Printing and hashing of the built-in attribute types (ops/builtin_attrs.hpp). The printed forms
// are the bracketed text of the printed IR and of golden files.
#include <algorithm>

#include "tenferro/ops/builtin_attrs.hpp"

namespace tenferro {

std::size_t DotDims::hash() const {
  std::size_t h = hash_ints(lhs_batch);
  h = hash_mix(h, hash_ints(rhs_batch));
  h = hash_mix(h, hash_ints(lhs_contract));
  return hash_mix(h, hash_ints(rhs_contract));
}
void DotDims::print(std::ostream& os) const {
  os << "batch=" << shape_to_string(lhs_batch) << shape_to_string(rhs_batch)
     << ", contract=" << shape_to_string(lhs_contract) << shape_to_string(rhs_contract);
}

void ReduceAxes::print(std::ostream& os) const { os << "axes=" << shape_to_string(axes); }
void ReduceAxis::print(std::ostream& os) const { os << "axis=" << axis; }
void DiagAxes::print(std::ostream& os) const { os << "axes=" << shape_to_string({axis1, axis2}); }
void Permutation::print(std::ostream& os) const { os << "perm=" << shape_to_string(perm); }
void ReshapeTo::print(std::ostream& os) const { os << "shape=" << shape_to_string(shape); }
void BroadcastDims::print(std::ostream& os) const {
  os << "shape=" << shape_to_string(shape) << ", dims=" << shape_to_string(dims);
}
void ConvertTo::print(std::ostream& os) const { os << dtype_name(dtype); }
void CompareAttrs::print(std::ostream& os) const { os << compare_dir_name(dir); }

bool ConstantValue::operator==(const ConstantValue& other) const {
  if (value == other.value) return true;
  if (!value || !other.value || value->type() != other.value->type()) return false;
  const auto* x = static_cast<const unsigned char*>(value->raw_data());
  const auto* y = static_cast<const unsigned char*>(other.value->raw_data());
  return std::equal(x, x + value->nbytes(), y);
}
std::size_t ConstantValue::hash() const {
  if (!value) return 0;
  std::size_t h = value->type().hash();
  const auto* bytes = static_cast<const unsigned char*>(value->raw_data());
  for (std::size_t i = 0; i < value->nbytes(); ++i) h = (h ^ bytes[i]) * 0x100000001b3ULL;
  return h;
}
void ConstantValue::print(std::ostream& os) const {
  if (value->numel() <= 4) {
    os << *value;
  } else {
    os << value->type().to_string();
  }
}

void IotaAttrs::print(std::ostream& os) const { os << type.to_string() << ", dim=" << dim; }
void ZerosAttrs::print(std::ostream& os) const { os << type.to_string(); }

}  // namespace tenferro
