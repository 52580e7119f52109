// The batching kit (batching.hpp).
#include "batching.hpp"

#include <algorithm>

#include "computegraph/replay.hpp"
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

std::vector<BatchedValue> batch_contraction(
    std::span<const BatchedValue> x, const DotDims& d,
    const std::function<std::vector<Traced>(const Traced& lhs, const Traced& rhs, DotDims dims)>& contract) {
  const Traced& a = x[0].value;
  const Traced& b = x[1].value;
  if (x[0].batched && x[1].batched) {
    DotDims e{{0}, {0}, shifted(d.lhs_contract), shifted(d.rhs_contract)};
    for (std::int64_t v : d.lhs_batch) e.lhs_batch.push_back(v + 1);
    for (std::int64_t v : d.rhs_batch) e.rhs_batch.push_back(v + 1);
    return all_batched(contract(a, b, std::move(e)));
  }
  // Result axes: batch, lhs free, rhs free. The batch axis is the first free axis of its operand.
  const bool lhs = x[0].batched;
  DotDims e = d;
  if (lhs) {
    e.lhs_batch = shifted(d.lhs_batch);
    e.lhs_contract = shifted(d.lhs_contract);
  } else {
    e.rhs_batch = shifted(d.rhs_batch);
    e.rhs_contract = shifted(d.rhs_contract);
  }
  const auto batch = static_cast<std::int64_t>(d.lhs_batch.size());
  const std::int64_t lhs_free = static_cast<std::int64_t>(a.rank()) - batch - static_cast<std::int64_t>(d.lhs_contract.size());
  const std::int64_t at = lhs ? batch : batch + lhs_free;
  std::vector<Traced> results = contract(a, b, std::move(e));
  for (Traced& r : results) {
    if (at == 0) continue;
    std::vector<std::int64_t> perm{at};
    for (std::int64_t k = 0; k < static_cast<std::int64_t>(r.rank()); ++k) {
      if (k != at) perm.push_back(k);
    }
    r = transpose(r, std::move(perm));
  }
  return all_batched(std::move(results));
}

namespace {
thread_local bool loop_fallback_allowed = true;
}

LoopFallbackScope::LoopFallbackScope(bool allowed) : previous_(loop_fallback_allowed) { loop_fallback_allowed = allowed; }
LoopFallbackScope::~LoopFallbackScope() { loop_fallback_allowed = previous_; }

std::vector<BatchedValue> batch_op(const StdTensorOp& op, std::span<const BatchedValue> operands, std::int64_t batch_size) {
  if (op.def->batch) return op.def->batch(op, operands, batch_size);
  if (op.def->elementwise || op.def->formula) return batch_leading_axis()(op, operands, batch_size);
  if (!loop_fallback_allowed) {
    throw Error("tenferro vmap: " + op.def->name + " has no batching rule (OpDef::batch) and VmapOptions::loop_fallback is "
                "false; give the op a rule, or allow the loop over the batch");
  }
  return batch_by_loop(op, operands, batch_size);
}

std::vector<BatchedValue> batch_graph(const computegraph::Graph<StdTensorOp>& graph, std::span<const BatchedValue> inputs,
                                      std::int64_t batch_size, const Traced& like) {
  return computegraph::replay(
      graph, inputs, [&](const StdTensorOp& op, const computegraph::OperationRole&, std::span<const BatchedValue> in) {
        if (in.empty()) return std::vector<BatchedValue>{{record_nullary(like, op), false}};
        bool any = false;
        for (const BatchedValue& v : in) any = any || v.batched;
        if (any) return batch_op(op, in, batch_size);
        std::vector<Traced> plain;
        plain.reserve(in.size());
        for (const BatchedValue& v : in) plain.push_back(v.value);
        std::vector<BatchedValue> out;
        for (Traced& r : apply_outputs(op, plain)) out.push_back({std::move(r), false});
        return out;
      });
}

std::vector<Traced> batched_as(std::span<const BatchedValue> values, const std::vector<bool>& batched, std::int64_t batch_size) {
  std::vector<Traced> out;
  out.reserve(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (values[i].batched && !batched[i]) {
      throw Error("tenferro vmap: internal: value " + std::to_string(i) + " is batched where its body was predicted not to be");
    }
    out.push_back(batched[i] ? with_batch_axis(values[i], batch_size) : values[i].value);
  }
  return out;
}

Traced lanes(const Traced& p, const Shape& shape) {
  Shape column(shape.size(), 1);
  column[0] = shape[0];
  return broadcast_to(reshape(p, std::move(column)), shape);
}

}  // namespace tenferro::detail
