// dot_general and the reductions: kernels against naive reference loops in every numeric dtype
// (batch dims, unusual contracting dims, layouts BLAS reads directly and layouts that need
// packing), shape/dtype errors, and AD (JVP against finite differences, the adjoint identity,
// second order) in f64, c128 and f32, including reduce_prod at zeros and reduce_max at ties.
#include <limits>

#include "op_test_util.hpp"
#include "tenferro/threads.hpp"
#include "tenferro/ops/record.hpp"
#include "tenferro/program.hpp"

namespace {

using namespace tenferro;
using namespace tenferro::test;
using ::testing::HasSubstr;

TensorType ty(DType d, Shape s) { return TensorType{d, std::move(s)}; }

/// Calls f(index) for every multi-index of `shape` in row-major order.
template <class F>
void for_each_index(const Shape& shape, F&& f) {
  std::vector<std::int64_t> index(shape.size(), 0);
  if (numel(shape) == 0) return;
  while (true) {
    f(index);
    std::size_t k = shape.size();
    while (true) {
      if (k == 0) return;
      --k;
      if (++index[k] < shape[k]) break;
      index[k] = 0;
    }
  }
}

std::int64_t flat(const std::vector<std::int64_t>& index, const Shape& shape) {
  std::int64_t f = 0;
  for (std::size_t k = 0; k < shape.size(); ++k) f = f * shape[k] + index[k];
  return f;
}

Tensor from_complex(const std::vector<c128>& values, const TensorType& type) {
  Tensor r(type);
  visit_dtype(type.dtype, [&](auto zero) {
    using T = decltype(zero);
    T* p = static_cast<T*>(r.raw_data());
    for (std::size_t i = 0; i < values.size(); ++i) {
      if constexpr (std::is_same_v<T, c64> || std::is_same_v<T, c128>) {
        p[i] = T(static_cast<typename T::value_type>(values[i].real()),
                 static_cast<typename T::value_type>(values[i].imag()));
      } else if constexpr (!std::is_same_v<T, bool>) {
        p[i] = static_cast<T>(values[i].real());
      }
    }
  });
  return r;
}

/// The naive dot_general: for every result index, a sum over all contracting indices.
Tensor dot_reference(const Tensor& a, const Tensor& b, const DotDims& d, const TensorType& out) {
  auto free_of = [](std::size_t rank, const ops::Axes& batch, const ops::Axes& contract) {
    ops::Axes f;
    for (std::int64_t k = 0; k < static_cast<std::int64_t>(rank); ++k) {
      if (std::count(batch.begin(), batch.end(), k) == 0 &&
          std::count(contract.begin(), contract.end(), k) == 0)
        f.push_back(k);
    }
    return f;
  };
  const ops::Axes lf = free_of(a.rank(), d.lhs_batch, d.lhs_contract),
                  rf = free_of(b.rank(), d.rhs_batch, d.rhs_contract);
  Shape contract_shape;
  for (auto k : d.lhs_contract) contract_shape.push_back(a.shape()[static_cast<std::size_t>(k)]);
  std::vector<c128> values;
  for_each_index(out.shape, [&](const std::vector<std::int64_t>& r) {
    std::vector<std::int64_t> ia(a.rank()), ib(b.rank());
    std::size_t pos = 0;
    for (std::size_t i = 0; i < d.lhs_batch.size(); ++i, ++pos) {
      ia[static_cast<std::size_t>(d.lhs_batch[i])] = r[pos];
      ib[static_cast<std::size_t>(d.rhs_batch[i])] = r[pos];
    }
    for (auto k : lf) ia[static_cast<std::size_t>(k)] = r[pos++];
    for (auto k : rf) ib[static_cast<std::size_t>(k)] = r[pos++];
    c128 sum = 0;
    auto add_term = [&](const std::vector<std::int64_t>& c) {
      for (std::size_t q = 0; q < c.size(); ++q) {
        ia[static_cast<std::size_t>(d.lhs_contract[q])] = c[q];
        ib[static_cast<std::size_t>(d.rhs_contract[q])] = c[q];
      }
      sum += a.element(flat(ia, a.shape())) * b.element(flat(ib, b.shape()));
    };
    if (contract_shape.empty()) {
      add_term({});
    } else {
      for_each_index(contract_shape, add_term);
    }
    values.push_back(sum);
  });
  return from_complex(values, out);
}

struct DotCase {
  const char* name;
  Shape lhs, rhs;
  DotDims dims;
};

const DotCase kDotCases[] = {
    {"matmul", {3, 4}, {4, 5}, {{}, {}, {1}, {0}}},
    {"lhs_transposed", {4, 3}, {4, 5}, {{}, {}, {0}, {0}}},
    {"rhs_transposed", {3, 4}, {5, 4}, {{}, {}, {1}, {1}}},
    {"both_transposed", {4, 3}, {5, 4}, {{}, {}, {0}, {1}}},
    {"batched", {2, 3, 4}, {2, 4, 5}, {{0}, {0}, {2}, {1}}},
    {"batch_not_leading", {3, 2, 4}, {4, 5, 2}, {{1}, {2}, {2}, {0}}},
    {"two_batch_dims_reordered", {2, 3, 4, 5}, {5, 3, 2, 6}, {{0, 1}, {2, 1}, {3}, {0}}},
    {"two_contracting_out_of_order", {2, 3, 4, 5}, {5, 4, 6}, {{}, {}, {3, 2}, {0, 1}}},
    {"contracting_needs_packing", {4, 3, 5}, {3, 6, 4}, {{}, {}, {0, 1}, {2, 0}}},
    {"free_axes_interleaved", {3, 4, 2}, {4, 5}, {{}, {}, {1}, {0}}},
    {"outer_product", {3}, {4}, {{}, {}, {}, {}}},
    {"inner_product", {5}, {5}, {{}, {}, {0}, {0}}},
    {"matrix_vector", {3, 4}, {4}, {{}, {}, {1}, {0}}},
    {"vector_matrix", {4}, {4, 5}, {{}, {}, {0}, {0}}},
    {"unit_dims", {1, 4}, {4, 1}, {{}, {}, {1}, {0}}},
    {"batch_only", {3, 2}, {3, 2}, {{0, 1}, {0, 1}, {}, {}}},
    {"empty_result", {0, 3}, {3, 4}, {{}, {}, {1}, {0}}},
    {"empty_contraction", {2, 0}, {0, 3}, {{}, {}, {1}, {0}}},
};

class DotKernel : public ::testing::TestWithParam<DType> {};

TEST_P(DotKernel, MatchesNaiveLoops) {
  const DType d = GetParam();
  for (const DotCase& c : kDotCases) {
    SCOPED_TRACE(c.name);
    Tensor a = random_tensor(ty(d, c.lhs), 1), b = random_tensor(ty(d, c.rhs), 2);
    StdTensorOp op = ops::dot_general(a.type(), b.type(), c.dims);
    Tensor expected = dot_reference(a, b, c.dims, op.out);
    EXPECT_TRUE(near(eval_op(op, {a, b}), expected, d == DType::I64 ? 0 : 10 * tol_for(d))) << op.name();
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, DotKernel,
                         ::testing::Values(DType::F32, DType::F64, DType::C64, DType::C128, DType::I64),
                         dtype_param_name);

TEST(DotKernel, LargeMatmulMatchesNaiveLoop) {
  // Large enough for OpenBLAS's blocked and threaded paths.
  Tensor a = random_tensor(ty(DType::F64, {130, 97}), 3), b = random_tensor(ty(DType::F64, {97, 150}), 4);
  StdTensorOp op = ops::dot_general(a.type(), b.type(), {{}, {}, {1}, {0}});
  EXPECT_TRUE(near(eval_op(op, {a, b}), dot_reference(a, b, op.attrs.get<DotDims>(), op.out), 1e-12));
}

template <class E, class F>
void expect_error(F&& f, const std::vector<std::string>& parts) {
  try {
    f();
    ADD_FAILURE() << "no exception";
  } catch (const E& e) {
    for (const auto& p : parts) EXPECT_THAT(e.what(), HasSubstr(p));
  }
}

TEST(DotErrors, NameTheOperandsAndTheExpectation) {
  const TensorType a = ty(DType::F64, {3, 4}), b = ty(DType::F64, {5, 6});
  expect_error<ShapeError>(
      [&] {
        ops::dot_general(a, b, {{}, {}, {1}, {0}});
      },
      {"dot_general", "contracting", "f64[3, 4], f64[5, 6]", "lengths 4 and 5"});
  expect_error<DTypeError>(
      [&] {
        ops::dot_general(a, ty(DType::F32, {4}), {{}, {}, {1}, {0}});
      },
      {"dot_general", "dtypes differ", "f32[4]"});
  expect_error<DTypeError>(
      [&] {
        ops::dot_general(ty(DType::Bool, {2}), ty(DType::Bool, {2}), {{}, {}, {0}, {0}});
      },
      {"dot_general", "bool"});
  expect_error<ShapeError>(
      [&] {
        ops::dot_general(a, a, {{}, {}, {1}, {}});
      },
      {"dot_general", "as many lhs as rhs"});
  expect_error<ShapeError>(
      [&] {
        ops::dot_general(a, a, {{0}, {0}, {0}, {1}});
      },
      {"dot_general", "repeats axis 0"});
  expect_error<ShapeError>(
      [&] {
        ops::dot_general(a, a, {{}, {}, {2}, {1}});
      },
      {"dot_general", "out of range"});
  expect_error<ShapeError>(
      [&] {
        ops::dot_general(ty(DType::F64, {2, 3}), ty(DType::F64, {3, 3}), {{0}, {0}, {1}, {1}});
      },
      {"dot_general", "batch", "lengths 2 and 3"});
}

// ---- reductions --------------------------------------------------------------------------------

/// The reference reduction: for each result element, a left fold in row-major order of the
/// reduced indices, starting from the reduction's identity.
Tensor reduce_reference(OpKind kind, const Tensor& a, const ops::Axes& axes, const TensorType& out) {
  Shape reduced;
  for (auto k : axes) reduced.push_back(a.shape()[static_cast<std::size_t>(k)]);
  std::vector<c128> values;
  const bool is_max = kind == OpKind::ReduceMax, is_min = kind == OpKind::ReduceMin;
  for_each_index(out.shape, [&](const std::vector<std::int64_t>& r) {
    c128 acc = kind == OpKind::ReduceProd ? 1.0
               : is_max                   ? -std::numeric_limits<double>::infinity()
               : is_min                   ? std::numeric_limits<double>::infinity()
                                          : 0.0;
    auto visit = [&](const std::vector<std::int64_t>& c) {
      std::vector<std::int64_t> index;
      for (std::size_t k = 0, kr = 0, kc = 0; k < a.rank(); ++k) {
        const bool is_reduced = std::count(axes.begin(), axes.end(), static_cast<std::int64_t>(k)) > 0;
        index.push_back(is_reduced ? c[kc++] : r[kr++]);
      }
      const c128 v = a.element(flat(index, a.shape()));
      if (kind == OpKind::ReduceSum) acc += v;
      if (kind == OpKind::ReduceProd) acc *= v;
      if ((is_max && (v.real() > acc.real() || std::isnan(v.real()))) ||
          (is_min && (v.real() < acc.real() || std::isnan(v.real())))) {
        acc = v;
      }
    };
    if (reduced.empty()) {
      visit({});
    } else {
      for_each_index(reduced, visit);
    }
    values.push_back(acc);
  });
  return from_complex(values, out);
}

TEST(ReduceKernel, MatchesSequentialFoldsBitwise) {
  const Shape shape{3, 4, 5};
  const std::vector<ops::Axes> axis_sets{{}, {0}, {1}, {2}, {0, 2}, {2, 0}, {0, 1, 2}, {1, 2}};
  for (DType d : {DType::F32, DType::F64, DType::C64, DType::C128, DType::I64}) {
    Tensor a = random_tensor(ty(d, shape), 7);
    for (OpKind kind : {OpKind::ReduceSum, OpKind::ReduceProd, OpKind::ReduceMax, OpKind::ReduceMin}) {
      if (is_complex(d) && (kind == OpKind::ReduceMax || kind == OpKind::ReduceMin)) continue;
      for (const auto& axes : axis_sets) {
        StdTensorOp op = ops::reduce(kind, a.type(), axes);
        // f64 and i64 reproduce the fold exactly; f32 and c64 products differ from the reference's
        // double arithmetic by rounding only.
        const double tol = (d == DType::F64 || d == DType::I64 || d == DType::C128) ? 0 : 1e-5;
        EXPECT_TRUE(near(eval_op(op, {a}), reduce_reference(kind, a, op.attrs.get<ReduceAxes>().axes, op.out), tol))
            << dtype_name(d) << " " << op.name();
      }
    }
  }
}

// Pool-shaped reductions (reduced pairs between kept axes, the innermost reduced run of 2 folded
// by the pair loop) and operands large enough that threads split the outermost kept axis: the
// same bits as the sequential fold, at 1 and 2 threads, and with a reduced outermost axis.
TEST(ReduceKernel, PoolShapedAndThreadedReductionsMatchSequentialFolds) {
  const int saved = num_threads();
  struct Case {
    Shape shape;
    ops::Axes axes;
  };
  const std::vector<Case> cases{{{2, 3, 4, 2, 5, 2}, {3, 5}},     {{40, 8, 6, 2, 6, 2}, {3, 5}},
                                {{40, 8, 6, 2, 6, 2}, {0, 3, 5}}, {{37, 3, 30, 3}, {1, 3}},
                                {{33, 5, 7, 2, 3, 5}, {1, 3}},    {{600, 70}, {1}}};
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    for (DType d : {DType::F64, DType::F32}) {
      for (const Case& c : cases) {
        Tensor a = random_tensor(ty(d, c.shape), 11);
        for (OpKind kind : {OpKind::ReduceSum, OpKind::ReduceMax, OpKind::ReduceMin}) {
          StdTensorOp op = ops::reduce(kind, a.type(), c.axes);
          const double tol = d == DType::F64 || kind != OpKind::ReduceSum ? 0 : 1e-5;
          EXPECT_TRUE(near(eval_op(op, {a}), reduce_reference(kind, a, c.axes, op.out), tol))
              << dtype_name(d) << " " << op.name() << " " << shape_to_string(c.shape) << " threads " << threads;
        }
      }
    }
  }
  set_num_threads(saved);
}

TEST(ReduceKernel, ResultTypesAndEdgeCases) {
  StdTensorOp op = ops::reduce(OpKind::ReduceSum, ty(DType::F64, {2, 3, 4}), {2, 0});
  EXPECT_EQ(op.out, ty(DType::F64, {3}));
  EXPECT_EQ(op.attrs.get<ReduceAxes>().axes, (ops::Axes{0, 2}));  // sorted
  Tensor nan = Tensor::from({1.0, std::nan(""), 3.0});
  EXPECT_TRUE(std::isnan(eval_op(ops::reduce(OpKind::ReduceMax, nan.type(), {0}), {nan}).item<double>()));
  EXPECT_TRUE(std::isnan(eval_op(ops::reduce(OpKind::ReduceMin, nan.type(), {0}), {nan}).item<double>()));
  Tensor empty(ty(DType::F64, {0, 2}));
  EXPECT_TRUE(
      near(eval_op(ops::reduce(OpKind::ReduceSum, empty.type(), {0}), {empty}), Tensor::from({0.0, 0.0}), 0));
  EXPECT_TRUE(near(eval_op(ops::reduce(OpKind::ReduceProd, empty.type(), {0}), {empty}),
                   Tensor::from({1.0, 1.0}), 0));
  EXPECT_EQ(eval_op(ops::reduce(OpKind::ReduceMax, empty.type(), {0}), {empty}).at<double>({0}),
            -std::numeric_limits<double>::infinity());
  Tensor i = Tensor::from<std::int64_t>({4, -7, 2});
  EXPECT_EQ(eval_op(ops::reduce(OpKind::ReduceMin, i.type(), {0}), {i}).item<std::int64_t>(), -7);
  Tensor copy = eval_op(ops::reduce(OpKind::ReduceSum, i.type(), {}), {i});
  EXPECT_TRUE(near(copy, i, 0));
  EXPECT_FALSE(copy.shares_storage_with(i));
}

TEST(ReduceErrors, NameTheOpTheOperandAndTheExpectation) {
  const TensorType a = ty(DType::F64, {2, 3});
  expect_error<ShapeError>([&] { ops::reduce(OpKind::ReduceSum, a, {2}); },
                           {"reduce_sum", "axes [2]", "f64[2, 3]", "out of range"});
  expect_error<ShapeError>(
      [&] {
        ops::reduce(OpKind::ReduceProd, a, {1, 1});
      },
      {"reduce_prod", "repeats axis 1"});
  expect_error<DTypeError>([&] { ops::reduce(OpKind::ReduceMax, ty(DType::C128, {2}), {0}); },
                           {"reduce_max", "c128[2]", "real"});
  expect_error<DTypeError>([&] { ops::reduce(OpKind::ReduceSum, ty(DType::Bool, {2}), {0}); },
                           {"reduce_sum", "bool"});
  expect_error<Error>([&] { ops::reduce(OpKind::Add, a, {0}); }, {"not a reduction"});
}

// ---- AD ----------------------------------------------------------------------------------------

class DotReduceAD : public ::testing::TestWithParam<DType> {};

TEST_P(DotReduceAD, DotGeneralJvpVjpAndSecondOrder) {
  const DType d = GetParam();
  for (const DotCase& c : kDotCases) {
    if (numel(c.lhs) == 0 || numel(c.rhs) == 0) continue;
    SCOPED_TRACE(c.name);
    StdTensorOp op = ops::dot_general(ty(d, c.lhs), ty(d, c.rhs), c.dims);
    std::vector<Tensor> x{random_tensor(ty(d, c.lhs), 21), random_tensor(ty(d, c.rhs), 22)};
    expect_grads(one_op(op, {ty(d, c.lhs), ty(d, c.rhs)}), x, 2, d);
  }
}

TEST_P(DotReduceAD, ReductionsJvpVjpAndSecondOrder) {
  const DType d = GetParam();
  const TensorType a = ty(d, {3, 2, 4});
  for (OpKind kind : {OpKind::ReduceSum, OpKind::ReduceProd, OpKind::ReduceMax, OpKind::ReduceMin}) {
    if (is_complex(d) && (kind == OpKind::ReduceMax || kind == OpKind::ReduceMin)) continue;
    for (const ops::Axes& axes : {ops::Axes{}, ops::Axes{1}, ops::Axes{2, 0}, ops::Axes{0, 1, 2}}) {
      StdTensorOp op = ops::reduce(kind, a, axes);
      SCOPED_TRACE(op.name());
      // Max and min get distinct values 0.1 apart (a shuffled grid), so that no finite-difference
      // step crosses a change of the extremum; their derivative is smooth there.
      Tensor x = random_tensor(a, 31);
      if (kind == OpKind::ReduceMax || kind == OpKind::ReduceMin) {
        std::vector<c128> grid;
        for (std::int64_t i = 0; i < a.numel(); ++i)
          grid.emplace_back(0.1 * static_cast<double>((i * 7) % a.numel()) - 1.2);
        x = from_complex(grid, a);
      }
      expect_grads(one_op(op, {a}), {x}, 2, d);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, DotReduceAD, ::testing::Values(DType::F64, DType::C128, DType::F32),
                         dtype_param_name);

TEST(ReduceProdAD, GradientAndHessianAreExactAtZeros) {
  // Slices with no, one, two and three zeros: y_i = prod over axis 1 of row i.
  for (DType d : {DType::F64, DType::C128}) {
    SCOPED_TRACE(dtype_name(d));
    const std::vector<double> values{2, 3, -0.5, 1.5,  //
                                     2, 0, -0.5, 1.5,  //
                                     0, 3, 0,    1.5,  //
                                     0, 0, -0.5, 0};
    const TensorType a = ty(d, {4, 4});
    Tensor x = from_complex(std::vector<c128>(values.begin(), values.end()), a);
    Fn f = one_op(ops::reduce(OpKind::ReduceProd, a, {1}), {a});
    expect_grads(f, {x}, 2, d);

    // Closed forms: the gradient of sum_i y_i is prod_{j != k} x_ij; the Hessian of the row
    // product at (k, l), k != l, is prod_{j != k, l} x_ij.
    tidu::Transforms<StdTensorOp> T;
    Fn total = [&] {
      GraphMaker g;
      Value in = g.input("x", a);
      Value y = g.apply(ops::reduce(OpKind::ReduceProd, a, {1}), {in});
      return g.finish({g.apply(ops::reduce(OpKind::ReduceSum, g.type(y), {0}), {y})});
    }();
    std::vector<Tensor> in{x};
    Tensor grad = T.grad(total, in)[0];
    auto H = T.hessian(total, in);
    for (std::int64_t i = 0; i < 4; ++i) {
      for (std::int64_t k = 0; k < 4; ++k) {
        double others = 1;
        for (std::int64_t j = 0; j < 4; ++j)
          others *= j == k ? 1 : values[static_cast<std::size_t>(4 * i + j)];
        EXPECT_NEAR(std::abs(grad.element(4 * i + k) - others), 0, 1e-14) << "row " << i << " col " << k;
        for (std::int64_t l = 0; l < 4; ++l) {
          double h = 0;
          if (l != k) {
            h = 1;
            for (std::int64_t j = 0; j < 4; ++j)
              h *= (j == k || j == l) ? 1 : values[static_cast<std::size_t>(4 * i + j)];
          }
          EXPECT_NEAR(
              std::abs(H(static_cast<std::size_t>(4 * i + k), static_cast<std::size_t>(4 * i + l)) - h), 0,
              1e-14)
              << "row " << i << " entries " << k << ", " << l;
        }
      }
    }
  }
}

TEST(ReduceMaxAD, GradientIsSplitEquallyAmongTies) {
  for (OpKind kind : {OpKind::ReduceMax, OpKind::ReduceMin}) {
    const bool is_max = kind == OpKind::ReduceMax;
    const double e = is_max ? 3 : -3;                          // the extremum of each row
    Tensor x = Tensor::from(std::vector<double>{e, 1, e, 0.5,  // two ties
                                                0.5, e, 1, 0,  // one extremum
                                                e, e, e, e},   // all tied
                            {3, 4});
    GraphMaker g;
    Value in = g.input("x", x.type());
    Value y = g.apply(ops::reduce(kind, x.type(), {1}), {in});
    Value w = g.input("w", g.type(y));
    Fn f = g.finish({g.apply(ops::reduce(OpKind::ReduceSum, g.type(y), {0}),
                             {g.apply(ops::mul(g.type(y), g.type(y)), {y, w})})});
    tidu::Transforms<StdTensorOp> T;
    std::vector<Tensor> args{x, Tensor::from({1.0, 2.0, 4.0})};
    Tensor grad = T.grad(f, args)[0];
    EXPECT_TRUE(
        near(grad, Tensor::from(std::vector<double>{0.5, 0, 0.5, 0, 0, 2, 0, 0, 1, 1, 1, 1}, {3, 4}), 0))
        << grad;
    EXPECT_TRUE(near(T.grad(f, args)[1], Tensor::from({e, e, e}), 0));
  }
}

TEST(DotReduceAD, HvpMatchesFiniteDifferencesOfTheGradient) {
  // f(A, B) = sum(|A B|^2) = sum(re(conj(AB) * AB)) with complex A and B: a real loss, as the
  // convention for gradients of complex inputs requires (docs/design.md, "Complex numbers").
  const TensorType at = ty(DType::C128, {2, 3}), bt = ty(DType::C128, {3, 2});
  GraphMaker g;
  Value A = g.input("A", at), B = g.input("B", bt);
  StdTensorOp dot = ops::dot_general(at, bt, {{}, {}, {1}, {0}});
  Value P = g.apply(dot, {A, B});
  Value sq = g.apply(ops::mul(dot.out, dot.out), {g.apply(ops::unary(OpKind::Conj, dot.out), {P}), P});
  Value re = g.apply(ops::unary(OpKind::Real, dot.out), {sq});
  Fn f = g.finish({g.apply(ops::reduce(OpKind::ReduceSum, g.type(re), {0, 1}), {re})});
  tidu::Transforms<StdTensorOp> T;
  const std::vector<Tensor> x{random_tensor(at, 41), random_tensor(bt, 42)};
  const std::vector<Tensor> v{random_tensor(at, 43), random_tensor(bt, 44)};
  auto hv = T.hvp(f, x, v);
  const double h = 1e-4;
  std::vector<Tensor> plus, minus;
  for (std::size_t j = 0; j < 2; ++j) {
    plus.push_back(Space::add_scaled(x[j], h, v[j]));
    minus.push_back(Space::add_scaled(x[j], -h, v[j]));
  }
  auto gp = T.grad(f, plus), gm = T.grad(f, minus);
  for (std::size_t j = 0; j < 2; ++j) {
    // The loss is quartic, so the central difference has an O(h^2) error: 1e-7 is ample.
    Tensor fd =
        Space::add_scaled(Space::add_scaled(Space::zeros_like(gp[j]), 0.5 / h, gp[j]), -0.5 / h, gm[j]);
    EXPECT_TRUE(near(hv[j], fd, 1e-7)) << "input " << j;
  }
  // Gradient against the closed form: d/dA sum |AB|^2 = 2 (AB) B^H.
  Tensor grad_a = T.grad(f, x)[0];
  Tensor ab = eval_op(dot, {x[0], x[1]});
  for (std::int64_t i = 0; i < 2; ++i) {
    for (std::int64_t k = 0; k < 3; ++k) {
      c128 expected = 0;
      for (std::int64_t j = 0; j < 2; ++j)
        expected += 2.0 * ab.element(2 * i + j) * std::conj(x[1].element(2 * k + j));
      EXPECT_NEAR(std::abs(grad_a.element(3 * i + k) - expected), 0, 1e-12);
    }
  }
}

}  // namespace
