#pragma once
// Internal: the seam between the ops that run bodies (ops/scan.cpp, ops/cond.cpp,
// ops/while_loop.cpp) and the executor. Declared here, below both; defined in
// exec/region_runner.cpp. The executor's types stay opaque (forward declarations only), so the
// ops never include exec/.
#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "tenferro/ops/control_attrs.hpp"
#include "tenferro/tensor.hpp"

namespace tenferro::exec {
class Executable;
class ScalarProgram;
}  // namespace tenferro::exec

namespace tenferro::detail {

/// A body's program for the current executor options, ready to run (copies share it).
class BodyExecutable {
 public:
  explicit BodyExecutable(std::shared_ptr<const exec::Executable> executable);

  /// Runs with inputs by position (one per region input); if `into` is not empty, writes the
  /// results into it (one tensor per region output).
  std::vector<Tensor> run(std::span<const Tensor> inputs, std::span<Tensor> into = {}) const;

  /// Whether every value of the body is rank-0, so that run_raw can run it on the scalar
  /// interpreter's registers.
  bool runs_raw() const { return scalar_ != nullptr; }
  /// For a body that runs_raw(): inputs[i] and outputs[k] point at one element of input i's and
  /// output k's dtype; no checks and no Tensor per value (exec::ScalarProgram::run_raw). Inputs
  /// are all read before any output is written, so an output may point at an input.
  void run_raw(std::span<const void* const> inputs, std::span<void* const> outputs) const;

 private:
  std::shared_ptr<const exec::Executable> executable_;
  const exec::ScalarProgram* scalar_ = nullptr;
};

/// The executable of a body's program for the current executor options: the process-wide
/// compile cache compiles it on first use (equal bodies share it).
BodyExecutable body_executable(const Body& body);

/// The bytes a run of the region `graph` into storage the op gives (BodyExecutable::run's `into`)
/// holds at its peak beyond that storage: the run plan's peak (exec::Executable::planned_peak_bytes)
/// less the results written straight into it (those of fused steps; the others are computed apart
/// and copied). What an op that runs the body adds to its program's planned peak while it runs.
/// Compiles the body through the same cache as body_executable.
std::size_t body_planned_transient_bytes(const computegraph::GraphPtr<StdTensorOp>& graph);

/// Runs a body on `inputs` (one per region input); if `into` is not empty, writes the results
/// into it (one tensor per region output). The body's program comes from the process-wide
/// compile cache on first use (equal bodies share it) and runs on tenferro's executor.
std::vector<Tensor> run_body(const Body& body, std::span<const Tensor> inputs, std::span<Tensor> into = {});

}  // namespace tenferro::detail
