"""tenferro: differentiable tensor programs, from Python.

    import numpy as np
    import tenferro as tf

    def loss(w, x):                      # w, x are Traced inside transforms
        return tf.sum(tf.exp(w * x))

    g = tf.grad(loss)(np.array([0.5, -1.0]), np.array([1.0, 2.0]))
    np.asarray(g)                        # shares the tensor's memory

Inside a transformed function the arguments are Traced values; arithmetic operators and the
functions of this module record operations. Wherever they take a tensor they also take a NumPy
array, a Tensor, a nested list or a Python scalar (a constant of the trace).

Outside a transformed function the same functions run at once: on arrays, Tensors, lists and
scalars they return Tensors (numpy.asarray shares their memory), and Tensors take the same
operators. EagerTensor is PyTorch's tensor: EagerTensor(data, requires_grad=True), operations
that record what they did, loss.backward() filling .grad, tf.no_grad() for updates:

    w = tf.EagerTensor(np.ones((3, 2)), requires_grad=True)
    loss = tf.sum(tf.tanh(x @ w))
    loss.backward()                      # w.grad

grad and value_and_grad take trees (lists, tuples, dicts, None of arrays: JAX's pytrees) and
return gradients of the same structure; has_aux carries auxiliary results through. vmap maps a
function over a batch axis (vmap(grad(f)) gives per-example gradients).

A Traced value has a dtype and a shape but no value while tracing: bool(), int(), float(), an
`if` or `while` on it raise TracerConversionError (use where, cond, switch, while_loop); len()
and iteration follow its leading axis, whose length is known.
"""
from ._version import __version__  # noqa: F401
from ._tenferro import (  # noqa: F401
    ADRuleError, DTypeError, EagerTensor, Error, ShapeError, Tensor, Traced, TracerConversionError, Transformed, ValueError,
    abs, acos, acosh, argmax, argmin, asin, asinh, atan, atan2, atanh, broadcast_to, ceil, conj, cos, cosh, digamma,
    erf, erfc, erfinv, exp, expm1, floor, frac, grad, hessian, hypot, imag, jacfwd, jacrev, jit, jvp,
    lgamma, log, log1p, log2, log10, log_softmax, logaddexp, logsumexp, matmul, max, maximum, mean,
    min, minimum, real, relu, reshape, rsqrt, sigmoid, sign, sin, sinh, softmax, softplus, sqrt,
    stop_gradient, sum, tan, tanh, transpose, value_and_grad, vjp, hvp, where, xlogy,
    slice, pad, concatenate, linalg, from_numpy, from_dlpack, take, index_add, cumsum, flip, tril, triu,
    diagonal, diag, stack, split, one_hot, sort, sort_with_indices, argsort, top_k, take_along_axis,
    cumprod, cummax, cummin, logcumsumexp, dynamic_slice, dynamic_update_slice, random, dropout,
    conv, avg_pool, max_pool, gather, scatter_add, scatter, scan, fori_loop, cond, switch, while_loop,
    fixed_point, root, MemoryMeter, checkpoint_name,
    sparse_jacobian, sparse_hessian, jacobian_sparsity, hessian_sparsity, SparseMatrix, SparsityPattern, SparseAnalysis,
    jacobian, JacobianChoice, JacobianTransformed,
    add, sub, mul, div, pow, power, neg, eq, ne, lt, le, gt, ge, clamp, clip, astype, fmod, remainder, round, trunc,
    exp2, cbrt, frexp, ldexp, polygamma, mvlgamma, i0, i0e, i1, i1e, erfcinv, erfcx, ndtr, log_ndtr, ndtri, sinc,
    isnan, isinf, isfinite, prod, var, stddev, std, max_with_index, min_with_index, cross_entropy, dot_general,
    semiring_dot_general, semiring_dot_general_index, no_grad, zeros, ones, full)
from . import _tenferro  # noqa: E402
# The functions of the op list's one-op entries (tenferro/op_list.hpp), exported by the module's own
# list of them: an op added there needs no line here.
globals().update({_name: getattr(_tenferro, _name) for _name in _tenferro._op_list_functions})
from ._trees import (  # noqa: F401,E402
    Jit, TreeDef, grad, jit, tree_flatten, tree_leaves, tree_map, tree_unflatten, value_and_grad, vmap)
from . import optim  # noqa: E402
from . import distributed  # noqa: E402
from ._tenferro import _checkpoint_call, _rematerialize_call
from ._tenferro import _einsum, einsum_path, ContractionPath  # noqa: F401


def einsum(subscripts, *operands, optimize="auto", objective="flops", size_weight=1.0, memory_limit=None,
           repeats=32, seed=0, semiring="standard"):
    """Einstein summation (NumPy's subscripts): recorded when any operand is Traced (the others
    become constants of its trace), run eagerly when one is an EagerTensor, else compiled (once per
    subscripts, types and options) and run on the tensors or arrays. optimize names the path search
    ("auto", "optimal", "dp", "greedy", "random_greedy", "treesa", "left_to_right") or gives the
    path (SSA pairs, see einsum_path); objective is "flops", "size" or "combined" (flops +
    size_weight * size); memory_limit (elements) slices the concrete contraction; semiring
    "max_plus", "min_plus" or "max_times" contracts in a tropical algebra.

    >>> np.asarray(tf.einsum("ij,jk->ik", np.eye(2), np.ones((2, 3)))).tolist()
    [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]
    """
    return _einsum(subscripts, operands, optimize=optimize, objective=objective, size_weight=size_weight,
                   memory_limit=memory_limit, repeats=repeats, seed=seed, semiring=semiring)


def checkpoint(f, policy="nothing", names=()):
    """f as a checkpoint (jax.checkpoint, torch.utils.checkpoint): called on Traced values, its
    values are computed as f's, and reverse mode keeps only its arguments, recomputing f's
    intermediates in the backward pass. Values and gradients are f's. policy="dots" keeps the
    results of contractions (matmul, einsum) too and recomputes only what lies between them
    (jax.checkpoint_policies.dots_saveable); "names" keeps the values named by
    tf.checkpoint_name (those in `names`, or all); "everything" keeps all (no checkpoint).

    >>> f = tf.checkpoint(lambda x: tf.sin(tf.sin(x)))
    >>> round(tf.grad(lambda x: tf.sum(f(x)))(np.array([0.5])).item(), 4)
    0.7786
    """
    import functools

    @functools.wraps(f)
    def checkpointed(*args):
        return _checkpoint_call(f, policy, list(names), *args)
    return checkpointed


def rematerialize(f, memory_limit=0, checkpoints=0):
    """f cut into as few consecutive checkpoints as keep the planned peak of its gradient program
    within memory_limit bytes (tenferro::rematerialize): values and gradients are f's; a limit
    below every plan raises tf.ValueError. checkpoints=k instead cuts it into exactly k ranges
    without planning. f must read only its arguments.

    >>> f = tf.rematerialize(lambda x: tf.exp(tf.sin(x)), checkpoints=1)
    >>> round(tf.grad(lambda x: tf.sum(f(x)))(np.array([0.0])).item(), 4)
    1.0
    """
    import functools

    @functools.wraps(f)
    def rematerialized(*args):
        return _rematerialize_call(f, memory_limit, checkpoints, *args)
    return rematerialized


def asarray(x):
    """A tensor as a NumPy array sharing its memory (numpy.asarray does the same).

    >>> tf.asarray(tf.ones((2,))).tolist()
    [1.0, 1.0]
    """
    import numpy
    return numpy.asarray(x)
