// Runs of a fused kernel compiled to vector loops (see arith_jit.hpp), with the Xbyak assembler.
// plan_run decides everything (which instructions, where each value lives, what is spilled
// around a call); RunAssembler translates the plan's actions into instructions one for one.
#include "arith_jit.hpp"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <limits>
#include <optional>

#if defined(__x86_64__)
#include <xbyak/xbyak.h>
#define TENFERRO_ARITH_JIT 1
#endif

namespace tenferro::exec {

namespace {

bool arithmetic(ElementFast f) {
  return f == ElementFast::Add || f == ElementFast::Mul || f == ElementFast::Div || f == ElementFast::Neg ||
         f == ElementFast::Abs || f == ElementFast::Sqrt || f == ElementFast::Identity;
}

/// The table function a math instruction calls (its vector form is the array function's body).
std::optional<MathFn> math_function(const FusedInstr& ins) {
  const bool half = ins.trig == Trig::SinCosHalf;
  if (ins.fast == ElementFast::Exp) return MathFn::Exp;
  if (ins.fast == ElementFast::Log) return MathFn::Log;
  if (ins.fast == ElementFast::Sin) return half ? MathFn::SinOfSinCos : MathFn::Sin;
  if (ins.fast == ElementFast::Cos) return half ? MathFn::CosOfSinCos : MathFn::Cos;
  if (ins.fast == ElementFast::Tanh) return MathFn::Tanh;
  if (ins.fast == ElementFast::Expm1) return MathFn::Expm1;
  if (ins.fast == ElementFast::Log1p) return MathFn::Log1p;
  if (ins.fast == ElementFast::Rsqrt) return MathFn::Rsqrt;
  return std::nullopt;
}

VectorEntry entry_of(const VectorMathTable& table, DType dtype, MathFn fn) {
  const auto i = static_cast<std::size_t>(fn);
  return dtype == DType::F64 ? table.vector_f64[i] : table.vector_f32[i];
}

}  // namespace

bool compilable(const FusedInstr& ins, const VectorMathTable& table, DType dtype) {
  if (ins.trig == Trig::SinCosPair) {
    // Two calls, sin and cos. libmvec's pair is those two functions; SLEEF's one sincos would run
    // twice, dearer than the interpreter's single call.
    return std::strcmp(table.library, "libmvec") == 0 && entry_of(table, dtype, MathFn::SinOfSinCos) != nullptr &&
           entry_of(table, dtype, MathFn::CosOfSinCos) != nullptr;
  }
  if (arithmetic(ins.fast)) {
    const bool binary = ins.fast == ElementFast::Add || ins.fast == ElementFast::Mul || ins.fast == ElementFast::Div;
    return ins.arity == (binary ? 2 : 1);
  }
  const auto fn = math_function(ins);
  return fn.has_value() && ins.arity == 1 && entry_of(table, dtype, *fn) != nullptr;
}

namespace {

constexpr std::int64_t kNever = -1;  // a value nothing reads
constexpr std::int64_t kMinCompiledElements = 64;
constexpr std::int64_t kAfterCode = std::numeric_limits<std::int64_t>::max();  // a kernel output

bool reads(const FusedInstr& ins, std::uint16_t r) {
  if (ins.a == r) return true;
  if (ins.trig == Trig::SinCosPair) return false;
  return (ins.arity > 1 && ins.b == r) || (ins.arity > 2 && ins.c == r);
}
bool writes(const FusedInstr& ins, std::uint16_t r) {
  return ins.dst == r || (ins.trig == Trig::SinCosPair && ins.c == r);
}

/// The last instruction that reads the value instruction i writes to register r (kAfterCode if
/// the kernel outputs it, kNever if nothing reads it).
std::int64_t last_read(const FusedKernel& k, std::size_t i, std::uint16_t r) {
  std::int64_t last = kNever;
  for (std::size_t j = i + 1; j < k.code.size(); ++j) {
    if (reads(k.code[j], r)) last = static_cast<std::int64_t>(j);
    if (writes(k.code[j], r)) return last;
  }
  for (const FusedOutput& o : k.outputs) {
    if (o.reg == r) return kAfterCode;
  }
  return last;
}

/// Where a value is during the loop: a vector register, the block of pointer `index` (the
/// run's live-ins first, then its live-outs), or a spill slot in the frame.
struct Loc {
  enum Kind : std::uint8_t { Reg, Block, Slot } kind = Reg;
  int index = 0;
};

/// One step of the loop body. Op: reg dst = op(a, b). Call: reg 0 = fn(a), every vector register
/// clobbered. Spill: slot dst = reg a. Store: block dst = a (a live-out, after the body).
struct Action {
  enum Kind : std::uint8_t { Op, Call, Spill, Store } kind = Op;
  ElementFast op = ElementFast::None;
  Loc a, b;
  int dst = 0;
  VectorEntry fn = nullptr;
};

struct Plan {
  std::uint32_t begin = 0, end = 0;
  std::vector<std::uint16_t> live_in, live_out;
  std::vector<Action> actions;
  int slots = 0;
  bool calls = false;
};

/// The run starting at `begin`: compilable instructions for as long as `registers` vector
/// registers hold the values the run computes and still needs (linear scan, freed after the last
/// read). A call spills every value in a register that is read after it and leaves its result in
/// register 0; spilled values are read from their slots from then on.
Plan plan_run(const FusedKernel& k, std::uint32_t begin, int registers, const VectorMathTable& table) {
  struct Value {
    Loc loc;
    std::int64_t until = kNever;  // the last read
  };
  std::vector<Value> values;
  std::vector<int> value_of(k.register_count, -1);  // a kernel register's value in the run
  std::vector<int> owner(static_cast<std::size_t>(registers), -1);
  Plan plan;
  plan.begin = begin;
  auto source = [&](std::uint16_t r) {
    if (value_of[r] >= 0) return values[static_cast<std::size_t>(value_of[r])].loc;
    const auto at = std::find(plan.live_in.begin(), plan.live_in.end(), r);
    if (at == plan.live_in.end()) plan.live_in.push_back(r);
    return Loc{Loc::Block, static_cast<int>(std::find(plan.live_in.begin(), plan.live_in.end(), r) - plan.live_in.begin())};
  };
  // Registers whose value is read at instruction i at the latest are free at i.
  auto free_register = [&](std::int64_t i) {
    for (int v = 0; v < registers; ++v) {
      const int o = owner[static_cast<std::size_t>(v)];
      if (o < 0 || values[static_cast<std::size_t>(o)].until <= i) return v;
    }
    return -1;
  };
  auto define = [&](std::uint16_t r, Loc loc, std::int64_t until, std::int64_t i) {
    values.push_back({loc, until == kNever ? i : until});
    value_of[r] = static_cast<int>(values.size() - 1);
    if (loc.kind == Loc::Reg) owner[static_cast<std::size_t>(loc.index)] = value_of[r];
  };
  // Before a call at i: every value in a register read after i (or at i, with `at_i`) to a slot.
  auto spill_live = [&](std::int64_t i, bool at_i) {
    for (int v = 0; v < registers; ++v) {
      const int o = owner[static_cast<std::size_t>(v)];
      owner[static_cast<std::size_t>(v)] = -1;
      if (o < 0) continue;
      Value& value = values[static_cast<std::size_t>(o)];
      if (value.until > i || (at_i && value.until == i)) {
        plan.actions.push_back({Action::Spill, ElementFast::None, Loc{Loc::Reg, v}, {}, plan.slots, nullptr});
        value.loc = Loc{Loc::Slot, plan.slots++};
      }
    }
  };
  const DType dtype = k.dtype;
  std::uint32_t i = begin;
  for (; i < k.code.size() && compilable(k.code[i], table, dtype); ++i) {
    const FusedInstr& ins = k.code[i];
    const auto at = static_cast<std::int64_t>(i);
    if (ins.trig == Trig::SinCosPair) {
      // sin(x) into register 0, kept in a slot across the second call; then cos(x).
      spill_live(at, true);
      const Loc x = source(ins.a);
      plan.actions.push_back({Action::Call, ElementFast::None, x, {}, 0, entry_of(table, dtype, MathFn::SinOfSinCos)});
      const std::int64_t sin_until = last_read(k, i, ins.dst);
      if (sin_until != kNever) {
        plan.actions.push_back({Action::Spill, ElementFast::None, Loc{Loc::Reg, 0}, {}, plan.slots, nullptr});
        define(ins.dst, Loc{Loc::Slot, plan.slots++}, sin_until, at);
      } else {
        define(ins.dst, Loc{Loc::Slot, -1}, kNever, at);  // dead: never read
      }
      plan.actions.push_back({Action::Call, ElementFast::None, x, {}, 0, entry_of(table, dtype, MathFn::CosOfSinCos)});
      define(ins.c, Loc{Loc::Reg, 0}, last_read(k, i, ins.c), at);
      plan.calls = true;
      continue;
    }
    if (const auto fn = math_function(ins)) {
      const Loc x = source(ins.a);
      spill_live(at, false);
      // x read from where it was: a register is read before the call clobbers it.
      plan.actions.push_back({Action::Call, ElementFast::None, x, {}, 0, entry_of(table, dtype, *fn)});
      define(ins.dst, Loc{Loc::Reg, 0}, last_read(k, i, ins.dst), at);
      plan.calls = true;
      continue;
    }
    const int d = free_register(at);
    if (d < 0) break;  // every register holds a value still needed: the run ends here
    Action op{Action::Op, ins.fast, source(ins.a), {}, d, nullptr};
    if (ins.arity > 1) op.b = source(ins.b);
    plan.actions.push_back(op);
    define(ins.dst, Loc{Loc::Reg, d}, last_read(k, i, ins.dst), at);
  }
  plan.end = i;
  for (std::uint16_t r = 0; r < k.register_count; ++r) {
    const int v = value_of[r];
    if (v < 0 || values[static_cast<std::size_t>(v)].until < static_cast<std::int64_t>(plan.end)) continue;
    plan.actions.push_back({Action::Store, ElementFast::None, values[static_cast<std::size_t>(v)].loc, {},
                            static_cast<int>(plan.live_in.size() + plan.live_out.size()), nullptr});
    plan.live_out.push_back(r);
  }
  return plan;
}

/// CompiledRun::direct for a plan.
std::vector<int> direct_outputs(const FusedKernel& k, const Plan& plan) {
  if (plan.end != k.code.size()) return {};
  for (const FusedOutput& o : k.outputs) {
    if (o.reg < k.inputs.size()) return {};
  }
  std::vector<int> direct(plan.live_out.size(), -1);
  bool any = false;
  for (std::size_t j = 0; j < plan.live_out.size(); ++j) {
    int found = -1, uses = 0;
    for (std::size_t o = 0; o < k.outputs.size(); ++o) {
      if (k.outputs[o].reg != plan.live_out[j]) continue;
      ++uses;
      if (k.outputs[o].mode == OutputMode::Store) found = static_cast<int>(o);
    }
    if (uses == 1 && found >= 0) {
      direct[j] = found;
      any = true;
    }
  }
  if (!any) direct.clear();
  return direct;
}

#ifdef TENFERRO_ARITH_JIT

/// Emits one function per plan (CompiledRun::Entry, System V: rdi = in, rsi = out, rdx = n).
/// Registers: rbx the byte offset, r12/r13 the in/out arrays, r14 the end (all callee-saved, so
/// they survive calls), rbp the entry's rsp; the blocks' pointers in general registers (without
/// calls any of nine, with calls only the callee-saved r15), others reloaded into r11 at each use. Vector
/// register `registers - 1` is the scratch register; constants come from memory after the code.
class RunAssembler : public Xbyak::CodeGenerator {
 public:
  RunAssembler(std::size_t bytes, VectorIsa isa, bool f64)
      : CodeGenerator(bytes, Xbyak::DontSetProtectRWE), wide_(isa == VectorIsa::Avx512), f64_(f64) {}

  /// Vector registers for values (the last one is the scratch register).
  static int value_registers(VectorIsa isa) { return isa == VectorIsa::Avx512 ? 31 : 15; }

  const void* emit(const Plan& p) {
    using namespace Xbyak;
    align(16);
    const void* entry = getCurr();
    const Reg64 saved[] = {rbx, rbp, r12, r13, r14, r15};
    for (const Reg64& r : saved) push(r);
    // The frame: spill slots on 64-byte boundaries (a vector store across two cache lines costs
    // about twice as much), which also keeps calls 16-byte aligned; rbp keeps the entry's rsp.
    mov(rbp, rsp);
    and_(rsp, -64);
    if (p.slots > 0) sub(rsp, static_cast<std::uint32_t>(p.slots) * 64);
    mov(r12, rdi);
    mov(r13, rsi);
    mov(r14, rdx);
    shl(r14, f64_ ? 3 : 2);
    const std::vector<Reg64> pool = p.calls ? std::vector<Reg64>{r15}
                                            : std::vector<Reg64>{rcx, r8, r9, r10, rdi, rsi, rax, rdx, r15};
    const std::size_t pointers = p.live_in.size() + p.live_out.size();
    const std::size_t held = std::min(pointers, pool.size());
    for (std::size_t j = 0; j < held; ++j) mov(pool[j], qword[pointer_array(j, p) + 8 * pointer_index(j, p)]);
    xor_(ebx, ebx);
    auto address = [&](Loc loc) -> Address {
      if (loc.kind == Loc::Slot) return ptr[rsp + 64 * loc.index];
      const auto j = static_cast<std::size_t>(loc.index);
      if (j < held) return ptr[pool[j] + rbx];
      mov(r11, qword[pointer_array(j, p) + 8 * pointer_index(j, p)]);
      return ptr[r11 + rbx];
    };
    const Xmm scratch = vec(value_registers(wide_ ? VectorIsa::Avx512 : VectorIsa::Avx2));
    // f(operand) with the operand as what it is, a register or an address (an Address must not be
    // sliced into an Operand: the slice loses the address).
    auto with = [&](Loc loc, auto f) {
      if (loc.kind == Loc::Reg) {
        f(vec(loc.index));
      } else {
        f(address(loc));
      }
    };
    auto in_register = [&](Loc loc) -> Xmm {
      if (loc.kind == Loc::Reg) return vec(loc.index);
      move(scratch, address(loc));
      return scratch;
    };
    Label loop;
    L(loop);
    // A loop with calls takes long per vector, too long for the out-of-order window to reach the
    // next vector's loads: a live-in read from memory (a tensor, not a block in L1) would miss on
    // every line. Its lines are requested 16 vectors ahead (past a block's end: the next block's).
    if (p.calls) {
      for (std::size_t j = 0; j < p.live_in.size(); ++j) {
        if (j < held) {
          prefetcht0(ptr[pool[j] + rbx + kPrefetchAhead]);
        } else {
          mov(r11, qword[r12 + 8 * j]);
          prefetcht0(ptr[r11 + rbx + kPrefetchAhead]);
        }
      }
    }
    for (const Action& a : p.actions) {
      switch (a.kind) {
        case Action::Op: op(a, with, in_register); break;
        case Action::Call:
          if (a.a.kind != Loc::Reg || a.a.index != 0) with(a.a, [&](const auto& x) { move(vec(0), x); });
          mov(rax, reinterpret_cast<std::uintptr_t>(a.fn));
          call(rax);
          break;
        case Action::Spill: store(ptr[rsp + 64 * a.dst], vec(a.a.index)); break;
        case Action::Store: {
          const Xmm v = in_register(a.a);
          store(address(Loc{Loc::Block, a.dst}), v);
          break;
        }
      }
    }
    add(rbx, wide_ ? 64 : 32);
    cmp(rbx, r14);
    jb(loop, T_NEAR);
    vzeroupper();
    mov(rsp, rbp);
    for (std::size_t j = std::size(saved); j-- > 0;) pop(saved[j]);
    ret();
    return entry;
  }

  /// The sign and magnitude masks the code reads (64 bytes each, for either element size).
  void emit_constants() {
    align(64);
    L(sign_);
    for (int j = 0; j < 8; ++j) dq(f64_ ? 0x8000000000000000ull : 0x8000000080000000ull);
    L(magnitude_);
    for (int j = 0; j < 8; ++j) dq(f64_ ? 0x7fffffffffffffffull : 0x7fffffff7fffffffull);
  }

 private:
  /// Pointer j of a plan is in[j] for a live-in, else out[j - live-ins].
  static Xbyak::Reg64 pointer_array(std::size_t j, const Plan& p) {
    return j < p.live_in.size() ? Xbyak::util::r12 : Xbyak::util::r13;
  }
  static std::size_t pointer_index(std::size_t j, const Plan& p) {
    return j < p.live_in.size() ? j : j - p.live_in.size();
  }

  template <class With, class InRegister>
  void op(const Action& a, With with, InRegister in_register) {
    using namespace Xbyak;
    const Xmm d = vec(a.dst);
    // The operand order of each binary op is the one g++ gives the vector-math table's loops
    // (add: a first; mul: b first), which only decides which of two NaNs comes out.
    const ElementFast f = a.op;
    if (f == ElementFast::Add) {
      const Xmm x = in_register(a.a);
      with(a.b, [&](const auto& y) { f64_ ? vaddpd(d, x, y) : vaddps(d, x, y); });
    } else if (f == ElementFast::Mul) {
      const Xmm x = in_register(a.b);
      with(a.a, [&](const auto& y) { f64_ ? vmulpd(d, x, y) : vmulps(d, x, y); });
    } else if (f == ElementFast::Div) {
      const Xmm x = in_register(a.a);
      with(a.b, [&](const auto& y) { f64_ ? vdivpd(d, x, y) : vdivps(d, x, y); });
    } else if (f == ElementFast::Neg) {
      const Xmm x = in_register(a.a);
      wide_ ? vpxorq(d, x, ptr[rip + sign_]) : vxorpd(d, x, ptr[rip + sign_]);
    } else if (f == ElementFast::Abs) {
      const Xmm x = in_register(a.a);
      wide_ ? vpandq(d, x, ptr[rip + magnitude_]) : vandpd(d, x, ptr[rip + magnitude_]);
    } else if (f == ElementFast::Sqrt) {
      with(a.a, [&](const auto& y) { f64_ ? vsqrtpd(d, y) : vsqrtps(d, y); });
    } else {  // Identity (plan_run plans no other op)
      with(a.a, [&](const auto& y) { move(d, y); });
    }
  }

  Xbyak::Xmm vec(int index) const {
    if (wide_) return Xbyak::Zmm(index);
    return Xbyak::Ymm(index);
  }
  void move(const Xbyak::Xmm& d, const Xbyak::Operand& from) { f64_ ? vmovupd(d, from) : vmovups(d, from); }
  void store(const Xbyak::Address& to, const Xbyak::Xmm& v) { f64_ ? vmovupd(to, v) : vmovups(to, v); }

  static constexpr int kPrefetchAhead = 1024;  // bytes
  bool wide_, f64_;
  Xbyak::Label sign_, magnitude_;
};

#endif  // TENFERRO_ARITH_JIT

}  // namespace

std::shared_ptr<const CompiledRuns> compile_runs(const FusedKernel& k, const VectorMathTable& table, VectorIsa isa) {
#ifdef TENFERRO_ARITH_JIT
  if (isa == VectorIsa::Sse2 || (k.dtype != DType::F64 && k.dtype != DType::F32)) return nullptr;
  // A small kernel gains little over its interpreter's loops and pays the compiled call on top of
  // interpreting its partial last vector (the ADBench LSTM's 14-element kernels ran 5-14% slower
  // compiled), and making the code costs tens of microseconds per kernel.
  if (k.size < kMinCompiledElements) return nullptr;
  std::vector<Plan> plans;
  std::size_t bytes = 4096;
  for (std::uint32_t i = 0; i < k.code.size();) {
    if (!compilable(k.code[i], table, k.dtype)) {
      ++i;
      continue;
    }
    Plan plan = plan_run(k, i, RunAssembler::value_registers(isa), table);
    i = std::max(plan.end, i + 1);
    if (plan.end - plan.begin < 2) continue;
    // At most three instructions of at most 12 bytes per action and pointer, and the frame.
    bytes += 256 + 36 * (plan.actions.size() + plan.live_in.size() + plan.live_out.size());
    plans.push_back(std::move(plan));
  }
  if (plans.empty()) return nullptr;
  try {
    auto assembler = std::make_shared<RunAssembler>(bytes, isa, k.dtype == DType::F64);
    auto runs = std::make_shared<CompiledRuns>();
    runs->table = &table;
    runs->lanes = (isa == VectorIsa::Avx512 ? 64 : 32) / static_cast<std::int64_t>(dtype_size(k.dtype));
    for (const Plan& plan : plans) {
      CompiledRun run;
      run.begin = plan.begin;
      run.end = plan.end;
      run.live_in = plan.live_in;
      run.live_out = plan.live_out;
      run.direct = direct_outputs(k, plan);
      run.entry = reinterpret_cast<CompiledRun::Entry>(const_cast<void*>(assembler->emit(plan)));
      runs->runs.push_back(std::move(run));
    }
    assembler->emit_constants();
    assembler->ready();             // resolves the labels
    assembler->setProtectModeRE();  // and only then makes the code executable, never writable
    runs->code = std::move(assembler);
    return runs;
  } catch (const Xbyak::Error&) {
    // No executable memory (a hardened system) or an assembler limit: the interpreter runs all.
    return nullptr;
  }
#else
  (void)k;
  (void)table;
  (void)isa;
  return nullptr;
#endif
}

}  // namespace tenferro::exec
