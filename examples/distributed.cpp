// Data-parallel training and a sliced contraction over MPI (tenferro/distributed.hpp):
//
//   mpirun -np 2 ./build/release/examples/distributed     (as root: add --allow-run-as-root)
//
// Every rank generates the same regression data, keeps its shard, and trains a small tanh
// network with Adam on gradients averaged over the ranks; every rank ends with the same
// parameters. Then the ranks share the slices of a contraction sliced to a memory limit. Rank 0
// prints the losses and the contraction's value; the program exits non-zero if the loss did not
// fall or the distributed contraction disagrees with the one-process one.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <tuple>

#include "tenferro/distributed.hpp"
#include "tenferro/tenferro.hpp"

namespace tf = tenferro;
namespace dist = tenferro::distributed;
using T = tf::Traced;

namespace {
tf::Tensor random_tensor(std::mt19937_64& rng, tf::Shape shape, double scale) {
  std::normal_distribution<double> normal;
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  std::vector<double> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = scale * normal(rng);
  return tf::Tensor::from(v, std::move(shape));
}
}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int status = 0;
  {
    // y = sin(x . a) + noise, 512 examples of 8 features; the same on every rank (one seed).
    std::mt19937_64 rng(1);
    const tf::Tensor x = random_tensor(rng, {512, 8}, 1.0), a = random_tensor(rng, {8, 1}, 0.5);
    std::vector<double> yv(512);
    for (std::int64_t i = 0; i < 512; ++i) {
      double dot = 0;
      for (std::int64_t j = 0; j < 8; ++j) dot += x.element(i * 8 + j).real() * a.element(j).real();
      yv[static_cast<std::size_t>(i)] = std::sin(dot);
    }
    const tf::Tensor y = tf::Tensor::from(yv, {512, 1});
    auto loss = [](const T& w1, const T& b1, const T& w2, const T& xb, const T& yb) {
      const T d = tf::matmul(tf::tanh(tf::matmul(xb, w1) + b1), w2) - yb;
      return tf::mean(d * d);
    };
    tf::Tensors params{random_tensor(rng, {8, 32}, 0.3), tf::Tensor::zeros({32}), random_tensor(rng, {32, 1}, 0.2)};
    auto step = dist::value_and_grad(MPI_COMM_WORLD, loss, params.size());
    const tf::Tensors shard{dist::shard(MPI_COMM_WORLD, x), dist::shard(MPI_COMM_WORLD, y)};
    const tf::optim::Optimizer adam = tf::optim::adam({.lr = tf::optim::cosine_decay(0.02, 300)});
    tf::Tensors state = adam.init(params);
    double first = 0, last = 0;
    for (int k = 0; k < 300; ++k) {
      auto [l, g] = step(params, shard);
      (k == 0 ? first : last) = l.element(0).real();
      // The update at once on the values (it is cheap; a compiled step would trace the same calls).
      std::tie(params, state) = adam.step(params, g, state);
    }
    if (rank == 0) std::printf("data parallel over %d ranks: loss %.4f -> %.4f\n", size, first, last);
    if (!(last < 0.5 * first)) status = 1;
  }
  {
    // A ring of 6 tensors with bond 8 and one open leg each, three of the legs kept; intermediates
    // limited to 128 elements (256 unsliced), so the path is sliced and the ranks share the slices.
    std::mt19937_64 rng(2);
    tf::Tensors xs;
    for (int k = 0; k < 6; ++k) xs.push_back(random_tensor(rng, {8, 8, 2}, 0.4));
    tf::tn::Options options;
    options.path.memory_limit = 128.0;
    const std::string spec = "abx,bcy,cdz,dew,efv,fau->xyz";
    dist::EinsumSplit split;
    const tf::Tensor z = dist::einsum(MPI_COMM_WORLD, spec, xs, options, split);
    const tf::Tensor one = tf::einsum(spec, std::span<const tf::Tensor>(xs));
    double worst = 0;
    for (std::int64_t i = 0; i < one.numel(); ++i) {
      const double want = one.element(i).real();
      worst = std::max(worst, std::abs(z.element(i).real() - want) / (1 + std::abs(want)));
    }
    if (rank == 0) {
      std::printf("sliced contraction: %lld slices over %d ranks, largest relative difference from one process %.2g\n",
                  static_cast<long long>(split.slices), size, worst);
    }
    if (!(worst <= 1e-12) || split.slices < 2) status = 1;
  }
  MPI_Finalize();
  return status;
}
