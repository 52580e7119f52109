// jacobian (tenferro/jacobian.hpp): the choice between the extremes and the compressed modes.
#include "tenferro/jacobian.hpp"

#include <cstring>
#include <deque>
#include <mutex>

#include "sparse/coloring.hpp"
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
  }
  return "?";
}

namespace detail {
namespace {

/// Compressed modes must save at least this share of the better extreme's products: they pay a
/// read-back of every nonzero into the dense result.
constexpr double kCompressedGain = 0.8;

struct Choice {
  sparse::ArgumentSignature signature;
  JacobianChoice choice;
  Shape shape;  // the Jacobian's: output... + argument...
};

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
    Choice c{sparse::ArgumentSignature::of(args), {}, out.shape};
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
    const Candidate* pick = nullptr;
    if (options.mode == JacobianMode::Auto) {
      const Candidate& extreme = forward <= reverse ? candidates[0] : candidates[1];
      pick = &extreme;
      for (const Candidate& k : candidates) {
        const bool compressed_mode = k.mode == JacobianMode::Columns || k.mode == JacobianMode::Rows;
        if (compressed_mode && k.cost <= kCompressedGain * extreme.cost && k.cost < pick->cost) pick = &k;
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
    j.predicted_cost = pick->cost;
    j.explain = std::string(jacobian_mode_name(j.mode)) + ": " + std::to_string(j.products) + " products (";
    bool first = true;
    for (const Candidate& k : candidates) {
      if (k.mode == j.mode) continue;
      j.explain += std::string(first ? "" : ", ") + jacobian_mode_name(k.mode) + " " + std::to_string(k.products);
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
    case JacobianMode::Auto: break;
  }
  throw Error("jacobian: no mode was chosen");
}

}  // namespace detail
}  // namespace tenferro
