#pragma once
// Internal to tenferro::distributed: collectives the distributed functions share.
#include <string>
#include <vector>

#include "tenferro/distributed.hpp"

namespace tenferro::distributed {

/// Throws ShapeError on every rank (naming the first rank that differs from rank 0) unless every
/// rank passes the same `description` (of the types about to be exchanged). Collective.
void require_same(MPI_Comm comm, const char* who, const std::string& description);

/// Every rank's `t`, in rank order (all of t's type: call require_same first). Collective.
std::vector<Tensor> allgather(MPI_Comm comm, const Tensor& t);

}  // namespace tenferro::distributed
