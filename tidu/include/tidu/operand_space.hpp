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
