// Non-template parts of the functional transforms.
#include "tenferro/transforms.hpp"

#include <omp.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <mutex>
#include <type_traits>

#include "computegraph/printer.hpp"
#include "exec/executor.hpp"

namespace tenferro {

std::shared_ptr<computegraph::CompileCache<StdTensorOp>> default_compile_cache() {
  static auto cache = std::make_shared<computegraph::CompileCache<StdTensorOp>>(512);
  return cache;
}

namespace detail {

std::vector<TensorType> types_of(const Tensors& args) {
  std::vector<TensorType> types;
  for (const auto& a : args) types.push_back(a.type());
  return types;
}

void check_wrt(const char* what, const Tensors& args, std::size_t argnum) {
  if (argnum >= args.size()) {
    throw BindingError(std::string(what) + ": argnum " + std::to_string(argnum) + " but the call has " +
                       std::to_string(args.size()) + " arguments");
  }
  if (!is_inexact(args[argnum].dtype())) {
    throw DTypeError(std::string(what) + ": argument " + std::to_string(argnum) + " has dtype " +
                     dtype_name(args[argnum].dtype()) +
                     "; only f32, f64, c64 and c128 arguments can be differentiated");
  }
}

void check_scalar_loss(const char* what, const GraphPtr& graph) {
  if (graph->outputs().size() != 1) {
    throw ShapeError(std::string(what) + ": the function must return one value, it returns " +
                     std::to_string(graph->outputs().size()));
  }
  const TensorType& t = type_of(graph->key(graph->outputs()[0]));
  if (t.numel() != 1 || t.rank() != 0) {
    throw ShapeError(std::string(what) + ": the function must return a scalar (rank 0), it returns " +
                     t.to_string() + "; use vjp or jacrev for non-scalar outputs");
  }
  if (!is_floating(t.dtype)) {
    throw DTypeError(std::string(what) + ": the function must return a real float scalar, it returns " +
                     t.to_string() + "; take real() of a complex loss");
  }
}

void ParallelColumns::operator()(std::size_t count,
                                  const std::function<void(std::size_t, std::size_t)>& body) const {
  if (count == 0) return;
  // One column of a small program costs about a microsecond and waking the thread team a few:
  // threads only when each gets kMinColumns columns or more. Inside a parallel region (a
  // caller's own threads) the columns stay on the calling thread.
  constexpr std::size_t kMinColumns = 32;
  const auto max_threads = static_cast<std::size_t>(std::max(1, omp_get_max_threads()));
  const std::size_t threads = omp_in_parallel() ? 1 : std::min(max_threads, count / kMinColumns);
  if (threads <= 1) {
    body(0, count);
    return;
  }
  std::exception_ptr failure;
  std::mutex failure_mutex;
  // Chunks of kMinColumns handed out as threads free up: a thread slowed by other work on its
  // core takes fewer of them.
  const std::size_t chunks = (count + kMinColumns - 1) / kMinColumns;
#pragma omp parallel for num_threads(static_cast<int>(threads)) schedule(dynamic, 1)
  for (std::size_t c = 0; c < chunks; ++c) {
    try {
      body(c * kMinColumns, std::min(count, (c + 1) * kMinColumns));
    } catch (...) {
      std::lock_guard lock(failure_mutex);
      if (!failure) failure = std::current_exception();
    }
  }
  if (failure) std::rethrow_exception(failure);
}

void store_hessian_column(Tensor& h, std::size_t col, const Tensor& column) {
  const auto n = static_cast<std::size_t>(column.numel());
  visit_dtype(h.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T* src = static_cast<const T*>(column.raw_data());
    T* dst = static_cast<T*>(h.raw_data());
    if constexpr (std::is_floating_point_v<T>) {
      std::memcpy(dst + col * n, src, n * sizeof(T));  // row col: H is symmetric
    } else {
      for (std::size_t i = 0; i < n; ++i) dst[i * n + col] = src[i];
    }
  });
}

Tensor block_to_tensor(const Jacobian& m, std::size_t col0, std::size_t cols, Shape shape, DType dtype) {
  Tensor t(TensorType{dtype, std::move(shape)});
  std::vector<c128> values;
  values.reserve(m.rows * cols);
  for (std::size_t i = 0; i < m.rows; ++i) {
    for (std::size_t j = 0; j < cols; ++j) values.push_back(m(i, col0 + j));
  }
  visit_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    T* out = static_cast<T*>(t.raw_data());
    for (std::size_t k = 0; k < values.size(); ++k) {
      if constexpr (std::is_same_v<T, c128>) {
        out[k] = values[k];
      } else if constexpr (std::is_same_v<T, c64>) {
        out[k] = c64(static_cast<float>(values[k].real()), static_cast<float>(values[k].imag()));
      } else {
        out[k] = static_cast<T>(values[k].real());
      }
    }
  });
  return t;
}

}  // namespace detail

std::string Program::print() const { return computegraph::to_string(*graph_); }

tidu::LinearizedGraph<StdTensorOp> Program::linearize() const {
  std::vector<TensorKey> wrt;
  for (auto id : graph_->inputs()) {
    const TensorKey& key = graph_->key(id).input_key();
    if (is_inexact(key.type.dtype)) wrt.push_back(key);
  }
  auto outputs = graph_->output_keys();
  return tidu::linearize(computegraph::resolve({graph_}), std::span<const TensorValueKey>(outputs),
                         std::span<const TensorKey>(wrt));
}

namespace detail {
struct ProgramCache {
  std::once_flag once;
  std::shared_ptr<const computegraph::CompiledProgram<StdTensorOp>> program;
};
}  // namespace detail

namespace {
/// The compiled primal program of `graph` (inputs in declaration order), from the shared cache
/// on the first call and from `cache` afterwards: a run does no graph work at all.
const computegraph::CompiledProgram<StdTensorOp>& compiled(const GraphPtr& graph, detail::ProgramCache& cache) {
  std::call_once(cache.once, [&] {
    auto outputs = graph->output_keys();
    std::vector<TensorValueKey> inputs;
    for (auto id : graph->inputs()) inputs.push_back(graph->key(id));
    cache.program = default_compile_cache()->get_or_compile(computegraph::resolve({graph}),
                                                            std::span<const TensorValueKey>(outputs),
                                                            std::span<const TensorValueKey>(inputs));
  });
  return *cache.program;
}
}  // namespace

Program::Program(GraphPtr graph) : graph_(std::move(graph)), cache_(std::make_shared<detail::ProgramCache>()) {}

void Program::run_into(const Tensors& args, Tensors& outputs) const {
  exec::executable_for(compiled(graph_, *cache_))->run(args, outputs);
}

std::string Program::print_executable() const { return exec::executable_for(compiled(graph_, *cache_))->print(); }

Tensors Program::run(const Tensors& args) const {
  return computegraph::run_compiled(compiled(graph_, *cache_), std::span<const Tensor>(args));
}

}  // namespace tenferro
