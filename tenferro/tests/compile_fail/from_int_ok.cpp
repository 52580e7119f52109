// Must compile: the control case of the compile-failure tests (integer literals are i64).
#include "tenferro/tensor.hpp"
int main() { return tenferro::Tensor::from({1, 2}).dtype() == tenferro::DType::I64 ? 0 : 1; }
