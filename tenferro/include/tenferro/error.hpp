#pragma once
// tenferro's errors. All derive from computegraph::Error (the project's single base class).
#include "computegraph/error.hpp"
#include "tidu/ad_error.hpp"

namespace tenferro {

/// Shapes that do not fit an operation: mismatched dims, invalid axes or permutations, ...
class ShapeError : public computegraph::Error {
 public:
  using computegraph::Error::Error;
};

/// Dtypes that do not fit an operation (for example a complex operand to `maximum`).
class DTypeError : public computegraph::Error {
 public:
  using computegraph::Error::Error;
};

/// An argument value outside what an operation takes, other than a shape or a dtype (a negative
/// order of polygamma, a dimension below 1 of mvlgamma).
class ValueError : public computegraph::Error {
 public:
  using computegraph::Error::Error;
};

/// A linear-algebra routine that cannot complete on its input: a singular matrix to solve or inv,
/// a matrix that is not positive definite to cholesky, a decomposition that did not converge.
/// `info` is LAPACK's info value (for singular and indefinite input, the 1-based position of the
/// failing pivot or leading minor); the message names the op, the matrix's batch index and shape.
class LinalgError : public computegraph::Error {
 public:
  LinalgError(const std::string& message, long info) : computegraph::Error(message), info_(info) {}
  long info() const { return info_; }

 private:
  long info_;
};

using computegraph::BindingError;
using computegraph::Error;
using computegraph::GraphError;
using tidu::ADRuleError;

}  // namespace tenferro
