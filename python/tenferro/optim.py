"""Optimizers as pure functions over trees of parameters (optax's style, PyTorch's updates).

    opt = tf.optim.adam(1e-3)
    state = opt.init(params)                      # params: any tree (lists, tuples, dicts) of arrays

    @tf.jit
    def train_step(params, state, x, y):
        loss, grads = tf.value_and_grad(loss_fn)(params, x, y)
        params, state = opt.step(params, grads, state)
        return params, state, loss                # one compiled program per step

step() returns the parameters after one step and the next state; nothing is updated in place, so
the same code runs inside tf.jit (recorded), on tf.EagerTensor values (with history) and on arrays
(at once, returning Tensors). The updates are torch.optim's SGD, Adam and AdamW, operation for
operation, so a run matches PyTorch's to rounding. The state is a tuple of tensors: the step count
(an i64 scalar), then the optimizer's buffers.

lbfgs(f, x0) minimizes a smooth deterministic f with L-BFGS and a strong-Wolfe line search, its
value and gradient one compiled program; scipy_minimize(f, x0, method) hands the same compiled
value-and-gradient to scipy.optimize.minimize.
"""
import collections

from . import _tenferro as _tf
from ._trees import tree_flatten, tree_unflatten

__all__ = ["Optimizer", "Schedule", "sgd", "adam", "adamw", "exponential_decay", "cosine_decay",
           "warmup_cosine_decay", "inverse_time_decay", "lbfgs", "LbfgsResult", "scipy_minimize"]

Schedule = _tf.Schedule


def exponential_decay(lr, rate, transition_steps, staircase=False):
    """lr * rate ** (count / transition_steps) (the exponent floored with staircase).

    >>> s = tf.optim.exponential_decay(0.1, 0.5, 10)
    >>> round(s.at(20), 12)
    0.025
    """
    return _tf._exponential_decay(lr, rate, transition_steps, staircase)


def cosine_decay(lr, decay_steps, alpha=0.0):
    """lr * ((1 - alpha) * (1 + cos(pi * min(count, decay_steps) / decay_steps)) / 2 + alpha).

    >>> round(tf.optim.cosine_decay(0.1, 100).at(50), 12)
    0.05
    """
    return _tf._cosine_decay(lr, decay_steps, alpha)


def warmup_cosine_decay(peak, warmup_steps, decay_steps, end_value=0.0):
    """Linear from 0 to peak over warmup_steps, then a cosine decay to end_value at decay_steps.

    >>> s = tf.optim.warmup_cosine_decay(1.0, 10, 110)
    >>> round(s.at(5), 12), round(s.at(10), 12), round(s.at(110), 12)
    (0.5, 1.0, 0.0)
    """
    return _tf._warmup_cosine_decay(peak, warmup_steps, decay_steps, end_value)


def inverse_time_decay(lr, transition_steps, power=1.0):
    """lr / (1 + count / transition_steps) ** power.

    >>> round(tf.optim.inverse_time_decay(0.1, 10).at(10), 12)
    0.05
    """
    return _tf._inverse_time_decay(lr, transition_steps, power)


class Optimizer:
    """init(params) -> state; step(params, grads, state) -> (params, state). params and grads are
    trees of the same structure (grads as tf.grad returns them); the state is a tuple of tensors.

    >>> loss = lambda p: tf.sum((p["w"] - 3.0) ** 2)
    >>> opt = tf.optim.sgd(0.25)
    >>> params = {"w": np.array([0.0])}
    >>> state = opt.init(params)
    >>> for _ in range(3):
    ...     params, state = opt.step(params, tf.grad(loss)(params), state)
    >>> params["w"].numpy().tolist(), state[0].item()
    ([2.625], 3)
    """

    def __init__(self, impl):
        self._impl = impl

    @property
    def name(self):
        return self._impl.name

    def init(self, params):
        """The state for `params` (float parameters): the step count 0, then the buffers.

        >>> tf.optim.adam(0.1).init([np.zeros(2)])[0].item()
        0
        """
        leaves, _ = tree_flatten(params)
        return tuple(self._impl.init(list(leaves)))

    def step(self, params, grads, state):
        """The parameters after one step (the tree of `params`) and the next state.

        >>> opt = tf.optim.sgd(0.5)
        >>> p, s = opt.step({"w": np.array([1.0])}, {"w": np.array([2.0])}, opt.init({"w": np.array([1.0])}))
        >>> np.asarray(p["w"]).tolist(), s[0].item()
        ([0.0], 1)
        """
        leaves, treedef = tree_flatten(params)
        grad_leaves, grad_def = tree_flatten(grads)
        if grad_def != treedef:
            raise ValueError(f"tenferro.optim.{self.name}.step: the gradients have the structure {grad_def}, "
                             f"the parameters {treedef}")
        new, state = self._impl.step(list(leaves), list(grad_leaves), list(state))
        return tree_unflatten(treedef, new), tuple(state)

    def __repr__(self):
        return f"tenferro.optim.{self.name}"


def sgd(lr=0.01, momentum=0.0, nesterov=False, weight_decay=0.0):
    """Stochastic gradient descent with momentum (torch.optim.SGD without dampening): lr is a
    number, a schedule, or a callable of the step count.

    >>> tf.optim.sgd(0.1, momentum=0.9)
    tenferro.optim.sgd
    """
    return Optimizer(_tf._sgd(lr, momentum, nesterov, weight_decay))


def adam(lr=1e-3, b1=0.9, b2=0.999, eps=1e-8, weight_decay=0.0):
    """Adam (torch.optim.Adam; weight_decay adds an L2 term to the gradient).

    >>> tf.optim.adam(1e-3)
    tenferro.optim.adam
    """
    return Optimizer(_tf._adam(lr, b1, b2, eps, weight_decay, False))


def adamw(lr=1e-3, b1=0.9, b2=0.999, eps=1e-8, weight_decay=0.01):
    """Adam with decoupled weight decay (torch.optim.AdamW).

    >>> tf.optim.adamw(1e-3, weight_decay=0.05)
    tenferro.optim.adamw
    """
    return Optimizer(_tf._adam(lr, b1, b2, eps, weight_decay, True))


LbfgsResult = collections.namedtuple("LbfgsResult", "x value grad iterations evaluations converged message")
LbfgsResult.__doc__ = """What lbfgs found: x and grad as trees like x0, value a float, and why it stopped.

    >>> r = tf.optim.lbfgs(lambda p: (p["a"] - 1.0) ** 2, {"a": np.array(0.0)})
    >>> round(r.x["a"].item(), 9), r.value < 1e-12, r.converged
    (1.0, True, True)
    """


def lbfgs(f, x0, history=10, max_iter=1000, gtol=1e-10, ftol=0.0, c1=1e-4, c2=0.9, max_linesearch=30):
    """Minimizes the real scalar f(x) over the tree x (f32 or f64 leaves) from x0 by L-BFGS with a
    strong-Wolfe line search. f's value and gradient are traced once and compiled. Converged when
    the largest absolute gradient component is at most gtol (or the value changes by at most ftol,
    relatively); see the result's converged and message.

    >>> r = tf.optim.lbfgs(lambda x: tf.sum((x - 2.0) ** 2), np.zeros(3))
    >>> r.converged, np.round(np.asarray(r.x), 12).tolist()
    (True, [2.0, 2.0, 2.0])
    """
    leaves, treedef = tree_flatten(x0)

    def flat(*xs):
        return f(tree_unflatten(treedef, list(xs)))

    r = _tf._lbfgs(flat, list(leaves), history, max_iter, gtol, ftol, c1, c2, max_linesearch)
    return LbfgsResult(tree_unflatten(treedef, list(r.x)), r.value, tree_unflatten(treedef, list(r.grad)),
                       r.iterations, r.evaluations, r.converged, r.message)


def scipy_minimize(f, x0, method="L-BFGS-B", **options):
    """scipy.optimize.minimize on f over the tree x0 (float leaves), with f's value and gradient
    from one compiled program per call (jac=True). Returns SciPy's result with x as a tree like x0.
    options go to scipy.optimize.minimize (tol, bounds, options, callback, ...).

    >>> r = tf.optim.scipy_minimize(lambda x: tf.sum((x - 2.0) ** 2), np.zeros(2))
    >>> bool(r.success), np.round(np.asarray(r.x), 6).tolist()
    (True, [2.0, 2.0])
    """
    import numpy as np
    import scipy.optimize

    leaves, treedef = tree_flatten(x0)
    arrays = [np.asarray(x) for x in leaves]
    sizes = [a.size for a in arrays]
    offsets = np.cumsum([0] + sizes)

    def unflat(z):
        return [z[offsets[i]:offsets[i + 1]].reshape(a.shape).astype(a.dtype) for i, a in enumerate(arrays)]

    def flat_f(*xs):
        return f(tree_unflatten(treedef, list(xs)))

    value_and_grad = _tf.value_and_grad(flat_f, tuple(range(len(arrays))))

    def fun(z):
        value, grads = value_and_grad(*unflat(z))
        return float(value), np.concatenate([np.asarray(g, dtype=np.float64).ravel() for g in grads])

    z0 = np.concatenate([a.astype(np.float64).ravel() for a in arrays])
    result = scipy.optimize.minimize(fun, z0, jac=True, method=method, **options)
    result.x = tree_unflatten(treedef, unflat(result.x))
    return result
