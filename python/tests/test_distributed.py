"""tenferro.distributed with mpi4py's COMM_WORLD: one rank under plain pytest (CTest
python.pytest), two under `mpirun -np 2` (CTest python.mpi). Results against the one-process
computation on the whole input, the same bits on every rank (gathered and compared), trees of
parameters, and a failure on one rank raised on every rank."""
import numpy as np
import pytest

import tenferro as tf

MPI = pytest.importorskip("mpi4py.MPI")
pytestmark = pytest.mark.skipif(not tf.distributed.available(), reason="tenferro built without MPI")
COMM = MPI.COMM_WORLD


def same_on_every_rank(x):
    a = np.ascontiguousarray(np.asarray(x))
    everyone = COMM.allgather(a.tobytes())
    return all(b == everyone[0] for b in everyone)


def test_data_parallel_gradients_of_a_tree_equal_the_whole_batch():
    rng = np.random.default_rng(0)          # the same data on every rank
    x, y = rng.standard_normal((13, 4)), rng.standard_normal((13, 2))
    params = {"w": rng.standard_normal((4, 2)), "b": np.zeros(2)}

    def loss(p, xb, yb):
        d = tf.tanh(xb @ p["w"] + p["b"]) - yb
        return tf.mean(d * d)

    step = tf.distributed.value_and_grad(COMM, loss)
    value, grads = step(params, tf.distributed.shard(COMM, x), tf.distributed.shard(COMM, y))
    want_value, want_grads = tf.value_and_grad(loss)(params, x, y)
    assert float(value) == pytest.approx(float(want_value), rel=1e-13)
    for k in ("w", "b"):
        np.testing.assert_allclose(np.asarray(grads[k]), np.asarray(want_grads[k]), rtol=1e-12, atol=1e-14)
        assert same_on_every_rank(grads[k])


def test_sliced_einsum_shared_by_the_ranks():
    rng = np.random.default_rng(1)
    xs = [rng.standard_normal((8, 8, 2)) for _ in range(6)]
    spec = "abx,bcy,cdz,dew,efv,fau->xyz"
    z = tf.distributed.einsum(COMM, spec, *xs, memory_limit=128)
    np.testing.assert_allclose(np.asarray(z), np.asarray(tf.einsum(spec, *xs)), rtol=1e-12, atol=1e-12)
    assert same_on_every_rank(z)


def test_sliced_einsum_gradients_shared_by_the_ranks():
    rng = np.random.default_rng(2)
    xs = [rng.standard_normal((8, 8, 2)) for _ in range(6)]
    cot = rng.standard_normal((2, 2, 2))
    spec = "abx,bcy,cdz,dew,efv,fau->xyz"
    value, grads = tf.distributed.einsum_vjp(COMM, spec, *xs, cotangent=cot, memory_limit=128)
    want_value, want_grads = tf.vjp(lambda *v: tf.einsum(spec, *v), tuple(xs), cot)
    np.testing.assert_allclose(np.asarray(value), np.asarray(want_value), rtol=1e-12, atol=1e-12)
    for g, w in zip(grads, want_grads):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-12, atol=1e-12)
        assert same_on_every_rank(g)


def test_a_failure_on_one_rank_is_raised_on_every_rank():
    last = COMM.Get_size() - 1
    features = 3 if COMM.Get_rank() == last else 4
    x = np.ones((2, features))
    step = tf.distributed.value_and_grad(COMM, lambda w, xb: tf.mean(xb @ w))
    with pytest.raises(ValueError, match=f"rank {last} of {COMM.Get_size()}"):
        step(np.ones((4, 1)), x)
    with pytest.raises(TypeError, match="mpi4py"):
        tf.distributed.rank("not a communicator")
