// tenferro::distributed under mpirun (CTest mpi.np2, mpi.np4): every test runs on every rank and
// checks (1) the result against the single-process computation on the whole input, (2) that every
// rank holds the same bits (gathered and compared), and (3) the failure and communicator errors.
#include <gmock/gmock.h>

#include <cstring>
#include <random>
#include <tuple>

#include "tenferro/distributed.hpp"
#include "tenferro/tenferro.hpp"

namespace tf = tenferro;
namespace dist = tenferro::distributed;
using ::testing::HasSubstr;
using T = tf::Traced;

namespace {

tf::Tensor random_tensor(std::mt19937_64& rng, tf::Shape shape) {
  std::normal_distribution<double> normal;
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  std::vector<double> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = normal(rng);
  return tf::Tensor::from(v, std::move(shape));
}

/// Whether every rank of `comm` holds the same bytes in `t`.
bool same_on_every_rank(MPI_Comm comm, const tf::Tensor& t) {
  int size = 0;
  MPI_Comm_size(comm, &size);
  std::vector<std::byte> all(t.nbytes() * static_cast<std::size_t>(size));
  MPI_Allgather(t.raw_data(), static_cast<int>(t.nbytes()), MPI_BYTE, all.data(), static_cast<int>(t.nbytes()), MPI_BYTE,
                comm);
  for (int k = 1; k < size; ++k) {
    if (std::memcmp(all.data(), all.data() + static_cast<std::size_t>(k) * t.nbytes(), t.nbytes()) != 0) return false;
  }
  return true;
}

void expect_near(const tf::Tensor& a, const tf::Tensor& b, double tol) {
  ASSERT_EQ(a.type(), b.type());
  for (std::int64_t i = 0; i < a.numel(); ++i) {
    EXPECT_NEAR(a.element(i).real(), b.element(i).real(), tol * (1 + std::abs(b.element(i).real()))) << "element " << i;
  }
}

int world_size() {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

}  // namespace

// A ring of 6 tensors sliced to a memory limit: the ranks' combined result equals the single
// process's to rounding, every rank holds the same bits, and on one process (MPI_COMM_SELF) it is
// einsum's result bit for bit. Max-plus combines exactly.
TEST(Distributed, SlicedEinsumEqualsTheSingleProcess) {
  std::mt19937_64 rng(5);  // the same operands on every rank
  const std::string spec = "abx,bcy,cdz,dew,efv,fau->xyz";
  tf::Tensors xs;
  for (int k = 0; k < 6; ++k) xs.push_back(random_tensor(rng, {8, 8, 2}));
  for (const tf::Semiring semiring : {tf::Semiring::Standard, tf::Semiring::MaxPlus}) {
    tf::tn::Options options;
    options.path.memory_limit = 128.0;  // intermediates of 256 elements unsliced: 8 slices
    options.semiring = semiring;
    const tf::Tensor single = tf::einsum(spec, std::span<const tf::Tensor>(xs), options);
    dist::EinsumSplit split;
    const tf::Tensor got = dist::einsum(MPI_COMM_WORLD, spec, xs, options, split);
    EXPECT_GE(split.slices, world_size());
    EXPECT_TRUE(same_on_every_rank(MPI_COMM_WORLD, got));
    if (semiring == tf::Semiring::Standard) {
      expect_near(got, single, 1e-12);
    } else {
      EXPECT_EQ(std::memcmp(got.raw_data(), single.raw_data(), single.nbytes()), 0);
    }
    const tf::Tensor alone = dist::einsum(MPI_COMM_SELF, spec, xs, options);
    EXPECT_EQ(std::memcmp(alone.raw_data(), single.raw_data(), single.nbytes()), 0);
    // The same call again: the same bits.
    const tf::Tensor again = dist::einsum(MPI_COMM_WORLD, spec, xs, options);
    EXPECT_EQ(std::memcmp(again.raw_data(), got.raw_data(), got.nbytes()), 0);
  }
}

// The gradient of a sliced contraction shared by the ranks: each rank differentiates its slices,
// the sums equal tf::vjp of the whole einsum in one process, the same bits on every rank.
TEST(Distributed, SlicedEinsumGradientsEqualTheSingleProcess) {
  std::mt19937_64 rng(9);
  const std::string spec = "abx,bcy,cdz,dew,efv,fau->xyz";
  tf::Tensors xs;
  for (int k = 0; k < 6; ++k) xs.push_back(random_tensor(rng, {8, 8, 2}));
  const tf::Tensor cot = random_tensor(rng, {2, 2, 2});
  tf::tn::Options options;
  options.path.memory_limit = 128.0;
  auto f = [&spec](const T& a, const T& b, const T& c, const T& d, const T& e, const T& g) {
    return tf::einsum(spec, {a, b, c, d, e, g});
  };
  const auto [want_value, want_grads] = tf::vjp(f, xs, cot);
  const auto [value, grads] = dist::einsum_vjp(MPI_COMM_WORLD, spec, xs, cot, options);
  expect_near(value, want_value, 1e-12);
  ASSERT_EQ(grads.size(), want_grads.size());
  for (std::size_t k = 0; k < grads.size(); ++k) {
    expect_near(grads[k], want_grads[k], 1e-12);
    EXPECT_TRUE(same_on_every_rank(MPI_COMM_WORLD, grads[k]));
  }
}

// A two-layer network's mean loss over 13 examples split unevenly over the ranks: the loss and
// gradients equal those of the whole batch in one process, on every rank the same bits; Adam
// steps on top keep the parameters identical across ranks.
TEST(Distributed, DataParallelGradientsEqualTheWholeBatch) {
  std::mt19937_64 rng(7);
  const tf::Tensor x = random_tensor(rng, {13, 5}), y = random_tensor(rng, {13, 2});
  // 66 numbers in all: the ring's chunks differ in length on 4 ranks.
  tf::Tensors params{random_tensor(rng, {5, 8}), random_tensor(rng, {8}), random_tensor(rng, {8, 2}), random_tensor(rng, {2})};
  auto loss = [](const T& w1, const T& b1, const T& w2, const T& b2, const T& xb, const T& yb) {
    const T h = tf::tanh(tf::matmul(xb, w1) + b1);
    const T d = tf::matmul(h, w2) + b2 - yb;
    return tf::mean(d * d);
  };
  auto [single_loss, single_grads] = tf::detail::TransformedFunction(tf::detail::erase_function(loss), {0, 1, 2, 3})
                                         .value_and_grads({params[0], params[1], params[2], params[3], x, y});
  auto step = dist::value_and_grad(MPI_COMM_WORLD, loss, 4);
  auto [got_loss, got_grads] = step(params, {dist::shard(MPI_COMM_WORLD, x), dist::shard(MPI_COMM_WORLD, y)});
  expect_near(got_loss, single_loss, 1e-13);
  ASSERT_EQ(got_grads.size(), 4U);
  for (std::size_t i = 0; i < 4; ++i) {
    expect_near(got_grads[i], single_grads[i], 1e-12);
    EXPECT_TRUE(same_on_every_rank(MPI_COMM_WORLD, got_grads[i]));
  }
  // Adam on the distributed gradients: the parameters stay the same on every rank.
  const tf::optim::Optimizer adam = tf::optim::adam({.lr = 0.05});
  tf::Tensors state = adam.init(params);
  for (int k = 0; k < 5; ++k) {
    auto [l, g] = step(params, {dist::shard(MPI_COMM_WORLD, x), dist::shard(MPI_COMM_WORLD, y)});
    std::tie(params, state) = adam.step(params, g, state);
  }
  for (const auto& v : params) EXPECT_TRUE(same_on_every_rank(MPI_COMM_WORLD, v));
}

// A computation that fails on one rank only makes every rank throw that rank's error (the same
// type and message) instead of leaving the others waiting in a collective; ranks that disagree in
// their data's trailing axes get a ShapeError everywhere.
TEST(Distributed, AFailureOnOneRankIsRaisedOnEveryRank) {
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  try {
    dist::agree(MPI_COMM_WORLD, "test", [&] {
      if (rank == size - 1) throw tf::ValueError("boom on the last rank");
    });
    FAIL() << "no error";
  } catch (const tf::ValueError& e) {
    EXPECT_THAT(e.what(), HasSubstr("rank " + std::to_string(size - 1) + " of " + std::to_string(size) +
                                    ": boom on the last rank"));
  }
  // The last rank's shard has 3 features instead of 5: its matmul fails there only.
  std::mt19937_64 rng(3);
  const tf::Tensors params{random_tensor(rng, {5, 1})};
  auto loss = [](const T& w, const T& xb) { return tf::mean(tf::matmul(xb, w)); };
  const tf::Tensor xb = random_tensor(rng, {4, rank == size - 1 ? 3 : 5});
  auto step = dist::value_and_grad(MPI_COMM_WORLD, loss, 1);
  try {
    step(params, {xb});
    FAIL() << "no error";
  } catch (const tf::ShapeError& e) {
    EXPECT_THAT(e.what(), HasSubstr("rank " + std::to_string(size - 1) + " of " + std::to_string(size)));
  }
  // The program still works afterwards (no rank was left inside a collective).
  const tf::Tensor ok = dist::einsum(MPI_COMM_WORLD, "ij,jk->ik", {tf::Tensor::ones({2, 3}), tf::Tensor::ones({3, 2})});
  EXPECT_EQ(ok.element(0).real(), 3.0);
}

TEST(Distributed, BadCommunicatorsAndArgumentsAreRefused) {
  EXPECT_THROW(dist::einsum(MPI_COMM_NULL, "ij->i", {tf::Tensor::ones({2, 2})}), tf::ValueError);
  EXPECT_THROW(dist::shard(MPI_COMM_WORLD, tf::Tensor::scalar(1.0)), tf::ShapeError);
  EXPECT_THROW(dist::value_and_grad(MPI_COMM_WORLD, [](const T& w) { return tf::sum(w); }, 0), tf::ValueError);
  // Shards of a batch cover it in order.
  const tf::Tensor batch = tf::Tensor::from(std::vector<double>{0, 1, 2, 3, 4, 5, 6}, {7});
  const tf::Tensor mine = dist::shard(MPI_COMM_WORLD, batch);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  EXPECT_EQ(mine.shape()[0], (rank + 1) * 7 / size - rank * 7 / size);
  if (mine.numel() > 0) {
    EXPECT_EQ(mine.element(0).real(), static_cast<double>(rank * 7 / size));
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  int failed = RUN_ALL_TESTS();  // every rank runs every test and prints its report
  // Every rank's verdict: the process exits non-zero if any rank failed.
  int any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any;
}
