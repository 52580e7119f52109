// Non-template parts of the functional transforms.
#include "tenferro/transforms.hpp"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "computegraph/printer.hpp"
#include "computegraph/resolve.hpp"
#include "tenferro/buffer_pool.hpp"
#include "tidu/linearize.hpp"
#include "exec/executor.hpp"
#include "kernels/parallel.hpp"
#include "tenferro/threads.hpp"
#include "tenferro/ops/make.hpp"
#include "tenferro/program.hpp"

namespace tenferro {

std::shared_ptr<computegraph::CompileCache<StdTensorOp>> default_compile_cache() {
  static auto cache = std::make_shared<computegraph::CompileCache<StdTensorOp>>(512);
  return cache;
}

namespace detail {

void throw_arity_mismatch(std::size_t count) {
  throw BindingError("tenferro: the function cannot be called with " + std::to_string(count) + " Traced arguments");
}

void collect(std::vector<Traced>& out, const std::vector<Traced>& ts) { out.insert(out.end(), ts.begin(), ts.end()); }

void throw_empty_function() {
  throw BindingError("tenferro: an empty tenferro::Function was called (a body, map or schedule was never given)");
}

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

void check_directions(const char* what, const char* kind, const Tensors& primals, const Tensors& directions) {
  if (directions.size() != primals.size()) return;  // tidu's transforms report a count mismatch
  for (std::size_t i = 0; i < primals.size(); ++i) {
    const TensorType& p = primals[i].type();
    const TensorType& d = directions[i].type();
    if (!is_inexact(p.dtype) || p == d) continue;
    const std::string message = std::string(what) + ": " + kind + " " + std::to_string(i) + " has type " + d.to_string() +
                                "; expected " + p.to_string() + ", the type of primal " + std::to_string(i);
    if (p.shape != d.shape) throw ShapeError(message);
    throw DTypeError(message);
  }
}

void check_cotangent(const char* what, const GraphPtr& graph, const Tensor& cotangent) {
  check_single_output(what, graph);
  const TensorType& out = type_of(graph->key(graph->outputs()[0]));
  const TensorType& ct = cotangent.type();
  if (out == ct) return;
  const std::string message = std::string(what) + ": the cotangent has type " + ct.to_string() + "; expected " +
                              out.to_string() + ", the type of the function's output";
  if (out.shape != ct.shape) throw ShapeError(message);
  throw DTypeError(message);
}

void check_scalar_output(const char* what, const GraphPtr& graph) {
  if (graph->outputs().empty()) throw ShapeError(std::string(what) + ": the function returns nothing");
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

void check_scalar_loss(const char* what, const GraphPtr& graph) {
  if (graph->outputs().size() != 1) {
    throw ShapeError(std::string(what) + ": the function must return one value, it returns " +
                     std::to_string(graph->outputs().size()));
  }
  check_scalar_output(what, graph);
}

void ParallelColumns::operator()(std::size_t count,
                                  const Function<void(std::size_t, std::size_t)>& body) const {
  if (count == 0) return;
  // One column of a small program costs about a microsecond and waking the thread team a few:
  // threads only when each gets kMinColumns columns or more. Inside a parallel body (an outer
  // loop already uses the threads) the columns stay on the calling thread.
  constexpr std::size_t kMinColumns = 32;
  const auto max_threads = static_cast<std::size_t>(std::max(1, num_threads()));
  const std::size_t threads = exec::in_parallel_body() ? 1 : std::min(max_threads, count / kMinColumns);
  if (threads <= 1) {
    body(0, count);
    return;
  }
  // Chunks of kMinColumns: each thread starts on its own share and takes from the others' when
  // done, so a thread slowed by other work on its core takes fewer of them. The first exception a
  // column throws reaches the caller.
  const std::size_t chunks = (count + kMinColumns - 1) / kMinColumns;
  exec::parallel_chunks(static_cast<std::int64_t>(chunks), static_cast<int>(threads), [&](std::int64_t c) {
    const auto first = static_cast<std::size_t>(c) * kMinColumns;
    body(first, std::min(count, first + kMinColumns));
  });
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

namespace {
/// `value` in dtype T: the real part for real T.
template <class T>
T from_c128(const c128& value) {
  if constexpr (std::is_same_v<T, c128>) {
    return value;
  } else if constexpr (std::is_same_v<T, c64>) {
    return c64(static_cast<float>(value.real()), static_cast<float>(value.imag()));
  } else {
    return static_cast<T>(value.real());
  }
}

template <class T>
T conj_of(const T& value) {
  if constexpr (std::is_same_v<T, c128> || std::is_same_v<T, c64>) {
    return std::conj(value);
  } else {
    return value;
  }
}
}  // namespace

void transpose_matrix_into(Tensor& to, const Tensor& from, std::size_t rows, std::size_t cols) {
  visit_dtype(to.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T* src = static_cast<const T*>(from.raw_data());
    T* dst = static_cast<T*>(to.raw_data());
    // Tiles of kTile x kTile: both the rows read and the rows written stay in cache.
    constexpr std::size_t kTile = 32;
    for (std::size_t r0 = 0; r0 < rows; r0 += kTile) {
      for (std::size_t c0 = 0; c0 < cols; c0 += kTile) {
        const std::size_t r1 = std::min(rows, r0 + kTile), c1 = std::min(cols, c0 + kTile);
        for (std::size_t r = r0; r < r1; ++r) {
          for (std::size_t c = c0; c < c1; ++c) dst[c * rows + r] = src[r * cols + c];
        }
      }
    }
  });
}

void store_matrix_row(Tensor& m, std::size_t row, const Tensor& values, bool conjugate) {
  const auto cols = static_cast<std::size_t>(values.numel());
  visit_dtype(m.dtype(), [&](auto zero) {
    using T = decltype(zero);
    T* dst = static_cast<T*>(m.raw_data()) + row * cols;
    if (values.dtype() == m.dtype()) {
      const T* src = static_cast<const T*>(values.raw_data());
      if (conjugate) {
        for (std::size_t k = 0; k < cols; ++k) dst[k] = conj_of(src[k]);
      } else {
        std::copy(src, src + cols, dst);
      }
    } else {
      for (std::size_t k = 0; k < cols; ++k) {
        const c128 v = values.element(static_cast<std::int64_t>(k));
        dst[k] = from_c128<T>(conjugate ? std::conj(v) : v);
      }
    }
  });
}

void check_single_output(const char* what, const GraphPtr& graph) {
  if (graph->outputs().size() != 1) {
    throw ShapeError(std::string(what) + ": the function must return one tensor, it returns " +
                     std::to_string(graph->outputs().size()) + "; differentiate each output separately");
  }
}

}  // namespace detail

std::string Program::print() const { return computegraph::to_string(*graph_); }

tidu::LinearizedGraph<StdTensorOp> linearize(const Program& program) {
  const GraphPtr& graph = program.graph();
  std::vector<TensorKey> wrt;
  for (auto id : graph->inputs()) {
    const TensorKey& key = graph->key(id).input_key();
    if (is_inexact(key.type.dtype)) wrt.push_back(key);
  }
  auto outputs = graph->output_keys();
  return tidu::linearize(computegraph::resolve({graph}), std::span<const TensorValueKey>(outputs),
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

std::size_t Program::planned_peak_bytes() const {
  return exec::executable_for(compiled(graph_, *cache_))->planned_peak_bytes();
}

Program::MemoryStats Program::memory_stats(const Tensors& args) const {
  // The executable itself, not run(): under TENFERRO_CHECK_PASSES run() also runs the program
  // unfused to compare, which is not the program's memory.
  const auto executable = exec::executable_for(compiled(graph_, *cache_));
  executable->run(args);  // warm: first-use work (kernel tables, thread teams) is not the program's
  MemoryStats stats;
  stats.planned_peak_bytes = executable->planned_peak_bytes();
  MemoryMeter meter;
  executable->run(args);
  stats.measured_peak_bytes = meter.peak_bytes();
  return stats;
}

Tensors Program::run(const Tensors& args) const {
  return computegraph::run_compiled(compiled(graph_, *cache_), std::span<const Tensor>(args));
}

}  // namespace tenferro
