// Straight runs of arithmetic compiled to vector loops (see arith_jit.hpp), with the Xbyak
// assembler. Planning (which instructions, which vector register holds which value) is plain
// code; only RunAssembler below emits instructions.
#include "arith_jit.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

#if defined(__x86_64__)
#include <xbyak/xbyak.h>
#define TENFERRO_ARITH_JIT 1
#endif

namespace tenferro::exec {

bool compilable(const FusedInstr& ins) {
  if (ins.trig == Trig::SinCosPair) return false;
  const ElementFast f = ins.fast;
  if (f == ElementFast::Add || f == ElementFast::Mul || f == ElementFast::Div) return ins.arity == 2;
  const bool unary = f == ElementFast::Neg || f == ElementFast::Abs || f == ElementFast::Sqrt || f == ElementFast::Identity;
  return unary && ins.arity == 1;
}

namespace {

constexpr std::int64_t kNever = -1;  // a value nothing reads
constexpr std::int64_t kAfterCode = std::numeric_limits<std::int64_t>::max();  // a kernel output

bool reads(const FusedInstr& ins, std::uint16_t r) {
  if (ins.a == r) return true;
  if (ins.trig == Trig::SinCosPair) return false;
  return (ins.arity > 1 && ins.b == r) || (ins.arity > 2 && ins.c == r);
}
bool writes(const FusedInstr& ins, std::uint16_t r) {
  return ins.dst == r || (ins.trig == Trig::SinCosPair && ins.c == r);
}

/// last_read[i]: the last instruction that reads the value instruction i writes to its dst
/// register (kAfterCode if the kernel outputs it, kNever if nothing reads it).
std::vector<std::int64_t> last_reads(const FusedKernel& k) {
  const std::size_t n = k.code.size();
  std::vector<std::int64_t> last(n, kNever);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint16_t r = k.code[i].dst;
    std::size_t j = i + 1;
    for (; j < n; ++j) {
      if (reads(k.code[j], r)) last[i] = static_cast<std::int64_t>(j);
      if (writes(k.code[j], r)) break;
    }
    if (j == n) {
      for (const FusedOutput& o : k.outputs) {
        if (o.reg == r) last[i] = kAfterCode;
      }
    }
  }
  return last;
}

/// Where a compiled instruction reads an operand: a vector register, or the block of a live-in.
struct Source {
  bool memory = false;
  int index = 0;  // vector register, or position in live_in
};

struct PlannedOp {
  ElementFast op = ElementFast::None;
  Source a, b;
  int dst = 0;  // vector register
};

struct Plan {
  std::uint32_t begin = 0, end = 0;
  std::vector<std::uint16_t> live_in, live_out;
  std::vector<int> out_reg;  // the vector register of each live_out
  std::vector<PlannedOp> ops;
  bool sign_mask = false, abs_mask = false;
};

/// The run starting at `begin`: compilable instructions for as long as `registers` vector
/// registers hold every value the run computes and still needs (linear scan, freed at last read).
Plan plan_run(const FusedKernel& k, std::uint32_t begin, int registers, const std::vector<std::int64_t>& last) {
  Plan plan;
  plan.begin = begin;
  std::vector<int> reg_of(k.register_count, -1);            // the vector register of a kernel register's value
  std::vector<std::int64_t> def_of(k.register_count, -1);   // the instruction that wrote it in the run
  std::vector<int> live_in_at(k.register_count, -1);
  std::vector<std::int64_t> held_until(static_cast<std::size_t>(registers), -1);  // free once below i
  std::uint32_t i = begin;
  for (; i < k.code.size() && compilable(k.code[i]); ++i) {
    const FusedInstr& ins = k.code[i];
    int free = -1;
    for (int v = 0; v < registers && free < 0; ++v) {
      if (held_until[static_cast<std::size_t>(v)] <= static_cast<std::int64_t>(i)) free = v;
    }
    if (free < 0) break;  // every register holds a value still needed: the run ends here
    auto source = [&](std::uint16_t r) {
      if (reg_of[r] >= 0) return Source{false, reg_of[r]};
      if (live_in_at[r] < 0) {
        live_in_at[r] = static_cast<int>(plan.live_in.size());
        plan.live_in.push_back(r);
      }
      return Source{true, live_in_at[r]};
    };
    PlannedOp op;
    op.op = ins.fast;
    op.a = source(ins.a);
    if (ins.arity > 1) op.b = source(ins.b);
    op.dst = free;
    const std::int64_t until = last[i];
    held_until[static_cast<std::size_t>(free)] = until == kNever ? static_cast<std::int64_t>(i) : until;
    reg_of[ins.dst] = free;
    def_of[ins.dst] = i;
    plan.sign_mask = plan.sign_mask || ins.fast == ElementFast::Neg;
    plan.abs_mask = plan.abs_mask || ins.fast == ElementFast::Abs;
    plan.ops.push_back(op);
  }
  plan.end = i;
  for (std::uint16_t r = 0; r < k.register_count; ++r) {
    if (def_of[r] >= 0 && last[static_cast<std::size_t>(def_of[r])] >= static_cast<std::int64_t>(plan.end)) {
      plan.live_out.push_back(r);
      plan.out_reg.push_back(reg_of[r]);
    }
  }
  return plan;
}

#ifdef TENFERRO_ARITH_JIT

/// Emits one function per plan (CompiledRun::Entry, System V calling convention: rdi = in,
/// rsi = out, rdx = n). The loop keeps its byte offset in rax; each live block's pointer gets a
/// general register (four scratch ones, then six saved and restored), and any beyond those is
/// reloaded from in/out into r11 at each use.
class RunAssembler : public Xbyak::CodeGenerator {
 public:
  RunAssembler(std::size_t bytes, VectorIsa isa, bool f64)
      : CodeGenerator(bytes, Xbyak::DontSetProtectRWE), wide_(isa == VectorIsa::Avx512), f64_(f64) {}

  /// Vector registers free for values (the rest: the scratch register and the two masks).
  static int value_registers(VectorIsa isa) { return isa == VectorIsa::Avx512 ? 29 : 13; }

  const void* emit(const Plan& p) {
    using namespace Xbyak;
    align(16);
    const void* entry = getCurr();
    const Reg64 pool[] = {rcx, r8, r9, r10, rbx, rbp, r12, r13, r14, r15};
    constexpr std::size_t kPool = sizeof(pool) / sizeof(pool[0]);
    constexpr std::size_t kScratchPool = 4;  // rcx .. r10 need no saving
    const std::size_t pointers = p.live_in.size() + p.live_out.size();
    const std::size_t in_registers = std::min(pointers, kPool);
    for (std::size_t j = kScratchPool; j < in_registers; ++j) push(pool[j]);
    for (std::size_t j = 0; j < in_registers; ++j) {
      if (j < p.live_in.size()) {
        mov(pool[j], qword[rdi + 8 * j]);
      } else {
        mov(pool[j], qword[rsi + 8 * (j - p.live_in.size())]);
      }
    }
    // The address of element rax/size of pointer j (live-ins first, then live-outs).
    auto block = [&](std::size_t j) -> Address {
      if (j < in_registers) return ptr[pool[j] + rax];
      if (j < p.live_in.size()) {
        mov(r11, qword[rdi + 8 * j]);
      } else {
        mov(r11, qword[rsi + 8 * (j - p.live_in.size())]);
      }
      return ptr[r11 + rax];
    };
    const int values = value_registers(wide_ ? VectorIsa::Avx512 : VectorIsa::Avx2);
    const int scratch = values, sign = values + 1, magnitude = values + 2;
    if (p.sign_mask) broadcast_mask(sign, f64_ ? 0x8000000000000000ull : 0x80000000ull);
    if (p.abs_mask) broadcast_mask(magnitude, f64_ ? 0x7fffffffffffffffull : 0x7fffffffull);
    shl(rdx, f64_ ? 3 : 2);
    xor_(eax, eax);
    Label loop;
    L(loop);
    for (const PlannedOp& op : p.ops) {
      const Xmm d = vec(op.dst);
      // Operand a in a register (loaded into the scratch register when it is a live-in).
      auto in_register = [&](Source s) -> Xmm {
        if (!s.memory) return vec(s.index);
        move(vec(scratch), block(static_cast<std::size_t>(s.index)));
        return vec(scratch);
      };
      // emit_with(s, f): f(operand s) with the operand as what it is, a register or an address (an
      // Address must not be sliced into an Operand: the slice loses the address).
      auto emit_with = [&](Source s, auto f) {
        if (s.memory) {
          f(block(static_cast<std::size_t>(s.index)));
        } else {
          f(vec(s.index));
        }
      };
      // The operand order of each binary op is the one g++ gives the vector-math table's loops
      // (add: a first; mul: b first), which only decides which of two NaNs comes out.
      const ElementFast f = op.op;
      if (f == ElementFast::Add) {
        const Xmm x = in_register(op.a);
        emit_with(op.b, [&](const auto& y) { f64_ ? vaddpd(d, x, y) : vaddps(d, x, y); });
      } else if (f == ElementFast::Mul) {
        const Xmm x = in_register(op.b);
        emit_with(op.a, [&](const auto& y) { f64_ ? vmulpd(d, x, y) : vmulps(d, x, y); });
      } else if (f == ElementFast::Div) {
        const Xmm x = in_register(op.a);
        emit_with(op.b, [&](const auto& y) { f64_ ? vdivpd(d, x, y) : vdivps(d, x, y); });
      } else if (f == ElementFast::Neg) {
        emit_with(op.a, [&](const auto& y) { bitwise_xor(d, vec(sign), y); });
      } else if (f == ElementFast::Abs) {
        emit_with(op.a, [&](const auto& y) { bitwise_and(d, vec(magnitude), y); });
      } else if (f == ElementFast::Sqrt) {
        emit_with(op.a, [&](const auto& y) { f64_ ? vsqrtpd(d, y) : vsqrtps(d, y); });
      } else {  // Identity (compilable() admits nothing else)
        emit_with(op.a, [&](const auto& y) { move(d, y); });
      }
    }
    for (std::size_t j = 0; j < p.live_out.size(); ++j) {
      const Address to = block(p.live_in.size() + j);
      f64_ ? vmovupd(to, vec(p.out_reg[j])) : vmovups(to, vec(p.out_reg[j]));
    }
    add(rax, wide_ ? 64 : 32);
    cmp(rax, rdx);
    jb(loop);
    vzeroupper();
    for (std::size_t j = in_registers; j-- > kScratchPool;) pop(pool[j]);
    ret();
    return entry;
  }

 private:
  Xbyak::Xmm vec(int index) const {
    if (wide_) return Xbyak::Zmm(index);
    return Xbyak::Ymm(index);
  }
  void move(const Xbyak::Xmm& d, const Xbyak::Operand& from) { f64_ ? vmovupd(d, from) : vmovups(d, from); }
  void bitwise_xor(const Xbyak::Xmm& d, const Xbyak::Xmm& x, const Xbyak::Operand& y) {
    wide_ ? vpxorq(d, x, y) : vpxor(d, x, y);
  }
  void bitwise_and(const Xbyak::Xmm& d, const Xbyak::Xmm& x, const Xbyak::Operand& y) {
    wide_ ? vpandq(d, x, y) : vpand(d, x, y);
  }
  void broadcast_mask(int index, std::uint64_t bits) {
    using namespace Xbyak;
    mov(r11, bits);
    if (wide_) {
      f64_ ? vpbroadcastq(Zmm(index), r11) : vpbroadcastd(Zmm(index), r11d);
    } else {
      vmovq(Xmm(index), r11);
      f64_ ? vpbroadcastq(Ymm(index), Xmm(index)) : vpbroadcastd(Ymm(index), Xmm(index));
    }
  }

  bool wide_, f64_;
};

#endif  // TENFERRO_ARITH_JIT

}  // namespace

std::shared_ptr<const CompiledRuns> compile_runs(const FusedKernel& k, VectorIsa isa) {
#ifdef TENFERRO_ARITH_JIT
  if (isa == VectorIsa::Sse2 || (k.dtype != DType::F64 && k.dtype != DType::F32)) return nullptr;
  const std::vector<std::int64_t> last = last_reads(k);
  std::vector<Plan> plans;
  std::size_t bytes = 4096;
  for (std::uint32_t i = 0; i < k.code.size();) {
    if (!compilable(k.code[i])) {
      ++i;
      continue;
    }
    Plan plan = plan_run(k, i, RunAssembler::value_registers(isa), last);
    i = plan.end;
    if (plan.ops.size() < 2) continue;
    // At most three instructions of at most 12 bytes per op and pointer, and the frame.
    bytes += 128 + 36 * (plan.ops.size() + plan.live_in.size() + 2 * plan.live_out.size());
    plans.push_back(std::move(plan));
  }
  if (plans.empty()) return nullptr;
  try {
    auto assembler = std::make_shared<RunAssembler>(bytes, isa, k.dtype == DType::F64);
    auto runs = std::make_shared<CompiledRuns>();
    runs->isa = isa;
    runs->lanes = (isa == VectorIsa::Avx512 ? 64 : 32) / static_cast<std::int64_t>(dtype_size(k.dtype));
    for (const Plan& plan : plans) {
      CompiledRun run;
      run.begin = plan.begin;
      run.end = plan.end;
      run.live_in = plan.live_in;
      run.live_out = plan.live_out;
      run.entry = reinterpret_cast<CompiledRun::Entry>(const_cast<void*>(assembler->emit(plan)));
      runs->runs.push_back(std::move(run));
    }
    assembler->ready();               // resolves the labels
    assembler->setProtectModeRE();    // and only then makes the code executable, never writable
    runs->code = std::move(assembler);
    return runs;
  } catch (const Xbyak::Error&) {
    // No executable memory (a hardened system) or an assembler limit: the interpreter runs all.
    return nullptr;
  }
#else
  (void)k;
  (void)isa;
  return nullptr;
#endif
}

}  // namespace tenferro::exec
