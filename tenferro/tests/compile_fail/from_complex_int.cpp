// Must not compile: std::complex<int> has no dtype.
#include "tenferro/tensor.hpp"
int main() { (void)tenferro::Tensor::from({std::complex<int>(1, 2)}); }
