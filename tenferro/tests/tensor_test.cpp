#include <gtest/gtest.h>
#include "tenferro/tensor.hpp"
#include "tenferro/ops/make.hpp"
using namespace tenferro;
TEST(Tensor, Basics) {
  auto t = Tensor::from({{1.0, 2.0}, {3.0, 4.0}});
  EXPECT_EQ(t.at<double>({1, 0}), 3.0);
  EXPECT_EQ(to_string(t), "tensor(f64[2, 2], [[1, 2], [3, 4]])");
  StdTensorOp op = ops::add(t.type(), t.type());
  ExecContext ctx; Tensor out;
  const Tensor* in[] = {&t, &t};
  op.eval(ctx, in, std::span<Tensor>(&out, 1));
  EXPECT_EQ(out.at<double>({1, 1}), 8.0);
}
#include "tenferro/tenferro.hpp"
#include <cmath>
TEST(Traced, GradOfMulSum) {
  namespace tf = tenferro;
  auto loss = [](tf::Traced w, tf::Traced x) { return tf::sum(w * x); };
  auto w = tf::Tensor::from({0.5, -1.0}), x = tf::Tensor::from({1.0, 2.0});
  auto p = tf::trace(loss, w, x);
  std::cout << p.print() << computegraph::to_string(*p.linearize().graph);
}
