// Structural ops (transpose, reshape, broadcast_in_dim, convert, extract_diag, embed_diag) and the
// creation ops: kernels against reference index loops in every dtype, shape/dtype errors, and AD
// (JVP against finite differences, the adjoint identity, second order) in f64, c128 and f32.
#include <limits>
#include <optional>

#include "op_test_util.hpp"
#include "tenferro/exec_options.hpp"
#include "tenferro/ops/record.hpp"

namespace {

using namespace tenferro;
using namespace tenferro::test;
using ::testing::HasSubstr;

constexpr DType kAllDtypes[] = {DType::F32, DType::F64, DType::C64, DType::C128, DType::I64, DType::Bool};

std::vector<std::int64_t> unravel(std::int64_t flat, const Shape& shape) {
  std::vector<std::int64_t> index(shape.size());
  for (std::size_t k = shape.size(); k-- > 0;) {
    index[k] = flat % shape[k];
    flat /= shape[k];
  }
  return index;
}

std::int64_t ravel(const std::vector<std::int64_t>& index, const Shape& shape) {
  std::int64_t flat = 0;
  for (std::size_t k = 0; k < shape.size(); ++k) flat = flat * shape[k] + index[k];
  return flat;
}

void set_element(Tensor& t, std::int64_t i, c128 v) {
  visit_dtype(t.dtype(), [&](auto zero) {
    using T = decltype(zero);
    T* p = static_cast<T*>(t.raw_data());
    if constexpr (std::is_same_v<T, c64>) {
      p[i] = c64(static_cast<float>(v.real()), static_cast<float>(v.imag()));
    } else if constexpr (std::is_same_v<T, c128>) {
      p[i] = v;
    } else if constexpr (std::is_same_v<T, bool>) {
      p[i] = v.real() != 0;
    } else {
      p[i] = static_cast<T>(v.real());
    }
  });
}

/// Reference gather: out[i] = a[source(i)], or 0 where source(i) is nullopt.
template <class Source>
Tensor gather_ref(const Tensor& a, const TensorType& out, Source&& source) {
  Tensor r(out);
  for (std::int64_t i = 0; i < r.numel(); ++i) {
    std::optional<std::vector<std::int64_t>> from = source(unravel(i, out.shape));
    if (from) set_element(r, i, a.element(ravel(*from, a.shape())));
  }
  return r;
}

TensorType ty(DType d, Shape s) { return TensorType{d, std::move(s)}; }

// ---- kernels -----------------------------------------------------------------------------------

TEST(Transpose, MatchesIndexLoopInEveryDtype) {
  // Shapes below, across and on the copy's 16 x 16 tiles (kernels/layout.cpp), for the tiled
  // transpose of the two innermost axes and the plain loops.
  for (const Shape& shape : {Shape{2, 3, 4}, Shape{3, 37, 53}, Shape{2, 16, 32}})
  for (DType d : kAllDtypes) {
    Tensor a = random_tensor(ty(d, shape), 1);
    for (ops::Axes perm : {ops::Axes{2, 0, 1}, {1, 0, 2}, {0, 1, 2}, {2, 1, 0}, {0, 2, 1}}) {
      StdTensorOp op = ops::transpose(a.type(), perm);
      Tensor expected = gather_ref(a, op.out, [&](const std::vector<std::int64_t>& i) {
        std::vector<std::int64_t> src(3);
        for (std::size_t k = 0; k < 3; ++k) src[static_cast<std::size_t>(perm[k])] = i[k];
        return std::optional(src);
      });
      EXPECT_TRUE(near(eval_op(op, {a}), expected, 0))
          << dtype_name(d) << " shape " << shape_to_string(shape) << " perm " << shape_to_string(perm);
    }
  }
}

TEST(Transpose, ScalarsAndEmptyTensors) {
  Tensor s = Tensor::scalar(3.5);
  EXPECT_TRUE(near(eval_op(ops::transpose(s.type(), {}), {s}), s, 0));
  Tensor e(ty(DType::F64, {0, 3}));
  Tensor r = eval_op(ops::transpose(e.type(), {1, 0}), {e});
  EXPECT_EQ(r.shape(), (Shape{3, 0}));
}

TEST(Reshape, KeepsRowMajorOrderAndSharesStorage) {
  Tensor a = random_tensor(ty(DType::C128, {2, 6}), 2);
  Tensor r = eval_op(ops::reshape(a.type(), {3, 2, 2}), {a});
  EXPECT_EQ(r.shape(), (Shape{3, 2, 2}));
  for (std::int64_t i = 0; i < a.numel(); ++i) EXPECT_EQ(r.element(i), a.element(i));
  EXPECT_TRUE(r.shares_storage_with(a));
}

TEST(BroadcastInDim, MatchesIndexLoop) {
  struct Case {
    Shape in, out;
    ops::Axes dims;
  };
  const Case cases[] = {
      {{3}, {2, 3}, {1}}, {{3, 1}, {3, 4, 2}, {0, 2}},       {{2, 3}, {3, 4, 2}, {2, 0}}, {{}, {2, 2}, {}},
      {{1}, {5}, {0}},    {{2, 1, 3}, {2, 4, 3}, {0, 1, 2}}, {{1, 1}, {1, 3, 1}, {2, 0}}, {{4}, {4}, {0}}};
  for (DType d : kAllDtypes) {
    for (const Case& c : cases) {
      Tensor a = random_tensor(ty(d, c.in), 3);
      StdTensorOp op = ops::broadcast_in_dim(a.type(), c.out, c.dims);
      Tensor expected = gather_ref(a, op.out, [&](const std::vector<std::int64_t>& i) {
        std::vector<std::int64_t> src(c.in.size());
        for (std::size_t k = 0; k < c.in.size(); ++k)
          src[k] = c.in[k] == 1 ? 0 : i[static_cast<std::size_t>(c.dims[k])];
        return std::optional(src);
      });
      EXPECT_TRUE(near(eval_op(op, {a}), expected, 0)) << dtype_name(d) << " " << op.name();
    }
  }
}

TEST(Convert, ValuesAcrossDtypes) {
  Tensor x = Tensor::from({1.5, -2.25, 0.0, 3.0});
  EXPECT_TRUE(
      near(eval_op(ops::convert(x.type(), DType::F32), {x}), Tensor::from({1.5f, -2.25f, 0.0f, 3.0f}), 0));
  EXPECT_TRUE(near(eval_op(ops::convert(x.type(), DType::C128), {x}),
                   Tensor::from({c128(1.5), c128(-2.25), c128(0), c128(3)}), 0));
  EXPECT_TRUE(
      near(eval_op(ops::convert(x.type(), DType::I64), {x}), Tensor::from<std::int64_t>({1, -2, 0, 3}), 0));
  Tensor as_bool = eval_op(ops::convert(x.type(), DType::Bool), {x});
  EXPECT_EQ(as_bool.dtype(), DType::Bool);
  EXPECT_THAT(std::vector<bool>(as_bool.data<bool>(), as_bool.data<bool>() + 4),
              ::testing::ElementsAre(true, true, false, true));
  Tensor z = Tensor::from({c64(1, 2), c64(-3, 0.5f)});
  EXPECT_TRUE(
      near(eval_op(ops::convert(z.type(), DType::C128), {z}), Tensor::from({c128(1, 2), c128(-3, 0.5)}), 0));
  EXPECT_TRUE(near(eval_op(ops::convert(as_bool.type(), DType::F64), {as_bool}),
                   Tensor::from({1.0, 1.0, 0.0, 1.0}), 0));
  Tensor same = eval_op(ops::convert(x.type(), DType::F64), {x});
  EXPECT_TRUE(near(same, x, 0));
}

TEST(Convert, FloatToIntegerTruncatesSaturatesAndMapsNanToZero) {
  const double inf = std::numeric_limits<double>::infinity();
  Tensor x = Tensor::from({2.9, -2.9, std::nan(""), 1e300, -inf});
  Tensor r = eval_op(ops::convert(x.type(), DType::I64), {x});
  constexpr auto kMax = std::numeric_limits<std::int64_t>::max(),
                 kMin = std::numeric_limits<std::int64_t>::min();
  EXPECT_THAT(std::vector<std::int64_t>(r.values<std::int64_t>().begin(), r.values<std::int64_t>().end()),
              ::testing::ElementsAre(2, -2, 0, kMax, kMin));
}

TEST(Diag, ExtractMatchesIndexLoop) {
  struct Case {
    Shape shape;
    std::int64_t axis1, axis2;
  };
  for (DType d : kAllDtypes) {
    for (const Case& c : {Case{{3, 4, 3}, 0, 2}, Case{{3, 4, 3}, 2, 0}, Case{{2, 2}, 0, 1},
                          Case{{2, 2}, 1, 0}, Case{{2, 3, 3, 2}, 2, 1}}) {
      Tensor a = random_tensor(ty(d, c.shape), 4);
      StdTensorOp op = ops::extract_diag(a.type(), c.axis1, c.axis2);
      Tensor expected = gather_ref(a, op.out, [&](const std::vector<std::int64_t>& i) {
        // Result axes are the operand's without axis2; the diagonal index sits where axis1 was.
        std::vector<std::int64_t> src(i);
        const auto diag = static_cast<std::size_t>(c.axis1 - (c.axis2 < c.axis1 ? 1 : 0));
        src.insert(src.begin() + c.axis2, i[diag]);
        return std::optional(src);
      });
      EXPECT_TRUE(near(eval_op(op, {a}), expected, 0)) << dtype_name(d) << " " << op.name();
    }
  }
}

TEST(Diag, EmbedPlacesTheDiagonalAndZerosElsewhere) {
  for (DType d : kAllDtypes) {
    for (const auto& axes : {std::pair<std::int64_t, std::int64_t>{0, 2}, {2, 0}, {1, 0}, {0, 1}}) {
      const std::int64_t axis1 = axes.first, axis2 = axes.second;  // (lambdas cannot capture bindings)
      Tensor x = random_tensor(ty(d, {3, 4}), 5);
      StdTensorOp op = ops::embed_diag(x.type(), axis1, axis2);
      Tensor e = eval_op(op, {x});
      Tensor expected = gather_ref(x, op.out, [&](const std::vector<std::int64_t>& i) {
        std::optional<std::vector<std::int64_t>> src;
        if (i[static_cast<std::size_t>(axis1)] == i[static_cast<std::size_t>(axis2)]) {
          src = i;
          src->erase(src->begin() + axis2);
        }
        return src;
      });
      EXPECT_TRUE(near(e, expected, 0)) << dtype_name(d) << " " << op.name();
      EXPECT_TRUE(near(eval_op(ops::extract_diag(e.type(), axis1, axis2), {e}), x, 0));
    }
  }
}

TEST(Constants, IotaZerosAndConstant) {
  Tensor i = eval_op(ops::iota({2, 3}, 1, DType::I64), {});
  EXPECT_THAT(std::vector<std::int64_t>(i.values<std::int64_t>().begin(), i.values<std::int64_t>().end()),
              ::testing::ElementsAre(0, 1, 2, 0, 1, 2));
  Tensor j = eval_op(ops::iota({2, 3}, 0, DType::C64), {});
  EXPECT_TRUE(near(j, Tensor::from(std::vector<c64>{0, 0, 0, 1, 1, 1}, {2, 3}), 0));
  EXPECT_TRUE(near(eval_op(ops::zeros(ty(DType::F32, {2})), {}), Tensor::from({0.0f, 0.0f}), 0));
  Tensor v = Tensor::from({1.0, 2.0});
  StdTensorOp c = ops::constant(v);
  v.data<double>()[0] = 7;  // the op keeps its own copy
  Tensor out = eval_op(c, {});
  EXPECT_EQ(out.at<double>({0}), 1.0);
  out.data<double>()[1] = 9;  // and hands out a fresh copy per run
  EXPECT_EQ(eval_op(c, {}).at<double>({1}), 2.0);
  EXPECT_EQ(c, ops::constant(Tensor::from({1.0, 2.0})));
}

// ---- shape/dtype errors ------------------------------------------------------------------------

template <class E, class F>
void expect_error(F&& f, const std::vector<std::string>& parts) {
  try {
    f();
    ADD_FAILURE() << "no exception";
  } catch (const E& e) {
    for (const auto& p : parts) EXPECT_THAT(e.what(), HasSubstr(p));
  }
}

TEST(StructuralErrors, NameTheOpTheOperandAndTheExpectation) {
  const TensorType a = ty(DType::F64, {2, 3});
  expect_error<ShapeError>(
      [&] {
        ops::transpose(a, {0, 0});
      },
      {"transpose", "perm [0, 0]", "f64[2, 3]", "repeat"});
  expect_error<ShapeError>([&] { ops::transpose(a, {0, 2}); }, {"transpose", "out of range", "[0, 2)"});
  expect_error<ShapeError>([&] { ops::transpose(a, {0}); }, {"transpose", "permutation"});
  expect_error<ShapeError>([&] { ops::reshape(a, {4}); },
                           {"reshape", "f64[2, 3]", "6 elements", "4 elements"});
  expect_error<ShapeError>([&] { ops::reshape(a, {-6, -1}); }, {"reshape", "negative"});
  expect_error<ShapeError>(
      [&] {
        ops::broadcast_in_dim(a, {2, 4}, {0, 1});
      },
      {"broadcast_in_dim", "length 3", "length 1 or 4"});
  expect_error<ShapeError>([&] { ops::broadcast_in_dim(a, {2, 3}, {0}); }, {"broadcast_in_dim", "dims [0]"});
  expect_error<ShapeError>([&] { ops::broadcast_in_dim(a, {2, 3}, {1, 1}); }, {"broadcast_in_dim", "repeat"});
  expect_error<ShapeError>(
      [&] {
        ops::broadcast_in_dim(a, {2, 3}, {0, 2});
      },
      {"broadcast_in_dim", "out of range"});
  expect_error<DTypeError>([&] { ops::convert(ty(DType::C128, {2}), DType::F64); },
                           {"convert", "c128[2]", "real()"});
  expect_error<ShapeError>([&] { ops::extract_diag(a, 0, 1); }, {"extract_diag", "lengths 2 and 3", "equal"});
  expect_error<ShapeError>([&] { ops::extract_diag(a, 1, 1); }, {"extract_diag", "distinct"});
  expect_error<ShapeError>([&] { ops::embed_diag(a, 0, 3); }, {"embed_diag", "[0, 3)"});
  expect_error<ShapeError>([&] { ops::iota({2, 3}, 2, DType::F64); }, {"iota", "dim 2"});
  expect_error<DTypeError>([&] { ops::iota({2}, 0, DType::Bool); }, {"iota", "bool"});
  expect_error<ShapeError>([&] { ops::zeros(ty(DType::F64, {-1})); }, {"zeros", "negative"});
}

TEST(StructuralErrors, EvalRefusesOperandsOfTheWrongType) {
  StdTensorOp op = ops::transpose(ty(DType::F64, {2, 3}), {1, 0});
  expect_error<ShapeError>(
      [&] {
        eval_op(op, {Tensor(ty(DType::F64, {3, 2}))});
      },
      {"transpose", "f64[3, 2]"});
}

// ---- AD ----------------------------------------------------------------------------------------

/// x -> op(x) * op(x): each structural op inside a nonlinear function, so that first and second
/// derivatives both exercise the op's JVP and transpose rules.
Fn squared(const StdTensorOp& op, const TensorType& in) {
  GraphMaker g;
  Value x = g.input("x", in);
  Value y = g.apply(op, {x});
  return g.finish({g.apply(ops::mul(op.out, op.out), {y, y})});
}

class StructuralAD : public ::testing::TestWithParam<DType> {};

TEST_P(StructuralAD, JvpVjpAndSecondOrderMatchFiniteDifferences) {
  const DType d = GetParam();
  const TensorType a = ty(d, {2, 3, 2}), col = ty(d, {3, 1}), scalar = ty(d, {});
  struct Case {
    TensorType in;
    StdTensorOp op;
  };
  const Case cases[] = {
      {a, ops::transpose(a, {2, 0, 1})},
      {a, ops::reshape(a, {3, 4})},
      {a, ops::broadcast_in_dim(a, {2, 4, 3, 2}, {0, 2, 3})},
      {col, ops::broadcast_in_dim(col, {2, 3, 4}, {1, 0})},
      {ty(d, {2, 3}), ops::broadcast_in_dim(ty(d, {2, 3}), {3, 4, 2}, {2, 0})},  // axes reordered
      {scalar, ops::broadcast_in_dim(scalar, {2, 2}, {})},
      {a, ops::extract_diag(a, 2, 0)},
      {a, ops::embed_diag(a, 1, 3)},
      {a, ops::convert(a, complex_dtype(d))},
      {a, ops::convert(a, d == DType::F32 ? DType::F64 : d)},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op.name());
    std::vector<Tensor> x{random_tensor(c.in, 11)};
    expect_grads(one_op(c.op, {c.in}), x, 2, d);
    expect_grads(squared(c.op, c.in), x, 2, d);
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, StructuralAD, ::testing::Values(DType::F64, DType::C128, DType::F32),
                         dtype_param_name);

TEST(StructuralAD, ConvertRealToComplexTransposesToRealPart) {
  // f(x) = convert(x) * c with x real and c complex: J^* ct = Re(conj(c) ct) (docs/design.md,
  // "Complex numbers").
  GraphMaker g;
  const TensorType xt = ty(DType::F64, {3}), ct = ty(DType::C128, {3});
  Value x = g.input("x", xt), c = g.input("c", ct);
  Value y = g.apply(ops::mul(ct, ct), {g.apply(ops::convert(xt, DType::C128), {x}), c});
  Fn f = g.finish({y});
  tidu::Transforms<StdTensorOp> T;
  std::vector<Tensor> in{Tensor::from({0.5, -1.0, 2.0}),
                         Tensor::from({c128(1, 2), c128(-0.5, 0.25), c128(0, -3)})};
  Tensor seed = Tensor::from({c128(0.3, -0.7), c128(1.1, 0.4), c128(-2, 0.5)});
  auto [values, cts] = T.vjp(f, in, std::span<const Tensor>(&seed, 1));
  ASSERT_EQ(cts[0].dtype(), DType::F64);
  for (std::int64_t i = 0; i < 3; ++i) {
    EXPECT_NEAR(cts[0].at<double>({i}), (std::conj(in[1].element(i)) * seed.element(i)).real(), 1e-14);
  }
  // Its transpose graph names real().
  auto lin = linearize_wrt(f, {{"x", xt}});
  EXPECT_THAT(computegraph::to_string(*tidu::linear_transpose(lin).graph), HasSubstr("real"));
}

TEST(StructuralAD, IntegerConversionsCarryNoTangent) {
  GraphMaker g;
  const TensorType xt = ty(DType::F64, {3});
  Value x = g.input("x", xt);
  Value i = g.apply(ops::convert(xt, DType::I64), {x});
  Value back = g.apply(ops::convert(g.type(i), DType::F64), {i});
  Fn f = g.finish({g.apply(ops::mul(xt, xt), {back, x})});
  tidu::Transforms<StdTensorOp> T;
  std::vector<Tensor> in{Tensor::from({1.5, -2.5, 3.25})};
  Tensor seed = Tensor::from({1.0, 1.0, 1.0});
  auto [values, cts] = T.vjp(f, in, std::span<const Tensor>(&seed, 1));
  // d(trunc(x) * x) = trunc(x) dx almost everywhere: only the direct use of x carries a tangent.
  EXPECT_TRUE(near(cts[0], Tensor::from({1.0, -2.0, 3.0}), 0));
}

// Vector example 2 of docs/design.md: y = Sum(exp(a * x)), x, a in R^2.
TEST(VectorExample2, SumOfExpTransposesThroughBroadcastInDim) {
  GraphMaker g;
  const TensorType v = ty(DType::F64, {2});
  Value x = g.input("x", v), a = g.input("a", v);
  Value r3 = g.apply(ops::unary(OpKind::Exp, v), {g.apply(ops::mul(v, v), {x, a})});
  Fn f = g.finish({g.apply(ops::reduce(OpKind::ReduceSum, v, {0}), {r3})});

  auto lin = linearize_wrt(f, {{"x", v}});
  const std::string linear = computegraph::to_string(*lin.graph);
  EXPECT_THAT(linear, HasSubstr("reduce_sum[axes=[0]]"));
  auto tr = tidu::linear_transpose(lin);
  const std::string transposed = computegraph::to_string(*tr.graph);
  EXPECT_THAT(transposed, HasSubstr("broadcast_in_dim[shape=[2], dims=[]]")) << transposed;
  EXPECT_THAT(transposed, ::testing::Not(HasSubstr("reduce_sum"))) << transposed;

  tidu::Transforms<StdTensorOp> T;
  const std::vector<Tensor> in{Tensor::from({0.3, -0.8}), Tensor::from({1.5, 0.7})};
  auto grads = T.grad(f, in);
  for (std::int64_t i = 0; i < 2; ++i) {
    const double xi = in[0].at<double>({i}), ai = in[1].at<double>({i});
    EXPECT_NEAR(grads[0].at<double>({i}), ai * std::exp(ai * xi), 1e-14);
    EXPECT_NEAR(grads[1].at<double>({i}), xi * std::exp(ai * xi), 1e-14);
  }
  expect_grads(f, in, 2, DType::F64);

  // Second order: H v against central differences of the gradient.
  const std::vector<Tensor> dir{Tensor::from({0.4, -0.2}), Tensor::from({-0.1, 0.9})};
  auto hv = T.hvp(f, in, dir);
  const double h = 1e-5;
  std::vector<Tensor> plus, minus;
  for (std::size_t j = 0; j < 2; ++j) {
    plus.push_back(Space::add_scaled(in[j], h, dir[j]));
    minus.push_back(Space::add_scaled(in[j], -h, dir[j]));
  }
  auto gp = T.grad(f, plus), gm = T.grad(f, minus);
  for (std::size_t j = 0; j < 2; ++j) {
    Tensor fd =
        Space::add_scaled(Space::add_scaled(Space::zeros_like(gp[j]), 0.5 / h, gp[j]), -0.5 / h, gm[j]);
    EXPECT_TRUE(near(hv[j], fd, 1e-8)) << "input " << j;
  }
}

// The executor's pass narrow_slices (exec/passes.hpp): values read only through slices are
// computed only where they are read. A = B C read as a column slice of its transpose, of exp(A) +
// A, of a broadcast product and of a diagonal; a product of three matrices read in two columns;
// a sum of products times a thin matrix. The outputs equal the unnarrowed program's, and the
// printed program computes no full product.
TEST(NarrowSlices, ValuesReadOnlyThroughSlicesAreComputedOnlyThere) {
  using Tr = Traced;
  const Tensor a = random_f64({30, 20}, 1), b = random_f64({20, 25}, 2), c = random_f64({25, 6}, 3);
  const Tensor d = random_f64({20, 30}, 4), v = random_f64({25}, 5), e = random_f64({30, 20}, 6);
  const Program program = trace(
      [](const Tr& A, const Tr& B, const Tr& C, const Tr& D, const Tr& V, const Tr& E) {
        const Tr x = matmul(A, B);                                              // [30, 25]
        const Tr y1 = slice(transpose(exp(x) + x, {1, 0}), {0, 0}, {4, 30});    // x[:, 0:4]^T
        const Tr y2 = slice(matmul(x, C), {0, 0}, {30, 2});                     // A (B C[:, 0:2])
        const Tr y3 = slice(diagonal(matmul(A, D)), {0}, {3});                 // (A D)[0:3, 0:3]
        const Tr y4 = slice(broadcast_to(V, {30, 25}) * x, {0, 2}, {5, 7});     // x[0:5, 2:7]
        const Tr y5 = matmul(matmul(A, B * 2.0) + matmul(E, B * 3.0), slice(C, {0, 0}, {25, 2}));
        return std::vector<Tr>{y1, y2, y3, y4, y5};
      },
      a, b, c, d, v, e);
  const ExecOptions saved = exec_options();
  ExecOptions on = saved, off = saved;
  on.narrow_slices = true;
  off.narrow_slices = false;
  set_exec_options(off);
  const std::string wide_text = program.print_executable();
  const std::vector<Tensor> wide = program.run({a, b, c, d, v, e});
  set_exec_options(on);
  const std::string narrow_text = program.print_executable();
  const std::vector<Tensor> narrow = program.run({a, b, c, d, v, e});
  set_exec_options(saved);
  for (std::size_t i = 0; i < wide.size(); ++i) EXPECT_TRUE(near(narrow[i], wide[i], 1e-12)) << "output " << i;
  // Unnarrowed, the full products appear; narrowed, none of them.
  for (const char* full : {"f64[30, 25]", "f64[30, 30]", "f64[30, 6]"}) {
    EXPECT_THAT(wide_text, HasSubstr(full));
    EXPECT_THAT(narrow_text, ::testing::Not(HasSubstr(full))) << narrow_text;
  }
}

}  // namespace
