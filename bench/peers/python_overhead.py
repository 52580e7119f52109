#!/usr/bin/python3
"""The per-call time of a compiled gradient called from Python: tenferro's module (impl=python)
and PyTorch (impl=torch), on the cases bench_compare times from C++ (grad_call: the gradient of
sum(tanh(w * x) * w) in w, n = 16 and 16384, f64); and one Adam training step of an MLP from
Python (python_adam_mlp_step: 784-256-256-10, tanh, softmax cross-entropy, batch 128, f32): ours
one jitted function (value_and_grad and tf.optim.adam's step), PyTorch's the usual zero_grad,
forward, backward and torch.optim.Adam.step. Run by `scripts/bench python`, which puts the
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
    adam_mlp_step(args.impl, args.budget)


def adam_mlp_step(impl, budget):
    sizes, batch = (784, 256, 256, 10), 128
    rng = np.random.default_rng(0)
    params = [{"w": (rng.standard_normal((m, n)) / np.sqrt(m)).astype(np.float32), "b": np.zeros(n, np.float32)}
              for m, n in zip(sizes[:-1], sizes[1:])]
    x = rng.standard_normal((batch, sizes[0])).astype(np.float32)
    labels = np.eye(sizes[-1], dtype=np.float32)[rng.integers(0, sizes[-1], batch)]
    if impl == "python":
        import tenferro as tf

        def loss_fn(ps, x, y):
            h = x
            for i, layer in enumerate(ps):
                h = h @ layer["w"] + layer["b"]
                if i + 1 < len(ps):
                    h = tf.tanh(h)
            return tf.cross_entropy(h, y)

        opt = tf.optim.adam(1e-3)

        @tf.jit
        def train_step(ps, state, x, y):
            loss, grads = tf.value_and_grad(loss_fn)(ps, x, y)
            ps, state = opt.step(ps, grads, state)
            return ps, state, loss

        xt, yt = tf.Tensor(x), tf.Tensor(labels)
        box = [params, opt.init(params)]

        def step():
            box[0], box[1], _ = train_step(box[0], box[1], xt, yt)
    else:
        import torch
        ps = [{k: torch.tensor(v, requires_grad=True) for k, v in layer.items()} for layer in params]
        opt = torch.optim.Adam([layer[k] for layer in ps for k in ("w", "b")], lr=1e-3)
        xt, yt = torch.tensor(x), torch.tensor(labels)

        def step():
            opt.zero_grad()
            h = xt
            for i, layer in enumerate(ps):
                h = h @ layer["w"] + layer["b"]
                if i + 1 < len(ps):
                    h = torch.tanh(h)
            loss = torch.nn.functional.cross_entropy(h, yt)
            loss.backward()
            opt.step()
    median, reps = median_time(step, budget)
    print(f"case=python_adam_mlp_step impl={impl} size=b{batch} median_s={median:.6g} dtype=f32 reps={reps}", flush=True)


if __name__ == "__main__":
    main()
