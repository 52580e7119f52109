#pragma once
// Pure random numbers, as in JAX: a key is a tensor (i64[2], two 32-bit words), and every function
// here is a deterministic function of its key, so a program run twice gives the same numbers, on
// any number of threads, and AD never meets hidden state (a draw is a constant of the program's
// derivative; dropout's backward pass uses exactly the forward mask).
//
// The generator is Threefry-2x32 (20 rounds) in counter mode (primitives random_bits and
// random_uniform, src/ops/random_bits.cpp): word j of a draw encrypts the counter (stream, j / 2)
// under the key. The streams keep the functions apart: split 0, fold_in 1, uniform 2 (and through
// it normal, bernoulli, categorical, permutation, dropout), bits 3. Use a key once: split it for
// independent draws.
//
// Every function also takes a stack of keys, i64[k.., 2], and then draws for each key: its results
// get the leading axes [k..], each key's block exactly what that key alone gives (split returns
// n stacks [k.., 2]). vmap over keys runs this way, in one primitive per draw: a batched key gives
// independent streams, bitwise equal to separate draws.
#include <cstdint>
#include <vector>

#include "tenferro/traced.hpp"

namespace tenferro::random {

/// The key of a 64-bit seed: [seed >> 32, seed & 0xFFFFFFFF].
Tensor key(std::uint64_t seed);

/// n independent keys derived from `key`.
std::vector<Traced> split(const Traced& key, std::int64_t n = 2);
/// The key derived from `key` and `data` (e.g. a step number or a layer index).
Traced fold_in(const Traced& key, std::uint32_t data);
/// Random 32-bit words of `shape` as i64 values in [0, 2^32).
Traced bits(const Traced& key, Shape shape);

/// Uniform values in [lo, hi) of `shape` (f32: 24 random bits each; f64: 53).
Traced uniform(const Traced& key, Shape shape, DType dtype = DType::F64, double lo = 0.0, double hi = 1.0);
/// Standard normal values: sqrt(2) erfinv(v) with v uniform on the open interval (-1, 1).
Traced normal(const Traced& key, Shape shape, DType dtype = DType::F64);
/// Bool values, true with probability p (0 <= p <= 1).
Traced bernoulli(const Traced& key, double p, Shape shape);
/// Indices drawn from the softmax of `logits` along `axis` (i64, that axis removed), by the
/// Gumbel-max trick: argmax(logits + g) with g standard Gumbel noise.
Traced categorical(const Traced& key, const Traced& logits, std::int64_t axis = -1);
/// A uniformly random permutation of 0 .. n-1 (i64).
Traced permutation(const Traced& key, std::int64_t n);

}  // namespace tenferro::random

namespace tenferro {

/// x with each element zeroed with probability p and the rest scaled by 1 / (1 - p) (inverted
/// dropout; 0 <= p < 1). The mask is a function of the key, so the derivative passes exactly
/// through the elements kept.
Traced dropout(const Traced& key, const Traced& x, double p);

}  // namespace tenferro
