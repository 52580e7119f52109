// Must not compile: character values are text, not numbers (Tensor::from refuses them).
#include "tenferro/tensor.hpp"
int main() { (void)tenferro::Tensor::from({'a', 'b'}); }
