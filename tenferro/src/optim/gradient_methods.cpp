// SGD, Adam, AdamW and the learning-rate schedules (tenferro/optim.hpp). Each update is written
// operation for operation as PyTorch's single-tensor CPU implementation computes it (the order of
// the multiplications and additions, lerp for Adam's first moment), so that runs agree with
// PyTorch's to rounding.
#include <cmath>
#include <numbers>

#include "tenferro/eager.hpp"
#include "tenferro/error.hpp"
#include "tenferro/math.hpp"
#include "tenferro/optim.hpp"

namespace tenferro::optim {

namespace {

Traced f64_scalar(const Traced& like, double v) { return constant(like, Tensor::scalar(v)); }

/// The step count as f64 (the schedules and bias corrections compute in f64).
Traced as_f64(const Traced& count) { return astype(count, DType::F64); }

void require_finite(const char* who, const char* what, double v) {
  if (!std::isfinite(v)) throw ValueError(std::string(who) + ": " + what + " is " + std::to_string(v));
}

}  // namespace

// ---- schedules -----------------------------------------------------------------------------------

Schedule::Schedule(double lr)
    : f_([lr](const Traced& count) { return f64_scalar(count, lr); }), name_("constant(" + std::to_string(lr) + ")") {}

Traced Schedule::operator()(const Traced& count) const {
  if (count.type() != TensorType{DType::I64, {}}) {
    throw DTypeError("optim::Schedule " + name_ + ": the step count is " + count.type().to_string() +
                     "; expected an i64 scalar");
  }
  Traced lr = f_(count);
  if (lr.type() != TensorType{DType::F64, {}}) {
    throw DTypeError("optim::Schedule " + name_ + ": returns " + lr.type().to_string() + "; expected an f64 scalar");
  }
  return lr;
}

double Schedule::at(std::int64_t count) const {
  const EagerTensor c(Tensor::from(std::vector<std::int64_t>{count}, {}));
  return eager_value((*this)(static_cast<Traced>(c))).element(0).real();
}

Schedule exponential_decay(double lr, double rate, double transition_steps, bool staircase) {
  if (!(transition_steps > 0) || !(rate > 0)) {
    throw ValueError("optim::exponential_decay: rate and transition_steps must be positive (got " + std::to_string(rate) +
                     ", " + std::to_string(transition_steps) + ")");
  }
  return Schedule([=](const Traced& count) {
    Traced e = as_f64(count) / transition_steps;
    if (staircase) e = floor(e);
    return pow(f64_scalar(count, rate), e) * lr;
  }, "exponential_decay");
}

Schedule cosine_decay(double lr, std::int64_t decay_steps, double alpha) {
  if (decay_steps <= 0) throw ValueError("optim::cosine_decay: decay_steps must be positive, got " + std::to_string(decay_steps));
  return Schedule([=](const Traced& count) {
    const Traced t = minimum(as_f64(count), f64_scalar(count, static_cast<double>(decay_steps)));
    const Traced c = (cos(t * (std::numbers::pi / static_cast<double>(decay_steps))) + 1.0) * 0.5;
    return (c * (1.0 - alpha) + alpha) * lr;
  }, "cosine_decay");
}

Schedule warmup_cosine_decay(double peak, std::int64_t warmup_steps, std::int64_t decay_steps, double end_value) {
  if (warmup_steps < 0 || decay_steps <= warmup_steps) {
    throw ValueError("optim::warmup_cosine_decay: needs 0 <= warmup_steps < decay_steps (got " +
                     std::to_string(warmup_steps) + ", " + std::to_string(decay_steps) + ")");
  }
  return Schedule([=](const Traced& count) {
    const Traced t = as_f64(count);
    const Traced warm = t * (peak / static_cast<double>(std::max<std::int64_t>(warmup_steps, 1)));
    const double span = static_cast<double>(decay_steps - warmup_steps);
    const Traced into = minimum(t - static_cast<double>(warmup_steps), f64_scalar(count, span));
    const Traced c = (cos(into * (std::numbers::pi / span)) + 1.0) * 0.5;
    const Traced decayed = c * (peak - end_value) + end_value;
    return where(lt(t, f64_scalar(count, static_cast<double>(warmup_steps))), warm, decayed);
  }, "warmup_cosine_decay");
}

Schedule inverse_time_decay(double lr, double transition_steps, double power) {
  if (!(transition_steps > 0)) throw ValueError("optim::inverse_time_decay: transition_steps must be positive");
  return Schedule([=](const Traced& count) {
    return lr / pow(as_f64(count) / transition_steps + 1.0, f64_scalar(count, power));
  }, "inverse_time_decay");
}

// ---- the optimizer's checks ----------------------------------------------------------------------

TracedList Optimizer::init(const TracedList& params) const {
  if (params.empty()) throw ValueError("optim::" + name_ + ".init: no parameters");
  for (const Traced& p : params) {
    if (!is_inexact(p.dtype())) {
      throw DTypeError("optim::" + name_ + ".init: a parameter of type " + p.type().to_string() +
                       "; expected float or complex parameters");
    }
  }
  return init_(params);
}

namespace {
TracedList eager_values(const Tensors& values) {
  TracedList out;
  for (const Tensor& v : values) out.push_back(static_cast<Traced>(EagerTensor(v)));
  return out;
}
Tensors values_of(const TracedList& values) {
  Tensors out;
  for (const Traced& v : values) out.push_back(eager_value(v));
  return out;
}
}  // namespace

Tensors Optimizer::init(const Tensors& params) const { return values_of(init(eager_values(params))); }

std::pair<Tensors, Tensors> Optimizer::step(const Tensors& params, const Tensors& grads, const Tensors& state) const {
  // Without history: the values are the result, not a graph to differentiate.
  const NoGrad no_grad;
  auto [p, s] = step(eager_values(params), eager_values(grads), eager_values(state));
  return {values_of(p), values_of(s)};
}

std::pair<TracedList, TracedList> Optimizer::step(const TracedList& params, const TracedList& grads,
                                                  const TracedList& state) const {
  const std::string who = "optim::" + name_ + ".step";
  if (params.empty()) throw ValueError(who + ": no parameters");
  if (grads.size() != params.size()) {
    throw ShapeError(who + ": " + std::to_string(grads.size()) + " gradients for " + std::to_string(params.size()) +
                     " parameters");
  }
  for (std::size_t i = 0; i < params.size(); ++i) {
    if (grads[i].type() != params[i].type()) {
      throw ShapeError(who + ": gradient " + std::to_string(i) + " is " + grads[i].type().to_string() +
                       " for a parameter " + params[i].type().to_string());
    }
  }
  // The state's layout is init's for these parameters: compare types with a fresh init.
  const TracedList expected = init_(params);
  bool ok = state.size() == expected.size();
  for (std::size_t i = 0; ok && i < state.size(); ++i) ok = state[i].type() == expected[i].type();
  if (!ok) {
    std::string got, want;
    for (const Traced& s : state) got += (got.empty() ? "" : ", ") + s.type().to_string();
    for (const Traced& s : expected) want += (want.empty() ? "" : ", ") + s.type().to_string();
    throw ShapeError(who + ": the state is (" + got + "); expected (" + want + "), init() of these parameters");
  }
  return step_(params, grads, state);
}

// ---- SGD ------------------------------------------------------------------------------------------

Optimizer sgd(SgdOptions o) {
  require_finite("optim::sgd", "momentum", o.momentum);
  require_finite("optim::sgd", "weight_decay", o.weight_decay);
  if (o.momentum < 0) throw ValueError("optim::sgd: momentum " + std::to_string(o.momentum) + " is negative");
  if (o.nesterov && o.momentum <= 0) throw ValueError("optim::sgd: nesterov needs a positive momentum");
  const bool buffers = o.momentum != 0;
  auto init = [buffers](const TracedList& params) {
    TracedList s{constant(params[0], Tensor::from(std::vector<std::int64_t>{0}, {}))};
    if (buffers) {
      for (const Traced& p : params) s.push_back(full_like(p, 0.0));
    }
    return s;
  };
  auto step = [o, buffers](const TracedList& params, const TracedList& grads, const TracedList& state) {
    const Traced& count = state[0];
    const Traced lr = o.lr(count);
    TracedList next_params, next_state{count + constant(count, Tensor::from(std::vector<std::int64_t>{1}, {}))};
    for (std::size_t i = 0; i < params.size(); ++i) {
      const Traced& p = params[i];
      const DType d = p.dtype();
      Traced g = grads[i];
      if (o.weight_decay != 0) g = g + p * o.weight_decay;
      if (buffers) {
        const Traced buf = state[1 + i] * o.momentum + g;
        next_state.push_back(buf);
        g = o.nesterov ? g + buf * o.momentum : buf;
      }
      next_params.push_back(p + astype(-lr, d) * g);
    }
    return std::pair{next_params, next_state};
  };
  return Optimizer("sgd", init, step);
}

// ---- Adam and AdamW -------------------------------------------------------------------------------

namespace {
Optimizer adam_like(const char* name, AdamOptions o, bool decoupled) {
  const std::string who = std::string("optim::") + name;
  for (auto [what, v] : {std::pair{"b1", o.b1}, std::pair{"b2", o.b2}}) {
    if (!(v >= 0 && v < 1)) throw ValueError(who + ": " + what + " must lie in [0, 1), got " + std::to_string(v));
  }
  if (!(o.eps >= 0)) throw ValueError(who + ": eps must be non-negative, got " + std::to_string(o.eps));
  require_finite(who.c_str(), "weight_decay", o.weight_decay);
  auto init = [who](const TracedList& params) {
    TracedList s{constant(params[0], Tensor::from(std::vector<std::int64_t>{0}, {}))};
    for (const Traced& p : params) {
      // PyTorch's Adam on a complex tensor is Adam on its real and imaginary parts apart, which is
      // what separate real parameters give; no complex form is offered.
      if (is_complex(p.dtype())) {
        throw DTypeError(who + ": a complex parameter " + p.type().to_string() +
                         "; Adam takes real parameters (optimize the real and imaginary parts as two)");
      }
    }
    for (const Traced& p : params) s.push_back(full_like(p, 0.0));  // first moments
    for (const Traced& p : params) s.push_back(full_like(p, 0.0));  // second moments
    return s;
  };
  auto step = [o, decoupled](const TracedList& params, const TracedList& grads, const TracedList& state) {
    const std::size_t n = params.size();
    const Traced& count = state[0];
    const Traced lr = o.lr(count);
    const Traced t = count + constant(count, Tensor::from(std::vector<std::int64_t>{1}, {}));
    const Traced tf64 = as_f64(t);
    const Traced bias1 = 1.0 - pow(f64_scalar(count, o.b1), tf64);
    const Traced bias2_sqrt = sqrt(1.0 - pow(f64_scalar(count, o.b2), tf64));
    const Traced neg_step_size = -(lr / bias1);
    TracedList next_params, moments1, moments2;
    for (std::size_t i = 0; i < n; ++i) {
      Traced p = params[i];
      const DType d = p.dtype();
      Traced g = grads[i];
      if (decoupled) {
        if (o.weight_decay != 0) p = p * astype(1.0 - lr * o.weight_decay, d);
      } else if (o.weight_decay != 0) {
        g = g + p * o.weight_decay;
      }
      const Traced& m = state[1 + i];
      const Traced& v = state[1 + n + i];
      const Traced m2 = m + (g - m) * (1.0 - o.b1);                                     // lerp, weight < 0.5
      const Traced v2 = v * o.b2 + g * (1.0 - o.b2) * g;                               // addcmul
      const Traced denom = sqrt(v2) / astype(bias2_sqrt, d) + o.eps;
      next_params.push_back(p + astype(neg_step_size, d) * m2 / astype(denom, d));
      moments1.push_back(m2);
      moments2.push_back(v2);
    }
    TracedList next_state{t};
    next_state.insert(next_state.end(), moments1.begin(), moments1.end());
    next_state.insert(next_state.end(), moments2.begin(), moments2.end());
    return std::pair{next_params, next_state};
  };
  return Optimizer(name, init, step);
}
}  // namespace

Optimizer adam(AdamOptions options) { return adam_like("adam", options, false); }
Optimizer adamw(AdamWOptions o) {
  return adam_like("adamw", AdamOptions{o.lr, o.b1, o.b2, o.eps, o.weight_decay}, true);
}

}  // namespace tenferro::optim
