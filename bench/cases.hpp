#pragma once
// The case families of bench_compare. Each prints its result lines (see harness.hpp) for
// impl=tenferro and, where the case has one, a baseline timed in the same run; tenferro's kernels
// and OpenBLAS run on options.threads threads (tenferro::set_num_threads, set by main).
#include "harness.hpp"

namespace bench {

/// 784-512-512-10 MLP, tanh, softmax cross-entropy, batch 256, f32 and f64: the loss (mlp_fwd) and
/// the loss with its gradient for all six weights and biases (mlp_grad).
void run_mlp(const Options& options);
/// C = A B at 1024^3, f32 and f64, against a direct cblas_?gemm (matmul).
void run_matmul(const Options& options);
/// sum(exp(sin(x) x + cos(x)) / (1 + x^2)) on 10^6 and 10^7 f64 (elem_chain_fwd, elem_chain_grad),
/// against one hand-written loop in libm (native), SLEEF and libmvec at AVX2 (native_sleef,
/// native_mvec) and at AVX-512 (native_sleef_avx512, native_mvec_avx512); ratio_vs_native is against
/// the loop in the library of tenferro::math_accuracy() at the width of
/// tenferro::vector_instruction_set() (printed as isa=).
void run_elem_chain(const Options& options);
/// 1000 alternating mul / add / sin on a rank-0 f64 (scalar_chain_fwd, scalar_chain_grad), against
/// the same chain on a plain double.
void run_scalar_chain(const Options& options);
/// tf::linearize of a 1000-op elementwise chain (linearize_chain): the cost of emitting JVP rules.
void run_linearize_chain(const Options& options);
/// Hessian and Hessian-vector product of sum(exp(a x)) with respect to x, n = 100 and 1000, f64.
void run_hessian(const Options& options);
/// erf, lgamma, atan2 and asinh on 10^7 f64: y = f(x) (special_fwd_<fn>) and the gradient of
/// sum(f(x)) (special_grad_<fn>); atan2's second argument is a second vector.
void run_special(const Options& options);
/// einsum contraction time and path quality (cases_einsum.cpp): matmul 1024, batched matmul,
/// abc,bcd,de->ae, a 3-matrix chain, an MPS inner product, a 6x6 lattice and random 3-regular
/// graphs of 60 (timed) and 200 (path only) tensors.
void run_einsum(const Options& options);
/// Max-plus matmul at N = 128 and 384 against the broadcast+reduce composition and an f64 GEMM.
void run_tropical(const Options& options);
/// The per-call time of a compiled gradient, n = 16 and 16384 (grad_call; the C++ side of
/// bench/peers/python_overhead.py).
void run_grad_call(const Options& options);
/// svd, qr, eigh, cholesky and solve at n = 64, 256, 512, f64: the decomposition (linalg_<op>_fwd)
/// and a scalar loss with its gradient (linalg_<op>_grad), cases_linalg.cpp.
void run_linalg(const Options& options);
/// The TRG example's lnZ/N with u and c at K = 0.44, chi = 16 and 24, niter = 20 (trg_fwd_grad_hess).
void run_trg(const Options& options);
/// take of 10^6 rows of a 10^6 x 16 table, its gradient (scatter-add), cumsum of 10^7 (f64).
void run_indexing(const Options& options);
void run_conv(const Options& options);
/// Eager mode (cases_eager.cpp): the per-operation time of add and matmul on 2x2 f64 (eager_add,
/// eager_matmul), a 100-operation chain with backward() (eager_chain100_fwd_bwd) and an MLP SGD step
/// (eager_mlp_step, run_mlp's network in f32).
void run_eager(const Options& options);
/// Control flow (cases_control.cpp): an LSTM layer as a scan, forward and gradient (lstm_fwd,
/// lstm_grad); a 10^4-step scalar recurrence's value and gradient (recurrence_fwd,
/// recurrence_grad) and its trace-to-compile cost at 10 and 10^4 steps (recurrence_compile).
void run_control(const Options& options);
/// jacfwd and jacrev of exp(v) * sum(v), n = 1000 (a dense 1000 x 1000 Jacobian).
void run_jacobian(const Options& options);
/// Sparse Jacobians and Hessians (cases_sparse.cpp) against ADOL-C: a Bratu residual's Jacobian
/// (sparse_poisson) and a banded objective's Hessian (sparse_banded), 10^4 to 10^6 unknowns.
void run_sparse(const Options& options);
/// tf::jacobian's automatic mode on four small scientific functions at batches of points
/// (cases_jacobian.cpp): Black-Scholes, Roe's flux, a robot arm, the Helmholtz free energy.
void run_jacobian_auto(const Options& options);

/// vmap against functorch's (cases_vmap.cpp, torch_bench.py): per-example gradients of run_mlp's
/// network (vmap_mlp_grad, against a hand-batched backward pass) and of a small CNN
/// (vmap_cnn_grad, against one batch gradient), batched Jacobians of an RK4 step
/// (vmap_ode_jacobian), and an ensemble of 32 MLPs (vmap_ensemble, against a hand-written
/// ensemble axis).
void run_vmap(const Options& options);

/// Checkpointing (cases_checkpoint.cpp, torch_bench.py's run_checkpoint): each gradient plain and
/// with checkpoints, with the peak of tensor storage (tf::MemoryMeter) and peak_ratio /
/// time_ratio on the checkpointed line: a 64-layer tanh MLP in 8 checkpoints of 8 layers
/// (checkpoint_mlp64, against torch.utils.checkpoint.checkpoint_sequential), a 16-layer net under
/// CheckpointPolicy::SaveDots (checkpoint_dots), a 10^5-step scan with checkpoint_every = 400 and
/// binomial checkpointing at 17 and 50 snapshots (checkpoint_recurrence), an LSTM over 10^4 steps
/// (checkpoint_lstm) and the TRG example with each RG step one checkpoint, recomputed or keeping
/// its SVDs' factors (checkpoint_trg).
void run_checkpoint(const Options& options);

/// ADBench's Gaussian-mixture objective (cases_adbench.cpp, torch_bench.py's run_gmm): n = 1000
/// points, K = 25 components, D = 2, 10, 20, 64, f64; inverse-covariance factors from log-diagonal
/// q and column-packed strictly-lower l, with ADBench's Wishart prior (gamma = 1, m = 1). The
/// objective (gmm_fwd, value=) and its gradient in (alpha, mu, q, l) (gmm_grad, ratio_vs_fwd),
/// checked first against plain loops in double and central differences.
void run_gmm(const Options& options);
/// ADBench's character LSTM (cases_adbench.cpp, torch_bench.py's run_lstm_adbench): 2 layers of
/// diagonal-weight cells, 1024 characters, alphabet 14, f64, one scan over the steps; the
/// normalised log-softmax loss (lstm_adbench_fwd) and its gradient in the main and extra
/// parameters (lstm_adbench_grad, timed interleaved: ratio_vs_fwd), checked first against central
/// differences.
void run_lstm_adbench(const Options& options);

}  // namespace bench
