#pragma once
// Tensors as coordinate vectors for tidu's generic transforms (jacfwd, jacrev, hessian, grad) and
// the AD test kit (tidu/testing/check.hpp): coordinate k is element k in row-major order, as a
// complex double. i64 and bool tensors carry no tangents: add_scaled leaves them unchanged,
// random_like gives zeros and they add nothing to inner products.
#include <cstring>
#include <random>
#include <type_traits>

#include "tenferro/tensor.hpp"
#include "tidu/operand_space.hpp"

template <>
struct tidu::OperandSpace<tenferro::Tensor> {
  using Tensor = tenferro::Tensor;
  using Scalar = tenferro::c128;
  static std::size_t size(const Tensor& x) { return static_cast<std::size_t>(x.numel()); }
  static Tensor zeros_like(const Tensor& x) { return Tensor(x.type()); }
  static Tensor basis_like(const Tensor& x, std::size_t k) {
    Tensor e(x.type());
    set_coordinate_to_one(e, k);
    return e;
  }
  /// e_from -> e_to in place while e alone holds its storage; otherwise (an earlier result may
  /// share it) a fresh e_to.
  static void move_basis(Tensor& e, std::size_t from, std::size_t to) {
    if (!e.unique_storage()) {
      e = basis_like(e, to);
      return;
    }
    const std::size_t width = tenferro::dtype_size(e.dtype());
    std::memset(static_cast<char*>(e.raw_data()) + from * width, 0, width);
    set_coordinate_to_one(e, to);
  }
  static Scalar coordinate(const Tensor& x, std::size_t k) { return x.element(static_cast<std::int64_t>(k)); }
  static Scalar conj(const Scalar& s) { return std::conj(s); }

  /// x + h v, in x's dtype.
  static Tensor add_scaled(const Tensor& x, double h, const Tensor& v) {
    Tensor r = x.clone();
    if (!tenferro::is_inexact(x.dtype())) return r;
    tenferro::visit_dtype(x.dtype(), [&](auto zero) {
      using T = decltype(zero);
      if constexpr (!std::is_same_v<T, bool> && !std::is_same_v<T, std::int64_t>) {
        T* out = r.data<T>();
        const T* dv = v.data<T>();
        for (std::int64_t i = 0; i < r.numel(); ++i) out[i] += static_cast<T>(h) * dv[i];
      }
    });
    return r;
  }
  /// Re(sum_k conj(a_k) b_k), accumulated in double.
  static double inner(const Tensor& a, const Tensor& b) {
    if (!tenferro::is_inexact(a.dtype())) return 0.0;
    double sum = 0.0;
    for (std::int64_t i = 0; i < a.numel(); ++i) sum += (std::conj(a.element(i)) * b.element(i)).real();
    return sum;
  }
  /// Like x; every real (and imaginary) part uniform in [-1, 1) by tidu::uniform_pm1.
  static Tensor random_like(const Tensor& x, std::mt19937_64& rng) {
    Tensor r(x.type());
    tenferro::visit_dtype(x.dtype(), [&](auto zero) {
      using T = decltype(zero);
      T* out = r.data<T>();
      for (std::int64_t i = 0; i < r.numel(); ++i) {
        if constexpr (std::is_same_v<T, tenferro::c64> || std::is_same_v<T, tenferro::c128>) {
          using R = typename T::value_type;
          const double re = tidu::uniform_pm1(rng);
          out[i] = T(static_cast<R>(re), static_cast<R>(tidu::uniform_pm1(rng)));
        } else if constexpr (std::is_floating_point_v<T>) {
          out[i] = static_cast<T>(tidu::uniform_pm1(rng));
        }
      }
    });
    return r;
  }

 private:
  static void set_coordinate_to_one(Tensor& e, std::size_t k) {
    tenferro::visit_dtype(e.dtype(), [&](auto zero) {
      using T = decltype(zero);
      e.data<T>()[k] = T(1);
    });
  }
};
