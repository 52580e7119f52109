#pragma once
// Internal: the executor of compiled tenferro programs.
//
// An Executable is built once per compiled program and option set: lowering, the passes, then a
// run plan (the values each step releases). A program whose values are all rank-0 runs on the
// compact scalar interpreter instead (scalar_program.hpp), when the scalar path is on. Running it does no graph work: it walks the steps,
// takes each fused kernel's outputs from the buffer pool (or, in place, from an input that dies
// at that step and that nothing else holds), runs the kernels, and drops every value right after
// its last use so that its buffer goes back to the pool.
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "computegraph/compiled_program.hpp"
#include "exec_program.hpp"
#include "tenferro/exec_options.hpp"
#include "tenferro/ops/make.hpp"

namespace tenferro::exec {

class ScalarProgram;

class Executable {
 public:
  Executable(const computegraph::CompiledProgram<StdTensorOp>& program, const ExecOptions& options);
  ~Executable();

  /// Runs with inputs by position (CompiledProgram::run's contract). If `into` is not empty it
  /// holds one tensor per output, of the output's type, and results are written into its storage.
  std::vector<Tensor> run(std::span<const Tensor> inputs, std::span<Tensor> into = {}) const;

  const ExecProgram& program() const { return program_; }
  /// Whether runs go through the compact scalar interpreter (every value is rank-0).
  bool uses_scalar_path() const { return scalar_ != nullptr; }
  /// The compact scalar program runs go through, or nullptr.
  const ScalarProgram* scalar_program() const { return scalar_.get(); }
  /// The program after the passes, as text.
  std::string print() const;
  /// The peak bytes of tensor storage a run allocates, by the run plan: each step's results are
  /// allocated (a fused result in place of a dying unshared operand of its type, as run() does;
  /// a reshape or an identity on values shares its operand's storage) and storage goes back when
  /// the last value on it is released. The caller's inputs do not count, and neither does what
  /// kernels allocate for themselves (packed copies, LAPACK workspaces, the values inside a
  /// control-flow body): those make the measured peak exceed the plan. Results are counted
  /// (their storage is handed to the caller).
  std::size_t planned_peak_bytes() const { return planned_peak_; }
  /// The bytes of the results that run() writes straight into storage the caller gives (`into`):
  /// those of fused steps. The others are computed in storage of their own and copied, so they
  /// count towards a run's peak even with `into`.
  std::size_t bytes_written_into() const;

 private:
  void check_inputs(std::span<const Tensor> inputs) const;
  std::size_t plan_peak() const;

  ExecProgram program_;
  std::vector<std::vector<ValueId>> releases_;  // per step: values dead after it
  std::vector<char> is_output_;
  std::vector<std::string> input_names_;
  std::unique_ptr<const ScalarProgram> scalar_;
  std::size_t planned_peak_ = 0;
};

/// The executable of `program` for the current options, built on first use and kept with the
/// program.
std::shared_ptr<const Executable> executable_for(const computegraph::CompiledProgram<StdTensorOp>& program);

}  // namespace tenferro::exec
