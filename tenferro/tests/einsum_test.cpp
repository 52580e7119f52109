// einsum: values against a naive summation loop written here (random expressions with repeated and
// summed letters, broadcast length-1 axes, scalars, up to 8 operands), ellipsis forms against their
// spelled-out equivalents, derivatives to order 2 (check_grads), every optimizer and explicit
// paths agreeing, sliced against unsliced runs, and the parser's errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <complex>
#include <cstring>
#include <map>
#include <random>
#include <string>

#include "golden_files.hpp"
#include "tenferro/tenferro.hpp"
#include "tenferro/program.hpp"
#include "tenferro/operand_space.hpp"
#include "tidu/testing/check.hpp"

namespace tf = tenferro;
using ::testing::HasSubstr;
using T = tf::Traced;

const std::string kGolden = TENFERRO_GOLDEN_DIR;

namespace {

/// The naive meaning of an einsum without '...': the sum over every assignment of every letter of
/// the product of the operands' elements (a length-1 axis reads index 0), into the output's
/// element. Implicit output: the letters that occur once, sorted.
tf::Tensor naive_einsum(const std::string& spec, const std::vector<tf::Tensor>& xs) {
  std::vector<std::string> terms(1);
  std::string out;
  bool explicit_out = false;
  for (std::size_t i = 0; i < spec.size(); ++i) {
    const char c = spec[i];
    if (c == ',') {
      terms.emplace_back();
    } else if (c == '-') {
      explicit_out = true;
      ++i;
    } else if (explicit_out) {
      out += c;
    } else {
      terms.back() += c;
    }
  }
  std::map<char, int> count;
  std::map<char, std::int64_t> size;
  for (std::size_t k = 0; k < terms.size(); ++k) {
    for (std::size_t a = 0; a < terms[k].size(); ++a) {
      ++count[terms[k][a]];
      size[terms[k][a]] = std::max(size[terms[k][a]], xs[k].shape()[a]);
    }
  }
  if (!explicit_out) {
    for (auto [c, n] : count) {
      if (n == 1) out += c;
    }
  }
  std::vector<char> letters;
  for (auto [c, n] : size) letters.push_back(c);
  tf::Shape out_shape;
  for (char c : out) out_shape.push_back(size[c]);
  std::vector<std::complex<double>> acc(static_cast<std::size_t>(tf::numel(out_shape)));
  std::map<char, std::int64_t> value;
  for (char c : letters) value[c] = 0;
  while (true) {
    std::complex<double> term = 1;
    for (std::size_t k = 0; k < terms.size(); ++k) {
      std::int64_t flat = 0;
      for (std::size_t a = 0; a < terms[k].size(); ++a) {
        const std::int64_t n = xs[k].shape()[a];
        flat = flat * n + (n == 1 ? 0 : value[terms[k][a]]);
      }
      term *= xs[k].element(flat);
    }
    std::int64_t o = 0;
    for (char c : out) o = o * size[c] + value[c];
    acc[static_cast<std::size_t>(o)] += term;
    std::size_t i = letters.size();
    for (; i-- > 0;) {
      if (++value[letters[i]] < size[letters[i]]) break;
      value[letters[i]] = 0;
    }
    if (i == static_cast<std::size_t>(-1)) break;
  }
  return tf::Tensor::from(acc, out_shape);
}

tf::Tensor random_tensor(std::mt19937_64& rng, tf::Shape shape, tf::DType dtype) {
  std::normal_distribution<double> n(0, 1);
  const auto count = static_cast<std::size_t>(tf::numel(shape));
  if (tf::is_complex(dtype)) {
    std::vector<tf::c128> v(count);
    for (auto& x : v) x = {n(rng), n(rng)};
    return tf::Tensor::from(v, std::move(shape));
  }
  std::vector<double> v(count);
  for (auto& x : v) x = n(rng);
  return tf::Tensor::from(v, std::move(shape));
}

/// x converted to c128, for comparison with the reference.
tf::Tensor as_c128(const tf::Tensor& x) {
  std::vector<tf::c128> v(static_cast<std::size_t>(x.numel()));
  for (std::int64_t i = 0; i < x.numel(); ++i) v[static_cast<std::size_t>(i)] = x.element(i);
  return tf::Tensor::from(v, x.shape());
}

/// A random einsum: 1-8 operands over up to 7 letters of lengths 1-3, letters repeated within an
/// operand now and then, some axes of length 1 broadcasting against longer ones, scalars, and an
/// explicit output (a random subset of the letters) or an implicit one.
struct RandomCase {
  std::string spec;
  std::vector<tf::Shape> shapes;
};

RandomCase random_case(std::mt19937_64& rng) {
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<std::uint64_t>(n)); };
  const int letters = 1 + pick(7);
  std::vector<std::int64_t> size(static_cast<std::size_t>(letters));
  for (auto& s : size) s = 1 + pick(3);
  const int operands = 1 + pick(8);
  RandomCase c;
  std::vector<bool> used(static_cast<std::size_t>(letters), false);
  for (int k = 0; k < operands; ++k) {
    if (k) c.spec += ',';
    const int rank = pick(5);
    tf::Shape shape;
    std::string term;
    for (int a = 0; a < rank; ++a) {
      const int l = pick(letters);
      const char letter = static_cast<char>('a' + l);
      used[static_cast<std::size_t>(l)] = true;
      // A length-1 axis now and then (broadcasting), unless the letter repeats in this operand.
      const bool repeated = term.find(letter) != std::string::npos;
      term += letter;
      shape.push_back(!repeated && pick(6) == 0 ? 1 : size[static_cast<std::size_t>(l)]);
    }
    // A letter repeated after a length-1 axis of it would be a 1 x n diagonal: keep them equal.
    for (std::size_t a = 0; a < term.size(); ++a) {
      if (term.find(term[a]) != a || term.find(term[a], a + 1) != std::string::npos) {
        shape[a] = size[static_cast<std::size_t>(term[a] - 'a')];
      }
    }
    c.spec += term;
    c.shapes.push_back(shape);
  }
  if (pick(3) != 0) {
    c.spec += "->";
    for (int l = 0; l < letters; ++l) {
      if (used[static_cast<std::size_t>(l)] && pick(2) == 0) c.spec += static_cast<char>('a' + l);
    }
  }
  return c;
}

void expect_matches_reference(const std::string& spec, const std::vector<tf::Tensor>& xs, double tol) {
  SCOPED_TRACE(spec);
  const tf::Tensor got = tf::einsum(spec, std::span<const tf::Tensor>(xs));
  const tf::Tensor want = naive_einsum(spec, xs);
  ASSERT_EQ(got.shape(), want.shape());
  EXPECT_TRUE(tf::allclose(as_c128(got), want, tol, tol)) << got << "\nexpected " << want;
}

}  // namespace

TEST(Einsum, RandomExpressionsMatchTheNaiveSum) {
  std::mt19937_64 rng(2024);
  for (int trial = 0; trial < 300; ++trial) {
    const RandomCase c = random_case(rng);
    const tf::DType dtype = trial % 3 == 2 ? tf::DType::C128 : tf::DType::F64;
    std::vector<tf::Tensor> xs;
    for (const auto& s : c.shapes) xs.push_back(random_tensor(rng, s, dtype));
    expect_matches_reference(c.spec, xs, 1e-12);
  }
}

// Random expressions with '...': up to two ellipsis axes (some of length 1 in some operands,
// broadcasting), placed anywhere in a term, against the same expression spelled out with letters
// X, Y for the ellipsis axes (right-aligned); the output keeps them ('...' in an explicit output),
// sums them (an explicit output without '...') or puts them first (implicit output).
TEST(Einsum, RandomEllipsisExpressionsMatchTheirSpelledOutForm) {
  std::mt19937_64 rng(4048);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<std::uint64_t>(n)); };
  for (int trial = 0; trial < 150; ++trial) {
    const int letters = 1 + pick(5);
    std::vector<std::int64_t> size(static_cast<std::size_t>(letters));
    for (auto& n : size) n = 1 + pick(3);
    const int e_rank = 1 + pick(2);
    const std::string e_names = std::string("XY").substr(static_cast<std::size_t>(2 - e_rank));
    std::vector<std::int64_t> e_size(static_cast<std::size_t>(e_rank));
    for (auto& n : e_size) n = 1 + pick(3);
    std::string spec, spelled;
    std::vector<tf::Shape> shapes;
    std::map<char, int> count;
    std::size_t common = 0;  // the ellipsis rank across operands
    const int operands = 1 + pick(4);
    for (int k = 0; k < operands; ++k) {
      if (k) {
        spec += ',';
        spelled += ',';
      }
      std::string term;
      for (int a = pick(4); a > 0; --a) term += static_cast<char>('a' + pick(letters));
      for (char c : term) ++count[c];
      const bool has_ellipsis = pick(2) == 0;
      const std::size_t at = static_cast<std::size_t>(pick(static_cast<int>(term.size()) + 1));
      const std::size_t mine = has_ellipsis ? static_cast<std::size_t>(pick(e_rank + 1)) : 0;
      common = std::max(common, mine);
      const std::string e_part = e_names.substr(e_names.size() - mine);
      spec += has_ellipsis ? term.substr(0, at) + "..." + term.substr(at) : term;
      const std::string full = has_ellipsis ? term.substr(0, at) + e_part + term.substr(at) : term;
      spelled += full;
      tf::Shape shape;
      for (char c : full) {
        if (c == 'X' || c == 'Y') {
          const std::int64_t n = e_size[static_cast<std::size_t>(static_cast<int>(e_names.find(c)))];
          shape.push_back(pick(4) == 0 ? 1 : n);
        } else {
          shape.push_back(size[static_cast<std::size_t>(c - 'a')]);
        }
      }
      shapes.push_back(shape);
    }
    const std::string e_out = e_names.substr(e_names.size() - common);
    const int mode = pick(3);
    std::string letters_out;
    for (auto [c, n] : count) {
      if (mode == 2 ? n == 1 : pick(2) == 0) letters_out += c;
    }
    if (mode == 0) {  // explicit, with '...' somewhere
      const std::size_t at = static_cast<std::size_t>(pick(static_cast<int>(letters_out.size()) + 1));
      spec += "->" + letters_out.substr(0, at) + "..." + letters_out.substr(at);
      spelled += "->" + letters_out.substr(0, at) + e_out + letters_out.substr(at);
    } else if (mode == 1) {  // explicit without '...': the ellipsis axes are summed
      spec += "->" + letters_out;
      spelled += "->" + letters_out;
    } else {  // implicit: ellipsis axes, then the letters that occur once
      spelled += "->" + e_out + letters_out;
    }
    SCOPED_TRACE(spec + "  ~  " + spelled);
    std::vector<tf::Tensor> xs;
    for (const auto& shape : shapes) xs.push_back(random_tensor(rng, shape, tf::DType::F64));
    const tf::Tensor got = tf::einsum(spec, std::span<const tf::Tensor>(xs));
    const tf::Tensor want = naive_einsum(spelled, xs);
    ASSERT_EQ(got.shape(), want.shape());
    EXPECT_TRUE(tf::allclose(as_c128(got), want, 1e-12, 1e-12)) << got << "\nexpected " << want;
  }
}

TEST(Einsum, NamedFormsMatchTheNaiveSum) {
  std::mt19937_64 rng(7);
  auto r = [&](tf::Shape s) { return random_tensor(rng, std::move(s), tf::DType::F64); };
  expect_matches_reference("ij,jk->ik", {r({3, 4}), r({4, 5})}, 1e-12);  // matmul
  expect_matches_reference("ij,jk", {r({3, 4}), r({4, 5})}, 1e-12);      // implicit
  expect_matches_reference("ii->", {r({4, 4})}, 1e-12);                  // trace
  expect_matches_reference("ii->i", {r({4, 4})}, 1e-12);                 // diagonal
  expect_matches_reference("iij->ji", {r({3, 3, 2})}, 1e-12);
  expect_matches_reference("ij->ji", {r({3, 4})}, 1e-12);
  expect_matches_reference("i,j->ij", {r({3}), r({4})}, 1e-12);          // outer product
  expect_matches_reference(",->", {r({}), r({})}, 1e-12);                // scalars
  expect_matches_reference("i,->i", {r({3}), r({})}, 1e-12);
  expect_matches_reference("ij,ij->ij", {r({3, 4}), r({3, 4})}, 1e-12);  // Hadamard
  expect_matches_reference("bij,bjk->bik", {r({2, 3, 4}), r({2, 4, 5})}, 1e-12);
  expect_matches_reference("ij,ik,il->i", {r({3, 2}), r({3, 4}), r({3, 2})}, 1e-12);  // hyperedge
  expect_matches_reference("ij,jk,kl,lm->im", {r({2, 3}), r({3, 4}), r({4, 5}), r({5, 2})}, 1e-12);
  expect_matches_reference("ij,j->i", {r({3, 1}), r({4})}, 1e-12);       // length-1 broadcast
  expect_matches_reference("abc,bcd,de->ae", {r({3, 4, 2}), r({4, 2, 3}), r({3, 5})}, 1e-12);
}

TEST(Einsum, EllipsisEqualsItsSpelledOutForm) {
  std::mt19937_64 rng(8);
  auto r = [&](tf::Shape s) { return random_tensor(rng, std::move(s), tf::DType::F64); };
  const tf::Tensor a = r({2, 3, 4, 5}), b = r({3, 5, 6}), c = r({1, 5, 6});
  // Right-aligned ellipsis axes: a's (2, 3) against b's (3).
  EXPECT_TRUE(tf::allclose(as_c128(tf::einsum("...ij,...jk->...ik", {a, b})), naive_einsum("xyij,yjk->xyik", {a, b})));
  // Implicit output: ellipsis axes first.
  EXPECT_TRUE(tf::allclose(as_c128(tf::einsum("...ij,...jk", {a, b})), naive_einsum("xyij,yjk->xyik", {a, b})));
  // A length-1 ellipsis axis broadcasts.
  EXPECT_TRUE(tf::allclose(as_c128(tf::einsum("...ij,...jk->...ik", {a, c})), naive_einsum("xyij,yjk->xyik", {a, c})));
  // An explicit output without '...' sums the ellipsis axes.
  EXPECT_TRUE(tf::allclose(as_c128(tf::einsum("...ij->j", {a})), naive_einsum("xyij->j", {a})));
  EXPECT_TRUE(tf::allclose(as_c128(tf::einsum("i...->...i", {a})), naive_einsum("ixyz->xyzi", {a})));
  EXPECT_TRUE(tf::allclose(as_c128(tf::einsum("...->", {a})), naive_einsum("wxyz->", {a}).reshaped({})));
}

TEST(Einsum, EveryOptimizerAndExplicitPathsGiveTheSameValues) {
  std::mt19937_64 rng(9);
  const std::string spec = "ab,bc,cd,de,ea,ac->be";
  const std::vector<tf::Shape> shapes = {{3, 4}, {4, 2}, {2, 5}, {5, 3}, {3, 3}, {3, 2}};
  std::vector<tf::Tensor> xs;
  for (const auto& s : shapes) xs.push_back(random_tensor(rng, s, tf::DType::C128));
  const tf::Tensor want = naive_einsum(spec, xs);
  using O = tf::tn::Optimizer;
  for (O o : {O::Auto, O::Optimal, O::DP, O::Greedy, O::RandomGreedy, O::TreeSA, O::LeftToRight}) {
    tf::tn::Options options;
    options.path.optimizer = o;
    SCOPED_TRACE(static_cast<int>(o));
    EXPECT_TRUE(tf::allclose(tf::einsum(spec, std::span<const tf::Tensor>(xs), options), want));
  }
  tf::tn::Options manual;
  manual.explicit_path = {{5, 4}, {3, 6}, {0, 7}, {1, 2}, {8, 9}};
  EXPECT_TRUE(tf::allclose(tf::einsum(spec, std::span<const tf::Tensor>(xs), manual), want));
}

TEST(Einsum, SlicedRunsEqualTheUnslicedOne) {
  std::mt19937_64 rng(10);
  // A ring of 6 tensors with bond 4: intermediates of 4^4 elements unsliced.
  const std::string spec = "abx,bcy,cdz,dew,efv,fau->xyzwvu";
  std::vector<tf::Tensor> xs;
  for (int k = 0; k < 6; ++k) xs.push_back(random_tensor(rng, {4, 4, 2}, tf::DType::F64));
  const tf::Tensor whole = tf::einsum(spec, std::span<const tf::Tensor>(xs));
  for (double limit : {256.0, 128.0, 64.0}) {
    tf::tn::Options options;
    options.path.memory_limit = limit;
    const auto path = tf::einsum_path(spec, {xs[0].shape(), xs[1].shape(), xs[2].shape(), xs[3].shape(),
                                             xs[4].shape(), xs[5].shape()}, options);
    EXPECT_LE(path.log2_size, std::log2(limit) + 1e-9);
    const tf::Tensor sliced = tf::einsum(spec, std::span<const tf::Tensor>(xs), options);
    EXPECT_TRUE(tf::allclose(sliced, whole, 1e-12, 1e-12)) << "limit " << limit;
  }
  // Summed and output letters sliced alike in a matrix chain.
  const tf::Tensor a = random_tensor(rng, {6, 8}, tf::DType::C128), b = random_tensor(rng, {8, 7}, tf::DType::C128);
  tf::tn::Options tight;
  tight.path.memory_limit = 56.0;
  EXPECT_TRUE(tf::allclose(tf::einsum("ij,jk->ik", {a, b}, tight), naive_einsum("ij,jk->ik", {a, b}), 1e-12, 1e-12));
}

// SlicedEinsum, the pieces a distributed contraction runs: all slices at once are einsum's result
// bit for bit; ranges combined in order equal it to rounding, and exactly under max-plus (max is
// associative); bad ranges and types are refused.
TEST(Einsum, SlicedEinsumRangesCombineToTheWhole) {
  std::mt19937_64 rng(12);
  const std::string spec = "abx,bcy,cdz,dea->xyz";
  std::vector<tf::Tensor> xs;
  for (int k = 0; k < 4; ++k) xs.push_back(random_tensor(rng, {4, 4, 3}, tf::DType::F64));
  xs[3] = random_tensor(rng, {4, 4, 4}, tf::DType::F64);
  for (const tf::Semiring semiring : {tf::Semiring::Standard, tf::Semiring::MaxPlus}) {
    tf::tn::Options options;
    options.path.memory_limit = 64.0;  // the largest input holds 64 elements; the intermediates more
    options.semiring = semiring;
    const tf::tn::SlicedEinsum sliced(spec, xs, options);
    ASSERT_GT(sliced.slices(), 3);
    const tf::Tensor whole = tf::einsum(spec, std::span<const tf::Tensor>(xs), options);
    const tf::Tensor all = sliced.run(0, sliced.slices());
    ASSERT_EQ(all.type(), whole.type());
    EXPECT_EQ(std::memcmp(all.raw_data(), whole.raw_data(), whole.nbytes()), 0);
    // Three ranges, combined in order.
    const std::int64_t n = sliced.slices(), cut1 = n / 3, cut2 = 2 * n / 3;
    tf::Tensor parts = sliced.run(0, cut1);
    sliced.combine(parts, sliced.run(cut1, cut2));
    sliced.combine(parts, sliced.run(cut2, n));
    if (semiring == tf::Semiring::Standard) {
      tf::tn::Options plain;
      EXPECT_TRUE(tf::allclose(parts, tf::einsum(spec, std::span<const tf::Tensor>(xs), plain), 1e-12, 1e-12));
      EXPECT_TRUE(tf::allclose(parts, whole, 1e-12, 1e-12));
    } else {
      EXPECT_EQ(std::memcmp(parts.raw_data(), whole.raw_data(), whole.nbytes()), 0);
    }
    EXPECT_THROW(sliced.run(1, n + 1), tf::ValueError);
    if (semiring == tf::Semiring::Standard) {
      // The ranges' vjps add up to the whole einsum's (tf::vjp of the unsliced contraction).
      std::mt19937_64 crng(3);
      const tf::Tensor cot = random_tensor(crng, whole.shape(), tf::DType::F64);
      auto f = [&spec](const tf::Traced& a, const tf::Traced& b, const tf::Traced& c, const tf::Traced& d) {
        return tf::einsum(spec, {a, b, c, d});
      };
      const tf::Tensors want = tf::vjp(f, xs, cot).second;
      tf::Tensors got = sliced.vjp(0, cut1, cot);
      for (const auto& [b, e] : {std::pair{cut1, cut2}, std::pair{cut2, n}}) {
        const tf::Tensors more = sliced.vjp(b, e, cot);
        for (std::size_t k = 0; k < got.size(); ++k) {
          for (std::int64_t i = 0; i < got[k].numel(); ++i) {
            got[k].data<double>()[i] += more[k].data<double>()[i];
          }
        }
      }
      ASSERT_EQ(got.size(), want.size());
      for (std::size_t k = 0; k < got.size(); ++k) EXPECT_TRUE(tf::allclose(got[k], want[k], 1e-12, 1e-12)) << "operand " << k;
    } else {
      EXPECT_THROW(sliced.vjp(0, 1, all), tf::ADRuleError);
    }
    tf::Tensor wrong = tf::Tensor::zeros({2});
    EXPECT_THROW(sliced.combine(wrong, all), tf::ShapeError);
  }
}

TEST(Einsum, DerivativesPassCheckGradsToOrderTwo) {
  struct Case {
    const char* spec;
    std::vector<tf::Shape> shapes;
  };
  const Case cases[] = {
      {"ii->i", {{3, 3}}},
      {"ij->", {{2, 3}}},
      {"ij,jk->ik", {{2, 3}, {3, 2}}},
      {"bij,bjk->bik", {{2, 2, 3}, {2, 3, 2}}},
      {"ij,j->i", {{3, 1}, {2}}},
      {"ij,jk,ki->", {{2, 3}, {3, 2}, {2, 2}}},
      {"ab,bc,cd,da->", {{2, 3}, {3, 2}, {2, 2}, {2, 2}}},
      {"ab,ac,ad,a->bcd", {{2, 2}, {2, 2}, {2, 1}, {2}}},
  };
  std::mt19937_64 rng(12);
  for (tf::DType dtype : {tf::DType::F64, tf::DType::C128}) {
    for (const Case& c : cases) {
      SCOPED_TRACE(std::string(c.spec) + " " + tf::dtype_name(dtype));
      std::vector<tf::Tensor> args;
      for (const auto& s : c.shapes) args.push_back(random_tensor(rng, s, dtype));
      const std::string spec = c.spec;
      auto f = [spec](const std::vector<T>& xs) { return std::vector<T>{tf::einsum(spec, std::span<const T>(xs))}; };
      auto graph = tf::detail::trace_function(f, tf::detail::types_of(args));
      auto result = tidu::testkit::check_grads(tidu::testkit::function_of(graph), std::span<const tf::Tensor>(args), 2);
      EXPECT_TRUE(result.ok) << result.message;
      EXPECT_EQ(result.checks.size(), 6u);
    }
  }
}

// A zero-length axis follows NumPy: a sum over it is 0, a free axis of length 0 gives an empty
// result, and derivatives are zeros of the operands' shapes (einsum once threw "label has size 0").
TEST(Einsum, ZeroLengthAxesGiveNumPysResults) {
  const tf::Tensor a = tf::Tensor::zeros({2, 0}), b = tf::Tensor::zeros({0, 3});
  const tf::Tensor prod = tf::einsum("ij,jk->ik", {a, b});
  ASSERT_EQ(prod.shape(), (tf::Shape{2, 3}));
  for (std::int64_t i = 0; i < prod.numel(); ++i) EXPECT_EQ(prod.element(i), tf::c128(0.0));
  EXPECT_EQ(tf::einsum("ij->", {a}).item<double>(), 0.0);
  EXPECT_EQ(tf::einsum("ij->j", {a}).shape(), (tf::Shape{0}));
  EXPECT_EQ(tf::einsum("ij,jk->ki", {b, tf::Tensor::zeros({3, 4})}).shape(), (tf::Shape{4, 0}));
  const tf::Tensor c = tf::Tensor::from({1.0, 2.0});
  const tf::Tensor three = tf::einsum("ij,jk,k->i", {a, b, tf::Tensor::from({1.0, 2.0, 3.0})});
  ASSERT_EQ(three.shape(), (tf::Shape{2}));
  EXPECT_EQ(three.at<double>({0}), 0.0);
  EXPECT_EQ(tf::einsum("i,ij->j", {c, a}).shape(), (tf::Shape{0}));
  EXPECT_EQ(tf::einsum_path("ij,jk->ik", {a.shape(), b.shape()}).steps.size(), 1u);

  // Traced, with gradients: d/da sum(a b) = ones b^T, of a's shape [2, 0]; likewise for b.
  auto f = [](T x, T y) { return tf::sum(tf::einsum("ij,jk->ik", x, y)); };
  const tf::Tensor ga = tf::grad(f)(a, b);
  EXPECT_EQ(ga.shape(), (tf::Shape{2, 0}));
  const tf::Tensor gb = tf::grad(f, 1)(a, b);
  EXPECT_EQ(gb.shape(), (tf::Shape{0, 3}));
  EXPECT_EQ(tf::value_and_grad(f)(a, b).first.item<double>(), 0.0);
  // A non-empty operand beside empty ones: e = einsum(x, y, w) is zeros [3], so d/dw sum(e * w) =
  // e + (de/dw) w = 0.
  auto g = [](T x, T y, T w) { return tf::sum(tf::einsum("ij,jk,k->k", x, y, w) * w); };
  const tf::Tensor gw = tf::grad(g, 2)(a, b, tf::Tensor::from({1.0, 2.0, 3.0}));
  ASSERT_EQ(gw.shape(), (tf::Shape{3}));
  for (std::int64_t i = 0; i < 3; ++i) EXPECT_EQ(gw.element(i), tf::c128(0.0));
}

TEST(Einsum, MatmulLowersToOneDotGeneralWithoutTransposes) {
  const tf::Tensor a = tf::Tensor::zeros({3, 4}), b = tf::Tensor::zeros({4, 5});
  const std::string ir = tf::trace([](T x, T y) { return tf::einsum("ij,jk->ik", x, y); }, a, b).print();
  EXPECT_THAT(ir, HasSubstr("dot_general"));
  EXPECT_THAT(ir, ::testing::Not(HasSubstr("transpose")));
  // "ki": the operands swap sides (y^T x^T = (x y)^T), still without a transpose.
  const std::string ir2 = tf::trace([](T x, T y) { return tf::einsum("ij,jk->ki", x, y); }, a, b).print();
  EXPECT_THAT(ir2, ::testing::Not(HasSubstr("transpose")));
  // Batch axes come first in a dot_general's result: "bij,bjk->ikb" needs one transpose.
  const tf::Tensor c = tf::Tensor::zeros({2, 3, 4}), d = tf::Tensor::zeros({2, 4, 5});
  const std::string ir3 = tf::trace([](T x, T y) { return tf::einsum("bij,bjk->ikb", x, y); }, c, d).print();
  EXPECT_THAT(ir3, HasSubstr("transpose"));
}

TEST(Einsum, PathPrintsItsStepsAndCosts) {
  const auto path = tf::einsum_path("ij,jk,kl->il", {{512, 512}, {512, 512}, {512, 8}});
  // The cheap order contracts the last pair first: 512*512*8 + 512*512*8 multiply-adds.
  EXPECT_NEAR(path.log2_flops, std::log2(2.0 * 512 * 512 * 8), 1e-9);
  EXPECT_THAT(path.print(), HasSubstr("log2 flops"));
}

TEST(Einsum, BadSubscriptsThrowErrorsNamingThePosition) {
  const tf::Tensor m = tf::Tensor::zeros({2, 3}), v = tf::Tensor::zeros({4});
  auto expect_error = [](auto f, std::vector<std::string> parts) {
    try {
      f();
      ADD_FAILURE() << "no error";
    } catch (const tf::Error& e) {
      for (const auto& p : parts) EXPECT_THAT(e.what(), HasSubstr(p));
    }
  };
  expect_error([&] { tf::einsum("ij,j#->i", {m, v}); }, {"invalid character '#'", "position 4"});
  expect_error([&] { tf::einsum("ij->i->j", {m}); }, {"second '->'", "position 5"});
  expect_error([&] { tf::einsum("i.j->i", {m}); }, {"'.'", "position 1"});
  expect_error([&] { tf::einsum("ij-i", {m}); }, {"'-' not followed by '>'"});
  expect_error([&] { tf::einsum("ij,jk->ik", {m}); }, {"name 2 operand(s); 1 given"});
  expect_error([&] { tf::einsum("ijk->i", {m}); }, {"operand 0", "[2, 3]", "name 3 axes"});
  expect_error([&] { tf::einsum("ij,j->i", {m, v}); }, {"index 'j'", "length 3 in operand 0 (axis 1)", "4 in operand 1 (axis 0)"});
  expect_error([&] { tf::einsum("ij->iz", {m}); }, {"output index 'z'", "appears in no input", "position 5"});
  expect_error([&] { tf::einsum("ij->ii", {m}); }, {"output index 'i' repeated"});
  expect_error([&] { tf::einsum("ij,j->i", {m, tf::Tensor::zeros({3}, tf::DType::F32)}); }, {"dtypes", "f32"});
  tf::tn::Options tiny;
  tiny.path.memory_limit = 2.0;
  expect_error([&] { tf::einsum("ij,jk->ik", {m, tf::Tensor::zeros({3, 2})}, tiny); }, {"limit"});
  tf::tn::Options bad_path;
  bad_path.explicit_path = {{0, 0}};
  expect_error([&] { tf::einsum("ij,jk->ik", {m, tf::Tensor::zeros({3, 2})}, bad_path); }, {"explicit path"});
}

// The lowering as printed IR: a diagonal (extract_diag), a letter of one operand (reduce_sum), one
// dot_general per path step with shared letters as batch or contracting axes, and one transpose
// at the end; in max-plus the same shape with semiring_dot_general and reduce_max. Read by hand.
TEST(EinsumGolden, LoweringPrintsAsExpected) {
  const tf::Tensor a = tf::Tensor::zeros({3, 3, 4}), b = tf::Tensor::zeros({4, 5}), c = tf::Tensor::zeros({5, 2}),
                   d = tf::Tensor::zeros({6});
  const std::string spec = "iij,jk,kl,m->li";
  auto f = [spec](T x, T y, T z, T w) { return tf::einsum(spec, {x, y, z, w}); };
  EXPECT_TRUE(golden::matches(kGolden, "einsum_lowering.txt", tf::trace(f, a, b, c, d).print()));
  auto g = [spec](T x, T y, T z, T w) {
    tf::tn::Options options;
    options.semiring = tf::Semiring::MaxPlus;
    return tf::einsum(spec, {x, y, z, w}, options);
  };
  EXPECT_TRUE(golden::matches(kGolden, "einsum_lowering_max_plus.txt", tf::trace(g, a, b, c, d).print()));
}
