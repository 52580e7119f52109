#pragma once
// OperandSpace<T>: how the user-level transforms (jacfwd, jacrev, hessian, grad) see an operand
// as a vector of scalar coordinates. Specialize it for an op set's Operand:
//
//   using Scalar = ...;                                  // one coordinate
//   static std::size_t size(const T& x);                 // number of coordinates
//   static T zeros_like(const T& x);
//   static T basis_like(const T& x, std::size_t k);      // e_k, shaped like x
//   static Scalar coordinate(const T& x, std::size_t k);
//   static Scalar conj(const Scalar& s);                 // identity for real scalars
#include <cstddef>
#include <vector>

namespace tidu {

template <class T>
struct OperandSpace;

/// A dense row-major matrix of scalars (Jacobians, Hessians).
template <class Scalar>
struct Matrix {
  std::size_t rows = 0;
  std::size_t cols = 0;
  std::vector<Scalar> data;

  Matrix() = default;
  Matrix(std::size_t r, std::size_t c) : rows(r), cols(c), data(r * c) {}
  Scalar& operator()(std::size_t i, std::size_t j) { return data[i * cols + j]; }
  const Scalar& operator()(std::size_t i, std::size_t j) const { return data[i * cols + j]; }
};

}  // namespace tidu
