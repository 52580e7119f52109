// The fast scalar path (src/exec/scalar_program.hpp): lowered programs must give results bitwise
// identical to CompiledProgram::run (StdTensorOp::eval) for every supported op and dtype, edge
// values included, for random rank-0 programs and for gradient and Hessian programs; lower() must
// refuse what it does not support, and run() must reject bad inputs with typed errors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "computegraph/computegraph.hpp"
#include "exec/scalar_program.hpp"
#include "golden_files.hpp"
#include "op_test_util.hpp"
#include "tenferro/ops/make.hpp"
#include "tenferro/transforms.hpp"
#include "tenferro/ops/record.hpp"
#include "tenferro/program.hpp"
#include "tenferro/custom_op.hpp"
#include "tidu/tidu.hpp"

namespace tenferro {
namespace {

using exec::ScalarProgram;
using test::GraphMaker;
using Program = computegraph::CompiledProgram<StdTensorOp>;
using Fn = computegraph::GraphPtr<StdTensorOp>;
using Value = computegraph::ValueRef<StdTensorOp>;
using Keys = std::vector<TensorValueKey>;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
const TensorType kF64{DType::F64, {}};
const TensorType kF32{DType::F32, {}};
const TensorType kI64{DType::I64, {}};
const TensorType kBool{DType::Bool, {}};

Keys input_keys(const Fn& g) {
  Keys keys;
  for (auto id : g->inputs()) keys.push_back(g->key(id));
  return keys;
}

Program compile_keys(std::initializer_list<Fn> roots, const Keys& outputs, const Keys& leading) {
  return computegraph::compile(computegraph::materialize_merge(computegraph::resolve(roots), std::span<const TensorValueKey>(outputs),
                                                               std::span<const TensorValueKey>(leading)));
}
Program compile_graph(const Fn& g) { return compile_keys({g}, g->output_keys(), input_keys(g)); }

/// Same type and the same bytes (NaN payloads and signed zeros included).
bool same_bits(const Tensor& a, const Tensor& b) {
  return a.type() == b.type() && std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0;
}

std::string describe(const std::vector<Tensor>& ts) {
  std::string s;
  for (const auto& t : ts) s += (s.empty() ? "" : ", ") + to_string(t);
  return s;
}

bool is_nan(const Tensor& t) {
  return (t.dtype() == DType::F64 && std::isnan(t.item<double>())) ||
         (t.dtype() == DType::F32 && std::isnan(t.item<float>()));
}

/// Runs both paths on `inputs` and expects bitwise equal outputs. `any_nan`: a NaN result need
/// only be NaN on both paths (see check_op).
void expect_same(const Program& program, const ScalarProgram& scalar, const std::vector<Tensor>& inputs,
                 bool any_nan = false) {
  const auto want = program.run(inputs);
  const auto got = scalar.run(inputs);
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (any_nan && is_nan(want[i]) && is_nan(got[i]) && got[i].type() == want[i].type()) continue;
    EXPECT_TRUE(same_bits(got[i], want[i]))
        << "output " << i << ": scalar path " << to_string(got[i]) << ", tensor path " << to_string(want[i])
        << "\ninputs: " << describe(inputs) << "\n" << scalar.print();
  }
}

ScalarProgram lowered(const Program& program) {
  auto p = ScalarProgram::lower(program);
  if (!p) throw Error("ScalarProgram::lower refused a rank-0 program");
  return std::move(*p);
}

Tensor scalar_of(TensorType t, double v) { return Tensor::scalar(v, t.dtype); }
Tensor int_scalar(std::int64_t v) { return Tensor::from(std::vector<std::int64_t>{v}, {}); }
Tensor bool_scalar(bool v) { return Tensor::from(std::vector<bool>{v}, {}); }

const std::vector<double> kFloatEdges = {0.0,  -0.0, 1.0,    -1.0,   0.5,    -2.5,   3.0,  0.75,
                                         1e-310, 1e300, -1e300, kInf, -kInf, kNaN, -kNaN, 100.0};
const std::vector<std::int64_t> kIntEdges = {0, 1, -1, 7, -3, std::numeric_limits<std::int64_t>::min(),
                                             std::numeric_limits<std::int64_t>::max()};

std::vector<Tensor> values_of(const TensorType& t) {
  std::vector<Tensor> v;
  if (t.dtype == DType::I64) {
    for (auto x : kIntEdges) v.push_back(int_scalar(x));
  } else if (t.dtype == DType::Bool) {
    v = {bool_scalar(false), bool_scalar(true)};
  } else {
    for (double x : kFloatEdges) v.push_back(scalar_of(t, x));
  }
  return v;
}

/// Checks one op on every combination of edge values of its operand types.
void check_op(const StdTensorOp& op, const std::vector<TensorType>& operand_types) {
  SCOPED_TRACE(op.name() + " on " + (operand_types.empty() ? "" : operand_types[0].to_string()));
  GraphMaker m;
  std::vector<Value> in;
  for (const auto& t : operand_types) in.push_back(m.input(t));
  const Program program = compile_graph(m.finish({m.apply(op, in)}));
  const ScalarProgram scalar = lowered(program);
  std::vector<std::vector<Tensor>> domains;
  for (const auto& t : operand_types) domains.push_back(values_of(t));
  std::vector<std::size_t> idx(domains.size(), 0);
  while (true) {
    std::vector<Tensor> args;
    for (std::size_t k = 0; k < domains.size(); ++k) args.push_back(domains[k][idx[k]]);
    // A sum or product of two NaNs: x86 returns the first source operand's NaN, and which operand
    // the compiler puts first is not part of the kernel's formula (the add kernel itself returns
    // x's NaN at -O3 and y's at -O1), so only NaN-ness is required there.
    const bool commutative = op.kind == OpKind::Add || op.kind == OpKind::Mul || op.kind == OpKind::DotGeneral;
    const bool two_nans = args.size() == 2 && is_nan(args[0]) && is_nan(args[1]);
    expect_same(program, scalar, args, commutative && two_nans);
    std::size_t k = 0;
    while (k < idx.size() && ++idx[k] == domains[k].size()) idx[k++] = 0;
    if (k == idx.size()) break;
  }
}

TEST(ScalarProgram, FloatOpsMatchKernelsBitwise) {
  for (const TensorType& t : {kF64, kF32}) {
    for (OpKind k : {OpKind::Neg, OpKind::Conj, OpKind::Real, OpKind::Imag, OpKind::Abs, OpKind::Sign,
                     OpKind::Exp, OpKind::Log, OpKind::Sin, OpKind::Cos, OpKind::Tanh, OpKind::Sqrt,
                     OpKind::Rsqrt, OpKind::Expm1, OpKind::Log1p}) {
      check_op(ops::unary(k, t), {t});
    }
    check_op(ops::add(t, t), {t, t});
    check_op(ops::mul(t, t), {t, t});
    check_op(ops::div(t, t), {t, t});
    check_op(ops::pow(t, t), {t, t});
    check_op(ops::maximum(t, t), {t, t});
    check_op(ops::minimum(t, t), {t, t});
    check_op(ops::dot_general(t, t, {}), {t, t});
    for (auto dir : {CompareDir::Eq, CompareDir::Ne, CompareDir::Lt, CompareDir::Le, CompareDir::Gt, CompareDir::Ge})
      check_op(ops::compare(dir, t, t), {t, t});
    check_op(ops::clamp(t, t, t), {t, t, t});
    check_op(ops::select(kBool, t, t), {kBool, t, t});
  }
}

TEST(ScalarProgram, IntegerAndBoolOpsMatchKernelsBitwise) {
  const TensorType t = kI64;
  for (OpKind k : {OpKind::Neg, OpKind::Conj, OpKind::Real, OpKind::Imag, OpKind::Abs, OpKind::Sign})
    check_op(ops::unary(k, t), {t});
  check_op(ops::add(t, t), {t, t});
  check_op(ops::mul(t, t), {t, t});
  check_op(ops::maximum(t, t), {t, t});
  check_op(ops::minimum(t, t), {t, t});
  check_op(ops::clamp(t, t, t), {t, t, t});
  check_op(ops::select(kBool, t, t), {kBool, t, t});
  check_op(ops::select(kBool, kBool, kBool), {kBool, kBool, kBool});
  check_op(ops::unary(OpKind::Conj, kBool), {kBool});
  for (auto dir : {CompareDir::Eq, CompareDir::Ne, CompareDir::Lt, CompareDir::Le, CompareDir::Gt, CompareDir::Ge}) {
    check_op(ops::compare(dir, t, t), {t, t});
    check_op(ops::compare(dir, kBool, kBool), {kBool, kBool});
  }
}

TEST(ScalarProgram, ConvertsMatchKernelsBitwise) {
  for (const TensorType& from : {kF64, kF32, kI64, kBool}) {
    for (const TensorType& to : {kF64, kF32, kI64, kBool}) check_op(ops::convert(from, to.dtype), {from});
  }
  // Saturation and truncation of float -> i64 beyond the edge values.
  GraphMaker m;
  Value x = m.input(kF64);
  const Program program = compile_graph(m.finish({m.apply(ops::convert(kF64, DType::I64), {x})}));
  const ScalarProgram scalar = lowered(program);
  for (double v : {9.3e18, -9.3e18, 9.2e18, -2.7, 2.7, 0x1p63, -0x1p63})
    expect_same(program, scalar, {Tensor::scalar(v)});
}

TEST(ScalarProgram, StructuralOpsAndRank0ReductionsAreAliases) {
  for (const TensorType& t : {kF64, kF32, kI64}) {
    for (StdTensorOp op : {ops::reshape(t, {}), ops::transpose(t, {}), ops::broadcast_in_dim(t, {}, {}),
                           ops::convert(t, t.dtype), ops::reduce(OpKind::ReduceSum, t, {}),
                           ops::reduce(OpKind::ReduceProd, t, {}), ops::reduce(OpKind::ReduceMax, t, {}),
                           ops::reduce(OpKind::ReduceMin, t, {}), ops::unary(OpKind::Real, t),
                           ops::unary(OpKind::Imag, t)}) {
      check_op(op, {t});
      GraphMaker m;
      Value x = m.input(t);
      EXPECT_EQ(lowered(compile_graph(m.finish({m.apply(op, {x})}))).instruction_count(), 0u) << op.name();
    }
  }
}

TEST(ScalarProgram, ConstantsAreFoldedIntoRegisters) {
  // sin(2.5) * x + zeros: the constant subexpression costs no instruction; one mul and one add
  // remain, and the results still match the tensor path bitwise.
  GraphMaker m;
  Value x = m.input(kF64);
  Value c = m.apply(ops::constant(Tensor::scalar(2.5)), {});
  Value s = m.apply(ops::unary(OpKind::Sin, kF64), {c});
  Value p = m.apply(ops::mul(kF64, kF64), {s, x});
  Value z = m.apply(ops::zeros(kF64), {});
  Value i = m.apply(ops::constant(int_scalar(-4)), {});
  Value f = m.apply(ops::convert(kI64, DType::F32), {i});
  const Program program = compile_graph(m.finish({m.apply(ops::add(kF64, kF64), {p, z}), f, c}));
  const ScalarProgram scalar = lowered(program);
  EXPECT_EQ(scalar.instruction_count(), 2u) << scalar.print();
  for (double v : kFloatEdges) expect_same(program, scalar, {Tensor::scalar(v)});
}

TEST(ScalarProgram, PrintGolden) {
  // (x * y + exp(x)) with a folded constant and an f32 result: one line per instruction.
  GraphMaker m;
  Value x = m.input(kF64);
  Value y = m.input(kF64);
  Value xy = m.apply(ops::mul(kF64, kF64), {x, y});
  Value e = m.apply(ops::unary(OpKind::Exp, kF64), {x});
  Value sum = m.apply(ops::add(kF64, kF64), {xy, e});
  Value half = m.apply(ops::constant(Tensor::scalar(0.5)), {});
  Value gt = m.apply(ops::compare(CompareDir::Gt, kF64, kF64), {sum, half});
  Value out = m.apply(ops::select(kBool, kF64, kF64), {gt, sum, half});
  Value f = m.apply(ops::convert(kF64, DType::F32), {m.apply(ops::reshape(kF64, {}), {out})});
  const ScalarProgram scalar = lowered(compile_graph(m.finish({f, gt})));
  EXPECT_TRUE(golden::matches(TENFERRO_GOLDEN_DIR, "scalar_program_print.txt", scalar.print()));
}

/// A random rank-0 program (fixed seed): f64 arithmetic and analytic ops, comparisons and selects,
/// clamps, constants, f32 and i64 detours through convert. Several outputs, so that intermediate
/// values are compared too.
Fn random_program(std::uint32_t seed, int length) {
  std::mt19937 rng(seed);
  auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
  GraphMaker m;
  std::vector<Value> pool = {m.input(kF64), m.input(kF64), m.input(kF64)};
  auto any = [&] { return pool[pick(pool.size())]; };
  const OpKind unary_kinds[] = {OpKind::Neg, OpKind::Abs, OpKind::Sign, OpKind::Exp, OpKind::Log,
                                OpKind::Sin, OpKind::Cos, OpKind::Tanh, OpKind::Sqrt, OpKind::Rsqrt,
                                OpKind::Expm1, OpKind::Log1p, OpKind::Imag};
  for (int i = 0; i < length; ++i) {
    Value v = any();
    switch (pick(9)) {
      case 0: v = m.apply(ops::unary(unary_kinds[pick(std::size(unary_kinds))], kF64), {v}); break;
      case 1: v = m.apply(ops::add(kF64, kF64), {v, any()}); break;
      case 2: v = m.apply(ops::mul(kF64, kF64), {v, any()}); break;
      case 3: {
        const StdTensorOp binary[] = {ops::div(kF64, kF64), ops::pow(kF64, kF64), ops::maximum(kF64, kF64),
                                      ops::minimum(kF64, kF64), ops::dot_general(kF64, kF64, {})};
        v = m.apply(binary[pick(std::size(binary))], {v, any()});
        break;
      }
      case 4: {
        Value p = m.apply(ops::compare(static_cast<CompareDir>(pick(6)), kF64, kF64), {v, any()});
        v = m.apply(ops::select(kBool, kF64, kF64), {p, any(), v});
        break;
      }
      case 5: v = m.apply(ops::clamp(kF64, kF64, kF64), {any(), v, any()}); break;
      case 6: v = m.apply(ops::constant(Tensor::scalar(std::ldexp(static_cast<double>(pick(64)) - 32, -3))), {}); break;
      case 7: {  // through f32
        Value f = m.apply(ops::convert(kF64, DType::F32), {v});
        f = pick(2) ? m.apply(ops::unary(OpKind::Sin, kF32), {f}) : m.apply(ops::mul(kF32, kF32), {f, f});
        v = m.apply(ops::convert(m.type(f), DType::F64), {f});
        break;
      }
      default: {  // through i64
        Value n = m.apply(ops::convert(kF64, DType::I64), {v});
        n = m.apply(ops::add(kI64, kI64), {n, m.apply(ops::unary(OpKind::Sign, kI64), {n})});
        v = m.apply(ops::convert(kI64, DType::F64), {n});
        break;
      }
    }
    pool.push_back(v);
  }
  return m.finish({pool.back(), pool[pool.size() / 2], pool[3 + pick(pool.size() - 3)]});
}

TEST(ScalarProgram, RandomProgramsMatchBitwise) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-3.0, 3.0);
  for (std::uint32_t seed = 1; seed <= 60; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const Program program = compile_graph(random_program(seed, 40));
    const ScalarProgram scalar = lowered(program);
    for (int trial = 0; trial < 20; ++trial) {
      std::vector<Tensor> args;
      for (int k = 0; k < 3; ++k) args.push_back(Tensor::scalar(trial < 2 ? kFloatEdges[static_cast<std::size_t>(seed + k * 5 + trial) % kFloatEdges.size()] : u(rng)));
      expect_same(program, scalar, args);
    }
  }
}

/// f(x, y) = sin(x y) + exp(x) / y + tanh(x) max(x, y) + clamp(-1, x, y)^2 + sqrt(|y|) pow(|x|, y),
/// traced through the public API.
Fn scalar_loss() {
  auto f = [](Traced x, Traced y) {
    return sin(x * y) + exp(x) / y + tanh(x) * maximum(x, y) + clamp(x, full_like(x, -1.0), y) * clamp(x, full_like(x, -1.0), y) +
           sqrt(abs(y)) * pow(abs(x), y);
  };
  return trace(f, Tensor::scalar(0.0), Tensor::scalar(0.0)).graph();
}

TEST(ScalarProgram, GradientAndHessianProgramsMatchBitwise) {
  const Fn g = scalar_loss();
  const Keys inputs = input_keys(g);
  std::vector<TensorKey> wrt;
  for (const auto& k : inputs) wrt.push_back(k.input_key());
  const auto lin = tidu::linearize(computegraph::resolve({g}), std::span<const TensorValueKey>(g->output_keys()),
                                   std::span<const TensorKey>(wrt));
  const auto tr = tidu::linear_transpose(lin);
  Keys grad_out = g->output_keys(), grads, grad_in = inputs;
  for (const auto& k : tr.tangent_output_keys()) grads.push_back(k.value());
  grad_out.insert(grad_out.end(), grads.begin(), grads.end());
  for (std::size_t i = 0; i < tr.tangent_inputs.size(); ++i) grad_in.push_back(tr.tangent_input_key(i));
  const Program grad = compile_keys({tr.graph}, grad_out, grad_in);

  // Forward over reverse: the Hessian-vector program.
  const auto second = tidu::linearize(computegraph::resolve({tr.graph}), std::span<const TensorValueKey>(grads),
                                      std::span<const TensorKey>(wrt));
  Keys hvp_out, hvp_in = grad_in;
  for (const auto& k : second.tangent_output_keys()) hvp_out.push_back(k.value());
  for (std::size_t i = 0; i < second.tangent_inputs.size(); ++i) hvp_in.push_back(second.tangent_input_key(i));
  const Program hvp = compile_keys({second.graph}, hvp_out, hvp_in);

  const ScalarProgram grad_s = lowered(grad);
  const ScalarProgram hvp_s = lowered(hvp);
  EXPECT_GT(grad_s.instruction_count(), 20u);
  const Tensor one = Tensor::scalar(1.0), zero = Tensor::scalar(0.0);
  for (auto [x, y] : {std::pair{0.3, 1.7}, {-0.8, 0.4}, {2.0, -1.5}, {1.0, 1.0}, {0.0, 2.0}, {-2.0, -2.0}}) {
    SCOPED_TRACE("x=" + std::to_string(x) + " y=" + std::to_string(y));
    const Tensor tx = Tensor::scalar(x), ty = Tensor::scalar(y);
    expect_same(grad, grad_s, {tx, ty, one});
    expect_same(hvp, hvp_s, {tx, ty, one, one, zero});
    expect_same(hvp, hvp_s, {tx, ty, one, zero, one});
  }
  // The programs are the real derivatives: d/dx of the loss against a central difference.
  const Program f = compile_graph(g);
  const double x = 0.3, y = 1.7, h = 1e-6;
  const double fd = (f.run({Tensor::scalar(x + h), Tensor::scalar(y)})[0].item<double>() -
                     f.run({Tensor::scalar(x - h), Tensor::scalar(y)})[0].item<double>()) / (2 * h);
  EXPECT_NEAR(grad_s.run({Tensor::scalar(x), Tensor::scalar(y), one})[1].item<double>(), fd, 1e-6);
}

/// halve(x) = x / 2 on real floats: an op registered outside the built-in set, with no opcode.
const OpDef& halve_op() {
  static const OpDef& def = register_op({
      .name = "halve",
      .operands = {Linearity::Linear},
      .elementwise = true,
      .shape_rule = [](std::span<const TensorType> in, const OpAttrs&) { return std::vector<TensorType>{in[0]}; },
      .kernel =
          [](const StdTensorOp& op, std::span<const Tensor* const> in, std::span<Tensor> out) {
            out[0] = Tensor(op.out);
            for (std::int64_t i = 0; i < in[0]->numel(); ++i) {
              if (op.out.dtype == DType::F64) out[0].data<double>()[i] = in[0]->data<double>()[i] / 2;
              if (op.out.dtype == DType::F32) out[0].data<float>()[i] = in[0]->data<float>()[i] / 2;
            }
          },
  });
  return def;
}

// Multi-output ops (frexp: an f64 mantissa and an i64 exponent) and registered ops have no opcode:
// they run their kernel inside the scalar program (a Kernel instruction) instead of sending the
// whole program to the tensor path; results stay bitwise equal, operands on constants fold.
TEST(ScalarProgram, MultiOutputAndRegisteredOpsRunTheirKernels) {
  for (const TensorType& t : {kF64, kF32}) {
    SCOPED_TRACE(t.to_string());
    GraphMaker m;
    Value x = m.input(t);
    const StdTensorOp frexp_op = make_op(op_def(OpKind::Frexp), {t});
    const std::vector<Value> parts = m.apply_all(frexp_op, {x});
    const Value mant = parts[0], expo = parts[1];
    Value h = m.apply(make_op(halve_op(), {t}), {mant});
    Value e = m.apply(ops::convert(kI64, t.dtype), {expo});
    Value folded = m.apply(make_op(halve_op(), {t}), {m.apply(ops::constant(Tensor::scalar(3.0, t.dtype)), {})});
    Value sum = m.apply(ops::add(t, t), {m.apply(ops::add(t, t), {h, e}), folded});
    const Program program = compile_graph(m.finish({sum, expo, mant}));
    const ScalarProgram scalar = lowered(program);
    const std::string printed = scalar.print();
    EXPECT_NE(printed.find("kernel frexp"), std::string::npos) << printed;
    EXPECT_NE(printed.find("kernel halve"), std::string::npos) << printed;
    EXPECT_NE(printed.find("= 1.5"), std::string::npos) << "halve(3) folds into a constant\n" << printed;
    for (double v : kFloatEdges) expect_same(program, scalar, {scalar_of(t, v)});
    // The closed form: x = m 2^e with m in [1/2, 1), so sum = m / 2 + e + 3 / 2.
    const auto out = scalar.run({scalar_of(t, 12.0)});
    EXPECT_EQ(out[1].item<std::int64_t>(), 4);
    EXPECT_EQ(out[2].element(0).real(), 0.75);
    EXPECT_EQ(out[0].element(0).real(), 0.375 + 4 + 1.5);
  }
}

TEST(ScalarProgram, LowerRefusesNonScalarAndComplexPrograms) {
  {
    GraphMaker m;  // a rank-1 input
    Value x = m.input(TensorType{DType::F64, {3}});
    Value s = m.apply(ops::reduce(OpKind::ReduceSum, m.type(x), {0}), {x});
    EXPECT_FALSE(ScalarProgram::lower(compile_graph(m.finish({s}))).has_value());
  }
  {
    GraphMaker m;  // rank-0 input and output, rank-1 intermediate
    Value x = m.input(kF64);
    Value b = m.apply(ops::broadcast_in_dim(kF64, {2}, {}), {x});
    Value s = m.apply(ops::reduce(OpKind::ReduceSum, m.type(b), {0}), {b});
    EXPECT_FALSE(ScalarProgram::lower(compile_graph(m.finish({s}))).has_value());
  }
  {
    GraphMaker m;  // a complex intermediate
    Value x = m.input(kF64);
    Value z = m.apply(ops::convert(kF64, DType::C128), {x});
    Value r = m.apply(ops::unary(OpKind::Real, m.type(z)), {z});
    EXPECT_FALSE(ScalarProgram::lower(compile_graph(m.finish({r}))).has_value());
  }
  {
    GraphMaker m;  // a complex input
    Value z = m.input(TensorType{DType::C64, {}});
    EXPECT_FALSE(ScalarProgram::lower(compile_graph(m.finish({m.apply(ops::unary(OpKind::Abs, m.type(z)), {z})}))).has_value());
  }
}

TEST(ScalarProgram, BadInputsGiveTypedErrors) {
  GraphMaker m;
  Value x = m.input(kF64);
  Value y = m.input(kF32);
  Value c = m.apply(ops::convert(kF32, DType::F64), {y});
  const ScalarProgram scalar = lowered(compile_graph(m.finish({m.apply(ops::add(kF64, kF64), {x, c})})));
  EXPECT_THROW(scalar.run({Tensor::scalar(1.0)}), BindingError);
  EXPECT_THROW(scalar.run({Tensor::scalar(1.0), Tensor::scalar(1.0), Tensor::scalar(1.0)}), BindingError);
  try {
    scalar.run({Tensor::scalar(1.0), Tensor::scalar(1.0)});
    ADD_FAILURE() << "expected DTypeError";
  } catch (const DTypeError& e) {
    EXPECT_NE(std::string(e.what()).find("x1:f32[]"), std::string::npos) << e.what();
  }
  try {
    scalar.run({Tensor::zeros({2}), Tensor::scalar(1.0, DType::F32)});
    ADD_FAILURE() << "expected ShapeError";
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("x0:f64[]"), std::string::npos) << e.what();
  }
  EXPECT_EQ(scalar.run({Tensor::scalar(1.5), Tensor::scalar(2.0, DType::F32)})[0].item<double>(), 3.5);
}

}  // namespace
}  // namespace tenferro

// A gradient program's sin and cos of one register run as one sincos (scalar_program.cpp); that is
// only sound if glibc's sincos gives exactly sin's and cos's bits, which this sweep checks.
TEST(ScalarProgram, SinCosGivesTheBitsOfSinAndCos) {
  std::mt19937_64 rng(5);
  std::vector<double> xs = {0.0, -0.0, 1e-310, 0.5, 3.141592653589793, 1e6, 1e22, -1e300,
                            std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN()};
  for (int e = -30; e <= 30; ++e) {
    std::uniform_real_distribution<double> u(-std::ldexp(1.0, e), std::ldexp(1.0, e));
    for (int k = 0; k < 2000; ++k) xs.push_back(u(rng));
  }
  // Called through volatile pointers: the compiler may otherwise merge sin(x) and cos(x) into the
  // very sincos call under test.
  double (*volatile sin_fn)(double) = ::sin;
  double (*volatile cos_fn)(double) = ::cos;
  for (double x : xs) {
    double s = 0, c = 0;
    ::sincos(x, &s, &c);
    const double s_ref = sin_fn(x), c_ref = cos_fn(x);
    ASSERT_EQ(std::memcmp(&s, &s_ref, sizeof s), 0) << x;
    ASSERT_EQ(std::memcmp(&c, &c_ref, sizeof c), 0) << x;
  }
}
