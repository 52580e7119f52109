// Must not compile: long double has no dtype, and a silent rounding to f64 would lose digits.
#include "tenferro/tensor.hpp"
int main() { (void)tenferro::Tensor::from({1.0L, 2.0L}); }
