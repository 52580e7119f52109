#pragma once
// ADOL-C on the problems of bench/cases_sparse.cpp, as a peer. Debian's ADOL-C is built without
// ColPack, so its one-call drivers (sparse_jac, sparse_hess) refuse to run; the peer does what
// they do, from ADOL-C's own parts and ColPack: the function is taped once; the first run finds
// the pattern on the tape (jac_pat: index domains; hess_pat), colors it with ColPack (the same
// colorings tenferro asks for) and builds the seed; every run then takes the compressed
// derivative from the tape (fov_forward: J S; hess_mat: H S) and reads the entries back.
// ADOL-C's and ColPack's headers stay in adolc_sparse.cpp.
#include <memory>
#include <vector>

namespace bench::adolc {

/// Whether the peer was built (ADOL-C found at configure time).
bool available();

/// A sparse derivative through ADOL-C: run(first) returns the number of nonzeros and leaves the
/// values readable until the next run.
class SparseDriver {
 public:
  virtual ~SparseDriver() = default;
  virtual int run(bool first) = 0;
  virtual const double* values() const = 0;
};

/// The Jacobian of the Bratu residual -laplacian(u) - lambda exp(u) on an n x n grid (zero
/// boundary values), at u (n * n values, row-major), column compression.
std::unique_ptr<SparseDriver> bratu_jacobian(int n, double lambda, const std::vector<double>& u);
/// The Hessian of sum_i (x_i + x_{i+1} x_{i+2} - 1)^2 + sum_i exp(x_i / 10) at x, direct recovery
/// from a star coloring.
std::unique_ptr<SparseDriver> banded_hessian(const std::vector<double>& x);

}  // namespace bench::adolc
