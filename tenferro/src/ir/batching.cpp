// The batching kit (batching.hpp).
#include "batching.hpp"

#include <algorithm>

#include "tenferro/indexing.hpp"
#include "tenferro/ops/record.hpp"

namespace tenferro::detail {

Traced with_batch_axis(const BatchedValue& v, std::int64_t batch_size) {
  if (v.batched) return v.value;
  Shape shape = v.value.shape();
  shape.insert(shape.begin(), batch_size);
  return broadcast_to(v.value, std::move(shape));
}

std::vector<BatchedValue> all_batched(std::vector<Traced> values) {
  std::vector<BatchedValue> out;
  out.reserve(values.size());
  for (Traced& v : values) out.push_back({std::move(v), true});
  return out;
}

BatchRule batch_leading_axis() {
  return [](const StdTensorOp& op, std::span<const BatchedValue> operands, std::int64_t batch_size) {
    std::vector<Traced> values;
    std::vector<TensorType> types;
    for (const BatchedValue& v : operands) {
      values.push_back(with_batch_axis(v, batch_size));
      types.push_back(values.back().type());
    }
    return all_batched(apply_outputs(make_op(*op.def, std::span<const TensorType>(types), op.attrs), values));
  };
}

std::vector<BatchedValue> batch_by_loop(const StdTensorOp& op, std::span<const BatchedValue> operands,
                                        std::int64_t batch_size) {
  const std::size_t outputs = op.output_count();
  std::vector<std::vector<Traced>> parts(outputs);
  for (std::int64_t b = 0; b < batch_size; ++b) {
    std::vector<Traced> element;
    for (const BatchedValue& v : operands) {
      if (!v.batched) {
        element.push_back(v.value);
        continue;
      }
      const Shape& shape = v.value.shape();
      std::vector<std::int64_t> start(shape.size(), 0), limit(shape.begin(), shape.end());
      start[0] = b;
      limit[0] = b + 1;
      element.push_back(reshape(slice(v.value, std::move(start), std::move(limit)), Shape(shape.begin() + 1, shape.end())));
    }
    std::vector<Traced> results = apply_outputs(op, element);
    for (std::size_t k = 0; k < outputs; ++k) parts[k].push_back(std::move(results[k]));
  }
  std::vector<BatchedValue> out;
  for (std::size_t k = 0; k < outputs; ++k) {
    if (batch_size == 0) {
      // No element to apply the op to: an empty batch of the result's type.
      const TensorType& t = op.output_type(k);
      Shape shape = t.shape;
      shape.insert(shape.begin(), 0);
      const Traced like = operands.front().value;
      out.push_back({constant(like, Tensor(TensorType{t.dtype, std::move(shape)})), true});
    } else {
      out.push_back({stack(std::span<const Traced>(parts[k]), 0), true});
    }
  }
  return out;
}

bool only_batched(std::span<const BatchedValue> operands, std::initializer_list<std::size_t> which) {
  for (std::size_t i = 0; i < operands.size(); ++i) {
    const bool allowed = std::find(which.begin(), which.end(), i) != which.end();
    if (operands[i].batched && !allowed) return false;
  }
  return true;
}

std::vector<std::int64_t> shifted(std::vector<std::int64_t> axes) {
  for (auto& a : axes) ++a;
  return axes;
}

}  // namespace tenferro::detail
