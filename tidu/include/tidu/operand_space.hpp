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
//
// Optional, for column sweeps (jacfwd, hessian) that step one basis direction through every
// coordinate: turn e = e_from (held only by the caller) into e_to in place, which saves a fresh
// operand per column. Without it the sweep calls basis_like for every column.
//
//   static void move_basis(T& e, std::size_t from, std::size_t to);
//
// The AD test kit (tidu/testing/check.hpp) also needs, for finite differences and the adjoint
// identity:
//
//   static T add_scaled(const T& x, double h, const T& v);   // x + h*v, shaped like x
//   static double inner(const T& a, const T& b);             // Re(sum_k conj(a_k) * b_k)
//   static T random_like(const T& x, std::mt19937_64& rng);  // like x, every real and imaginary
//                                                            // part drawn by uniform_pm1(rng)
#include <cstddef>
#include <random>
#include <vector>

namespace tidu {

template <class T>
struct OperandSpace;

/// A number uniform in [-1, 1) from 53 random bits. Unlike std::uniform_real_distribution, the
/// sequence is the same with every standard library, so seeded tests are reproducible everywhere.
inline double uniform_pm1(std::mt19937_64& rng) {
  return static_cast<double>(rng() >> 11) * 0x1.0p-52 - 1.0;
}

/// Runs body(begin, end) over the column range [0, count) on the calling thread: the default
/// schedule of the column sweeps (Transforms::hessian_columns). An op set with threads passes its
/// own schedule, which may split the range and call body on several threads at once.
struct SequentialColumns {
  template <class Body>
  void operator()(std::size_t count, Body&& body) const {
    if (count > 0) body(std::size_t{0}, count);
  }
};

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
