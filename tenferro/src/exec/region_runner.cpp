// The region runner (regions/region_runner.hpp): a body's program comes from the process-wide
// compile cache on first use, kept in the body (Body::program), and runs on the executor.
#include "regions/region_runner.hpp"

#include <mutex>

#include "computegraph/resolve.hpp"
#include "exec/executor.hpp"
#include "exec/scalar_program.hpp"
#include "tenferro/ops/std_tensor_op.hpp"
#include "tenferro/transforms.hpp"
#include "tenferro/ops/make.hpp"
#include "tenferro/program.hpp"

namespace tenferro {

namespace detail {
/// A body's compiled program, filled on first run.
struct BodyProgram {
  std::once_flag once;
  std::shared_ptr<const computegraph::CompiledProgram<StdTensorOp>> program;
};
}  // namespace detail

Body::Body(Region r) : region(std::move(r)), program(std::make_shared<detail::BodyProgram>()) {}

namespace detail {

BodyExecutable::BodyExecutable(std::shared_ptr<const exec::Executable> executable)
    : executable_(std::move(executable)), scalar_(executable_->scalar_program()) {}

std::vector<Tensor> BodyExecutable::run(std::span<const Tensor> inputs, std::span<Tensor> into) const {
  return executable_->run(inputs, into);
}

void BodyExecutable::run_raw(std::span<const void* const> inputs, std::span<void* const> outputs) const {
  scalar_->run_raw(inputs, outputs);
}

namespace {
/// The compiled program of a region's graph (its inputs in order), from the process-wide cache.
std::shared_ptr<const computegraph::CompiledProgram<StdTensorOp>> compile_region(const computegraph::GraphPtr<StdTensorOp>& g) {
  std::vector<TensorValueKey> leading;
  for (computegraph::LocalValueId id : g->inputs()) leading.push_back(g->key(id));
  const auto outputs = g->output_keys();
  return default_compile_cache()->get_or_compile(computegraph::resolve({g}), outputs, leading);
}
}  // namespace

BodyExecutable body_executable(const Body& body) {
  BodyProgram& p = *body.program;
  std::call_once(p.once, [&] { p.program = compile_region(body.region.graph()); });
  return BodyExecutable(exec::executable_for(*p.program));
}

std::size_t body_planned_transient_bytes(const computegraph::GraphPtr<StdTensorOp>& graph) {
  const auto executable = exec::executable_for(*compile_region(graph));
  const std::size_t peak = executable->planned_peak_bytes(), results = executable->bytes_written_into();
  return peak > results ? peak - results : 0;
}

std::vector<Tensor> run_body(const Body& body, std::span<const Tensor> inputs, std::span<Tensor> into) {
  return body_executable(body).run(inputs, into);
}

}  // namespace detail
}  // namespace tenferro
