#pragma once
// Tensors as coordinate vectors for tidu's generic transforms (jacfwd, jacrev, hessian, grad):
// coordinate k is element k in row-major order, as a complex double.
#include <cstring>

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
    Tensor one = Tensor::full({}, 1.0, x.dtype());
    std::memcpy(static_cast<char*>(e.raw_data()) + k * tenferro::dtype_size(x.dtype()), one.raw_data(),
                tenferro::dtype_size(x.dtype()));
    return e;
  }
  static Scalar coordinate(const Tensor& x, std::size_t k) { return x.element(static_cast<std::int64_t>(k)); }
  static Scalar conj(const Scalar& s) { return std::conj(s); }
};
