// The random programs' op table: how each FuzzOp calls the traced API and how it prints as C++.
// The op list's functions (U and B entries of tenferro/op_list.hpp) are one table generated from
// the list (listed_functions), called by FuzzOp::Unary and FuzzOp::Binary and printed as
// tf::name(...): a new entry needs nothing here. Any other new call of the traced API joins the
// fuzzer as a FuzzOp with a case here (fuzz_op_name, apply_node, node_cpp) and in generate.cpp.
#include <algorithm>
#include <iomanip>
#include <limits>
#include <sstream>

#include "check_math.hpp"
#include "fuzz_internal.hpp"
#include "tenferro/op_list.hpp"
#include "tenferro/ops/op_def.hpp"

namespace tenferro::testing {

// The functions of the op list, each called through a function pointer to a lambda that calls it
// (tenferro::name: the same overload set the user's code reaches).
#define TENFERRO_FUZZ_UNARY(X, kind, name) \
  ListedFunction{OpKind::kind, #name, 1, [](const Traced& x) { return tenferro::name(x); }, nullptr},
#define TENFERRO_FUZZ_BINARY(X, kind, name) \
  ListedFunction{OpKind::kind, #name, 2, nullptr, [](const Traced& a, const Traced& b) { return tenferro::name(a, b); }},
const std::vector<ListedFunction>& listed_functions() {
  static const std::vector<ListedFunction> table = {
      TENFERRO_OP_LIST(TENFERRO_OP_LIST_NONE, TENFERRO_FUZZ_UNARY, TENFERRO_FUZZ_BINARY, TENFERRO_OP_LIST_SKIP_M, TENFERRO_OP_LIST_SKIP)};
  return table;
}
#undef TENFERRO_FUZZ_UNARY
#undef TENFERRO_FUZZ_BINARY

const ListedFunction& listed_function(OpKind kind) {
  for (const ListedFunction& f : listed_functions()) {
    if (f.kind == kind) return f;
  }
  throw Error("fuzz: the op list names no function of op " + op_def(kind).name);
}

namespace {
/// What a checkpoint under a policy records: a contraction (x with itself over every axis, for
/// SaveDots to keep) and a named value (h, for SaveNamed), among elementwise operations to
/// recompute.
Traced policy_function(const Traced& x) {
  const Traced h = checkpoint_name(x * x, "h");
  std::vector<std::int64_t> axes(x.rank());
  for (std::size_t i = 0; i < axes.size(); ++i) axes[i] = static_cast<std::int64_t>(i);
  const Traced s = dot_general(x, x, DotDims{{}, {}, axes, axes});
  const double scale = 0.01 / static_cast<double>(std::max<std::int64_t>(1, numel(x.shape())));
  return tanh(x) * x + sin(h) * 0.5 + x * s * scale;
}
/// Slices of x along `axis` at `positions` as gather/scatter operands: i64 indices [m, 1] and the
/// dimension numbers that take (and write back) one slice per index, result [m, x's other axes].
struct AxisPick {
  Traced indices;
  GatherDims gather;
  ScatterDims scatter;
};
AxisPick axis_pick(const Traced& x, std::int64_t axis, std::vector<std::int64_t> positions) {
  const auto m = static_cast<std::int64_t>(positions.size());
  AxisPick p{constant(x, Tensor::from(positions, {m, 1})), {}, {}};
  std::vector<std::int64_t> window;
  for (std::int64_t k = 1; k < static_cast<std::int64_t>(x.rank()); ++k) window.push_back(k);
  Shape sizes = x.shape();
  sizes[static_cast<std::size_t>(axis)] = 1;
  p.gather = GatherDims{window, {axis}, {axis}, 1, sizes};
  p.scatter = ScatterDims{window, {axis}, {axis}, 1};
  return p;
}
}  // namespace

const char* fuzz_op_name(FuzzOp op) {
  switch (op) {
    case FuzzOp::Unary: return "unary";
    case FuzzOp::Binary: return "binary";
    case FuzzOp::Sigmoid: return "sigmoid";
    case FuzzOp::Relu: return "relu";
    case FuzzOp::Softplus: return "softplus";
    case FuzzOp::Trigamma: return "polygamma";
    case FuzzOp::Logaddexp: return "logaddexp";
    case FuzzOp::Add: return "add";
    case FuzzOp::Sub: return "sub";
    case FuzzOp::Mul: return "mul";
    case FuzzOp::Div: return "div";
    case FuzzOp::Pow: return "pow";
    case FuzzOp::Maximum: return "maximum";
    case FuzzOp::Minimum: return "minimum";
    case FuzzOp::Eq: return "eq";
    case FuzzOp::Ne: return "ne";
    case FuzzOp::Lt: return "lt";
    case FuzzOp::Le: return "le";
    case FuzzOp::Gt: return "gt";
    case FuzzOp::Ge: return "ge";
    case FuzzOp::AddScalar: return "add";
    case FuzzOp::SubScalar: return "sub";
    case FuzzOp::MulScalar: return "mul";
    case FuzzOp::DivScalar: return "div";
    case FuzzOp::ScalarSub: return "sub";
    case FuzzOp::ScalarDiv: return "div";
    case FuzzOp::Where: return "where";
    case FuzzOp::Clamp: return "clamp";
    case FuzzOp::FullLike: return "full_like";
    case FuzzOp::Transpose: return "transpose";
    case FuzzOp::TransposeAll: return "transpose";
    case FuzzOp::Reshape: return "reshape";
    case FuzzOp::Slice: return "slice";
    case FuzzOp::Pad: return "pad";
    case FuzzOp::Cumsum: return "cumsum";
    case FuzzOp::Reverse: return "reverse";
    case FuzzOp::Cumprod: return "cumprod";
    case FuzzOp::Sort: return "sort";
    case FuzzOp::DynamicSlice: return "dynamic_slice";
    case FuzzOp::Dropout: return "dropout";
    case FuzzOp::Scan: return "scan";
    case FuzzOp::Cond: return "switch_case";
    case FuzzOp::Map: return "map";
    case FuzzOp::Checkpoint: return "checkpoint";
    case FuzzOp::Rematerialize: return "rematerialize";
    case FuzzOp::Gather: return "gather";
    case FuzzOp::Scatter: return "scatter";
    case FuzzOp::Conv: return "conv";
    case FuzzOp::DynamicUpdateSlice: return "dynamic_update_slice";
    case FuzzOp::BroadcastTo: return "broadcast_to";
    case FuzzOp::Astype: return "astype";
    case FuzzOp::SumAll: return "sum";
    case FuzzOp::Sum: return "sum";
    case FuzzOp::Prod: return "prod";
    case FuzzOp::Max: return "max";
    case FuzzOp::MaxWithIndex: return "max_with_index";
    case FuzzOp::MinWithIndex: return "min_with_index";
    case FuzzOp::Argmax: return "argmax";
    case FuzzOp::Argmin: return "argmin";
    case FuzzOp::DetachedIdentity: return "stop_gradient";
    case FuzzOp::Min: return "min";
    case FuzzOp::MeanAll: return "mean";
    case FuzzOp::Mean: return "mean";
    case FuzzOp::Var: return "var";
    case FuzzOp::Logsumexp: return "logsumexp";
    case FuzzOp::Softmax: return "softmax";
    case FuzzOp::LogSoftmax: return "log_softmax";
    case FuzzOp::DotGeneral: return "dot_general";
    case FuzzOp::Matmul: return "matmul";
    case FuzzOp::CrossEntropy: return "cross_entropy";
  }
  return "?";
}

const char* fuzz_name(const FuzzNode& node) {
  const bool listed = node.op == FuzzOp::Unary || node.op == FuzzOp::Binary;
  return listed ? listed_function(node.function).name : fuzz_op_name(node.op);
}

Traced apply_node(const FuzzNode& n, const std::vector<Traced>& v) {
  auto a = [&](std::size_t i) -> const Traced& { return v.at(static_cast<std::size_t>(n.args.at(i))); };
  const double s = n.scalar;
  switch (n.op) {
    case FuzzOp::Unary: {
      const ListedFunction& f = listed_function(n.function);
      if (f.arity != 1) throw Error(std::string("fuzz: ") + f.name + " is not unary");
      return f.unary(a(0));
    }
    case FuzzOp::Binary: {
      const ListedFunction& f = listed_function(n.function);
      if (f.arity != 2) throw Error(std::string("fuzz: ") + f.name + " is not binary");
      return f.binary(a(0), a(1));
    }
    case FuzzOp::Sigmoid: return sigmoid(a(0));
    case FuzzOp::Relu: return relu(a(0));
    case FuzzOp::Softplus: return softplus(a(0));
    case FuzzOp::Trigamma: return polygamma(1, a(0));
    case FuzzOp::Logaddexp: return logaddexp(a(0), a(1));
    case FuzzOp::Add: return add(a(0), a(1));
    case FuzzOp::Sub: return sub(a(0), a(1));
    case FuzzOp::Mul: return mul(a(0), a(1));
    case FuzzOp::Div: return div(a(0), a(1));
    case FuzzOp::Pow: return pow(a(0), a(1));
    case FuzzOp::Maximum: return maximum(a(0), a(1));
    case FuzzOp::Minimum: return minimum(a(0), a(1));
    case FuzzOp::Eq: return eq(a(0), a(1));
    case FuzzOp::Ne: return ne(a(0), a(1));
    case FuzzOp::Lt: return lt(a(0), a(1));
    case FuzzOp::Le: return le(a(0), a(1));
    case FuzzOp::Gt: return gt(a(0), a(1));
    case FuzzOp::Ge: return ge(a(0), a(1));
    case FuzzOp::AddScalar: return a(0) + s;
    case FuzzOp::SubScalar: return a(0) - s;
    case FuzzOp::MulScalar: return a(0) * s;
    case FuzzOp::DivScalar: return a(0) / s;
    case FuzzOp::ScalarSub: return s - a(0);
    case FuzzOp::ScalarDiv: return s / a(0);
    case FuzzOp::Where: return where(a(0), a(1), a(2));
    case FuzzOp::Clamp: return clamp(a(0), a(1), a(2));
    case FuzzOp::FullLike: return full_like(a(0), s);
    case FuzzOp::Transpose: return transpose(a(0), n.ints);
    case FuzzOp::TransposeAll: return transpose(a(0));
    case FuzzOp::Reshape: return reshape(a(0), n.ints);
    case FuzzOp::Cumsum: return cumsum(a(0), n.ints.at(0), n.ints.at(1) != 0);
    case FuzzOp::Reverse: return reverse(a(0), n.ints);
    case FuzzOp::Cumprod: return cumprod(a(0), n.ints.at(0), n.ints.at(1) != 0);
    case FuzzOp::Sort: return sort(a(0), n.ints.at(0), n.ints.at(1) != 0);
    case FuzzOp::Dropout:
      return dropout(constant(a(0), random::key(static_cast<std::uint64_t>(n.ints.at(0)))), a(0), n.scalar);
    case FuzzOp::Conv: {
      // The kernel: 2 output features, the input's, a window of 2 per spatial axis, entries
      // cycling through -1, 0.5, 1.5, 2 (a fixed pattern: the program stays reproducible).
      Shape w = {2, a(0).shape()[1]};
      for (std::size_t d = 2; d < a(0).rank(); ++d) w.push_back(2);
      Tensor kernel(TensorType{a(0).dtype(), w});
      const double pattern[] = {-1.0, 0.5, 1.5, 2.0};
      for (std::int64_t i = 0; i < kernel.numel(); ++i) set_element(kernel, i, pattern[i % 4]);
      return conv(a(0), constant(a(0), kernel), {.stride = {n.ints.at(0)}, .padding = {n.ints.at(1)}, .dilation = {n.ints.at(2)}});
    }
    case FuzzOp::Scan: {
      const Traced& x = a(0);
      Shape rest(x.shape().begin() + 1, x.shape().end());
      const Traced c0 = reshape(slice(x, std::vector<std::int64_t>(x.rank(), 0), [&] {
        Shape limit = x.shape();
        limit[0] = 1;
        return limit;
      }()), rest);
      auto body = [](const TracedList& c, const TracedList& xt) {
        return std::pair{TracedList{sin(c[0]) * xt[0] + c[0] * 0.5}, TracedList{c[0] * xt[0]}};
      };
      const std::int64_t snapshots = n.ints.size() > 1 ? n.ints[1] : 0;
      return scan(body, {c0}, {x}, {.reverse = n.ints.at(0) != 0, .checkpoint_snapshots = snapshots}).second.at(0);
    }
    case FuzzOp::Map: {
      const Traced& x = a(0);
      Shape rest(x.shape().begin() + 1, x.shape().end());
      Shape limit = x.shape();
      limit[0] = 1;
      const Traced w = reshape(slice(x, std::vector<std::int64_t>(x.rank(), 0), limit), rest);
      return map([&w](const TracedList& r) { return TracedList{tanh(r[0]) * r[0] + sin(r[0]) * w}; }, {x}).at(0);
    }
    case FuzzOp::Cond: {
      const Traced index = constant(a(0), Tensor::from(std::vector<std::int64_t>{n.ints.at(0)}, {}));
      return switch_case(index, {[](const TracedList& o) { return TracedList{sin(o[0])}; },
                                 [](const TracedList& o) { return TracedList{o[0] * o[0]}; },
                                 [](const TracedList& o) { return TracedList{exp(o[0]) * 0.5}; }},
                         {a(0)})[0];
    }
    case FuzzOp::Checkpoint: {
      const std::int64_t policy = n.ints.empty() ? 0 : n.ints[0];
      if (policy == 0) return checkpoint([](const Traced& x) { return tanh(x) * x + sin(x) * 0.5; })(a(0));
      return checkpoint(policy_function, policy == 1 ? CheckpointPolicy::SaveDots : CheckpointPolicy::SaveNamed)(a(0));
    }
    case FuzzOp::Rematerialize: {
      auto f = [](const Traced& x) { return tanh(x) * x + sin(x) * 0.5; };
      const std::int64_t budget = n.ints.size() > 1 ? n.ints[1] : 0;
      if (budget == 0) return rematerialize(f, {.checkpoints = static_cast<std::size_t>(n.ints.at(0))})(a(0));
      // A memory budget of 2^budget bytes; one no plan fits is refused with ValueError (a
      // documented outcome), and the function is then recorded without checkpoints.
      try {
        return rematerialize(f, {.memory_limit = std::size_t{1} << budget})(a(0));
      } catch (const ValueError&) {
        return f(a(0));
      }
    }
    case FuzzOp::Gather: {
      const AxisPick p = axis_pick(a(0), n.ints.at(0), {n.ints.begin() + 1, n.ints.end()});
      return gather(a(0), p.indices, p.gather);
    }
    case FuzzOp::Scatter: {
      const AxisPick p = axis_pick(a(0), n.ints.at(0), {n.ints.begin() + 2, n.ints.end()});
      const Traced rows = gather(a(0), p.indices, p.gather);
      return n.ints.at(1) != 0 ? scatter(a(0), p.indices, rows * rows, p.scatter)
                               : scatter_add(a(0), p.indices, rows * rows, p.scatter);
    }
    case FuzzOp::DynamicSlice: {
      const auto [starts, sizes, unused] = three_lists(n.ints);
      return dynamic_slice(a(0), constant(a(0), Tensor::from(starts, {static_cast<std::int64_t>(starts.size())})), sizes);
    }
    case FuzzOp::DynamicUpdateSlice: {  // a window of a(0) moved within it
      const auto [from, sizes, to] = three_lists(n.ints);
      auto at = [&](const std::vector<std::int64_t>& starts) {
        return constant(a(0), Tensor::from(starts, {static_cast<std::int64_t>(starts.size())}));
      };
      return dynamic_update_slice(a(0), dynamic_slice(a(0), at(from), sizes), at(to));
    }
    case FuzzOp::Slice: {
      const auto [start, limit, stride] = three_lists(n.ints);
      return slice(a(0), start, limit, stride);
    }
    case FuzzOp::Pad: {
      const auto [low, high, interior] = three_lists(n.ints);
      return pad(a(0), s, low, high, interior);
    }
    case FuzzOp::BroadcastTo: return broadcast_to(a(0), n.ints);
    case FuzzOp::Astype: return astype(a(0), n.dtype);
    case FuzzOp::SumAll: return sum(a(0));
    case FuzzOp::Sum: return sum(a(0), n.ints);
    case FuzzOp::Prod: return prod(a(0), n.ints);
    case FuzzOp::Max: return max(a(0), n.ints);
    case FuzzOp::MaxWithIndex: return max_with_index(a(0), n.ints.at(0)).first;
    case FuzzOp::MinWithIndex: return min_with_index(a(0), n.ints.at(0)).first;
    case FuzzOp::Argmax: return argmax(a(0), n.ints.at(0));
    case FuzzOp::Argmin: return argmin(a(0), n.ints.at(0));
    case FuzzOp::DetachedIdentity: return (a(0) - stop_gradient(a(0))) + stop_gradient(a(0));
    case FuzzOp::Min: return min(a(0), n.ints);
    case FuzzOp::MeanAll: return mean(a(0));
    case FuzzOp::Mean: return mean(a(0), n.ints);
    case FuzzOp::Var: return var(a(0), n.ints);
    case FuzzOp::Logsumexp: return logsumexp(a(0), n.ints);
    case FuzzOp::Softmax: return softmax(a(0), n.ints.at(0));
    case FuzzOp::LogSoftmax: return log_softmax(a(0), n.ints.at(0));
    case FuzzOp::DotGeneral: return dot_general(a(0), a(1), n.dims);
    case FuzzOp::Matmul: return matmul(a(0), a(1));
    case FuzzOp::CrossEntropy: return cross_entropy(a(0), a(1));
  }
  throw Error("fuzz: unknown op");
}

ThreeLists three_lists(const std::vector<std::int64_t>& ints) {
  const auto r = static_cast<std::ptrdiff_t>(ints.size() / 3);
  return {{ints.begin(), ints.begin() + r}, {ints.begin() + r, ints.begin() + 2 * r}, {ints.begin() + 2 * r, ints.end()}};
}

namespace {
std::string list(const std::vector<std::int64_t>& xs) {
  std::string s = "{";
  for (std::size_t i = 0; i < xs.size(); ++i) s += (i ? ", " : "") + std::to_string(xs[i]);
  return s + "}";
}

std::string number(double x) {
  std::ostringstream os;
  os << std::setprecision(std::numeric_limits<double>::max_digits10) << x;
  std::string s = os.str();
  if (s.find_first_of(".eni") == std::string::npos) s += ".0";
  return s;
}

const char* dtype_cpp(DType d) {
  switch (d) {
    case DType::F32: return "tf::DType::F32";
    case DType::F64: return "tf::DType::F64";
    case DType::C64: return "tf::DType::C64";
    case DType::C128: return "tf::DType::C128";
    case DType::I64: return "tf::DType::I64";
    case DType::Bool: return "tf::DType::Bool";
  }
  return "?";
}
}  // namespace

std::string value_name(int i) { return "v" + std::to_string(i); }

std::string node_cpp(const FuzzNode& n) {
  auto a = [&](std::size_t i) { return value_name(n.args.at(i)); };
  const std::string name = std::string("tf::") + fuzz_name(n);
  auto is = [&](std::initializer_list<FuzzOp> ops) { return std::find(ops.begin(), ops.end(), n.op) != ops.end(); };
  if (n.op == FuzzOp::AddScalar) return a(0) + " + " + number(n.scalar);
  if (n.op == FuzzOp::SubScalar) return a(0) + " - " + number(n.scalar);
  if (n.op == FuzzOp::MulScalar) return a(0) + " * " + number(n.scalar);
  if (n.op == FuzzOp::DivScalar) return a(0) + " / " + number(n.scalar);
  if (n.op == FuzzOp::ScalarSub) return number(n.scalar) + " - " + a(0);
  if (n.op == FuzzOp::ScalarDiv) return number(n.scalar) + " / " + a(0);
  if (n.op == FuzzOp::FullLike) return name + "(" + a(0) + ", " + number(n.scalar) + ")";
  if (n.op == FuzzOp::Cumsum || n.op == FuzzOp::Cumprod || n.op == FuzzOp::Sort) {
    return name + "(" + a(0) + ", " + std::to_string(n.ints.at(0)) + (n.ints.at(1) ? ", true)" : ")");
  }
  if (n.op == FuzzOp::Reverse) return name + "(" + a(0) + ", " + list(n.ints) + ")";
  if (n.op == FuzzOp::Dropout) {
    return name + "(tf::constant(" + a(0) + ", tf::random::key(" + std::to_string(n.ints.at(0)) + ")), " + a(0) + ", " +
           number(n.scalar) + ")";
  }
  if (n.op == FuzzOp::Conv) {
    return name + "(" + a(0) + ", <kernel [2, C, 2..] of -1, 0.5, 1.5, 2>, {.stride = {" + std::to_string(n.ints.at(0)) +
           "}, .padding = {" + std::to_string(n.ints.at(1)) + "}, .dilation = {" + std::to_string(n.ints.at(2)) + "}})";
  }
  if (n.op == FuzzOp::Scan) {
    return "tf::scan([](auto& c, auto& x) { return std::pair{TracedList{tf::sin(c[0]) * x[0] + c[0] * 0.5}, "
           "TracedList{c[0] * x[0]}}; }, {<" + a(0) + "[0]>}, {" + a(0) + "}, {.reverse = " + (n.ints.at(0) ? "true" : "false") +
           ", .checkpoint_snapshots = " + std::to_string(n.ints.size() > 1 ? n.ints[1] : 0) + "}).second[0]";
  }
  if (n.op == FuzzOp::Rematerialize) {
    const std::string options = n.ints.size() > 1 && n.ints[1] != 0 ? "{.memory_limit = std::size_t{1} << " + std::to_string(n.ints[1]) + "}"
                                                                    : "{.checkpoints = " + std::to_string(n.ints.at(0)) + "}";
    return "tf::rematerialize([](auto& x) { return tf::tanh(x) * x + tf::sin(x) * 0.5; }, " + options + ")(" + a(0) + ")";
  }
  if (n.op == FuzzOp::Checkpoint) {
    const std::int64_t policy = n.ints.empty() ? 0 : n.ints[0];
    if (policy == 0) return "tf::checkpoint([](auto& x) { return tf::tanh(x) * x + tf::sin(x) * 0.5; })(" + a(0) + ")";
    return std::string("tf::checkpoint([](auto& x) { auto h = tf::checkpoint_name(x * x, \"h\"); auto s = <dot_general of x with x over "
                       "every axis>; return tf::tanh(x) * x + tf::sin(h) * 0.5 + x * s * (0.01 / max(1, numel(x))); }, ") +
           (policy == 1 ? "tf::CheckpointPolicy::SaveDots" : "tf::CheckpointPolicy::SaveNamed") + ")(" + a(0) + ")";
  }
  if (n.op == FuzzOp::Map) {
    return "tf::map([&](auto& r) { return TracedList{tf::tanh(r[0]) * r[0] + tf::sin(r[0]) * <" + a(0) + "[0]>}; }, {" +
           a(0) + "})[0]";
  }
  if (n.op == FuzzOp::Cond) {
    return name + "(<i64 " + std::to_string(n.ints.at(0)) + ">, {sin(o), o * o, exp(o) * 0.5}, {" + a(0) + "})[0]";
  }
  if (n.op == FuzzOp::Gather || n.op == FuzzOp::Scatter) {
    const std::size_t first = n.op == FuzzOp::Gather ? 1 : 2;
    const std::string pick = "<slices along axis " + std::to_string(n.ints.at(0)) + " at " +
                             list({n.ints.begin() + static_cast<std::ptrdiff_t>(first), n.ints.end()}) + ">";
    if (n.op == FuzzOp::Gather) return name + "(" + a(0) + ", " + pick + ")";
    return std::string(n.ints.at(1) ? "tf::scatter(" : "tf::scatter_add(") + a(0) + ", " + pick + ", tf::gather(" + a(0) +
           ", " + pick + ") squared)";
  }
  if (n.op == FuzzOp::DynamicSlice) {
    const auto [starts, sizes, unused] = three_lists(n.ints);
    return name + "(" + a(0) + ", <i64 " + list(starts) + ">, " + list(sizes) + ")";
  }
  if (n.op == FuzzOp::DynamicUpdateSlice) {
    const auto [from, sizes, to] = three_lists(n.ints);
    return name + "(" + a(0) + ", tf::dynamic_slice(" + a(0) + ", <i64 " + list(from) + ">, " + list(sizes) + "), <i64 " +
           list(to) + ">)";
  }
  if (n.op == FuzzOp::Slice || n.op == FuzzOp::Pad) {
    const auto [x, y, z] = three_lists(n.ints);
    return name + "(" + a(0) + (n.op == FuzzOp::Pad ? ", " + number(n.scalar) : "") + ", " + list(x) + ", " + list(y) +
           ", " + list(z) + ")";
  }
  if (is({FuzzOp::Transpose, FuzzOp::Reshape, FuzzOp::BroadcastTo, FuzzOp::Sum, FuzzOp::Prod, FuzzOp::Max,
          FuzzOp::Min, FuzzOp::Mean, FuzzOp::Var, FuzzOp::Logsumexp})) {
    return name + "(" + a(0) + ", " + list(n.ints) + ")";
  }
  if (is({FuzzOp::Softmax, FuzzOp::LogSoftmax, FuzzOp::Argmax, FuzzOp::Argmin})) {
    return name + "(" + a(0) + ", " + std::to_string(n.ints.at(0)) + ")";
  }
  if (is({FuzzOp::MaxWithIndex, FuzzOp::MinWithIndex})) {
    return name + "(" + a(0) + ", " + std::to_string(n.ints.at(0)) + ").first";
  }
  if (n.op == FuzzOp::Trigamma) return name + "(1, " + a(0) + ")";
  if (n.op == FuzzOp::DetachedIdentity) return "(" + a(0) + " - " + name + "(" + a(0) + ")) + " + name + "(" + a(0) + ")";
  if (n.op == FuzzOp::Astype) return name + "(" + a(0) + ", " + dtype_cpp(n.dtype) + ")";
  if (n.op == FuzzOp::DotGeneral) {
    return name + "(" + a(0) + ", " + a(1) + ", tf::DotDims{" + list(n.dims.lhs_batch) + ", " +
           list(n.dims.rhs_batch) + ", " + list(n.dims.lhs_contract) + ", " + list(n.dims.rhs_contract) + "})";
  }
  std::string s = name + "(";
  for (std::size_t i = 0; i < n.args.size(); ++i) s += (i ? ", " : "") + a(i);
  return s + ")";
}

std::string tensor_cpp(const Tensor& t) {
  std::string elem;
  switch (t.dtype()) {
    case DType::F32: elem = "float"; break;
    case DType::F64: elem = "double"; break;
    case DType::C64: elem = "tf::c64"; break;
    case DType::C128: elem = "tf::c128"; break;
    case DType::I64: elem = "std::int64_t"; break;
    case DType::Bool: elem = "bool"; break;
  }
  std::string s = "tf::Tensor::from(std::vector<" + elem + ">{";
  for (std::int64_t i = 0; i < t.numel(); ++i) {
    const c128 x = t.element(i);
    s += i ? ", " : "";
    s += is_complex(t.dtype()) ? "{" + number(x.real()) + ", " + number(x.imag()) + "}" : number(x.real());
  }
  return s + "}, " + list(t.shape()) + ")";
}

}  // namespace tenferro::testing
