// The installed tenferro::mpi on one process (a singleton MPI run): a sliced einsum over
// MPI_COMM_SELF equals the plain one.
#include <cstdio>
#include <cstring>

#include "tenferro/distributed.hpp"

namespace tf = tenferro;

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const tf::Tensors xs{tf::Tensor::ones({4, 4}), tf::Tensor::ones({4, 4})};
  tf::tn::Options options;
  options.path.memory_limit = 16.0;
  const tf::Tensor got = tf::distributed::einsum(MPI_COMM_SELF, "ij,jk->ik", xs, options);
  const tf::Tensor want = tf::einsum("ij,jk->ik", std::span<const tf::Tensor>(xs));
  const bool same = got.type() == want.type() && std::memcmp(got.raw_data(), want.raw_data(), want.nbytes()) == 0;
  std::printf("consumer_mpi: %s\n", same ? "ok" : "MISMATCH");
  MPI_Finalize();
  return same ? 0 : 1;
}
