#!/usr/bin/python3
"""PyTorch peer of the linear-algebra benchmarks: svd, qr, eigh, cholesky and solve on f64 n x n
matrices (n = 8, 16, 32, 64, 256, 512), forward alone and forward + backward of a scalar loss.

    /usr/bin/python3 bench/peers/linalg_peers.py [--threads N] [--ops svd,qr,...] [--sizes 64,256,512]
                                                 [--budget S] [--values]

Lines (the protocol and format of torch_bench.py, whose helpers this imports):
    case=linalg_<op>_fwd  impl=torch size=<n> median_s=... dtype=f64 peak_rss_mb=.. base_rss_mb=.. reps=..
    case=linalg_<op>_grad impl=torch size=<n> median_s=... dtype=f64 peak_rss_mb=.. base_rss_mb=.. reps=.. grad_over_fwd=..
_fwd runs the decomposition under torch.no_grad(); _grad runs the loss below and
torch.autograd.grad of it with respect to the inputs (A, and B for solve). --values prints, per
op and size, `case=linalg_<op>_value impl=torch size=<n> loss=<%.15g> grad_norm=<%.15g>` (grad_norm:
the Frobenius norm of the gradient, all inputs together) so another implementation can check
that it computes the same functions.

Inputs (deterministic and portable, so that the C++ side can build the very same matrices):
    splitmix64(z): z += 0x9E3779B97F4A7C15; z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9;
                   z = (z ^ (z >> 27)) * 0x94D049BB133111EB; return z ^ (z >> 31)   (mod 2^64)
    uniform(seed, i) = ((splitmix64(seed * 2^32 + i) >> 11) + 0.5) * 2^-53, in (0, 1)
    normal(seed, shape)[k] = sqrt(-2 ln uniform(seed, 2k)) * cos(2 pi uniform(seed, 2k + 1)),
                             k the row-major index (Box-Muller)
    X = normal(1, [n, n]); B = normal(4, [n, n]); P = uniform(2, .) and R = uniform(3, .) as
    [n, n] matrices; c = uniform(5, .) as a vector [n].
    svd, qr, solve: A = X.  eigh: A = (X + X^T) / 2.  cholesky: A = X X^T + n I (positive definite).

Losses (each invariant under the gauge of its decomposition: the sign of each singular or
eigenvector pair, the signs of Q's columns with R's rows; the squares make them independent of
the sign conventions of LAPACK's drivers):
    svd:      U, S, Vh = svd(A) (thin)    L = sum(c * S) + sum(P * U^2) + sum(R * Vh^2)
    qr:       Q, R_ = qr(A) (reduced)     L = sum(P * Q^2) + sum(R * R_^2)
    eigh:     w, V = eigh(A) (ascending)  L = sum(c * w) + sum(P * V^2)
    cholesky: L_ = cholesky(A) (lower)    L = sum(P * L_)
    solve:    Y = solve(A, B)             L = sum(P * Y)          (gradient for A and for B)
(x^2 and products elementwise.) eigh and cholesky read A's lower triangle; their gradient is that
of the function of (A + A^T)/2, symmetric, as PyTorch, JAX and tenferro define it.
"""
import argparse
import math
import sys

import numpy as np

try:
    import torch
except ImportError:
    sys.stderr.write("linalg_peers: PyTorch is not installed (Debian: apt-get install python3-torch)\n")
    sys.exit(3)

import torch_bench  # noqa: E402  bench/peers/torch_bench.py: measure() and report()

OPS = ("svd", "qr", "eigh", "cholesky", "solve")
SIZES = (8, 16, 32, 64, 256, 512)
_MASK = (1 << 64) - 1


def splitmix64(z):
    """splitmix64 of an array of uint64 (wrapping arithmetic)."""
    z = z + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def uniform(seed, count):
    """uniform(seed, i) for i = 0 .. count-1, in (0, 1) (module docstring)."""
    with np.errstate(over="ignore"):
        z = splitmix64(np.uint64((seed << 32) & _MASK) + np.arange(count, dtype=np.uint64))
    return ((z >> np.uint64(11)).astype(np.float64) + 0.5) * 2.0 ** -53


def normal(seed, shape):
    count = int(np.prod(shape))
    u = uniform(seed, 2 * count)
    return torch.from_numpy(np.sqrt(-2.0 * np.log(u[0::2])) * np.cos(2.0 * math.pi * u[1::2])).reshape(shape)


def uniform_tensor(seed, shape):
    return torch.from_numpy(uniform(seed, int(np.prod(shape)))).reshape(shape)


def inputs(op, n):
    """The inputs (tuple) of `op` at size n, and the fixed loss weights."""
    X = normal(1, (n, n))
    weights = dict(P=uniform_tensor(2, (n, n)), R=uniform_tensor(3, (n, n)), c=uniform_tensor(5, (n,)))
    if op == "eigh":
        return ((X + X.T) / 2,), weights
    if op == "cholesky":
        return (X @ X.T + n * torch.eye(n, dtype=torch.float64),), weights
    if op == "solve":
        return (X, normal(4, (n, n))), weights
    return (X,), weights


def forward(op, args):
    """The decomposition alone."""
    if op == "svd":
        return torch.linalg.svd(args[0], full_matrices=False)
    if op == "qr":
        return torch.linalg.qr(args[0], mode="reduced")
    if op == "eigh":
        return torch.linalg.eigh(args[0])
    if op == "cholesky":
        return torch.linalg.cholesky(args[0])
    return torch.linalg.solve(args[0], args[1])


def loss(op, args, w):
    """The scalar losses of the module docstring."""
    P, R, c = w["P"], w["R"], w["c"]
    if op == "svd":
        U, S, Vh = torch.linalg.svd(args[0], full_matrices=False)
        return (c * S).sum() + (P * U * U).sum() + (R * Vh * Vh).sum()
    if op == "qr":
        Q, Rq = torch.linalg.qr(args[0], mode="reduced")
        return (P * Q * Q).sum() + (R * Rq * Rq).sum()
    if op == "eigh":
        evals, V = torch.linalg.eigh(args[0])
        return (c * evals).sum() + (P * V * V).sum()
    if op == "cholesky":
        return (P * torch.linalg.cholesky(args[0])).sum()
    return (P * torch.linalg.solve(args[0], args[1])).sum()


def run(args):
    for op in args.ops:
        for n in args.sizes:
            values, w = inputs(op, n)
            leaves = [v.clone().requires_grad_() for v in values]

            def fwd():
                with torch.no_grad():
                    forward(op, values)

            def grad():
                return torch.autograd.grad(loss(op, leaves, w), leaves)

            if args.values:
                value = loss(op, leaves, w)
                grads = torch.autograd.grad(value, leaves)
                norm = math.sqrt(sum(float((g * g).sum()) for g in grads))
                print(f"case=linalg_{op}_value impl=torch size={n} loss={value.item():.15g} grad_norm={norm:.15g}",
                      flush=True)
            f = torch_bench.measure(fwd, args.budget)
            g = torch_bench.measure(grad, args.budget)
            torch_bench.report(f"linalg_{op}_fwd", n, "f64", f)
            torch_bench.report(f"linalg_{op}_grad", n, "f64", g, f" grad_over_fwd={g[0] / f[0]:.4g}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--ops", default=",".join(OPS))
    parser.add_argument("--sizes", default=",".join(str(n) for n in SIZES))
    parser.add_argument("--budget", type=float, default=1.5, help="timed seconds aimed for per case (default 1.5)")
    parser.add_argument("--values", action="store_true", help="also print each loss and its gradient's norm")
    args = parser.parse_args()
    args.ops = [o for o in args.ops.split(",") if o]
    args.sizes = [int(s) for s in args.sizes.split(",") if s]
    unknown = [o for o in args.ops if o not in OPS]
    if unknown or args.threads < 1 or any(n < 1 for n in args.sizes):
        parser.error(f"unknown ops {unknown} (known: {','.join(OPS)})" if unknown
                     else "--threads and sizes must be at least 1")
    torch.set_num_threads(args.threads)
    run(args)


if __name__ == "__main__":
    main()
