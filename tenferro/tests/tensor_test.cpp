// Tensor: construction, storage sharing, element access, printing, and its errors; and the check
// that a StdTensorOp refuses operands of other types than it was built for; Shape against
// std::vector as the model of what it must do.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>
#include <random>
#include <vector>

#include "tenferro/ops/make.hpp"
#include "tenferro/tensor.hpp"

using namespace tenferro;
using testing::HasSubstr;

TEST(Tensor, ConstructionAndAccessAreRowMajor) {
  auto t = Tensor::from({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}});
  EXPECT_EQ(t.shape(), (Shape{2, 3}));
  EXPECT_EQ(t.dtype(), DType::F64);
  EXPECT_EQ(t.at<double>({1, 0}), 4.0);
  EXPECT_EQ(t.data<double>()[4], 5.0);  // row-major: [1][1] is element 4
  EXPECT_EQ(Tensor::scalar(2.5).rank(), 0u);
  EXPECT_EQ(Tensor::scalar(2.5).item<double>(), 2.5);
  EXPECT_EQ(Tensor::from({c128(1, 2)}).dtype(), DType::C128);
  EXPECT_EQ(Tensor::ones({2}, DType::F32).at<float>({1}), 1.0f);
  EXPECT_EQ(Tensor::zeros({0, 3}).numel(), 0);
}

// Integer literals and every integer type make i64 tensors with the values given (they once made
// f64 tensors of the integers' bit patterns, 4.24e-314 for 1); the element types keep their dtype.
TEST(Tensor, FromConvertsEveryIntegerTypeToI64) {
  const Tensor lit = Tensor::from({1, 2, 3});
  ASSERT_EQ(lit.dtype(), DType::I64);
  EXPECT_EQ(lit.at<std::int64_t>({0}), 1);
  EXPECT_EQ(lit.at<std::int64_t>({2}), 3);
  const Tensor ll = Tensor::from(std::vector<long long>{-5, 7, 1LL << 40}, {3});
  ASSERT_EQ(ll.dtype(), DType::I64);
  EXPECT_EQ(ll.at<std::int64_t>({0}), -5);
  EXPECT_EQ(ll.at<std::int64_t>({2}), std::int64_t{1} << 40);
  const Tensor rows = Tensor::from({{1, -2}, {3, 4}});
  ASSERT_EQ(rows.dtype(), DType::I64);
  EXPECT_EQ(rows.at<std::int64_t>({0, 1}), -2);
  EXPECT_EQ(Tensor::from({std::int8_t{-3}}).at<std::int64_t>({0}), -3);
  EXPECT_EQ(Tensor::from({std::uint16_t{65535}}).at<std::int64_t>({0}), 65535);
  EXPECT_EQ(Tensor::from({short{-7}, short{9}}).at<std::int64_t>({1}), 9);
  EXPECT_EQ(Tensor::from({4000000000u}).at<std::int64_t>({0}), 4000000000LL);
  EXPECT_EQ(Tensor::from({std::uint64_t{1} << 62}).at<std::int64_t>({0}), std::int64_t{1} << 62);
  EXPECT_EQ(Tensor::from({1.5f}).dtype(), DType::F32);
  EXPECT_EQ(Tensor::from({true, false}).dtype(), DType::Bool);
  EXPECT_EQ(Tensor::from({c64(1, 2)}).dtype(), DType::C64);
  EXPECT_EQ(Tensor::from({2.5}).at<double>({0}), 2.5);
}

TEST(Tensor, FromRefusesUnsignedValuesAboveI64) {
  try {
    (void)Tensor::from({std::numeric_limits<std::uint64_t>::max()});
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_THAT(e.what(), HasSubstr("18446744073709551615"));
    EXPECT_THAT(e.what(), HasSubstr("i64"));
  }
}

// Tensor::from copies through one out-of-line routine for every element type (bool by way of
// bytes, since std::vector<bool> has no data()): each element arrives with its value.
TEST(Tensor, FromCopiesTheValuesOfEveryElementType) {
  const Tensor b = Tensor::from({true, false, true});
  EXPECT_EQ(b.at<bool>({0}), true);
  EXPECT_EQ(b.at<bool>({1}), false);
  EXPECT_EQ(b.at<bool>({2}), true);
  const Tensor z = Tensor::from({c128(1, -2), c128(-0.5, 3)});
  EXPECT_EQ(z.at<c128>({1}), c128(-0.5, 3));
  const Tensor f = Tensor::from({{1.5f, -2.25f}, {3.0f, 0.125f}});
  EXPECT_EQ(f.at<float>({1, 1}), 0.125f);
  const Tensor empty = Tensor::from(std::vector<double>{}, {0, 3});
  EXPECT_EQ(empty.numel(), 0);
  EXPECT_EQ(empty.shape(), (Shape{0, 3}));
  EXPECT_THROW((void)Tensor::from(std::vector<double>{1, 2, 3}, {2, 2}), ShapeError);
  EXPECT_THROW((void)Tensor::from({{1.0, 2.0}, {3.0}}), ShapeError);
}

TEST(Tensor, CopiesShareStorageAndCloneDoesNot) {
  auto a = Tensor::from({1.0, 2.0});
  Tensor b = a;
  Tensor c = a.clone();
  b.data<double>()[0] = 7.0;
  EXPECT_EQ(a.at<double>({0}), 7.0);
  EXPECT_EQ(c.at<double>({0}), 1.0);
  EXPECT_TRUE(a.shares_storage_with(b));
  EXPECT_FALSE(a.shares_storage_with(c));
  EXPECT_EQ(a.reshaped({2, 1}).at<double>({1, 0}), 2.0);
}

TEST(Tensor, PrintsReadablyAndElidesLongAxes) {
  EXPECT_EQ(to_string(Tensor::from({{1.0, 2.0}, {3.0, 4.0}})), "tensor(f64[2, 2], [[1, 2], [3, 4]])");
  EXPECT_EQ(to_string(Tensor::scalar(0.5)), "tensor(f64[], 0.5)");
  EXPECT_EQ(to_string(Tensor::from({c128(1, -2)})), "tensor(c128[1], [1-2i])");
  std::vector<double> v(10);
  for (int i = 0; i < 10; ++i) v[static_cast<std::size_t>(i)] = i;
  EXPECT_EQ(to_string(Tensor::from(v, {10})), "tensor(f64[10], [0, 1, 2, ..., 7, 8, 9])");
}

TEST(Tensor, BadAccessThrowsTypedErrors) {
  auto t = Tensor::from({1.0, 2.0});
  EXPECT_THROW(t.at<float>({0}), DTypeError);
  EXPECT_THROW(t.at<double>({2}), ShapeError);
  EXPECT_THROW(t.at<double>({0, 0}), ShapeError);
  EXPECT_THROW(t.item<double>(), ShapeError);
  EXPECT_THROW(t.reshaped({3}), ShapeError);
  EXPECT_THROW(Tensor::from(std::vector<double>{1, 2, 3}, {2, 2}), ShapeError);
  EXPECT_THROW((Tensor::from({{1.0, 2.0}, {3.0}})), ShapeError);
  EXPECT_THROW(Tensor::full({2}, c128(0, 1), DType::F64), DTypeError);
  try {
    t.data<c128>();
    FAIL();
  } catch (const DTypeError& e) {
    EXPECT_THAT(e.what(), HasSubstr("f64"));
    EXPECT_THAT(e.what(), HasSubstr("c128"));
  }
}

TEST(Tensor, OpsRefuseOperandsOfOtherTypesThanTheyWereBuiltFor) {
  auto t = Tensor::from({1.0, 2.0});
  StdTensorOp op = ops::add(t.type(), t.type());
  ExecContext ctx;
  Tensor out;
  const Tensor* ok[] = {&t, &t};
  op.eval(ctx, ok, std::span<Tensor>(&out, 1));
  EXPECT_EQ(out.at<double>({1}), 4.0);
  Tensor longer = Tensor::from({1.0, 2.0, 3.0});
  const Tensor* bad[] = {&longer, &longer};
  try {
    op.eval(ctx, bad, std::span<Tensor>(&out, 1));
    FAIL();
  } catch (const ShapeError& e) {
    EXPECT_THAT(e.what(), HasSubstr("f64[3]"));
    EXPECT_THAT(e.what(), HasSubstr("f64[2]"));
  }
}

TEST(Tensor, IntegerArithmeticWrapsInsteadOfOverflowing) {
  const std::int64_t big = std::numeric_limits<std::int64_t>::max();
  auto t = Tensor::from(std::vector<std::int64_t>{big, std::numeric_limits<std::int64_t>::min()}, {2});
  ExecContext ctx;
  Tensor out;
  const Tensor* in[] = {&t, &t};
  ops::add(t.type(), t.type()).eval(ctx, in, std::span<Tensor>(&out, 1));
  EXPECT_EQ(out.at<std::int64_t>({0}), -2);  // 2 * (2^63 - 1) mod 2^64
  EXPECT_EQ(out.at<std::int64_t>({1}), 0);
  const Tensor* one[] = {&t};
  ops::unary(OpKind::Neg, t.type()).eval(ctx, one, std::span<Tensor>(&out, 1));
  EXPECT_EQ(out.at<std::int64_t>({1}), std::numeric_limits<std::int64_t>::min());
}

// Shape keeps short shapes inside itself and must behave as std::vector<int64_t> otherwise: the
// same random edits applied to both, across the inline capacity in both directions, must leave
// the same dimensions after every step.
TEST(Shape, BehavesAsAVectorAcrossItsInlineCapacity) {
  std::mt19937 rng(7);
  auto draw = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  for (int trial = 0; trial < 200; ++trial) {
    Shape s;
    std::vector<std::int64_t> v;
    for (int step = 0; step < 40; ++step) {
      const std::int64_t d = draw(100);
      const auto at = static_cast<std::size_t>(draw(static_cast<int>(v.size()) + 1));
      switch (draw(9)) {
        case 0: s.push_back(d); v.push_back(d); break;
        case 1: s.insert(s.begin() + at, d); v.insert(v.begin() + static_cast<std::ptrdiff_t>(at), d); break;
        case 2: {  // a range from the shape itself, which the insertion may move
          const std::vector<std::int64_t> copy = v;
          s.insert(s.begin() + at, s.begin(), s.end());
          v.insert(v.begin() + static_cast<std::ptrdiff_t>(at), copy.begin(), copy.end());
          break;
        }
        case 3:
          if (at < v.size()) {
            s.erase(s.begin() + at);
            v.erase(v.begin() + static_cast<std::ptrdiff_t>(at));
          }
          break;
        case 4: {
          const auto n = static_cast<std::size_t>(draw(12));
          s.resize(n, d);
          v.resize(n, d);
          break;
        }
        case 5: {  // copies and moves, from inline and from heap storage
          Shape copy = s;
          Shape moved = std::move(copy);
          EXPECT_TRUE(copy.empty());
          s = moved;
          break;
        }
        case 6: {
          Shape other{1, 2, 3, 4, 5, 6, 7, 8};
          other = s;
          s = std::move(other);
          break;
        }
        case 7:
          if (!v.empty()) {
            s.pop_back();
            v.pop_back();
          }
          break;
        default: {
          const auto n = std::min<std::size_t>(at, v.size());
          s.erase(s.begin(), s.begin() + n);
          v.erase(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n));
          break;
        }
      }
      ASSERT_EQ(std::vector<std::int64_t>(s), v) << "trial " << trial << " step " << step;
      ASSERT_EQ(s.size(), v.size());
    }
  }
}

TEST(Shape, ShortShapesLiveInsideTheObject) {
  const Shape four{2, 3, 4, 5};
  const Shape copy = four;
  const auto* begin = reinterpret_cast<const std::byte*>(&copy);
  const auto* data = reinterpret_cast<const std::byte*>(copy.data());
  EXPECT_TRUE(data >= begin && data < begin + sizeof copy);
  EXPECT_EQ(copy.capacity(), Shape::kInline);
  // Past the inline capacity the dimensions move to the heap; a copy of that is equal.
  Shape long_shape(Shape::kInline + 3, 2);
  const Shape long_copy = long_shape;
  EXPECT_NE(long_copy.data(), long_shape.data());
  EXPECT_EQ(long_copy, long_shape);
}

TEST(Shape, ComparesAndConvertsLikeAVector) {
  const Shape a{2, 3}, b{2, 4}, c{2, 3, 1};
  EXPECT_EQ(a, (Shape{2, 3}));
  EXPECT_NE(a, b);
  EXPECT_LT(a, b);
  EXPECT_LT(a, c);  // a prefix orders first, as std::vector does
  const std::vector<std::int64_t> v = c;
  EXPECT_EQ(Shape(v), c);
  EXPECT_EQ(a.at(1), 3);
  EXPECT_THROW((void)a.at(2), std::out_of_range);
  EXPECT_EQ(shape_to_string(c), "[2, 3, 1]");
}
