#!/usr/bin/python3
"""PyTorch peer of bench_compare: the same cases, sizes, dtypes and thread count, printed as
result lines (docs/design.md, "Benchmark output") with impl=torch, so scripts/bench compare can
join them with ours by case, size and dtype.

    /usr/bin/python3 bench/peers/torch_bench.py [--threads N] [--cases a,b,...] [--only k,...] [--budget S]

--only narrows families to instances with bench_compare's keys (bench/harness.hpp, selected()):
mlp_f32, mlp_f64, elem_chain_<n>, linalg_<op>_<n>, lstm, recurrence; einsum follows the networks
bench_compare wrote.

Measurement protocol (the same as bench/harness.hpp):
  * memory: freed heap goes back to the system (gc, malloc_trim), "5" is written to
    /proc/self/clear_refs to reset the high-water mark VmHWM to the current resident size, the
    case runs twice, and VmHWM is read from /proc/self/status (peak_rss_mb); base_rss_mb is VmRSS
    right after the reset. The first of the two calls is the warm-up and is not timed.
  * time: the median over repetitions chosen so their sum is about --budget seconds (5 to 201).
Forward cases run under torch.no_grad() (no autograd graph, like our primal programs); gradients
use torch.autograd.grad.
"""
import argparse
import ctypes
import gc
import math
import sys
import time

try:
    import torch
except ImportError:
    sys.stderr.write("torch_bench: PyTorch is not installed (Debian: apt-get install python3-torch)\n")
    sys.exit(3)

import einsum_peers  # noqa: E402  bench/peers/einsum_peers.py: the einsum and tropical families

FAMILIES = ("mlp", "elem_chain", "scalar_chain", "hessian", "jacobian", "matmul", "special", "einsum", "tropical",
            "linalg", "trg", "indexing", "conv", "eager", "control", "vmap", "checkpoint", "gmm", "lstm_adbench")
DTYPES = {"f32": torch.float32, "f64": torch.float64}

try:
    _libc = ctypes.CDLL("libc.so.6")
except OSError:
    _libc = None
_warned = False


def status_mb(key):
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(key + ":"):
                return float(line.split()[1]) / 1024.0
    return 0.0


def reset_peak_rss():
    global _warned
    gc.collect()
    if _libc is not None:
        _libc.malloc_trim(0)
    try:
        with open("/proc/self/clear_refs", "w") as clear:
            clear.write("5")
    except OSError:
        if not _warned:
            _warned = True
            sys.stderr.write("torch_bench: cannot write /proc/self/clear_refs; peak_rss_mb is the process peak\n")


def measure(run, budget_s):
    """(median seconds, base MiB, peak MiB, repetitions) of `run`, per the protocol above."""
    reset_peak_rss()
    base = status_mb("VmRSS")
    run()
    start = time.perf_counter()
    run()
    steady = time.perf_counter() - start
    peak = status_mb("VmHWM")
    reps = 201 if steady <= 0 else int(min(201, max(5, math.ceil(budget_s / steady))))
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    times.sort()
    return times[len(times) // 2], base, peak, reps


def report(case, size, dtype, result, extra="", impl="torch"):
    median, base, peak, reps = result
    print(f"case={case} impl={impl} size={size} median_s={median:.6g} dtype={dtype} "
          f"peak_rss_mb={peak:.1f} base_rss_mb={base:.1f} reps={reps}{extra}", flush=True)


def selected(args, key):
    """Whether --only (bench_compare's instance keys) lets instance `key` run."""
    return not args.only or key in args.only.split(",")


def midpoints(n, lo, hi, dtype=torch.float64):
    """n points evenly spaced in (lo, hi), cell midpoints: the inputs bench_compare uses."""
    return lo + (hi - lo) * (torch.arange(n, dtype=dtype) + 0.5) / n


def run_mlp(args):
    batch, n_in, hidden, n_out = 256, 784, 512, 10
    for name, dtype in DTYPES.items():
        if not selected(args, "mlp_" + name):
            continue
        gen = torch.Generator().manual_seed(1)

        def normal(shape, scale):
            return (torch.randn(*shape, generator=gen, dtype=dtype) * scale).requires_grad_()

        params = [normal((n_in, hidden), 0.03), normal((hidden,), 0.01), normal((hidden, hidden), 0.04),
                  normal((hidden,), 0.01), normal((hidden, n_out), 0.04), normal((n_out,), 0.01)]
        x = torch.randn(batch, n_in, generator=gen, dtype=dtype)
        y = torch.zeros(batch, n_out, dtype=dtype)
        y[torch.arange(batch), torch.arange(batch) % n_out] = 1

        def loss():
            w1, b1, w2, b2, w3, b3 = params
            h1 = torch.tanh(x @ w1 + b1)
            h2 = torch.tanh(h1 @ w2 + b2)
            return -(y * torch.log_softmax(h2 @ w3 + b3, dim=-1)).sum(-1).mean()

        def forward():
            with torch.no_grad():
                loss()

        fwd = measure(forward, args.budget)
        grad = measure(lambda: torch.autograd.grad(loss(), params), args.budget)
        size = "784-512-512-10x256"
        report("mlp_fwd", size, name, fwd)
        report("mlp_grad", size, name, grad, f" grad_over_fwd={grad[0] / fwd[0]:.4g}")


def elem_chain(x):
    return (torch.exp(torch.sin(x) * x + torch.cos(x)) / (1 + x * x)).sum()


def run_elem_chain(args):
    for n in (1_000_000, 10_000_000):
        if not selected(args, f"elem_chain_{n}"):
            continue
        x = midpoints(n, -2.0, 2.0)
        xg = x.clone().requires_grad_()

        def forward():
            with torch.no_grad():
                elem_chain(x)

        report("elem_chain_fwd", n, "f64", measure(forward, args.budget))
        report("elem_chain_grad", n, "f64",
               measure(lambda: torch.autograd.grad(elem_chain(xg), xg), args.budget))
        del x, xg


def scalar_chain(x, ops=1000):
    """Op k: x * (1 + 0.001 (k % 7)) when k % 3 == 0, x + (0.1 + 0.01 (k % 5)) when k % 3 == 1,
    sin(x) otherwise (bench/native.cpp)."""
    for k in range(ops):
        if k % 3 == 0:
            x = x * (1.0 + 0.001 * (k % 7))
        elif k % 3 == 1:
            x = x + (0.1 + 0.01 * (k % 5))
        else:
            x = torch.sin(x)
    return x


def run_scalar_chain(args):
    ops = 1000
    x = torch.tensor(0.3, dtype=torch.float64)
    xg = x.clone().requires_grad_()

    def forward():
        with torch.no_grad():
            scalar_chain(x, ops)

    for case, run in (("scalar_chain_fwd", forward),
                      ("scalar_chain_grad", lambda: torch.autograd.grad(scalar_chain(xg, ops), xg))):
        result = measure(run, args.budget)
        report(case, ops, "f64", result, f" ns_per_op={result[0] * 1e9 / ops:.4g}")


def run_hessian(args):
    for n in (100, 1000):
        x, a, v = midpoints(n, -1.0, 1.0), midpoints(n, 0.5, 1.5), midpoints(n, 1.0, -1.0)

        def f(t):
            return torch.exp(a * t).sum()

        hessian = torch.autograd.functional.hessian
        report("hessian", n, "f64", measure(lambda: hessian(f, x, vectorize=True), args.budget))
        # torch.autograd.functional.hvp: reverse-over-reverse (double backward).
        report("hvp", n, "f64", measure(lambda: torch.autograd.functional.hvp(f, x, v), args.budget))


def run_jacobian(args):
    n = 1000
    x = midpoints(n, -1.0, 1.0)

    def f(v):
        return torch.exp(v) * v.sum()

    jacobian = torch.autograd.functional.jacobian
    # vectorize=True: all basis directions in one batched (vmap) pass, PyTorch's fastest form.
    report("jacfwd", n, "f64", measure(lambda: jacobian(f, x, vectorize=True, strategy="forward-mode"), args.budget))
    report("jacrev", n, "f64", measure(lambda: jacobian(f, x, vectorize=True, strategy="reverse-mode"), args.budget))
    run_jacobian_small(args)


# The small scientific functions of bench/cases_jacobian.cpp, at the same batches of points (the
# inputs are drawn alike, not bit for bit: the times do not depend on the values). Each line is
# the better of torch.autograd.functional.jacobian's forward and reverse strategies (vectorize=True).
def black_scholes(x):
    s, k, t, r, sigma = x
    vol = sigma * torch.sqrt(t)
    d1 = (torch.log(s / k) + (r + 0.5 * sigma * sigma) * t) / vol
    d2 = d1 - vol
    cdf = lambda z: 0.5 * torch.erfc(-z / math.sqrt(2.0))
    return s * cdf(d1) - k * torch.exp(-(r * t)) * cdf(d2)


def roe_flux(u):
    g = 1.4

    def state(s):
        rho, m, e = s[:, 0], s[:, 1], s[:, 2]
        vel = m / rho
        p = (g - 1.0) * (e - 0.5 * rho * vel * vel)
        return rho, m, e, vel, p, (e + p) / rho

    ar, am, ae, av, ap, ah = state(u[:-1])
    br, bm, be, bv, bp, bh = state(u[1:])
    sa, sb = torch.sqrt(ar), torch.sqrt(br)
    ut, ht = (sa * av + sb * bv) / (sa + sb), (sa * ah + sb * bh) / (sa + sb)
    ct, rhot = torch.sqrt((g - 1.0) * (ht - 0.5 * ut * ut)), sa * sb
    dp, du, drho = bp - ap, bv - av, br - ar
    a1, a2, a3 = (dp - rhot * ct * du) / (2 * ct * ct), drho - dp / (ct * ct), (dp + rhot * ct * du) / (2 * ct * ct)
    w1, w2, w3 = torch.abs(ut - ct) * a1, torch.abs(ut) * a2, torch.abs(ut + ct) * a3
    f0 = 0.5 * (am + bm) - 0.5 * (w1 + w2 + w3)
    f1 = 0.5 * (am * av + ap + bm * bv + bp) - 0.5 * (w1 * (ut - ct) + w2 * ut + w3 * (ut + ct))
    f2 = 0.5 * (av * (ae + ap) + bv * (be + bp)) - 0.5 * (w1 * (ht - ut * ct) + w2 * 0.5 * ut * ut + w3 * (ht + ut * ct))
    return torch.stack([f0, f1, f2], dim=1)


def robot_arm(angles):
    k = angles.shape[0]
    rot = torch.eye(3, dtype=angles.dtype).expand(k, 3, 3)
    p = torch.zeros(k, 3, dtype=angles.dtype)
    for j in range(6):
        c, s = torch.cos(angles[:, j]), torch.sin(angles[:, j])
        zero, one = torch.zeros_like(c), torch.ones_like(c)
        if j % 2 == 0:
            q = torch.stack([c, -s, zero, s, c, zero, zero, zero, one], dim=1).reshape(k, 3, 3)
        else:
            q = torch.stack([c, zero, s, zero, one, zero, -s, zero, c], dim=1).reshape(k, 3, 3)
        rot = rot @ q
        p = p + rot[:, :, 0]
    return p


def run_jacobian_small(args):
    gen = torch.Generator().manual_seed(7)
    uniform = lambda shape, lo, hi: lo + (hi - lo) * torch.rand(*shape, generator=gen, dtype=torch.float64)
    bs = torch.cat([uniform((1, 64), 80, 120), uniform((1, 64), 90, 110), uniform((1, 64), 0.25, 2),
                    uniform((1, 64), 0.01, 0.05), uniform((1, 64), 0.1, 0.4)])
    i = torch.arange(64, dtype=torch.float64)
    rho, vel, p = 1 + 0.2 * torch.sin(0.3 * i), 0.3 + 0.1 * torch.cos(0.2 * i), 1 + 0.1 * torch.sin(0.5 * i)
    u = torch.stack([rho, rho * vel, p / 0.4 + 0.5 * rho * vel * vel], dim=1)
    b = uniform((10,), 0.5, 1.5)
    a = uniform((10, 10), 0.0, 1.0)
    a = torch.triu(a) + torch.triu(a, 1).T
    s2 = math.sqrt(2.0)

    def helmholtz(x):
        bx = x @ b
        xax = ((x @ a) * x).sum(1)
        entropy = (x * torch.log(x / (1.0 - bx)[:, None])).sum(1)
        return entropy - xax / (math.sqrt(8.0) * bx) * torch.log((1 + (1 + s2) * bx) / (1 + (1 - s2) * bx))

    w1, w2 = uniform((16, 256), -0.1, 0.1), uniform((256, 16), -0.5, 0.5)

    def bottleneck(x):
        h = w1 @ x
        return w2 @ (torch.tanh(h) * torch.sin(h) + torch.exp(h * 0.1))

    jacobian = torch.autograd.functional.jacobian
    for name, size, f, x in (("black_scholes", 64, black_scholes, bs), ("roe_flux", 64, roe_flux, u),
                             ("robot_arm", 32, robot_arm, uniform((32, 6), -1.5, 1.5)),
                             ("helmholtz", 32, helmholtz, uniform((32, 10), 0.01, 0.06)),
                             ("bottleneck", 256, bottleneck, uniform((256,), -1, 1))):
        results = [measure(lambda: jacobian(f, x, vectorize=True, strategy=s), args.budget)
                   for s in ("forward-mode", "reverse-mode")]
        best = min(results, key=lambda r: r[0])
        report(f"jacobian_{name}", size, "f64", best, f" strategy={'forward' if best is results[0] else 'reverse'}")


def run_matmul(args):
    n = 1024
    for name, dtype in DTYPES.items():
        gen = torch.Generator().manual_seed(2)
        a = torch.randn(n, n, generator=gen, dtype=dtype)
        b = torch.randn(n, n, generator=gen, dtype=dtype)
        report("matmul", n, name, measure(lambda: torch.mm(a, b), args.budget))


SPECIAL = {
    "erf": (-3.0, 3.0, lambda a, b: torch.erf(a)),
    "lgamma": (0.1, 10.0, lambda a, b: torch.lgamma(a)),
    "atan2": (-2.0, 2.0, lambda a, b: torch.atan2(a, b)),
    "asinh": (-10.0, 10.0, lambda a, b: torch.asinh(a)),
}


def run_special(args):
    n = 10_000_000
    for name, (lo, hi, f) in SPECIAL.items():
        x = midpoints(n, lo, hi)
        y = midpoints(n, 2.0, 0.5)  # descending from 2 to 0.5, as bench_compare's second argument
        xg = x.clone().requires_grad_()

        def forward():
            with torch.no_grad():
                f(x, y)

        report("special_fwd_" + name, n, "f64", measure(forward, args.budget))
        report("special_grad_" + name, n, "f64",
               measure(lambda: torch.autograd.grad(f(xg, y).sum(), xg), args.budget))
        del x, y, xg


def run_einsum(args):
    einsum_peers.run_einsum(args, measure, report)


def run_tropical(args):
    einsum_peers.run_tropical(args, measure, report)


def run_indexing(args):
    rows, cols, n = 1000000, 16, 10000000
    gen = torch.Generator().manual_seed(5)
    x = torch.randn(rows, cols, dtype=torch.float64, generator=gen)
    w = torch.randn(rows, cols, dtype=torch.float64, generator=gen)
    idx = torch.randint(0, rows, (rows,), generator=gen)
    xg = x.clone().requires_grad_()

    def forward():
        with torch.no_grad():
            torch.index_select(x, 0, idx)

    report("take_fwd", "1e6x16", "f64", measure(forward, args.budget))
    report("take_grad", "1e6x16", "f64",
           measure(lambda: torch.autograd.grad((torch.index_select(xg, 0, idx) * w).sum(), xg), args.budget))
    y = torch.randn(n, dtype=torch.float64, generator=gen)

    def scan():
        with torch.no_grad():
            torch.cumsum(y, 0)

    report("cumsum_fwd", "1e7", "f64", measure(scan, args.budget))
    del x, w, xg, y


def run_conv(args):
    """bench/cases_indexing.cpp's conv cases: 3x3 conv2d layers (padding 1) forward and with the
    gradient of sum(conv(x, w) * c) for both operands, and one value-and-gradient step of
    examples/cnn.cpp's network."""
    for batch, cin, cout, side, name in ((32, 16, 32, 32, "f32"), (32, 64, 64, 56, "f32"), (32, 64, 64, 56, "f64")):
        dtype = DTYPES[name]
        gen = torch.Generator().manual_seed(9)
        x = torch.randn(batch, cin, side, side, generator=gen, dtype=dtype)
        w = torch.randn(cout, cin, 3, 3, generator=gen, dtype=dtype)
        c = torch.randn(batch, cout, side, side, generator=gen, dtype=dtype)
        xg, wg = x.clone().requires_grad_(), w.clone().requires_grad_()

        def forward():
            with torch.no_grad():
                torch.nn.functional.conv2d(x, w, padding=1)

        def gradient():
            loss = (torch.nn.functional.conv2d(xg, wg, padding=1) * c).sum()
            return torch.autograd.grad(loss, (xg, wg))

        size = f"{batch}x{cin}x{side}x{side}_k3x3x{cout}"
        report("conv_fwd", size, name, measure(forward, args.budget))
        report("conv_grad", size, name, measure(gradient, args.budget))

    f = torch.nn.functional
    gen = torch.Generator().manual_seed(10)
    d = torch.float64
    params = [(torch.randn(*shape, generator=gen, dtype=d) * scale).requires_grad_()
              for shape, scale in (((8, 1, 3, 3), 0.47), ((16, 8, 3, 3), 0.17), ((144, 2), 0.08))]
    params.append(torch.zeros(2, dtype=d, requires_grad=True))
    images = torch.randn(64, 1, 12, 12, generator=gen, dtype=d)
    labels = torch.zeros(64, 2, dtype=d)
    labels[torch.arange(64), torch.arange(64) % 2] = 1

    def step():
        w1, w2, w3, b3 = params
        h1 = f.max_pool2d(torch.relu(f.conv2d(images, w1, padding=1)), 2)
        h2 = f.avg_pool2d(torch.relu(f.conv2d(h1, w2, padding=1)), 2)
        logits = f.dropout(h2.reshape(64, 144), 0.25, training=True) @ w3 + b3
        loss = -(labels * torch.log_softmax(logits, dim=-1)).sum(-1).mean()
        return torch.autograd.grad(loss, params)

    report("cnn_step", "64x1x12x12", "f64", measure(step, args.budget))


def run_eager(args):
    """bench/cases_eager.cpp's cases with PyTorch's own eager mode: one add or matmul on 2x2 f64
    (per operation, 1000 per timed run), a 100-operation chain with backward(), an MLP SGD step."""
    ops = 1000
    start = torch.tensor([[1.0, 0.5], [-0.25, 2.0]], dtype=torch.float64)
    b_add = torch.tensor([[1e-3, -2e-3], [3e-3, 0.0]], dtype=torch.float64)
    c, s = math.cos(0.3), math.sin(0.3)
    b_mm = torch.tensor([[c, -s], [s, c]], dtype=torch.float64)

    def adds():
        x = start
        for _ in range(ops):
            x = x + b_add

    def matmuls():
        x = start
        for _ in range(ops):
            x = torch.matmul(x, b_mm)

    for case, run in (("eager_add", adds), ("eager_matmul", matmuls)):
        median, base, peak, reps = measure(run, args.budget)
        report(case, "2x2", "f64", (median / ops, base, peak, reps))

    x0 = torch.tensor([[0.1, 0.2], [0.3, 0.4]], dtype=torch.float64)

    def chain():
        x = x0.clone().requires_grad_()
        y = x
        for i in range(100):
            k = i % 4
            y = torch.sin(y) if k == 0 else y * x if k == 1 else y + 0.5 if k == 2 else torch.tanh(y)
        y.sum().backward()

    report("eager_chain100_fwd_bwd", "2x2", "f64", measure(chain, args.budget))

    batch, n_in, hidden, n_out = 256, 784, 512, 10
    gen = torch.Generator().manual_seed(1)
    params = [(torch.randn(*shape, generator=gen) * scale).requires_grad_()
              for shape, scale in (((n_in, hidden), 0.03), ((hidden,), 0.01), ((hidden, hidden), 0.04),
                                   ((hidden,), 0.01), ((hidden, n_out), 0.04), ((n_out,), 0.01))]
    x = torch.randn(batch, n_in, generator=gen)
    y = torch.zeros(batch, n_out)
    y[torch.arange(batch), torch.arange(batch) % n_out] = 1

    def step():
        w1, b1, w2, b2, w3, b3 = params
        h1 = torch.tanh(x @ w1 + b1)
        h2 = torch.tanh(h1 @ w2 + b2)
        loss = -(y * torch.log_softmax(h2 @ w3 + b3, dim=-1)).sum(-1).mean()
        loss.backward()
        with torch.no_grad():
            for p in params:
                p -= 1e-3 * p.grad
                p.grad = None

    report("eager_mlp_step", "784-512-512-10x256", "f32", measure(step, args.budget))


def run_linalg(args):
    import linalg_peers  # bench/peers/linalg_peers.py: the decompositions, forward and with backward

    ops = [op for op in linalg_peers.OPS if any(selected(args, f"linalg_{op}_{n}") for n in linalg_peers.SIZES)]
    sizes = [n for n in linalg_peers.SIZES if any(selected(args, f"linalg_{op}_{n}") for op in ops)]
    linalg_peers.run(argparse.Namespace(ops=ops, sizes=sizes, budget=args.budget, values=False))


def run_trg(args):
    import trg_torch  # bench/peers/trg_torch.py: the same TRG algorithm as examples/ising_trg.cpp

    for chi in (16, 24):
        trg_torch.run_bench(argparse.Namespace(chi=chi, niter=20, threads=args.threads, budget=args.budget))


def lstm_loss(xs, w, u, b, v):
    """The LSTM of bench/cases_control.cpp, one cell per step in PyTorch operations."""
    hidden = u.shape[0]
    h = torch.zeros(xs.shape[1], hidden, dtype=xs.dtype)
    c = torch.zeros_like(h)
    total = torch.zeros((), dtype=xs.dtype)
    for t in range(xs.shape[0]):
        gates = xs[t] @ w + h @ u + b
        i, f, g, o = gates.split(hidden, dim=1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        total = total + (h @ v).sum()
    return total


def run_control(args):
    if selected(args, "lstm"):
        control_lstm(args)
    if selected(args, "recurrence"):
        control_recurrence(args)


def control_lstm(args):
    steps, batch, size = 100, 32, 256
    gen = torch.Generator().manual_seed(11)
    xs = torch.randn(steps, batch, size, generator=gen)
    w = (0.05 * torch.randn(size, 4 * size, generator=gen)).requires_grad_()
    u = (0.05 * torch.randn(size, 4 * size, generator=gen)).requires_grad_()
    b = (0.1 * torch.randn(4 * size, generator=gen)).requires_grad_()
    v = 0.1 * torch.randn(size, 1, generator=gen)

    def forward():
        with torch.no_grad():
            lstm_loss(xs, w, u, b, v)

    shape = "h256_t100_b32"
    report("lstm_fwd", shape, "f32", measure(forward, args.budget))
    report("lstm_grad", shape, "f32", measure(lambda: torch.autograd.grad(lstm_loss(xs, w, u, b, v), (w, u, b)),
                                              args.budget))
    # torch.nn.LSTM: PyTorch's fused LSTM kernel (its gate order and two biases differ; the work is
    # the same).
    lstm = torch.nn.LSTM(size, size)
    params = list(lstm.parameters())

    def nn_forward():
        with torch.no_grad():
            (lstm(xs)[0] @ v).sum()

    report("lstm_fwd", shape, "f32", measure(nn_forward, args.budget), impl="torch_nn_lstm")
    report("lstm_grad", shape, "f32", measure(lambda: torch.autograd.grad((lstm(xs)[0] @ v).sum(), params),
                                              args.budget), impl="torch_nn_lstm")


def control_recurrence(args):
    def recurrence(c, x, steps=10000, scale=0.001):
        for _ in range(steps):
            c = c + torch.sin(c) * x * scale
        return c

    c0 = torch.tensor(0.3, dtype=torch.float64, requires_grad=True)
    x = torch.tensor(1.1, dtype=torch.float64, requires_grad=True)

    def rec_forward():
        with torch.no_grad():
            recurrence(c0, x)

    report("recurrence_fwd", "1e4", "f64", measure(rec_forward, args.budget))
    report("recurrence_grad", "1e4", "f64", measure(lambda: torch.autograd.grad(recurrence(c0, x), (c0, x)),
                                                     args.budget))


def run_vmap(args):
    """bench/cases_vmap.cpp's cases with functorch (impl=functorch): per-example gradients of
    run_mlp's network (vmap_mlp_grad) and of a small CNN (vmap_cnn_grad) as vmap(grad), the
    Jacobians of an RK4 step at 128 states as vmap(jacfwd) (vmap_ode_jacobian), and the loss
    gradients of an ensemble of 32 MLPs as vmap(grad) over stacked parameters (vmap_ensemble)."""
    vmap_mlp_grad(args)
    vmap_cnn_grad(args)
    vmap_ode_jacobian(args)
    vmap_ensemble(args)


def one_hot(count, classes, dtype=torch.float32):
    """Labels [count, classes]: example i has class i % classes, as bench_compare's."""
    y = torch.zeros(count, classes, dtype=dtype)
    y[torch.arange(count), torch.arange(count) % classes] = 1
    return y


def mlp_cross_entropy(p, x, y):
    """-sum(y * log_softmax(logits)) of a tanh MLP with weights and biases p = (w1, b1, ..., b3)."""
    w1, b1, w2, b2, w3, b3 = p
    h1 = torch.tanh(x @ w1 + b1)
    h2 = torch.tanh(h1 @ w2 + b2)
    return -(y * torch.log_softmax(h2 @ w3 + b3, dim=-1)).sum()


def vmap_mlp_grad(args):
    """Per-example gradients of run_mlp's network (f32, batch 256) with functorch's vmap(grad)."""
    from functorch import grad, vmap
    batch, n_in, hidden, n_out = 256, 784, 512, 10
    gen = torch.Generator().manual_seed(1)
    dtype = torch.float32

    def normal(shape, scale):
        return torch.randn(*shape, generator=gen, dtype=dtype) * scale

    params = (normal((n_in, hidden), 0.03), normal((hidden,), 0.01), normal((hidden, hidden), 0.04),
              normal((hidden,), 0.01), normal((hidden, n_out), 0.04), normal((n_out,), 0.01))
    x = torch.randn(batch, n_in, generator=gen, dtype=dtype)
    y = one_hot(batch, n_out)
    per_example = vmap(grad(mlp_cross_entropy), in_dims=(None, 0, 0))
    report("vmap_mlp_grad", "784-512-512-10x256", "f32", measure(lambda: per_example(params, x, y), args.budget),
           impl="functorch")


def vmap_cnn_grad(args):
    """Per-example gradients of the CNN 1x28x28 -> conv 3x3 8 -> tanh -> conv 3x3 16 stride 2 ->
    tanh -> dense 10 (log-softmax cross-entropy), batch 64, f32: vmap(grad) of one example's loss."""
    from functorch import grad, vmap
    f = torch.nn.functional
    batch, n_out = 64, 10
    gen = torch.Generator().manual_seed(2)
    dtype = torch.float32

    def normal(shape, scale):
        return torch.randn(*shape, generator=gen, dtype=dtype) * scale

    params = (normal((8, 1, 3, 3), 0.33), normal((8,), 0.01), normal((16, 8, 3, 3), 0.12), normal((16,), 0.01),
              normal((16 * 14 * 14, n_out), 0.018), normal((n_out,), 0.01))
    x = torch.randn(batch, 1, 28, 28, generator=gen, dtype=dtype)
    y = one_hot(batch, n_out)

    def loss(p, xi, yi):  # xi [1, 28, 28]: conv2d sees a batch of one
        w1, b1, w2, b2, w3, b3 = p
        h1 = torch.tanh(f.conv2d(xi.unsqueeze(0), w1, b1, padding=1))
        h2 = torch.tanh(f.conv2d(h1, w2, b2, stride=2, padding=1))
        return -(yi * torch.log_softmax(h2.reshape(-1) @ w3 + b3, dim=-1)).sum()

    per_example = vmap(grad(loss), in_dims=(None, 0, 0))
    report("vmap_cnn_grad", "1x28x28-c8-c16s2-d10x64", "f32", measure(lambda: per_example(params, x, y), args.budget),
           impl="functorch")


def vmap_ode_jacobian(args):
    """The 32 x 32 Jacobian of one RK4 step (h = 0.05) of u' = tanh(W u + b) - 0.1 u at 128 states,
    f64: vmap(jacfwd(step))."""
    from functorch import jacfwd, vmap
    states, dim, h = 128, 32, 0.05
    gen = torch.Generator().manual_seed(3)
    dtype = torch.float64
    w = torch.randn(dim, dim, generator=gen, dtype=dtype) * 0.3
    b = torch.randn(dim, generator=gen, dtype=dtype) * 0.1
    us = torch.randn(states, dim, generator=gen, dtype=dtype)

    def rhs(u):
        return torch.tanh(w @ u + b) - 0.1 * u

    def step(u):
        k1 = rhs(u)
        k2 = rhs(u + h / 2 * k1)
        k3 = rhs(u + h / 2 * k2)
        k4 = rhs(u + h * k3)
        return u + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)

    jacobians = vmap(jacfwd(step))
    report("vmap_ode_jacobian", "rk4_32x128", "f64", measure(lambda: jacobians(us), args.budget), impl="functorch")


def vmap_ensemble(args):
    """An ensemble of 32 MLPs (64-128-128-10, tanh, f32) on one shared batch of 128: each member's
    mean cross-entropy gradient, vmap(grad) over the stacked parameters."""
    from functorch import grad, vmap
    members, batch, n_in, hidden, n_out = 32, 128, 64, 128, 10
    gen = torch.Generator().manual_seed(4)
    dtype = torch.float32

    def normal(shape, scale):
        return torch.randn(members, *shape, generator=gen, dtype=dtype) * scale

    params = (normal((n_in, hidden), 0.125), normal((hidden,), 0.01), normal((hidden, hidden), 0.09),
              normal((hidden,), 0.01), normal((hidden, n_out), 0.09), normal((n_out,), 0.01))
    x = torch.randn(batch, n_in, generator=gen, dtype=dtype)
    y = one_hot(batch, n_out)

    def member_loss(p, x, y):
        return mlp_cross_entropy(p, x, y) / batch

    member_gradients = vmap(grad(member_loss), in_dims=(0, None, None))
    report("vmap_ensemble", "32x64-128-128-10x128", "f32", measure(lambda: member_gradients(params, x, y), args.budget),
           impl="functorch")


def run_checkpoint(args):
    """bench/cases_checkpoint.cpp's checkpoint_mlp64 (impl=torch, time only: PyTorch reports no
    tensor memory on the CPU): the gradient of sum(h^2) for all weights of a 64-layer tanh net
    (width 256, batch 1024, f32, nn.Sequential of Linear without bias and Tanh), plain and with
    torch.utils.checkpoint.checkpoint_sequential in 8 segments of 8 layers (which, unlike ours,
    runs the last segment without a checkpoint). Debian's torch 1.13 has only the reentrant
    checkpoint there, which needs backward() and an input that requires grad: both variants
    therefore take x's gradient too (one more matmul of 1024 rows) and use backward()."""
    import inspect
    from torch.utils.checkpoint import checkpoint_sequential
    layers, width, batch, segments = 64, 256, 1024, 8
    gen = torch.Generator().manual_seed(5)
    x = torch.randn(batch, width, generator=gen).requires_grad_()
    model = torch.nn.Sequential(*[m for _ in range(layers) for m in (torch.nn.Linear(width, width, bias=False),
                                                                        torch.nn.Tanh())])
    params = [m.weight for m in model if isinstance(m, torch.nn.Linear)]
    with torch.no_grad():
        for w in params:
            w.normal_(0.0, 1.0 / 16, generator=gen)
    kwargs = {"use_reentrant": False} if "use_reentrant" in inspect.signature(checkpoint_sequential).parameters else {}

    def gradients(forward):
        for w in params:
            w.grad = None
        x.grad = None
        h = forward()
        (h * h).sum().backward()
        return [w.grad for w in params]

    def plain():
        return gradients(lambda: model(x))

    def checkpointed():
        return gradients(lambda: checkpoint_sequential(model, segments, x, **kwargs))

    if not all(torch.equal(a, b) for a, b in zip(plain(), checkpointed())):
        sys.stderr.write("torch_bench: checkpoint_mlp64: checkpointed and plain gradients differ\n")
    report("checkpoint_mlp64", "l64_w256_b1024", "f32", measure(plain, args.budget))
    report("checkpoint_mlp64", f"l64_w256_b1024_seg{layers // segments}", "f32", measure(checkpointed, args.budget))


def closed_form(count, phase, scale):
    """Input element t: scale sin(phase + 1.37 t), bench/cases_adbench.cpp's closed_form (both sides
    call glibc's sin, so they hold the same numbers)."""
    return torch.tensor([scale * math.sin(phase + 1.37 * t) for t in range(count)], dtype=torch.float64)


def gmm_constant(n, k, d, gamma, m):
    """-n d/2 log(2 pi) - K C of ADBench's objective (cases_adbench.cpp's gmm_constant)."""
    n_prime = d + m + 1
    log_multigamma = 0.25 * d * (d - 1) * math.log(math.pi) + sum(math.lgamma(0.5 * n_prime + 0.5 * (1 - j))
                                                                    for j in range(1, d + 1))
    c = n_prime * d * (math.log(gamma) - 0.5 * math.log(2.0)) - log_multigamma
    return -0.5 * n * d * math.log(2 * math.pi) - k * c


def run_gmm(args):
    """ADBench's Gaussian-mixture objective (bench/cases_adbench.cpp): n = 1000, K = 25,
    D = 2, 10, 20, 64, f64, gamma = 1, m = 1; the objective under no_grad and its gradient in
    (alpha, mu, q, l) by torch.autograd.grad, with Q placed by index_add as ours is."""
    n, k, gamma, m = 1000, 25, 1.0, 1.0
    for d in (2, 10, 20, 64):
        packed = d * (d - 1) // 2
        params = [closed_form(k, 0.1, 0.5), closed_form(k * d, 0.2, 1.0).reshape(k, d),
                  closed_form(k * d, 0.3, 0.2).reshape(k, d),
                  closed_form(k * packed, 0.4, 0.5 / math.sqrt(d)).reshape(k, packed)]
        x = closed_form(n * d, 0.5, 1.5).reshape(n, d)
        pos = [i * d + i for i in range(d)] + [i * d + j for j in range(d) for i in range(j + 1, d)]
        pos = torch.tensor(pos, dtype=torch.int64)
        constant = gmm_constant(n, k, d, gamma, m)

        def objective(alpha, mu, q, l):
            entries = torch.cat([q.exp(), l], 1)
            big_q = torch.zeros(k, d * d, dtype=torch.float64).index_add(1, pos, entries).reshape(k, d, d)
            y = torch.einsum("kij,nj->nki", big_q, x) - torch.einsum("kij,kj->ki", big_q, mu)
            inner = alpha + q.sum(1) - 0.5 * (y * y).sum(2)
            prior = 0.5 * gamma * gamma * ((2 * q).exp().sum() + (l * l).sum()) - m * q.sum()
            return torch.logsumexp(inner, 1).sum() - n * torch.logsumexp(alpha, 0) + prior + constant

        leaves = [p.clone().requires_grad_() for p in params]

        def forward():
            with torch.no_grad():
                return objective(*params)

        value = forward().item()
        fwd = measure(forward, args.budget)
        grad = measure(lambda: torch.autograd.grad(objective(*leaves), leaves), args.budget)
        report("gmm_fwd", f"d{d}", "f64", fwd, f" value={value:.12g} n={n} K={k}")
        report("gmm_grad", f"d{d}", "f64", grad, f" ratio_vs_fwd={grad[0] / fwd[0]:.4g}")


def lstm_adbench_loss(main, extra, state, sequence):
    """ADBench's LSTM loss (bench/cases_adbench.cpp's lstm_adbench_loss), one step per Python
    iteration; main [l, 2, 4 b], extra [3, b], state [l, 2, b], sequence [c, b] one-hot."""
    layers, b = main.shape[0], extra.shape[1]
    w = [main[j, 0, g * b:(g + 1) * b] for j in range(layers) for g in range(4)]
    u = [main[j, 1, g * b:(g + 1) * b] for j in range(layers) for g in range(4)]
    in_weight, out_weight, out_bias = extra[0], extra[1], extra[2]
    hs = [state[j, 0] for j in range(layers)]
    cells = [state[j, 1] for j in range(layers)]
    total = torch.zeros((), dtype=main.dtype)
    for t in range(sequence.shape[0] - 1):
        x = sequence[t] * in_weight
        for j in range(layers):
            o = 4 * j
            forget = torch.sigmoid(x * w[o] + u[o])
            ingate = torch.sigmoid(hs[j] * w[o + 1] + u[o + 1])
            outgate = torch.sigmoid(x * w[o + 2] + u[o + 2])
            change = torch.tanh(hs[j] * w[o + 3] + u[o + 3])
            cells[j] = cells[j] * forget + ingate * change
            hs[j] = outgate * torch.tanh(cells[j])
            x = hs[j]
        prediction = x * out_weight + out_bias
        total = total + (sequence[t + 1] * (prediction - torch.logsumexp(prediction, 0))).sum()
    return -total / ((sequence.shape[0] - 1) * b)


def run_lstm_adbench(args):
    """ADBench's LSTM at l = 2, c = 1024, b = 14 (f64): the loss under no_grad and its gradient in
    the main and extra parameters by torch.autograd.grad."""
    layers, chars, b = 2, 1024, 14
    sequence = torch.zeros(chars, b, dtype=torch.float64)
    sequence[torch.arange(chars), torch.tensor([(7 * t + (t * t) // 5) % b for t in range(chars)])] = 1
    main = closed_form(layers * 2 * 4 * b, 0.6, 0.5).reshape(layers, 2, 4 * b)
    extra = closed_form(3 * b, 0.7, 0.8).reshape(3, b)
    state = closed_form(layers * 2 * b, 0.8, 0.3).reshape(layers, 2, b)
    leaves = [main.clone().requires_grad_(), extra.clone().requires_grad_()]

    def forward():
        with torch.no_grad():
            return lstm_adbench_loss(main, extra, state, sequence)

    value = forward().item()
    fwd = measure(forward, args.budget)
    grad = measure(lambda: torch.autograd.grad(lstm_adbench_loss(leaves[0], leaves[1], state, sequence), leaves),
                   args.budget)
    size = f"l{layers}_c{chars}_b{b}"
    report("lstm_adbench_fwd", size, "f64", fwd, f" value={value:.12g}")
    report("lstm_adbench_grad", size, "f64", grad, f" ratio_vs_fwd={grad[0] / fwd[0]:.4g}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--cases", default=",".join(FAMILIES))
    parser.add_argument("--only", default="", help="instance keys within the families (bench_compare's --only)")
    parser.add_argument("--budget", type=float, default=1.5,
                        help="timed seconds aimed for per case (default 1.5)")
    parser.add_argument("--einsum-networks", default="/tmp/tenferro_einsum_networks.txt",
                        help="the networks and paths bench_compare's einsum cases wrote")
    args = parser.parse_args()
    cases = [c for c in args.cases.split(",") if c]
    unknown = [c for c in cases if c not in FAMILIES]
    if unknown or args.threads < 1:
        parser.error(f"unknown case families {unknown}" if unknown else "--threads must be at least 1")
    torch.set_num_threads(args.threads)
    for family in FAMILIES:
        if family in cases:
            globals()["run_" + family](args)


if __name__ == "__main__":
    main()
