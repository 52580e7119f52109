// The user file of `scripts/bench compile`: what a first program looks like (the README's
// example: a loss, its gradient, one call), including only the user tier. It is compiled, not
// run; its compile time is the measure of what the user tier costs a user.
#include <iostream>

#include "tenferro/tenferro.hpp"

namespace tf = tenferro;

int main() {
  auto loss = [](tf::Traced w, tf::Traced x) { return tf::sum(tf::exp(w * x)); };
  tf::Tensor w = tf::Tensor::from({0.5, -1.0}), x = tf::Tensor::from({1.0, 2.0});
  tf::Tensor g = tf::grad(loss)(w, x);
  std::cout << g << "\n";
}
