// Prints the scalar example exp(a*x) at every pipeline stage (see docs/tidu.md).
#include <iostream>

#include "exp_ax_pipeline.hpp"

int main() {
  tools::print_exp_ax_pipeline(std::cout);
  return 0;
}
