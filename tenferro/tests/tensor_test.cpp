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
