"""The Python module: NumPy exchange, transforms against closed forms and central differences, the
adjoint identity, PyTorch's autograd where it is installed, errors, and reference counts."""
import gc
import math
import sys

import numpy as np
import pytest

import tenferro as tf

RNG = np.random.default_rng(7)


def central_difference(f, x, eps=1e-6):
    """The gradient of a scalar function of one array by central differences."""
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = eps
        g[i] = (f(x + e) - f(x - e)) / (2 * eps)
    return g


def test_tensor_exchanges_memory_with_numpy():
    a = RNG.standard_normal((3, 4))
    t = tf.Tensor(a)
    assert t.shape == (3, 4) and t.dtype == "f64"
    view = np.asarray(t)
    np.testing.assert_array_equal(view, a)
    # numpy.asarray shares the tensor's memory (no copy), and keeps the tensor alive.
    assert view.__array_interface__["data"][0] == t.data_ptr
    del t
    gc.collect()
    np.testing.assert_array_equal(view, a)
    # Non-contiguous input arrays are copied into a contiguous tensor.
    strided = a[:, ::2]
    np.testing.assert_array_equal(np.asarray(tf.Tensor(strided)), strided)
    for dtype, name in [(np.float32, "f32"), (np.complex64, "c64"), (np.complex128, "c128"), (np.int64, "i64")]:
        assert tf.Tensor(a.astype(dtype)).dtype == name


def test_grad_matches_the_closed_form():
    w, x = RNG.standard_normal(5), RNG.standard_normal(5)
    g = tf.grad(lambda w, x: tf.sum(tf.exp(w * x)))(w, x)
    np.testing.assert_allclose(np.asarray(g), x * np.exp(w * x), rtol=1e-14)
    v, (gw, gx) = tf.value_and_grad(lambda w, x: tf.sum(tf.sin(w) * x), argnums=(0, 1))(w, x)
    assert v.item() == pytest.approx(np.sum(np.sin(w) * x), rel=1e-14)
    np.testing.assert_allclose(np.asarray(gw), np.cos(w) * x, rtol=1e-14)
    np.testing.assert_allclose(np.asarray(gx), np.sin(w), rtol=1e-14)


def test_hessian_and_jacobians_match_closed_forms():
    a, x = RNG.standard_normal(4), RNG.standard_normal(4)
    h = np.asarray(tf.hessian(lambda x, a: tf.sum(tf.exp(a * x)), argnums=0)(x, a))
    np.testing.assert_allclose(h, np.diag(a * a * np.exp(a * x)), rtol=1e-13, atol=1e-15)
    m = RNG.standard_normal((3, 4))
    jf = np.asarray(tf.jacfwd(lambda x, m: tf.tanh(tf.matmul(m, x)), argnums=0)(x, m))
    jr = np.asarray(tf.jacrev(lambda x, m: tf.tanh(tf.matmul(m, x)), argnums=0)(x, m))
    want = (1 - np.tanh(m @ x) ** 2)[:, None] * m
    # tanh is accurate to a few ULP (the executor's vector math), so 1 - tanh^2 near tanh = +-1 is
    # off by up to about 1e-15 absolutely: an absolute tolerance beside the relative one.
    np.testing.assert_allclose(jf, want, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(jr, want, rtol=1e-13, atol=1e-14)


def test_jvp_and_vjp_satisfy_the_adjoint_identity():
    def f(x, y):
        return tf.einsum("ij,jk->ik", tf.sin(x), y) * 2.0

    x, y = RNG.standard_normal((3, 4)), RNG.standard_normal((4, 2))
    dx, dy = RNG.standard_normal((3, 4)), RNG.standard_normal((4, 2))
    ct = RNG.standard_normal((3, 2))
    out, jt = tf.jvp(f, (x, y), (dx, dy))
    out2, (cx, cy) = tf.vjp(f, (x, y), ct)
    np.testing.assert_allclose(np.asarray(out), 2 * np.sin(x) @ y, rtol=1e-14)
    np.testing.assert_allclose(np.asarray(out2), np.asarray(out))
    lhs = np.sum(ct * np.asarray(jt))
    rhs = np.sum(np.asarray(cx) * dx) + np.sum(np.asarray(cy) * dy)
    assert lhs == pytest.approx(rhs, rel=1e-12)


def test_gradient_matches_central_differences():
    w = RNG.standard_normal((3, 3))

    def loss(w):
        return tf.sum(tf.log_softmax(tf.matmul(w, w), axis=-1) * tf.erf(w))

    def loss_np(w):
        fn = tf.jit(loss)
        return fn(w).item()

    np.testing.assert_allclose(np.asarray(tf.grad(loss)(w)), central_difference(loss_np, w), rtol=1e-6, atol=1e-8)


def test_einsum_on_arrays_and_traced():
    a, b, c = RNG.standard_normal((3, 4)), RNG.standard_normal((4, 5)), RNG.standard_normal((5, 2))
    np.testing.assert_allclose(np.asarray(tf.einsum("ij,jk,kl->il", a, b, c)), a @ b @ c, rtol=1e-13)
    g = tf.grad(lambda a, b, c: tf.sum(tf.einsum("ij,jk,kl->il", a, b, c)))(a, b, c)
    np.testing.assert_allclose(np.asarray(g), np.ones((3, 2)) @ (b @ c).T, rtol=1e-13)


def test_jit_runs_the_compiled_program_and_prints_it():
    f = tf.jit(lambda x, y: (x * y + 1.0, tf.sum(x)))
    x, y = RNG.standard_normal(3), RNG.standard_normal(3)
    out, total = f(x, y)
    np.testing.assert_allclose(np.asarray(out), x * y + 1.0)
    assert total.item() == pytest.approx(np.sum(x))
    assert "mul" in f.print(x, y)


def test_matches_torch_autograd_on_an_mlp():
    torch = pytest.importorskip("torch")
    w1, w2 = RNG.standard_normal((6, 5)) * 0.3, RNG.standard_normal((5, 3)) * 0.3
    x = RNG.standard_normal((4, 6))
    labels = np.eye(3)[[0, 2, 1, 0]]

    def loss(w1, w2, x, labels):
        h = tf.tanh(tf.matmul(x, w1))
        return -tf.mean(tf.sum(labels * tf.log_softmax(tf.matmul(h, w2), axis=-1), axis=-1))

    g1, g2 = tf.grad(loss, argnums=(0, 1))(w1, w2, x, labels)
    tw1, tw2 = torch.tensor(w1, requires_grad=True), torch.tensor(w2, requires_grad=True)
    h = torch.tanh(torch.tensor(x) @ tw1)
    tloss = -(torch.tensor(labels) * torch.log_softmax(h @ tw2, dim=-1)).sum(-1).mean()
    r1, r2 = torch.autograd.grad(tloss, (tw1, tw2))
    np.testing.assert_allclose(np.asarray(g1), r1.numpy(), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(np.asarray(g2), r2.numpy(), rtol=1e-12, atol=1e-15)


LINALG_CASES = {
    # name: (tenferro loss, torch loss); gauge-invariant in the decompositions' sign conventions.
    "svd": (lambda a, p: tf.sum(tf.linalg.svd(a)[1]) + tf.sum(p * tf.linalg.svd(a)[0] ** 2),
            lambda a, p: torch_mod().linalg.svd(a, full_matrices=False)[1].sum()
            + (p * torch_mod().linalg.svd(a, full_matrices=False)[0] ** 2).sum()),
    "eigh": (lambda a, p: tf.sum(p * tf.linalg.eigh(a + tf.transpose(a))[1] ** 2),
             lambda a, p: (p * torch_mod().linalg.eigh(a + a.T)[1] ** 2).sum()),
    "eig": (lambda a, p: tf.real(tf.sum(tf.linalg.eig(a)[0] ** 2))
            + tf.sum(p * tf.real(tf.linalg.eig(a)[1] * tf.conj(tf.linalg.eig(a)[1]))),
            lambda a, p: (torch_mod().linalg.eig(a)[0] ** 2).sum().real
            + (p * torch_mod().linalg.eig(a)[1].abs() ** 2).sum()),
    "qr": (lambda a, p: tf.sum(p * tf.linalg.qr(a)[1] ** 2),
           lambda a, p: (p * torch_mod().linalg.qr(a)[1] ** 2).sum()),
    "cholesky": (lambda a, p: tf.sum(p * tf.linalg.cholesky(tf.matmul(a, tf.transpose(a)) + 4.0 * tf.linalg.eye(a, 4))),
                 lambda a, p: (p * torch_mod().linalg.cholesky(a @ a.T + 4.0 * torch_mod().eye(4, dtype=a.dtype))).sum()),
    "solve_det_expm": (lambda a, p: tf.sum(p * tf.linalg.solve(a, p)) + tf.linalg.det(a) + tf.sum(tf.linalg.expm(a * 0.5)),
                       lambda a, p: (p * torch_mod().linalg.solve(a, p)).sum() + torch_mod().linalg.det(a)
                       + torch_mod().linalg.matrix_exp(a * 0.5).sum()),
}


def torch_mod():
    import torch
    return torch


@pytest.mark.parametrize("name", sorted(LINALG_CASES))
def test_linalg_gradients_match_torch_autograd(name):
    torch = pytest.importorskip("torch")
    ours, theirs = LINALG_CASES[name]
    a = RNG.standard_normal((4, 4)) + 2.0 * np.eye(4)
    p = RNG.uniform(size=(4, 4))
    g = tf.grad(ours)(a, p)
    ta = torch.tensor(a, requires_grad=True)
    (r,) = torch.autograd.grad(theirs(ta, torch.tensor(p)), (ta,))
    np.testing.assert_allclose(np.asarray(g), r.numpy(), rtol=1e-9, atol=1e-11)


def test_errors_become_python_exceptions_with_the_message():
    with pytest.raises(tf.ShapeError, match="dot_general.*f64\\[2, 3\\]") as info:
        tf.grad(lambda a, b: tf.sum(tf.matmul(a, b)))(np.ones((2, 3)), np.ones((2, 3)))
    assert isinstance(info.value, ValueError)
    with pytest.raises(TypeError, match="returned a .*str"):
        tf.grad(lambda a: "not a tensor")(np.ones(2))
    with pytest.raises(ValueError, match="invalid character"):
        tf.einsum("ij,j#->i", np.ones((2, 2)), np.ones(2))
    with pytest.raises(TypeError, match="unsupported dtype"):
        tf.Tensor(np.array(["a", "b"]))
    with pytest.raises(tf.DTypeError, match="grad"):
        tf.grad(lambda a: tf.sum(a))(np.ones(2, dtype=np.int64))


def test_repeated_calls_leak_no_references():
    f = tf.grad(lambda w, x: tf.sum(tf.exp(w * x)))
    w, x = RNG.standard_normal(3), RNG.standard_normal(3)
    f(w, x)
    before = (sys.getrefcount(w), sys.getrefcount(x), sys.getrefcount(f))
    for _ in range(100000):               # w and x are shared with the call, then released
        f(w, x)
    gc.collect()
    assert (sys.getrefcount(w), sys.getrefcount(x), sys.getrefcount(f)) == before


def test_from_numpy_shares_memory_and_refuses_what_it_cannot_share():
    a = np.arange(6.0).reshape(2, 3)
    t = tf.from_numpy(a)
    assert t.data_ptr == a.ctypes.data
    a[0, 1] = 42.0                        # the tensor sees the array's writes
    assert np.asarray(t)[0, 1] == 42.0
    del a
    gc.collect()
    assert np.asarray(t)[0, 1] == 42.0    # the tensor keeps the array alive
    with pytest.raises(ValueError, match="not C-contiguous"):
        tf.from_numpy(np.arange(6.0).reshape(2, 3).T)
    with pytest.raises(ValueError, match="dtype int32"):
        tf.from_numpy(np.arange(3, dtype=np.int32))
    copied = tf.Tensor(np.arange(3.0))    # the constructor copies
    assert copied.data_ptr != 0
    # __array_interface__ points at the tensor's storage.
    assert t.__array_interface__["data"][0] == t.data_ptr
    assert np.asarray(t).__array_interface__["data"][0] == t.data_ptr
    # Arguments of transformed functions are shared, not copied: the gradient is still right.
    x = np.linspace(-1.0, 1.0, 5)
    np.testing.assert_allclose(np.asarray(tf.grad(lambda v: tf.sum(v * v))(x)), 2 * x, rtol=0, atol=0)


def test_dlpack_exchanges_memory_with_torch_both_ways():
    torch = pytest.importorskip("torch")
    src = torch.arange(12, dtype=torch.float64).reshape(3, 4)
    t = tf.from_dlpack(src)
    assert t.data_ptr == src.data_ptr() and t.shape == (3, 4)
    src[1, 2] = -7.0
    assert np.asarray(t)[1, 2] == -7.0
    g = tf.grad(lambda v: tf.sum(tf.sin(v)))(t)
    np.testing.assert_allclose(np.asarray(g), np.cos(src.numpy()), rtol=1e-15)
    back = torch.from_dlpack(g)           # tenferro -> torch, no copy
    assert back.data_ptr() == g.data_ptr
    del g
    gc.collect()
    np.testing.assert_allclose(back.numpy(), np.cos(src.numpy()), rtol=1e-15)  # torch keeps it alive
    for dtype in (torch.float32, torch.complex128, torch.int64):  # Debian's torch exports no bool
        x = torch.ones(2, 2, dtype=dtype)
        assert tf.from_dlpack(x).data_ptr == x.data_ptr()
    with pytest.raises(ValueError, match="contiguous"):
        tf.from_dlpack(src.T)
    with pytest.raises(TypeError, match="no __dlpack__"):
        tf.from_dlpack([1.0, 2.0])


# Random programs, written once over a namespace `m` that is either tenferro or a torch shim, so
# the same program runs in both; gradients, JVPs and Hessians must agree with torch.autograd.
def _random_program(seed):
    rng = np.random.default_rng(seed)
    unary = ["sin", "cos", "tanh", "sigmoid", "softplus", "square", "log1p_sq", "exp_small"]
    binary = ["add", "sub", "mul", "div_pos", "matmul", "matmul_t"]
    steps = []
    for _ in range(int(rng.integers(4, 9))):
        if rng.random() < 0.5:
            steps.append(("u", unary[rng.integers(len(unary))], int(rng.integers(1 << 30))))
        else:
            steps.append(("b", binary[rng.integers(len(binary))], int(rng.integers(1 << 30))))
    reduce_axis = int(rng.integers(2))

    def program(m, x, y):
        values = [x, y]
        for kind, name, pick in steps:
            a = values[pick % len(values)]
            if kind == "u":
                values.append({
                    "sin": lambda: m.sin(a), "cos": lambda: m.cos(a), "tanh": lambda: m.tanh(a),
                    "sigmoid": lambda: m.sigmoid(a), "softplus": lambda: m.softplus(a), "square": lambda: a * a,
                    "log1p_sq": lambda: m.log1p(a * a), "exp_small": lambda: m.exp(m.tanh(a)),
                }[name]())
            else:
                b = values[(pick // 7) % len(values)]
                values.append({
                    "add": lambda: a + b, "sub": lambda: a - b, "mul": lambda: a * b,
                    "div_pos": lambda: a / (1.0 + b * b), "matmul": lambda: m.matmul(a, b),
                    "matmul_t": lambda: m.matmul(a, m.transpose(b)),
                }[name]())
        return m.sum(m.sum(values[-1] * values[-2], reduce_axis))

    return program


class _TorchShim:
    """The functions _random_program calls, in PyTorch."""

    def __init__(self, torch):
        self.t = torch

    def __getattr__(self, name):
        torch = self.t
        return {"sin": torch.sin, "cos": torch.cos, "tanh": torch.tanh, "sigmoid": torch.sigmoid,
                "softplus": torch.nn.functional.softplus, "log1p": torch.log1p, "exp": torch.exp,
                "matmul": torch.matmul, "transpose": lambda a: a.T,
                "sum": lambda a, axis=None: a.sum() if axis is None else a.sum(axis)}[name]


@pytest.mark.parametrize("seed", range(12))
def test_random_programs_match_torch_autograd(seed):
    torch = pytest.importorskip("torch")
    program = _random_program(seed)
    shim = _TorchShim(torch)
    rng = np.random.default_rng(100 + seed)
    x, y = rng.standard_normal((3, 3)) * 0.7, rng.standard_normal((3, 3)) * 0.7
    dx = rng.standard_normal((3, 3))

    def ours(x, y):
        return program(tf, x, y)

    def theirs(x, y):
        return program(shim, x, y)

    tx, ty = torch.tensor(x, requires_grad=True), torch.tensor(y, requires_grad=True)
    value = theirs(tx, ty)
    gx, gy = (g if g is not None else torch.zeros(3, 3, dtype=torch.float64)  # an argument left unused
              for g in torch.autograd.grad(value, (tx, ty), allow_unused=True))
    v, (ox, oy) = tf.value_and_grad(ours, argnums=(0, 1))(x, y)
    assert v.item() == pytest.approx(value.item(), rel=1e-12, abs=1e-12)
    np.testing.assert_allclose(np.asarray(ox), gx.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(np.asarray(oy), gy.numpy(), rtol=1e-10, atol=1e-12)
    # JVP along dx (y fixed) and the Hessian in x, against torch.autograd.functional.
    _, jt = tf.jvp(ours, (x, y), (dx, np.zeros_like(y)))
    _, tj = torch.autograd.functional.jvp(lambda a: theirs(a, torch.tensor(y)), torch.tensor(x), torch.tensor(dx))
    assert jt.item() == pytest.approx(tj.item(), rel=1e-10, abs=1e-12)
    h = np.asarray(tf.hessian(ours, argnums=0)(x, y))
    th = torch.autograd.functional.hessian(lambda a: theirs(a, torch.tensor(y)), torch.tensor(x))
    np.testing.assert_allclose(h.reshape(9, 9), th.numpy().reshape(9, 9), rtol=1e-9, atol=1e-11)


def test_indexing_functions_match_numpy_and_their_gradients_torch():
    torch = pytest.importorskip("torch")
    x = RNG.standard_normal((4, 3))
    idx = [3, 0, 3]
    got = tf.jit(lambda x: (tf.take(x, idx, 0), tf.cumsum(x, 1), tf.flip(x, [0]), tf.tril(x, -1), tf.diagonal(x, 1)))(x)
    want = (np.take(x, idx, 0), np.cumsum(x, 1), np.flip(x, 0), np.tril(x, -1), np.diagonal(x, 1))
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-15)
    g = tf.grad(lambda x: tf.sum(tf.sin(tf.take(x, idx, 0)) * tf.cumsum(tf.take(x, [0, 1, 2], 0), 1)))(x)
    tx = torch.tensor(x, requires_grad=True)
    tl = (torch.sin(tx[idx]) * torch.cumsum(tx[[0, 1, 2]], 1)).sum()
    (tg,) = torch.autograd.grad(tl, (tx,))
    np.testing.assert_allclose(np.asarray(g), tg.numpy(), rtol=1e-12, atol=1e-14)


def test_sorting_and_scans_match_numpy_and_their_gradients_torch():
    torch = pytest.importorskip("torch")
    x = RNG.standard_normal((4, 5))
    got = tf.jit(lambda x: (tf.sort(x, 0), tf.argsort(x, 1, True), tf.top_k(x, 2)[0], tf.top_k(x, 2)[1],
                            tf.take_along_axis(x, tf.argsort(x, 1), 1), tf.cumprod(x, 1), tf.cummax(x, 0),
                            tf.cummin(x, 1, True), tf.logcumsumexp(x, 1)))(x)
    want = (np.sort(x, 0), np.argsort(-x, 1, kind="stable"), -np.sort(-x, 1)[:, :2], np.argsort(-x, 1, kind="stable")[:, :2],
            np.sort(x, 1), np.cumprod(x, 1), np.maximum.accumulate(x, 0),
            np.flip(np.minimum.accumulate(np.flip(x, 1), 1), 1), np.logaddexp.accumulate(x, 1))
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-13, atol=1e-15)

    def ours(x):
        return tf.sum(tf.sin(tf.sort(x, 1)) * tf.cumprod(x, 0) + tf.logcumsumexp(x, 1) * tf.cummax(x, 1))

    def theirs(t):
        return (torch.sin(torch.sort(t, 1).values) * torch.cumprod(t, 0)
                + torch.logcumsumexp(t, 1) * torch.cummax(t, 1).values).sum()

    tx = torch.tensor(x, requires_grad=True)
    (tg,) = torch.autograd.grad(theirs(tx), (tx,))
    np.testing.assert_allclose(np.asarray(tf.grad(ours)(x)), tg.numpy(), rtol=1e-11, atol=1e-13)


def test_dynamic_slice_clamps_like_stablehlo_and_updates():
    x = RNG.standard_normal((3, 4))
    window = tf.jit(lambda x, s: tf.dynamic_slice(x, s, [2, 2]))
    np.testing.assert_array_equal(np.asarray(window(x, np.array([1, 5], dtype=np.int64))), x[1:3, 2:4])
    np.testing.assert_array_equal(np.asarray(window(x, np.array([-4, 1], dtype=np.int64))), x[0:2, 1:3])
    u = np.ones((2, 2))
    got = np.asarray(tf.jit(lambda x, u, s: tf.dynamic_update_slice(x, u, s))(x, u, np.array([9, 0], dtype=np.int64)))
    want = x.copy()
    want[1:3, 0:2] = u
    np.testing.assert_array_equal(got, want)


def test_gather_and_scatter_with_stablehlo_dimension_numbers():
    x = RNG.standard_normal((5, 3))
    rows = np.array([[4], [0], [4], [2]], dtype=np.int64)
    g = dict(offset_dims=[1], collapsed_slice_dims=[0], start_index_map=[0], index_vector_dim=1, slice_sizes=[1, 3])
    s = dict(update_window_dims=[1], inserted_window_dims=[0], scatter_dims_to_operand_dims=[0], index_vector_dim=1)
    np.testing.assert_array_equal(np.asarray(tf.jit(lambda x, i: tf.gather(x, i, **g))(x, rows)), x[[4, 0, 4, 2]])
    u = RNG.standard_normal((4, 3))
    added, replaced = tf.jit(lambda x, i, u: (tf.scatter_add(x, i, u, **s), tf.scatter(x, i, u, **s)))(x, rows, u)
    want = x.copy()
    np.add.at(want, [4, 0, 4, 2], u)
    np.testing.assert_allclose(np.asarray(added), want, rtol=1e-15)
    want = x.copy()
    want[[4, 0, 2]] = u[[2, 1, 3]]  # row 4 is written twice: the later update wins
    np.testing.assert_array_equal(np.asarray(replaced), want)
    # d/du sum(w * scatter(x, i, u)): w's row where the update won, zero for the overwritten one.
    w = RNG.standard_normal((5, 3))
    gu = np.asarray(tf.grad(lambda u, x, i, w: tf.sum(tf.scatter(x, i, u, **s) * w), argnums=0)(u, x, rows, w))
    np.testing.assert_array_equal(gu, np.stack([np.zeros(3), w[0], w[4], w[2]]))
    with pytest.raises(tf.ShapeError, match="slice_sizes"):
        tf.jit(lambda x, i: tf.gather(x, i, **dict(g, slice_sizes=[1, 4])))(x, rows)


def test_random_draws_are_pure_functions_of_the_key():
    draw = tf.jit(lambda k: (tf.random.normal(k, [200000]), tf.random.uniform(k, [4], "f32", -1.0, 1.0)))
    z1, u1 = draw(tf.random.key(3))
    z2, u2 = draw(tf.random.key(3))
    np.testing.assert_array_equal(np.asarray(z1), np.asarray(z2))
    np.testing.assert_array_equal(np.asarray(u1), np.asarray(u2))
    z = np.asarray(z1)
    assert abs(z.mean()) < 5 / np.sqrt(z.size)
    assert abs(z.var() - 1) < 5 * np.sqrt(2 / z.size)
    assert np.asarray(u1).dtype == np.float32 and np.all(np.abs(np.asarray(u1)) <= 1)
    k1, k2 = tf.jit(lambda k: tuple(tf.random.split(k)))(tf.random.key(3))
    assert not np.array_equal(np.asarray(k1), np.asarray(k2))
    x = np.full(1000, 2.0)
    y = np.asarray(tf.jit(lambda k, x: tf.dropout(k, x, 0.5))(tf.random.key(1), x))
    g = np.asarray(tf.grad(lambda x, k: tf.sum(tf.dropout(k, x, 0.5)))(x, tf.random.key(1)))
    np.testing.assert_array_equal(g, (y != 0) * 2.0)


def test_getitem_follows_numpy_indexing():
    x = np.arange(60.0).reshape(3, 4, 5)
    got = tf.jit(lambda x: (x[1], x[-1, ::-1], x[0:3:2, ..., 3], x[None, 0, 1:3], x[:, [3, 0]], x[::-2, 1, ::3],
                            x[..., None], x[-10:10, 5:]))(x)
    want = (x[1], x[-1, ::-1], x[0:3:2, ..., 3], x[None, 0, 1:3], x[:, [3, 0]], x[::-2, 1, ::3], x[..., None],
            x[-10:10, 5:])
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g), w)
    g = np.asarray(tf.grad(lambda x: tf.sum(tf.sin(x[1:, ::-1, [0, 0, 2]])))(x))
    want = np.zeros_like(x)
    np.add.at(want, (slice(1, None), slice(None), [0, 0, 2]), np.cos(x[1:, :, [0, 0, 2]]))
    np.testing.assert_allclose(g, want, rtol=1e-15)


def test_conv_and_pools_match_torch_with_gradients():
    torch = pytest.importorskip("torch")
    x = RNG.standard_normal((2, 4, 7, 6))
    w = RNG.standard_normal((6, 2, 3, 2))

    def ours(x, w):
        y = tf.conv(x, w, stride=[2, 1], padding=1, dilation=[1, 2], groups=2)
        return tf.sum(tf.sin(y)) + tf.sum(tf.max_pool(y, 2) * tf.avg_pool(y, 2))

    def theirs(x, w):
        y = torch.nn.functional.conv2d(x, w, stride=(2, 1), padding=1, dilation=(1, 2), groups=2)
        return torch.sin(y).sum() + (torch.nn.functional.max_pool2d(y, 2) * torch.nn.functional.avg_pool2d(y, 2)).sum()

    tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    tl = theirs(tx, tw)
    gx, gw = torch.autograd.grad(tl, (tx, tw))
    assert np.asarray(tf.jit(ours)(x, w)).item() == pytest.approx(tl.item(), rel=1e-12)
    np.testing.assert_allclose(np.asarray(tf.grad(ours, argnums=0)(x, w)), gx.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(np.asarray(tf.grad(ours, argnums=1)(x, w)), gw.numpy(), rtol=1e-10, atol=1e-12)


def test_control_flow_matches_python_loops_and_differentiates():
    xs = RNG.standard_normal((6, 3))
    w = 0.5 * RNG.standard_normal((3, 3))

    def rnn(w, xs):
        def cell(h, x):
            h = tf.tanh(tf.matmul(w, h) + x)
            return h, tf.sum(h)
        h, ys = tf.scan(cell, xs[0] * 0.0, xs)
        return tf.sum(h) + tf.sum(ys * ys)

    def rnn_numpy(w, xs):
        h, total = np.zeros(3), 0.0
        for x in xs:
            h = np.tanh(w @ h + x)
            total += np.sum(h) ** 2
        return np.sum(h) + total

    value, grad = tf.value_and_grad(rnn)(w, xs)
    np.testing.assert_allclose(float(np.asarray(value)), rnn_numpy(w, xs), rtol=1e-13)
    np.testing.assert_allclose(np.asarray(grad), central_difference(lambda v: rnn_numpy(v, xs), w), rtol=1e-7, atol=1e-8)

    # fori_loop and cond; a bounded while_loop differentiates in reverse mode.
    def f(a):
        c = tf.fori_loop(0, 4, lambda i, c: c * a + 1.0, a)
        return tf.cond(c > 0.0, lambda v: v * v, lambda v: -v, c)

    a = np.array(0.7)
    np.testing.assert_allclose(float(np.asarray(tf.grad(f)(a))),
                               central_difference(lambda v: float(np.asarray(tf.jit(f)(v))), a), rtol=1e-7)

    def newton_sqrt(a):
        return tf.while_loop(lambda x: tf.abs(x * x - a) > 1e-13, lambda x: 0.5 * (x + a / x), a, max_trips=40)

    np.testing.assert_allclose(float(np.asarray(tf.grad(newton_sqrt)(np.array(2.0)))), 0.5 / np.sqrt(2.0), rtol=1e-12)

    # Implicit differentiation: x = a cos(x) and x^3 + x - a = 0.
    def cosine(a):
        return tf.fixed_point(lambda x, p: p * tf.cos(x), a * 0.0 + 0.5, a, tol=0.0, max_iter=300)

    x = float(np.asarray(tf.jit(cosine)(np.array(0.8))))
    np.testing.assert_allclose(float(np.asarray(tf.grad(cosine)(np.array(0.8)))), np.cos(x) / (1 + 0.8 * np.sin(x)),
                               rtol=1e-12)
    cubic = tf.grad(lambda a: tf.root(lambda x, p: x * x * x + x - p, a * 0.0 + 1.0, a))(np.array(3.0))
    r = float(np.asarray(tf.jit(lambda a: tf.root(lambda x, p: x * x * x + x - p, a * 0.0 + 1.0, a))(np.array(3.0))))
    np.testing.assert_allclose(float(np.asarray(cubic)), 1.0 / (3 * r * r + 1), rtol=1e-12)
    with pytest.raises(tf.ShapeError, match="carry"):
        tf.jit(lambda a: tf.scan(lambda c, x: (tf.sum(c), None), a, None, length=2)[0])(np.ones(3))


# ---- the newer linalg functions: gradients against central differences of NumPy references ----

def lu_solve_np(lu, piv, b):
    """X with A X = b from LAPACK's packed LU and 1-based pivots, in NumPy: the row interchanges
    on b, then L's and U's triangles."""
    b = b.copy()
    for i, p in enumerate(piv):
        b[[i, p - 1]] = b[[p - 1, i]]
    y = np.linalg.solve(np.tril(lu, -1) + np.eye(len(lu)), b)
    return np.linalg.solve(np.triu(lu), y)


def householder_np(a, tau):
    """The first n columns of prod_i (I - tau_i v_i v_i^T), v_i = (0, .., 0, 1, a[i+1:, i])."""
    m, n = a.shape
    q = np.eye(m)
    for i in range(len(tau)):
        v = np.concatenate([np.zeros(i), [1.0], a[i + 1:, i]])
        q = q @ (np.eye(m) - tau[i] * np.outer(v, v))
    return q[:, :n]


def test_lu_solve_gradient_matches_central_differences():
    a = RNG.standard_normal((4, 4))
    lu, piv = (np.asarray(r) for r in tf.jit(tf.linalg.lu_factor)(a))
    np.testing.assert_allclose(lu_solve_np(lu, piv, np.eye(4)), np.linalg.inv(a), rtol=1e-10, atol=1e-12)
    b, w = RNG.standard_normal((4, 2)), RNG.standard_normal((4, 2))

    def loss(lu, b):                        # the pivots are a constant of the trace (i64, no derivative)
        return tf.sum(w * tf.linalg.lu_solve(lu, piv, b))

    g_lu, g_b = tf.grad(loss, argnums=(0, 1))(lu, b)
    np.testing.assert_allclose(np.asarray(g_lu), central_difference(lambda x: np.sum(w * lu_solve_np(x, piv, b)), lu),
                               rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(np.asarray(g_b), central_difference(lambda x: np.sum(w * lu_solve_np(lu, piv, x)), b),
                               rtol=1e-6, atol=1e-8)
    # Through lu_factor: the gradient of A's solve.
    g_a = tf.grad(lambda a: tf.sum(w * tf.linalg.lu_solve(*tf.linalg.lu_factor(a), b)))(a)
    np.testing.assert_allclose(np.asarray(g_a), central_difference(lambda x: np.sum(w * np.linalg.solve(x, b)), a),
                               rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("p", [None, 2, -2, 1, -1, np.inf, -np.inf, "fro", "nuc"], ids=str)
def test_cond_gradient_matches_central_differences(p):
    a = RNG.standard_normal((4, 4)) + 2.0 * np.eye(4)
    g = tf.grad(lambda a: tf.linalg.cond(a, p))(a)
    np.testing.assert_allclose(np.asarray(g), central_difference(lambda x: np.linalg.cond(x, p), a), rtol=1e-6,
                               atol=1e-8)
    if p in (None, -2):                     # the singular-value orders take non-square matrices
        m = RNG.standard_normal((5, 3))
        g = tf.grad(lambda a: tf.linalg.cond(a, p))(m)
        np.testing.assert_allclose(np.asarray(g), central_difference(lambda x: np.linalg.cond(x, p), m), rtol=1e-6,
                                   atol=1e-8)


def test_householder_product_gradient_matches_central_differences():
    a, tau = RNG.standard_normal((5, 3)), RNG.uniform(0.2, 1.8, 2)
    w = RNG.standard_normal((5, 3))
    np.testing.assert_allclose(np.asarray(tf.jit(tf.linalg.householder_product)(a, tau)), householder_np(a, tau),
                               rtol=1e-12, atol=1e-14)
    g_a, g_tau = tf.grad(lambda a, t: tf.sum(w * tf.linalg.householder_product(a, t)), argnums=(0, 1))(a, tau)
    np.testing.assert_allclose(np.asarray(g_a), central_difference(lambda x: np.sum(w * householder_np(x, tau)), a),
                               rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(np.asarray(g_tau), central_difference(lambda x: np.sum(w * householder_np(a, x)), tau),
                               rtol=1e-6, atol=1e-8)


def test_wide_lstsq_tensorinv_and_tensorsolve_gradients_match_central_differences():
    a, b, w = RNG.standard_normal((3, 5)), RNG.standard_normal(3), RNG.standard_normal(5)

    def min_norm(x):
        return np.sum(w * np.linalg.lstsq(x, b, rcond=None)[0])

    g = tf.grad(lambda a: tf.sum(w * tf.linalg.lstsq(a, b)))(a)
    np.testing.assert_allclose(np.asarray(g), central_difference(min_norm, a), rtol=1e-6, atol=1e-8)
    t, wt = RNG.standard_normal((2, 3, 6)), RNG.standard_normal((6, 2, 3))
    g = tf.grad(lambda t: tf.sum(wt * tf.linalg.tensorinv(t, 2)))(t)
    np.testing.assert_allclose(np.asarray(g), central_difference(lambda x: np.sum(wt * np.linalg.tensorinv(x, 2)), t),
                               rtol=1e-6, atol=1e-8)
    rhs, wx = RNG.standard_normal((2, 3)), RNG.standard_normal(6)
    g = tf.grad(lambda t: tf.sum(wx * tf.linalg.tensorsolve(t, rhs)))(t)
    np.testing.assert_allclose(np.asarray(g), central_difference(lambda x: np.sum(wx * np.linalg.tensorsolve(x, rhs)), t),
                               rtol=1e-6, atol=1e-8)


def test_frac_is_x_minus_trunc_with_derivative_one():
    x = np.array([-2.5, -1.0, -0.25, 0.0, 0.75, 3.0, 7.125])
    np.testing.assert_array_equal(np.asarray(tf.jit(tf.frac)(x)), x - np.trunc(x))
    np.testing.assert_array_equal(np.asarray(tf.grad(lambda x: tf.sum(tf.frac(x)))(x)), np.ones_like(x))


def test_eig_of_a_real_matrix_follows_numpys_order():
    """Real input runs LAPACK's real geev, as NumPy: the eigenvalues in its order (not sorted), a
    complex pair adjacent with the positive imaginary part first, exactly conjugate."""
    q = RNG.standard_normal((5, 5))
    blocks = np.zeros((5, 5))
    blocks[:2, :2] = [[0.5, 1.5], [-1.5, 0.5]]                 # 0.5 +- 1.5i
    blocks[2:4, 2:4] = [[-1.0, 0.25], [-4.0, -1.0]]             # -1 +- i
    blocks[4, 4] = 2.0
    a = q @ blocks @ np.linalg.inv(q)
    w, v = (np.asarray(r) for r in tf.jit(tf.linalg.eig)(a))
    want = np.linalg.eig(a)[0]
    assert not np.array_equal(np.sort_complex(want), want)  # the comparison below is of the order itself
    np.testing.assert_allclose(w, want, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(np.asarray(tf.jit(tf.linalg.eigvals)(a)), want, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(a @ v, v * w, atol=1e-11)
    i = 0
    while i < len(w):
        if w[i].imag == 0:
            i += 1
            continue
        assert w[i].imag > 0 and w[i + 1] == np.conj(w[i])
        np.testing.assert_array_equal(v[:, i + 1], np.conj(v[:, i]))
        i += 2


# ---- the newer elementwise functions and reductions: gradients against central differences ----

def hurwitz_zeta(s, x):
    """zeta(s, x) = sum_k (x + k)^-s (s > 1): 20 direct terms, then Euler-Maclaurin."""
    n, y = 20, x + 20
    total = sum((x + k) ** -s for k in range(n)) + y ** (1 - s) / (s - 1) + 0.5 * y ** -s
    rising, power = s, y ** (-s - 1)
    for j, b in enumerate((1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66), start=1):
        total += b / math.factorial(2 * j) * rising * power
        rising *= (s + 2 * j - 1) * (s + 2 * j)
        power /= y * y
    return total


def trigamma_np(x):
    return np.vectorize(lambda v: hurwitz_zeta(2, v), otypes=[float])(x)


GRAD_CASES = {   # name: (tenferro's loss, NumPy's loss, the point)
    "prod": (lambda x: tf.sum(tf.prod(x, 1) * np.array([1.0, -2.0])), lambda x: np.sum(np.prod(x, 1) * [1.0, -2.0]),
             RNG.uniform(0.5, 1.5, (2, 3)) * np.array([1.0, -1.0, 1.0])),
    "var": (lambda x: tf.sum(tf.var(x, 0) * np.arange(1.0, 4.0)), lambda x: np.sum(np.var(x, 0) * np.arange(1.0, 4.0)),
            RNG.standard_normal((4, 3))),
    "var_corrected": (lambda x: tf.var(x, None, 1.0), lambda x: np.var(x, ddof=1), RNG.standard_normal((4, 3))),
    "stddev": (lambda x: tf.sum(tf.stddev(x, 1)), lambda x: np.sum(np.std(x, 1)), RNG.standard_normal((2, 5))),
    # polygamma(1, x) is the trigamma function; its derivative is polygamma(2, x).
    "polygamma": (lambda x: tf.sum(tf.polygamma(1, x) * np.array([1.0, 0.5, -1.0])),
                  lambda x: np.sum(trigamma_np(x) * [1.0, 0.5, -1.0]), RNG.uniform(0.5, 3.0, 3)),
    "sinc": (lambda x: tf.sum(tf.sinc(x) * np.arange(1.0, 6.0)), lambda x: np.sum(np.sinc(x) * np.arange(1.0, 6.0)),
             np.array([-1.3, -0.4, 1e-4, 0.6, 2.2])),
    "remainder": (lambda x, y: tf.sum(tf.remainder(x, y) * np.array([1.0, 2.0, -1.0])),
                  lambda x, y: np.sum(np.remainder(x, y) * [1.0, 2.0, -1.0]),
                  (np.array([2.3, -3.7, 5.1]), np.array([1.5, 1.1, -2.25]))),
    "fmod": (lambda x, y: tf.sum(tf.fmod(x, y) * np.array([1.0, 2.0, -1.0])),
             lambda x, y: np.sum(np.fmod(x, y) * [1.0, 2.0, -1.0]),
             (np.array([2.3, -3.7, 5.1]), np.array([1.5, 1.1, -2.25]))),
    "cross_entropy": (lambda x: tf.cross_entropy(x, np.eye(3)[[2, 0]]),
                      lambda x: np.mean(-np.sum(np.eye(3)[[2, 0]] * (x - np.log(np.sum(np.exp(x), -1, keepdims=True))), -1)),
                      RNG.standard_normal((2, 3))),
    "erfcx": (lambda x: tf.sum(tf.erfcx(x)), lambda x: np.sum(np.exp(x * x) * np.vectorize(math.erfc)(x)),
              np.array([-1.0, 0.2, 2.5])),
    "log_ndtr": (lambda x: tf.sum(tf.log_ndtr(x)),
                 lambda x: np.sum(np.log(0.5 * np.vectorize(math.erfc)(-x / math.sqrt(2)))), np.array([-6.0, -0.3, 1.2])),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_new_function_gradients_match_central_differences(name):
    ours, theirs, point = GRAD_CASES[name]
    points = point if isinstance(point, tuple) else (point,)
    for i in range(len(points)):
        g = np.asarray(tf.grad(ours, argnums=i)(*points))

        def partial(v, i=i):
            return theirs(*(v if j == i else p for j, p in enumerate(points)))

        np.testing.assert_allclose(g, central_difference(partial, points[i]), rtol=1e-7, atol=1e-8)
