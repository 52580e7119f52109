// The block interpreter of fused kernels (see fused_kernel.hpp).
#include "fused_kernel.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "arith_jit.hpp"
#include "ir/elementwise_formulas.hpp"
#include "kernels/parallel.hpp"
#include "kernels/vector_math.hpp"
#include "tenferro/threads.hpp"

namespace tenferro::exec {

namespace {

/// d[0..n) = f(a[j], b[j]) (b = a for unary ops) through the formula's block form, else its scalar
/// function element by element.
template <class T>
void apply_formula(const VectorMathTable& vm, const ElementFormula& f, T* d, const T* a, const T* b, std::int64_t n) {
  if (b == nullptr) b = a;
  if constexpr (sizeof(T) == 8) {
    if (f.f64_block != nullptr) return f.f64_block(vm.accuracy, a, b, d, n);
    for (std::int64_t j = 0; j < n; ++j) d[j] = f.f64(a[j], b[j]);
  } else {
    if (f.f32_block != nullptr) return f.f32_block(vm.accuracy, a, b, d, n);
    for (std::int64_t j = 0; j < n; ++j) d[j] = f.f32(a[j], b[j]);
  }
}

/// d[0..n) = ins(a, b, c). d may equal any operand: element j is read before it is written.
/// d = (a dir b) as 0 and 1, with the direction chosen once per block rather than per element (a
/// loop per direction, which the compiler vectorizes).
template <class T>
void compare_block(CompareDir dir, const T* a, const T* b, T* d, std::int64_t n) {
  auto loop = [&](auto holds) {
    for (std::int64_t j = 0; j < n; ++j) d[j] = holds(a[j], b[j]) ? T{1} : T{0};
  };
  switch (dir) {
    case CompareDir::Eq: loop([](T x, T y) { return formulas::compare_of(CompareDir::Eq, x, y); }); return;
    case CompareDir::Ne: loop([](T x, T y) { return formulas::compare_of(CompareDir::Ne, x, y); }); return;
    case CompareDir::Lt: loop([](T x, T y) { return formulas::compare_of(CompareDir::Lt, x, y); }); return;
    case CompareDir::Le: loop([](T x, T y) { return formulas::compare_of(CompareDir::Le, x, y); }); return;
    case CompareDir::Gt: loop([](T x, T y) { return formulas::compare_of(CompareDir::Gt, x, y); }); return;
    case CompareDir::Ge: loop([](T x, T y) { return formulas::compare_of(CompareDir::Ge, x, y); }); return;
  }
}

/// The instruction's loop: its formula's fast form (ElementFast) where it names one, else the
/// formula's block form or scalar function.
template <class T>
void apply(const VectorMathTable& vm, const FusedInstr& ins, T* d, const T* a, const T* b, const T* c, std::int64_t n) {
  switch (ins.fast) {
    case ElementFast::None: apply_formula(vm, *ins.formula, d, a, b, n); return;
    // Through the vector-math table: this file is built for the baseline instruction set.
    case ElementFast::Add: exec::apply_arith(vm, ArithFn::Add, a, b, d, n); return;
    case ElementFast::Mul: exec::apply_arith(vm, ArithFn::Mul, a, b, d, n); return;
    case ElementFast::Div: exec::apply_arith(vm, ArithFn::Div, a, b, d, n); return;
    case ElementFast::Neg: for (std::int64_t j = 0; j < n; ++j) d[j] = formulas::neg_of(a[j]); return;
    case ElementFast::Identity: if (d != a) std::memmove(d, a, static_cast<std::size_t>(n) * sizeof(T)); return;
    case ElementFast::Abs: for (std::int64_t j = 0; j < n; ++j) d[j] = formulas::abs_of(a[j]); return;
    case ElementFast::Sign: for (std::int64_t j = 0; j < n; ++j) d[j] = formulas::sign_of(a[j]); return;
    case ElementFast::Maximum: for (std::int64_t j = 0; j < n; ++j) d[j] = formulas::maximum_of(a[j], b[j]); return;
    case ElementFast::Minimum: for (std::int64_t j = 0; j < n; ++j) d[j] = formulas::minimum_of(a[j], b[j]); return;
    case ElementFast::Clamp:  // (lo, v, hi)
      for (std::int64_t j = 0; j < n; ++j) d[j] = formulas::clamp_of(a[j], b[j], c[j]);
      return;
    case ElementFast::Compare:  // bool results as 0 and 1
      compare_block(static_cast<CompareDir>(ins.param), a, b, d, n);
      return;
    case ElementFast::Select:  // a bool predicate held as 0 or 1
      for (std::int64_t j = 0; j < n; ++j) d[j] = formulas::select_of(a[j] != T{0}, b[j], c[j]);
      return;
    case ElementFast::Exp: exec::apply(vm, MathFn::Exp, a, d, n); return;
    case ElementFast::Log: exec::apply(vm, MathFn::Log, a, d, n); return;
    case ElementFast::Sin: exec::apply(vm, ins.trig == Trig::Separate ? MathFn::Sin : MathFn::SinOfSinCos, a, d, n); return;
    case ElementFast::Cos: exec::apply(vm, ins.trig == Trig::Separate ? MathFn::Cos : MathFn::CosOfSinCos, a, d, n); return;
    case ElementFast::Tanh: exec::apply(vm, MathFn::Tanh, a, d, n); return;
    case ElementFast::Expm1: exec::apply(vm, MathFn::Expm1, a, d, n); return;
    case ElementFast::Log1p: exec::apply(vm, MathFn::Log1p, a, d, n); return;
    case ElementFast::Sqrt: exec::apply(vm, MathFn::Sqrt, a, d, n); return;
    case ElementFast::Rsqrt: exec::apply(vm, MathFn::Rsqrt, a, d, n); return;
    case ElementFast::Pow: apply_pow(vm, a, b, d, n); return;
    case ElementFast::Convert:  // the operand register already holds a bool as 0/1 and an f32 exactly
      if (ins.to == DType::Bool) {
        for (std::int64_t j = 0; j < n; ++j) d[j] = formulas::convert_of<bool>(a[j]) ? T{1} : T{0};
      } else if (ins.to == DType::F32 && sizeof(T) == 8) {
        for (std::int64_t j = 0; j < n; ++j) d[j] = static_cast<T>(formulas::convert_of<float>(a[j]));
      } else if (d != a) {  // to the kernel's dtype
        std::memmove(d, a, static_cast<std::size_t>(n) * sizeof(T));
      }
      return;
    // Not fusible (exec_program.cpp's fusible_kind): the formulas, for completeness.
    case ElementFast::Zero: std::fill(d, d + n, T{0}); return;
    case ElementFast::Dot: for (std::int64_t j = 0; j < n; ++j) d[j] = T{0} + a[j] * b[j]; return;
  }
}

/// Sum of x[0..n) in a fixed order: eight interleaved partial sums (four independent vector
/// additions at any width the compiler picks, so the sum does not wait on one addition's latency per
/// element), then pairwise. The order is fixed in the code, not by the vector width.
template <class T>
double block_sum(const T* x, std::int64_t n) {
  double s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  std::int64_t j = 0;
  for (; j + 8 <= n; j += 8) {
    for (int k = 0; k < 8; ++k) s[k] += static_cast<double>(x[j + k]);
  }
  for (; j < n; ++j) s[j & 7] += static_cast<double>(x[j]);
  return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

/// s[0..len) = the elements start .. start+len-1 of the iteration space read from `src` through
/// access `a`, converted to T.
/// The access is chosen once per block, and the broadcast accesses step a counter instead of
/// dividing per element.
template <class T, class S>
void gather_as(const S* src, const FusedInput& a, std::int64_t start, std::int64_t len, T* s) {
  switch (a.access) {
    case Access::Full:
      for (std::int64_t j = 0; j < len; ++j) s[j] = formulas::convert_of<T>(src[start + j]);
      return;
    case Access::Scalar:
      std::fill(s, s + len, formulas::convert_of<T>(src[0]));
      return;
    case Access::Inner: {  // src[e % period]
      std::int64_t i = start % a.period;
      for (std::int64_t j = 0; j < len; ++j) {
        s[j] = formulas::convert_of<T>(src[i]);
        if (++i == a.period) i = 0;
      }
      return;
    }
    case Access::Outer: {  // src[e / period]
      std::int64_t q = start / a.period, r = start % a.period;
      for (std::int64_t j = 0; j < len; ++j) {
        s[j] = formulas::convert_of<T>(src[q]);
        if (++r == a.period) {
          r = 0;
          ++q;
        }
      }
      return;
    }
    case Access::Strided: {  // src[sum_d coord_d stride_d]
      // The innermost axes whose extents multiply to at most kPeriod form a period read through a
      // table of their offsets, in order; an innermost axis longer than that is a period by itself,
      // read at its stride. The other axes step like an odometer once per period. (A pool's
      // window broadcast [.., 6, 2, 6, 2 : .., 0, 1, 0] steps its odometer every 24 elements, not
      // every 2.)
      constexpr std::int64_t kPeriod = 64;
      std::size_t inner = a.rank;  // axes [inner, rank) form the period
      std::int64_t period = 1;
      while (inner > 0 && period * a.extent[inner - 1] <= kPeriod) period *= a.extent[--inner];
      const bool tabled = inner < a.rank;
      if (!tabled) period = a.extent[--inner];
      std::int64_t table[kPeriod];
      for (std::int64_t t = 0; tabled && t < period; ++t) {
        std::int64_t rest = t, offset = 0;
        for (std::size_t d = a.rank; d-- > inner;) {
          offset += (rest % a.extent[d]) * a.stride[d];
          rest /= a.extent[d];
        }
        table[t] = offset;
      }
      std::array<std::int64_t, FusedInput::kMaxStridedRank> coord{};
      std::int64_t rest = start / period, base = 0, t = start % period;
      for (std::size_t d = inner; d-- > 0;) {
        coord[d] = rest % a.extent[d];
        rest /= a.extent[d];
        base += coord[d] * a.stride[d];
      }
      for (std::int64_t j = 0; j < len;) {
        const std::int64_t run = std::min(period - t, len - j);
        const S* from = src + base;
        if (tabled) {
          for (std::int64_t r = 0; r < run; ++r) s[j + r] = formulas::convert_of<T>(from[table[t + r]]);
        } else {
          const std::int64_t step = a.stride[inner];
          for (std::int64_t r = 0; r < run; ++r) s[j + r] = formulas::convert_of<T>(from[(t + r) * step]);
        }
        j += run;
        t += run;
        if (t < period) break;  // the block ends inside this period
        t = 0;
        for (std::size_t d = inner; d-- > 0;) {
          base += a.stride[d];
          if (++coord[d] < a.extent[d]) break;
          base -= a.stride[d] * a.extent[d];
          coord[d] = 0;
        }
      }
      return;
    }
  }
}

/// gather_as for input `t` of a dtype readable_as T (bool as 0 or 1).
template <class T>
void gather(const Tensor& t, const FusedInput& a, std::int64_t start, std::int64_t len, T* s) {
  switch (t.dtype()) {
    case DType::Bool: return gather_as(static_cast<const bool*>(t.raw_data()), a, start, len, s);
    case DType::F32: return gather_as(static_cast<const float*>(t.raw_data()), a, start, len, s);
    case DType::F64:
    case DType::I64:
    case DType::C64:
    case DType::C128: return gather_as(static_cast<const T*>(t.raw_data()), a, start, len, s);
  }
}

/// Per-thread working memory of the block interpreter: one block per register and the register
/// pointers. Kept across runs (thread_local), so a run of a small kernel allocates nothing.
/// Blocks start on 64-byte boundaries (kBlock * sizeof(T) is a multiple of 64), like tensor
/// storage: an AVX-512 load or store of a misaligned block straddles two cache lines every time,
/// which made the arithmetic loops of a fused gradient about twice as slow.
template <class T>
struct BlockScratch {
  static constexpr std::size_t kAlignElements = 64 / sizeof(T);
  std::vector<T> storage;
  T* blocks = nullptr;  // storage's first 64-byte aligned element
  std::vector<const T*> ptr;
  std::vector<double> sums;  // the current chunk's SumAll outputs
  std::vector<std::int64_t> written;  // per output, in the current block
  void reserve(std::size_t registers, std::size_t sum_outputs, std::size_t outputs) {
    if (sums.size() != sum_outputs) sums.assign(sum_outputs, 0.0);
    if (written.size() < outputs) written.resize(outputs);
    if (storage.size() < registers * kBlock + kAlignElements) {
      storage.resize(registers * kBlock + kAlignElements);
      const auto address = reinterpret_cast<std::uintptr_t>(storage.data());
      blocks = storage.data() + ((64 - address % 64) % 64) / sizeof(T);
    }
    if (ptr.size() < registers) ptr.resize(registers);
  }
};

/// refill[i]: whether every block gathers input i anew. A scalar input's block holds the same
/// values in every block of a chunk, so it is filled once per chunk, unless an instruction
/// reuses its register (and overwrites it).
void plan_refills(const FusedKernel& k, std::vector<char>& refill) {
  // One pass over the code (not one per input): kernels of scan bodies have dozens of inputs and
  // hundreds of instructions, and run once per step.
  refill.assign(k.inputs.size(), 0);
  const std::size_t n = k.inputs.size();
  for (const FusedInstr& ins : k.code) {
    if (ins.dst < n) refill[ins.dst] = 1;
    if (ins.trig == Trig::SinCosPair && ins.c < n) refill[ins.c] = 1;
  }
  for (std::size_t i = 0; i < n; ++i) refill[i] = refill[i] || k.inputs[i].access != Access::Scalar;
}

template <class T>
BlockScratch<T>& thread_scratch(std::size_t registers, std::size_t sum_outputs, std::size_t outputs) {
  thread_local BlockScratch<T> scratch;
  scratch.reserve(registers, sum_outputs, outputs);
  return scratch;
}

/// Instructions [from, to) of `k` over the elements [offset, len) of the current block; each
/// instruction's register then points at its block.
template <class T>
void interpret(const FusedKernel& k, std::size_t from, std::size_t to, T* blocks, const T** ptr,
               const VectorMathTable& vm, std::int64_t offset, std::int64_t len) {
  if (offset >= len) return;
  for (std::size_t i = from; i < to; ++i) {
    const FusedInstr& ins = k.code[i];
    T* d = blocks + std::size_t{ins.dst} * kBlock;
    if (ins.trig == Trig::SinCosPair) {  // two results; neither register is the operand's
      T* d2 = blocks + std::size_t{ins.c} * kBlock;
      apply_sincos(vm, ptr[ins.a] + offset, d + offset, d2 + offset, len - offset);
      ptr[ins.dst] = d;
      ptr[ins.c] = d2;
      continue;
    }
    apply<T>(vm, ins, d + offset, ptr[ins.a] + offset, ins.arity > 1 ? ptr[ins.b] + offset : nullptr,
             ins.arity > 2 ? ptr[ins.c] + offset : nullptr, len - offset);
    ptr[ins.dst] = d;
  }
}

/// The compiled run on the first `whole` elements of the block at `start`: its live-ins where the
/// registers point now, its live-outs into their registers' blocks, or straight into the kernel
/// output CompiledRun::direct names when that output has the kernel's dtype (written[o] = whole:
/// the rest of the block's output is copied from the block).
template <class T>
void run_compiled(const CompiledRun& run, T* blocks, const T* const* ptr, std::int64_t whole, std::int64_t start,
                  std::span<Tensor* const> outputs, DType dtype, std::int64_t* written) {
  constexpr std::size_t kOnStack = 32;
  const void* in_stack[kOnStack];
  void* out_stack[kOnStack];
  std::vector<const void*> in_heap;
  std::vector<void*> out_heap;
  const void** in = in_stack;
  void** to = out_stack;
  if (run.live_in.size() > kOnStack || run.live_out.size() > kOnStack) {
    in_heap.resize(run.live_in.size());
    out_heap.resize(run.live_out.size());
    in = in_heap.data();
    to = out_heap.data();
  }
  for (std::size_t j = 0; j < run.live_in.size(); ++j) in[j] = ptr[run.live_in[j]];
  for (std::size_t j = 0; j < run.live_out.size(); ++j) {
    const int o = run.direct.empty() ? -1 : run.direct[j];
    if (o >= 0 && outputs[o]->dtype() == dtype) {
      to[j] = static_cast<T*>(outputs[o]->raw_data()) + start;
      written[o] = whole;
    } else {
      to[j] = blocks + std::size_t{run.live_out[j]} * kBlock;
    }
  }
  run.entry(in, to, whole);
}

/// Runs chunk `c` of kernel `k` (elements c * kChunk .. min(n, (c + 1) * kChunk)) in blocks of
/// kBlock, writing each SumAll output's chunk sum to partial[s * chunks + c].
template <class T>
void run_chunk(const FusedKernel& k, std::span<const Tensor* const> in, std::span<Tensor* const> out,
               std::int64_t c, std::int64_t chunks, double* partial, BlockScratch<T>& scratch,
               const VectorMathTable& vm, const char* refill, std::span<const CompiledRun> runs,
               std::int64_t lanes) {
  T* blocks = scratch.blocks;
  const T** ptr = scratch.ptr.data();
  const std::int64_t first = c * kChunk;
  const std::int64_t end = std::min(k.size, first + kChunk);
  // The chunk's sums stay local until its end: neighbouring chunks run on other threads, and
  // adding into adjacent entries of `partial` block by block would bounce their cache line.
  double* sums = scratch.sums.data();
  std::fill(sums, sums + scratch.sums.size(), 0.0);
  for (std::int64_t start = first; start < end; start += kBlock) {
    // Blocks are kBlock long except the chunk's last, so a scalar block filled by the first block
    // covers every later one.
    const std::int64_t len = std::min(kBlock, end - start);
    for (std::size_t i = 0; i < k.inputs.size(); ++i) {
      const Tensor& t = *in[i];
      T* s = blocks + i * kBlock;
      const FusedInput& a = k.inputs[i];
      if (a.access == Access::Full && t.dtype() == k.dtype) {
        ptr[i] = static_cast<const T*>(t.raw_data()) + start;
        continue;
      }
      if (start == first || refill[i]) gather(t, a, start, len, s);
      ptr[i] = s;
    }
    std::int64_t* written = scratch.written.data();  // per output: elements a run wrote directly
    std::fill(written, written + k.outputs.size(), std::int64_t{0});
    std::size_t next = 0;  // the next instruction
    for (const CompiledRun* run = runs.data(); run != runs.data() + runs.size(); ++run) {
      interpret<T>(k, next, run->begin, blocks, ptr, vm, 0, len);
      const std::int64_t whole = len / lanes * lanes;  // the run's share; the rest is interpreted
      if (whole > 0) run_compiled(*run, blocks, ptr, whole, start, out, k.dtype, written);
      interpret<T>(k, run->begin, run->end, blocks, ptr, vm, whole, len);
      for (std::uint16_t r : run->live_out) ptr[r] = blocks + std::size_t{r} * kBlock;
      next = run->end;
    }
    interpret<T>(k, next, k.code.size(), blocks, ptr, vm, 0, len);
    std::size_t si = 0;
    for (std::size_t o = 0; o < k.outputs.size(); ++o) {
      const T* v = ptr[k.outputs[o].reg];
      if (k.outputs[o].mode == OutputMode::SumAll) {
        sums[si++] += block_sum(v, len);
      } else if (out[o]->dtype() == DType::Bool) {
        bool* z = static_cast<bool*>(out[o]->raw_data()) + start;
        for (std::int64_t j = 0; j < len; ++j) z[j] = v[j] != T{0};
      } else if (out[o]->dtype() != k.dtype) {  // an f32 result of an f64 kernel: exact
        float* z = static_cast<float*>(out[o]->raw_data()) + start;
        for (std::int64_t j = 0; j < len; ++j) z[j] = static_cast<float>(v[j]);
      } else {
        T* z = static_cast<T*>(out[o]->raw_data()) + start;
        const std::int64_t w = written[o];
        if (z != v && w < len) std::memmove(z + w, v + w, static_cast<std::size_t>(len - w) * sizeof(T));
      }
    }
  }
  for (std::size_t s = 0; s < scratch.sums.size(); ++s) {
    partial[s * static_cast<std::size_t>(chunks) + static_cast<std::size_t>(c)] = sums[s];
  }
}

template <class T>
void run_typed(const FusedKernel& k, std::span<const Tensor* const> in, std::span<Tensor* const> out) {
  const std::int64_t chunks = (k.size + kChunk - 1) / kChunk;
  const std::size_t regs = k.register_count;
  std::size_t sum_count = 0;
  for (const auto& o : k.outputs) sum_count += o.mode == OutputMode::SumAll ? 1 : 0;
  // Chunk sums, added in chunk order below: the same total for any thread count. One chunk's
  // sum needs no array.
  double single_partial[4] = {0, 0, 0, 0};
  std::vector<double> partial_store;
  double* partial = single_partial;
  if (sum_count * static_cast<std::size_t>(chunks) > 4) {
    partial_store.assign(sum_count * static_cast<std::size_t>(chunks), 0.0);
    partial = partial_store.data();
  }
  const VectorMathTable& vm = vector_math();
  thread_local std::vector<char> refill_store;  // kept across runs: no allocation per run
  plan_refills(k, refill_store);
  const char* refill = refill_store.data();
  // The compiled runs, unless the vector-math table changed since they were made.
  std::span<const CompiledRun> runs;
  std::int64_t lanes = 1;
  if (k.compiled != nullptr && k.compiled->table == &vm) {
    runs = k.compiled->runs;
    lanes = k.compiled->lanes;
  }
  // Small kernels stay on the calling thread: waking other threads costs microseconds, more than
  // a small kernel's whole work. Each chunk writes only its own elements and its own partial sums.
  const int threads = chunks >= 4 ? num_threads() : 1;
  parallel_chunks(chunks, threads, [&](std::int64_t c) {
    run_chunk<T>(k, in, out, c, chunks, partial, thread_scratch<T>(regs, sum_count, k.outputs.size()), vm, refill, runs, lanes);
  });
  std::size_t s = 0;
  for (std::size_t o = 0; o < k.outputs.size(); ++o) {
    if (k.outputs[o].mode != OutputMode::SumAll) continue;
    double total = 0;
    for (std::int64_t c = 0; c < chunks; ++c) total += partial[s * static_cast<std::size_t>(chunks) + static_cast<std::size_t>(c)];
    *static_cast<T*>(out[o]->raw_data()) = static_cast<T>(total);
    ++s;
  }
}
}  // namespace

void run_fused(const FusedKernel& k, std::span<const Tensor* const> in, std::span<Tensor* const> out) {
  if (k.dtype == DType::F64) {
    run_typed<double>(k, in, out);
  } else {
    run_typed<float>(k, in, out);
  }
}

bool run_op_fused(const StdTensorOp& op, std::span<const Tensor* const> in, std::span<Tensor> out) {
  if (out.size() != 1 || in.empty() || in.size() > 3) return false;
  // One kernel object per thread, refilled for each op: no allocation once its vectors have grown.
  thread_local FusedKernel k;
  std::array<DType, 3> dtypes{};
  for (std::size_t i = 0; i < in.size(); ++i) dtypes[i] = in[i]->dtype();
  if (!single_op_kernel(op, std::span<const DType>(dtypes.data(), in.size()), Trig::Separate, k) &&
      !sum_all_kernel(op, in[0]->type(), k)) {
    return false;
  }
  out[0] = Tensor::uninitialized(op.out);
  Tensor* results[] = {&out[0]};
  run_fused(k, in, results);
  return true;
}

}  // namespace tenferro::exec
