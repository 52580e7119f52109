// The fast scalar path (see scalar_program.hpp): lowering, the interpreter loop, run and print.
#include "exec/scalar_program.hpp"

#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>
#include <unordered_map>

namespace tenferro::exec {

namespace {

using Op = ScalarOpcode;
constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();

struct OpcodeInfo {
  const char* name;
  std::uint8_t arity;
};
constexpr OpcodeInfo kOpcodeInfo[] = {
#define TENFERRO_SCALAR_INFO(name, str, arity) {str, arity},
    TENFERRO_SCALAR_OPCODES(TENFERRO_SCALAR_INFO)
#undef TENFERRO_SCALAR_INFO
};
const OpcodeInfo& info(Op op) { return kOpcodeInfo[static_cast<std::size_t>(op)]; }

bool supported(DType d) { return d == DType::F64 || d == DType::F32 || d == DType::I64 || d == DType::Bool; }

/// The typed opcode of a formula's fast form on dtype d, or nullopt (lower() handles the fast
/// forms that are not one typed opcode: compare, select, convert, identity, zero).
std::optional<Op> typed_opcode(ElementFast fast, DType d) {
  auto pick = [&](Op f64, Op f32, std::optional<Op> i64) -> std::optional<Op> {
    switch (d) {
      case DType::F64: return f64;
      case DType::F32: return f32;
      case DType::I64: return i64;
      case DType::Bool:
      case DType::C64:
      case DType::C128: return std::nullopt;
    }
    return std::nullopt;
  };
  constexpr std::optional<Op> none;
  switch (fast) {
    case ElementFast::Add: return pick(Op::F64Add, Op::F32Add, Op::I64Add);
    case ElementFast::Mul: return pick(Op::F64Mul, Op::F32Mul, Op::I64Mul);
    case ElementFast::Neg: return pick(Op::F64Neg, Op::F32Neg, Op::I64Neg);
    case ElementFast::Div: return pick(Op::F64Div, Op::F32Div, none);
    case ElementFast::Abs: return pick(Op::F64Abs, Op::F32Abs, Op::I64Abs);
    case ElementFast::Sign: return pick(Op::F64Sign, Op::F32Sign, Op::I64Sign);
    case ElementFast::Maximum: return pick(Op::F64Max, Op::F32Max, Op::I64Max);
    case ElementFast::Minimum: return pick(Op::F64Min, Op::F32Min, Op::I64Min);
    case ElementFast::Clamp: return pick(Op::F64Clamp, Op::F32Clamp, Op::I64Clamp);
    case ElementFast::Exp: return pick(Op::F64Exp, Op::F32Exp, none);
    case ElementFast::Log: return pick(Op::F64Log, Op::F32Log, none);
    case ElementFast::Sin: return pick(Op::F64Sin, Op::F32Sin, none);
    case ElementFast::Cos: return pick(Op::F64Cos, Op::F32Cos, none);
    case ElementFast::Tanh: return pick(Op::F64Tanh, Op::F32Tanh, none);
    case ElementFast::Sqrt: return pick(Op::F64Sqrt, Op::F32Sqrt, none);
    case ElementFast::Rsqrt: return pick(Op::F64Rsqrt, Op::F32Rsqrt, none);
    case ElementFast::Pow: return pick(Op::F64Pow, Op::F32Pow, none);
    case ElementFast::Expm1: return pick(Op::F64Expm1, Op::F32Expm1, none);
    case ElementFast::Log1p: return pick(Op::F64Log1p, Op::F32Log1p, none);
    case ElementFast::Dot: return pick(Op::F64Dot, Op::F32Dot, Op::I64Dot);
    case ElementFast::None:
    case ElementFast::Identity:
    case ElementFast::Zero:
    case ElementFast::Compare:
    case ElementFast::Select:
    case ElementFast::Convert: return std::nullopt;
  }
  return std::nullopt;
}

/// compare[dir] on operands of dtype d: six consecutive opcodes per dtype, in CompareDir order.
std::optional<Op> compare_opcode(CompareDir dir, DType d) {
  Op first{};
  switch (d) {
    case DType::F64: first = Op::F64Eq; break;
    case DType::F32: first = Op::F32Eq; break;
    case DType::I64: first = Op::I64Eq; break;
    case DType::Bool: first = Op::BoolEq; break;
    case DType::C64:
    case DType::C128: return std::nullopt;
  }
  return static_cast<Op>(static_cast<unsigned>(first) + static_cast<unsigned>(dir));
}

/// convert between two different supported dtypes: three consecutive opcodes per source dtype,
/// targets in the order f64, f32, i64, bool with the source itself left out.
std::optional<Op> convert_opcode(DType from, DType to) {
  constexpr DType kOrder[] = {DType::F64, DType::F32, DType::I64, DType::Bool};
  constexpr Op kFirst[] = {Op::F64ToF32, Op::F32ToF64, Op::I64ToF64, Op::BoolToF64};
  if (!supported(from) || !supported(to) || from == to) return std::nullopt;
  unsigned fi = 0, k = 0;
  while (kOrder[fi] != from) ++fi;
  for (DType t : kOrder) {
    if (t == to) break;
    if (t != from) ++k;
  }
  return static_cast<Op>(static_cast<unsigned>(kFirst[fi]) + k);
}

ScalarReg read_scalar(const Tensor& t) {
  ScalarReg v{};
  switch (t.dtype()) {
    case DType::F64: v.f64 = *static_cast<const double*>(t.raw_data()); break;
    case DType::F32: v.f32 = *static_cast<const float*>(t.raw_data()); break;
    case DType::I64: v.i64 = *static_cast<const std::int64_t*>(t.raw_data()); break;
    case DType::Bool: v.b = *static_cast<const bool*>(t.raw_data()); break;
    case DType::C64:
    case DType::C128: break;  // never: lower() rejects complex values
  }
  return v;
}

Tensor write_scalar(DType d, const ScalarReg& v) {
  Tensor t = Tensor::uninitialized(TensorType{d, {}});
  switch (d) {
    case DType::F64: *static_cast<double*>(t.raw_data()) = v.f64; break;
    case DType::F32: *static_cast<float*>(t.raw_data()) = v.f32; break;
    case DType::I64: *static_cast<std::int64_t*>(t.raw_data()) = v.i64; break;
    case DType::Bool: *static_cast<bool*>(t.raw_data()) = v.b; break;
    case DType::C64:
    case DType::C128: break;
  }
  return t;
}

/// Lowering state, in provisional register numbers (renumbered at the end so that constants come
/// first).
struct Lowering {
  std::vector<ScalarReg> values;      // constant values (others unused)
  std::vector<DType> dtypes;
  std::vector<std::uint8_t> is_const;
  std::vector<ScalarInstruction> code;
  std::vector<ScalarKernelCall> calls;
  ScalarFunctions functions;

  std::uint32_t new_reg(DType d, bool constant, ScalarReg v = {}) {
    values.push_back(v);
    dtypes.push_back(d);
    is_const.push_back(constant ? 1 : 0);
    return static_cast<std::uint32_t>(values.size() - 1);
  }
  /// r = op(operands): evaluated now into a constant register when every operand is constant.
  /// `c`: the c field of an instruction with fewer than three register operands (F64Call's op).
  std::uint32_t emit(Op op, DType d, std::span<const std::uint32_t> operands, std::uint32_t c = 0) {
    ScalarInstruction ins{op, 0, 0, 0, 0, c};
    bool all_const = true;
    std::uint32_t* fields[] = {&ins.a, &ins.b, &ins.c};
    for (std::size_t k = 0; k < operands.size(); ++k) {
      *fields[k] = operands[k];
      all_const = all_const && is_const[operands[k]];
    }
    ins.dst = new_reg(d, all_const);
    if (all_const) {
      execute(&ins, &ins + 1, values.data(), calls.data(), functions);
    } else {
      code.push_back(ins);
    }
    return ins.dst;
  }
  /// The registers of op's results, computed by its tensor kernel: now, into constant registers,
  /// when every operand is constant, else by a Kernel instruction.
  std::vector<std::uint32_t> emit_kernel(const StdTensorOp& op, std::span<const std::uint32_t> operands) {
    ScalarKernelCall call{op, {operands.begin(), operands.end()}, {}, {}};
    bool all_const = true;
    for (std::uint32_t reg : operands) {
      call.in_dtypes.push_back(dtypes[reg]);
      all_const = all_const && is_const[reg];
    }
    for (std::size_t slot = 0; slot < op.output_count(); ++slot) {
      call.out.push_back(new_reg(op.output_type(slot).dtype, all_const));
    }
    if (all_const) {
      call.run(values.data());
    } else {
      code.push_back({Op::Kernel, 0, call.out[0], 0, 0, static_cast<std::uint32_t>(calls.size())});
      calls.push_back(call);
    }
    return call.out;
  }
};

std::string format_value(DType d, const ScalarReg& v) {
  char buf[64];
  switch (d) {
    case DType::F64: std::snprintf(buf, sizeof buf, "%.17g", v.f64); break;
    case DType::F32: std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(v.f32)); break;
    case DType::I64: std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v.i64)); break;
    case DType::Bool: return v.b ? "true" : "false";
    case DType::C64:
    case DType::C128: return "?";
  }
  return buf;
}

}  // namespace

namespace {
/// sin(x) and cos(x) of one f64 register (a gradient program has both: sin on the way forward, its
/// derivative cos on the way back) become one sincos at the sin's place. Registers are written
/// once, so the cos result may be written early.
void fuse_sin_cos(std::vector<ScalarInstruction>& code) {
  std::unordered_map<std::uint32_t, std::size_t> sin_of;  // operand register -> sin instruction
  std::vector<char> dropped(code.size(), 0);
  for (std::size_t i = 0; i < code.size(); ++i) {
    if (code[i].op == ScalarOpcode::F64Sin) {
      sin_of.emplace(code[i].a, i);
    } else if (code[i].op == ScalarOpcode::F64Cos) {
      auto it = sin_of.find(code[i].a);
      if (it == sin_of.end() || code[it->second].op != ScalarOpcode::F64Sin) continue;
      code[it->second].op = ScalarOpcode::F64SinCos;
      code[it->second].c = code[i].dst;
      dropped[i] = 1;
    }
  }
  std::size_t k = 0;
  for (std::size_t i = 0; i < code.size(); ++i) {
    if (!dropped[i]) code[k++] = code[i];
  }
  code.resize(k);
}
}  // namespace

std::uint32_t ScalarFunctions::index_of(const OpDef* def) {
  for (std::size_t k = 0; k < defs.size(); ++k) {
    if (defs[k] == def) return static_cast<std::uint32_t>(k);
  }
  defs.push_back(def);
  f64.push_back(def->formula->f64);
  f32.push_back(def->formula->f32);
  return static_cast<std::uint32_t>(defs.size() - 1);
}

void ScalarKernelCall::run(ScalarReg* r) const {
  std::vector<Tensor> operands;
  operands.reserve(in.size());
  for (std::size_t k = 0; k < in.size(); ++k) operands.push_back(write_scalar(in_dtypes[k], r[in[k]]));
  std::vector<const Tensor*> args;
  for (const Tensor& t : operands) args.push_back(&t);
  std::vector<Tensor> results(out.size());
  op.run_kernel(args, results);
  for (std::size_t k = 0; k < out.size(); ++k) r[out[k]] = read_scalar(results[k]);
}

std::optional<ScalarProgram> ScalarProgram::lower(const computegraph::CompiledProgram<StdTensorOp>& program) {
  Lowering l;
  std::vector<std::uint32_t> slot_reg(program.slot_count(), kNone);
  auto scalar_type = [](const TensorType& t) { return t.shape.empty() && supported(t.dtype); };

  ScalarProgram p;
  p.input_keys_ = program.input_keys();
  for (std::size_t i = 0; i < program.input_slots().size(); ++i) {
    const TensorType& t = p.input_keys_[i].type;
    if (!scalar_type(t)) return std::nullopt;
    slot_reg[program.input_slots()[i]] = l.new_reg(t.dtype, false);
  }

  const auto& instructions = program.instructions();
  for (std::size_t i = 0; i < instructions.size(); ++i) {
    const StdTensorOp& op = instructions[i].operation;
    for (std::size_t slot = 0; slot < op.output_count(); ++slot) {
      if (!scalar_type(op.output_type(slot))) return std::nullopt;
    }
    const auto operands = program.operands(i);
    std::vector<std::uint32_t> operand_regs;
    for (std::uint32_t s : operands) {
      operand_regs.push_back(slot_reg[s]);
      if (slot_reg[s] == kNone) return std::nullopt;  // never in a well-formed program
    }
    // Ops without an opcode of their own run their kernel (ScalarKernelCall).
    auto run_kernel = [&] {
      const auto regs = l.emit_kernel(op, operand_regs);
      for (std::size_t slot = 0; slot < regs.size(); ++slot) slot_reg[instructions[i].first_output + slot] = regs[slot];
    };
    if (op.output_count() != 1 || operands.size() > 3) {
      run_kernel();
      continue;
    }
    std::uint32_t in[3] = {0, 0, 0};
    std::copy(operand_regs.begin(), operand_regs.end(), in);
    const std::span<const std::uint32_t> args(in, operands.size());
    const DType d = op.out.dtype;
    const DType d0 = operands.empty() ? d : l.dtypes[in[0]];
    std::uint32_t r = kNone;
    const OpDef& def = *op.def;
    // The formula the op computes on rank-0 values, if any (registered ops: none, they run their
    // kernel).
    const ElementFormula* f = def.fusion == Fusion::Elementwise && def.formula ? &*def.formula
                              : def.rank0_formula                             ? &*def.rank0_formula
                                                                              : nullptr;
    const bool passes_value = def.identity_on_values || def.layout != Layout::None ||
                              def.fusion == Fusion::Reduction || def.fusion == Fusion::SumReduction;
    if (passes_value && operands.size() == 1 && d == d0) {
      // Rank-0 to rank-0: the value itself (reductions of a rank-0 operand reduce no axes).
      r = in[0];
    } else if (f == nullptr) {
      // Ops without a formula (constants and zeros are folded into constant registers here).
      run_kernel();
      continue;
    } else {
      switch (f->fast) {
        case ElementFast::None: {  // the formula's scalar function
          if (!f->covers(d) || (d != DType::F64 && d != DType::F32)) {
            run_kernel();
            continue;
          }
          const std::uint32_t operands2[] = {in[0], operands.size() > 1 ? in[1] : in[0]};
          r = l.emit(d == DType::F64 ? Op::F64Call : Op::F32Call, d, operands2, l.functions.index_of(&def));
          break;
        }
        case ElementFast::Compare: {
          const auto code = compare_opcode(static_cast<CompareDir>(f->param(op.attrs)), d0);
          if (!code) {
            run_kernel();
            continue;
          }
          r = l.emit(*code, d, args);
          break;
        }
        case ElementFast::Select: r = l.emit(Op::Select, d, args); break;
        // On real operands conj and real are the identity and imag is zero (arith.cpp).
        case ElementFast::Identity: r = in[0]; break;
        case ElementFast::Zero: r = l.new_reg(d, true); break;
        case ElementFast::Convert:
          if (d == d0) {
            r = in[0];
          } else {
            const auto code = convert_opcode(d0, d);
            if (!code) return std::nullopt;
            r = l.emit(*code, d, args);
          }
          break;
        case ElementFast::Add: case ElementFast::Mul: case ElementFast::Div: case ElementFast::Neg:
        case ElementFast::Abs: case ElementFast::Sign: case ElementFast::Maximum: case ElementFast::Minimum:
        case ElementFast::Clamp: case ElementFast::Exp: case ElementFast::Log: case ElementFast::Sin:
        case ElementFast::Cos: case ElementFast::Tanh: case ElementFast::Sqrt: case ElementFast::Rsqrt:
        case ElementFast::Pow: case ElementFast::Expm1: case ElementFast::Log1p: case ElementFast::Dot: {
          const auto code = typed_opcode(f->fast, d);
          if (!code) {
            run_kernel();
            continue;
          }
          r = l.emit(*code, d, args);
          break;
        }
      }
    }
    slot_reg[instructions[i].first_output] = r;
  }

  // Renumber: constants first (copied into each run's registers), then everything else.
  const std::size_t n = l.values.size();
  std::vector<std::uint32_t> perm(n);
  std::uint32_t next = 0;
  for (std::size_t k = 0; k < n; ++k) {
    if (l.is_const[k]) {
      perm[k] = next++;
      p.constants_.push_back(l.values[k]);
    }
  }
  for (std::size_t k = 0; k < n; ++k) {
    if (!l.is_const[k]) perm[k] = next++;
  }
  p.dtypes_.resize(n);
  for (std::size_t k = 0; k < n; ++k) p.dtypes_[perm[k]] = l.dtypes[k];
  p.code_ = std::move(l.code);
  for (ScalarInstruction& ins : p.code_) {
    const unsigned arity = info(ins.op).arity;
    ins.dst = perm[ins.dst];
    ins.a = arity > 0 ? perm[ins.a] : 0;
    ins.b = arity > 1 ? perm[ins.b] : 0;
    // c names the op or the kernel call, not a register
    const bool call = ins.op == Op::F64Call || ins.op == Op::F32Call || ins.op == Op::Kernel;
    ins.c = arity > 2 ? perm[ins.c] : call ? ins.c : 0;
  }
  p.calls_ = std::move(l.calls);
  p.functions_ = std::move(l.functions);
  for (ScalarKernelCall& call : p.calls_) {
    for (std::uint32_t& reg : call.in) reg = perm[reg];
    for (std::uint32_t& reg : call.out) reg = perm[reg];
  }
  fuse_sin_cos(p.code_);
  // Operands that are the previous instruction's f64 result read the accumulator (execute()).
  auto keeps_acc = [](Op op) { return op >= Op::F64Add && op <= Op::F64SinCos; };
  for (std::size_t i = 1; i < p.code_.size(); ++i) {
    ScalarInstruction& ins = p.code_[i];
    const ScalarInstruction& prev = p.code_[i - 1];
    if (!keeps_acc(ins.op) || !keeps_acc(prev.op)) continue;
    const unsigned arity = info(ins.op).arity;
    if (arity > 0 && ins.a == prev.dst) ins.chain |= 1;
    if (arity > 1 && ins.b == prev.dst) ins.chain |= 2;
  }
  for (std::uint32_t s : program.input_slots()) p.input_regs_.push_back(perm[slot_reg[s]]);
  for (std::uint32_t s : program.output_slots()) {
    if (slot_reg[s] == kNone) return std::nullopt;
    p.output_regs_.push_back(perm[slot_reg[s]]);
  }
  return p;
}

namespace {
/// The registers of one run: one buffer per thread and nesting depth, grown to the largest
/// program it has run, so a warm run allocates nothing. run() re-enters itself when a Kernel
/// instruction runs an op that runs programs of its own (a loop body); each depth has its own
/// registers. Growing the list of buffers moves them without moving their storage, so outer
/// levels' pointers stay valid.
struct Registers {
  explicit Registers(std::size_t count) {
    if (buffers.size() <= depth) buffers.resize(depth + 1);
    std::vector<ScalarReg>& buffer = buffers[depth];
    if (buffer.size() < count) buffer.resize(count);
    r = buffer.data();
    ++depth;
  }
  ~Registers() { --depth; }
  Registers(const Registers&) = delete;
  Registers& operator=(const Registers&) = delete;
  ScalarReg* r;
  static thread_local std::vector<std::vector<ScalarReg>> buffers;
  static thread_local std::size_t depth;
};
thread_local std::vector<std::vector<ScalarReg>> Registers::buffers;
thread_local std::size_t Registers::depth = 0;

void load(DType d, const void* p, ScalarReg& v) {
  switch (d) {
    case DType::F64: v.f64 = *static_cast<const double*>(p); break;
    case DType::F32: v.f32 = *static_cast<const float*>(p); break;
    case DType::I64: v.i64 = *static_cast<const std::int64_t*>(p); break;
    case DType::Bool: v.b = *static_cast<const bool*>(p); break;
    case DType::C64:
    case DType::C128: break;  // never: lower() rejects complex values
  }
}
void store(DType d, const ScalarReg& v, void* p) {
  switch (d) {
    case DType::F64: *static_cast<double*>(p) = v.f64; break;
    case DType::F32: *static_cast<float*>(p) = v.f32; break;
    case DType::I64: *static_cast<std::int64_t*>(p) = v.i64; break;
    case DType::Bool: *static_cast<bool*>(p) = v.b; break;
    case DType::C64:
    case DType::C128: break;
  }
}
}  // namespace

void ScalarProgram::run_raw(std::span<const void* const> inputs, std::span<void* const> outputs) const {
  Registers regs(dtypes_.size());
  ScalarReg* r = regs.r;
  std::copy(constants_.begin(), constants_.end(), r);
  for (std::size_t i = 0; i < inputs.size(); ++i) load(dtypes_[input_regs_[i]], inputs[i], r[input_regs_[i]]);
  execute(code_.data(), code_.data() + code_.size(), r, calls_.data(), functions_);
  for (std::size_t k = 0; k < outputs.size(); ++k) store(dtypes_[output_regs_[k]], r[output_regs_[k]], outputs[k]);
}

std::vector<Tensor> ScalarProgram::run(std::span<const Tensor> inputs) const {
  if (inputs.size() != input_regs_.size()) {
    std::ostringstream msg;
    msg << "ScalarProgram::run: expected " << input_regs_.size() << " inputs (";
    for (std::size_t i = 0; i < input_keys_.size(); ++i) msg << (i ? ", " : "") << input_keys_[i];
    msg << "), got " << inputs.size();
    throw BindingError(msg.str());
  }
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const TensorType& want = input_keys_[i].type;
    const TensorType& got = inputs[i].type();
    if (got == want) continue;
    std::ostringstream msg;
    msg << "ScalarProgram::run: input " << i << " (" << input_keys_[i] << ") has type " << got.to_string()
        << "; expected " << want.to_string();
    if (got.shape != want.shape) throw ShapeError(msg.str());
    throw DTypeError(msg.str());
  }
  Registers regs(dtypes_.size());
  ScalarReg* r = regs.r;
  std::copy(constants_.begin(), constants_.end(), r);
  for (std::size_t i = 0; i < inputs.size(); ++i) r[input_regs_[i]] = read_scalar(inputs[i]);
  execute(code_.data(), code_.data() + code_.size(), r, calls_.data(), functions_);
  std::vector<Tensor> out;
  out.reserve(output_regs_.size());
  for (std::uint32_t reg : output_regs_) out.push_back(write_scalar(dtypes_[reg], r[reg]));
  return out;
}

std::string ScalarProgram::print() const {
  std::ostringstream os;
  os << "scalar_program: " << input_regs_.size() << " inputs, " << output_regs_.size() << " outputs, "
     << dtypes_.size() << " registers (" << constants_.size() << " constant), " << code_.size()
     << " instructions\n";
  for (std::size_t k = 0; k < constants_.size(); ++k) {
    os << '%' << k << ": " << dtype_name(dtypes_[k]) << " = " << format_value(dtypes_[k], constants_[k]) << '\n';
  }
  for (std::size_t i = 0; i < input_regs_.size(); ++i) {
    os << '%' << input_regs_[i] << ": " << dtype_name(dtypes_[input_regs_[i]]) << " = input "
       << input_keys_[i].name << '\n';
  }
  for (const ScalarInstruction& ins : code_) {
    const OpcodeInfo& oi = info(ins.op);
    unsigned arity = oi.arity;
    if (ins.op == ScalarOpcode::Kernel) {  // %4: f64, %5: i64 = kernel reduce_max_index[...] %2
      const ScalarKernelCall& call = calls_[ins.c];
      for (std::size_t k = 0; k < call.out.size(); ++k) {
        os << (k ? ", %" : "%") << call.out[k] << ": " << dtype_name(dtypes_[call.out[k]]);
      }
      os << " = kernel " << call.op.name();
      for (std::uint32_t reg : call.in) os << " %" << reg;
      os << '\n';
      continue;
    }
    os << '%' << ins.dst << ": " << dtype_name(dtypes_[ins.dst]) << " = ";
    if (ins.op == ScalarOpcode::F64Call || ins.op == ScalarOpcode::F32Call) {  // f64.erf %3
      const OpDef& def = *functions_.defs[ins.c];
      os << dtype_name(dtypes_[ins.dst]) << '.' << def.name;
      arity = static_cast<unsigned>(def.arity());
    } else {
      os << oi.name;
    }
    const std::uint32_t operands[] = {ins.a, ins.b, ins.c};
    for (unsigned k = 0; k < arity; ++k) os << " %" << operands[k];
    if (ins.op == ScalarOpcode::F64SinCos) os << ", cos -> %" << ins.c;
    os << '\n';
  }
  os << "outputs";
  for (std::uint32_t reg : output_regs_) os << " %" << reg;
  os << '\n';
  return os.str();
}

}  // namespace tenferro::exec
