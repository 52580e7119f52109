// random_bits and random_uniform: counter-based random numbers (Threefry-2x32 with 20 rounds,
// Salmon, Moraes, Dror and Shaw, "Parallel random numbers: as easy as 1, 2, 3", SC 2011). Order:
// the generator, shape rules, kernels, definitions.
//
// Purity: the result is a function of the key and the attributes only; no state is kept between
// calls, so a program run twice, on any number of threads, gives the same bits. Every output word
// is computed from its key and its own counter, so threads split the (key, counter) pairs between
// them and the result does not depend on the split. The key operand carries no tangent (its dtype
// is i64), so the ops need no derivative rules: a random draw is a constant of the program's
// derivative.
//
// Keys: one key i64[2], or a stack of keys i64[k.., 2]; a stack draws for each key, the result
// [k.., shape..] holding in each key's block exactly the draw of that key alone. That makes the
// batching rule (vmap) the leading-axis one: a batched key is a stack of keys, independent streams
// bitwise equal to separate draws, in one op.
#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "ir/batching.hpp"
#include "ir/family.hpp"
#include "kernels/parallel.hpp"
#include "tenferro/ops/random_attrs.hpp"
#include "tenferro/threads.hpp"
#include "tenferro/ops/make.hpp"

namespace tenferro {

void RandomAttrs::print(std::ostream& os) const {
  os << "shape=" << shape_to_string(shape) << ", dtype=" << dtype_name(dtype) << ", stream=" << stream
     << ", offset=" << offset;
}

namespace ops {
namespace {
/// The result's shape: the key's leading axes, then attrs.shape. DTypeError or ShapeError naming the
/// op, the key's type and what is expected.
Shape check_key(const char* op, const TensorType& key, const RandomAttrs& attrs) {
  const std::string expected = "; expected a key i64[2] (two 32-bit words) or a stack of keys i64[k.., 2]";
  if (key.dtype != DType::I64) throw DTypeError(std::string(op) + ": key " + key.to_string() + expected);
  if (key.rank() == 0 || key.shape.back() != 2) throw ShapeError(std::string(op) + ": key " + key.to_string() + expected);
  for (std::int64_t d : attrs.shape) {
    if (d < 0) throw ShapeError(std::string(op) + ": shape " + shape_to_string(attrs.shape) + " has a negative dimension");
  }
  Shape out(key.shape.begin(), key.shape.end() - 1);
  out.insert(out.end(), attrs.shape.begin(), attrs.shape.end());
  return out;
}
}  // namespace

StdTensorOp random_bits(const TensorType& key, RandomAttrs attrs) {
  Shape shape = check_key("random_bits", key, attrs);
  attrs.dtype = DType::I64;
  TensorType out{DType::I64, std::move(shape)};
  return detail::make(OpKind::RandomBits, std::move(out), OpAttrs(std::move(attrs)));
}

StdTensorOp random_uniform(const TensorType& key, RandomAttrs attrs) {
  Shape shape = check_key("random_uniform", key, attrs);
  if (attrs.dtype != DType::F32 && attrs.dtype != DType::F64) {
    throw DTypeError(std::string("random_uniform: dtype ") + dtype_name(attrs.dtype) + "; expected f32 or f64");
  }
  TensorType out{attrs.dtype, std::move(shape)};
  return detail::make(OpKind::RandomUniform, std::move(out), OpAttrs(std::move(attrs)));
}
}  // namespace ops

namespace detail {

namespace {

/// Threefry-2x32, 20 rounds: the two words encrypting counter (c0, c1) under key (k0, k1).
std::array<std::uint32_t, 2> threefry2x32(std::uint32_t k0, std::uint32_t k1, std::uint32_t c0, std::uint32_t c1) {
  constexpr int kRotations[8] = {13, 15, 26, 6, 17, 29, 16, 24};
  const std::uint32_t ks[3] = {k0, k1, 0x1BD11BDAu ^ k0 ^ k1};
  std::uint32_t x0 = c0 + ks[0], x1 = c1 + ks[1];
  for (int r = 0; r < 20; ++r) {
    x0 += x1;
    const int rot = kRotations[r % 8];
    x1 = (x1 << rot) | (x1 >> (32 - rot));
    x1 ^= x0;
    if (r % 4 == 3) {  // key injection s = 1 .. 5
      const int s = r / 4 + 1;
      x0 += ks[s % 3];
      x1 += ks[(s + 1) % 3] + static_cast<std::uint32_t>(s);
    }
  }
  return {x0, x1};
}

using KeyWords = std::array<std::uint32_t, 2>;

/// The words of each key of a key tensor [k.., 2] (one key per row, row-major); ValueError naming
/// the op, the key and the word if an entry is not a 32-bit word.
std::vector<KeyWords> key_words(const char* op, const Tensor& key) {
  const std::int64_t* v = key.data<std::int64_t>();
  std::vector<KeyWords> keys(static_cast<std::size_t>(key.numel() / 2));
  for (std::size_t j = 0; j < keys.size(); ++j) {
    for (std::size_t i = 0; i < 2; ++i) {
      const std::int64_t w = v[2 * j + i];
      if (w < 0 || w > 0xFFFFFFFFll) {
        throw ValueError(std::string(op) + ": key word " + std::to_string(i) + (keys.size() > 1 ? " of key " + std::to_string(j) : "") +
                         " is " + std::to_string(w) + "; expected a 32-bit word in [0, 2^32)");
      }
      keys[j][i] = static_cast<std::uint32_t>(w);
    }
  }
  return keys;
}

/// threefry2x32 of the kLanes counters (c0, c1 + l), l < kLanes (c1 + l wrapping as a 32-bit
/// word): the same rounds on arrays, one lane loop per step, which the compiler vectorizes.
/// Inlined into a build for AVX-512 (16 lanes in one register, one-instruction rotates), one for
/// AVX2 and the baseline one, picked once by the CPU (a function pointer, not an ifunc:
/// ThreadSanitizer's runtime is not up when ifunc resolvers run). Integer arithmetic only: every
/// build gives the same bits.
constexpr int kLanes = 16;
[[gnu::always_inline]] inline void threefry2x32_rounds(std::uint32_t k0, std::uint32_t k1, std::uint32_t c0,
                                                       std::uint32_t c1, std::uint32_t* y0, std::uint32_t* y1) {
  constexpr int kRotations[8] = {13, 15, 26, 6, 17, 29, 16, 24};
  const std::uint32_t ks[3] = {k0, k1, 0x1BD11BDAu ^ k0 ^ k1};
  std::uint32_t x0[kLanes], x1[kLanes];
  for (int l = 0; l < kLanes; ++l) {
    x0[l] = c0 + ks[0];
    x1[l] = c1 + static_cast<std::uint32_t>(l) + ks[1];
  }
  for (int r = 0; r < 20; ++r) {
    const int rot = kRotations[r % 8];
    for (int l = 0; l < kLanes; ++l) {
      x0[l] += x1[l];
      x1[l] = (x1[l] << rot) | (x1[l] >> (32 - rot));
      x1[l] ^= x0[l];
    }
    if (r % 4 == 3) {  // key injection s = 1 .. 5
      const int s = r / 4 + 1;
      const std::uint32_t add0 = ks[s % 3], add1 = ks[(s + 1) % 3] + static_cast<std::uint32_t>(s);
      for (int l = 0; l < kLanes; ++l) {
        x0[l] += add0;
        x1[l] += add1;
      }
    }
  }
  for (int l = 0; l < kLanes; ++l) {
    y0[l] = x0[l];
    y1[l] = x1[l];
  }
}

[[gnu::target("avx512f")]] void threefry2x32_lanes_avx512(std::uint32_t k0, std::uint32_t k1, std::uint32_t c0,
                                                          std::uint32_t c1, std::uint32_t* y0, std::uint32_t* y1) {
  threefry2x32_rounds(k0, k1, c0, c1, y0, y1);
}
[[gnu::target("avx2")]] void threefry2x32_lanes_avx2(std::uint32_t k0, std::uint32_t k1, std::uint32_t c0,
                                                     std::uint32_t c1, std::uint32_t* y0, std::uint32_t* y1) {
  threefry2x32_rounds(k0, k1, c0, c1, y0, y1);
}
void threefry2x32_lanes_baseline(std::uint32_t k0, std::uint32_t k1, std::uint32_t c0, std::uint32_t c1,
                                 std::uint32_t* y0, std::uint32_t* y1) {
  threefry2x32_rounds(k0, k1, c0, c1, y0, y1);
}

using LanesFn = void (*)(std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t*, std::uint32_t*);
LanesFn pick_lanes() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return threefry2x32_lanes_avx512;
  if (__builtin_cpu_supports("avx2")) return threefry2x32_lanes_avx2;
  return threefry2x32_lanes_baseline;
}

void threefry2x32_lanes(std::uint32_t k0, std::uint32_t k1, std::uint32_t c0, std::uint32_t c1, std::uint32_t* y0,
                        std::uint32_t* y1) {
  static const LanesFn lanes = pick_lanes();
  lanes(k0, k1, c0, c1, y0, y1);
}

/// Calls emit(key, block, w0, w1) for each key of `keys` and its counter blocks [0, blocks) of
/// (stream, offset + block). The work is cut into units, per key its groups of kLanes blocks and
/// then its remaining blocks (one unit), and the units of all keys are split over the threads for
/// large draws (many keys, or long streams). Each block is computed from its key and counter alone
/// and each output written by one unit, so the bits depend neither on the grouping nor on the
/// thread count.
template <class Emit>
void for_blocks(const std::vector<KeyWords>& keys, const RandomAttrs& a, std::int64_t blocks, Emit emit) {
  const std::int64_t groups = blocks / kLanes, tail = blocks - groups * kLanes;
  const std::int64_t per_key = groups + (tail > 0 ? 1 : 0);
  const auto nkeys = static_cast<std::int64_t>(keys.size());
  const std::int64_t units = nkeys * per_key;
  const int threads = nkeys * blocks > (1 << 13) ? num_threads() : 1;
  exec::parallel_ranges(units, threads, [&](std::int64_t first, std::int64_t last) {
    for (std::int64_t u = first; u < last; ++u) {
      const std::int64_t j = u / per_key, g = u - j * per_key;
      const KeyWords& k = keys[static_cast<std::size_t>(j)];
      if (g < groups) {
        std::uint32_t w0[kLanes], w1[kLanes];
        threefry2x32_lanes(k[0], k[1], a.stream, a.offset + static_cast<std::uint32_t>(g * kLanes), w0, w1);
        for (int l = 0; l < kLanes; ++l) emit(j, g * kLanes + l, w0[l], w1[l]);
      } else {
        for (std::int64_t b = groups * kLanes; b < blocks; ++b) {
          const auto w = threefry2x32(k[0], k[1], a.stream, a.offset + static_cast<std::uint32_t>(b));
          emit(j, b, w[0], w[1]);
        }
      }
    }
  });
}

/// The number of values each key draws: the attributes' shape's element count.
std::int64_t per_key_count(const RandomAttrs& a) {
  std::int64_t n = 1;
  for (std::int64_t d : a.shape) n *= d;
  return n;
}

Tensor eval_random_bits(const StdTensorOp& op, Operands in) {
  const auto& a = op.attrs.get<RandomAttrs>();
  Tensor r = Tensor::uninitialized(op.out);
  std::int64_t* out = r.data<std::int64_t>();
  const std::int64_t n = per_key_count(a);
  for_blocks(key_words("random_bits", *in[0]), a, (n + 1) / 2,
             [&](std::int64_t j, std::int64_t b, std::uint32_t w0, std::uint32_t w1) {
               std::int64_t* y = out + j * n;
               y[2 * b] = w0;
               if (2 * b + 1 < n) y[2 * b + 1] = w1;
             });
  return r;
}

Tensor eval_random_uniform(const StdTensorOp& op, Operands in) {
  const auto& a = op.attrs.get<RandomAttrs>();
  Tensor r = Tensor::uninitialized(op.out);
  const std::int64_t n = per_key_count(a);
  const auto keys = key_words("random_uniform", *in[0]);
  if (op.out.dtype == DType::F64) {  // one block per value: (w0 >> 5) 2^26 + (w1 >> 6), times 2^-53
    double* out = r.data<double>();
    for_blocks(keys, a, n, [&](std::int64_t j, std::int64_t b, std::uint32_t w0, std::uint32_t w1) {
      out[j * n + b] = (static_cast<double>(w0 >> 5) * 67108864.0 + static_cast<double>(w1 >> 6)) * 0x1p-53;
    });
  } else {  // two values per block: the top 24 bits of a word, times 2^-24
    float* out = r.data<float>();
    for_blocks(keys, a, (n + 1) / 2, [&](std::int64_t j, std::int64_t b, std::uint32_t w0, std::uint32_t w1) {
      float* y = out + j * n;
      y[2 * b] = static_cast<float>(w0 >> 8) * 0x1p-24f;
      if (2 * b + 1 < n) y[2 * b + 1] = static_cast<float>(w1 >> 8) * 0x1p-24f;
    });
  }
  return r;
}

}  // namespace

const OpDef& def_RandomBits() {
  static const OpDef d{.name = "random_bits", .kind = OpKind::RandomBits, .operands = {kNoGrad},
                       .shape_rule = single_type(+[](Types t, const OpAttrs& a) {
                         return ops::random_bits(t[0], a.get<RandomAttrs>()).out;
                       }),
                       .kernel = single_result(eval_random_bits), .batch = batch_leading_axis()};
  return d;
}
const OpDef& def_RandomUniform() {
  static const OpDef d{.name = "random_uniform", .kind = OpKind::RandomUniform, .operands = {kNoGrad},
                       .shape_rule = single_type(+[](Types t, const OpAttrs& a) {
                         return ops::random_uniform(t[0], a.get<RandomAttrs>()).out;
                       }),
                       .kernel = single_result(eval_random_uniform), .batch = batch_leading_axis()};
  return d;
}

}  // namespace detail
}  // namespace tenferro
