// Dead-code elimination (see passes.hpp): a backward liveness walk over the steps. Inside a fused
// kernel, outputs nobody reads are dropped, then the instructions and inputs they alone needed.
#include <algorithm>

#include "passes.hpp"

namespace tenferro::exec {

namespace {
/// The kernel restricted to the outputs marked in `keep`; `in` is narrowed alongside its inputs.
std::shared_ptr<const FusedKernel> prune_kernel(const FusedKernel& k, const std::vector<bool>& keep,
                                                std::vector<ValueId>& in) {
  std::vector<bool> needed(k.register_count, false);
  FusedKernel out;
  out.dtype = k.dtype;
  out.size = k.size;
  for (std::size_t o = 0; o < k.outputs.size(); ++o) {
    if (keep[o]) {
      needed[k.outputs[o].reg] = true;
      out.outputs.push_back(k.outputs[o]);
    }
  }
  // Registers are reused, so walk backwards: an instruction is live if its result is needed at
  // that point; its own destination is dead above it, its operands become needed.
  // A sincos pair with one result unneeded becomes that one's half of sincos (the same bits).
  std::vector<bool> live_instr(k.code.size(), false);
  std::vector<FusedInstr> code = k.code;
  for (std::size_t c = code.size(); c-- > 0;) {
    FusedInstr& ins = code[c];
    if (ins.trig == Trig::SinCosPair) {
      const bool sin = needed[ins.dst], cos = needed[ins.c];
      if (sin && cos) {
        needed[ins.c] = false;  // the second result; the first is handled below
      } else if (sin || cos) {
        FusedInstr half = ins;
        half.fast = sin ? ElementFast::Sin : ElementFast::Cos;
        half.def = sin ? ins.def : ins.def2;
        half.def2 = nullptr;
        half.formula = &*half.def->formula;
        half.trig = Trig::SinCosHalf;
        half.dst = sin ? ins.dst : ins.c;
        half.b = 0;
        half.c = 0;
        half.arity = 1;
        ins = half;
      }
    }
    if (!needed[ins.dst]) continue;
    live_instr[c] = true;
    needed[ins.dst] = false;
    const std::size_t arity = ins.arity;
    needed[ins.a] = true;
    if (arity > 1) needed[ins.b] = true;
    if (arity > 2) needed[ins.c] = true;
  }
  // Renumber registers: kept inputs first, then scratch registers in their old order.
  std::vector<std::uint16_t> renumber(k.register_count, 0);
  std::vector<ValueId> kept_in;
  std::uint16_t next = 0;
  for (std::size_t i = 0; i < k.inputs.size(); ++i) {
    if (!needed[i]) continue;
    renumber[i] = next++;
    out.inputs.push_back(k.inputs[i]);
    kept_in.push_back(in[i]);
  }
  for (std::size_t r = k.inputs.size(); r < k.register_count; ++r) renumber[r] = next++;
  for (std::size_t c = 0; c < code.size(); ++c) {
    if (!live_instr[c]) continue;
    FusedInstr ins = code[c];
    ins.dst = renumber[ins.dst];
    ins.a = renumber[ins.a];
    ins.b = renumber[ins.b];
    ins.c = renumber[ins.c];
    out.code.push_back(ins);
  }
  for (auto& o : out.outputs) o.reg = renumber[o.reg];
  out.register_count = next;
  in = std::move(kept_in);
  return std::make_shared<const FusedKernel>(std::move(out));
}
}  // namespace

ExecProgram eliminate_dead_code(ExecProgram p) {
  std::vector<bool> live(p.types.size(), false);
  for (auto v : p.outputs) live[v] = true;
  std::vector<Step> kept;
  for (std::size_t i = p.steps.size(); i-- > 0;) {
    Step& s = p.steps[i];
    std::vector<bool> used(s.out.size());
    bool any = false;
    for (std::size_t o = 0; o < s.out.size(); ++o) any |= (used[o] = live[s.out[o]]);
    if (!any) continue;
    if (s.kind == StepKind::Fused && std::find(used.begin(), used.end(), false) != used.end()) {
      std::vector<ValueId> outs;
      for (std::size_t o = 0; o < s.out.size(); ++o) {
        if (used[o]) outs.push_back(s.out[o]);
      }
      s.fused = prune_kernel(*s.fused, used, s.in);
      s.out = std::move(outs);
    }
    for (auto v : s.in) live[v] = true;
    kept.push_back(std::move(s));
  }
  std::reverse(kept.begin(), kept.end());
  p.steps = std::move(kept);
  return p;
}

}  // namespace tenferro::exec
