// Must not compile: data<int>() names no dtype (i64 tensors are read as std::int64_t).
#include "tenferro/tensor.hpp"
int main() {
  tenferro::Tensor t = tenferro::Tensor::from({1, 2});
  return t.data<int>()[0];
}
