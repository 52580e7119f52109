// bench_mpi: tenferro::distributed under mpirun (scripts/bench mpi runs it at 1 and 2 ranks, one
// thread each, and prints time_ratio_vs_1rank). Rank 0 prints one line per case:
//   case=mpi_sliced_einsum  a random cubic graph of 34 rank-3 tensors (bond 8, a ring plus a random
//                           perfect matching), contracted to a scalar with intermediates limited to
//                           2^16 elements: the path is sliced and the slices spread over the ranks
//   case=mpi_dp_mlp         one data-parallel value_and_grad of a 784-512-10 tanh MLP (softmax
//                           cross-entropy, f32) on a batch of 1024 split over the ranks
//   case=mpi_allreduce      distributed::sum_over_ranks (the ring all-reduce of the gradients) of
//                           f64 buffers of 8 KiB to 16 MiB: the cost model's latency and bandwidth
// with ranks=, threads=, median_s= (the slowest rank's time per call, between barriers), and the
// bytes each rank sends per call (comm_bytes).
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "tenferro/distributed.hpp"
#include "tenferro/tenferro.hpp"

namespace tf = tenferro;
namespace dist = tenferro::distributed;
using T = tf::Traced;

namespace {

/// Subscripts of a random cubic graph on n vertices (n even, 3n/2 <= 52 edges): the ring
/// 0-1-...-(n-1)-0 plus a random perfect matching of vertices not adjacent on it; one letter per
/// edge, a scalar result.
std::string cubic_graph(int n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::pair<int, int>> matching;
  while (true) {
    std::vector<int> v(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = i;
    std::shuffle(v.begin(), v.end(), rng);
    matching.clear();
    bool ok = true;
    for (std::size_t i = 0; i < v.size(); i += 2) {
      const int d = std::abs(v[i] - v[i + 1]);
      ok = ok && d != 1 && d != n - 1;
      matching.emplace_back(v[i], v[i + 1]);
    }
    if (ok) break;
  }
  const std::string letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
  std::vector<std::string> inputs(static_cast<std::size_t>(n));
  std::size_t e = 0;
  for (int i = 0; i < n; ++i) {
    inputs[static_cast<std::size_t>(i)] += letters[e];
    inputs[static_cast<std::size_t>((i + 1) % n)] += letters[e++];
  }
  for (auto [a, b] : matching) {
    inputs[static_cast<std::size_t>(a)] += letters[e];
    inputs[static_cast<std::size_t>(b)] += letters[e++];
  }
  std::string spec;
  for (std::size_t i = 0; i < inputs.size(); ++i) spec += (i ? "," : "") + inputs[i];
  return spec + "->";
}

tf::Tensor random_tensor(std::mt19937_64& rng, tf::Shape shape, double scale, tf::DType dtype) {
  std::normal_distribution<double> normal;
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  if (dtype == tf::DType::F32) {
    std::vector<float> v(static_cast<std::size_t>(n));
    for (auto& x : v) x = static_cast<float>(scale * normal(rng));
    return tf::Tensor::from(v, std::move(shape));
  }
  std::vector<double> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = scale * normal(rng);
  return tf::Tensor::from(v, std::move(shape));
}

/// The median over `reps` calls of the slowest rank's time (barrier, call, barrier).
template <class F>
double median_time(F&& call, int reps) {
  call();  // warm-up: tracing, compiling, first touch
  std::vector<double> times;
  for (int r = 0; r < reps; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    call();
    double mine = MPI_Wtime() - start, slowest = 0;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    times.push_back(slowest);
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

constexpr std::int64_t kBond = 8;
constexpr double kLimit = 65536.0;  // 2^16 elements: the path is sliced into 64 slices

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int reps = 5;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::string(argv[i]) == "--reps") reps = std::stoi(argv[i + 1]);
  }
  const int threads = tf::num_threads();
  {
    const std::string spec = cubic_graph(34, 1);
    std::mt19937_64 rng(2);
    tf::Tensors xs;
    std::vector<tf::Shape> shapes;
    for (int k = 0; k < 34; ++k) {
      xs.push_back(random_tensor(rng, {kBond, kBond, kBond}, 0.3, tf::DType::F64));
      shapes.push_back(xs.back().shape());
    }
    tf::tn::Options options;
    options.path.memory_limit = kLimit;
    const tf::tn::ContractionPath path = tf::einsum_path(spec, std::span<const tf::Shape>(shapes), options);
    dist::EinsumSplit split;
    const double t = median_time([&] { dist::einsum(MPI_COMM_WORLD, spec, xs, options, split); }, reps);
    if (rank == 0) {
      std::printf("case=mpi_sliced_einsum impl=tenferro size=cubic34x%lld ranks=%d threads=%d slices=%lld log2_flops=%.1f "
                  "median_s=%.6g comm_bytes=%zu\n", static_cast<long long>(kBond), size, threads,
                  static_cast<long long>(split.slices), path.log2_flops, t, split.bytes_sent);
    }
  }
  {
    std::mt19937_64 rng(3);
    const tf::Tensors params{random_tensor(rng, {784, 512}, 0.035, tf::DType::F32), tf::Tensor::zeros({512}, tf::DType::F32),
                             random_tensor(rng, {512, 10}, 0.044, tf::DType::F32), tf::Tensor::zeros({10}, tf::DType::F32)};
    const tf::Tensor x = random_tensor(rng, {1024, 784}, 1.0, tf::DType::F32);
    std::vector<float> onehot(1024 * 10, 0.0f);
    for (int i = 0; i < 1024; ++i) onehot[static_cast<std::size_t>(i * 10 + i % 10)] = 1.0f;
    const tf::Tensor y = tf::Tensor::from(onehot, {1024, 10});
    auto loss = [](const T& w1, const T& b1, const T& w2, const T& b2, const T& xb, const T& yb) {
      return tf::cross_entropy(tf::matmul(tf::tanh(tf::matmul(xb, w1) + b1), w2) + b2, yb);
    };
    auto step = dist::value_and_grad(MPI_COMM_WORLD, loss, params.size());
    const tf::Tensors data{dist::shard(MPI_COMM_WORLD, x), dist::shard(MPI_COMM_WORLD, y)};
    const double t = median_time([&] { step(params, data); }, reps);
    std::size_t bytes = 0;
    for (const auto& p : params) bytes += p.nbytes();
    if (rank == 0) {
      std::printf("case=mpi_dp_mlp impl=tenferro size=b1024 ranks=%d threads=%d median_s=%.6g comm_bytes=%zu\n", size,
                  threads, t, 2 * static_cast<std::size_t>(size - 1) * bytes / static_cast<std::size_t>(size));
    }
  }
  for (const std::int64_t bytes : {std::int64_t{8} << 10, std::int64_t{128} << 10, std::int64_t{2} << 20,
                                   std::int64_t{16} << 20}) {
    const tf::Tensors buffer{tf::Tensor::ones({bytes / 8})};
    const double t = median_time([&] { dist::sum_over_ranks(MPI_COMM_WORLD, buffer); }, reps);
    if (rank == 0) {
      std::printf("case=mpi_allreduce impl=tenferro size=%lldB ranks=%d threads=%d median_s=%.6g comm_bytes=%lld\n",
                  static_cast<long long>(bytes), size, threads, t,
                  static_cast<long long>(2 * (size - 1) * bytes / size));
    }
  }
  MPI_Finalize();
  return 0;
}
