// The executor of compiled tenferro programs (see executor.hpp) and its options.
#include "executor.hpp"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>

#include "fused_kernel.hpp"
#include "kernels/parallel.hpp"
#include "tenferro/threads.hpp"
#include "regions/region_runner.hpp"
#include "passes.hpp"
#include "scalar_program.hpp"
#include "tenferro/error.hpp"
#include "tenferro/ops/make.hpp"

namespace tenferro {

namespace {
ExecOptions options_from_environment() {
  ExecOptions o;
  const char* env = std::getenv("TENFERRO_PASSES_OFF");
  if (!env) return o;
  std::stringstream list(env);
  std::string item;
  while (std::getline(list, item, ',')) {
    const bool all = item == "all";
    if (all || item == "narrow_slices") o.narrow_slices = false;
    if (all || item == "run_concurrently") o.run_concurrently = false;
    if (all || item == "fold_transpose") o.fold_transpose = false;
    if (all || item == "fuse_elementwise") o.fuse_elementwise = false;
    if (all || item == "dce") o.eliminate_dead_code = false;
    if (all || item == "scalar_path") o.scalar_path = false;
    if (all || item == "compile_arithmetic") o.compile_arithmetic = false;
  }
  return o;
}

std::mutex options_mutex;
ExecOptions& current_options() {
  static ExecOptions options = options_from_environment();
  return options;
}

std::uint64_t tag_of(const ExecOptions& o) {
  return (o.fold_transpose ? 1u : 0u) | (o.fuse_elementwise ? 2u : 0u) | (o.eliminate_dead_code ? 4u : 0u) |
         (o.scalar_path ? 8u : 0u) | (o.compile_arithmetic ? 16u : 0u) | (o.narrow_slices ? 32u : 0u) | (o.run_concurrently ? 64u : 0u);
}
}  // namespace

ExecOptions exec_options() {
  std::lock_guard lock(options_mutex);
  return current_options();
}

void set_exec_options(const ExecOptions& options) {
  std::lock_guard lock(options_mutex);
  current_options() = options;
}

namespace {
/// TENFERRO_CHECK_PASSES=1: every run is repeated with fusion and dead-code elimination off, and
/// the results must agree bit for bit (the test suite runs once more this way).
bool check_passes() {
  static const bool on = [] {
    const char* env = std::getenv("TENFERRO_CHECK_PASSES");
    return env && std::string(env) == "1";
  }();
  return on;
}

void check_against_unfused(const computegraph::CompiledProgram<StdTensorOp>& program, std::span<const Tensor> inputs,
                           const std::vector<Tensor>& results) {
  ExecOptions plain = exec_options();
  plain.fuse_elementwise = false;
  plain.eliminate_dead_code = false;
  auto reference = program.attachment<exec::Executable>(tag_of(plain), [&] {
    return std::make_shared<const exec::Executable>(program, plain);
  });
  std::vector<Tensor> expected = reference->run(inputs);
  for (std::size_t o = 0; o < results.size(); ++o) {
    const Tensor& a = results[o];
    const Tensor& b = expected[o];
    if (a.type() == b.type() && std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0) continue;
    std::string where;
    for (std::int64_t i = 0; a.type() == b.type() && i < a.numel() && where.empty(); ++i) {
      const std::size_t size = dtype_size(a.dtype());
      if (std::memcmp(static_cast<const char*>(a.raw_data()) + i * static_cast<std::int64_t>(size),
                      static_cast<const char*>(b.raw_data()) + i * static_cast<std::int64_t>(size), size) != 0) {
        std::ostringstream os;
        os << "element " << i << ": " << a.element(i) << " fused vs " << b.element(i) << " unfused";
        where = os.str();
      }
    }
    throw computegraph::Error("exec: output " + std::to_string(o) + " (" + a.type().to_string() +
                              ") differs with fusion off: " + (where.empty() ? "types differ" : where) +
                              "\nfused program:\n" + exec::executable_for(program)->print());
  }
}
}  // namespace

std::vector<Tensor> StdTensorOp::run_compiled(const computegraph::CompiledProgram<StdTensorOp>& program,
                                              std::span<const Tensor> inputs) {
  std::vector<Tensor> results = exec::executable_for(program)->run(inputs);
  if (check_passes()) check_against_unfused(program, inputs, results);
  return results;
}

namespace exec {

Executable::Executable(const computegraph::CompiledProgram<StdTensorOp>& compiled, const ExecOptions& options) {
  for (const auto& key : compiled.input_keys()) input_names_.push_back(key.name + ": " + key.type.to_string());
  if (options.scalar_path) {
    if (auto scalar = ScalarProgram::lower(compiled)) scalar_ = std::make_unique<const ScalarProgram>(std::move(*scalar));
  }
  program_ = merge_scans(lower(compiled));
  if (options.narrow_slices) program_ = narrow_slices(std::move(program_));
  if (options.fold_transpose) program_ = fold_transposes(std::move(program_));
  if (options.fuse_elementwise) program_ = fuse_elementwise(std::move(program_));
  if (options.eliminate_dead_code) program_ = eliminate_dead_code(std::move(program_));
  if (options.run_concurrently) program_ = run_concurrently(std::move(program_));
  if (options.compile_arithmetic) program_ = compile_arithmetic(std::move(program_));
  verify(program_);

  // Each value is released after its last reader (or right after its producer if nothing reads
  // it); outputs are never released.
  is_output_.assign(program_.types.size(), 0);
  for (auto v : program_.outputs) is_output_[v] = 1;
  std::vector<std::size_t> last(program_.types.size(), program_.steps.size());
  for (std::size_t i = 0; i < program_.steps.size(); ++i) {
    for (auto v : program_.steps[i].out) last[v] = i;
    for (auto v : program_.steps[i].in) last[v] = i;
  }
  for (auto v : program_.inputs) {
    if (last[v] == program_.steps.size()) last[v] = 0;
  }
  releases_.assign(program_.steps.size(), {});
  for (ValueId v = 0; v < program_.types.size(); ++v) {
    if (!is_output_[v] && last[v] < program_.steps.size()) releases_[last[v]].push_back(v);
  }
  planned_peak_ = plan_peak();
}

std::size_t Executable::plan_peak() const {
  // Storage blocks: each value names its block; a block's bytes count while a value on it lives.
  const std::size_t none = SIZE_MAX;
  std::vector<std::size_t> block_of(program_.types.size(), none), holders, bytes;
  std::vector<char> from_caller;
  std::size_t live = 0, peak = 0;
  auto hold = [&](ValueId v, std::size_t block) {
    block_of[v] = block;
    ++holders[block];
  };
  auto allocate = [&](ValueId v) {
    std::size_t granted = 0;
    const std::size_t n = static_cast<std::size_t>(program_.types[v].numel()) * dtype_size(program_.types[v].dtype);
    if (n > 0) granted = n;  // the pool rounds up to its size classes; the plan counts what is asked
    holders.push_back(0);
    bytes.push_back(granted);
    from_caller.push_back(0);
    hold(v, holders.size() - 1);
    live += granted;
  };
  for (ValueId v : program_.inputs) {
    if (block_of[v] != none) continue;
    holders.push_back(0);
    bytes.push_back(0);
    from_caller.push_back(1);
    hold(v, holders.size() - 1);
  }
  auto release = [&](ValueId v) {
    const std::size_t block = block_of[v];
    if (block == none) return;
    block_of[v] = none;
    if (--holders[block] == 0) live -= bytes[block];
  };
  for (std::size_t i = 0; i < program_.steps.size(); ++i) {
    const Step& s = program_.steps[i];
    const auto& dying = releases_[i];
    for (std::size_t o = 0; o < s.out.size(); ++o) {
      const ValueId v = s.out[o];
      if (s.kind == StepKind::Op && (s.op.def->layout == Layout::Reshape || s.op.def->identity_on_values) &&
          !s.in.empty()) {
        hold(v, block_of[s.in[0]]);
        continue;
      }
      bool reused = false;
      if (s.kind == StepKind::Fused) {
        for (std::size_t a = 0; a < s.in.size() && !reused; ++a) {
          const ValueId w = s.in[a];
          const std::size_t block = block_of[w];
          if (s.fused->inputs[a].access != Access::Full || program_.types[w] != program_.types[v]) continue;
          if (std::find(dying.begin(), dying.end(), w) == dying.end() || from_caller[block] || holders[block] != 1) continue;
          if (std::count(s.in.begin(), s.in.end(), w) != 1) continue;
          hold(v, block);
          reused = true;
        }
      }
      if (!reused) allocate(v);
    }
    // An op that runs bodies holds, while it runs, what its largest body holds beyond its results.
    std::size_t transient = 0;
    if (s.kind == StepKind::Op && s.op.def->running_bytes) {
      transient = s.op.def->running_bytes(s.op);
    } else if (s.kind == StepKind::Op && s.op.def->regions) {
      for (const auto& g : s.op.def->regions(s.op)) transient = std::max(transient, tenferro::detail::body_planned_transient_bytes(g));
    }
    peak = std::max(peak, live + transient);
    for (ValueId v : dying) release(v);
  }
  return peak;
}

std::size_t Executable::bytes_written_into() const {
  if (scalar_) return 0;
  std::vector<char> fused(program_.types.size(), 0);
  for (const Step& s : program_.steps) {
    if (s.kind == StepKind::Fused) {
      for (ValueId v : s.out) fused[v] = 1;
    }
  }
  std::vector<char> seen(program_.types.size(), 0);
  std::size_t bytes = 0;
  for (ValueId v : program_.outputs) {
    if (!fused[v] || seen[v]) continue;
    seen[v] = 1;
    const TensorType& t = program_.types[v];
    bytes += static_cast<std::size_t>(t.numel()) * dtype_size(t.dtype);
  }
  return bytes;
}

Executable::~Executable() = default;

std::string Executable::print() const {
  return scalar_ ? scalar_->print() : to_string(program_);
}

void Executable::check_inputs(std::span<const Tensor> inputs) const {
  if (inputs.size() != program_.inputs.size()) {
    std::string names;
    for (const auto& n : input_names_) names += (names.empty() ? "" : ", ") + n;
    throw BindingError("run: expected " + std::to_string(program_.inputs.size()) + " inputs (" + names + "), got " +
                       std::to_string(inputs.size()));
  }
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const TensorType& want = program_.types[program_.inputs[i]];
    if (inputs[i].type() == want) continue;
    const std::string what = "run: input " + std::to_string(i) + " (" + input_names_[i] + ") got " +
                             inputs[i].type().to_string();
    if (inputs[i].dtype() != want.dtype) throw DTypeError(what + "; expected dtype " + dtype_name(want.dtype));
    throw ShapeError(what + "; expected shape " + shape_to_string(want.shape));
  }
}

namespace {
/// The per-run vectors of Executable::run, kept per thread and per nesting depth (a scan's body
/// runs inside the run of the program that holds the scan): a body run once per step of a loop
/// allocated six vectors each time, a fifth of an LSTM gradient's time in malloc and free. The
/// lease hands back its vectors empty of tensors, so nothing outlives a run.
struct RunScratch {
  std::vector<std::optional<Tensor>> slots;
  std::vector<const Tensor*> value;
  std::vector<const Tensor*> dest;
  std::vector<const Tensor*> args;
  std::vector<Tensor*> outs;
  std::vector<std::size_t> remaining;
};

class RunScratchLease {
 public:
  RunScratchLease() {
    if (depth() == stack().size()) stack().push_back(std::make_unique<RunScratch>());
    scratch_ = stack()[depth()++].get();
  }
  ~RunScratchLease() {
    scratch_->slots.clear();  // releases every tensor; the capacity stays
    --depth();
  }
  RunScratchLease(const RunScratchLease&) = delete;
  RunScratchLease& operator=(const RunScratchLease&) = delete;
  RunScratch* operator->() const { return scratch_; }

 private:
  static std::vector<std::unique_ptr<RunScratch>>& stack() {
    thread_local std::vector<std::unique_ptr<RunScratch>> scratch;
    return scratch;
  }
  static std::size_t& depth() {
    thread_local std::size_t d = 0;
    return d;
  }
  RunScratch* scratch_;
};

/// What a kernel's result slots hold before the kernel assigns them (kernels replace their results,
/// they never write into them): copies of one rank-0 tensor per thread, which cost a reference
/// count. A default-constructed Tensor allocates its scalar, once per operation run (the ADBench
/// LSTM's forward took 2-5% longer with them, its gradient 1-3%).
const Tensor& unset_result() {
  thread_local const Tensor placeholder;
  return placeholder;
}

/// Runs independent ops at the same time, one per thread of the pool (a Concurrent step). Each
/// kernel runs as it would alone: its nested parallel loops run on its own thread. A failure is
/// rethrown after all have run, the first member's first, as if they had run in order.
void run_concurrent(const std::vector<Step>& members, std::vector<const Tensor*>& value,
                    std::vector<std::optional<Tensor>>& slots) {
  const std::size_t n = members.size();
  std::vector<std::vector<const Tensor*>> args(n);
  std::vector<std::vector<Tensor>> results(n);
  std::vector<std::exception_ptr> errors(n);
  for (std::size_t m = 0; m < n; ++m) {
    for (auto v : members[m].in) args[m].push_back(value[v]);
    results[m].assign(members[m].out.size(), unset_result());
  }
  exec::parallel_chunks(static_cast<std::int64_t>(n), num_threads(), [&](std::int64_t c) {
    const auto m = static_cast<std::size_t>(c);
    try {
      members[m].op.run_kernel(args[m], results[m]);
    } catch (...) {
      errors[m] = std::current_exception();
    }
  });
  for (const auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
  for (std::size_t m = 0; m < n; ++m) {
    for (std::size_t o = 0; o < members[m].out.size(); ++o) {
      const ValueId v = members[m].out[o];
      slots[v] = std::move(results[m][o]);
      value[v] = &*slots[v];
    }
  }
}
}  // namespace

std::vector<Tensor> Executable::run(std::span<const Tensor> inputs, std::span<Tensor> into) const {
  check_inputs(inputs);
  if (!into.empty() && into.size() != program_.outputs.size()) {
    throw BindingError("run: " + std::to_string(into.size()) + " output tensors given for " +
                       std::to_string(program_.outputs.size()) + " outputs");
  }
  for (std::size_t o = 0; o < into.size(); ++o) {
    if (into[o].type() != program_.types[program_.outputs[o]]) {
      throw ShapeError("run: output " + std::to_string(o) + " is " + into[o].type().to_string() + ", expected " +
                       program_.types[program_.outputs[o]].to_string());
    }
  }
  std::vector<Tensor> results;
  if (scalar_) {
    results = scalar_->run(inputs);
  } else {
    RunScratchLease lease;
    // value[v] is where value v lives: the caller's input tensor (read in place: copying each
    // input cost two atomic reference-count updates per run, most of a small loop body's run),
    // or slots[v], which holds the values this run computes. `slots` is sized once, so pointers
    // into it stay valid.
    std::vector<std::optional<Tensor>>& slots = lease->slots;
    slots.resize(program_.types.size());
    std::vector<const Tensor*>& value = lease->value;
    value.assign(program_.types.size(), nullptr);
    for (std::size_t i = 0; i < inputs.size(); ++i) value[program_.inputs[i]] = &inputs[i];
    // Outputs the caller provides storage for, by value (the first occurrence of each).
    std::vector<const Tensor*>& dest = lease->dest;
    dest.assign(program_.types.size(), nullptr);
    for (std::size_t o = 0; o < into.size(); ++o) {
      if (!dest[program_.outputs[o]]) dest[program_.outputs[o]] = &into[o];
    }
    std::vector<const Tensor*>& args = lease->args;
    std::vector<Tensor*>& outs = lease->outs;
    for (std::size_t i = 0; i < program_.steps.size(); ++i) {
      const Step& s = program_.steps[i];
      args.clear();
      for (auto v : s.in) args.push_back(value[v]);
      // Operands have the op's built types (inputs were checked above; every other value is a
      // result of its step's built type), so the kernel runs without re-deriving them.
      if (s.kind == StepKind::Op && s.out.size() == 1) {
        Tensor result[1] = {unset_result()};
        s.op.run_kernel(args, result);
        slots[s.out[0]] = std::move(result[0]);
        value[s.out[0]] = &*slots[s.out[0]];
      } else if (s.kind == StepKind::Op) {  // a multi-output op
        std::vector<Tensor> results_of_op(s.out.size(), unset_result());
        s.op.run_kernel(args, results_of_op);
        for (std::size_t o = 0; o < s.out.size(); ++o) {
          slots[s.out[o]] = std::move(results_of_op[o]);
          value[s.out[o]] = &*slots[s.out[o]];
        }
      } else if (s.kind == StepKind::Concurrent) {
        run_concurrent(*s.members, value, slots);
      } else {
        const auto& dying = releases_[i];
        for (std::size_t o = 0; o < s.out.size(); ++o) {
          const ValueId v = s.out[o];
          const TensorType& type = program_.types[v];
          if (dest[v]) {
            slots[v] = *dest[v];
            value[v] = &*slots[v];
            continue;
          }
          // In place: a full-access operand of the same type that dies here and that nothing
          // outside this run holds (never the caller's inputs, which have no slot).
          for (std::size_t a = 0; a < s.in.size() && !slots[v]; ++a) {
            const ValueId w = s.in[a];
            if (!slots[w] || s.fused->inputs[a].access != Access::Full || slots[w]->type() != type) continue;
            if (std::find(dying.begin(), dying.end(), w) == dying.end() || !slots[w]->unique_storage()) continue;
            if (std::count(s.in.begin(), s.in.end(), w) != 1) continue;
            slots[v] = *slots[w];  // now shared: no second output can take it
          }
          if (!slots[v]) slots[v] = Tensor::uninitialized(type);
          value[v] = &*slots[v];
        }
        args.clear();
        for (auto w : s.in) args.push_back(value[w]);
        outs.clear();
        for (auto v : s.out) outs.push_back(&*slots[v]);
        run_fused(*s.fused, args, outs);
      }
      for (auto v : releases_[i]) slots[v].reset();
    }
    results.reserve(program_.outputs.size());
    std::vector<std::size_t>& remaining = lease->remaining;
    remaining.assign(program_.types.size(), 0);
    for (auto v : program_.outputs) ++remaining[v];
    for (auto v : program_.outputs) {
      if (!slots[v]) {
        results.push_back(*value[v]);  // an input returned as it is
      } else {
        results.push_back(--remaining[v] == 0 ? std::move(*slots[v]) : *slots[v]);
      }
    }
  }
  for (std::size_t o = 0; o < into.size(); ++o) {
    if (!results[o].shares_storage_with(into[o])) std::memcpy(into[o].raw_data(), results[o].raw_data(), into[o].nbytes());
    results[o] = into[o];
  }
  return results;
}

std::shared_ptr<const Executable> executable_for(const computegraph::CompiledProgram<StdTensorOp>& program) {
  const ExecOptions options = exec_options();
  return program.attachment<Executable>(tag_of(options), [&] {
    return std::make_shared<const Executable>(program, options);
  });
}

}  // namespace exec
}  // namespace tenferro
