// Communicators and failure agreement for tenferro::distributed (distributed.hpp).
#include <algorithm>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "agreement.hpp"
#include "tenferro/distributed.hpp"
#include "tenferro/error.hpp"

namespace tenferro::distributed {

namespace {

/// The error kinds carried between ranks, so that every rank throws the type the failing one did.
enum class Kind : int { Error = 0, Shape = 1, DType = 2, Value = 3 };

[[noreturn]] void throw_kind(Kind kind, const std::string& message) {
  switch (kind) {
    case Kind::Shape: throw ShapeError(message);
    case Kind::DType: throw DTypeError(message);
    case Kind::Value: throw ValueError(message);
    case Kind::Error: break;
  }
  throw Error(message);
}

}  // namespace

std::pair<int, int> rank_and_size(MPI_Comm comm, const char* who) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized) {
    throw ValueError(std::string(who) + ": MPI is " + (finalized ? "finalized" : "not initialized") +
                     "; call MPI_Init before and MPI_Finalize after the distributed calls");
  }
  if (comm == MPI_COMM_NULL) throw ValueError(std::string(who) + ": the communicator is MPI_COMM_NULL");
  int rank = 0, size = 0;
  if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS || MPI_Comm_size(comm, &size) != MPI_SUCCESS) {
    throw ValueError(std::string(who) + ": MPI does not recognise the communicator");
  }
  return {rank, size};
}

void agree(MPI_Comm comm, const char* who, const std::function<void()>& body) {
  const auto [rank, size] = rank_and_size(comm, who);
  std::string message;
  Kind kind = Kind::Error;
  bool failed = true;
  try {
    body();
    failed = false;
  } catch (const ShapeError& e) {
    message = e.what(), kind = Kind::Shape;
  } catch (const DTypeError& e) {
    message = e.what(), kind = Kind::DType;
  } catch (const ValueError& e) {
    message = e.what(), kind = Kind::Value;
  } catch (const std::exception& e) {
    message = e.what();
  }
  // The lowest failing rank (size when none failed), then its kind and message to every rank.
  int mine = failed ? rank : size, first = size;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
  if (first == size) return;
  int header[2] = {static_cast<int>(kind), static_cast<int>(message.size())};
  MPI_Bcast(header, 2, MPI_INT, first, comm);
  std::string text(static_cast<std::size_t>(header[1]), '\0');
  if (rank == first) text = message;
  MPI_Bcast(text.data(), header[1], MPI_CHAR, first, comm);
  throw_kind(static_cast<Kind>(header[0]), std::string(who) + ": rank " + std::to_string(first) + " of " +
                                               std::to_string(size) + ": " + text);
}

Tensor shard(MPI_Comm comm, const Tensor& batch) {
  const auto [rank, size] = rank_and_size(comm, "distributed::shard");
  if (batch.rank() == 0) throw ShapeError("distributed::shard: a 0-d tensor has no batch axis to split");
  const std::int64_t n = batch.shape()[0], begin = rank * n / size, end = (rank + 1) * n / size;
  Shape shape = batch.shape();
  shape[0] = end - begin;
  Tensor out = Tensor::uninitialized({batch.dtype(), shape});
  const std::size_t row = batch.numel() == 0 ? 0 : batch.nbytes() / static_cast<std::size_t>(n);
  if (out.nbytes() > 0) {
    std::memcpy(out.raw_data(), static_cast<const std::byte*>(batch.raw_data()) + static_cast<std::size_t>(begin) * row,
                out.nbytes());
  }
  return out;
}

}  // namespace tenferro::distributed

namespace tenferro::distributed {

void require_same(MPI_Comm comm, const char* who, const std::string& description) {
  const auto [rank, size] = rank_and_size(comm, who);
  const auto hash = static_cast<unsigned long long>(std::hash<std::string>{}(description));
  std::vector<unsigned long long> all(static_cast<std::size_t>(size));
  MPI_Allgather(&hash, 1, MPI_UNSIGNED_LONG_LONG, all.data(), 1, MPI_UNSIGNED_LONG_LONG, comm);
  for (int k = 1; k < size; ++k) {
    if (all[static_cast<std::size_t>(k)] != all[0]) {
      // Rank 0's description to every rank, for the message.
      int length = static_cast<int>(description.size());
      MPI_Bcast(&length, 1, MPI_INT, 0, comm);
      std::string first(static_cast<std::size_t>(length), '\0');
      if (rank == 0) first = description;
      MPI_Bcast(first.data(), length, MPI_CHAR, 0, comm);
      throw ShapeError(std::string(who) + ": the ranks disagree: rank " + std::to_string(k) + " differs from rank 0 (" +
                       first + ")" + (rank == k ? "; this rank has " + description : std::string()));
    }
  }
  (void)rank;
}

std::vector<Tensor> allgather(MPI_Comm comm, const Tensor& t) {
  const int size = rank_and_size(comm, "distributed::allgather").second;
  const std::size_t bytes = t.nbytes();
  std::vector<Tensor> out;
  for (int k = 0; k < size; ++k) out.push_back(Tensor::uninitialized(t.type()));
  // MPI counts are ints: at most 1 GiB per collective, in as many rounds as the tensor needs.
  constexpr std::size_t kChunk = std::size_t{1} << 30;
  std::vector<std::byte> chunk;
  for (std::size_t at = 0; at < bytes; at += kChunk) {
    const std::size_t n = std::min(kChunk, bytes - at);
    chunk.resize(n * static_cast<std::size_t>(size));
    MPI_Allgather(static_cast<const std::byte*>(t.raw_data()) + at, static_cast<int>(n), MPI_BYTE, chunk.data(),
                  static_cast<int>(n), MPI_BYTE, comm);
    for (int k = 0; k < size; ++k) {
      std::memcpy(static_cast<std::byte*>(out[static_cast<std::size_t>(k)].raw_data()) + at,
                  chunk.data() + static_cast<std::size_t>(k) * n, n);
    }
  }
  return out;
}

}  // namespace tenferro::distributed
