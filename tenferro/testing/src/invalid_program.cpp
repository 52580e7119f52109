// check_invalid_call (invalid_program.hpp). Each mutation picks a value of the seed's random
// program and makes one call that cannot be valid for it; `names` lists the words one of which
// the error must contain: the API's name, or the primitive it lowers to.
#include "tenferro/testing/invalid_program.hpp"

#include <algorithm>
#include <functional>
#include <numeric>
#include <random>

#include "fuzz_internal.hpp"
#include "tenferro/testing/random_program.hpp"
#include "tenferro/ops/record.hpp"

namespace tenferro::testing {

namespace {

struct Call {
  std::string text;                // the call as C++
  std::vector<std::string> names;  // one of these must appear in the error message
  std::function<void()> run;       // makes the call
};

std::string list(const std::vector<std::int64_t>& xs) {
  std::string s = "{";
  for (std::size_t i = 0; i < xs.size(); ++i) s += (i ? ", " : "") + std::to_string(xs[i]);
  return s + "}";
}

class InvalidCalls {
 public:
  explicit InvalidCalls(std::uint64_t seed) : rng_(seed ^ 0x1badca11ULL), program_(generate_program(seed)) {
    auto trace = std::make_shared<TraceState>();
    std::vector<Traced> args;
    for (std::size_t i = 0; i < program_.inputs.size(); ++i) {
      args.emplace_back(trace, trace->builder.add_input(TensorKey{"x" + std::to_string(i), program_.inputs[i].type()}));
    }
    try {
      values_ = apply_values(program_, args);
    } catch (...) {
      values_ = args;  // a program that does not trace is random_programs_test's business
    }
  }

  /// One invalid call, drawn at random among those that apply to the drawn value.
  Call draw() {
    for (;;) {
      const std::size_t v = below(values_.size());
      const Traced x = values_[v];
      const std::string name = value_name(static_cast<int>(v));
      std::optional<Call> c;
      switch (below(14)) {
        case 0: c = bad_permutation(x, name); break;
        case 1: c = bad_reshape(x, name); break;
        case 2: c = bad_broadcast(x, name); break;
        case 3: c = bad_reduction_axes(x, name); break;
        case 4: c = bad_softmax_axis(x, name); break;
        case 5: c = bad_dot_general(x, name); break;
        case 6: c = bad_matmul(x, name); break;
        case 7: c = shapes_that_do_not_broadcast(x, name); break;
        case 8: c = complex_where_real_is_needed(x, name); break;
        case 9: c = mixed_dtypes(x, name); break;
        case 10: c = bad_where_predicate(x, name); break;
        case 11: c = bad_transform_arguments(); break;
        case 12: c = bad_program_arguments(); break;
        default: c = bad_cross_entropy(x, name); break;
      }
      if (c) return *c;
    }
  }

 private:
  std::size_t below(std::size_t n) { return static_cast<std::size_t>(rng_() % n); }
  std::int64_t rank_of(const Traced& x) const { return static_cast<std::int64_t>(x.rank()); }
  /// An axis outside [-rank, rank).
  std::int64_t bad_axis(const Traced& x) { return below(2) ? rank_of(x) + static_cast<std::int64_t>(below(2)) : -rank_of(x) - 1; }

  std::optional<Call> bad_permutation(const Traced& x, const std::string& name) {
    std::vector<std::int64_t> perm(x.rank());
    std::iota(perm.begin(), perm.end(), 0);
    const std::size_t how = below(3);
    if (how == 0) perm.push_back(static_cast<std::int64_t>(perm.size()));  // too long
    else if (how == 1 && perm.size() >= 2) perm[1] = perm[0];             // repeated axis
    else if (!perm.empty()) perm[below(perm.size())] = bad_axis(x);        // out of range
    else perm.push_back(1);
    return Call{"tf::transpose(" + name + ", " + list(perm) + ")", {"transpose"}, [x, perm] { transpose(x, perm); }};
  }
  std::optional<Call> bad_reshape(const Traced& x, const std::string& name) {
    Shape s = x.shape();
    if (below(2) && !s.empty()) s[below(s.size())] = -2;  // negative dimension
    else s.push_back(x.type().numel() + 1), s.push_back(2);
    if (numel(s) == x.type().numel() && std::none_of(s.begin(), s.end(), [](auto d) { return d < 0; })) return std::nullopt;
    return Call{"tf::reshape(" + name + ", " + list(s) + ")", {"reshape"}, [x, s] { reshape(x, s); }};
  }
  std::optional<Call> bad_broadcast(const Traced& x, const std::string& name) {
    Shape s = x.shape();
    std::optional<std::size_t> axis;
    for (std::size_t i = 0; i < s.size(); ++i) {
      if (s[i] != 1) axis = i;
    }
    if (axis && below(2)) s[*axis] += 1;  // a size other than 1 cannot stretch
    else if (!s.empty()) s.pop_back();     // lower rank
    else return std::nullopt;
    return Call{"tf::broadcast_to(" + name + ", " + list(s) + ")", {"broadcast_to", "broadcast_in_dim"},
                [x, s] { broadcast_to(x, s); }};
  }
  std::optional<Call> bad_reduction_axes(const Traced& x, const std::string& name) {
    std::vector<std::int64_t> axes = {bad_axis(x)};
    if (below(2) && x.rank() >= 1) axes = {0, 0, -rank_of(x)};  // an axis named twice (0 and -rank too)
    static const char* names[] = {"sum", "prod", "max", "min", "mean", "var", "logsumexp"};
    const std::size_t which = below(7);
    const std::string op = names[which];
    return Call{"tf::" + op + "(" + name + ", " + list(axes) + ")", {op, "reduce"}, [x, axes, which] {
                  switch (which) {
                    case 0: sum(x, axes); break;
                    case 1: prod(x, axes); break;
                    case 2: max(x, axes); break;
                    case 3: min(x, axes); break;
                    case 4: mean(x, axes); break;
                    case 5: var(x, axes); break;
                    default: logsumexp(x, axes); break;
                  }
                }};
  }
  std::optional<Call> bad_softmax_axis(const Traced& x, const std::string& name) {
    const std::int64_t axis = bad_axis(x);
    const bool log = below(2) == 1;
    const std::string op = log ? "log_softmax" : "softmax";
    return Call{"tf::" + op + "(" + name + ", " + std::to_string(axis) + ")", {"softmax"}, [x, axis, log] {
                  if (log) log_softmax(x, axis);
                  else softmax(x, axis);
                }};
  }
  std::optional<Call> bad_dot_general(const Traced& x, const std::string& name) {
    if (x.rank() == 0) return std::nullopt;
    DotDims d;
    const std::size_t how = below(4);
    const std::int64_t last = rank_of(x) - 1;
    if (how == 0) {  // contracted sizes differ: a size-s axis against a size-(s+1) axis of x + x's broadcast
      d.lhs_contract = {bad_axis(x)};
      d.rhs_contract = {0};
    } else if (how == 1) {  // one axis both batch and contracting
      d.lhs_batch = d.rhs_batch = {0};
      d.lhs_contract = d.rhs_contract = {0};
    } else if (how == 2) {  // counts differ
      d.lhs_contract = {last};
      d.rhs_contract = {};
    } else {  // a negative axis (dimension numbers take non-negative axes)
      d.lhs_contract = d.rhs_contract = {-1};
    }
    return Call{"tf::dot_general(" + name + ", " + name + ", tf::DotDims{" + list(d.lhs_batch) + ", " +
                    list(d.rhs_batch) + ", " + list(d.lhs_contract) + ", " + list(d.rhs_contract) + "})",
                {"dot_general"}, [x, d] { dot_general(x, x, d); }};
  }
  std::optional<Call> bad_matmul(const Traced& x, const std::string& name) {
    if (x.rank() == 0) {
      return Call{"tf::matmul(" + name + ", " + name + ")", {"matmul"}, [x] { matmul(x, x); }};
    }
    // An operand whose contracted axis is one longer than x's last.
    const std::int64_t k = x.shape().back() + 1;
    Shape s = x.rank() == 1 ? Shape{k} : x.shape();
    if (x.rank() >= 2) {
      s[s.size() - 2] = k;
      s.back() = 2;
    }
    const Traced y = constant(x, Tensor::ones(s, x.dtype()));
    return Call{"tf::matmul(" + name + ", <ones of shape " + list(s) + ">)", {"matmul", "dot_general"},
                [x, y] { matmul(x, y); }};
  }
  std::optional<Call> shapes_that_do_not_broadcast(const Traced& x, const std::string& name) {
    Shape s = x.shape();
    std::optional<std::size_t> axis;
    for (std::size_t i = 0; i < s.size(); ++i) {
      if (s[i] != 1) axis = i;
    }
    if (!axis) return std::nullopt;
    s[*axis] = s[*axis] == 0 ? 2 : s[*axis] + 1;  // 0 + 1 would broadcast
    const Traced other = constant(x, Tensor::ones(s, x.dtype()));
    const Traced pred = constant(x, Tensor(TensorType{DType::Bool, x.shape()}));
    static const char* names[] = {"add", "mul", "div", "pow", "where", "clamp"};
    const std::size_t which = below(6);
    const std::string op = names[which];
    return Call{"tf::" + op + "(" + name + ", <ones of shape " + list(s) + ">)", {op, "select"}, [x, other, pred, which] {
                  switch (which) {
                    case 0: add(x, other); break;
                    case 1: mul(x, other); break;
                    case 2: div(x, other); break;
                    case 3: pow(x, other); break;
                    case 4: where(pred, x, other); break;
                    default: clamp(x, other, other); break;
                  }
                }};
  }
  std::optional<Call> complex_where_real_is_needed(const Traced& x, const std::string& name) {
    if (!is_complex(x.dtype())) return std::nullopt;
    static const char* names[] = {"maximum", "lt", "max", "clamp", "relu"};
    const std::size_t which = below(5);
    const std::string op = names[which];
    return Call{"tf::" + op + "(" + name + ", ...)", {op, "maximum", "reduce_max", "compare", "gt"}, [x, which] {
                  switch (which) {
                    case 0: maximum(x, x); break;
                    case 1: lt(x, x); break;
                    case 2: max(x, {}); break;
                    case 3: clamp(x, x, x); break;
                    default: relu(x); break;
                  }
                }};
  }
  std::optional<Call> mixed_dtypes(const Traced& x, const std::string& name) {
    if (!is_inexact(x.dtype())) return std::nullopt;
    const DType widths[] = {DType::F64, DType::F32, DType::C128, DType::C64};  // the other precision
    const DType other = widths[static_cast<std::size_t>(x.dtype())];
    const Traced y = astype(x, other);
    const std::string op = below(2) ? "add" : "dot_general";
    return Call{"tf::" + op + "(" + name + ", tf::astype(" + name + ", " + dtype_name(other) + "))", {op}, [x, y, op] {
                  if (op == "add") add(x, y);
                  else dot_general(x, y, {});
                }};
  }
  std::optional<Call> bad_where_predicate(const Traced& x, const std::string& name) {
    if (x.dtype() == DType::Bool) return std::nullopt;
    return Call{"tf::where(" + name + ", " + name + ", " + name + ")", {"where", "select"}, [x] { where(x, x, x); }};
  }
  std::optional<Call> bad_cross_entropy(const Traced& x, const std::string& name) {
    const Traced y = reshape(x, {x.type().numel(), 1});
    if (y.shape() == x.shape()) return std::nullopt;
    return Call{"tf::cross_entropy(" + name + ", <its reshape to [n, 1]>)", {"cross_entropy"}, [x, y] { cross_entropy(x, y); }};
  }

  /// Transforms called with arguments that do not fit the function or each other.
  std::optional<Call> bad_transform_arguments() {
    const RandomProgram* p = &program_;
    const Tensors args = program_.inputs;
    auto loss = [p](const auto&... a) { return apply_loss(*p, std::vector<Traced>{a...}); };
    auto y = [p](const auto&... a) { return apply_y(*p, std::vector<Traced>{a...}); };
    Tensors wrong = args;
    wrong[0] = Tensor(TensorType{args[0].dtype(), Shape{args[0].numel() + 1}});  // a direction of another shape
    switch (below(7)) {
      case 0: return Call{"tf::grad(f, " + std::to_string(args.size()) + ")(args)", {"grad"}, [=] { grad(loss, args.size()).call(args); }};
      case 1: return Call{"tf::hvp(f, args, <wrong direction>)", {"hvp"}, [=] { hvp(loss, args, wrong); }};
      case 2: return Call{"tf::jvp(f, args, <wrong tangent>)", {"jvp"}, [=] { jvp(loss, args, wrong); }};
      case 3: return Call{"tf::jvp(f, args, <one tangent too few>)", {"jvp"},
                          [=] { jvp(loss, args, Tensors(wrong.begin() + 1, wrong.end())); }};
      case 4: return Call{"tf::vjp(f, args, <cotangent of the wrong shape>)", {"vjp"},
                          [=] { vjp(loss, args, Tensor(TensorType{DType::F64, {3, 3}})); }};
      case 5:
        if (type_of_y().rank() == 0 && is_floating(type_of_y().dtype)) return std::nullopt;
        return Call{"tf::grad(y)(args) (y not a real scalar)", {"grad"}, [=] { grad(y).call(args); }};
      default: return Call{"tf::value_and_grad(f, {})", {"value_and_grad"}, [=] { value_and_grad(loss, std::vector<std::size_t>{}); }};
    }
  }
  TensorType type_of_y() const { return values_.at(static_cast<std::size_t>(program_.outputs.at(0))).type(); }

  /// A compiled program run on arguments of the wrong count, shape or dtype.
  std::optional<Call> bad_program_arguments() {
    const RandomProgram* p = &program_;
    Tensors args = program_.inputs;
    auto loss = [p](const auto&... a) { return apply_loss(*p, std::vector<Traced>{a...}); };
    const std::size_t how = below(3);
    if (how == 0) args.pop_back();
    else if (how == 1) args[0] = Tensor(TensorType{args[0].dtype(), Shape{args[0].numel() + 2}});
    else args[0] = Tensor(TensorType{args[0].dtype() == DType::F64 ? DType::F32 : DType::F64, args[0].shape()});
    const Tensors inputs = program_.inputs;
    return Call{"tf::trace(f, args...).run(<wrong arguments>)", {"run", "input", "argument"}, [=] {
                  Program(detail::trace_graph(loss, detail::types_of(inputs))).run(args);
                }};
  }

  std::mt19937_64 rng_;
  RandomProgram program_;
  std::vector<Traced> values_;
};

}  // namespace

InvalidReport check_invalid_call(std::uint64_t seed) {
  InvalidCalls calls(seed);
  Call call = calls.draw();
  InvalidReport report;
  report.call = call.text;
  auto names_the_call = [&](const std::string& what) {
    return std::any_of(call.names.begin(), call.names.end(), [&](const std::string& n) { return what.find(n) != std::string::npos; });
  };
  try {
    call.run();
    report.ok = false;
    report.message = "no error";
  } catch (const ShapeError& e) {
    if (!names_the_call(e.what())) report = {false, call.text, std::string("ShapeError not naming the call: ") + e.what()};
  } catch (const DTypeError& e) {
    if (!names_the_call(e.what())) report = {false, call.text, std::string("DTypeError not naming the call: ") + e.what()};
  } catch (const BindingError& e) {
    if (!names_the_call(e.what())) report = {false, call.text, std::string("BindingError not naming the call: ") + e.what()};
  } catch (const std::exception& e) {
    report = {false, call.text, std::string("an untyped error: ") + typeid(e).name() + ": " + e.what()};
  }
  return report;
}

}  // namespace tenferro::testing
