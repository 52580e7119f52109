#!/usr/bin/python3
"""The per-call time of a compiled gradient called from Python: tenferro's module (impl=python)
and PyTorch (impl=torch), on the cases bench_compare times from C++ (grad_call: the gradient of
sum(tanh(w * x) * w) in w, n = 16 and 16384, f64). Run by `scripts/bench python`, which puts the
module on PYTHONPATH and prints ratios against C++ and PyTorch. Each implementation runs in its
own process (--impl), so that neither's threads or allocator state can touch the other's timing.

    PYTHONPATH=build/release/python /usr/bin/python3 bench/peers/python_overhead.py --impl python|torch [--threads N] [--budget S]
"""
import argparse
import time

import numpy as np


def median_time(call, budget):
    call()
    start = time.perf_counter()
    call()
    one = max(time.perf_counter() - start, 1e-9)
    reps = int(min(20001, max(5, budget / one)))
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    times.sort()
    return times[len(times) // 2], reps


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--budget", type=float, default=1.5)
    parser.add_argument("--impl", choices=("python", "torch"), required=True)
    args = parser.parse_args()
    if args.impl == "python":
        import tenferro as tf
    else:
        try:
            import torch
        except ImportError:
            return
        torch.set_num_threads(args.threads)
    for n in (16, 16384):
        w = -1.0 + 2.0 * (np.arange(n) + 0.5) / n
        x = 0.5 + (np.arange(n) + 0.5) / n
        if args.impl == "python":
            wt, xt = tf.Tensor(w), tf.Tensor(x)
            g = tf.grad(lambda a, b: tf.sum(tf.tanh(a * b) * a))
            median, reps = median_time(lambda: g(wt, xt), args.budget)
            print(f"case=grad_call impl=python size={n} median_s={median:.6g} dtype=f64 reps={reps}", flush=True)
        else:
            tw, tx = torch.tensor(w, requires_grad=True), torch.tensor(x)
            median, reps = median_time(lambda: torch.autograd.grad((torch.tanh(tw * tx) * tw).sum(), tw), args.budget)
            print(f"case=grad_call impl=torch size={n} median_s={median:.6g} dtype=f64 reps={reps}", flush=True)


if __name__ == "__main__":
    main()
