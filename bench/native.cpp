// The libm baselines and the scalar chain. The vectorized variants live in native_vector.cpp, the
// one file built with -mavx2 -mfma.
#include "native.hpp"

#include <cmath>

namespace bench::native {

double elem_chain(const double* x, std::int64_t n, int threads) {
  double total = 0;
#pragma omp parallel for num_threads(threads) schedule(static) reduction(+ : total)
  for (std::int64_t i = 0; i < n; ++i) {
    const double xi = x[i];
    total += std::exp(std::sin(xi) * xi + std::cos(xi)) / (1.0 + xi * xi);
  }
  return total;
}

double elem_chain_grad(const double* x, double* grad, std::int64_t n, int threads) {
  double total = 0;
#pragma omp parallel for num_threads(threads) schedule(static) reduction(+ : total)
  for (std::int64_t i = 0; i < n; ++i) {
    const double xi = x[i], c = std::cos(xi), d = 1.0 + xi * xi;
    const double term = std::exp(std::sin(xi) * xi + c) / d;
    total += term;
    grad[i] = term * (xi * c - 2.0 * xi / d);
  }
  return total;
}

bool avx2_supported() { return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"); }
bool avx512_supported() { return avx2_supported() && __builtin_cpu_supports("avx512f"); }

// Factors stay near 1 and offsets small so the chain neither overflows nor collapses to a constant.
double scalar_chain_mul(int k) { return 1.0 + 0.001 * (k % 7); }
double scalar_chain_add(int k) { return 0.1 + 0.01 * (k % 5); }

double scalar_chain(double x, int ops) {
  for (int k = 0; k < ops; ++k) {
    switch (k % 3) {
      case 0: x *= scalar_chain_mul(k); break;
      case 1: x += scalar_chain_add(k); break;
      default: x = std::sin(x); break;
    }
  }
  return x;
}

double scalar_chain_grad(double x, int ops, double* tape) {
  for (int k = 0; k < ops; ++k) {
    switch (k % 3) {
      case 0: x *= scalar_chain_mul(k); break;
      case 1: x += scalar_chain_add(k); break;
      default: tape[k] = x; x = std::sin(x); break;
    }
  }
  double adjoint = 1.0;
  for (int k = ops - 1; k >= 0; --k) {
    if (k % 3 == 0) adjoint *= scalar_chain_mul(k);
    else if (k % 3 == 2) adjoint *= std::cos(tape[k]);
  }
  return adjoint;
}

}  // namespace bench::native
