// Lowering a compiled program into the executor's IR, and printing and checking that IR.
#include "exec_program.hpp"

#include "arith_jit.hpp"

#include <numeric>
#include <sstream>

#include "computegraph/error.hpp"
#include "tenferro/ops/make.hpp"

namespace tenferro::exec {

namespace {
bool is_real_float(DType d) { return d == DType::F32 || d == DType::F64; }

bool all_dtype(std::span<const DType> dtypes, DType d) {
  for (DType t : dtypes) {
    if (t != d) return false;
  }
  return true;
}

/// A full reduction (every axis summed) of a non-scalar f32/f64 value.
bool is_sum_all(const StdTensorOp& op, const TensorType& operand) {
  return op.def->fusion == Fusion::SumReduction && is_real_float(operand.dtype) && operand.rank() > 0 &&
         op.attrs.get<ReduceAxes>().axes.size() == operand.rank() && operand.numel() > 0;
}

const char* access_name(Access a) {
  switch (a) {
    case Access::Full: return "full";
    case Access::Scalar: return "scalar";
    case Access::Inner: return "inner";
    case Access::Outer: return "outer";
    case Access::Strided: return "strided";
  }
  return "?";
}
}  // namespace

DType convert_compute_dtype(DType from, DType to) {
  if (to == DType::Bool) return from;
  if (from == DType::Bool) return to;
  return from == DType::F64 || to == DType::F64 ? DType::F64 : DType::F32;
}

bool readable_as(DType source, DType kernel) {
  return source == kernel || source == DType::Bool || (source == DType::F32 && kernel == DType::F64);
}

namespace {
/// The formula a fused instruction of `op` evaluates, or nullptr if `op` is not fusible at all.
const ElementFormula* fused_formula(const StdTensorOp& op) {
  if (op.def->fusion != Fusion::Elementwise || !op.def->formula) return nullptr;
  return &*op.def->formula;
}
}  // namespace

bool fusible_kind(const StdTensorOp& op, std::span<const DType> operand_dtypes) {
  const ElementFormula* f = fused_formula(op);
  if (f == nullptr) return false;
  const bool same_real = is_real_float(op.out.dtype) && all_dtype(operand_dtypes, op.out.dtype);
  switch (f->fast) {
    case ElementFast::None: return same_real && f->covers(op.out.dtype);
    case ElementFast::Compare:
      return is_real_float(operand_dtypes[0]) && all_dtype(operand_dtypes, operand_dtypes[0]);
    case ElementFast::Select:
      return is_real_float(op.out.dtype) && operand_dtypes[0] == DType::Bool && operand_dtypes[1] == op.out.dtype &&
             operand_dtypes[2] == op.out.dtype;
    case ElementFast::Convert: {  // between f32, f64 and bool, at least one side a float
      const DType from = operand_dtypes[0], to = op.out.dtype;
      auto ok = [](DType d) { return is_real_float(d) || d == DType::Bool; };
      return ok(from) && ok(to) && (is_real_float(from) || is_real_float(to));
    }
    case ElementFast::Zero:  // imag of a real value: a constant, left to its kernel
    case ElementFast::Dot: return false;
    case ElementFast::Add: case ElementFast::Mul: case ElementFast::Div: case ElementFast::Neg:
    case ElementFast::Identity: case ElementFast::Abs: case ElementFast::Sign: case ElementFast::Maximum:
    case ElementFast::Minimum: case ElementFast::Clamp: case ElementFast::Exp: case ElementFast::Log:
    case ElementFast::Sin: case ElementFast::Cos: case ElementFast::Tanh: case ElementFast::Sqrt:
    case ElementFast::Rsqrt: case ElementFast::Pow: case ElementFast::Expm1: case ElementFast::Log1p:
      return same_real;
  }
  return false;
}

bool single_op_kernel(const StdTensorOp& op, std::span<const DType> operand_dtypes, Trig trig, FusedKernel& k) {
  if (op.out.numel() == 0 || !fusible_kind(op, operand_dtypes)) return false;
  const ElementFormula& f = *fused_formula(op);
  k.dtype = f.fast == ElementFast::Compare   ? operand_dtypes[0]
            : f.fast == ElementFast::Convert ? convert_compute_dtype(operand_dtypes[0], op.out.dtype)
                                             : op.out.dtype;
  k.size = op.out.numel();
  k.inputs.assign(operand_dtypes.size(), FusedInput{});
  const auto dst = static_cast<std::uint16_t>(operand_dtypes.size());
  FusedInstr ins;
  ins.fast = f.fast;
  ins.param = f.param != nullptr ? f.param(op.attrs) : std::uint8_t{0};
  ins.trig = trig;
  ins.dst = dst;
  ins.a = 0;
  ins.b = 1;
  ins.c = 2;
  ins.to = op.out.dtype;
  ins.arity = static_cast<std::uint8_t>(op.def->arity());
  ins.formula = &f;
  ins.def = op.def;
  k.code.assign(1, ins);
  k.outputs.assign(1, {dst, OutputMode::Store});
  k.register_count = static_cast<std::uint16_t>(dst + 1);
  return true;
}

bool sum_all_kernel(const StdTensorOp& op, const TensorType& operand, FusedKernel& k) {
  if (!is_sum_all(op, operand)) return false;
  k.dtype = operand.dtype;
  k.size = operand.numel();
  k.inputs.assign(1, FusedInput{});
  k.code.clear();
  k.outputs.assign(1, {0, OutputMode::SumAll});
  k.register_count = 1;
  return true;
}

ExecProgram lower(const computegraph::CompiledProgram<StdTensorOp>& program) {
  ExecProgram p;
  p.types.resize(program.slot_count());
  const auto& input_slots = program.input_slots();
  for (std::size_t i = 0; i < input_slots.size(); ++i) {
    p.types[input_slots[i]] = program.input_keys()[i].type;
    p.inputs.push_back(input_slots[i]);
  }
  const auto& instructions = program.instructions();
  // Slots that hold the same value as an earlier slot (results of stop_gradient) read that slot.
  std::vector<ValueId> same_value(program.slot_count());
  std::iota(same_value.begin(), same_value.end(), ValueId{0});
  // Values with both a sin and a cos (of a real float dtype, so fusible): bit 0 sin, bit 1 cos.
  std::vector<std::uint8_t> trig_uses(program.slot_count(), 0);
  auto trig_of = [](const StdTensorOp& op) {
    const ElementFormula* f = fused_formula(op);
    const bool trig = f != nullptr && (f->fast == ElementFast::Sin || f->fast == ElementFast::Cos);
    return trig && is_real_float(op.out.dtype) && op.out.numel() > 0 ? (f->fast == ElementFast::Sin ? 1 : 2) : 0;
  };
  for (std::size_t i = 0; i < instructions.size(); ++i) {
    trig_uses[program.operands(i).empty() ? 0 : program.operands(i)[0]] |= trig_of(instructions[i].operation);
  }
  for (std::size_t i = 0; i < instructions.size(); ++i) {
    const auto& ins = instructions[i];
    Step step;
    for (auto s : program.operands(i)) step.in.push_back(same_value[s]);
    if (ins.operation.def->identity_on_values) {  // the identity on values: no step
      same_value[ins.first_output] = step.in[0];
      p.types[ins.first_output] = ins.operation.out;
      continue;
    }
    for (std::uint32_t k = 0; k < ins.output_count; ++k) {
      step.out.push_back(ins.first_output + k);
      p.types[ins.first_output + k] = ins.operation.output_type(k);
    }
    const StdTensorOp& op = ins.operation;
    // A tensor of zeros becomes a scalar zero broadcast, which fused kernels read in place (the
    // zeros of a ReLU's or a select's derivative are never written out); only its readers that
    // are not fused materialize it, as the broadcast.
    if (op.def->all_zeros && op.out.rank() > 0 && op.out.numel() > 1) {
      const TensorType scalar{op.out.dtype, {}};
      const auto zero = static_cast<ValueId>(p.types.size());
      p.types.push_back(scalar);
      Step fill;
      fill.op = ops::zeros(scalar);
      fill.out = {zero};
      p.steps.push_back(std::move(fill));
      step.op = ops::broadcast_in_dim(scalar, op.out.shape, {});
      step.in = {zero};
      p.steps.push_back(std::move(step));
      continue;
    }
    std::vector<DType> operand_dtypes;
    for (auto v : step.in) operand_dtypes.push_back(p.types[v].dtype);
    const Trig trig = trig_of(op) != 0 && trig_uses[step.in[0]] == 3 ? Trig::SinCosHalf : Trig::Separate;
    auto k = std::make_shared<FusedKernel>();
    if (single_op_kernel(op, operand_dtypes, trig, *k) ||
        (!step.in.empty() && sum_all_kernel(op, p.types[step.in[0]], *k))) {
      step.kind = StepKind::Fused;
      step.fused = std::move(k);
    } else {
      step.op = op;
    }
    p.steps.push_back(std::move(step));
  }
  for (auto s : program.output_slots()) p.outputs.push_back(same_value[s]);
  return p;
}

std::string to_string(const ExecProgram& p) {
  std::ostringstream os;
  auto list = [&](const std::vector<ValueId>& values) {
    for (std::size_t i = 0; i < values.size(); ++i) os << (i ? ", " : "") << '%' << values[i];
  };
  os << "exec(";
  for (std::size_t i = 0; i < p.inputs.size(); ++i) {
    os << (i ? ", " : "") << '%' << p.inputs[i] << ": " << p.types[p.inputs[i]].to_string();
  }
  os << ") {\n";
  for (const Step& s : p.steps) {
    os << "  ";
    list(s.out);
    os << " = ";
    if (s.kind == StepKind::Op) {
      os << s.op.name() << '(';
      list(s.in);
      os << ')';
    } else if (s.kind == StepKind::Concurrent) {
      os << "concurrent {";
      for (std::size_t m = 0; m < s.members->size(); ++m) {
        const Step& member = (*s.members)[m];
        os << (m ? "; " : "");
        list(member.out);
        os << " = " << member.op.name() << '(';
        list(member.in);
        os << ')';
      }
      os << '}';
    } else {
      const FusedKernel& k = *s.fused;
      os << "fused[" << dtype_name(k.dtype) << " x " << k.size << "](";
      for (std::size_t i = 0; i < s.in.size(); ++i) {
        os << (i ? ", " : "") << '%' << s.in[i];
        const FusedInput& in = k.inputs[i];
        if (in.access != Access::Full) os << ' ' << access_name(in.access);
        if (in.access == Access::Inner || in.access == Access::Outer) os << '/' << in.period;
        if (in.access == Access::Strided) {  // extents x strides: strided[6x2x6x2 : 6,0,1,0]
          os << '[';
          for (std::size_t d = 0; d < in.rank; ++d) os << (d ? "x" : "") << in.extent[d];
          os << " : ";
          for (std::size_t d = 0; d < in.rank; ++d) os << (d ? "," : "") << in.stride[d];
          os << ']';
        }
      }
      os << ") {";
      // A compiled run (arith_jit.hpp) prints as compiled(...) around its instructions.
      std::vector<char> opens(k.code.size() + 1, 0), closes(k.code.size() + 1, 0);
      if (k.compiled != nullptr) {
        for (const CompiledRun& run : k.compiled->runs) {
          opens[run.begin] = 1;
          closes[run.end] = 1;
        }
      }
      for (std::size_t c = 0; c < k.code.size(); ++c) {
        const FusedInstr& in = k.code[c];
        const std::size_t arity = in.arity;
        if (closes[c]) os << ')';
        os << (c ? "; " : " ") << (opens[c] ? "compiled(" : "") << 'r' << in.dst;
        if (in.trig == Trig::SinCosPair) {
          os << ", r" << in.c << " = sincos r" << in.a;
          continue;
        }
        os << " = " << in.def->name;
        if (in.fast == ElementFast::Compare) os << '[' << compare_dir_name(static_cast<CompareDir>(in.param)) << ']';
        if (in.fast == ElementFast::Convert) os << '[' << dtype_name(in.to) << ']';
        if (in.trig == Trig::SinCosHalf) os << "[sincos]";
        os << " r" << in.a;
        if (arity > 1) os << " r" << in.b;
        if (arity > 2) os << " r" << in.c;
      }
      if (closes[k.code.size()]) os << ')';
      os << (k.code.empty() ? "" : " ") << "} -> ";
      for (std::size_t o = 0; o < k.outputs.size(); ++o) {
        os << (o ? ", " : "") << (k.outputs[o].mode == OutputMode::SumAll ? "sum " : "") << 'r'
           << k.outputs[o].reg;
      }
    }
    os << " : ";
    for (std::size_t i = 0; i < s.out.size(); ++i) os << (i ? ", " : "") << p.types[s.out[i]].to_string();
    os << '\n';
  }
  os << "  return ";
  list(p.outputs);
  os << "\n}\n";
  return os.str();
}

void verify(const ExecProgram& p) {
  std::vector<char> written(p.types.size(), 0);
  auto fail = [](const std::string& what) { throw computegraph::GraphError("exec::verify: " + what); };
  for (auto v : p.inputs) {
    if (v >= written.size() || written[v]) fail("input %" + std::to_string(v) + " is invalid or repeated");
    written[v] = 1;
  }
  for (std::size_t i = 0; i < p.steps.size(); ++i) {
    const Step& s = p.steps[i];
    for (auto v : s.in) {
      if (v >= written.size() || !written[v]) {
        fail("step " + std::to_string(i) + " reads %" + std::to_string(v) + " before it is written");
      }
    }
    if (s.kind == StepKind::Fused && (s.fused->inputs.size() != s.in.size() || s.fused->outputs.size() != s.out.size())) {
      fail("step " + std::to_string(i) + ": fused kernel arity does not match its operands");
    }
    for (auto v : s.out) {
      if (v >= written.size() || written[v]) fail("step " + std::to_string(i) + " writes %" + std::to_string(v) + " twice");
      written[v] = 1;
    }
  }
  for (auto v : p.outputs) {
    if (v >= written.size() || !written[v]) fail("output %" + std::to_string(v) + " is never written");
  }
}

}  // namespace tenferro::exec
