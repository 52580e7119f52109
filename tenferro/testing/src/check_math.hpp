#pragma once
// Numerical helpers of check_program: central differences at two steps, norms, inner products
// and comparisons of tensors of any dtype (through c128 elements).
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <typeinfo>
#include <vector>

#include "tenferro/tenferro.hpp"
#include "tenferro/program.hpp"
#include "tenferro/operand_space.hpp"

namespace tenferro::testing {

inline double inner(const Tensor& a, const Tensor& b) { return tidu::OperandSpace<Tensor>::inner(a, b); }
inline double norm(const Tensor& a) { return std::sqrt(std::max(0.0, inner(a, a))); }

inline double max_abs(const Tensor& t) {
  double m = 0;
  for (std::int64_t i = 0; i < t.numel(); ++i) m = std::max(m, std::abs(t.element(i)));
  return m;
}

inline bool all_finite(const Tensor& t) {
  for (std::int64_t i = 0; i < t.numel(); ++i) {
    const c128 x = t.element(i);
    if (!std::isfinite(x.real()) || !std::isfinite(x.imag())) return false;
  }
  return true;
}

/// Equal types and equal bits, except that any two NaNs are equal (their payloads and signs
/// are not part of any contract).
inline bool same_bits(const Tensor& a, const Tensor& b) {
  if (a.type() != b.type()) return false;
  if (std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0) return true;
  if (!is_inexact(a.dtype())) return false;
  for (std::int64_t i = 0; i < a.numel(); ++i) {
    const c128 x = a.element(i), y = b.element(i);
    auto same = [](double p, double q) {
      return (std::isnan(p) && std::isnan(q)) || std::memcmp(&p, &q, sizeof p) == 0;
    };
    if (!same(x.real(), y.real()) || !same(x.imag(), y.imag())) return false;
  }
  return true;
}

/// max_i |a_i - b_i| over elements in row-major order (equal element counts; shapes may differ).
inline double max_diff_as_complex(const Tensor& a, const Tensor& b) {
  if (a.numel() != b.numel()) return INFINITY;
  double m = 0;
  for (std::int64_t i = 0; i < a.numel(); ++i) {
    const double d = std::abs(a.element(i) - b.element(i));
    if (std::isnan(d)) return INFINITY;
    m = std::max(m, d);
  }
  return m;
}
inline double max_diff(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape()) return INFINITY;
  return max_diff_as_complex(a, b);
}

inline std::string describe(const Tensor& a, const Tensor& b, double difference, double tolerance) {
  char numbers[96];
  std::snprintf(numbers, sizeof numbers, "(max difference %.6g, tolerance %.6g)", difference, tolerance);
  return to_string(a) + "\n  vs\n" + to_string(b) + "\n" + numbers;
}

/// All elements of the tensors, in order, as one c128 vector.
inline Tensor concatenated(const Tensors& ts) {
  std::int64_t n = 0;
  for (const auto& t : ts) n += t.numel();
  Tensor out(TensorType{DType::C128, {n}});
  std::int64_t k = 0;
  for (const auto& t : ts) {
    for (std::int64_t i = 0; i < t.numel(); ++i) out.data<c128>()[k++] = t.element(i);
  }
  return out;
}

/// x + h t, argument by argument.
inline Tensors shifted(const Tensors& x, double h, const Tensors& t) {
  Tensors out;
  for (std::size_t i = 0; i < x.size(); ++i) out.push_back(tidu::OperandSpace<Tensor>::add_scaled(x[i], h, t[i]));
  return out;
}

inline Tensors zeros_like(const Tensors& xs) {
  Tensors out;
  for (const auto& x : xs) out.emplace_back(x.type());
  return out;
}

/// A tensor of x's type holding the real parts of x's elements.
inline Tensor real_part_like(const Tensor& x) {
  Tensor out(x.type());
  for (std::int64_t i = 0; i < x.numel(); ++i) {
    visit_dtype(x.dtype(), [&](auto zero) {
      using T = decltype(zero);
      if constexpr (std::is_same_v<T, c128> || std::is_same_v<T, c64>) {
        out.data<T>()[i] = T(static_cast<typename T::value_type>(x.element(i).real()), 0);
      } else if constexpr (std::is_floating_point_v<T>) {
        out.data<T>()[i] = static_cast<T>(x.element(i).real());
      }
    });
  }
  return out;
}

inline void set_element(Tensor& t, std::int64_t i, c128 value) {
  visit_dtype(t.dtype(), [&](auto zero) {
    using T = decltype(zero);
    if constexpr (std::is_same_v<T, c128> || std::is_same_v<T, c64>) {
      t.data<T>()[i] = T(static_cast<typename T::value_type>(value.real()), static_cast<typename T::value_type>(value.imag()));
    } else if constexpr (std::is_floating_point_v<T>) {
      t.data<T>()[i] = static_cast<T>(value.real());
    }
  });
}

/// Central differences of a function of a step h, at h0 and h0 / 2, with the 4-point stencil
/// (-f(2h) + 8 f(h) - 8 f(-h) + f(-2h)) / 12h (error O(h^4)).
struct Difference {
  Tensor coarse, fine;  // c128 vectors
  double spread = 0;    // max |coarse - fine|: the estimates' own error, about 16x fine's
  bool finite = true;
  bool smooth = true;   // spread small: no kink or jump within 2 h0 of the point
  /// The rounding error of `fine`, from the rounding noise of f measured next to its stencil
  /// points: f at a step a few ulps of x longer differs from f at the step by (almost) only
  /// rounding, and the stencil divides that noise by the step (noise ~ eps |terms of f| can be
  /// far above eps |f| where f's terms cancel, as in x / x).
  double rounding = 0;
};

template <class F>
Difference central_difference_all(F f, double h0 = 1e-3) {
  Difference d;
  auto stencil = [&](double h) {
    const Tensor p2 = concatenated(f(2 * h)), p1 = concatenated(f(h)), m1 = concatenated(f(-h)), m2 = concatenated(f(-2 * h));
    Tensor out(p1.type());
    double magnitude = 0;
    for (std::int64_t i = 0; i < out.numel(); ++i) {
      const c128 a = p2.data<c128>()[i], b = p1.data<c128>()[i], c = m1.data<c128>()[i], e = m2.data<c128>()[i];
      magnitude = std::max({magnitude, std::abs(a), std::abs(b), std::abs(c), std::abs(e)});
      out.data<c128>()[i] = (-a + 8.0 * b - 8.0 * c + e) / (12.0 * h);
    }
    if (!std::isfinite(magnitude)) d.finite = false;
    return out;
  };
  d.coarse = stencil(h0);
  d.fine = stencil(h0 / 2);
  if (!d.finite || !all_finite(d.coarse) || !all_finite(d.fine)) {
    d.finite = false;
    return d;
  }
  double noise = 0;
  for (double h : {h0 / 2, -h0 / 2}) {
    noise = std::max(noise, max_diff(concatenated(f(h)), concatenated(f(h * (1 + 0x1p-36)))));
  }
  d.rounding = std::isfinite(noise) ? 12 * noise / h0 : 0;  // (1 + 8 + 8 + 1) / (12 h0 / 2), times 4
  d.spread = max_diff(d.coarse, d.fine);
  d.smooth = d.spread <= 1e-6 * (1 + max_abs(d.fine)) + 2 * d.rounding;
  return d;
}

template <class F>
Difference central_difference(F f, double h0 = 1e-3) {
  return central_difference_all([&](double h) { return Tensors{f(h)}; }, h0);
}

inline std::string exception_type_name(const std::exception& e) {
  if (dynamic_cast<const ShapeError*>(&e)) return "ShapeError";
  if (dynamic_cast<const DTypeError*>(&e)) return "DTypeError";
  if (dynamic_cast<const BindingError*>(&e)) return "BindingError";
  if (dynamic_cast<const ADRuleError*>(&e)) return "ADRuleError";
  if (dynamic_cast<const GraphError*>(&e)) return "GraphError";
  if (dynamic_cast<const Error*>(&e)) return "tenferro::Error";
  return typeid(e).name();
}

}  // namespace tenferro::testing
