// check_program (program_check.hpp): every check runs through the public API on one program.
#include "tenferro/testing/program_check.hpp"
#include "tenferro/program.hpp"
#include "tenferro/operand_space.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <random>
#include <sstream>
#include <typeinfo>

#include "check_math.hpp"
#include "fuzz_internal.hpp"

namespace tenferro::testing {

namespace {

/// Restores the process-wide executor options and thread count on scope exit.
struct SettingsGuard {
  ExecOptions options = exec_options();
  int threads = num_threads();
  ~SettingsGuard() {
    set_exec_options(options);
    set_num_threads(threads);
  }
};

/// Thrown by a failing check to end the program's checks (caught in check_program).
struct CheckFailed {
  std::string check, message;
};

/// For each product of the program (prod over some axes), the largest and the smallest partial
/// sum of log|x| along its fold, as f64 scalars: the logarithms of the partial products that
/// reduce_prod's left fold (row-major over the reduced indices, reduce.cpp) passes through. A
/// factor 0 makes the rest of its fold -inf, which the smallest leaves out (the product is 0 in
/// any precision from there on).
std::vector<Traced> product_fold_extremes(const RandomProgram& p, const std::vector<Traced>& values) {
  std::vector<Traced> out;
  for (const FuzzNode& n : p.nodes) {
    if (n.op != FuzzOp::Prod || n.ints.empty()) continue;
    const Traced& x = values.at(static_cast<std::size_t>(n.args.at(0)));
    if (x.type().numel() == 0 || !is_inexact(x.dtype())) continue;
    // The kept axes, then the reduced ones in order: the fold runs along the last axis.
    const auto rank = static_cast<std::int64_t>(x.rank());
    std::vector<bool> reduced(static_cast<std::size_t>(rank), false);
    for (std::int64_t a : n.ints) reduced[static_cast<std::size_t>((a + rank) % rank)] = true;
    std::vector<std::int64_t> perm;
    std::int64_t kept = 1, folded = 1;
    for (bool fold : {false, true}) {
      for (std::int64_t i = 0; i < rank; ++i) {
        if (reduced[static_cast<std::size_t>(i)] != fold) continue;
        perm.push_back(i);
        (fold ? folded : kept) *= x.shape()[static_cast<std::size_t>(i)];
      }
    }
    const Traced logs = log(astype(abs(x), DType::F64));
    const Traced partials = cumsum(reshape(transpose(logs, perm), {kept, folded}), 1);
    out.push_back(max(partials, {0, 1}));
    out.push_back(min(where(gt(partials, full_like(partials, -1e300)), partials, 0.0), {0, 1}));
  }
  return out;
}

class Checker {
 public:
  Checker(const RandomProgram& program, const CheckConfig& config, ProgramReport& report)
      : p_(program), config_(config), report_(report), rng_(config.seed ^ (program.seed * 0x9e3779b97f4a7c15ULL)) {}

  /// The check (or call) in progress: where an exception came from.
  const std::string& step() const { return step_; }

  /// Runs every check; throws CheckFailed at the first failure.
  void run() {
    const RandomProgram* p = &p_;
    auto loss = [p](const auto&... a) { return apply_loss(*p, std::vector<Traced>{a...}); };
    auto both = [p](const auto&... a) {
      const std::vector<Traced> args{a...};
      return std::vector<Traced>{apply_loss(*p, args), apply_y(*p, args)};
    };
    auto y_of = [p](const auto&... a) { return apply_y(*p, std::vector<Traced>{a...}); };
    const Tensors& x = p_.inputs;

    step_ = "trace";
    Program forward(detail::trace_graph(both, detail::types_of(x)));
    cond_ = std::max(1.0, largest_value(x));
    check_passes_and_threads(forward, x);
    if (config_.vmap) check_vmap(forward, both, x);
    if (!config_.derivatives) return;

    step_ = "value_and_grad";
    std::vector<std::size_t> argnums(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) argnums[i] = i;
    auto vg = value_and_grad(loss, argnums);
    const Tensors base = forward.run(x);
    if (p_.loss_dtype == DType::F32) {
      check_against_widened(vg, x);
      return;
    }
    const double l = base[0].element(0).real();
    if (!std::isfinite(l) || std::abs(l) > 1e8) return skip("derivatives:nonfinite_or_huge_loss");
    auto [value, grads] = vg.call(x);
    if (at_tie()) skip("value:tie");
    else expect_near("value", value, base[0], 1e-12);
    for (const auto& g : grads) {
      if (!all_finite(g)) return skip("derivatives:nonfinite_gradient");
    }
    grads_ = grads;
    check_gradient_passes_and_threads(vg, x, grads);
    check_eager(x, value, grads);

    const Tensors t = random_like(x), v = random_like(x), w = random_like(x);
    // A derivative through a point where an intermediate's derivative is infinite (sqrt or
    // log at 0, behind a relu or a where that zeroes its tangent) may be 0 * inf = NaN in one
    // mode and 0 in the other (tangents are multiplied, cotangents selected): not compared.
    step_ = "hvp";
    const Tensors ht = hvp(loss, x, t), hv = hvp(loss, x, v);
    double gmax = 0;
    for (const auto& g : grads) gmax = std::max(gmax, max_abs(g));
    step_ = "grad_fd";
    double along_t = 0;
    for (std::size_t i = 0; i < x.size(); ++i) along_t += inner(grads[i], t[i]);
    auto phi = [&](double h) { return forward.run(shifted(x, h, t)); };
    const bool smooth_along_t = same_branches_along(x, t) && slow_along(t, ht, grads, "grad_fd");
    if (!same_branches_along(x, t)) skip("grad_fd:branch");
    if (smooth_along_t) {
      const Difference loss_fd = central_difference([&](double h) { return phi(h)[0]; }, kStep);
      expect_difference("grad_fd", Tensor::scalar(along_t, DType::F64), loss_fd, std::abs(l));
    }

    step_ = "jvp";
    auto [jv_value, jv] = jvp(loss, x, t);
    double scale = 0;
    for (std::size_t i = 0; i < x.size(); ++i) scale += norm(grads[i]) * norm(t[i]);
    if (!all_finite(jv)) skip("jvp:nonfinite");
    else expect_within("jvp", jv.element(0).real(), along_t, 1e-10 * scale + 1e-13 * cond_ * (1 + std::abs(l)) * norm(concatenated(t)));

    const Tensor& y = base[1];
    const auto y_tangent = is_inexact(y.dtype()) && all_finite(y) ? std::optional(jvp(y_of, x, t)) : std::nullopt;
    if (y_tangent && all_finite(y_tangent->second)) {
      step_ = "jvp(y)";
      const auto& [y_value, jt] = *y_tangent;
      if (at_tie()) skip("value:tie");
      else expect_near("value", y_value, y, 1e-12);
      step_ = "y_fd";
      if (smooth_along_t) {
        const Difference y_fd = central_difference([&](double h) { return phi(h)[1]; }, kStep);
        expect_difference("y_fd", jt, y_fd, max_abs(y));
      } else {
        skip("y_fd:branch_or_fast_varying");
      }
      step_ = "vjp(y)";
      const Tensor ct = random_like(Tensors{y})[0];
      auto [y_value2, cts] = vjp(y_of, x, ct);
      double rhs = 0, size = norm(ct) * norm(jt);
      for (std::size_t i = 0; i < x.size(); ++i) {
        rhs += inner(cts[i], t[i]);
        size += norm(cts[i]) * norm(t[i]);
      }
      // As for hvp_sym: the rounding of terms that cancel can leave J t tiny but not zero.
      if (!all_finite(concatenated(cts))) skip("adjoint:nonfinite");
      else expect_within("adjoint", inner(ct, jt), rhs, 1e-10 * size + 1e-13 * cond_ * norm(ct) * norm(concatenated(t)) * (1 + max_abs(y)));
      if (!is_complex(y.dtype()) && !is_complex(x[0].dtype())) check_jacobians(y_of, x, y);
    } else {
      skip("y:not_inexact_or_nonfinite");
    }

    step_ = "hvp";
    if (!all_finite(concatenated(hv)) || !all_finite(concatenated(ht))) return skip("hvp:nonfinite");
    if (!same_branches_along(x, v)) {
      skip("hvp_fd:branch");
    } else if (slow_along(v, hv, grads, "hvp_fd")) {
      const Difference grad_fd = central_difference_all([&](double h) { return vg.call(shifted(x, h, v)).second; }, kStep);
      expect_difference_all("hvp_fd", hv, grad_fd, gmax);
    }
    step_ = "hvp_sym";
    const Tensors hw = hvp(loss, x, w);
    double lhs = 0, rhs = 0, size = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      lhs += inner(w[i], hv[i]);
      rhs += inner(hw[i], v[i]);
      size += norm(w[i]) * norm(hv[i]) + norm(hw[i]) * norm(v[i]);
    }
    // Rounding in H v scales with the terms it sums, which may cancel to a tiny H v (the Hessian
    // of x / x sums terms of size 1 / x^2). Their rounding shows in how far H (v + w) is from
    // H v + H w (exactly equal in exact arithmetic): that defect, times 10, joins the tolerance.
    const Tensors hvw = hvp(loss, x, shifted(v, 1.0, w));
    const Tensor linear_defect = tidu::OperandSpace<Tensor>::add_scaled(
        tidu::OperandSpace<Tensor>::add_scaled(concatenated(hvw), -1.0, concatenated(hv)), -1.0, concatenated(hw));
    hvp_noise_ = norm(linear_defect) / (norm(concatenated(v)) + norm(concatenated(w)) + 1e-300);
    const double noise = norm(linear_defect) * (norm(concatenated(v)) + norm(concatenated(w)));
    expect_within("hvp_sym", lhs, rhs,
                  1e-9 * size + 10 * noise + 1e-12 * cond_ * (1 + gmax) * norm(concatenated(v)) * norm(concatenated(w)));
    if (x[0].numel() <= 16) check_hessian(loss, x, v);
  }

 private:
  void check_passes_and_threads(const Program& forward, const Tensors& x) {
    SettingsGuard guard;
    ExecOptions on = guard.options;
    on.fuse_elementwise = on.eliminate_dead_code = on.scalar_path = on.fold_transpose = true;
    on.compile_arithmetic = on.narrow_slices = true;
    // Fusion, dead-code elimination and compiled arithmetic never change a bit (exec_options.hpp,
    // exec/arith_jit.hpp: "plain" runs every instruction in the interpreter); folding a
    // transpose into a GEMM, narrowing a product to the slices read of it and the scalar
    // interpreter (glibc's scalar libm instead of the vector math) may change the last bits
    // (docs/tenferro.md, "Execution").
    ExecOptions plain = on;
    plain.fuse_elementwise = plain.eliminate_dead_code = plain.compile_arithmetic = false;
    ExecOptions off = plain;
    off.fold_transpose = off.scalar_path = off.narrow_slices = false;
    step_ = "forward";
    set_exec_options(on);
    const Tensors base = forward.run(x);
    set_exec_options(plain);
    expect_bitwise("passes_bitwise", forward.run(x), base);
    set_exec_options(off);
    const Tensors unpassed = forward.run(x);
    set_exec_options(on);
    const bool ill_conditioned = amplifies_rounding(forward, x, base);
    if (ill_conditioned) skip("passes_off:ill_conditioned");
    else expect_near_unless_tie("passes_off", unpassed, base);
    if (config_.threads) {
      step_ = "threads";
      set_num_threads(1);
      const Tensors one = forward.run(x);
      set_num_threads(2);
      // OpenBLAS may split a GEMM's contracted dimension among its threads (threads.hpp).
      if (calls_blas() && ill_conditioned) skip("threads:ill_conditioned");
      else if (calls_blas()) expect_near_unless_tie("threads", forward.run(x), one);
      else expect_bitwise("threads_bitwise", forward.run(x), one);
    }
    ++report_.checks_run;
  }

  /// vmap (tenferro/vmap.hpp) of the program over a batch of two examples, x and x nudged (float
  /// entries moved by about 1e-9 relative), against the program run on each: every op's batching
  /// rule, composed as the program composes them. Skipped where the program is at a tie of a jump
  /// or amplifies rounding.
  template <class Both>
  void check_vmap(const Program& forward, const Both& both, const Tensors& x) {
    step_ = "vmap";
    // Each input is drawn batched (its two examples stacked) or shared (in_axes nullopt: the same
    // for both), at least one batched, so the rules meet every mix of batched and unbatched
    // operands that the program's data flow makes.
    if (x.empty()) return;
    std::vector<std::optional<std::int64_t>> in_axes(x.size());
    for (auto& axis : in_axes) {
      if (rng_() % 3 != 0) axis = 0;
    }
    if (std::none_of(in_axes.begin(), in_axes.end(), [](const auto& a) { return a.has_value(); })) in_axes[rng_() % x.size()] = 0;
    Tensors nudged, stacked;
    for (std::size_t i = 0; i < x.size(); ++i) {
      const Tensor& xi = x[i];
      Tensor n = xi;
      if (!in_axes[i]) {
        nudged.push_back(xi);
        stacked.push_back(xi);
        continue;
      }
      if (is_inexact(xi.dtype())) {
        n = shifted(Tensors{xi}, std::ldexp(1.0, -30), random_like(Tensors{xi}))[0];
      }
      Shape shape = xi.shape();
      shape.insert(shape.begin(), 2);
      Tensor s = Tensor::uninitialized(TensorType{xi.dtype(), std::move(shape)});
      std::memcpy(s.raw_data(), xi.raw_data(), xi.nbytes());
      std::memcpy(static_cast<char*>(s.raw_data()) + xi.nbytes(), n.raw_data(), n.nbytes());
      nudged.push_back(std::move(n));
      stacked.push_back(std::move(s));
    }
    auto batched_both = [&both, &in_axes]<class... A>(const A&... a)
      requires(sizeof...(A) > 0)
    { return vmap(both, {.in_axes = in_axes})(a...); };
    const Program batched(detail::trace_graph(batched_both, detail::types_of(stacked)));
    const Tensors rows = batched.run(stacked);
    const Tensors first = forward.run(x), second = forward.run(nudged);
    if (amplifies_rounding(forward, x, first)) return skip("vmap:ill_conditioned");
    auto row = [](const Tensor& b, int k) {
      Shape shape(b.shape().begin() + 1, b.shape().end());
      Tensor r = Tensor::uninitialized(TensorType{b.dtype(), std::move(shape)});
      std::memcpy(r.raw_data(), static_cast<const char*>(b.raw_data()) + k * r.nbytes(), r.nbytes());
      return r;
    };
    Tensors row0, row1;
    for (const Tensor& b : rows) {
      row0.push_back(row(b, 0));
      row1.push_back(row(b, 1));
    }
    // A batched reduction or GEMM may sum in another order than the unbatched one (another
    // blocking of the same sum): differences up to about n eps sum|terms|, which the outputs'
    // scale does not bound (a sum of 3000 f64 terms that cancel to 0.5 differed by 5e-12; a sum
    // of 20000 f32 terms of 0.8 by 1.6e-4 relative, within n eps). A wrong batching rule gives
    // differences of the values' own size, so the comparison allows 1e-9 (f64) and 2e-3 (f32)
    // relative.
    if (at_tie()) return skip("vmap:tie");
    const double rtol = p_.loss_dtype == DType::F32 ? 2e-3 : 1e-9;
    for (std::size_t o = 0; o < rows.size(); ++o) {
      if (all_finite(first[o])) expect_near("vmap", row0[o], first[o], rtol);
      if (all_finite(second[o])) expect_near("vmap", row1[o], second[o], rtol);
    }
  }

  /// The loss and its gradients in eager mode (tenferro/eager.hpp): the inputs as leaves (the
  /// float and complex ones requiring grad), the calls run as they are recorded (the ops' own
  /// kernels, not the fused ones), backward() through the recorded operations; against the traced
  /// value and gradients.
  void check_eager(const Tensors& x, const Tensor& value, const Tensors& grads) {
    step_ = "eager";
    if (at_tie()) return skip("eager:tie");
    std::vector<EagerTensor> leaves;
    std::vector<Traced> args;
    for (const Tensor& xi : x) {
      leaves.emplace_back(xi, is_inexact(xi.dtype()));
      args.push_back(leaves.back());
    }
    const EagerTensor loss = apply_loss(p_, args);
    expect_near("eager_value", loss.value(), value, 1e-12);
    if (!loss.requires_grad()) {  // no differentiable path from an input: the gradients are zero
      for (std::size_t i = 0; i < x.size(); ++i) {
        if (is_inexact(x[i].dtype())) expect_near("eager_grad", Tensor(x[i].type()), grads[i], 0.0);
      }
      return;
    }
    loss.backward();
    for (std::size_t i = 0; i < x.size(); ++i) {
      if (!is_inexact(x[i].dtype())) continue;
      const EagerTensor g = leaves[i].grad();
      expect_near("eager_grad", g.defined() ? g.value() : Tensor(x[i].type()), grads[i], 1e-10);
    }
  }

  /// The largest finite magnitude among the program's values at x. Rounding errors scale with
  /// it: a last-bit difference in a value of magnitude M changes what follows by about eps M
  /// times the sensitivity (cos of a value near 4e6 computed two ways differs by about 1e-9), so
  /// the tolerances of comparisons between two computations are multiplied by max(1, M).
  double largest_value(const Tensors& x) {
    double m = 0;
    for (const Tensor& v : traced([](const RandomProgram& p, const std::vector<Traced>& args) {
                             return apply_values(p, args);
                           }).run(x)) {
      for (std::int64_t i = 0; i < v.numel(); ++i) {
        const double a = std::abs(v.element(i));
        if (std::isfinite(a)) m = std::max(m, a);
      }
    }
    return m;
  }

  /// Whether f varies slowly enough along `dir` for central differences at kStep: the scale of
  /// its variation, about |<dir, H dir>| / |<grad, dir>|, times the step must be small. (A
  /// function like cos(e^(e^x)) oscillates far faster than the step, and its differences at two
  /// steps agree with each other while both miss the derivative.) Counts a skip if not.
  bool slow_along(const Tensors& dir, const Tensors& h_dir, const Tensors& grads, const char* check) {
    double curvature = 0, slope = 0;
    for (std::size_t i = 0; i < dir.size(); ++i) {
      curvature += inner(dir[i], h_dir[i]);
      slope += inner(grads[i], dir[i]);
    }
    if (kStep * std::abs(curvature) <= 0.1 * (std::abs(slope) + 1)) return true;
    skip(std::string(check) + ":fast_varying");
    return false;
  }

  /// Whether a call may run a GEMM (dot_general, matmul).
  bool calls_blas() const {
    for (const auto& n : p_.nodes) {
      if (n.op == FuzzOp::DotGeneral || n.op == FuzzOp::Matmul) return true;
    }
    return false;
  }

  /// A program over the random program's inputs: `f(program, args)` gives its outputs.
  template <class F>
  Program traced(F f) const {
    const RandomProgram* p = &p_;
    auto g = [p, f](const auto&... a) { return f(*p, std::vector<Traced>{a...}); };
    return Program(detail::trace_graph(g, detail::types_of(p_.inputs)));
  }

  /// The branches the program takes at x (jump_indicators with kinks): a central difference is
  /// only meaningful when all its points take the branches x takes.
  Tensors branches(const Tensors& x) {
    if (!branches_) {
      branches_.emplace(traced([](const RandomProgram& p, const std::vector<Traced>& args) {
        return jump_indicators(p, apply_values(p, args), /*kinks=*/true);
      }));
    }
    if (branches_->graph()->outputs().empty()) return {};
    return branches_->run(x);
  }

  /// Whether a jump of the program (a comparison, sign, conversion to an integer or bool) is
  /// within rounding of its threshold at the program's inputs (jump_margins): then another
  /// computation of the program (other passes, threads, the gradient program, single precision)
  /// may take the other side, and results computed two ways are not compared.
  bool at_tie(bool kinks = false) {
    std::optional<bool>& tie = kinks ? kink_tie_ : tie_;
    if (!tie) {
      Program margins = traced([kinks](const RandomProgram& p, const std::vector<Traced>& args) {
        return jump_margins(p, apply_values(p, args), kinks);
      });
      tie = false;
      if (!margins.graph()->outputs().empty()) {
        for (const Tensor& m : margins.run(p_.inputs)) {
          const double margin = m.element(0).real();
          if (!(margin > 1e-6)) tie = true;  // NaN margins count as ties too
        }
      }
    }
    return *tie;
  }

  /// Whether every point x + s dir of the central differences (s = +-h0/2, +-h0, +-2 h0) takes
  /// the branches that x takes.
  bool same_branches_along(const Tensors& x, const Tensors& dir) {
    const Tensors at_x = branches(x);
    if (at_x.empty()) return true;
    for (double s : {-2.0, -1.0, -0.5, 0.5, 1.0, 2.0}) {
      const Tensors at = branches(shifted(x, s * kStep, dir));
      for (std::size_t o = 0; o < at.size(); ++o) {
        if (!same_bits(at[o], at_x[o])) return false;
      }
    }
    return true;
  }

  /// Whether the program amplifies rounding beyond the comparisons' tolerance: its outputs at the
  /// inputs moved by a few units in their last place (x (1 + 8 eps)) differ from those at x by more
  /// than expect_near_unless_tie allows. Two computations that may round differently (passes off,
  /// one thread against two) then disagree for the same reason, so comparing them says nothing:
  /// a chaotic recurrence scanned over 20011 steps turns a last-bit difference into an O(1) one.
  bool amplifies_rounding(const Program& forward, const Tensors& x, const Tensors& base) {
    const bool single = p_.loss_dtype == DType::F32;
    const double eps = single ? 6e-8 : 1.2e-16, rtol = single ? 1e-5 : 1e-12;
    const Tensors moved = forward.run(shifted(x, 8 * eps, x));
    for (std::size_t o = 0; o < base.size(); ++o) {
      if (!all_finite(base[o]) || !all_finite(moved[o])) continue;
      const double d = max_diff(moved[o], base[o]), s = std::max(max_abs(moved[o]), max_abs(base[o]));
      if (!(d <= rtol * (1 + s) * cond_)) return true;
    }
    return false;
  }

  /// a near b, unless the program is at a tie of a jump (at_tie).
  void expect_near_unless_tie(const char* check, const Tensors& a, const Tensors& b) {
    if (at_tie()) return skip(std::string(check) + ":tie");
    // A single-precision program's rounding reaches outputs converted to f64 too.
    const bool single = p_.loss_dtype == DType::F32;
    for (std::size_t o = 0; o < a.size(); ++o) {
      if (all_finite(b[o])) expect_near(check, a[o], b[o], single ? 1e-5 : 1e-12);
    }
  }

  /// The gradient program (where fusion has the most to do) with fusion and dead-code
  /// elimination off, and on 1 thread, against `grads` (default options, 2 threads).
  template <class VG>
  void check_gradient_passes_and_threads(VG& vg, const Tensors& x, const Tensors& grads) {
    SettingsGuard guard;
    ExecOptions plain = guard.options;
    plain.fuse_elementwise = plain.eliminate_dead_code = plain.compile_arithmetic = false;
    step_ = "value_and_grad (passes)";
    set_exec_options(plain);
    expect_bitwise("grad_passes_bitwise", vg.call(x).second, grads);
    set_exec_options(guard.options);
    if (!config_.threads) return;
    step_ = "value_and_grad (threads)";
    set_num_threads(1);
    const Tensors one = vg.call(x).second;
    set_num_threads(2);
    const Tensors two = vg.call(x).second;
    if (calls_blas()) {
      for (std::size_t i = 0; i < one.size(); ++i) expect_near("grad_threads", two[i], one[i], 1e-12);
    } else {
      expect_bitwise("grad_threads_bitwise", two, one);
    }
  }

  /// Single precision: the value and gradient against the double-precision twin, which gets
  /// every check.
  template <class VG>
  void check_against_widened(VG& vg, const Tensors& x) {
    const std::pair<Tensor, Tensors> single = vg.call(x);
    // Single precision's own rounding noise, measured as for central differences: the value and
    // gradient at inputs a few ulps away differ from these by (almost) only rounding.
    const std::pair<Tensor, Tensors> nearby = vg.call(shifted(x, 8 * 0x1p-23, x));
    double noise = max_diff(single.first, nearby.first);
    for (std::size_t i = 0; i < single.second.size(); ++i) noise = std::max(noise, max_diff(single.second[i], nearby.second[i]));
    if (!std::isfinite(noise)) noise = 0;
    const RandomProgram twin = widened(p_);
    Checker inner_checker(twin, config_, report_);
    inner_checker.run();
    if (inner_checker.grads_.empty()) return skip("single:twin_not_checked");
    // Gradients jump at kinks too: a maximum of nearly equal values may pick another side in
    // single precision.
    if (at_tie(true) || inner_checker.at_tie(true)) return skip("single:tie");
    if (inner_checker.products_leave_float_range()) return skip("single:product_range");
    step_ = "single";
    const double tol = 2e-3;
    const Tensor twin_value = inner_checker.traced([](const RandomProgram& p, const std::vector<Traced>& args) {
      return apply_loss(p, args);
    }).run(twin.inputs)[0];
    expect_close_scaled("single", single.first, twin_value, tol, 10 * noise);
    for (std::size_t i = 0; i < single.second.size(); ++i) {
      expect_close_scaled("single", single.second[i], inner_checker.grads_[i], tol, 10 * noise);
    }
  }

  /// Whether a product of the program folds through partial products outside float's range
  /// (product_fold_extremes on this program's values, within a factor e^8 of float's limits: the
  /// derivative's products of the others reach a factor further). A single-precision fold of
  /// thousands of factors may underflow to 0 (or overflow) on its way to a moderate product, where
  /// the double twin's does not: the fold is float's, as NumPy's is, so the two results differ by
  /// float's range, not by an error of either, and are not compared.
  bool products_leave_float_range() {
    const Program extremes = traced([](const RandomProgram& p, const std::vector<Traced>& args) {
      return product_fold_extremes(p, apply_values(p, args));
    });
    if (extremes.graph()->outputs().empty()) return false;
    const Tensors e = extremes.run(p_.inputs);
    for (std::size_t i = 0; i < e.size(); i += 2) {
      const double largest = e[i].element(0).real(), smallest = e[i + 1].element(0).real();
      if (!(largest <= 80) || !(smallest >= -80)) return true;  // NaN counts as outside
    }
    return false;
  }

  /// jacfwd against jacrev of y with respect to argument 0 (both real). Small Jacobians only, and
  /// small arguments: sparse detection holds, for each element of every value, a set of up to
  /// x[0].numel() entries, and with 4096 of them (values have at most 60000 elements: generate.cpp)
  /// no value reaches SparseOptions::max_nonzeros, where detection refuses with its documented
  /// Error (an empty y beside a large x did).
  template <class Y>
  void check_jacobians(Y& y_of, const Tensors& x, const Tensor& y) {
    if (x[0].numel() > 4096 || x[0].numel() * y.numel() > 4096) return skip("jacobian:large");
    step_ = "jacfwd";
    const Tensor jf = jacfwd(y_of, 0).call(x);
    step_ = "jacrev";
    const Tensor jr = jacrev(y_of, 0).call(x);
    expect_near("jacobian", jf, jr, 1e-12);
    ++report_.checks_run;
    // The sparse Jacobian (tenferro/sparse.hpp): its pattern holds every nonzero of the dense
    // one, and its values are jacfwd's.
    step_ = "sparse_jacobian";
    const SparseMatrix m = sparse_jacobian(y_of).call(x);
    const SparsityPattern& p = *m.pattern;
    if (p.rows * p.cols != jf.numel()) fail("sparse_jacobian", "a pattern of " + std::to_string(p.rows) + " x " + std::to_string(p.cols) + " for a Jacobian of " + jf.type().to_string());
    for (std::int64_t i = 0; i < p.rows; ++i) {
      for (std::int64_t j = 0; j < p.cols; ++j) {
        if (jf.element(i * p.cols + j) != c128(0) && !p.contains(i, j)) {
          fail("sparse_jacobian", "J[" + std::to_string(i) + ", " + std::to_string(j) + "] is nonzero outside the detected pattern");
        }
      }
    }
    expect_near("sparse_jacobian", m.to_dense().reshaped(jf.shape()), jf, 1e-12);
    ++report_.checks_run;
    // The automatic mode (tenferro/jacobian.hpp), whichever it picks.
    step_ = "jacobian(auto)";
    expect_near("jacobian(auto)", jacobian(y_of).call(x), jf, 1e-12);
    // Cross-country elimination, in the cost model's cheapest order, in Markowitz's and edge by
    // edge: other products, other sums, the same Jacobian. It takes one real dtype throughout and refuses
    // other programs with a DTypeError (a program that converts to complex on its way).
    if (is_floating(x[0].dtype()) && y.dtype() == x[0].dtype()) {
      for (const EliminationOrder order : {EliminationOrder::Best, EliminationOrder::Markowitz, EliminationOrder::Edges}) {
        step_ = std::string("jacobian(cross_country, ") + elimination_order_name(order) + ")";
        const auto cross_country = jacobian(y_of, {.mode = JacobianMode::CrossCountry, .order = order});
        try {
          (void)cross_country.choice(x);
        } catch (const DTypeError&) {
          return skip("jacobian:cross_country_dtypes");
        } catch (const ValueError&) {
          return skip("jacobian:cross_country_large_block");
        }
        expect_near("jacobian(cross_country)", cross_country.call(x), jf, 1e-12);
      }
      ++report_.checks_run;
    }
  }

  template <class L>
  void check_hessian(L& loss, const Tensors& x, const Tensors& v) {
    // The Hessian runs a batched program, the hvp another: at a tie they may take different sides.
    if (at_tie()) return skip("hessian:tie");
    step_ = "hessian";
    const Tensor h = hessian(loss, 0).call(x);
    // H v0 for a real direction v0 in argument 0's space (columns are H e_k for real e_k).
    Tensors along = zeros_like(x);
    along[0] = real_part_like(v[0]);
    step_ = "hvp(argument 0)";
    const Tensor expected = hvp(loss, x, along)[0];
    const std::int64_t n = x[0].numel();
    Tensor hv(expected.type());
    for (std::int64_t i = 0; i < n; ++i) {
      c128 acc = 0;
      for (std::int64_t k = 0; k < n; ++k) acc += h.element(i * n + k) * along[0].element(k).real();
      set_element(hv, i, acc);
    }
    // H v0 sums the same rounded terms as hvp: its noise (hvp_noise_, per unit direction) counts.
    const double d = max_diff(hv, expected), s = std::max(max_abs(hv), max_abs(expected));
    const double tol = 1e-10 * (1 + s) * cond_ + 10 * hvp_noise_ * norm(along[0]);
    if (!(d <= tol)) fail("hessian", describe(hv, expected, d, tol));
    ++report_.checks_run;
  }

  Tensors random_like(const Tensors& xs) {
    Tensors out;
    for (const auto& x : xs) out.push_back(tidu::OperandSpace<Tensor>::random_like(x, rng_));
    return out;
  }

  void skip(const std::string& why) { ++report_.skipped[why]; }
  [[noreturn]] void fail(const std::string& check, const std::string& message) {
    throw CheckFailed{check, message};
  }

  void expect_bitwise(const char* check, const Tensors& a, const Tensors& b) {
    for (std::size_t o = 0; o < a.size(); ++o) {
      if (!same_bits(a[o], b[o])) fail(check, "output " + std::to_string(o) + ": " + to_string(a[o]) + " vs " + to_string(b[o]));
    }
    ++report_.checks_run;
  }
  void expect_near(const char* check, const Tensor& a, const Tensor& b, double rtol) {
    if (a.type() != b.type()) fail(check, "types " + a.type().to_string() + " vs " + b.type().to_string());
    const double d = max_diff(a, b), s = std::max(max_abs(a), max_abs(b));
    if (!(d <= rtol * (1 + s) * cond_)) fail(check, describe(a, b, d, rtol * (1 + s) * cond_));
    ++report_.checks_run;
  }
  void expect_close_scaled(const char* check, const Tensor& single, const Tensor& twin, double rtol, double atol) {
    const double d = max_diff(single, twin), s = max_abs(twin);
    // Single precision overflows sooner (exp beyond 88): a value or derivative that is finite only
    // in the twin is not compared.
    if (!std::isfinite(s) || !all_finite(single)) return skip("single:nonfinite");
    const double tol = rtol * (1 + s) * cond_ + atol;
    if (!(d <= tol)) fail(check, describe(single, twin, d, tol));
    ++report_.checks_run;
  }
  void expect_within(const char* check, double a, double b, double tol) {
    if (!(std::abs(a - b) <= tol)) {
      std::ostringstream os;
      os.precision(17);
      os << a << " vs " << b << " (difference " << std::abs(a - b) << ", tolerance " << tol << ")";
      fail(check, os.str());
    }
    ++report_.checks_run;
  }
  /// ad against central differences fd (at steps h and h/2); `magnitude` scales rounding.
  void expect_difference(const char* check, const Tensor& ad, const Difference& fd, double magnitude) {
    if (!fd.finite) return skip(std::string(check) + ":nonfinite");
    if (!fd.smooth) return skip(std::string(check) + ":not_smooth");
    const double err = max_diff_as_complex(ad, fd.fine);
    const double tol =
        4 * fd.spread + 2 * fd.rounding + 1e-7 * (max_abs(ad) + max_abs(fd.fine)) + 1e-9 * cond_ * (1 + magnitude);
    if (!(err <= tol)) fail(check, describe(ad, fd.fine, err, tol) + "\n(coarse step: " + to_string(fd.coarse) + ")");
    ++report_.checks_run;
  }
  void expect_difference_all(const char* check, const Tensors& ad, const Difference& fd, double magnitude) {
    expect_difference(check, concatenated(ad), fd, magnitude);
  }

  const RandomProgram& p_;
  CheckConfig config_;
  ProgramReport& report_;
  std::mt19937_64 rng_;
  std::string step_;
  double cond_ = 1;       // max(1, the largest magnitude among the program's values; largest_value)
  double hvp_noise_ = 0;  // |H (v + w) - H v - H w| / (|v| + |w|): the rounding of H's terms
  static constexpr double kStep = 1e-3;  // central differences at kStep and kStep / 2
  std::optional<Program> branches_;     // built on first use by branches()
  std::optional<bool> tie_, kink_tie_;  // at_tie's answers, computed once
  Tensors grads_;  // after run(): the gradient, when the derivative checks got that far
};

}  // namespace

ProgramReport check_program(const RandomProgram& program, const CheckConfig& config) {
  ProgramReport report;
  Checker checker(program, config, report);
  try {
    checker.run();
  } catch (const CheckFailed& f) {
    report.ok = false;
    report.check = f.check;
    report.message = f.message;
  } catch (const std::exception& e) {
    report.ok = false;
    report.check = "exception";
    report.message = "during " + checker.step() + ": " + exception_type_name(e) + ": " + e.what();
  }
  return report;
}

}  // namespace tenferro::testing
