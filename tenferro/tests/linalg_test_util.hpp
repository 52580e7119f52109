#pragma once
// Helpers of the linear-algebra tests: seeded random matrices, a naive matrix product and
// distances computed here (independently of the library's kernels), and check_grads on a traced
// function of several arguments.
#include <gtest/gtest.h>

#include <complex>
#include <functional>
#include <random>
#include <vector>

#include "tenferro/tenferro.hpp"
#include "tenferro/program.hpp"
#include "tenferro/operand_space.hpp"
#include "tidu/testing/check.hpp"

namespace tenferro::test {

using T = Traced;
using c128 = std::complex<double>;
using Fn = std::function<std::vector<Traced>(const std::vector<Traced>&)>;

/// Entries (real and imaginary parts) uniform in [-1, 1), plus `diag` on the diagonal of every
/// matrix in the last two axes (a vector or a scalar counts as one row).
inline Tensor random_matrix(std::mt19937_64& rng, Shape shape, DType dtype, double diag = 0) {
  std::uniform_real_distribution<double> u(-1, 1);
  const std::size_t rank = shape.size();
  const std::int64_t n = numel(shape), cols = rank >= 1 ? shape[rank - 1] : 1, rows = rank >= 2 ? shape[rank - 2] : 1;
  std::vector<c128> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t r = (i / cols) % rows, c = i % cols;
    v[static_cast<std::size_t>(i)] = c128(u(rng), is_complex(dtype) ? u(rng) : 0.0) + (r == c ? diag : 0.0);
  }
  Tensor t(TensorType{dtype, shape});
  visit_dtype(dtype, [&](auto zero) {
    using E = decltype(zero);
    if constexpr (std::is_same_v<E, c128> || std::is_same_v<E, std::complex<float>>) {
      for (std::int64_t i = 0; i < n; ++i) t.data<E>()[i] = E(v[static_cast<std::size_t>(i)]);
    } else if constexpr (std::is_floating_point_v<E>) {
      for (std::int64_t i = 0; i < n; ++i) t.data<E>()[i] = static_cast<E>(v[static_cast<std::size_t>(i)].real());
    }
  });
  return t;
}

/// Element i of a float or complex tensor as c128.
inline c128 at(const Tensor& t, std::int64_t i) {
  c128 r;
  visit_dtype(t.dtype(), [&](auto zero) {
    using E = decltype(zero);
    if constexpr (std::is_same_v<E, c128> || std::is_same_v<E, std::complex<float>>) {
      r = c128(t.data<E>()[i]);
    } else if constexpr (!std::is_same_v<E, bool>) {
      r = c128(static_cast<double>(t.data<E>()[i]), 0.0);
    }
  });
  return r;
}

/// Naive (row-major) product of one m x k and one k x n matrix given as c128 vectors.
inline std::vector<c128> naive_matmul(const std::vector<c128>& a, const std::vector<c128>& b, std::int64_t m,
                                      std::int64_t k, std::int64_t n) {
  std::vector<c128> c(static_cast<std::size_t>(m * n));
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t p = 0; p < k; ++p) {
      for (std::int64_t j = 0; j < n; ++j) {
        c[static_cast<std::size_t>(i * n + j)] += a[static_cast<std::size_t>(i * k + p)] * b[static_cast<std::size_t>(p * n + j)];
      }
    }
  }
  return c;
}

/// Matrix `index` of a batch as c128 values.
inline std::vector<c128> matrix_of(const Tensor& t, std::int64_t index) {
  const std::int64_t size = t.shape()[t.rank() - 2] * t.shape().back();
  std::vector<c128> v(static_cast<std::size_t>(size));
  for (std::int64_t i = 0; i < size; ++i) v[static_cast<std::size_t>(i)] = at(t, index * size + i);
  return v;
}

inline double max_abs_diff(const std::vector<c128>& a, const std::vector<c128>& b) {
  double d = 0;
  for (std::size_t i = 0; i < a.size(); ++i) d = std::max(d, std::abs(a[i] - b[i]));
  return d;
}

/// Runs f on `args` (traced and compiled).
inline Tensors run(const Fn& f, const Tensors& args) {
  return Program(detail::trace_function(f, detail::types_of(args))).run(args);
}

/// check_grads of f at `args` to `order` (forward and reverse at every level).
inline void expect_grads(const Fn& f, const Tensors& args, int order = 2) {
  auto graph = detail::trace_function(f, detail::types_of(args));
  auto result = tidu::testkit::check_grads(tidu::testkit::function_of(graph), std::span<const Tensor>(args), order);
  EXPECT_TRUE(result.ok) << result.message;
  EXPECT_EQ(result.checks.size(), order == 2 ? 6u : 2u);
}

}  // namespace tenferro::test
