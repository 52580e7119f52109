// Transforms over trees (tenferro/tree.hpp): structured arguments and results, any number of
// arguments, argnum selection and has_aux. Gradients are checked against closed forms and against
// the same function differentiated leaf by leaf through the plain Tensor path (an independent
// route: no tree code runs there).
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "op_test_util.hpp"
#include "tenferro/tenferro.hpp"

namespace tf = tenferro;
using T = tf::Traced;

template <class L>
struct Layer {
  L w, b;
};
TENFERRO_TREE_FIELDS(Layer, w, b)

template <class L>
struct Params {
  std::vector<Layer<L>> layers;  // a field may be any tree of L
  std::map<std::string, L> constants;
  std::optional<L> scale;
};
TENFERRO_TREE_FIELDS(Params, layers, constants, scale)

namespace {

tf::Tensor random_tensor(tf::Shape shape, std::uint64_t seed) {
  return tf::test::random_tensor({tf::DType::F64, std::move(shape)}, seed);
}

void expect_near(const tf::Tensor& a, const tf::Tensor& b, double tol = 1e-12) {
  ASSERT_EQ(a.shape(), b.shape());
  for (std::int64_t i = 0; i < a.numel(); ++i) {
    EXPECT_NEAR(a.data<double>()[i], b.data<double>()[i], tol * (1 + std::abs(b.data<double>()[i]))) << "element " << i;
  }
}

/// A 5x5 lattice of site tensors contracted to a scalar: sum over sites k of (k + 1) * sum(t_k^2)
/// plus a product of neighbouring sums, so the gradient mixes sites.
T lattice_energy(const std::vector<T>& sites) {
  T e = tf::sum(sites[0] * sites[0]);
  for (std::size_t k = 1; k < sites.size(); ++k) {
    e = e + static_cast<double>(k + 1) * tf::sum(sites[k] * sites[k]) + tf::sum(sites[k]) * tf::sum(sites[k - 1]);
  }
  return e;
}

}  // namespace

TEST(Tree, AVectorOf25TensorsDifferentiatesInItsOwnStructure) {
  std::vector<tf::Tensor> sites;
  for (std::uint64_t k = 0; k < 25; ++k) sites.push_back(random_tensor({2, 3}, k));
  const std::vector<tf::Tensor> g = tf::grad([](const std::vector<T>& s) { return lattice_energy(s); })(sites);
  ASSERT_EQ(g.size(), 25u);
  // Closed form: d/dt_k = 2 (k + 1) t_k + sum(t_{k-1}) + sum(t_{k+1}) (k = 0 has weight 1).
  auto total = [&](std::size_t k) {
    double s = 0;
    for (std::int64_t i = 0; i < 6; ++i) s += sites[k].data<double>()[i];
    return s;
  };
  for (std::size_t k = 0; k < 25; ++k) {
    const double weight = k == 0 ? 1.0 : static_cast<double>(k + 1);
    const double neighbours = (k > 0 ? total(k - 1) : 0.0) + (k + 1 < 25 ? total(k + 1) : 0.0);
    for (std::int64_t i = 0; i < 6; ++i) {
      EXPECT_NEAR(g[k].data<double>()[i], 2 * weight * sites[k].data<double>()[i] + neighbours, 1e-12) << k;
    }
  }
}

TEST(Tree, ARegisteredStructIsAnArgumentAndAGradient) {
  Params<tf::Tensor> p;
  for (std::uint64_t k = 0; k < 3; ++k) p.layers.push_back({random_tensor({4, 4}, 10 + k), random_tensor({4}, 20 + k)});
  p.constants["temperature"] = tf::Tensor::scalar(0.7);
  p.constants["bias"] = random_tensor({4}, 30);
  p.scale = tf::Tensor::scalar(1.3);
  const tf::Tensor x = random_tensor({5, 4}, 40);
  auto loss = [](const Params<T>& q, const T& xs) {
    T h = xs;
    for (const auto& layer : q.layers) h = tf::tanh(tf::matmul(h, layer.w) + layer.b);
    return tf::sum((h + q.constants.at("bias")) * q.constants.at("temperature")) * *q.scale;
  };
  const Params<tf::Tensor> g = tf::grad(loss)(p, x);
  ASSERT_EQ(g.layers.size(), 3u);
  ASSERT_EQ(g.constants.size(), 2u);
  ASSERT_TRUE(g.scale.has_value());
  // The same loss over the 10 leaves as plain Tensor arguments (no tree code), one argnum each.
  auto flat = [](T w0, T b0, T w1, T b1, T w2, T b2, T bias, T temperature, T scale, T xs) {
    const T w[] = {w0, w1, w2}, b[] = {b0, b1, b2};
    T h = xs;
    for (int k = 0; k < 3; ++k) h = tf::tanh(tf::matmul(h, w[k]) + b[k]);
    return tf::sum((h + bias) * temperature) * scale;
  };
  const std::vector<tf::Tensor> leaves = {p.layers[0].w, p.layers[0].b, p.layers[1].w, p.layers[1].b, p.layers[2].w,
                                          p.layers[2].b, p.constants["bias"], p.constants["temperature"], *p.scale, x};
  std::vector<std::size_t> all(9);
  for (std::size_t j = 0; j < 9; ++j) all[j] = j;
  // 10 arguments: beyond the plain path's 8, so this runs through the trees too, leaf by leaf.
  auto [value, flat_grads] = tf::value_and_grad(flat, all)(leaves[0], leaves[1], leaves[2], leaves[3], leaves[4],
                                                           leaves[5], leaves[6], leaves[7], leaves[8], leaves[9]);
  ASSERT_EQ(flat_grads.size(), 9u);
  for (std::size_t k = 0; k < 3; ++k) {
    expect_near(g.layers[k].w, flat_grads[2 * k]);
    expect_near(g.layers[k].b, flat_grads[2 * k + 1]);
  }
  expect_near(g.constants.at("bias"), flat_grads[6]);
  expect_near(g.constants.at("temperature"), flat_grads[7]);
  expect_near(*g.scale, flat_grads[8]);
  // And against the plain Tensor path proper (8 arguments or fewer): the first layer's weight.
  auto first_layer = [&](T w0, T b0) {
    T h = tf::tanh(tf::matmul(tf::constant(w0, x), w0) + b0);
    return tf::sum(h);
  };
  auto tree_first_layer = [&](const Layer<T>& l) {
    T h = tf::tanh(tf::matmul(tf::constant(l.w, x), l.w) + l.b);
    return tf::sum(h);
  };
  const Layer<tf::Tensor> lg = tf::grad(tree_first_layer)(p.layers[0]);
  expect_near(lg.w, tf::grad(first_layer, 0)(p.layers[0].w, p.layers[0].b));
  expect_near(lg.b, tf::grad(first_layer, 1)(p.layers[0].w, p.layers[0].b));
}

TEST(Tree, TuplesPairsArraysAndOptionalsKeepTheirShape) {
  using Args = std::tuple<tf::Tensor, std::pair<tf::Tensor, std::array<tf::Tensor, 2>>, std::optional<tf::Tensor>>;
  const Args a{random_tensor({3}, 1), {random_tensor({3}, 2), {random_tensor({3}, 3), random_tensor({3}, 4)}}, std::nullopt};
  using TA = tf::with_leaf_t<Args, T>;
  auto f = [](const TA& t) {
    const auto& [x, pr, opt] = t;
    EXPECT_FALSE(opt.has_value());
    return tf::sum(x * pr.first * pr.second[0]) + tf::sum(pr.second[1]);
  };
  const Args g = tf::grad(f)(a);
  const auto& x = std::get<0>(a);
  const auto& y = std::get<1>(a).first;
  const auto& z = std::get<1>(a).second[0];
  for (std::int64_t i = 0; i < 3; ++i) {
    EXPECT_NEAR(std::get<0>(g).data<double>()[i], y.data<double>()[i] * z.data<double>()[i], 1e-14);
    EXPECT_NEAR(std::get<1>(g).first.data<double>()[i], x.data<double>()[i] * z.data<double>()[i], 1e-14);
    EXPECT_NEAR(std::get<1>(g).second[0].data<double>()[i], x.data<double>()[i] * y.data<double>()[i], 1e-14);
    EXPECT_EQ(std::get<1>(g).second[1].data<double>()[i], 1.0);
  }
  EXPECT_FALSE(std::get<2>(g).has_value());
}

TEST(Tree, ArgnumSelectsATreeOfAnotherType) {
  const std::vector<tf::Tensor> ws = {random_tensor({3}, 1), random_tensor({3}, 2)};
  const tf::Tensor x = random_tensor({3}, 3);
  auto f = [](const T& xs, const std::vector<T>& w) { return tf::sum(xs * w[0] * w[0]) + tf::sum(w[1] * xs); };
  const std::vector<tf::Tensor> gw = tf::grad(f, tf::argnum<1>)(x, ws);
  const tf::Tensor gx = tf::grad(f)(x, ws);  // argnum 0: a Tensor
  for (std::int64_t i = 0; i < 3; ++i) {
    const double xi = x.data<double>()[i], w0 = ws[0].data<double>()[i], w1 = ws[1].data<double>()[i];
    EXPECT_NEAR(gw[0].data<double>()[i], 2 * xi * w0, 1e-14);
    EXPECT_NEAR(gw[1].data<double>()[i], xi, 1e-14);
    EXPECT_NEAR(gx.data<double>()[i], w0 * w0 + w1, 1e-14);
  }
  // Arguments of one type: the argnum may be chosen at run time.
  auto g = [](const std::vector<T>& a, const std::vector<T>& b) { return tf::sum(a[0] * b[0]); };
  const std::vector<tf::Tensor> gb = tf::grad(g, 1)(ws, std::vector<tf::Tensor>{x});
  expect_near(gb[0], ws[0]);
  EXPECT_THROW(tf::grad(g, 2)(ws, ws), tf::BindingError);
}

TEST(Tree, HasAuxCarriesValuesThroughWithoutDifferentiatingThem) {
  const std::vector<tf::Tensor> ws = {random_tensor({4}, 5), random_tensor({4}, 6)};
  auto f = [](const std::vector<T>& w) {
    const T prediction = w[0] * w[1];
    std::map<std::string, T> aux{{"prediction", prediction}, {"norm", tf::sum(w[0] * w[0])}};
    return std::make_pair(tf::sum(prediction * prediction), aux);
  };
  auto [g, aux] = tf::grad(f, tf::has_aux)(ws);
  auto [value_aux, g2] = tf::value_and_grad(f, tf::has_aux)(ws);
  auto plain = tf::grad([](const std::vector<T>& w) { return tf::sum(w[0] * w[1] * w[0] * w[1]); })(ws);
  for (std::size_t k = 0; k < 2; ++k) {
    expect_near(g[k], plain[k]);
    expect_near(g2[k], plain[k]);
  }
  double loss = 0, norm = 0;
  for (std::int64_t i = 0; i < 4; ++i) {
    const double p = ws[0].data<double>()[i] * ws[1].data<double>()[i];
    EXPECT_NEAR(aux.at("prediction").data<double>()[i], p, 1e-15);
    loss += p * p;
    norm += ws[0].data<double>()[i] * ws[0].data<double>()[i];
  }
  EXPECT_NEAR(aux.at("norm").item<double>(), norm, 1e-14);
  EXPECT_NEAR(value_aux.first.item<double>(), loss, 1e-14);
  EXPECT_NEAR(value_aux.second.at("norm").item<double>(), norm, 1e-14);
}

TEST(Tree, StructuresAreCachedApart) {
  // The same callable on vectors of different lengths: each structure traces its own program.
  auto f = tf::grad([](const std::vector<T>& w) {
    T s = tf::sum(w[0] * w[0]);
    for (std::size_t k = 1; k < w.size(); ++k) s = s + tf::sum(w[k]) * static_cast<double>(k);
    return s;
  });
  for (std::size_t n : {1u, 3u, 2u, 3u}) {
    std::vector<tf::Tensor> w;
    for (std::size_t k = 0; k < n; ++k) w.push_back(random_tensor({2}, k));
    const std::vector<tf::Tensor> g = f(w);
    ASSERT_EQ(g.size(), n);
    expect_near(g[0], tf::Tensor::from(std::vector<double>{2 * w[0].data<double>()[0], 2 * w[0].data<double>()[1]}, {2}));
    for (std::size_t k = 1; k < n; ++k) {
      EXPECT_EQ(g[k].data<double>()[0], static_cast<double>(k));
    }
  }
}

TEST(Tree, NonFloatLeavesOfTheDifferentiatedArgumentAreRefused) {
  const std::vector<tf::Tensor> mixed = {random_tensor({2}, 1), tf::Tensor::from(std::vector<std::int64_t>{1, 2}, {2})};
  auto f = [](const std::vector<T>& w) { return tf::sum(w[0] * tf::astype(w[1], tf::DType::F64)); };
  EXPECT_THROW(tf::grad(f)(mixed), tf::DTypeError);
}

// ---- vmap over trees ------------------------------------------------------------------------------

namespace {
T layer_forward(const Layer<T>& layer, const T& x) { return tf::tanh(tf::matmul(x, layer.w) + layer.b); }
}  // namespace

// An ensemble: a struct of parameters batched on every leaf (one entry of in_axes for the whole
// argument), the data shared; each member's result is the member run alone, bit for bit.
TEST(TreeVmap, AStructOfParametersBatchedOnEveryLeafIsAnEnsemble) {
  const Layer<tf::Tensor> members{random_tensor({4, 3, 2}, 70), random_tensor({4, 2}, 71)};
  const tf::Tensor x = random_tensor({3}, 72);
  const tf::Tensor r = tf::vmap(layer_forward, {.in_axes = {0, std::nullopt}})(members, x);
  ASSERT_EQ(r.shape(), (tf::Shape{4, 2}));
  for (std::int64_t m = 0; m < 4; ++m) {
    const Layer<tf::Tensor> one{tf::test::example(members.w, 0, m), tf::test::example(members.b, 0, m)};
    const tf::Tensor e = tf::trace([](T w, T b, T v) { return layer_forward({w, b}, v); }, one.w, one.b, x).run({one.w, one.b, x})[0];
    for (std::int64_t k = 0; k < 2; ++k) EXPECT_EQ(r.data<double>()[m * 2 + k], e.data<double>()[k]);
  }
}

// Per-example gradients of a loss of structured parameters: vmap(grad) over examples returns the
// parameters' structure with a batch axis on every leaf, equal to the gradients taken one example
// at a time; inside a trace the gradient of Traced trees is recorded, so the batched gradient is
// one program.
TEST(TreeVmap, PerExampleGradientsOfAStructAreTheStructBatched) {
  const Params<tf::Tensor> p{{{random_tensor({3, 2}, 73), random_tensor({2}, 74)}, {random_tensor({2, 2}, 75), random_tensor({2}, 76)}},
                             {{"shift", random_tensor({2}, 77)}},
                             random_tensor({}, 78)};
  auto loss = [](const Params<T>& q, const T& x) {
    T h = x;
    for (const Layer<T>& layer : q.layers) h = layer_forward(layer, h);
    return tf::sum((h - q.constants.at("shift")) * (h - q.constants.at("shift"))) * *q.scale;
  };
  const tf::Tensor xs = random_tensor({5, 3}, 79);
  const Params<tf::Tensor> g = tf::vmap(tf::grad(loss), {.in_axes = {std::nullopt, 0}})(p, xs);
  ASSERT_EQ(g.layers.size(), 2u);
  ASSERT_EQ(g.layers[0].w.shape(), (tf::Shape{5, 3, 2}));
  ASSERT_EQ(g.constants.at("shift").shape(), (tf::Shape{5, 2}));
  ASSERT_EQ(g.scale->shape(), (tf::Shape{5}));
  for (std::int64_t i = 0; i < 5; ++i) {
    const Params<tf::Tensor> gi = tf::grad(loss)(p, tf::test::example(xs, 0, i));
    expect_near(tf::test::example(g.layers[0].w, 0, i), gi.layers[0].w, 1e-13);
    expect_near(tf::test::example(g.layers[1].b, 0, i), gi.layers[1].b, 1e-13);
    expect_near(tf::test::example(g.constants.at("shift"), 0, i), gi.constants.at("shift"), 1e-13);
    expect_near(tf::test::example(*g.scale, 0, i), *gi.scale, 1e-13);
  }
}

// in_axes per leaf (one entry per leaf when their count differs from the arguments'), out_axes per
// result leaf, and a result that is a tree (a map) keeps its structure.
TEST(TreeVmap, AxesPerLeafAndTreeResults) {
  const std::pair<tf::Tensor, tf::Tensor> p{random_tensor({4, 2}, 80), random_tensor({2, 4}, 81)};  // batch on axes 0 and 1
  auto f = [](const std::pair<T, T>& q) {
    return std::map<std::string, T>{{"sum", q.first + q.second}, {"outer", tf::matmul(tf::reshape(q.first, {2, 1}), tf::reshape(q.second, {1, 2}))}};
  };
  const auto r = tf::vmap(f, {.in_axes = {0, 1}, .out_axes = {1, 0}})(p);  // map order: outer, then sum
  ASSERT_EQ(r.at("outer").shape(), (tf::Shape{2, 4, 2}));
  ASSERT_EQ(r.at("sum").shape(), (tf::Shape{4, 2}));
  for (std::int64_t i = 0; i < 4; ++i) {
    const double a0 = p.first.data<double>()[i * 2], a1 = p.first.data<double>()[i * 2 + 1];
    const double b0 = p.second.data<double>()[i], b1 = p.second.data<double>()[4 + i];
    EXPECT_EQ(r.at("sum").data<double>()[i * 2], a0 + b0);
    EXPECT_EQ(r.at("sum").data<double>()[i * 2 + 1], a1 + b1);
    EXPECT_EQ(r.at("outer").data<double>()[(0 * 4 + i) * 2 + 1], a0 * b1);  // [row 0, example i, column 1]
    EXPECT_EQ(r.at("outer").data<double>()[(1 * 4 + i) * 2 + 0], a1 * b0);
  }
}

// Errors name the leaf by its path in its argument.
TEST(TreeVmap, ErrorsNameTheLeafsPath) {
  const Layer<tf::Tensor> bad{random_tensor({4, 3, 2}, 82), random_tensor({5, 2}, 83)};
  const tf::Tensor x = random_tensor({3}, 84);
  try {
    tf::vmap(layer_forward, {.in_axes = {0, std::nullopt}})(bad, x);
    ADD_FAILURE() << "mismatched batch sizes were accepted";
  } catch (const tf::ShapeError& e) {
    EXPECT_THAT(e.what(), testing::HasSubstr("argument 0.b of shape [5, 2]"));
    EXPECT_THAT(e.what(), testing::HasSubstr("argument 0.w"));
  }
  const std::vector<tf::Tensor> stack = {random_tensor({2}, 85), random_tensor({}, 86)};
  try {
    tf::vmap([](const std::vector<T>& v) { return v[0] * v[1]; })(stack);
    ADD_FAILURE() << "a scalar leaf was given a batch axis";
  } catch (const tf::ShapeError& e) {
    EXPECT_THAT(e.what(), testing::HasSubstr("argument 0[1]"));
  }
}
