"""Trees (JAX's pytrees) as arguments and results of grad and value_and_grad, and vmap.
Gradients are checked against closed forms and against the same function on flat arguments."""
from typing import NamedTuple

import numpy as np
import pytest

import tenferro as tf

RNG = np.random.default_rng(7)


def test_a_list_of_25_arrays_differentiates_as_a_list():
    sites = [RNG.standard_normal((2, 3)) for _ in range(25)]

    def energy(ts):
        e = tf.sum(ts[0] * ts[0])
        for k in range(1, len(ts)):
            e = e + (k + 1) * tf.sum(ts[k] * ts[k]) + tf.sum(ts[k]) * tf.sum(ts[k - 1])
        return e

    g = tf.grad(energy)(sites)
    assert isinstance(g, list) and len(g) == 25
    for k in range(25):
        weight = 1.0 if k == 0 else k + 1.0
        neighbours = (sites[k - 1].sum() if k > 0 else 0.0) + (sites[k + 1].sum() if k < 24 else 0.0)
        np.testing.assert_allclose(np.asarray(g[k]), 2 * weight * sites[k] + neighbours, rtol=1e-12, atol=1e-12)


class Layer(NamedTuple):
    w: np.ndarray
    b: np.ndarray


def test_dicts_tuples_namedtuples_and_none_keep_their_structure():
    params = {"layers": [Layer(RNG.standard_normal((3, 3)), RNG.standard_normal(3)) for _ in range(2)],
              "scale": RNG.standard_normal(()), "unused": None}
    x = RNG.standard_normal((4, 3))

    def loss(p, xs):
        h = xs
        for layer in p["layers"]:
            h = tf.tanh(tf.matmul(h, layer.w) + layer.b)
        assert p["unused"] is None
        return tf.sum(h) * p["scale"]

    g = tf.grad(loss)(params, x)
    assert set(g) == {"layers", "scale", "unused"} and g["unused"] is None
    assert isinstance(g["layers"][0], Layer)
    leaves, _ = tf.tree_flatten(params)
    flat = [leaf for leaf in leaves]

    def flat_loss(w0, b0, w1, b1, scale, xs):
        h = tf.tanh(tf.matmul(xs, w0) + b0)
        h = tf.tanh(tf.matmul(h, w1) + b1)
        return tf.sum(h) * scale

    # tree_flatten orders dict keys: layers (w0, b0, w1, b1), scale.
    expected = tf.grad(flat_loss, argnums=(0, 1, 2, 3, 4))(*flat, x)
    got = tf.tree_leaves(g)
    assert len(got) == 5
    for a, b in zip(got, expected):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12, atol=1e-14)


def test_argnums_tuples_and_has_aux():
    w = [RNG.standard_normal(3), RNG.standard_normal(3)]
    x = RNG.standard_normal(3)

    def f(ws, xs):
        pred = ws[0] * ws[1] * xs
        return tf.sum(pred * pred), {"pred": pred, "norm": tf.sum(ws[0] * ws[0])}

    (gw, gx), aux = tf.grad(f, argnums=(0, 1), has_aux=True)(w, x)
    pred = w[0] * w[1] * x
    np.testing.assert_allclose(np.asarray(aux["pred"]), pred, rtol=1e-14)
    np.testing.assert_allclose(float(np.asarray(aux["norm"])), float(w[0] @ w[0]), rtol=1e-14)
    np.testing.assert_allclose(np.asarray(gw[0]), 2 * pred * w[1] * x, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(gx), 2 * pred * w[0] * w[1], rtol=1e-12)
    (value, aux2), g = tf.value_and_grad(f, has_aux=True)(w, x)
    np.testing.assert_allclose(float(np.asarray(value)), float(pred @ pred), rtol=1e-14)
    np.testing.assert_allclose(np.asarray(g[1]), 2 * pred * w[0] * x, rtol=1e-12)


def test_unequal_shapes_in_a_list_are_a_tree_not_a_stack():
    parts = [np.ones(2), np.ones(3)]
    g = tf.grad(lambda ps: tf.sum(ps[0]) + 2.0 * tf.sum(ps[1]))(parts)
    np.testing.assert_array_equal(np.asarray(g[0]), [1.0, 1.0])
    np.testing.assert_array_equal(np.asarray(g[1]), [2.0, 2.0, 2.0])


def test_tree_map_flatten_unflatten_round_trip():
    tree = {"a": [1.0, (2.0, None)], "b": Layer(3.0, 4.0)}
    leaves, treedef = tf.tree_flatten(tree)
    assert leaves == [1.0, 2.0, 3.0, 4.0]
    assert tf.tree_unflatten(treedef, leaves) == tree
    assert tf.tree_map(lambda x, y: x + y, tree, tree) == {"a": [2.0, (4.0, None)], "b": Layer(6.0, 8.0)}
    with pytest.raises(ValueError, match="structure"):
        tf.tree_map(lambda x, y: x, tree, [1.0])


def test_vmap_of_grad_gives_per_example_gradients():
    w = RNG.standard_normal((3, 2))
    xs, ys = RNG.standard_normal((5, 3)), RNG.standard_normal((5, 2))

    def loss(wi, x, y):
        r = tf.matmul(tf.reshape(x, (1, 3)), wi) - tf.reshape(y, (1, 2))
        return tf.sum(r * r)

    per_example = tf.vmap(tf.grad(loss), in_axes=(None, 0, 0))(w, xs, ys)
    assert per_example.shape == (5, 3, 2)
    for i in range(5):
        r = xs[i] @ w - ys[i]
        np.testing.assert_allclose(np.asarray(per_example)[i], 2 * np.outer(xs[i], r), rtol=1e-12, atol=1e-14)


def test_vmap_axes_and_errors():
    a = RNG.standard_normal((3, 4))
    out = tf.vmap(lambda x: tf.sum(x * x), in_axes=1)(a)
    np.testing.assert_allclose(np.asarray(out), (a * a).sum(axis=0), rtol=1e-14)
    moved = tf.vmap(lambda x: x * 2.0, out_axes=1)(a)
    np.testing.assert_allclose(np.asarray(moved), 2 * a.T, rtol=1e-14)
    with pytest.raises(ValueError, match="argument 1"):
        tf.vmap(lambda x, y: x + y)(a, RNG.standard_normal((4, 4)))


def test_vmap_over_trees_with_per_leaf_axes():
    params = {"w": RNG.standard_normal((3, 2)), "b": RNG.standard_normal(2)}
    batch = {"x": RNG.standard_normal((5, 3)), "scale": RNG.standard_normal(5)}

    def f(p, ex):
        y = tf.matmul(tf.reshape(ex["x"], (1, 3)), p["w"]) + p["b"]
        return {"y": tf.reshape(y, (2,)) * ex["scale"], "norm": tf.sum(y * y)}

    out = tf.vmap(f, in_axes=(None, {"x": 0, "scale": 0}))(params, batch)
    assert set(out) == {"norm", "y"} and out["y"].shape == (5, 2) and out["norm"].shape == (5,)
    for i in range(5):
        y = batch["x"][i] @ params["w"] + params["b"]
        np.testing.assert_allclose(np.asarray(out["y"])[i], y * batch["scale"][i], rtol=1e-12)
        np.testing.assert_allclose(np.asarray(out["norm"])[i], y @ y, rtol=1e-12)
    with pytest.raises(ValueError, match="keys"):
        tf.vmap(f, in_axes=(None, {"x": 0}))(params, batch)


def test_vmap_of_jacfwd_and_jacrev_is_a_batch_of_jacobians():
    # J of u + 0.1 tanh(W u) is I + 0.1 diag(1 - tanh(W u)^2) W, per state.
    w = RNG.standard_normal((3, 3))
    us = RNG.standard_normal((4, 3))

    def step(u, m):
        return u + 0.1 * tf.tanh(tf.matmul(m, tf.reshape(u, (3, 1))))[:, 0]

    for transform in (tf.jacfwd, tf.jacrev):
        js = np.asarray(tf.vmap(transform(step), in_axes=(0, None))(us, w))
        assert js.shape == (4, 3, 3)
        for i in range(4):
            t = np.tanh(w @ us[i])
            np.testing.assert_allclose(js[i], np.eye(3) + 0.1 * (1 - t * t)[:, None] * w, rtol=1e-12, atol=1e-14)
