// einsum's entry points: the path query, the traced form, and the concrete form with its program
// cache and its slice-by-slice execution under a memory limit.
#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <sstream>

#include "einsum_internal.hpp"
#include "kernels/layout.hpp"
#include "tenferro/transforms.hpp"

namespace tenferro {

namespace {

using tn::Label;

std::vector<Shape> shapes_of(std::span<const Traced> xs) {
  std::vector<Shape> shapes;
  for (const auto& x : xs) shapes.push_back(x.shape());
  return shapes;
}

void check_dtypes(const std::string& what, std::span<const TensorType> types) {
  for (std::size_t k = 1; k < types.size(); ++k) {
    if (types[k].dtype != types[0].dtype) {
      std::string all;
      for (const auto& t : types) all += (all.empty() ? "" : ", ") + t.to_string();
      throw DTypeError("einsum: operands of " + what + " have different dtypes (" + all +
                       "); expected one dtype (convert first)");
    }
  }
  if (!types.empty() && types[0].dtype == DType::Bool) {
    throw DTypeError("einsum: bool operands; expected a numeric dtype");
  }
}

/// The subscripts of one slice: `s` without the sliced labels (their axes are fixed per slice).
tn::Subscripts without_labels(tn::Subscripts s, const std::vector<Label>& sliced) {
  auto drop = [&](std::vector<Label>& labels) {
    std::erase_if(labels, [&](Label l) { return std::find(sliced.begin(), sliced.end(), l) != sliced.end(); });
  };
  for (auto& in : s.inputs) drop(in);
  drop(s.output);
  return s;
}

/// The part of `x` where each axis labelled by a sliced label takes that label's current value
/// (a broadcast length-1 axis takes 0); those axes are dropped. A copy.
Tensor take_slice(const Tensor& x, const std::vector<Label>& axes_labels, const std::vector<std::int64_t>& value) {
  const std::vector<std::int64_t> strides = row_major_strides(x.shape());
  const std::size_t elem = dtype_size(x.dtype());
  std::int64_t base = 0;
  Shape shape;
  std::vector<std::int64_t> from;
  for (std::size_t a = 0; a < x.rank(); ++a) {
    const std::int64_t v = value[static_cast<std::size_t>(axes_labels[a])];
    if (v >= 0) {
      base += (x.shape()[a] == 1 ? 0 : v) * strides[a];
    } else {
      shape.push_back(x.shape()[a]);
      from.push_back(strides[a]);
    }
  }
  Tensor out = Tensor::uninitialized({x.dtype(), shape});
  detail::strided_copy(static_cast<std::byte*>(out.raw_data()), row_major_strides(shape),
                       static_cast<const std::byte*>(x.raw_data()) + static_cast<std::size_t>(base) * elem, from, shape,
                       elem);
  return out;
}

/// out[fixed axes at their values] (+)= part in the semiring (+, max or min), for `out` labelled
/// by `out_labels` (a fixed axis of length 1 is broadcast: every value lands on its index 0).
void add_slice(Tensor& out, const std::vector<Label>& out_labels, const std::vector<std::int64_t>& value,
               const Tensor& part, Semiring semiring) {
  const std::vector<std::int64_t> strides = row_major_strides(out.shape());
  std::int64_t base = 0;
  std::vector<std::int64_t> to;
  for (std::size_t a = 0; a < out.rank(); ++a) {
    const std::int64_t v = value[static_cast<std::size_t>(out_labels[a])];
    if (v >= 0) {
      base += (out.shape()[a] == 1 ? 0 : v) * strides[a];
    } else {
      to.push_back(strides[a]);
    }
  }
  visit_dtype(out.dtype(), [&]<class T>(T) {
    if constexpr (std::is_same_v<T, bool>) {
      return;
    } else {
      T* dst = out.data<T>() + base;
      const T* src = part.data<T>();
      const Shape& shape = part.shape();
      std::vector<std::int64_t> index(shape.size(), 0);
      for (std::int64_t i = 0; i < part.numel(); ++i) {
        std::int64_t offset = 0;
        for (std::size_t a = 0; a < shape.size(); ++a) offset += index[a] * to[a];
        T& d = dst[offset];
        if constexpr (std::is_floating_point_v<T>) {
          // Strict comparisons as in the kernels: a NaN never wins, the earlier slice keeps ties.
          if (semiring == Semiring::MinPlus) {
            d = src[i] < d ? src[i] : d;
          } else if (semiring != Semiring::Standard) {
            d = src[i] > d ? src[i] : d;
          } else {
            d += src[i];
          }
        } else {
          d += src[i];
        }
        for (std::size_t a = shape.size(); a-- > 0;) {
          if (++index[a] < shape[a]) break;
          index[a] = 0;
        }
      }
    }
  });
}

/// The compiled program of einsum(s) on operands of `types` along `steps`, cached per key.
std::shared_ptr<const Program> program_for(const std::string& key, const tn::Subscripts& s,
                                           const std::vector<TensorType>& types,
                                           const std::vector<std::pair<int, int>>& steps, Semiring semiring) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const Program>> cache;
  {
    std::lock_guard lock(mutex);
    if (auto it = cache.find(key); it != cache.end()) return it->second;
  }
  auto program = std::make_shared<const Program>(detail::trace_function(
      [&](const std::vector<Traced>& args) { return std::vector<Traced>{tn::detail::lower(s, args, steps, semiring)}; },
      types));
  std::lock_guard lock(mutex);
  return cache.emplace(key, std::move(program)).first->second;
}

/// Traced einsum of parsed subscripts; `what` names them in errors.
Traced traced_einsum(const tn::Subscripts& s, const std::string& what, std::span<const Traced> operands,
                     const tn::Options& options) {
  std::vector<TensorType> types;
  for (const auto& x : operands) types.push_back(x.type());
  check_dtypes(what, types);
  tn::Options unsliced = options;
  unsliced.path.memory_limit.reset();
  const auto path = tn::detail::path_for(tn::detail::network_of(s, shapes_of(operands)), unsliced);
  return tn::detail::lower(s, operands, path.steps, options.semiring);
}

/// The plan of a concrete einsum of parsed subscripts: its path, its compiled program (of one
/// slice when the path is sliced) and the slice odometer. `what` names the subscripts in errors and
/// in the program cache.
struct SlicePlan {
  tn::Subscripts s;
  tn::ContractionPath path;
  Semiring semiring = Semiring::Standard;
  DType dtype = DType::F64;
  Shape out_shape;
  std::shared_ptr<const Program> program;

  SlicePlan(const tn::Subscripts& subs, const std::string& what, std::span<const Tensor> operands, const tn::Options& options)
      : s(subs), semiring(options.semiring) {
    std::vector<Shape> shapes;
    std::vector<TensorType> types;
    for (const auto& x : operands) {
      shapes.push_back(x.shape());
      types.push_back(x.type());
    }
    check_dtypes(what, types);
    if (!types.empty()) dtype = types[0].dtype;
    path = tn::detail::path_for(tn::detail::network_of(s, shapes), options);
    std::ostringstream key;
    key << what << '|' << semiring_name(options.semiring) << '|';
    for (const auto& t : types) key << t.to_string() << ';';
    for (auto [i, j] : path.steps) key << i << ',' << j << ' ';
    key << '|';
    for (Label l : path.sliced) key << l << ' ';
    for (Label l : s.output) out_shape.push_back(s.size[static_cast<std::size_t>(l)]);
    if (path.sliced.empty()) {
      program = program_for(key.str(), s, types, path.steps, options.semiring);
      return;
    }
    std::vector<std::int64_t> value = first_value();
    std::vector<TensorType> slice_types;
    for (std::size_t k = 0; k < operands.size(); ++k) {
      slice_types.push_back(take_slice(operands[k], s.inputs[k], value).type());
    }
    program = program_for(key.str(), without_labels(s, path.sliced), slice_types, path.steps, options.semiring);
  }

  std::int64_t slices() const {
    std::int64_t n = 1;
    for (Label l : path.sliced) n *= s.size[static_cast<std::size_t>(l)];
    return n;
  }

  /// Every label -1 but the sliced ones, which are 0: the first slice.
  std::vector<std::int64_t> first_value() const {
    std::vector<std::int64_t> value(s.size.size(), -1);
    for (Label l : path.sliced) value[static_cast<std::size_t>(l)] = 0;
    return value;
  }

  /// The sliced labels' values of slice `k` (the odometer's k-th reading, the last label fastest).
  std::vector<std::int64_t> value_of(std::int64_t k) const {
    std::vector<std::int64_t> value = first_value();
    for (std::size_t i = path.sliced.size(); i-- > 0;) {
      const auto l = static_cast<std::size_t>(path.sliced[i]);
      value[l] = k % s.size[l];
      k /= s.size[l];
    }
    return value;
  }

  /// The gradients of <cotangent, sum of slices [begin, end)> with respect to each operand (full
  /// shapes, zero outside the slices' parts), each slice's by reverse mode through its program.
  Tensors vjp(std::span<const Tensor> operands, std::int64_t begin, std::int64_t end, const Tensor& cotangent) const {
    Tensors grads;
    for (const Tensor& x : operands) grads.push_back(Tensor::zeros(x.shape(), x.dtype()));
    const tn::Subscripts slice_s = path.sliced.empty() ? s : without_labels(s, path.sliced);
    const auto steps = path.steps;
    const tenferro::detail::TracedFunction f = [slice_s, steps](const std::vector<Traced>& args) {
      return std::vector<Traced>{tn::detail::lower(slice_s, args, steps, Semiring::Standard)};
    };
    std::vector<std::int64_t> value = path.sliced.empty() ? first_value() : value_of(begin);
    for (std::int64_t k = begin; k < end; ++k) {
      Tensors args;
      for (std::size_t j = 0; j < operands.size(); ++j) args.push_back(take_slice(operands[j], s.inputs[j], value));
      const Tensor cot = take_slice(cotangent, s.output, value);
      const Tensors parts = tenferro::detail::vjp_of(f, args, cot).second;
      for (std::size_t j = 0; j < operands.size(); ++j) add_slice(grads[j], s.inputs[j], value, parts[j], Semiring::Standard);
      for (std::size_t i = path.sliced.size(); i-- > 0;) {
        auto& v = value[static_cast<std::size_t>(path.sliced[i])];
        if (++v < s.size[static_cast<std::size_t>(path.sliced[i])]) break;
        v = 0;
      }
    }
    return grads;
  }

  /// The semiring sum of slices [begin, end), in order, into a fresh output.
  Tensor run(std::span<const Tensor> operands, std::int64_t begin, std::int64_t end) const {
    if (path.sliced.empty()) {
      if (begin == 0 && end >= 1) return program->run(Tensors(operands.begin(), operands.end()))[0];
      return Tensor::full(out_shape, semiring_zero(semiring), dtype);
    }
    Tensor out = Tensor::full(out_shape, semiring_zero(semiring), dtype);
    std::vector<std::int64_t> value = value_of(begin);
    for (std::int64_t k = begin; k < end; ++k) {
      Tensors args;
      for (std::size_t j = 0; j < operands.size(); ++j) args.push_back(take_slice(operands[j], s.inputs[j], value));
      add_slice(out, s.output, value, program->run(args)[0], semiring);
      // Next slice: an odometer over the sliced labels, the last one fastest.
      for (std::size_t i = path.sliced.size(); i-- > 0;) {
        auto& v = value[static_cast<std::size_t>(path.sliced[i])];
        if (++v < s.size[static_cast<std::size_t>(path.sliced[i])]) break;
        v = 0;
      }
    }
    return out;
  }
};

/// Concrete einsum of parsed subscripts; `what` names them in errors and in the program cache.
Tensor concrete_einsum(const tn::Subscripts& s, const std::string& what, std::span<const Tensor> operands,
                       const tn::Options& options) {
  const SlicePlan plan(s, what, operands, options);
  return plan.run(operands, 0, plan.slices());
}

std::string quoted(std::string_view subscripts) { return "\"" + std::string(subscripts) + "\""; }

/// "[[0, 1], [1, 2]] -> [0, 2]": integer labels for messages and cache keys.
std::string labels_text(const std::vector<std::vector<int>>& inputs, const std::vector<int>& output) {
  std::ostringstream os;
  os << '[';
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    os << (k ? ", [" : "[");
    for (std::size_t a = 0; a < inputs[k].size(); ++a) os << (a ? ", " : "") << inputs[k][a];
    os << ']';
  }
  os << "] -> [";
  for (std::size_t a = 0; a < output.size(); ++a) os << (a ? ", " : "") << output[a];
  os << ']';
  return os.str();
}

}  // namespace

struct tn::SlicedEinsum::State {
  Tensors operands;
  SlicePlan plan;
};

tn::SlicedEinsum::SlicedEinsum(std::string_view subscripts, Tensors operands, const Options& options) {
  std::vector<Shape> shapes;
  for (const auto& x : operands) shapes.push_back(x.shape());
  const tn::Subscripts s = tn::parse(subscripts, shapes);
  SlicePlan plan(s, quoted(subscripts), operands, options);
  state_ = std::make_shared<const State>(State{std::move(operands), std::move(plan)});
}

std::int64_t tn::SlicedEinsum::slices() const { return state_->plan.slices(); }
const tn::ContractionPath& tn::SlicedEinsum::path() const { return state_->plan.path; }

Tensor tn::SlicedEinsum::run(std::int64_t begin, std::int64_t end) const {
  if (begin < 0 || end < begin || end > slices()) {
    throw ValueError("SlicedEinsum::run: the range [" + std::to_string(begin) + ", " + std::to_string(end) +
                     ") is not within the " + std::to_string(slices()) + " slices");
  }
  return state_->plan.run(state_->operands, begin, end);
}

Tensors tn::SlicedEinsum::vjp(std::int64_t begin, std::int64_t end, const Tensor& cotangent) const {
  const SlicePlan& p = state_->plan;
  if (begin < 0 || end < begin || end > slices()) {
    throw ValueError("SlicedEinsum::vjp: the range [" + std::to_string(begin) + ", " + std::to_string(end) +
                     ") is not within the " + std::to_string(slices()) + " slices");
  }
  if (p.semiring != Semiring::Standard) {
    throw ADRuleError("einsum", tidu::RuleKind::Jvp,
                      "SlicedEinsum::vjp: an einsum in the " + std::string(semiring_name(p.semiring)) +
                          " semiring is not differentiable");
  }
  const TensorType want{p.dtype, p.out_shape};
  if (cotangent.type() != want) {
    throw ShapeError("SlicedEinsum::vjp: the cotangent is " + cotangent.type().to_string() + "; expected the result's type " +
                     want.to_string());
  }
  return p.vjp(state_->operands, begin, end, cotangent);
}

void tn::SlicedEinsum::combine(Tensor& into, const Tensor& part) const {
  const SlicePlan& p = state_->plan;
  const TensorType want{p.dtype, p.out_shape};
  if (into.type() != want || part.type() != want) {
    throw ShapeError("SlicedEinsum::combine: " + into.type().to_string() + " and " + part.type().to_string() +
                     "; expected the result's type " + want.to_string());
  }
  // Every output axis free (no label fixed): the whole of `part` lands on the whole of `into`.
  const std::vector<std::int64_t> free(p.s.size.size(), -1);
  add_slice(into, p.s.output, free, part, p.semiring);
}

tn::ContractionPath einsum_path(std::string_view subscripts, std::span<const Shape> shapes,
                                const tn::Options& options) {
  const tn::Subscripts s = tn::parse(subscripts, shapes);
  return tn::detail::path_for(tn::detail::network_of(s, shapes), options);
}

tn::ContractionPath einsum_path(std::string_view subscripts, std::initializer_list<Shape> shapes,
                                const tn::Options& options) {
  return einsum_path(subscripts, std::span<const Shape>(shapes.begin(), shapes.size()), options);
}

tn::ContractionPath einsum_path(const std::vector<std::vector<int>>& inputs, const std::vector<int>& output,
                                std::span<const Shape> shapes, const tn::Options& options) {
  const tn::Subscripts s = tn::from_labels(inputs, output, shapes);
  return tn::detail::path_for(tn::detail::network_of(s, shapes), options);
}

Traced einsum(std::string_view subscripts, std::span<const Traced> operands, const tn::Options& options) {
  return traced_einsum(tn::parse(subscripts, shapes_of(operands)), quoted(subscripts), operands, options);
}

Traced einsum(std::string_view subscripts, std::initializer_list<Traced> operands, const tn::Options& options) {
  return einsum(subscripts, std::span<const Traced>(operands.begin(), operands.size()), options);
}

Traced einsum(const std::vector<std::vector<int>>& inputs, const std::vector<int>& output,
              std::span<const Traced> operands, const tn::Options& options) {
  return traced_einsum(tn::from_labels(inputs, output, shapes_of(operands)), labels_text(inputs, output), operands,
                       options);
}

Tensor einsum(std::string_view subscripts, std::span<const Tensor> operands, const tn::Options& options) {
  std::vector<Shape> shapes;
  for (const auto& x : operands) shapes.push_back(x.shape());
  return concrete_einsum(tn::parse(subscripts, shapes), quoted(subscripts), operands, options);
}

Tensor einsum(std::string_view subscripts, std::initializer_list<Tensor> operands, const tn::Options& options) {
  return einsum(subscripts, std::span<const Tensor>(operands.begin(), operands.size()), options);
}

Tensor einsum(const std::vector<std::vector<int>>& inputs, const std::vector<int>& output,
              std::span<const Tensor> operands, const tn::Options& options) {
  std::vector<Shape> shapes;
  for (const auto& x : operands) shapes.push_back(x.shape());
  return concrete_einsum(tn::from_labels(inputs, output, shapes), labels_text(inputs, output), operands, options);
}

}  // namespace tenferro
