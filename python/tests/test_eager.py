"""Concrete and eager use from Python: functions on arrays outside transforms return Tensors;
EagerTensor with requires_grad and backward() as PyTorch's tensors. Gradients are checked against
tf.grad on the same function, against closed forms and against central differences."""
import numpy as np
import pytest

import tenferro as tf

RNG = np.random.default_rng(7)


def mlp_loss(w1, w2, x):
    h = tf.tanh(x @ w1 + 0.5)
    return tf.sum(tf.logsumexp(h @ w2, 1)) + 0.1 * tf.sum(w1 * w1)


def test_functions_on_arrays_return_tensors_equal_to_the_compiled_ones():
    x = RNG.standard_normal((4, 3))
    y = tf.exp(x) * 2.0 - tf.sin(x)
    assert isinstance(y, tf.Tensor)
    np.testing.assert_allclose(np.asarray(y), np.exp(x) * 2.0 - np.sin(x), rtol=1e-15)
    # Bit for bit the jit-compiled program's values (the same vectorized loops).
    z = tf.jit(lambda a: tf.exp(a) * 2.0 - tf.sin(a))(x)
    np.testing.assert_array_equal(np.asarray(y), np.asarray(z))
    # Tensors chain with operators and NumPy arrays; a Python scalar takes the tensor's dtype.
    x32 = x.astype(np.float32)
    assert (tf.Tensor(x32) * 2.0).dtype == "f32"
    np.testing.assert_allclose(np.asarray(tf.Tensor(x) @ x.T), x @ x.T, rtol=1e-14)


def test_random_numbers_without_a_transform():
    key = tf.random.key(0)
    a = tf.random.normal(key, [5])
    b = tf.jit(lambda k: tf.random.normal(k, [5]))(key)
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    k1, k2 = tf.random.split(key)
    assert not np.array_equal(np.asarray(tf.random.uniform(k1, [3])), np.asarray(tf.random.uniform(k2, [3])))


def test_concrete_conversions():
    t = tf.sum(np.array([1.0, 2.0]))
    assert float(t) == 3.0 and t.item() == 3.0
    assert bool(tf.Tensor(np.array([1.0])) > 0.5)
    assert int(tf.Tensor(np.array(7))) == 7 and [10, 20][tf.Tensor(np.array(1))] == 20
    m = tf.Tensor(np.arange(6.0).reshape(3, 2))
    assert len(m) == 3
    np.testing.assert_array_equal(np.asarray(list(m)[2]), [4.0, 5.0])
    with pytest.raises(ValueError, match="3 elements"):
        float(tf.Tensor(np.ones(3)))
    with pytest.raises(TypeError, match="integer"):
        operator_index(tf.Tensor(np.array(1.0)))


def operator_index(x):
    import operator
    return operator.index(x)


def test_a_concrete_result_inside_jit_is_a_constant():
    c = np.array([1.0, 2.0])
    f = tf.jit(lambda a: (a * 2.0, tf.exp(c)))      # tf.exp(c) runs at once: a constant result
    got = f(np.array([3.0, 4.0]))
    np.testing.assert_array_equal(np.asarray(got[0]), [6.0, 8.0])
    np.testing.assert_allclose(np.asarray(got[1]), np.exp(c), rtol=1e-15)


def test_backward_equals_grad():
    w1, w2, x = RNG.standard_normal((3, 5)), RNG.standard_normal((5, 2)), RNG.standard_normal((4, 3))
    e1, e2 = tf.EagerTensor(w1, requires_grad=True), tf.EagerTensor(w2, requires_grad=True)
    loss = mlp_loss(e1, e2, x)
    assert isinstance(loss, tf.EagerTensor) and loss.requires_grad and not loss.is_leaf
    assert e1.grad is None
    loss.backward()
    g1, g2 = tf.grad(mlp_loss, argnums=(0, 1))(w1, w2, x)
    np.testing.assert_allclose(np.asarray(e1.grad), np.asarray(g1), rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(np.asarray(e2.grad), np.asarray(g2), rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(float(loss), float(tf.jit(mlp_loss)(w1, w2, x)), rtol=1e-14)


def test_gradient_against_central_differences():
    x0 = RNG.standard_normal(4)

    def f(x):
        return tf.sum(tf.sin(x) * tf.exp(x[::-1]))

    x = tf.EagerTensor(x0, requires_grad=True)
    f(x).backward()
    h = 1e-6
    fd = [(float(f(x0 + h * e)) - float(f(x0 - h * e))) / (2 * h) for e in np.eye(4)]
    np.testing.assert_allclose(np.asarray(x.grad), fd, rtol=1e-8, atol=1e-9)


def test_accumulation_zero_grad_and_no_grad():
    w = tf.EagerTensor(np.array([1.0, 2.0]), requires_grad=True)
    for _ in range(2):
        tf.sum(w * w).backward()
    np.testing.assert_array_equal(np.asarray(w.grad), [4.0, 8.0])      # 2 * (2 w)
    w.zero_grad()
    assert w.grad is None or not np.any(np.asarray(w.grad))
    with tf.no_grad():
        y = w * 3.0
    assert not y.requires_grad
    # The PyTorch training step: update the leaf under no_grad, history-free.
    with tf.no_grad():
        w2 = tf.EagerTensor(w - 0.5 * np.array([1.0, 1.0]), requires_grad=True)
    np.testing.assert_array_equal(np.asarray(w2), [0.5, 1.5])


def test_retain_graph_and_create_graph():
    x = tf.EagerTensor(np.array([0.3, -0.7]), requires_grad=True)
    y = tf.sum(tf.exp(x))
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(np.asarray(x.grad), 2 * np.exp([0.3, -0.7]), rtol=1e-15)
    with pytest.raises(ValueError, match="retain_graph=True"):   # the Python spelling
        y.backward()
    # Second order: d/dx of (d/dx sum x^3) . v = 6 x v.
    z = tf.EagerTensor(np.array([1.0, 2.0]), requires_grad=True)
    tf.sum(z * z * z).backward(create_graph=True)
    g = z.grad
    z.zero_grad()
    tf.sum(g * np.array([1.0, -1.0])).backward()
    np.testing.assert_allclose(np.asarray(z.grad), [6.0, -12.0], rtol=1e-14)


def test_non_scalar_backward_takes_the_cotangent():
    a = RNG.standard_normal((3, 3))
    x = tf.EagerTensor(RNG.standard_normal(3), requires_grad=True)
    y = tf.tanh(a @ x)
    with pytest.raises(ValueError):
        y.backward()
    c = np.array([1.0, -2.0, 0.5])
    y.backward(c)
    _, vjp = tf.vjp(lambda v: tf.tanh(a @ v), (np.asarray(x),), c)
    np.testing.assert_allclose(np.asarray(x.grad), np.asarray(vjp[0]), rtol=1e-14)


def test_numpy_defers_to_eager_tensors():
    x = tf.EagerTensor(np.array([1.0, 2.0]), requires_grad=True)
    y = np.array([3.0, 4.0]) * x          # EagerTensor.__rmul__, not an object array
    assert isinstance(y, tf.EagerTensor)
    tf.sum(y).backward()
    np.testing.assert_array_equal(np.asarray(x.grad), [3.0, 4.0])


def test_control_flow_and_implicit_solvers_eagerly():
    a = tf.EagerTensor(np.array(3.0), requires_grad=True)
    r = tf.root(lambda x, p: x * x * x + x - p, np.array(1.0), a)
    x = float(r)
    assert abs(x ** 3 + x - 3.0) < 1e-12
    r.backward()
    assert abs(float(a.grad) - 1.0 / (3 * x * x + 1)) < 1e-12
    c = tf.EagerTensor(np.array([1.0, 2.0]), requires_grad=True)
    carry, ys = tf.scan(lambda s, v: (s * v, s), np.array(1.0), c)
    carry.backward()
    np.testing.assert_allclose(np.asarray(c.grad), [2.0, 1.0], rtol=1e-15)


def test_eager_values_inside_a_traced_function():
    c = tf.EagerTensor(np.array([2.0, 3.0]))                      # no grad: a constant of the trace
    np.testing.assert_array_equal(np.asarray(tf.jit(lambda x: x * c)(np.array([1.0, 1.0]))), [2.0, 3.0])
    w = tf.EagerTensor(np.array([2.0, 3.0]), requires_grad=True)  # its history cannot join a trace
    with pytest.raises(ValueError):
        tf.jit(lambda x: x * w)(np.array([1.0, 1.0]))


def test_python_spellings_in_messages():
    def loop(x):
        return tf.sum(tf.while_loop(lambda c: tf.sum(c) < 10.0, lambda c: c * 2.0, x))
    with pytest.raises(tf.ADRuleError) as info:
        tf.grad(loop)(np.array([1.0, 2.0]))
    assert "max_trips=n" in str(info.value) and "Options{" not in str(info.value)
