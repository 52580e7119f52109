"""tenferro.optim against PyTorch's optimizers step by step on the same MLP (same initial
parameters, data and updates: the parameters must agree to rounding after every step), L-BFGS on a
quadratic (n iterations with an exact line search) and on Rosenbrock's function, the SciPy bridge,
schedules, and the three ways of running a step (compiled, eager, on arrays)."""
import numpy as np
import pytest

import tenferro as tf

RNG = np.random.default_rng(3)
SIZES = (6, 16, 3)
X = RNG.standard_normal((32, SIZES[0]))
Y = RNG.standard_normal((32, SIZES[-1]))


def init_params():
    return [{"w": RNG.standard_normal((m, n)) / np.sqrt(m), "b": 0.1 * RNG.standard_normal(n)}
            for m, n in zip(SIZES[:-1], SIZES[1:])]


def loss_fn(params, x, y):
    h = x
    for i, layer in enumerate(params):
        h = h @ layer["w"] + layer["b"]
        if i + 1 < len(params):
            h = tf.tanh(h)
    return tf.mean((h - y) ** 2)


def torch_run(torch, make_opt, params0, steps):
    ps = [{k: torch.tensor(v, requires_grad=True) for k, v in layer.items()} for layer in params0]
    flat = [layer[k] for layer in ps for k in ("b", "w")]
    opt = make_opt(flat)
    x, y = torch.tensor(X), torch.tensor(Y)
    history = []
    for _ in range(steps):
        opt.zero_grad()
        h = x
        for i, layer in enumerate(ps):
            h = h @ layer["w"] + layer["b"]
            if i + 1 < len(ps):
                h = torch.tanh(h)
        loss = torch.mean((h - y) ** 2)
        loss.backward()
        opt.step()
        history.append([p.detach().numpy().copy() for p in flat])
    return history


def tenferro_run(opt, params0, steps):
    @tf.jit
    def train_step(params, state):
        loss, grads = tf.value_and_grad(loss_fn)(params, X, Y)
        params, state = opt.step(params, grads, state)
        return params, state

    params, state = params0, opt.init(params0)
    history = []
    for _ in range(steps):
        params, state = train_step(params, state)
        history.append([np.asarray(layer[k]) for layer in params for k in ("b", "w")])
    return history


@pytest.mark.parametrize("name", ["adam", "adam_l2", "adamw", "sgd", "sgd_nesterov"])
def test_matches_pytorch_step_by_step(name):
    torch = pytest.importorskip("torch")
    ours, theirs = {
        "adam": (tf.optim.adam(1e-2), lambda p: torch.optim.Adam(p, lr=1e-2)),
        "adam_l2": (tf.optim.adam(1e-2, b1=0.8, eps=1e-6, weight_decay=0.1),
                    lambda p: torch.optim.Adam(p, lr=1e-2, betas=(0.8, 0.999), eps=1e-6, weight_decay=0.1)),
        "adamw": (tf.optim.adamw(1e-2), lambda p: torch.optim.AdamW(p, lr=1e-2)),
        "sgd": (tf.optim.sgd(0.05, momentum=0.9, weight_decay=1e-3),
                lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9, weight_decay=1e-3)),
        "sgd_nesterov": (tf.optim.sgd(0.05, momentum=0.9, nesterov=True),
                         lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9, nesterov=True)),
    }[name]
    params0 = init_params()
    got, want = tenferro_run(ours, params0, 100), torch_run(torch, theirs, params0, 100)
    for step, (g, w) in enumerate(zip(got, want)):
        for a, b in zip(g, w):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12, err_msg=f"step {step + 1}")
    # And the training made progress.
    assert float(tf.jit(loss_fn)(got_params(got[-1], params0), X, Y)) < 0.8 * float(tf.jit(loss_fn)(params0, X, Y))


def got_params(flat, like):
    it = iter(flat)
    return [{"b": next(it), "w": next(it)} for _ in like]


def test_eager_and_array_steps_equal_the_compiled_one():
    opt = tf.optim.adam(0.05)
    params0 = init_params()
    compiled = tenferro_run(opt, params0, 5)
    # On arrays: tf.grad's gradients, then opt.step outside any transform (returns Tensors).
    params, state = params0, opt.init(params0)
    for k in range(5):
        grads = tf.grad(loss_fn)(params, X, Y)
        params, state = opt.step(params, grads, state)
        assert isinstance(params[0]["w"], tf.Tensor)
        for a, b in zip([np.asarray(layer[n]) for layer in params for n in ("b", "w")], compiled[k]):
            np.testing.assert_allclose(a, b, rtol=1e-14, atol=1e-15)
    # Eagerly, PyTorch-style: backward() then a step on the leaves' values.
    leaves = [{n: tf.EagerTensor(v, requires_grad=True) for n, v in layer.items()} for layer in params0]
    state = opt.init(params0)
    for k in range(5):
        loss_fn(leaves, X, Y).backward()
        grads = [{n: t.grad for n, t in layer.items()} for layer in leaves]
        with tf.no_grad():
            new, state = opt.step(leaves, grads, state)
        leaves = [{n: tf.EagerTensor(t, requires_grad=True) for n, t in layer.items()} for layer in new]
        for a, b in zip([np.asarray(layer[n]) for layer in leaves for n in ("b", "w")], compiled[k]):
            np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-14)


def test_a_callable_schedule_and_a_built_in_one():
    sched = tf.optim.exponential_decay(0.1, 0.5, 2)
    opt_a = tf.optim.sgd(sched)
    opt_b = tf.optim.sgd(lambda count: 0.1 * 0.5 ** (tf.astype(count, "f64") / 2.0))
    p, sa, sb = [np.array([1.0])], None, None
    pa = pb = p
    sa, sb = opt_a.init(p), opt_b.init(p)
    for k in range(6):
        pa, sa = opt_a.step(pa, [np.array([1.0])], sa)
        pb, sb = opt_b.step(pb, [np.array([1.0])], sb)
    want = 1.0 - sum(0.1 * 0.5 ** (k / 2) for k in range(6))
    assert abs(float(pa[0][0]) - want) < 1e-15 and abs(float(pb[0][0]) - want) < 1e-15


def test_lbfgs_quadratic_in_n_iterations_and_rosenbrock():
    n = 7
    q, _ = np.linalg.qr(RNG.standard_normal((n, n)))
    a = q @ np.diag(np.logspace(0, 2, n)) @ q.T
    b = RNG.standard_normal(n)
    r = tf.optim.lbfgs(lambda x: 0.5 * tf.sum(x * (a @ x)) - tf.sum(b * x), np.zeros(n), c1=1e-10, c2=1e-6)
    assert r.converged and r.iterations <= n, r
    np.testing.assert_allclose(np.asarray(r.x), np.linalg.solve(a, b), rtol=1e-9)

    def rosen(p):
        x, y = p["x"], p["y"]
        return (1.0 - x) ** 2 + 100.0 * (y - x * x) ** 2

    r = tf.optim.lbfgs(rosen, {"x": np.array(-1.2), "y": np.array(1.0)})
    assert r.converged, r.message
    assert abs(float(r.x["x"]) - 1.0) < 1e-10 and abs(float(r.x["y"]) - 1.0) < 1e-10


def test_scipy_bridge():
    pytest.importorskip("scipy")

    def rosen(x):
        return tf.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)

    r = tf.optim.scipy_minimize(rosen, np.array([-1.2, 1.0, -1.2, 1.0]), method="BFGS", options={"gtol": 1e-10})
    assert r.success, r.message
    np.testing.assert_allclose(np.asarray(r.x), np.ones(4), atol=1e-8)


def test_errors():
    opt = tf.optim.adam()
    state = opt.init([np.ones(3)])
    with pytest.raises(ValueError, match="gradient 0 is f64\\[2\\]"):
        opt.step([np.ones(3)], [np.ones(2)], state)
    with pytest.raises(ValueError, match="structure"):
        opt.step([np.ones(3)], (np.ones(3),), state)
    with pytest.raises(TypeError):
        opt.init([np.zeros(2, dtype=np.int64)])
    with pytest.raises(TypeError, match="lr must be"):
        tf.optim.sgd("fast")
