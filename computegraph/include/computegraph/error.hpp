#pragma once
// The project's error hierarchy. Every error thrown by computegraph, tidu and tenferro derives from
// computegraph::Error so that callers can catch one type. Messages name the operation, the keys or
// shapes involved, and what was expected.
#include <stdexcept>
#include <string>

namespace computegraph {

/// Base class of every error the project's libraries throw.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A malformed graph: arity mismatch, dangling reference, unresolvable output, broken SSA.
class GraphError : public Error {
 public:
  using Error::Error;
};

/// A run-time binding problem: wrong number of inputs, a missing or unknown input key.
class BindingError : public Error {
 public:
  using Error::Error;
};

}  // namespace computegraph
