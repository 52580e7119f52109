"""Checkpointing from Python: tf.checkpoint(f) and scan's checkpoint_every give the plain
program's values and gradients bit for bit, and the gradient's peak tensor memory
(tf.MemoryMeter) falls."""
import numpy as np
import pytest

import tenferro as tf

RNG = np.random.default_rng(11)


def segment(h, w):
    for _ in range(8):
        h = tf.tanh(tf.matmul(h, w)) + h * 0.5
    return h


def loss(x, ws, checkpointed):
    h = x
    for w in ws:
        h = tf.checkpoint(segment)(h, w) if checkpointed else segment(h, w)
    return tf.sum(h * h)


def test_checkpointed_gradients_equal_the_plain_ones_and_use_less_memory():
    x = RNG.standard_normal((256, 64))
    ws = [RNG.standard_normal((64, 64)) * 0.12 for _ in range(4)]
    plain = tf.grad(lambda a, b: loss(a, b, False), argnums=1)
    checkpointed = tf.grad(lambda a, b: loss(a, b, True), argnums=1)
    plain(x, ws)
    checkpointed(x, ws)  # compiled and warm
    meter = tf.MemoryMeter()
    g0 = plain(x, ws)
    plain_peak = meter.peak_bytes
    meter.reset()
    g1 = checkpointed(x, ws)
    checkpointed_peak = meter.peak_bytes
    for a, b in zip(g0, g1):
        assert np.array_equal(np.asarray(a), np.asarray(b))
    assert plain_peak >= 32 * 256 * 64 * 8
    assert checkpointed_peak * 2 < plain_peak, (plain_peak, checkpointed_peak)


def test_scan_in_checkpointed_blocks():
    c0, xs = RNG.standard_normal((4, 3)), RNG.standard_normal((20, 3)) * 0.3

    def run(c, x, every):
        def step(carry, x_t):
            h = tf.tanh(carry * 0.9 + x_t)
            return h, tf.sum(h)
        last, ys = tf.scan(step, c, x, checkpoint_every=every)
        return tf.sum(last) + tf.sum(ys * ys)

    g0 = tf.grad(lambda c, x: run(c, x, 0), argnums=(0, 1))(c0, xs)
    g1 = tf.grad(lambda c, x: run(c, x, 6), argnums=(0, 1))(c0, xs)
    for a, b in zip(g0, g1):
        assert np.array_equal(np.asarray(a), np.asarray(b))


def test_scan_with_a_snapshot_budget_and_its_errors():
    c0, xs = RNG.standard_normal((4, 3)), RNG.standard_normal((50, 3)) * 0.3

    def run(c, x, **options):
        last, _ = tf.scan(lambda carry, x_t: (tf.tanh(carry * 0.9 + x_t), None), c, x, **options)
        return tf.sum(last)

    g0 = tf.grad(lambda c, x: run(c, x), argnums=0)(c0, xs)
    for s in (1, 3, 15):
        g1 = tf.grad(lambda c, x: run(c, x, checkpoint_snapshots=s), argnums=0)(c0, xs)
        assert np.array_equal(np.asarray(g0), np.asarray(g1))
    with pytest.raises(tf.ValueError, match="negative"):
        tf.grad(lambda c, x: run(c, x, checkpoint_snapshots=-1), argnums=0)(c0, xs)


def test_rematerialize_keeps_the_plan_within_the_limit():
    x = RNG.standard_normal((256, 64))
    ws = [RNG.standard_normal((64, 64)) * 0.12 for _ in range(4)]

    def net(a, w0, w1, w2, w3):
        return loss(a, [w0, w1, w2, w3], False)

    plain = tf.grad(net, argnums=(1, 2, 3, 4))
    limited = tf.grad(tf.rematerialize(net, 3_500_000), argnums=(1, 2, 3, 4))
    plain(x, *ws)
    limited(x, *ws)
    meter = tf.MemoryMeter()
    g0 = plain(x, *ws)
    plain_peak = meter.peak_bytes
    meter.reset()
    g1 = limited(x, *ws)
    assert meter.peak_bytes <= 1.15 * 3_500_000 < plain_peak
    for a, b in zip(g0, g1):
        assert np.array_equal(np.asarray(a), np.asarray(b))
    with pytest.raises(tf.ValueError, match="the lowest is"):
        tf.grad(tf.rematerialize(net, 4096), argnums=1)(x, *ws)


def test_checkpoint_policies_give_the_plain_gradients():
    x = RNG.standard_normal((32, 16))
    ws = [RNG.standard_normal((16, 16)) * 0.2 for _ in range(3)]

    def net(h):
        for w in ws:
            m = tf.matmul(h, w)
            h = tf.sin(m) * tf.tanh(m)
        return h

    expected = np.asarray(tf.grad(lambda a: tf.sum(net(a)))(x))
    for policy in ("nothing", "dots", "everything"):
        got = np.asarray(tf.grad(lambda a: tf.sum(tf.checkpoint(net, policy=policy)(a)))(x))
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError):
        tf.grad(lambda a: tf.sum(tf.checkpoint(net, policy="random")(a)))(x)

    def named(h):
        for w in ws:
            m = tf.checkpoint_name(tf.matmul(h, w), "m")
            h = tf.sin(m) * tf.tanh(m)
        return h

    for names in ((), ("m",), ("other",)):
        got = np.asarray(tf.grad(lambda a: tf.sum(tf.checkpoint(named, policy="names", names=names)(a)))(x))
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


def test_fori_loop_with_binomial_checkpointing():
    x0 = np.array([1.0, -0.5])

    def run(x, **options):
        def step(i, c):
            return c + 0.05 * tf.sin(c) * tf.cos(i.astype("f64") * 0.01)
        return tf.sum(tf.fori_loop(0, 150, step, x, **options))

    g0 = tf.grad(lambda x: run(x))(x0)
    for options in ({"checkpoint_snapshots": 3}, {"checkpoint_every": 10}):
        g1 = tf.grad(lambda x: run(x, **options))(x0)
        assert np.array_equal(np.asarray(g0), np.asarray(g1))
