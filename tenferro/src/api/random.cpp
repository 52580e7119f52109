// Pure random numbers (tenferro/random.hpp): keys, and distributions composed from the
// random_bits and random_uniform primitives.
#include "tenferro/random.hpp"

#include <cmath>

#include "tenferro/indexing.hpp"
#include "tenferro/math.hpp"
#include "tenferro/ops/random_attrs.hpp"
#include "tenferro/sort_scan.hpp"
#include "tenferro/ops/record.hpp"

namespace tenferro::random {

namespace {
constexpr std::uint32_t kSplitStream = 0, kFoldInStream = 1, kUniformStream = 2, kBitsStream = 3;

Traced draw_bits(const Traced& key, Shape shape, std::uint32_t stream, std::uint32_t offset) {
  return apply(ops::random_bits(key.type(), RandomAttrs{std::move(shape), DType::I64, stream, offset}), {key});
}
/// Uniform on [0, 1) and the number of random bits t in each value (u = k 2^-t).
std::pair<Traced, int> unit(const Traced& key, Shape shape, DType dtype) {
  const Traced u = apply(ops::random_uniform(key.type(), RandomAttrs{std::move(shape), dtype, kUniformStream, 0}), {key});
  return {u, dtype == DType::F32 ? 24 : 53};
}
void require_float(const char* op, DType dtype) {
  if (dtype != DType::F32 && dtype != DType::F64) {
    throw DTypeError(std::string("random::") + op + ": dtype " + dtype_name(dtype) + "; expected f32 or f64");
  }
}
}  // namespace

Tensor key(std::uint64_t seed) {
  return Tensor::from(std::vector<std::int64_t>{static_cast<std::int64_t>(seed >> 32),
                                                static_cast<std::int64_t>(seed & 0xFFFFFFFFull)},
                      {2});
}

std::vector<Traced> split(const Traced& key, std::int64_t n) {
  if (n < 1) throw ValueError("random::split: n = " + std::to_string(n) + "; expected at least 1 key");
  const Traced words = draw_bits(key, {n, 2}, kSplitStream, 0);  // [k.., n, 2]: n keys per key
  const Shape& w = words.shape();
  const std::size_t at = w.size() - 2;
  Shape one = w;
  one.erase(one.begin() + static_cast<std::ptrdiff_t>(at));
  std::vector<Traced> keys;
  for (std::int64_t i = 0; i < n; ++i) {
    std::vector<std::int64_t> start(w.size(), 0), limit(w.begin(), w.end());
    start[at] = i;
    limit[at] = i + 1;
    keys.push_back(reshape(slice(words, std::move(start), std::move(limit)), one));
  }
  return keys;
}

Traced fold_in(const Traced& key, std::uint32_t data) { return draw_bits(key, {2}, kFoldInStream, data); }

Traced bits(const Traced& key, Shape shape) { return draw_bits(key, std::move(shape), kBitsStream, 0); }

Traced uniform(const Traced& key, Shape shape, DType dtype, double lo, double hi) {
  require_float("uniform", dtype);
  if (!(lo <= hi) || !std::isfinite(lo) || !std::isfinite(hi)) {
    throw ValueError("random::uniform: bounds [" + std::to_string(lo) + ", " + std::to_string(hi) +
                     "); expected finite lo <= hi");
  }
  const Traced u = unit(key, std::move(shape), dtype).first;
  if (lo == 0.0 && hi == 1.0) return u;
  return u * (hi - lo) + lo;
}

Traced normal(const Traced& key, Shape shape, DType dtype) {
  require_float("normal", dtype);
  auto [u, t] = unit(key, std::move(shape), dtype);
  // u = k 2^-t, so 2u - 1 + 2^-t = (2k + 1 - 2^t) 2^-t: odd numerators, exactly representable,
  // symmetric about 0 and never +-1 (where erfinv is infinite).
  const Traced v = u * 2.0 + (std::ldexp(1.0, -t) - 1.0);
  return erfinv(v) * std::sqrt(2.0);
}

Traced bernoulli(const Traced& key, double p, Shape shape) {
  if (!(p >= 0.0 && p <= 1.0)) {
    throw ValueError("random::bernoulli: p = " + std::to_string(p) + "; expected a probability in [0, 1]");
  }
  const Traced u = unit(key, std::move(shape), DType::F64).first;
  return lt(u, full_like(u, p));
}

Traced categorical(const Traced& key, const Traced& logits, std::int64_t axis) {
  require_float("categorical", logits.dtype());
  auto [u, t] = unit(key, logits.shape(), logits.dtype());
  // (k + 1/2) 2^-t lies in (0, 1): the Gumbel noise -log(-log(u')) is finite.
  const Traced open = u + std::ldexp(1.0, -t - 1);
  const Traced gumbel = -log(-log(open));
  // A stack of keys [k.., 2] gives noise [k.., logits..]: the axis counts past the keys' axes.
  const std::int64_t keys = static_cast<std::int64_t>(key.rank()) - 1;
  return argmax(stop_gradient(logits) + gumbel, (axis < 0 ? axis + static_cast<std::int64_t>(logits.rank()) : axis) + keys);
}

Traced permutation(const Traced& key, std::int64_t n) {
  if (n < 0) throw ValueError("random::permutation: n = " + std::to_string(n) + "; expected n >= 0");
  return argsort(unit(key, {n}, DType::F64).first);
}

}  // namespace tenferro::random

namespace tenferro {

Traced dropout(const Traced& key, const Traced& x, double p) {
  if (!(p >= 0.0 && p < 1.0)) throw ValueError("dropout: p = " + std::to_string(p) + "; expected 0 <= p < 1");
  if (p == 0.0) return x;
  const Traced keep = random::bernoulli(key, 1.0 - p, x.shape());
  return where(keep, x * (1.0 / (1.0 - p)), 0.0);
}

}  // namespace tenferro
