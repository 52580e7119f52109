"""Sparse Jacobians and Hessians from Python: CSR arrays that SciPy takes as they are, values
against the dense jacfwd and hessian, patterns against closed forms."""
import numpy as np
import pytest

import tenferro as tf


def laplacian(u):
    n = u.shape[0]
    p = tf.pad(u, 0.0, [1, 1], [1, 1])
    return (tf.slice(p, [0, 1], [n, n + 1]) + tf.slice(p, [2, 1], [n + 2, n + 1]) + tf.slice(p, [1, 0], [n + 1, n])
            + tf.slice(p, [1, 2], [n + 1, n + 2]) - 4.0 * u)


def bratu(u):
    return -laplacian(u) - 0.5 * tf.exp(u)


def dense_of(m):
    """The CSR arrays expanded by hand (independent of to_dense)."""
    d = np.zeros(m.shape)
    indptr, indices, data = m.indptr, m.indices, np.asarray(m.data)
    for i in range(m.shape[0]):
        for k in range(indptr[i], indptr[i + 1]):
            d[i, indices[k]] = data[k]
    return d


@pytest.mark.parametrize("mode", ["auto", "columns", "rows"])
def test_sparse_jacobian_equals_jacfwd(mode):
    u = np.random.default_rng(0).normal(size=(6, 6))
    m = tf.sparse_jacobian(bratu, mode=mode)(u)
    assert m.shape == (36, 36)
    assert m.nnz == 36 * 5 - 4 * 6  # 5 per row, less the neighbours outside the grid
    dense = np.asarray(tf.jacfwd(bratu)(u)).reshape(36, 36)
    np.testing.assert_allclose(dense_of(m), dense, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.asarray(m.to_dense()), dense, rtol=1e-12, atol=1e-12)
    # A row holds 5 entries, so at least 5 colors; smallest-last order takes 5 or 6 on small grids.
    assert 5 <= tf.sparse_jacobian(bratu, mode=mode).analysis(u).colors <= 6


def test_scipy_takes_the_arrays():
    scipy_sparse = pytest.importorskip("scipy.sparse")
    u = np.random.default_rng(1).normal(size=(5, 5))
    m = tf.sparse_jacobian(bratu)(u)
    s = scipy_sparse.csr_matrix((np.asarray(m.data), m.indices, m.indptr), shape=m.shape)
    np.testing.assert_allclose(s.toarray(), np.asarray(tf.jacfwd(bratu)(u)).reshape(25, 25), rtol=1e-12, atol=1e-12)


def test_sparse_hessian_of_a_chain_is_tridiagonal():
    def rosenbrock(x):
        a, b = tf.slice(x, [0], [7]), tf.slice(x, [1], [8])
        return tf.sum(100.0 * (b - a * a) * (b - a * a) + (1.0 - a) * (1.0 - a))
    x = np.random.default_rng(2).normal(size=8)
    h = tf.sparse_hessian(rosenbrock)(x)
    assert str(h.pattern) == "".join("".join("x" if abs(i - j) <= 1 else "." for j in range(8)) + "\n" for i in range(8))
    np.testing.assert_allclose(dense_of(h), np.asarray(tf.hessian(rosenbrock)(x)), rtol=1e-10, atol=1e-10)
    assert str(tf.hessian_sparsity(rosenbrock, x)) == str(h.pattern)


def test_patterns_and_errors():
    p = tf.jacobian_sparsity(lambda x: tf.slice(x, [1], [4]) * tf.slice(x, [0], [3]), np.ones(4))
    assert str(p) == "xx..\n.xx.\n..xx\n"
    assert (0, 1) in p and (0, 2) not in p
    assert list(p.rows) == [0, 0, 1, 1, 2, 2]
    with pytest.raises(ValueError):
        tf.sparse_jacobian(bratu, mode="diagonal")
    with pytest.raises(tf.DTypeError):
        tf.sparse_jacobian(lambda x: x * x)(np.ones(3, dtype=np.complex128))


def test_jacobian_auto_picks_the_compressed_mode_for_a_stencil():
    u = np.random.default_rng(3).normal(size=(8, 8))
    j = tf.jacobian(bratu)
    assert j.choice(u).mode == "columns"
    assert 5 <= j.choice(u).products <= 8  # a row holds 5 entries; smallest-last order is a heuristic
    assert "forward 64" in str(j.choice(u))
    np.testing.assert_allclose(np.asarray(j(u)), np.asarray(tf.jacfwd(bratu)(u)), rtol=1e-12, atol=1e-12)
    for mode in ("forward", "reverse", "columns", "rows"):
        np.testing.assert_allclose(np.asarray(tf.jacobian(bratu, mode=mode)(u)), np.asarray(tf.jacfwd(bratu)(u)),
                                   rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError):
        tf.jacobian(bratu, mode="diagonal")


def test_jacobian_cross_country_in_every_order_equals_jacfwd():
    rng = np.random.default_rng(5)
    w1, w2 = rng.normal(size=(4, 32)), rng.normal(size=(32, 4))

    def bottleneck(x):
        h = tf.matmul(w1, x)
        return tf.matmul(w2, tf.tanh(h) * tf.sin(h))

    x = rng.normal(size=32)
    expected = np.asarray(tf.jacfwd(bottleneck)(x))
    for order in ("best", "forward", "reverse", "markowitz", "search", "edges"):
        j = tf.jacobian(bottleneck, mode="cross_country", order=order)
        assert j.choice(x).mode == "cross_country"
        assert j.choice(x).order != "best"
        np.testing.assert_allclose(np.asarray(j(x)), expected, rtol=1e-12, atol=1e-12)
    assert tf.jacobian(bottleneck).choice(x).mode == "cross_country"
    with pytest.raises(ValueError):
        tf.jacobian(bottleneck, mode="cross_country", order="random")
