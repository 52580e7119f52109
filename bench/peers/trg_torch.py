#!/usr/bin/python3
"""PyTorch peer of examples/ising_trg.cpp: the free energy, energy and specific heat of the 2-D
classical Ising model by Levin-Nave tensor renormalization group (TRG), differentiated by autograd
through the SVDs, beside Onsager's exact solution.

    /usr/bin/python3 bench/peers/trg_torch.py [--chi 24] [--niter 20] [--K 0.3,0.44,0.6] [--threads N] [--check]
    /usr/bin/python3 bench/peers/trg_torch.py --bench [--budget S] [--chi 24] [--niter 20] [--threads N]

Model: H = -sum_<ij> s_i s_j (J = 1) on the square lattice, K = J/T (inverse temperature).

Conventions (examples/ising_trg.cpp follows them exactly, so the two agree to rounding):
  * Site tensor, legs T[r, u, l, d] (right, up, left, down), bond dimension D = 2:
        T[r,u,l,d] = 0.5 sqrt(l_r l_u l_l l_d) if r+u+l+d is even, else 0,   l = [2 cosh K, 2 sinh K]
    (the bond weight exp(K s s') = sum_k W[s,k] l_k W[s',k], W = [[1, 1], [1, -1]] / sqrt 2, with
    sqrt(l) W given to each of the bond's two sites and the spin summed at the site). The lattice
    holds one T per site, so N sites = N tensors.
  * Step n = 1 .. niter, on a lattice of N / 2^(n-1) identical tensors:
      1. m = max|T|; T <- T / m; lnZ/N += log(m) / 2^(n-1)  (Z = m^(#tensors) Z(T/m)).
      2. Two splits, each by a full SVD (torch.linalg.svd, full_matrices=False on the square
         D^2 x D^2 matrix) truncated to k = min(D^2, chi) triplets, no other cut-off, sqrt(S) to
         each side (sqrt_sv below):
           (r,u) x (l,d): T.reshape(D^2, D^2)                    = U S Vh ->
                          S1[r,u,a] = U[:, :k] sqrt(S)   S3[a,l,d] = sqrt(S) Vh[:k]
           (u,l) x (d,r): T.permute(1,2,3,0).reshape(D^2, D^2)  = U S Vh ->
                          S2[u,l,b] = U[:, :k] sqrt(S)   S4[b,d,r] = sqrt(S) Vh[:k]
         (on the checkerboard: A sites split the first way, B sites the second way).
      3. Around a plaquette with corners A (lower left), B (lower right), A (upper right),
         B (upper left) the halves facing it are S1, S2, S3, S4; its four inner bonds are
         x = S1.r - S2.l, y = S2.u - S3.d, z = S3.l - S4.r, w = S4.d - S1.u. The new tensor at the
         plaquette's center has legs a (lower left), b (lower right), c (upper right), d (upper
         left); turned by 45 degrees they read as r = c, u = d, l = a, d = b:
             T'[c,d,a,b] = einsum("xwa,yxb,czy,dwz->cdab", S1, S2, S3, S4)
         (contracted pairwise: (S1 S2) over x, (S3 S4) over z, then over w and y). T' has bond
         dimension k; the lattice has half as many tensors, each standing for 2^n sites.
  * After niter steps: lnZ/N += log(sum_ij T[i,j,i,j]) / 2^niter (the periodic trace of the one
    tensor left: the torus of N = 2^niter sites). In the ordered phase (K > K_c) that finite
    torus's lnZ/N exceeds the infinite lattice's by ln(2) / 2^niter (the two ground states):
    6.6e-7 at niter = 20, 5.5e-7 relative at K = 0.6, inside --check's 1e-6.
  * u = -d(lnZ/N)/dK and c = K^2 d^2(lnZ/N)/dK^2 by autograd (torch.autograd.grad with
    create_graph=True, then again): the derivative of the truncated TRG's lnZ/N, to every order.

Derivatives, degenerate spectra and zero singular values:
  * torch's own SVD backward divides by s_j^2 - s_i^2 and gives inf/NaN for the exactly degenerate
    singular values that the Ising tensor's Z2 symmetry and its low rank (2 of 4 at n = 1, 4 of 16
    at n = 2, ...: the extra singular values are zeros or rounding noise, 1e-17 .. 1e-50) produce.
    LorentzianSvd is an SVD with its own backward, written in differentiable torch operations (so
    it can be differentiated again: double backward works), with each of 1/(s_j - s_i),
    1/(s_j + s_i) and 1/s replaced by the Lorentzian x / (x^2 + eps), eps = 1e-12 (tenferro's
    linalg::svd default; T is normalized to max|T| = 1, so its singular values are O(1)). Where
    the singular values are separated by much more than sqrt(eps) this is 1/x up to a relative
    eps/x^2; at exact degeneracies (here only among the numerically zero ones) it drops the
    terms that have no limit. Measured here: eps = 1e-10 .. 1e-16 change u by < 1e-9 and c by
    < 1e-7 relative (chi = 16); eps = 0 gives NaN, as torch's own backward does.
  * sqrt(S) has derivative 1/(2 sqrt(s)): infinite (NaN after a product with 0) at a singular
    value that LAPACK returns as exactly 0, and up to 1e25 at the numerically zero ones. sqrt_sv
    therefore takes singular values at most SV_FLOOR * S[0] (SV_FLOOR = 1e-14, the noise floor of
    a double SVD) as exactly zero: their triplet stays (k is still min(D^2, chi)) with weight 0
    and derivative 0. In exact arithmetic those singular values are 0 and stay 0 under a change
    of K, so their derivative is 0 too; the values move by at most 1e-14 relative. Measured (chi =
    24, K = 0.3, where LAPACK returned no exact zero): with a plain sqrt, lnZ/N differs by 5e-16,
    u not at all, c by 1e-15.
  * Dividing by m = max|T| is differentiated through (as in the C++ example); lnZ/N is exactly
    invariant under T -> T / m for any m, so any derivative of m gives the same result.

Onsager's exact solution (no SciPy needed; checked against mpmath):
    lnZ/N = ln(2 cosh 2K) + (1/pi) int_0^{pi/2} ln((1 + sqrt(cos^2 t + k'^2 sin^2 t)) / 2) dt
      (= (1/2pi) int_0^pi ln((1 + sqrt(1 - k^2 sin^2 t)) / 2) dt with the other term),
    k = 2 sinh 2K / cosh^2 2K, k' = sqrt(1 - k^2) = |2 tanh^2 2K - 1|; the integrand is smooth
    except near t = pi/2 as k -> 1, so the integral is a composite 20-point Gauss-Legendre rule on
    panels graded geometrically toward pi/2 (relative accuracy about 1e-15 for every K).
    u = -coth 2K [1 + (2/pi) q K(k)],   q = 2 tanh^2 2K - 1 (so k' = |q|)
    c = -K^2 du/dK = K^2 { -(2 / sinh^2 2K) [1 + (2/pi) q K(k)]
                           + (2/pi) [8 K(k) / cosh^2 2K - (2 cosh^2 2K / sinh^2 2K) (E(k) - k'^2 K(k))] }
    (differentiated with dK/dk = (E - k'^2 K) / (k k'^2) and dk/dK = -4 q / cosh 2K, which cancel
    the k'^2 without loss near K_c), with the complete elliptic integrals K(k), E(k) (modulus k)
    by the arithmetic-geometric mean.

Output: `case=trg impl=torch chi=.. niter=.. K=.. lnz=.. u=.. c=.. onsager_lnz=.. onsager_u=..
onsager_c=.. seconds=..` (15 significant digits; seconds: the wall time of that K); --check also checks lnZ/N against Onsager (relative 1e-6,
1e-5 within 0.01 of K_c = ln(1 + sqrt 2)/2) and u (absolute 1e-4 away from K_c) and exits 1 on a
failure. --bench prints `case=trg_fwd_grad_hess impl=torch size=chi<chi> median_s=...` lines in
the protocol of torch_bench.py (value, first and second derivative at K = 0.44).
"""
import argparse
import math
import sys
import time

import numpy as np

try:
    import torch
except ImportError:
    sys.stderr.write("trg_torch: PyTorch is not installed (Debian: apt-get install python3-torch)\n")
    sys.exit(3)

KC = 0.5 * math.log(1.0 + math.sqrt(2.0))  # the critical coupling
BROADENING = 1e-12                          # Lorentzian eps (tenferro's default)
SV_FLOOR = 1e-14                            # singular values <= SV_FLOOR * S[0] are zeros


# ---------------------------------------------------------------- SVD with a Lorentzian backward

def lorentzian(x, eps):
    """x / (x^2 + eps): 1/x up to a relative eps/x^2, and 0 at x = 0."""
    return x / (x * x + eps)


def svd_vjp(U, S, Vh, gU, gS, gVh, eps):
    """The cotangent of A = U diag(S) Vh (real, thin: U [m,k], Vh [k,n]) from those of U, S, Vh,
    in differentiable operations. With Au = U^T gU - gU^T U and Av = V^T gV - gV^T V (both
    antisymmetric) the standard rule's middle term F_ij (Au_ij s_j + s_i Av_ij), F_ij =
    1/(s_j^2 - s_i^2), equals (Au + Av)_ij / (2 (s_j - s_i)) + (Au - Av)_ij / (2 (s_j + s_i)); each
    reciprocal is a Lorentzian, as is the 1/s of the terms outside the spans of U and V."""
    m, n, k = U.shape[-2], Vh.shape[-1], S.shape[-1]
    si, sj = S[:, None], S[None, :]
    gA = U @ torch.diag(gS) @ Vh
    UtgU = U.T @ gU
    VtgV = Vh @ gVh.T  # V^T gV with V = Vh^T, gV = gVh^T
    Au = UtgU - UtgU.T
    Av = VtgV - VtgV.T
    middle = 0.5 * (Au + Av) * lorentzian(sj - si, eps) + 0.5 * (Au - Av) * lorentzian(sj + si, eps)
    gA = gA + U @ middle @ Vh
    sinv = lorentzian(S, eps)
    if m > k:  # (I - U U^T) gU S^-1 Vh
        gA = gA + ((gU - U @ UtgU) * sinv[None, :]) @ Vh
    if n > k:  # U S^-1 gV^T (I - V V^T)
        gA = gA + U @ (sinv[:, None] * (gVh - VtgV.T @ Vh))
    return gA


class LorentzianSvd(torch.autograd.Function):
    """U, S, Vh = torch.linalg.svd(A, full_matrices=False) for a real matrix, with the backward of
    svd_vjp. The backward uses only differentiable operations on the saved outputs, so with
    create_graph=True it is itself differentiated (through this same function)."""

    @staticmethod
    def forward(ctx, A):
        U, S, Vh = torch.linalg.svd(A, full_matrices=False)
        ctx.save_for_backward(U, S, Vh)
        return U, S, Vh

    @staticmethod
    def backward(ctx, gU, gS, gVh):
        U, S, Vh = ctx.saved_tensors
        eps = BROADENING
        return svd_vjp(U, S, Vh, gU, gS, gVh, eps)


def svd(A):
    return LorentzianSvd.apply(A)


def sqrt_sv(S):
    """sqrt(S) with the singular values at most SV_FLOOR * S[0] (numerically zero) set to 0 and
    given derivative 0 (see the module docstring)."""
    keep = S > SV_FLOOR * S[0].detach()
    return torch.where(keep, torch.sqrt(torch.where(keep, S, torch.ones_like(S))), torch.zeros_like(S))


# ---------------------------------------------------------------- TRG

def site_tensor(K):
    """T[r,u,l,d] = 0.5 sqrt(l_r l_u l_l l_d) for even r+u+l+d, else 0; l = [2 cosh K, 2 sinh K]."""
    lam = torch.stack([2.0 * torch.cosh(K), 2.0 * torch.sinh(K)])
    q = torch.sqrt(lam)
    i = torch.arange(2)
    even = ((i[:, None, None, None] + i[None, :, None, None] + i[None, None, :, None] + i[None, None, None, :])
            % 2 == 0).to(K.dtype)
    return 0.5 * torch.einsum("r,u,l,d->ruld", q, q, q, q) * even


def split(M, k):
    """The SVD of matrix M truncated to k triplets: (U sqrt(S), sqrt(S) Vh)."""
    U, S, Vh = svd(M)
    s = sqrt_sv(S[:k])
    return U[:, :k] * s[None, :], s[:, None] * Vh[:k, :]


def trg_step(T, chi):
    """One Levin-Nave step (module docstring): T [D,D,D,D] -> T' [k,k,k,k], k = min(D^2, chi)."""
    D = T.shape[0]
    k = min(D * D, chi)
    left, right = split(T.reshape(D * D, D * D), k)
    S1, S3 = left.reshape(D, D, k), right.reshape(k, D, D)            # [r,u,a], [a,l,d]
    left, right = split(T.permute(1, 2, 3, 0).reshape(D * D, D * D), k)
    S2, S4 = left.reshape(D, D, k), right.reshape(k, D, D)            # [u,l,b], [b,d,r]
    # einsum("xwa,yxb,czy,dwz->cdab", S1, S2, S3, S4), pairwise.
    lower = torch.einsum("xwa,yxb->wayb", S1, S2)
    upper = torch.einsum("czy,dwz->cydw", S3, S4)
    return torch.einsum("wayb,cydw->cdab", lower, upper)


def lnz_per_site(K, chi, niter):
    """lnZ/N of the TRG with bond dimension chi after niter steps (N = 2^niter sites)."""
    T = site_tensor(K)
    lnz = torch.zeros((), dtype=K.dtype)
    for n in range(1, niter + 1):
        m = T.abs().max()
        T = T / m
        lnz = lnz + torch.log(m) / 2.0 ** (n - 1)
        T = trg_step(T, chi)
    return lnz + torch.log(torch.einsum("ijij->", T)) / 2.0 ** niter


def trg_observables(K, chi, niter):
    """(lnZ/N, u, c) at coupling K (a float), by autograd to second order."""
    k = torch.tensor(K, dtype=torch.float64, requires_grad=True)
    lnz = lnz_per_site(k, chi, niter)
    (d1,) = torch.autograd.grad(lnz, k, create_graph=True)
    (d2,) = torch.autograd.grad(d1, k)
    return lnz.item(), -d1.item(), K * K * d2.item()


# ---------------------------------------------------------------- Onsager's exact solution

def _gauss_panels():
    """Nodes and weights in phi = pi/2 - t on [0, pi/2]: 20-point Gauss-Legendre on the panels
    [h 2^-(j+1), h 2^-j], j = 0 .. 59, h = pi/2, and on [0, h 2^-60]."""
    x, w = np.polynomial.legendre.leggauss(20)
    edges = [0.5 * math.pi * 2.0 ** -j for j in range(61)] + [0.0]
    nodes, weights = [], []
    for hi, lo in zip(edges[:-1], edges[1:]):
        nodes.append(lo + (hi - lo) * (x + 1.0) / 2.0)
        weights.append(w * (hi - lo) / 2.0)
    return np.concatenate(nodes), np.concatenate(weights)


_PHI, _PHI_W = _gauss_panels()


def elliptic_ke(kp):
    """Complete elliptic integrals (K(k), E(k)) of modulus k, given k' = sqrt(1 - k^2) (AGM)."""
    a, b = 1.0, kp
    c2 = 1.0 - kp * kp  # c_0^2 = k^2
    total, power = 0.5 * c2, 0.5  # sum 2^(n-1) c_n^2
    for _ in range(64):
        if abs(a - b) <= 1e-16 * a:
            break
        a, b, c = 0.5 * (a + b), math.sqrt(a * b), 0.5 * (a - b)
        power *= 2.0
        total += power * c * c
    big_k = math.pi / (2.0 * a)
    return big_k, big_k * (1.0 - total)


def onsager(K):
    """(lnZ/N, u, c) of the infinite square lattice at coupling K > 0 (module docstring)."""
    sh, c2, t2 = math.sinh(2 * K), math.cosh(2 * K), math.tanh(2 * K) ** 2
    q = 2.0 * t2 - 1.0
    kp = abs(q)
    sin2 = np.sin(_PHI) ** 2  # cos^2 t with t = pi/2 - phi
    integrand = np.log((1.0 + np.sqrt(sin2 + kp * kp * (1.0 - sin2))) / 2.0)
    lnz = math.log(2.0 * c2) + float(np.dot(_PHI_W, integrand)) / math.pi
    coth = 1.0 / math.tanh(2 * K)
    if kp == 0.0:  # K = K_c: K(k) diverges, but (2 tanh^2 - 1) K(k) -> 0; c diverges
        return lnz, -coth, math.inf
    big_k, big_e = elliptic_ke(kp)
    u = -coth * (1.0 + (2.0 / math.pi) * q * big_k)
    c = K * K * (-(2.0 / sh ** 2) * (1.0 + (2.0 / math.pi) * q * big_k)
                 + (2.0 / math.pi) * (8.0 * big_k / c2 ** 2 - (2.0 * c2 ** 2 / sh ** 2) * (big_e - kp * kp * big_k)))
    return lnz, u, c


# ---------------------------------------------------------------- command line

def parse_ks(text):
    return [float(x) for x in text.split(",") if x]


def run_values(args):
    failures = 0
    for K in parse_ks(args.K):
        start = time.perf_counter()
        lnz, u, c = trg_observables(K, args.chi, args.niter)
        seconds = time.perf_counter() - start
        ex_lnz, ex_u, ex_c = onsager(K)
        print(f"case=trg impl=torch chi={args.chi} niter={args.niter} K={K:.15g} lnz={lnz:.15g} u={u:.15g} "
              f"c={c:.15g} onsager_lnz={ex_lnz:.15g} onsager_u={ex_u:.15g} onsager_c={ex_c:.15g} "
              f"seconds={seconds:.3g}", flush=True)
        if args.check:
            near = abs(K - KC) < 0.01
            rel = abs(lnz - ex_lnz) / abs(ex_lnz)
            tol = 1e-5 if near else 1e-6
            if not rel <= tol:
                print(f"FAIL K={K:.15g}: lnZ/N relative error {rel:.3g} > {tol:g}", flush=True)
                failures += 1
            if not near and not abs(u - ex_u) <= 1e-4:
                print(f"FAIL K={K:.15g}: u error {abs(u - ex_u):.3g} > 1e-4", flush=True)
                failures += 1
    return 1 if failures else 0


def run_bench(args):
    import torch_bench  # bench/peers/torch_bench.py: the measurement protocol and the line format

    K = 0.44
    result = torch_bench.measure(lambda: trg_observables(K, args.chi, args.niter), args.budget)
    torch_bench.report("trg_fwd_grad_hess", f"chi{args.chi}", "f64", result,
                       f" niter={args.niter} K={K:g} threads={args.threads}")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chi", type=int, default=24)
    parser.add_argument("--niter", type=int, default=20)
    parser.add_argument("--K", default="0.3,0.44,0.6", help="comma-separated couplings K = J/T")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--check", action="store_true", help="check against Onsager; exit 1 on failure")
    parser.add_argument("--bench", action="store_true", help="time value + u + c (torch_bench.py protocol)")
    parser.add_argument("--budget", type=float, default=1.5, help="timed seconds aimed for (--bench)")
    args = parser.parse_args()
    if args.chi < 2 or args.niter < 1 or args.threads < 1:
        parser.error("--chi must be at least 2, --niter and --threads at least 1")
    torch.set_num_threads(args.threads)
    sys.exit(run_bench(args) if args.bench else run_values(args))


if __name__ == "__main__":
    main()
