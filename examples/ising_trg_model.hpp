#pragma once
// The Levin-Nave TRG of the 2-D Ising model as a traced function of the coupling K: the program
// of examples/ising_trg.cpp (whose header comment states the conventions), shared with the TRG
// benchmark (bench/cases_linalg.cpp).
#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "tenferro/tenferro.hpp"

namespace ising {

namespace tf = tenferro;

/// Singular values at most this times the largest are taken as exact zeros.
inline constexpr double kSingularValueFloor = 1e-14;

/// sqrt(s) for the descending singular values s, with the numerically zero ones set to 0 and given
/// derivative 0: the second sqrt never sees them (it reads 1 there), so no infinite slope appears.
inline tf::Traced sqrt_sv(const tf::Traced& s) {
  const tf::Traced largest = tf::stop_gradient(tf::reshape(tf::slice(s, {0}, {1}), {}));
  const tf::Traced keep = tf::gt(s, largest * kSingularValueFloor);
  return tf::where(keep, tf::sqrt(tf::where(keep, s, tf::full_like(s, 1.0))), tf::full_like(s, 0.0));
}

/// The truncated split of matrix m [D^2, D^2] into (U sqrt(S) [D, D, k], sqrt(S) Vh [k, D, D]).
/// The SVD's factors are named "svd" (tf::checkpoint_name, the identity) for a checkpoint policy
/// that keeps them.
inline std::pair<tf::Traced, tf::Traced> split(const tf::Traced& m, std::int64_t d, std::int64_t k) {
  auto [U, S, Vh] = tf::linalg::svd(m);
  U = tf::checkpoint_name(U, "svd");
  S = tf::checkpoint_name(S, "svd");
  Vh = tf::checkpoint_name(Vh, "svd");
  const tf::Traced s = sqrt_sv(tf::slice(S, {0}, {k}));
  const tf::Traced left = tf::slice(U, {0, 0}, {d * d, k}) * s;                     // columns scaled
  const tf::Traced right = tf::reshape(s, {k, 1}) * tf::slice(Vh, {0, 0}, {k, d * d});  // rows scaled
  return {tf::reshape(left, {d, d, k}), tf::reshape(right, {k, d, d})};
}

/// One Levin-Nave step: T [D,D,D,D] -> T' [k,k,k,k], k = min(D^2, chi).
inline tf::Traced trg_step(const tf::Traced& t, std::int64_t chi) {
  const std::int64_t d = t.shape()[0], k = std::min(d * d, chi);
  const auto [s1, s3] = split(tf::reshape(t, {d * d, d * d}), d, k);                        // [r,u,a], [a,l,d]
  const auto [s2, s4] = split(tf::reshape(tf::transpose(t, {1, 2, 3, 0}), {d * d, d * d}), d, k);  // [u,l,b], [b,d,r]
  return tf::einsum("xwa,yxb,czy,dwz->cdab", s1, s2, s3, s4);
}

/// How derivatives keep each RG iteration's values (the checkpoint benchmark,
/// bench/cases_checkpoint.cpp); the values are the same. A checkpoint spans the whole iteration
/// (the normalization by the largest element and the step), so that only its input tensor is
/// kept between iterations.
enum class StepCheckpoint {
  None,       ///< every intermediate the derivatives read
  Recompute,  ///< each iteration one tf::checkpoint: its input, recomputing its SVDs and contraction
  KeepSvd,    ///< each iteration a checkpoint that keeps the SVDs' factors (CheckpointPolicy::SaveNamed)
              ///< and recomputes what lies between them: the normalization, truncation, scaling and
              ///< contraction
};

/// lnZ/N of the TRG with bond dimension chi after niter steps, as a function of the rank-0 K.
inline tf::Traced lnz_per_site(const tf::Traced& K, std::int64_t chi, int niter, StepCheckpoint checkpoint = StepCheckpoint::None) {
  const tf::Traced lam = tf::concatenate({tf::reshape(2.0 * tf::cosh(K), {1}), tf::reshape(2.0 * tf::sinh(K), {1})}, 0);
  const tf::Traced q = tf::sqrt(lam);
  std::vector<double> even(16);  // 0.5 where r+u+l+d is even, row-major over [r,u,l,d]
  for (std::size_t i = 0; i < 16; ++i) even[i] = ((i >> 3) + (i >> 2) + (i >> 1) + i) % 2 == 0 ? 0.5 : 0.0;
  tf::Traced t = tf::einsum("r,u,l,d->ruld", q, q, q, q) * tf::constant(K, tf::Tensor::from(even, {2, 2, 2, 2}));
  tf::Traced lnz = tf::full_like(K, 0.0);
  double weight = 1.0;  // 1 / 2^(n-1): the sites per tensor before step n, inverted
  // One iteration: t -> (the next t, log of the factor t was divided by).
  auto iteration = [chi](const tf::TracedList& in) {
    const tf::Traced m = tf::max(tf::abs(in[0]), {0, 1, 2, 3});
    return tf::TracedList{trg_step(in[0] / m, chi), tf::log(m)};
  };
  for (int n = 1; n <= niter; ++n) {
    tf::TracedList out;
    switch (checkpoint) {
      case StepCheckpoint::None: out = iteration({t}); break;
      case StepCheckpoint::Recompute: out = tf::checkpoint(iteration, tf::TracedList{t}); break;
      case StepCheckpoint::KeepSvd:
        out = tf::checkpoint(iteration, tf::TracedList{t}, {.policy = tf::CheckpointPolicy::SaveNamed, .names = {"svd"}});
        break;
    }
    t = out[0];
    lnz = lnz + out[1] * weight;
    weight *= 0.5;
  }
  return lnz + tf::log(tf::einsum("ijij->", t)) * weight;
}

/// {lnZ/N, d(lnZ/N)/dK, d^2(lnZ/N)/dK^2} at the rank-0 K, as one traced function: forward mode
/// twice. K is one number, so forward mode is the cheap direction (no residuals kept, no reverse
/// pass), and the value and both derivatives share one forward pass (the trace merges the
/// repeated primal computation). Only the first k columns of each SVD's U (rows of Vh) are read,
/// so the executor computes only those columns of their tangents (docs/tenferro.md, "Narrowing
/// slices").
inline tf::TracedList lnz_and_derivatives(const tf::Traced& K, std::int64_t chi, int niter) {
  auto f = [chi, niter](const tf::Traced& k) { return lnz_per_site(k, chi, niter); };
  auto slope = [f](const tf::Traced& k) {
    return tf::jvp(f, std::vector<tf::Traced>{k}, std::vector<tf::Traced>{tf::full_like(k, 1.0)}).second;
  };
  auto [d1, d2] = tf::jvp(slope, std::vector<tf::Traced>{K}, std::vector<tf::Traced>{tf::full_like(K, 1.0)});
  return {f(K), d1, d2};
}

}  // namespace ising
