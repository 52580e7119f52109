"""einsum and tropical peers for torch_bench.py (families `einsum` and `tropical`).

einsum: reads the networks and paths that bench_compare's einsum cases wrote (the exchange file,
--einsum-networks) and, per network:
  * impl=torch          torch.einsum on the subscripts (networks of at most 52 labels); without
                        opt_einsum PyTorch contracts left to right;
  * impl=torch_ourpath  PyTorch following tenferro's path, one torch.einsum per pairwise step (the
                        kernels compared alone);
  * impl=numpy_greedy / numpy_optimal   the paths of NumPy's einsum_path ('greedy' and, up to 10
                        tensors, 'optimal'; for more than 52 labels NumPy's own path functions are
                        called on the label sets), scored with tenferro's cost model
                        (tenferro/einsum_path.hpp) beside tenferro's path: log2_flops, log2_size,
                        ours_log2_flops, ours_log2_size, and median_s = the search time.
tropical: PyTorch's broadcast+reduce max-plus matmul, (a[:, :, None] + b[None, :, :]).amax(1).
"""
import math
import string
import time

import numpy as np
import torch

LETTERS = string.ascii_letters


def read_networks(path):
    """The exchange file: per case its name, size, dtype, timed flag, label sizes, inputs, output
    and path (SSA pairs)."""
    nets = []
    with open(path) as f:
        lines = [line.rstrip("\n") for line in f]
    i = 0
    while i < len(lines):
        _, name, size, dtype, timed = lines[i].split()
        sizes = [int(x) for x in lines[i + 1].split()[1:]]
        count = int(lines[i + 2].split()[1])
        inputs = [[int(x) for x in lines[i + 3 + k].split()] for k in range(count)]
        output = [int(x) for x in lines[i + 3 + count].split()[1:]]
        flat = [int(x) for x in lines[i + 4 + count].split()[1:]]
        nets.append(dict(name=name, size=size, dtype=dtype, timed=timed == "1", sizes=sizes, inputs=inputs,
                         output=output, path=list(zip(flat[0::2], flat[1::2]))))
        i += 5 + count
    return nets


def score(net, ssa):
    """(log2 flops, log2 largest intermediate) of an SSA path under tenferro's cost model: a step
    costs the product of the lengths of all labels of its two tensors; a label survives a step when
    the output or a tensor not in the step carries it."""
    live = {k: set(t) for k, t in enumerate(net["inputs"])}
    out = set(net["output"])
    n = len(live)
    flops, largest = 0.0, 0.0
    for step, (a, b) in enumerate(ssa):
        ta, tb = live.pop(a), live.pop(b)
        both = ta | tb
        needed = set(out)
        for t in live.values():
            needed |= t
        kept = {l for l in both if l in needed}
        flops += math.prod(net["sizes"][l] for l in both)
        largest = max(largest, float(math.prod(net["sizes"][l] for l in kept)))
        live[n + step] = kept
    return math.log2(max(flops, 1.0)), math.log2(max(largest, 1.0))


def linear_to_ssa(linear, n):
    """opt_einsum/NumPy's path (positions in the current list, results appended) to SSA pairs."""
    ids = list(range(n))
    ssa = []
    nxt = n
    for step in linear:
        step = sorted(step, reverse=True)
        picked = [ids.pop(p) for p in step]
        if len(picked) == 1:
            ids.append(picked[0])  # a single-tensor step: NumPy's own reduction, no pair
            continue
        while len(picked) > 2:  # NumPy's greedy contracts pairs only; fold longer steps pairwise
            x, y = picked.pop(), picked.pop()
            ssa.append((x, y))
            picked.append(nxt)
            nxt += 1
        ssa.append((picked[0], picked[1]))
        ids.append(nxt)
        nxt += 1
    return ssa


def subscripts(net):
    names = {}
    for t in net["inputs"] + [net["output"]]:
        for l in t:
            names.setdefault(l, LETTERS[len(names)] if len(names) < len(LETTERS) else None)
    if None in names.values():
        return None
    terms = ["".join(names[l] for l in t) for t in net["inputs"]]
    return ",".join(terms) + "->" + "".join(names[l] for l in net["output"])


def numpy_path(net, kind):
    """NumPy's path (SSA) and its search time: einsum_path where the labels fit in letters, its
    path functions on the label sets otherwise. kind "greedy_nolimit" is NumPy's greedy without
    einsum_path's default memory limit (the largest input or output), which otherwise stops it
    at the first intermediate above that size and contracts all the rest in one step."""
    shapes = [[net["sizes"][l] for l in t] for t in net["inputs"]]
    spec = subscripts(net)
    start = time.perf_counter()
    if kind == "greedy_nolimit":
        from numpy.core import einsumfunc
        sets = [set(t) for t in net["inputs"]]
        sizes = {l: net["sizes"][l] for l in range(len(net["sizes"]))}
        linear = einsumfunc._greedy_path(sets, set(net["output"]), sizes, math.inf)
    elif spec is not None:
        operands = [np.empty(s) if s else np.empty(()) for s in shapes]
        linear = np.einsum_path(spec, *operands, optimize=kind)[0][1:]
    else:
        from numpy.core import einsumfunc
        sets = [set(t) for t in net["inputs"]]
        sizes = {l: net["sizes"][l] for l in range(len(net["sizes"]))}
        fn = einsumfunc._greedy_path if kind == "greedy" else einsumfunc._optimal_path
        # einsum_path's default memory limit: the largest input or output.
        limit = max(math.prod(net["sizes"][l] for l in t) for t in net["inputs"] + [net["output"]])
        linear = fn(sets, set(net["output"]), sizes, limit)
    return linear_to_ssa(linear, len(shapes)), time.perf_counter() - start


def pairwise(net, tensors):
    """Contracts along tenferro's path with one torch.einsum per step."""
    live = {k: (x, list(t)) for k, (x, t) in enumerate(zip(tensors, net["inputs"]))}
    out = set(net["output"])
    n = len(live)
    for step, (a, b) in enumerate(net["path"]):
        (xa, la), (xb, lb) = live.pop(a), live.pop(b)
        needed = set(out)
        for _, t in live.values():
            needed.update(t)
        kept = [l for l in dict.fromkeys(la + lb) if l in needed]
        local = {l: LETTERS[i] for i, l in enumerate(dict.fromkeys(la + lb))}
        spec = "".join(local[l] for l in la) + "," + "".join(local[l] for l in lb) + "->" + "".join(local[l] for l in kept)
        live[n + step] = (torch.einsum(spec, xa, xb), kept)
    (x, labels), = live.values()
    return x.permute([labels.index(l) for l in net["output"]]) if labels else x


def run_einsum(args, measure, report):
    dtypes = {"f32": torch.float32, "f64": torch.float64}
    print(f"# torch.backends.opt_einsum.is_available()={torch.backends.opt_einsum.is_available()}", flush=True)
    for net in read_networks(args.einsum_networks):
        shapes = [[net["sizes"][l] for l in t] for t in net["inputs"]]
        ours = score(net, net["path"])
        short = net["name"][len("einsum_"):]
        if net["dtype"] == "f64" or net["name"] != "einsum_matmul":
            kinds = ["greedy", "greedy_nolimit"] + (["optimal"] if len(shapes) <= 10 else [])
            for kind in kinds:
                ssa, search_s = numpy_path(net, kind)
                flops, size = score(net, ssa)
                print(f"case=einsum_path_{short} impl=numpy_{kind} size={net['size']} median_s={search_s:.6g} "
                      f"dtype={net['dtype']} log2_flops={flops:.4g} log2_size={size:.4g} "
                      f"ours_log2_flops={ours[0]:.4g} ours_log2_size={ours[1]:.4g} "
                      f"flops_gain_log2={flops - ours[0]:.4g}", flush=True)
        if not net["timed"]:
            continue
        gen = torch.Generator().manual_seed(5)
        tensors = [torch.randn(*s, generator=gen, dtype=dtypes[net["dtype"]]) / math.prod(s) ** 0.25 for s in shapes]
        spec = subscripts(net)
        with torch.no_grad():
            if spec is not None:
                report(net["name"], net["size"], net["dtype"], measure(lambda: torch.einsum(spec, *tensors), args.budget),
                       f" log2_flops={score(net, left_to_right(len(shapes)))[0]:.4g}")
            report(net["name"], net["size"], net["dtype"], measure(lambda: pairwise(net, tensors), args.budget),
                   impl="torch_ourpath")


def left_to_right(n):
    """((0 1) 2) 3 ... in SSA form."""
    steps = []
    last = 0
    for k in range(1, n):
        steps.append((last, k))
        last = n + k - 1
    return steps


def run_tropical(args, measure, report):
    for n in (128, 384):
        gen = torch.Generator().manual_seed(7)
        a = torch.randn(n, n, generator=gen, dtype=torch.float64)
        b = torch.randn(n, n, generator=gen, dtype=torch.float64)
        with torch.no_grad():
            report("tropical_matmul", n, "f64", measure(lambda: (a[:, :, None] + b[None, :, :]).amax(1), args.budget))
