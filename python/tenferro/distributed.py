"""tenferro over MPI from Python (the C++ component tenferro::mpi), with mpi4py communicators.

    from mpi4py import MPI
    import tenferro as tf

    comm = MPI.COMM_WORLD
    step = tf.distributed.value_and_grad(comm, loss, num_params=1)   # loss(params, x, y)
    x_mine, y_mine = tf.distributed.shard(comm, x), tf.distributed.shard(comm, y)
    loss_value, grads = step(params, x_mine, y_mine)                 # the whole batch's, on every rank

    z = tf.distributed.einsum(comm, "abx,bcy,cdz,dea->xyz", *tensors, memory_limit=2**16)

Every function is collective: each rank calls it with arguments of the same types, and each gets
the same bits back. value_and_grad's loss returns the mean over its data's leading axis; the
ranks' shards are weighted by their sizes. einsum spreads the slices of a contraction sliced to
memory_limit (elements) over the ranks. If the computation fails on any rank, every rank raises
that rank's error. Run under mpirun: `mpirun -np 2 python3 train.py`.
"""
from . import _tenferro
from ._trees import tree_flatten, tree_unflatten, _unflatten_args

__all__ = ["available", "rank", "size", "shard", "einsum", "einsum_vjp", "value_and_grad"]


def available():
    """Whether this build of tenferro has MPI (the component tenferro::mpi).

    >>> isinstance(tf.distributed.available(), bool)
    True
    """
    return hasattr(_tenferro, "_distributed")


def _impl():
    if not available():
        raise ImportError("tenferro.distributed: this build of tenferro has no MPI (build it where CMake finds "
                          "MPI; Debian: libopenmpi-dev)")
    return _tenferro._distributed


def rank(comm):
    """This process's rank in comm (an mpi4py communicator).

    >>> from mpi4py import MPI
    >>> tf.distributed.rank(MPI.COMM_SELF)
    0
    """
    return _impl().rank_and_size(comm)[0]


def size(comm):
    """The number of ranks of comm.

    >>> from mpi4py import MPI
    >>> tf.distributed.size(MPI.COMM_SELF)
    1
    """
    return _impl().rank_and_size(comm)[1]


def shard(comm, batch):
    """This rank's rows of a batch every rank holds (axis 0, contiguous, nearly equal parts).

    >>> from mpi4py import MPI
    >>> np.asarray(tf.distributed.shard(MPI.COMM_SELF, np.arange(4.0))).tolist()   # one rank: all rows
    [0.0, 1.0, 2.0, 3.0]
    """
    return _impl().shard(comm, batch)


def einsum(comm, subscripts, *operands, memory_limit=None):
    """``einsum(subscripts, *operands)`` with the slices of its sliced path (memory_limit elements per
    intermediate) spread over the ranks; every rank passes the same operands and gets the same
    result (to rounding the one-process result; exactly under one rank).

    >>> from mpi4py import MPI
    >>> z = tf.distributed.einsum(MPI.COMM_SELF, "ij,jk->ik", np.eye(2), np.ones((2, 3)), memory_limit=6)
    >>> np.asarray(z).tolist()
    [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]
    """
    return _impl().einsum(comm, subscripts, tuple(operands), memory_limit)[0]


def einsum_vjp(comm, subscripts, *operands, cotangent, memory_limit=None):
    """(value, gradients) of ``einsum(subscripts, *operands)``: the gradients of <cotangent, value>
    with respect to every operand, each rank differentiating its share of the slices; every rank
    gets the same bits.

    >>> from mpi4py import MPI
    >>> value, grads = tf.distributed.einsum_vjp(MPI.COMM_SELF, "i,i->", np.array([1.0, 2.0]),
    ...                                          np.array([3.0, 4.0]), cotangent=np.array(1.0))
    >>> float(value), np.asarray(grads[0]).tolist()
    (11.0, [3.0, 4.0])
    """
    return _impl().einsum_vjp(comm, subscripts, tuple(operands), cotangent, memory_limit)


class _ValueAndGrad:
    def __init__(self, comm, f, num_params):
        self._comm, self._f, self._num_params = comm, f, num_params
        self._by_structure = {}

    def __call__(self, *args):
        if len(args) <= self._num_params:
            raise ValueError(f"tenferro.distributed.value_and_grad: {len(args)} arguments for {self._num_params} "
                             "parameter arguments and at least one data argument")
        defs = [tree_flatten(a) for a in args[:self._num_params]]
        data = list(args[self._num_params:])
        key = tuple(d for _, d in defs)
        cpp = self._by_structure.get(key)
        if cpp is None:
            structures, f, nd = list(key), self._f, len(data)

            n = sum(d.leaves for d in structures)

            def flat(*leaves):
                return f(*_unflatten_args(structures, leaves), *leaves[n:n + nd])

            cpp = _impl().value_and_grad(self._comm, flat, sum(d.leaves for d in structures))
            self._by_structure[key] = cpp
        leaves = [leaf for ls, _ in defs for leaf in ls]
        loss, grads = cpp(leaves, data)
        out, at = [], 0
        for _, d in defs:
            out.append(tree_unflatten(d, list(grads[at:at + d.leaves])))
            at += d.leaves
        return loss, (out[0] if len(out) == 1 else tuple(out))


def value_and_grad(comm, f, num_params=1):
    """Data-parallel (loss, gradients): ``f(*params, *data)`` returns the mean loss over its data's
    leading axis; the first num_params arguments (trees) are differentiated, the rest are this
    rank's shard of the data. Returns a callable whose results are those of the whole batch, the
    same bits on every rank (gradients as a tree like the parameter, a tuple of them for several).

    >>> from mpi4py import MPI
    >>> step = tf.distributed.value_and_grad(MPI.COMM_SELF, lambda p, x: tf.mean((x * p["w"]) ** 2))
    >>> loss, g = step({"w": np.array(2.0)}, np.array([1.0, 3.0]))
    >>> float(loss), float(g["w"])
    (20.0, 20.0)
    """
    return _ValueAndGrad(comm, f, num_params)
