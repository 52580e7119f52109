#pragma once
// Optimizers: SGD with momentum, Adam and AdamW as pure functions of traced values, so that a
// training step (loss, gradient and update) is one compiled program; learning-rate schedules; and
// L-BFGS with a strong-Wolfe line search for smooth deterministic objectives.
//
//   tf::optim::Optimizer opt = tf::optim::adam({.lr = 1e-3});
//   // One training step as a function of traced values [params..., state..., data...]:
//   auto step = [&](const tf::TracedList& v) {
//     tf::TracedList p(v.begin(), v.begin() + np), s(v.begin() + np, v.begin() + np + ns);
//     tf::TracedList g = ...the loss's gradients in p (tf::grad's traced form)...;
//     auto [p2, s2] = opt.step(p, g, s);
//     p2.insert(p2.end(), s2.begin(), s2.end());
//     return p2;                                     // compiled once, run every step
//   };
//
// Parameters, gradients and the state are flat lists of values (a tree's leaves in order,
// tenferro/tree.hpp); init() makes the state of a list of parameters: a step count (i64 scalar),
// then the optimizer's buffers, one per parameter and of its type. The state is a value like any
// other: carry it through a scan or return it from a program. Every function takes Traced values of
// a traced function or of eager tensors (tenferro/eager.hpp), so the same code runs compiled or at
// once.
//
// The updates are PyTorch's (torch.optim.SGD, Adam, AdamW, without amsgrad, maximize or
// dampening), operation for operation, so that a run matches PyTorch's to rounding:
//   SGD:   g += wd p;  b = mu b + g;  g = nesterov ? g + mu b : b (mu > 0);  p -= lr g
//   Adam:  g += wd p;  m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2;
//          p -= (lr / (1 - b1^t)) m / (sqrt(v) / sqrt(1 - b2^t) + eps)
//   AdamW: p *= 1 - lr wd first (decoupled decay), then Adam without the g += wd p.
// t counts steps from 1; the learning rate is the schedule's value at t - 1 (a constant by default).
#include <cstdint>
#include <string>
#include <utility>

#include "tenferro/function.hpp"
#include "tenferro/control_flow.hpp"
#include "tenferro/tensor.hpp"
#include "tenferro/traced.hpp"
#include "tenferro/transforms.hpp"

namespace tenferro::optim {

/// A learning rate as a function of the number of steps taken before this one (an i64 scalar:
/// 0 at the first step), returning an f64 scalar. A double converts to a constant schedule.
class Schedule {
 public:
  Schedule(double lr);  // NOLINT(google-explicit-constructor): `.lr = 1e-3` reads naturally
  explicit Schedule(Function<Traced(const Traced& count)> f, std::string name = "schedule")
      : f_(std::move(f)), name_(std::move(name)) {}
  /// The rate at `count` (an i64 scalar); its dtype is f64.
  Traced operator()(const Traced& count) const;
  /// The rate at a concrete count (runs the schedule eagerly).
  double at(std::int64_t count) const;
  const std::string& name() const { return name_; }

 private:
  Function<Traced(const Traced&)> f_;
  std::string name_;
};

/// lr * rate^(count / transition_steps) (optax.exponential_decay); staircase: the exponent floored.
Schedule exponential_decay(double lr, double rate, double transition_steps, bool staircase = false);
/// lr * ((1 - alpha) (1 + cos(pi min(count, decay_steps) / decay_steps)) / 2 + alpha) (optax.cosine_decay_schedule).
Schedule cosine_decay(double lr, std::int64_t decay_steps, double alpha = 0.0);
/// Linear from 0 to peak over warmup_steps, then cosine decay to end_value at decay_steps
/// (optax.warmup_cosine_decay_schedule).
Schedule warmup_cosine_decay(double peak, std::int64_t warmup_steps, std::int64_t decay_steps, double end_value = 0.0);
/// lr / (1 + count / transition_steps)^power.
Schedule inverse_time_decay(double lr, double transition_steps, double power = 1.0);

struct SgdOptions {
  Schedule lr = 0.01;
  double momentum = 0.0;
  bool nesterov = false;
  /// L2 penalty added to the gradient (torch.optim.SGD's weight_decay).
  double weight_decay = 0.0;
};

struct AdamOptions {
  Schedule lr = 1e-3;
  double b1 = 0.9;
  double b2 = 0.999;
  double eps = 1e-8;
  /// adam: an L2 penalty added to the gradient; adamw: decoupled decay of the parameters.
  double weight_decay = 0.0;
};

/// AdamOptions with AdamW's default decay (0.01, as torch.optim.AdamW): a struct of its own, so
/// that `adamw({.lr = 1e-3})` keeps that default.
struct AdamWOptions {
  Schedule lr = 1e-3;
  double b1 = 0.9;
  double b2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.01;
};

/// An optimizer: init() makes the state of a list of parameters, step() takes one step.
class Optimizer {
 public:
  using Init = Function<TracedList(const TracedList& params)>;
  using Step = Function<std::pair<TracedList, TracedList>(const TracedList& params, const TracedList& grads,
                                                               const TracedList& state)>;
  Optimizer(std::string name, Init init, Step step)
      : name_(std::move(name)), init_(std::move(init)), step_(std::move(step)) {}

  /// The state for `params` (float or complex values): the step count 0, then the buffers.
  TracedList init(const TracedList& params) const;
  /// (the parameters after one step, the next state). ShapeError naming the optimizer if grads or
  /// the state do not match params (counts, types); ValueError for an empty list.
  std::pair<TracedList, TracedList> step(const TracedList& params, const TracedList& grads,
                                         const TracedList& state) const;
  /// The state's concrete initial values for concrete parameters.
  Tensors init(const Tensors& params) const;
  /// One step on concrete values (run at once, eagerly): (the parameters after it, the next state).
  std::pair<Tensors, Tensors> step(const Tensors& params, const Tensors& grads, const Tensors& state) const;
  const std::string& name() const { return name_; }

 private:
  std::string name_;
  Init init_;
  Step step_;
};

Optimizer sgd(SgdOptions options = {});
Optimizer adam(AdamOptions options = {});
/// Adam with decoupled weight decay (torch.optim.AdamW).
Optimizer adamw(AdamWOptions options = {});

// ---- L-BFGS --------------------------------------------------------------------------------------

struct LbfgsOptions {
  /// Correction pairs kept (the memory).
  int history = 10;
  /// Iterations (line searches) at most.
  int max_iter = 1000;
  /// Converged when the largest |gradient component| is at most gtol.
  double gtol = 1e-10;
  /// Converged when the value decreases by at most ftol * max(|f|, |f_new|, 1) in an iteration.
  double ftol = 0.0;
  /// Strong Wolfe constants: sufficient decrease c1, curvature c2 (0 < c1 < c2 < 1).
  double c1 = 1e-4;
  double c2 = 0.9;
  /// Function evaluations per line search at most.
  int max_linesearch = 30;
};

struct LbfgsResult {
  /// The minimizer found, in the arguments' dtypes and shapes.
  Tensors x;
  double value = 0.0;
  /// The gradient at x.
  Tensors grad;
  int iterations = 0;
  int evaluations = 0;
  bool converged = false;
  /// Why it stopped ("gradient below gtol", "value change below ftol", "max_iter reached",
  /// "line search failed: ...").
  std::string message;
};

namespace detail {
LbfgsResult lbfgs_of(const tenferro::detail::TracedFunction& f, const Tensors& x0, const LbfgsOptions& options);
}  // namespace detail

/// Minimizes the real scalar f over its arguments (f32 or f64 tensors, all of them optimized),
/// starting from x0: L-BFGS (Nocedal and Wright, Algorithm 7.5) with a line search that satisfies
/// the strong Wolfe conditions (Algorithms 3.5 and 3.6, cubic interpolation). f's value and
/// gradient are one compiled program, traced once and run per evaluation; the iteration runs in
/// f64 on the host. With an exact line search (c2 near 0) it minimizes a convex quadratic in n
/// dimensions in at most n iterations (history >= n). Does not throw for non-convergence: see
/// converged and message. ValueError for bad options, DTypeError for non-float arguments or a
/// non-scalar f.
template <class F>
LbfgsResult lbfgs(F f, const Tensors& x0, const LbfgsOptions& options = {}) {
  return detail::lbfgs_of(tenferro::detail::erase_function(std::move(f)), x0, options);
}

}  // namespace tenferro::optim
