#pragma once
// Checks of one random program through the public API, each against mathematics or an
// independent path, never against the code's own earlier output:
//
//   passes_bitwise   the loss and y with fusion, dead-code elimination and the scalar path off
//                    equal the default run bit for bit (fold_transpose stays on: folding may let
//                    BLAS sum in another order, exec_options.hpp)
//   passes_off       every pass off agrees to rounding
//   threads_bitwise  1 and 2 threads give the same bits (sums split into fixed chunks)
//   value            value_and_grad's value equals the forward run
//   eager_value,     the loss and its gradients in eager mode (tenferro/eager.hpp: each op's own
//   eager_grad       kernel, backward() through the recorded ops) against value_and_grad's
//   grad_fd          <grad, t> against central differences of the loss along a random t
//   jvp              jvp of the loss along t equals <grad, t>
//   y_fd, adjoint    jvp of y against central differences of y; vjp of y against jvp of y by
//                    the adjoint identity <ct, J t> = <J^* ct, t>
//   hvp_fd, hvp_sym  hvp against central differences of the gradient; <w, H v> = <H w, v>
//   hessian          hessian (of argument 0) times v against hvp along v
//   jacobian         jacfwd against jacrev, and against jvp (real argument and real y)
//   single           single-precision programs: value and gradient against the same program
//                    computed in double precision (which gets every check above)
//   exception        any exception from a valid program
//
// Central differences use the 4-point stencil at steps h and h/2: when the two estimates
// disagree the function is not smooth at this scale (a kink of abs, max, where, a rounding of
// astype) and the check is skipped and counted, otherwise the AD value must agree with the
// h/2 estimate within the estimates' own spread plus rounding.
#include <cstdint>
#include <map>
#include <string>

#include "tenferro/testing/random_program.hpp"

namespace tenferro::testing {

struct CheckConfig {
  bool derivatives = true;  // all the AD checks; off: passes and threads only
  bool threads = true;      // the 1-vs-2-threads check (sets tenferro::num_threads and restores it)
  bool vmap = true;         // vmap over a batch of two examples against the program run on each
  std::uint64_t seed = 1;   // of the random directions t, v, w, ct
};

struct ProgramReport {
  bool ok = true;
  std::string check;    // the first failing check's name
  std::string message;  // what differed, with numbers
  /// Checks skipped (with the reason): "grad_fd:not_smooth", "derivatives:nonfinite", ...
  std::map<std::string, int> skipped;
  int checks_run = 0;
};

ProgramReport check_program(const RandomProgram& program, const CheckConfig& config = {});

}  // namespace tenferro::testing
