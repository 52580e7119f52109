// jacobian (tenferro/jacobian.hpp): the choice between the extremes and the compressed modes.
#include "tenferro/jacobian.hpp"

#include <cstdio>
#include <cstring>
#include <optional>
#include <deque>
#include <mutex>

#include "sparse/coloring.hpp"
#include "sparse/cross_country.hpp"
#include "sparse/detect.hpp"
#include "sparse/signature.hpp"
#include "tenferro/program.hpp"

namespace tenferro {

const char* jacobian_mode_name(JacobianMode mode) {
  switch (mode) {
    case JacobianMode::Auto: return "auto";
    case JacobianMode::Forward: return "forward";
    case JacobianMode::Reverse: return "reverse";
    case JacobianMode::Columns: return "columns";
    case JacobianMode::Rows: return "rows";
    case JacobianMode::CrossCountry: return "cross_country";
  }
  return "?";
}

const char* elimination_order_name(EliminationOrder order) {
  switch (order) {
    case EliminationOrder::Best: return "best";
    case EliminationOrder::Forward: return "forward";
    case EliminationOrder::Reverse: return "reverse";
    case EliminationOrder::Markowitz: return "markowitz";
    case EliminationOrder::Search: return "search";
    case EliminationOrder::Edges: return "edges";
  }
  return "?";
}

namespace detail {
namespace {

/// Compressed modes must save at least this share of the better extreme's products: they pay a
/// read-back of every nonzero into the dense result. Cross-country accumulation must save as
/// much: its cost is a prediction from sizes alone.
constexpr double kCompressedGain = 0.8;

struct Choice {
  sparse::ArgumentSignature signature;
  JacobianChoice choice;
  Shape shape;  // the Jacobian's: output... + argument...
  std::shared_ptr<Program> cross_country;  // CrossCountry: the recorded elimination
};

/// Cross-country accumulation's predicted cost in forward products, against candidates that run
/// their products batched: `products` of them (weighted) cost plan.batched_cost(products), which
/// pays the operations' fixed cost once, so the comparison is made in element operations and
/// converted back.
double cross_country_products(const sparse::CrossCountryPlan& plan, double products) {
  return products * plan.cost / plan.batched_cost(products);
}

/// The forced cross-country mode on a function it cannot accumulate.
[[noreturn]] void throw_unsupported(const sparse::CrossCountryPlan& plan) {
  if (plan.too_large) throw ValueError("jacobian: cross_country: " + plan.unsupported);
  throw DTypeError("jacobian: cross_country: " + plan.unsupported);
}

/// Whether cross-country accumulation is taken over the better extreme (`extreme` forward
/// products) and the best candidate so far (`best`).
bool cross_country_wins(const sparse::CrossCountryPlan& plan, double extreme, double best) {
  if (!plan.unsupported.empty()) return false;
  const double cost = cross_country_products(plan, extreme);
  return cost <= kCompressedGain * extreme && cost < best;
}

}  // namespace

class JacobianState {
 public:
  JacobianState(TracedFunction function, JacobianOptions opts)
      : f(std::move(function)), options(opts), dense(f, {opts.argnum}) {}

  const Choice& choice(const Tensors& args) {
    {
      std::lock_guard lock(mutex);
      for (const Choice& c : choices) {
        if (c.signature.matches(args)) return c;
      }
    }
    Choice c = choose(args);
    std::lock_guard lock(mutex);
    choices.push_back(std::move(c));
    return choices.back();
  }

  /// The sparse derivative of one compressed mode (made on first use). Its analyses come from
  /// choose(), which detects the pattern once and colors it both ways.
  const SparseDerivative& compressed(JacobianMode mode) {
    std::lock_guard lock(mutex);
    auto& slot = mode == JacobianMode::Columns ? by_columns : by_rows;
    if (!slot) {
      slot = std::make_unique<SparseDerivative>(
          f, SparseOptions{.argnum = options.argnum, .mode = mode == JacobianMode::Columns ? SparseMode::Columns : SparseMode::Rows},
          /*hessian=*/false);
    }
    return *slot;
  }

  TracedFunction f;
  JacobianOptions options;
  TransformedFunction dense;

 private:
  Choice choose(const Tensors& args) {
    check_wrt("jacobian", args, options.argnum);
    const GraphPtr g = trace_function(f, types_of(args));
    check_single_output("jacobian", g);
    const TensorType out = type_of(g->key(g->outputs()[0]));
    const Tensor& x = args[options.argnum];
    Choice c{sparse::ArgumentSignature::of(args), {}, out.shape, nullptr};
    c.shape.insert(c.shape.end(), x.shape().begin(), x.shape().end());
    JacobianChoice& j = c.choice;
    j.columns = x.numel();
    j.rows = out.numel();
    const double forward = static_cast<double>(j.columns), reverse = kReverseCost * static_cast<double>(j.rows);
    const bool real = !is_complex(x.dtype()) && !is_complex(out.dtype) && is_inexact(out.dtype);
    // The compressed modes' products: the colorings of the structural pattern, detected once on
    // the graph traced above (real values only; sparse derivatives take no complex ones).
    std::int64_t column_colors = -1, row_colors = -1;
    std::shared_ptr<const SparsityPattern> pattern;
    sparse::Coloring by_columns, by_rows;
    if (real && (options.mode == JacobianMode::Auto || options.mode == JacobianMode::Columns || options.mode == JacobianMode::Rows)) {
      const SparseOptions defaults;
      pattern = std::make_shared<SparsityPattern>(sparse::jacobian_pattern(*g, options.argnum, args, defaults.max_nonzeros));
      if (options.mode != JacobianMode::Rows) {
        by_columns = sparse::color_columns(*pattern, defaults.ordering);
        column_colors = by_columns.colors;
      }
      if (options.mode != JacobianMode::Columns) {
        by_rows = sparse::color_rows(*pattern, defaults.ordering);
        row_colors = by_rows.colors;
      }
    }
    if ((options.mode == JacobianMode::Columns || options.mode == JacobianMode::Rows) && !real) {
      throw DTypeError(std::string("jacobian: mode ") + jacobian_mode_name(options.mode) + " takes real arguments and results; got " +
                       x.type().to_string() + " -> " + out.to_string());
    }
    struct Candidate {
      JacobianMode mode;
      std::int64_t products;
      double cost;
    };
    std::vector<Candidate> candidates = {{JacobianMode::Forward, j.columns, forward}, {JacobianMode::Reverse, j.rows, reverse}};
    if (column_colors >= 0) candidates.push_back({JacobianMode::Columns, column_colors, static_cast<double>(column_colors)});
    if (row_colors >= 0) candidates.push_back({JacobianMode::Rows, row_colors, kReverseCost * static_cast<double>(row_colors)});
    // Cross-country: planned on the same graph; its cost in forward products.
    std::optional<sparse::CrossCountryPlan> plan;
    if (options.mode == JacobianMode::Auto || options.mode == JacobianMode::CrossCountry) {
      plan = sparse::plan_cross_country(g, options.argnum, options.order);
      if (options.mode == JacobianMode::CrossCountry && !plan->unsupported.empty()) throw_unsupported(*plan);
      if (plan->unsupported.empty()) candidates.push_back({JacobianMode::CrossCountry, 0, cross_country_products(*plan, std::min(forward, reverse))});
    }
    const Candidate* pick = nullptr;
    if (options.mode == JacobianMode::Auto) {
      const Candidate& extreme = forward <= reverse ? candidates[0] : candidates[1];
      pick = &extreme;
      for (const Candidate& k : candidates) {
        const bool compressed_mode = k.mode == JacobianMode::Columns || k.mode == JacobianMode::Rows;
        if (compressed_mode && k.cost <= kCompressedGain * extreme.cost && k.cost < pick->cost) pick = &k;
        if (k.mode == JacobianMode::CrossCountry && cross_country_wins(*plan, extreme.cost, pick->cost)) pick = &k;
      }
    } else {
      for (const Candidate& k : candidates) {
        if (k.mode == options.mode) pick = &k;
      }
    }
    j.mode = pick->mode;
    j.products = pick->products;
    if (j.mode == JacobianMode::Columns || j.mode == JacobianMode::Rows) {
      const bool rows = j.mode == JacobianMode::Rows;
      sparse::Coloring& coloring = rows ? by_rows : by_columns;
      compressed(j.mode).adopt(args,
                               SparseAnalysis{pattern, rows ? SparseMode::Rows : SparseMode::Columns, coloring.colors,
                                              std::move(coloring.color)},
                               out);
    }
    if (j.mode == JacobianMode::CrossCountry) {
      j.order = plan->order;
      const sparse::CrossCountryPlan planned = *plan;
      const std::size_t argnum = options.argnum;
      c.cross_country = std::make_shared<Program>(trace_function(
          [g, argnum, planned](const std::vector<Traced>& xs) { return std::vector<Traced>{sparse::record_cross_country(g, argnum, xs, planned)}; },
          types_of(args)));
    }
    j.predicted_cost = pick->cost;
    // A candidate as the explanation names it: its products, or a cross-country plan's predicted
    // cost in forward products and its order.
    auto describe = [&](const Candidate& k) {
      if (k.mode != JacobianMode::CrossCountry) return std::to_string(k.products) + " products";
      char cost[32];
      std::snprintf(cost, sizeof cost, "%.3g", k.cost);
      return std::string(elimination_order_name(plan->order)) + " order, cost " + cost;
    };
    j.explain = std::string(jacobian_mode_name(j.mode)) + ": " + describe(*pick) + " (";
    bool first = true;
    for (const Candidate& k : candidates) {
      if (k.mode == j.mode) continue;
      j.explain += std::string(first ? "" : ", ") + jacobian_mode_name(k.mode) + " " + describe(k);
      first = false;
    }
    j.explain += ")";
    return c;
  }

  std::mutex mutex;
  std::deque<Choice> choices;  // stable addresses: choice() returns references
  std::unique_ptr<SparseDerivative> by_columns, by_rows;
};

JacobianImpl::JacobianImpl(TracedFunction f, JacobianOptions options)
    : state_(std::make_shared<JacobianState>(std::move(f), options)) {}

JacobianChoice JacobianImpl::choice(const Tensors& args) const { return state_->choice(args).choice; }

Tensor JacobianImpl::operator()(const Tensors& args) const {
  const Choice& c = state_->choice(args);
  switch (c.choice.mode) {
    case JacobianMode::Forward: return state_->dense.jacfwd(args);
    case JacobianMode::Reverse: return state_->dense.jacrev(args);
    case JacobianMode::Columns:
    case JacobianMode::Rows: return state_->compressed(c.choice.mode)(args).to_dense().reshaped(c.shape);
    case JacobianMode::CrossCountry: return c.cross_country->run(args)[0];
    case JacobianMode::Auto: break;
  }
  throw Error("jacobian: no mode was chosen");
}

Traced JacobianImpl::traced(const std::vector<Traced>& args) const {
  const JacobianOptions& options = state_->options;
  if (options.mode == JacobianMode::Columns || options.mode == JacobianMode::Rows) {
    throw BindingError(std::string("jacobian: mode ") + jacobian_mode_name(options.mode) +
                       " reads argument values (the sparsity pattern); inside another transform use Auto, Forward, Reverse or CrossCountry");
  }
  using Kind = TransformedFunction::JacobianKind;
  if (options.mode == JacobianMode::Forward) return state_->dense.jacobian_traced(args, Kind::Forward);
  if (options.mode == JacobianMode::Reverse) return state_->dense.jacobian_traced(args, Kind::Reverse);
  std::vector<TensorType> types;
  for (const Traced& a : args) types.push_back(a.type());
  if (options.argnum >= args.size()) {
    throw BindingError("jacobian: argnum " + std::to_string(options.argnum) + " but the call has " + std::to_string(args.size()) + " arguments");
  }
  if (!is_inexact(types[options.argnum].dtype)) {
    throw DTypeError("jacobian: argument " + std::to_string(options.argnum) + " is " + types[options.argnum].to_string() +
                     "; only float or complex arguments are differentiated");
  }
  const GraphPtr g = trace_function(state_->f, types);
  check_single_output("jacobian", g);
  const sparse::CrossCountryPlan plan = sparse::plan_cross_country(g, options.argnum, options.order);
  if (options.mode == JacobianMode::CrossCountry) {
    if (!plan.unsupported.empty()) throw_unsupported(plan);
    return sparse::record_cross_country(g, options.argnum, args, plan);
  }
  // Auto: cross-country against the better extreme, by the same rule as a call on values.
  const TensorType out = type_of(g->key(g->outputs()[0]));
  const double forward = static_cast<double>(types[options.argnum].numel()), reverse = kReverseCost * static_cast<double>(out.numel());
  const double extreme = std::min(forward, reverse);
  if (cross_country_wins(plan, extreme, extreme)) return sparse::record_cross_country(g, options.argnum, args, plan);
  return state_->dense.jacobian_traced(args, forward <= reverse ? Kind::Forward : Kind::Reverse);
}

}  // namespace detail
}  // namespace tenferro
