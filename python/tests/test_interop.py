"""Every public function of the module, with NumPy arrays, tenferro Tensors, nested lists, Python
scalars, eager tensors and traced values in every tensor argument position, against NumPy.

CASES maps each public name (module functions, tenferro.linalg.*, tenferro.random.*, and the
operators and methods of Traced) to cases. A case is a callable, its arguments (the tensor
arguments wrapped in T) and the expected result computed by NumPy from the same arrays (never
from tenferro's output). Each case runs once with every tensor argument traced (inside tf.jit),
then once per tensor argument with that argument given as a NumPy array, a Tensor, a nested list
(arrays of rank >= 1) or a Python scalar (0-d arrays) while the others stay traced (where that
leaves no traced argument the call runs at once on the values), then once outside any transform
with every tensor argument concrete (it must return Tensors) and once with every one an
EagerTensor (it must return EagerTensors). The concrete
entry points (the transforms, Tensor, asarray, ...) take only concrete values: every tensor
argument is varied over the concrete kinds, and a traced value there must raise a TypeError.
test_every_public_function_has_a_case fails when a public name has no case, so a new function
cannot be added untested."""
import math
import operator
import statistics
import types

import numpy as np
import pytest

import tenferro as tf

RNG = np.random.default_rng(33)


class T:
    """A tensor argument of a case, as a NumPy array."""

    def __init__(self, value):
        self.value = np.asarray(value)


class Case:
    """fn(*args, **kwargs) against expected(*args, **kwargs), the T arguments replaced by their
    arrays. post(result, *args), if given, maps tenferro's result (NumPy arrays) to a form that
    does not depend on a convention (the sign of a singular vector, ...) before the comparison.
    expected None: check(result, *args) asserts properties and every variant must agree with the
    all-traced run exactly (random numbers: the same key gives the same draw). kinds: the concrete
    kinds tried for the tensor arguments (in mode "concrete" the others must raise TypeError); mode "traced" (the function records operations on traced
    values) or "concrete" (it takes concrete values: a transform, a conversion; traced_ok: traced
    values too). traced_only: the positions that are always traced (self of a Traced method).
    trees: the function takes trees (grad, value_and_grad, vmap), so a list argument is a tree of its
    items, not one tensor: refused with a TypeError or, where its scalar leaves have no batch axis,
    a ValueError (as JAX)."""

    def __init__(self, fn, args, expected=None, kwargs=None, post=None, check=None, rtol=1e-12, atol=1e-13,
                 kinds=("numpy", "tensor", "list", "scalar"), mode="traced", traced_only=(), traced_ok=False,
                 trees=False):
        self.fn, self.args, self.expected, self.kwargs = fn, list(args), expected, kwargs or {}
        self.post, self.check, self.rtol, self.atol, self.kinds, self.mode = post, check, rtol, atol, kinds, mode
        self.traced_only, self.traced_ok, self.trees = traced_only, traced_ok, trees


def leaves(args):
    """The T arguments, depth first (inside lists and tuples too)."""
    out = []
    for a in args:
        if isinstance(a, T):
            out.append(a)
        elif isinstance(a, (list, tuple)):
            out.extend(leaves(a))
    return out


def substitute(args, values):
    """args with each T replaced by the next of `values` (an iterator)."""
    out = []
    for a in args:
        if isinstance(a, T):
            out.append(next(values))
        elif isinstance(a, (list, tuple)):
            out.append(type(a)(substitute(a, values)))
        else:
            out.append(a)
    return out


def concrete(leaf, kind):
    a = leaf.value
    return {"numpy": lambda: a.copy(), "tensor": lambda: tf.Tensor(a), "list": lambda: a.tolist(),
            "scalar": lambda: a.item(), "eager": lambda: tf.EagerTensor(a)}[kind]()


def applicable(leaf, kind):
    return (kind != "list" or leaf.value.ndim >= 1) and (kind != "scalar" or leaf.value.ndim == 0)


def to_numpy(r):
    if isinstance(r, (tuple, list)):
        return tuple(to_numpy(x) for x in r)
    return np.asarray(r)


def flat_objects(r):
    if isinstance(r, (tuple, list)):
        return [y for x in r for y in flat_objects(x)]
    return [r]


def flat(r):
    if isinstance(r, (tuple, list)):
        return [y for x in r for y in flat(x)]
    return [np.asarray(r)]


def arrays_of(case):
    return substitute(case.args, iter([leaf.value for leaf in leaves(case.args)]))


# ---- NumPy references for what NumPy lacks (from the standard library's math) ----

def vectorize(f):
    return lambda x: np.vectorize(f, otypes=[float])(x)


def _digamma(x):
    r = 0.0
    while x < 10.0:               # recurrence up to where the asymptotic series is accurate to 1e-15
        r -= 1.0 / x
        x += 1.0
    f = 1.0 / (x * x)
    return r + math.log(x) - 0.5 / x - f * (1 / 12 - f * (1 / 120 - f * (1 / 252 - f * (1 / 240 - f / 132))))


def _erfinv(y):
    x = 0.0
    for _ in range(100):          # Newton on erf; |y| < 0.95 converges from 0
        x -= (math.erf(x) - y) / (2.0 / math.sqrt(math.pi) * math.exp(-x * x))
    return x


def _hurwitz_zeta(s, x):
    """zeta(s, x) = sum_k (x + k)^-s for s > 1, by Euler-Maclaurin after 20 direct terms."""
    n = 20
    total = sum((x + k) ** -s for k in range(n))
    y = x + n
    total += y ** (1 - s) / (s - 1) + 0.5 * y ** -s
    rising, power = s, y ** (-s - 1)
    for j, b in enumerate((1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730), start=1):
        total += b / math.factorial(2 * j) * rising * power
        rising *= (s + 2 * j - 1) * (s + 2 * j)
        power /= y * y
    return total


def _polygamma(n, x):
    """psi^(n)(x) = (-1)^(n+1) n! zeta(n + 1, x) for n >= 1; digamma for n = 0."""
    if n == 0:
        return _digamma(x)
    return (-1) ** (n + 1) * math.factorial(n) * _hurwitz_zeta(n + 1, x)


def _bessel_i(nu, x):
    """I_nu(x) = sum_k (x/2)^(2k+nu) / (k! (k+nu)!), summed until the terms stop mattering."""
    total, k = 0.0, 0
    while True:
        term = (x / 2) ** (2 * k + nu) / (math.factorial(k) * math.factorial(k + nu))
        total += term
        if k > 5 and abs(term) <= 1e-18 * abs(total):
            return total
        k += 1


def _erfcx(x):
    """exp(x^2) erfc(x); for large x (where erfc underflows) the asymptotic series
    1/(x sqrt(pi)) sum_k (-1)^k (2k-1)!! / (2x^2)^k."""
    if x < 10:
        return math.exp(x * x) * math.erfc(x)
    total, term = 0.0, 1.0
    for k in range(12):
        total += term
        term *= -(2 * k + 1) / (2 * x * x)
    return total / (x * math.sqrt(math.pi))


def _ndtr(x):
    return 0.5 * math.erfc(-x / math.sqrt(2))


def _log_ndtr(x):
    """log Phi(x): the lower tail directly, the upper one as log1p(-Phi(-x))."""
    return math.log(_ndtr(x)) if x < 0 else math.log1p(-_ndtr(-x))


def _ndtri(p):
    return statistics.NormalDist().inv_cdf(p)


def _erfcinv(q):
    """erfc(x) = q  <=>  Phi(-x sqrt 2) = q / 2."""
    return -_ndtri(q / 2) / math.sqrt(2)


def _mvlgamma(x, p):
    return p * (p - 1) / 4 * math.log(math.pi) + sum(math.lgamma(x - j / 2) for j in range(p))


def log_softmax_ref(a, axis=-1):
    shifted = a - a.max(axis, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis, keepdims=True))


def semiring_ref(a, b, semiring):
    """The (i, k) entry over j of a[i, j] (product) b[j, k], reduced by the semiring's sum; with
    the first j attaining it."""
    pair = a[:, :, None] * b[None, :, :] if semiring == "max_times" else a[:, :, None] + b[None, :, :]
    pick = np.argmin if semiring == "min_plus" else np.argmax
    idx = pick(pair, axis=1)
    return np.take_along_axis(pair, idx[:, None, :], 1)[:, 0, :], idx


def conv_ref(x, w):
    """torch's conv1d (cross-correlation), stride 1, no padding: y[n,o,i] = sum_c,k x[n,c,i+k] w[o,c,k]."""
    windows = np.lib.stride_tricks.sliding_window_view(x, w.shape[-1], axis=2)  # n, c, i, k
    return np.einsum("ncik,ock->noi", windows, w)


def pool_ref(x, window, reduce):
    n = x.shape[-1] // window
    return reduce(x[..., :n * window].reshape(x.shape[:-1] + (n, window)), axis=-1)


def scan_ref(init, xs):
    c, ys = init.copy(), []
    for x in xs:
        c, y = c + x, c * x
        ys.append(y)
    return c, np.stack(ys)


def index_add_ref(base, idx, updates, axis):
    out = base.copy()
    np.add.at(out, idx, updates)
    return out


def update_slice_ref(x, u, starts):
    out = x.copy()
    out[starts[0]:starts[0] + u.shape[0], starts[1]:starts[1] + u.shape[1]] = u
    return out


def lu_factor_ref(a):
    """LAPACK's getrf in NumPy (real input): partial pivoting on the first largest |entry| of each
    column, L's strict lower part and U packed in one matrix, 1-based pivots."""
    lu = np.array(a, dtype=float)
    m, n = lu.shape
    piv = np.zeros(min(m, n), np.int64)
    for j in range(min(m, n)):
        p = j + int(np.argmax(np.abs(lu[j:, j])))
        piv[j] = p + 1
        lu[[j, p]] = lu[[p, j]]
        lu[j + 1:, j] /= lu[j, j]
        lu[j + 1:, j + 1:] -= np.outer(lu[j + 1:, j], lu[j, j + 1:])
    return lu, piv


def from_lu_factor(lu, piv):
    """A from a packed LU and 1-based pivots: L U with the row interchanges undone (last first)."""
    m, n = lu.shape
    k = min(m, n)
    a = (np.tril(lu, -1)[:, :k] + np.eye(m, k)) @ np.triu(lu)[:k]
    for i in reversed(range(k)):
        p = piv[i] - 1
        a[[i, p]] = a[[p, i]]
    return a


def householder_ref(a, tau):
    """The first n columns of H_1 ... H_k, H_i = I - tau_i v_i v_i^H, v_i = (0, .., 0, 1, a[i+1:, i])."""
    m, n = a.shape
    q = np.eye(m, dtype=np.result_type(a, tau))
    for i in range(len(tau)):
        v = np.zeros(m, q.dtype)
        v[i] = 1.0
        v[i + 1:] = a[i + 1:, i]
        q = q @ (np.eye(m) - tau[i] * np.outer(v, v.conj()))
    return q[:, :n]


def norm_ref(x, ord=None, axis=None):
    """numpy.linalg.norm of vectors; p < 0 over a zero divides by zero on the way to the norm 0."""
    with np.errstate(divide="ignore"):
        return np.linalg.norm(x if axis is not None or x.ndim <= 1 else x.ravel(), ord, axis)


def lu_structure(r, a):
    """P L U, and whether P is a permutation, L unit lower and U upper trapezoidal, of lu's result."""
    p, l, u = r
    return (p @ l @ u, np.array_equal(p.T @ p, np.eye(len(p))) and np.array_equal(np.abs(p), p),
            np.array_equal(np.tril(l), l) and np.array_equal(np.diag(l), np.ones(min(a.shape))),
            np.array_equal(np.triu(u), u))


def lu_factor_structure(r, a):
    """lu_factor's result as A rebuilt, the packed LU and the pivots, and whether the pivots are
    LAPACK's (i64, 1-based, row i swapped with a row at or below it)."""
    lu, piv = r
    k = min(a.shape)
    lapack_pivots = piv.dtype == np.int64 and bool(np.all((piv >= np.arange(1, k + 1)) & (piv <= a.shape[0])))
    return from_lu_factor(lu, piv), lu, piv, lapack_pivots


def sym(a):
    return a + a.T


def polar_ref(a):
    """(U, P) with a = U P from NumPy's SVD a = W diag(s) Vh: U = W Vh, P = Vh^H diag(s) Vh
    (SciPy's polar, side="right")."""
    w, s, vh = np.linalg.svd(a, full_matrices=False)
    return w @ vh, vh.conj().T @ np.diag(s) @ vh


def spd(a):
    return a @ a.T + 3.0 * np.eye(len(a))


# ---- the arrays the cases use ----
V = RNG.standard_normal(3)
W = RNG.standard_normal(3)
W_EQ = np.where([True, False, True], V, W)          # equal to V at 0 and 2 (for == and !=)
A = RNG.standard_normal((3, 3))
B = RNG.standard_normal((3, 3))
M43 = RNG.standard_normal((4, 3))
S0 = np.array(0.75)                                  # a 0-d operand: a Python float in the scalar variant
POS = RNG.uniform(0.5, 2.0, 3)
UNIT = RNG.uniform(-0.9, 0.9, 3)
CPLX = V + 1j * W
PRED = np.array([True, False, True])
IDX = np.array([2, 0, 2], dtype=np.int64)
KEY = np.asarray(tf.random.key(5))
C33 = RNG.standard_normal((3, 3)) + 1j * RNG.standard_normal((3, 3))
C43 = RNG.standard_normal((4, 3)) + 1j * RNG.standard_normal((4, 3))
LU_A, PIV_A = lu_factor_ref(A)                      # A's packed LU and pivots, made by NumPy
H_RAW, TAU_RAW = np.linalg.qr(M43, mode="raw")        # LAPACK's geqrf reflectors (H_RAW is transposed)
# A real matrix with a complex conjugate pair and two real eigenvalues (1.5 +- 2i, -0.7, 2.2), in
# a random basis: LAPACK's real geev returns them in an order of its own, which NumPy keeps.
_Q4 = RNG.standard_normal((4, 4))
EIG4 = _Q4 @ np.array([[1.5, 2.0, 0, 0], [-2.0, 1.5, 0, 0], [0, 0, -0.7, 0], [0, 0, 0, 2.2]]) @ np.linalg.inv(_Q4)

UNARY = {
    "exp": (V, np.exp), "log": (POS, np.log), "sin": (V, np.sin), "cos": (V, np.cos), "tan": (V, np.tan),
    "tanh": (V, np.tanh), "sinh": (V, np.sinh), "cosh": (V, np.cosh), "asin": (UNIT, np.arcsin),
    "acos": (UNIT, np.arccos), "atan": (V, np.arctan), "asinh": (V, np.arcsinh), "acosh": (1.0 + POS, np.arccosh),
    "atanh": (UNIT, np.arctanh), "sqrt": (POS, np.sqrt), "rsqrt": (POS, lambda x: 1.0 / np.sqrt(x)),
    "expm1": (V, np.expm1), "log1p": (POS, np.log1p), "log2": (POS, np.log2), "log10": (POS, np.log10),
    "abs": (V, np.abs), "sign": (V, np.sign), "conj": (CPLX, np.conj), "real": (CPLX, np.real),
    "imag": (CPLX, np.imag), "erf": (V, vectorize(math.erf)), "erfc": (V, vectorize(math.erfc)),
    "erfinv": (UNIT, vectorize(_erfinv)), "lgamma": (POS, vectorize(math.lgamma)),
    "digamma": (POS, vectorize(_digamma)), "sigmoid": (V, lambda x: 1.0 / (1.0 + np.exp(-x))),
    "relu": (V, lambda x: np.maximum(x, 0.0)), "softplus": (V, lambda x: np.logaddexp(0.0, x)),
    "floor": (3 * V, np.floor), "ceil": (3 * V, np.ceil), "stop_gradient": (V, lambda x: x),
    "frac": (3 * V, lambda x: x - np.trunc(x)),
}
BINARY = {
    "maximum": (V, W, np.maximum), "minimum": (V, W, np.minimum), "atan2": (V, W, np.arctan2),
    "hypot": (V, W, np.hypot), "logaddexp": (V, W, np.logaddexp),
    "xlogy": (np.array([0.0, 1.5, -2.0]), POS, lambda x, y: np.where(x == 0, 0.0, x * np.log(y))),
}
OPERATORS = {  # Traced's binary operators; the reflected ones run when the left operand is concrete
    "add": (V, W, operator.add, np.add), "sub": (V, W, operator.sub, np.subtract),
    "mul": (V, W, operator.mul, np.multiply), "truediv": (V, POS, operator.truediv, np.divide),
    "pow": (POS, W, operator.pow, np.power), "lt": (V, W_EQ, operator.lt, np.less),
    "le": (V, W_EQ, operator.le, np.less_equal), "gt": (V, W_EQ, operator.gt, np.greater),
    "ge": (V, W_EQ, operator.ge, np.greater_equal), "eq": (V, W_EQ, operator.eq, np.equal),
    "ne": (V, W_EQ, operator.ne, np.not_equal),
}


def elementwise_cases(fn, x, y, ref):
    """Both operands vectors, and each of them 0-d (a Python scalar in the scalar variant)."""
    return [Case(fn, [T(x), T(y)], ref), Case(fn, [T(x), T(y[1])], ref), Case(fn, [T(x[1]), T(y)], ref)]


GATHER = dict(offset_dims=[1], collapsed_slice_dims=[0], start_index_map=[0], index_vector_dim=1, slice_sizes=[1, 3])
SCATTER = dict(update_window_dims=[1], inserted_window_dims=[0], scatter_dims_to_operand_dims=[0], index_vector_dim=1)
ROWS = np.array([[3], [0], [2]], dtype=np.int64)


def scatter_ref(x, rows, u, add):
    out = x.copy()
    if add:
        np.add.at(out, rows[:, 0], u)
    else:
        out[rows[:, 0]] = u
    return out


def fixed_point_ref(x0, a):
    x = float(x0)
    for _ in range(500):
        x = a * math.cos(x)
    return np.array(x)


def root_ref(x0, a):
    x = float(x0)
    for _ in range(100):
        x -= (x ** 3 + x - a) / (3 * x * x + 1)
    return np.array(x)


def while_ref(x):
    while np.sum(x) < 10.0:
        x = x * 2.0
    return x


NO_LIST = ("numpy", "tensor", "scalar")
CASES = {}
for _name, (_x, _ref) in UNARY.items():
    CASES[_name] = [Case(getattr(tf, _name), [T(_x)], _ref, rtol=1e-11 if _name in ("digamma", "erfinv") else 1e-12)]
for _name, (_x, _y, _ref) in BINARY.items():
    CASES[_name] = elementwise_cases(getattr(tf, _name), _x, _y, _ref)
for _name, (_x, _y, _op, _ref) in OPERATORS.items():
    CASES[f"Traced.__{_name}__"] = CASES[f"Traced.__r{_name}__"] = elementwise_cases(_op, _x, _y, _ref)
CASES["Traced.__matmul__"] = CASES["Traced.__rmatmul__"] = [
    Case(operator.matmul, [T(A), T(B)], np.matmul), Case(operator.matmul, [T(A), T(V)], np.matmul),
    Case(operator.matmul, [T(V), T(B)], np.matmul)]
# Methods: self is always traced (a NumPy array has methods of its own).
CASES["Traced.__neg__"] = [Case(operator.neg, [T(V)], np.negative, traced_only=(0,))]
CASES["Traced.__abs__"] = [Case(abs, [T(V)], np.abs, traced_only=(0,))]
CASES["Traced.__getitem__"] = [
    Case(lambda x, i: x[i], [T(A), T(IDX)], lambda a, i: a[i], traced_only=(0,)),
    Case(lambda x, i: x[i], [T(A), T(np.array(1))], lambda a, i: a[i], traced_only=(0,)),
    Case(lambda x: x[1:, ::-1], [T(A)], lambda a: a[1:, ::-1], traced_only=(0,))]
CASES["Traced.T"] = [Case(lambda x: x.T, [T(M43)], np.transpose, traced_only=(0,))]
CASES["Traced.reshape"] = [Case(lambda x: x.reshape([3, 4]), [T(M43)], lambda a: a.reshape(3, 4), traced_only=(0,))]
CASES["Traced.sum"] = [Case(lambda x: x.sum(1), [T(M43)], lambda a: a.sum(1), traced_only=(0,))]
CASES["Traced.mean"] = [Case(lambda x: x.mean(), [T(M43)], np.mean, traced_only=(0,))]
CASES["Traced.astype"] = [Case(lambda x: x.astype("f32"), [T(M43)], lambda a: a.astype(np.float32), traced_only=(0,),
                               rtol=1e-7)]
CASES.update({
    "matmul": [Case(tf.matmul, [T(A), T(B)], np.matmul), Case(tf.matmul, [T(A), T(V)], np.matmul),
               Case(tf.matmul, [T(V), T(A)], np.matmul)],
    "where": [Case(tf.where, [T(PRED), T(V), T(W)], np.where), Case(tf.where, [T(PRED), T(V), T(S0)], np.where),
              Case(tf.where, [T(PRED), T(S0), T(W)], np.where), Case(tf.where, [T(np.array(False)), T(V), T(W)], np.where)],
    "sum": [Case(tf.sum, [T(M43), 1], np.sum), Case(tf.sum, [T(M43)], np.sum)],
    "mean": [Case(tf.mean, [T(M43), 0], np.mean)],
    "max": [Case(tf.max, [T(M43), 1], np.max)],
    "min": [Case(tf.min, [T(M43), 0], np.min)],
    "argmax": [Case(tf.argmax, [T(M43), 1], np.argmax),
               Case(tf.argmax, [T(np.array([1.0, 3.0, -2.0, 3.0])), 0], np.argmax)],   # the first of a tie
    "argmin": [Case(tf.argmin, [T(M43), 0], np.argmin),
               Case(tf.argmin, [T(np.array([1.0, -2.0, -2.0])), 0], np.argmin)],
    "logsumexp": [Case(tf.logsumexp, [T(M43), 1], lambda a, ax: np.log(np.sum(np.exp(a), ax)))],
    "softmax": [Case(tf.softmax, [T(M43)], lambda a: np.exp(a) / np.sum(np.exp(a), -1, keepdims=True))],
    "log_softmax": [Case(tf.log_softmax, [T(M43), 0], lambda a, ax: a - np.log(np.sum(np.exp(a), ax, keepdims=True)))],
    "transpose": [Case(tf.transpose, [T(M43), [1, 0]], np.transpose), Case(tf.transpose, [T(M43)], np.transpose)],
    "reshape": [Case(tf.reshape, [T(M43), [2, 6]], np.reshape)],
    "broadcast_to": [Case(tf.broadcast_to, [T(V), [2, 3]], np.broadcast_to)],
    "einsum": [Case(lambda a, b, v: tf.einsum("ij,jk,k->i", a, b, v), [T(A), T(B), T(V)],
                    lambda a, b, v: np.einsum("ij,jk,k->i", a, b, v)),
               Case(lambda a, s: tf.einsum("ij,->ji", a, s), [T(A), T(S0)], lambda a, s: np.einsum("ij,->ji", a, s))],
    "slice": [Case(tf.slice, [T(M43), [1, 0], [4, 3], [2, 2]], lambda a, s, l, st: a[1:4:2, 0:3:2])],
    "pad": [Case(tf.pad, [T(M43), 0.5, [1, 0], [0, 2]],
                 lambda a, v, lo, hi: np.pad(a, list(zip(lo, hi)), constant_values=v))],
    "concatenate": [Case(tf.concatenate, [[T(A), T(M43)], 0], lambda parts, ax: np.concatenate(parts, ax))],
    "stack": [Case(tf.stack, [[T(V), T(W), T(POS)], 1], lambda parts, ax: np.stack(parts, ax))],
    "take": [Case(tf.take, [T(M43), T(IDX), 0], np.take), Case(tf.take, [T(M43), [3, 1], 1 - 1], np.take)],
    "index_add": [Case(tf.index_add, [T(M43), T(IDX), T(RNG.standard_normal((3, 3))), 0], index_add_ref)],
    "dynamic_slice": [Case(tf.dynamic_slice, [T(M43), T(np.array([1, 1])), [2, 2]],
                           lambda a, s, z: a[s[0]:s[0] + z[0], s[1]:s[1] + z[1]])],
    "dynamic_update_slice": [Case(tf.dynamic_update_slice, [T(M43), T(np.ones((2, 2))), T(np.array([2, 1]))],
                                  update_slice_ref)],
    "gather": [Case(tf.gather, [T(M43), T(ROWS)], lambda x, r, **k: x[r[:, 0]], kwargs=GATHER)],
    "scatter_add": [Case(tf.scatter_add, [T(M43), T(ROWS), T(A)], lambda x, r, u, **k: scatter_ref(x, r, u, True),
                         kwargs=SCATTER)],
    "scatter": [Case(tf.scatter, [T(M43), T(ROWS), T(A)], lambda x, r, u, **k: scatter_ref(x, r, u, False),
                     kwargs=SCATTER)],
    "cumsum": [Case(tf.cumsum, [T(M43), 1], np.cumsum)],
    "flip": [Case(tf.flip, [T(M43), [0]], lambda a, ax: np.flip(a, ax))],
    "tril": [Case(tf.tril, [T(A), -1], np.tril)],
    "triu": [Case(tf.triu, [T(A), 1], np.triu)],
    "diagonal": [Case(tf.diagonal, [T(A), 1], lambda a, k: np.diagonal(a, k))],
    "diag": [Case(tf.diag, [T(V), 1], np.diag)],
    "split": [Case(tf.split, [T(M43), [1, 3], 0], lambda a, lengths, ax: np.split(a, [1], ax))],
    "one_hot": [Case(tf.one_hot, [T(IDX), 4], lambda i, n: np.eye(n)[i])],
    "sort": [Case(tf.sort, [T(M43), 0], lambda a, ax: np.sort(a, ax))],
    "sort_with_indices": [Case(tf.sort_with_indices, [T(M43), 1],
                               lambda a, ax: (np.sort(a, ax), np.argsort(a, ax, kind="stable")))],
    "argsort": [Case(tf.argsort, [T(M43), 0], lambda a, ax: np.argsort(a, ax, kind="stable"))],
    "top_k": [Case(tf.top_k, [T(M43), 2], lambda a, k: (-np.sort(-a, -1)[:, :k], np.argsort(-a, -1, kind="stable")[:, :k]))],
    "take_along_axis": [Case(tf.take_along_axis, [T(M43), T(np.argsort(M43, 1)), 1], np.take_along_axis)],
    "cumprod": [Case(tf.cumprod, [T(M43), 0], np.cumprod)],
    "cummax": [Case(tf.cummax, [T(M43), 0], lambda a, ax: np.maximum.accumulate(a, ax))],
    "cummin": [Case(tf.cummin, [T(M43), 1], lambda a, ax: np.minimum.accumulate(a, ax))],
    "logcumsumexp": [Case(tf.logcumsumexp, [T(M43), 1], lambda a, ax: np.logaddexp.accumulate(a, ax))],
    "conv": [Case(tf.conv, [T(RNG.standard_normal((2, 3, 6))), T(RNG.standard_normal((4, 3, 2)))], conv_ref)],
    "avg_pool": [Case(tf.avg_pool, [T(RNG.standard_normal((2, 3, 7))), 2], lambda x, w: pool_ref(x, w, np.mean))],
    "max_pool": [Case(tf.max_pool, [T(RNG.standard_normal((2, 3, 7))), 3], lambda x, w: pool_ref(x, w, np.max))],
    "dropout": [Case(tf.dropout, [T(KEY), T(POS), 0.5], None,
                     check=lambda out, key, x, p: np.all((out == 0) | np.isclose(out, x / (1 - p), rtol=1e-15)))],
    # Control flow: the tensor arguments are the initial values, operands and predicates. A list
    # there is a structure of values (a tuple of carries), never one tensor: no "list" kind.
    "scan": [Case(lambda init, xs: tf.scan(lambda c, x: (c + x, c * x), init, xs), [T(V), T(M43)], scan_ref,
                  kinds=NO_LIST)],
    "fori_loop": [Case(lambda x: tf.fori_loop(0, 3, lambda i, c: c * 2.0 + 1.0, x), [T(V)],
                       lambda x: ((x * 2 + 1) * 2 + 1) * 2 + 1, kinds=NO_LIST)],
    "cond": [Case(lambda p, a, b: tf.cond(p, lambda u, v: u * v, lambda u, v: u - v, a, b), [T(np.array(p)), T(V), T(W)],
                  lambda p, a, b: a * b if p else a - b, kinds=NO_LIST) for p in (True, False)],
    # map: each row of each operand through a body that also reads a closed-over array (passed whole).
    "map": [Case(lambda xs, ys: tf.map(lambda r, s: (tf.tanh(r * np.array([0.5, -1.0, 2.0])) * s, tf.sum(r * r)), xs, ys),
                 [T(M43), T(np.array([0.3, -1.2, 0.8, 2.0]))],
                 lambda xs, ys: (np.stack([np.tanh(r * np.array([0.5, -1.0, 2.0])) * s for r, s in zip(xs, ys)]),
                                 np.array([r @ r for r in xs])), kinds=NO_LIST)],
    "switch": [Case(lambda i, a: tf.switch(i, [lambda u: u + 1.0, lambda u: u * 3.0], a), [T(np.array(1)), T(V)],
                    lambda i, a: a * 3.0, kinds=NO_LIST)],
    "rematerialize": [Case(lambda a, b: tf.rematerialize(lambda u, v: tf.tanh(u * v) + u, 1 << 30)(a, b), [T(V), T(W)],
                           lambda a, b: np.tanh(a * b) + a, kinds=NO_LIST)],
    "checkpoint": [Case(lambda a, b: tf.checkpoint(lambda u, v: tf.tanh(u * v) + u)(a, b), [T(V), T(W)],
                        lambda a, b: np.tanh(a * b) + a, kinds=NO_LIST)],
    "checkpoint_name": [Case(lambda a: tf.checkpoint_name(a, "a"), [T(V)], lambda a: a, kinds=NO_LIST)],
    "while_loop": [Case(lambda x: tf.while_loop(lambda c: tf.sum(c) < 10.0, lambda c: c * 2.0, x, max_trips=20),
                        [T(POS)], while_ref, kinds=NO_LIST)],
    "fixed_point": [Case(lambda x0, a: tf.fixed_point(lambda x, p: p * tf.cos(x), x0, a, tol=0.0, max_iter=500),
                         [T(np.array(0.5)), T(np.array(0.8))], fixed_point_ref, kinds=NO_LIST)],
    "root": [Case(lambda x0, a: tf.root(lambda x, p: x * x * x + x - p, x0, a), [T(np.array(1.0)), T(np.array(3.0))],
                  root_ref, kinds=NO_LIST)],
    # tenferro.linalg: decompositions compared through convention-free forms.
    "linalg.svd": [Case(tf.linalg.svd, [T(M43)], lambda a: (a, np.linalg.svd(a, compute_uv=False)),
                        post=lambda r, a: (r[0] @ np.diag(r[1]) @ r[2], r[1]))],
    "linalg.svdvals": [Case(tf.linalg.svdvals, [T(M43)], lambda a: np.linalg.svd(a, compute_uv=False))],
    "linalg.qr": [Case(tf.linalg.qr, [T(M43)], lambda a: (a, np.eye(3), np.zeros((3, 3))),
                       post=lambda r, a: (r[0] @ r[1], r[0].T @ r[0], np.tril(r[1], -1)))],
    "linalg.polar": [Case(tf.linalg.polar, [T(M43)], lambda a: polar_ref(a)),
                     Case(tf.linalg.polar, [T(A + 1j * A.T)], lambda a: polar_ref(a))],
    "linalg.eigh": [Case(tf.linalg.eigh, [T(sym(A))], lambda a: (a, np.linalg.eigvalsh(a)),
                         post=lambda r, a: (r[1] @ np.diag(r[0]) @ r[1].T, r[0]))],
    "linalg.eigvalsh": [Case(tf.linalg.eigvalsh, [T(sym(A))], np.linalg.eigvalsh)],
    "linalg.eig": [Case(tf.linalg.eig, [T(A)], lambda a: (np.zeros((3, 3), complex), np.sort_complex(np.linalg.eigvals(a))),
                        post=lambda r, a: (a @ r[1] - r[1] * r[0], np.sort_complex(r[0])), atol=1e-11),
                    # real input: the eigenvalues in LAPACK's real-routine order, as numpy.linalg.eig (not sorted)
                    Case(tf.linalg.eig, [T(EIG4)], lambda a: (np.zeros((4, 4), complex), np.linalg.eig(a)[0]),
                         post=lambda r, a: (a @ r[1] - r[1] * r[0], r[0]), atol=1e-11)],
    "linalg.eigvals": [Case(tf.linalg.eigvals, [T(A)], lambda a: np.sort_complex(np.linalg.eigvals(a)),
                            post=lambda r, a: np.sort_complex(r), atol=1e-11),
                       Case(tf.linalg.eigvals, [T(EIG4)], np.linalg.eigvals, atol=1e-11)],   # in NumPy's order
    "linalg.cholesky": [Case(tf.linalg.cholesky, [T(spd(A))], np.linalg.cholesky)],
    "linalg.triangular_solve": [Case(tf.linalg.triangular_solve, [T(spd(A)), T(M43.T)],
                                     lambda a, b: np.linalg.solve(np.tril(a), b))],
    "linalg.solve": [Case(tf.linalg.solve, [T(spd(A)), T(B)], np.linalg.solve),
                     Case(tf.linalg.solve, [T(spd(A)), T(V)], np.linalg.solve)],
    "linalg.inv": [Case(tf.linalg.inv, [T(spd(A))], np.linalg.inv)],
    "linalg.lu": [Case(tf.linalg.lu, [T(a)], lambda a: (a, True, True, True), post=lu_structure) for a in (A, M43, M43.T)],
    "linalg.lu_factor": [Case(tf.linalg.lu_factor, [T(a)], lambda a: (a, *lu_factor_ref(a), True), post=lu_factor_structure)
                         for a in (A, M43, M43.T)],
    "linalg.lu_solve": [Case(tf.linalg.lu_solve, [T(LU_A), T(PIV_A), T(B)], lambda lu, p, b: np.linalg.solve(from_lu_factor(lu, p), b),
                             rtol=1e-10),
                        Case(tf.linalg.lu_solve, [T(LU_A), T(PIV_A), T(V)], lambda lu, p, b: np.linalg.solve(from_lu_factor(lu, p), b),
                             rtol=1e-10),
                        # lu_factor's own result (a concrete A would make lu_factor refuse, not lu_solve)
                        Case(lambda a, b: tf.linalg.lu_solve(*tf.linalg.lu_factor(a), b), [T(A), T(B)], np.linalg.solve,
                             rtol=1e-10, traced_only=(0,))],
    "linalg.det": [Case(tf.linalg.det, [T(A)], np.linalg.det)],
    "linalg.slogdet": [Case(tf.linalg.slogdet, [T(A)], lambda a: tuple(np.linalg.slogdet(a)))],
    "linalg.pinv": [Case(tf.linalg.pinv, [T(M43)], np.linalg.pinv, rtol=1e-10)],
    "linalg.lstsq": [Case(tf.linalg.lstsq, [T(a), T(b)], lambda a, b: np.linalg.lstsq(a, b, rcond=None)[0], rtol=1e-10)
                     for a, b in ((M43, np.arange(4.0)), (M43.T, V), (M43.T, B))],   # wide: the minimum-norm solution
    "linalg.cond": [Case(tf.linalg.cond, [T(A), p], np.linalg.cond, rtol=1e-10)
                    for p in (None, 2, -2, 1, -1, np.inf, -np.inf, "fro", "nuc")]
                   + [Case(tf.linalg.cond, [T(M43), p], np.linalg.cond, rtol=1e-10) for p in (None, -2)]
                   # NumPy types cond of a complex matrix complex (imaginary part 0) for p other than +-2
                   + [Case(tf.linalg.cond, [T(C33), p], lambda a, p: np.real(np.linalg.cond(a, p)), rtol=1e-10)
                      for p in (2, "fro", -np.inf)],
    "linalg.householder_product": [
        Case(tf.linalg.householder_product, [T(M43), T(UNIT)], householder_ref),
        Case(tf.linalg.householder_product, [T(M43), T(UNIT[:2])], householder_ref),
        Case(tf.linalg.householder_product, [T(C43), T(UNIT * np.exp(1j * V))], householder_ref),
        Case(tf.linalg.householder_product, [T(H_RAW.T), T(TAU_RAW)], lambda h, tau: np.linalg.qr(M43)[0])],  # geqrf's Q
    "linalg.tensorinv": [Case(tf.linalg.tensorinv, [T(RNG.standard_normal((2, 3, 6))), 2], np.linalg.tensorinv, rtol=1e-10),
                         Case(tf.linalg.tensorinv, [T(RNG.standard_normal((6, 2, 3))), 1], np.linalg.tensorinv, rtol=1e-10)],
    "linalg.tensorsolve": [Case(tf.linalg.tensorsolve, [T(RNG.standard_normal((2, 3, 6))), T(M43[:2])], np.linalg.tensorsolve,
                                rtol=1e-10),
                           Case(tf.linalg.tensorsolve, [T(RNG.standard_normal((2, 3, 2, 3))), T(M43[:2])], np.linalg.tensorsolve,
                                rtol=1e-10),
                           Case(tf.linalg.tensorsolve, [T(RNG.standard_normal((6, 2, 3))), T(M43[:2]), [0]],
                                np.linalg.tensorsolve, rtol=1e-10)],
    "linalg.vector_norm": [Case(tf.linalg.vector_norm, [T(M43)], norm_ref),
                           Case(tf.linalg.vector_norm, [T(np.array(-0.75))], np.abs)]
                          + [Case(tf.linalg.vector_norm, [T(M43), p, 0], norm_ref, rtol=1e-11)
                             for p in (1, 3.5, 0.5, -1, -2.5, np.inf, -np.inf)]
                          + [Case(tf.linalg.vector_norm, [T(CPLX), p], norm_ref, rtol=1e-11) for p in (2, -1.5, -np.inf)]
                          + [Case(tf.linalg.vector_norm, [T(np.array([1.0, 0.0, -2.0])), p], norm_ref)   # a zero: 0 for p < 0
                             for p in (-0.5, -3, -np.inf)],
    "linalg.matrix_norm": [Case(tf.linalg.matrix_norm, [T(M43)], np.linalg.norm)],
    "linalg.expm": [Case(tf.linalg.expm, [T(sym(A))],
                         lambda a: (lambda w, v: v @ np.diag(np.exp(w)) @ v.T)(*np.linalg.eigh(a)), rtol=1e-11)],
    "linalg.trace": [Case(tf.linalg.trace, [T(A)], np.trace)],
    "linalg.eye": [Case(tf.linalg.eye, [T(A), 3], lambda a, n: np.eye(n))],
    # tenferro.random: keys are tensors like any other; draws checked by their properties.
    "random.key": [Case(tf.random.key, [5], None, mode="concrete",
                        check=lambda k, seed: k.shape == (2,) and k.dtype == np.int64 and np.array_equal(k, KEY))],
    "random.split": [Case(lambda k: tuple(tf.random.split(k, 3)), [T(KEY)], None,
                          check=lambda ks, k: len(ks) == 3 and len({tuple(x) for x in ks}) == 3)],
    "random.fold_in": [Case(tf.random.fold_in, [T(KEY), 7], None,
                            check=lambda k2, k, d: k2.shape == (2,) and not np.array_equal(k2, k))],
    "random.bits": [Case(tf.random.bits, [T(KEY), [4, 2]], None, check=lambda b, k, s: b.shape == (4, 2))],
    "random.uniform": [Case(tf.random.uniform, [T(KEY), [1000]], None,
                            check=lambda u, k, s: u.shape == (1000,) and np.all((u >= 0) & (u < 1)))],
    "random.normal": [Case(tf.random.normal, [T(KEY), [20000]], None,
                           check=lambda z, k, s: abs(z.mean()) < 0.05 and abs(z.std() - 1) < 0.05)],
    "random.bernoulli": [Case(tf.random.bernoulli, [T(KEY), 0.3, [1000]], None,
                              check=lambda b, k, p, s: b.dtype == np.bool_ and 0.2 < b.mean() < 0.4)],
    "random.categorical": [Case(tf.random.categorical, [T(KEY), T(np.array([[0.0, 0.0, -1e3], [-1e3, -1e3, 0.0]]))], None,
                                check=lambda c, k, lg: c[1] == 2 and c[0] in (0, 1))],
    "random.permutation": [Case(tf.random.permutation, [T(KEY), 6], None,
                                check=lambda p, k, n: np.array_equal(np.sort(p), np.arange(6)))],
    # Concrete entry points: the transforms take concrete arguments (arrays, Tensors, lists, scalars).
    # grad and value_and_grad take trees (a list is a tree of its items, test_trees.py), and traced
    # values too (their gradient program is recorded: vmap(grad(f))).
    "grad": [Case(lambda x, y: tf.grad(lambda x, y: tf.sum(x * y * y))(x, y), [T(V), T(W)], lambda x, y: y * y,
                  mode="concrete", kinds=("numpy", "tensor", "scalar"), traced_ok=True, trees=True),
             Case(lambda x: tf.grad(lambda x: x * x)(x), [T(S0)], lambda x: 2 * x, mode="concrete",
                  kinds=("numpy", "tensor", "scalar"), traced_ok=True, trees=True)],
    "value_and_grad": [Case(lambda x, y: tf.value_and_grad(lambda x, y: tf.sum(x * y), argnums=(0, 1))(x, y),
                            [T(V), T(W)], lambda x, y: (np.sum(x * y), (y, x)), mode="concrete",
                            kinds=("numpy", "tensor", "scalar"), traced_ok=True, trees=True)],
    "vmap": [Case(lambda x: tf.vmap(lambda r: tf.sum(r * r))(x), [T(A)], lambda x: np.sum(x * x, axis=1),
                  mode="concrete", kinds=("numpy", "tensor"), traced_ok=True, trees=True)],
    # On traced values the Jacobians record vmap over coordinate vectors of the jvp/vjp/hvp program.
    "jacfwd": [Case(lambda x, m: tf.jacfwd(lambda x, m: tf.matmul(m, x))(x, m), [T(V), T(A)], lambda x, m: m,
                    mode="concrete", traced_ok=True)],
    "jacrev": [Case(lambda x, m: tf.jacrev(lambda x, m: tf.matmul(m, x))(x, m), [T(V), T(A)], lambda x, m: m,
                    mode="concrete", traced_ok=True)],
    "hessian": [Case(lambda x, a: tf.hessian(lambda x, a: tf.sum(a * x * x * x))(x, a), [T(V), T(W)],
                     lambda x, a: np.diag(6 * a * x), mode="concrete", traced_ok=True)],
    # Sparse derivatives take concrete arguments and return CSR matrices (compared densely here).
    "sparse_jacobian": [Case(lambda x, m: tf.sparse_jacobian(lambda x, m: tf.matmul(m, x))(x, m).to_dense(), [T(V), T(A)],
                             lambda x, m: m, mode="concrete")],
    "sparse_hessian": [Case(lambda x, a: tf.sparse_hessian(lambda x, a: tf.sum(a * x * x * x))(x, a).to_dense(), [T(V), T(W)],
                            lambda x, a: np.diag(6 * a * x), mode="concrete")],
    "jacobian": [Case(lambda x, m: tf.jacobian(lambda x, m: tf.matmul(m, x))(x, m), [T(V), T(A)], lambda x, m: m,
                      mode="concrete")],
    "jacobian_sparsity": [Case(lambda x: tf.jacobian_sparsity(lambda x: x * x, x).indices, [T(V)], lambda x: np.arange(x.size),
                               mode="concrete")],
    "hessian_sparsity": [Case(lambda x: tf.hessian_sparsity(lambda x: tf.sum(x * x * x), x).indptr, [T(V)],
                              lambda x: np.arange(x.size + 1), mode="concrete")],
    "jit": [Case(lambda x, y: tf.jit(lambda x, y: x * y + 1.0)(x, y), [T(V), T(S0)], lambda x, y: x * y + 1.0,
                 mode="concrete", kinds=("numpy", "tensor", "scalar"), trees=True)],
    "jvp": [Case(lambda x, t: tf.jvp(lambda x: x * x, (x,), (t,)), [T(V), T(W)], lambda x, t: (x * x, 2 * x * t),
                 mode="concrete")],
    "vjp": [Case(lambda x, c: tf.vjp(lambda x: x * x, (x,), c), [T(V), T(W)], lambda x, c: (x * x, (2 * x * c,)),
                 mode="concrete")],
    "Tensor": [Case(tf.Tensor, [T(A)], lambda a: a, mode="concrete"), Case(tf.Tensor, [T(S0)], lambda a: a, mode="concrete"),
               Case(tf.Tensor, [T(IDX)], lambda a: a, mode="concrete"), Case(tf.Tensor, [T(PRED)], lambda a: a, mode="concrete")],
    "asarray": [Case(tf.asarray, [T(A)], lambda a: a, mode="concrete")],
    "from_numpy": [Case(tf.from_numpy, [T(A)], lambda a: a, mode="concrete", kinds=("numpy",))],
    "from_dlpack": [Case(tf.from_dlpack, [T(A)], lambda a: a, mode="concrete", kinds=("numpy", "tensor"))],
})
# ---- the rest of the C++ API: elementwise functions, reductions, contractions ----
NEW_UNARY = {   # name: (argument, reference)
    "neg": (V, np.negative), "exp2": (3 * V, np.exp2), "cbrt": (np.array([-8.0, -0.3, 0.0, 2.0, 27.0]), np.cbrt),
    "i0": (3 * V, np.i0), "i0e": (3 * V, lambda x: np.exp(-np.abs(x)) * np.i0(x)),
    "i1": (3 * V, vectorize(lambda x: _bessel_i(1, x))),
    "i1e": (3 * V, vectorize(lambda x: math.exp(-abs(x)) * _bessel_i(1, x))),
    "erfcinv": (np.array([1e-12, 0.01, 0.3, 1.0, 1.7, 1.999]), vectorize(_erfcinv)),
    "erfcx": (np.array([-2.0, -0.5, 0.0, 0.8, 3.0, 30.0]), vectorize(_erfcx)),
    "ndtr": (np.array([-20.0, -3.0, -0.5, 0.0, 0.7, 4.0]), vectorize(_ndtr)),
    "log_ndtr": (np.array([-30.0, -3.0, -0.5, 0.0, 0.7, 8.0]), vectorize(_log_ndtr)),
    "ndtri": (np.array([1e-10, 0.02, 0.3, 0.5, 0.9, 1 - 1e-6]), vectorize(_ndtri)),
    "sinc": (np.array([-2.5, -1.0, -1e-3, 0.0, 0.25, 1.5]), np.sinc),
    "trunc": (3 * V, np.trunc),
    "isnan": (np.array([1.0, np.nan, np.inf, -np.inf, -0.0]), np.isnan),
    "isinf": (np.array([1.0, np.nan, np.inf, -np.inf, -0.0]), np.isinf),
    "isfinite": (np.array([1.0, np.nan, np.inf, -np.inf, -0.0]), np.isfinite),
}
for _name, (_x, _ref) in NEW_UNARY.items():
    CASES[_name] = [Case(getattr(tf, _name), [T(_x)], _ref, rtol=1e-11), Case(getattr(tf, _name), [T(_x[1])], _ref, rtol=1e-11)]
DIVISOR = np.array([1.5, -0.7, 2.25])
NEW_BINARY = {   # name: (a, b, reference); each operand also 0-d (a Python scalar in the scalar variant)
    "add": (V, W, np.add), "sub": (V, W, np.subtract), "mul": (V, W, np.multiply), "div": (V, POS, np.divide),
    "pow": (POS, W, np.power), "power": (POS, W, np.power), "eq": (V, W_EQ, np.equal), "ne": (V, W_EQ, np.not_equal),
    "lt": (V, W_EQ, np.less), "le": (V, W_EQ, np.less_equal), "gt": (V, W_EQ, np.greater),
    "ge": (V, W_EQ, np.greater_equal), "fmod": (4 * V, DIVISOR, np.fmod), "remainder": (4 * V, DIVISOR, np.remainder),
}
for _name, (_x, _y, _ref) in NEW_BINARY.items():
    CASES[_name] = elementwise_cases(getattr(tf, _name), _x, _y, _ref)
CLAMP = [Case(tf.clamp, [T(3 * V), T(np.array(-0.5)), T(np.array(1.0))], np.clip),
         Case(tf.clamp, [T(3 * V), T(-np.abs(W)), T(np.abs(POS))], np.clip)]
LDEXP_E = np.array([3, -2, 0], dtype=np.int64)
DOT_A, DOT_B = RNG.standard_normal((2, 3, 4)), RNG.standard_normal((2, 4, 5))
SEMI_A, SEMI_B = RNG.standard_normal((3, 4)), RNG.standard_normal((4, 2))
LABELS = np.exp(M43) / np.sum(np.exp(M43), -1, keepdims=True)      # probabilities along the last axis
CASES.update({
    "clamp": CLAMP, "clip": CLAMP,
    "astype": [Case(tf.astype, [T(M43), "f32"], lambda a, d: a.astype(np.float32), rtol=1e-7),
               Case(tf.astype, [T(V), "c128"], lambda a, d: a.astype(np.complex128))],
    "round": [Case(tf.round, [T(np.array([0.5, 1.5, 2.5, -0.5, -2.5, 0.49]))], np.round),   # ties to even
              Case(tf.round, [T(3 * V)], np.round),
              Case(tf.round, [T(3 * V), 2], np.round), Case(tf.round, [T(300 * V), -1], np.round)],
    "frexp": [Case(tf.frexp, [T(np.array([0.0, 1.0, -0.3, 1e300, 5e-320, 6.0]))], np.frexp),
              Case(tf.frexp, [T(np.array(-3.0))], np.frexp)],
    "ldexp": [Case(tf.ldexp, [T(V), T(LDEXP_E)], np.ldexp), Case(tf.ldexp, [T(V), T(np.array(4))], np.ldexp),
              Case(tf.ldexp, [T(np.array(0.75)), T(LDEXP_E)], np.ldexp)],
    "polygamma": [Case(tf.polygamma, [n, T(POS)], lambda n, x: np.vectorize(_polygamma, otypes=[float])(n, x), rtol=1e-10) for n in (0, 1, 2, 3)],
    "mvlgamma": [Case(tf.mvlgamma, [T(2.0 + POS), p], lambda x, p: np.vectorize(_mvlgamma, otypes=[float])(x, p))
                 for p in (1, 3)],
    "prod": [Case(tf.prod, [T(M43), 1], np.prod), Case(tf.prod, [T(M43)], np.prod)],
    "var": [Case(tf.var, [T(M43), 0], np.var), Case(tf.var, [T(M43)], np.var),
            Case(tf.var, [T(M43), 1, 1.0], lambda a, ax, c: np.var(a, ax, ddof=1)),
            Case(tf.var, [T(C43), 0], np.var)],                     # real for complex operands
    "stddev": [Case(tf.stddev, [T(M43), 0], np.std), Case(tf.stddev, [T(M43), [0, 1], 1.0], lambda a, ax, c: np.std(a, ddof=1))],
    "max_with_index": [Case(tf.max_with_index, [T(M43), 1], lambda a, ax: (np.max(a, ax), np.argmax(a, ax))),
                       Case(tf.max_with_index, [T(np.array([1.0, 3.0, -2.0, 3.0])), 0],    # the first of a tie
                            lambda a, ax: (np.max(a, ax), np.argmax(a, ax)))],
    "min_with_index": [Case(tf.min_with_index, [T(M43), 0], lambda a, ax: (np.min(a, ax), np.argmin(a, ax))),
                       Case(tf.min_with_index, [T(np.array([1.0, -2.0, -2.0])), -1],
                            lambda a, ax: (np.min(a, ax), np.argmin(a, ax)))],
    "cross_entropy": [Case(tf.cross_entropy, [T(M43), T(LABELS[::-1].copy())],
                           lambda lg, lb: np.mean(-np.sum(lb * log_softmax_ref(lg), -1))),
                      Case(tf.cross_entropy, [T(M43), T(np.eye(3)[[0, 2, 1, 1]])],
                           lambda lg, lb: np.mean(-np.sum(lb * log_softmax_ref(lg), -1)))],
    "dot_general": [Case(tf.dot_general, [T(DOT_A), T(DOT_B)], lambda a, b, **k: np.einsum("bij,bjk->bik", a, b),
                         kwargs=dict(lhs_contract=[2], rhs_contract=[1], lhs_batch=[0], rhs_batch=[0])),
                    Case(tf.dot_general, [T(M43.T), T(A)], lambda a, b, **k: np.einsum("ji,jk->ik", a, b),
                         kwargs=dict(lhs_contract=[0], rhs_contract=[0])),
                    Case(tf.dot_general, [T(V), T(W)], lambda a, b: np.multiply.outer(a, b))],    # no contraction
    "semiring_dot_general": [Case(tf.semiring_dot_general, [T(sa), T(sb), sr], lambda a, b, s, **k: semiring_ref(a, b, s)[0],
                                  kwargs=dict(lhs_contract=[1], rhs_contract=[0]))
                             for sa, sb, sr in ((SEMI_A, SEMI_B, "max_plus"), (SEMI_A, SEMI_B, "min_plus"),
                                                (np.abs(SEMI_A), np.abs(SEMI_B), "max_times"))],
    "semiring_dot_general_index": [Case(tf.semiring_dot_general_index, [T(sa), T(sb), sr],
                                        lambda a, b, s, **k: semiring_ref(a, b, s), kwargs=dict(lhs_contract=[1], rhs_contract=[0]))
                                   for sa, sb, sr in ((SEMI_A, SEMI_B, "max_plus"), (SEMI_A, SEMI_B, "min_plus"),
                                                      (np.abs(SEMI_A), np.abs(SEMI_B), "max_times"))],
    "linalg.adjoint": [Case(tf.linalg.adjoint, [T(C43)], lambda a: a.conj().T),
                       Case(tf.linalg.adjoint, [T(RNG.standard_normal((2, 4, 3)))], lambda a: np.swapaxes(a, -1, -2))],
})
CASES["std"] = CASES["stddev"]
CASES["linalg.matrix_norm"] += ([Case(tf.linalg.matrix_norm, [T(M43), o], np.linalg.norm, rtol=1e-11)
                                 for o in (1, -1, 2, -2, np.inf, -np.inf, "fro", "nuc")]
                                + [Case(tf.linalg.matrix_norm, [T(C43), o], np.linalg.norm, rtol=1e-11) for o in (2, -np.inf, "nuc")]
                                + [Case(tf.linalg.matrix_norm, [T(M43), t], lambda a, t, o=o: np.linalg.norm(a, o), rtol=1e-11)
                                   for t, o in (("inf", np.inf), ("-2", -2))])   # the C++ text spellings
CASES["einsum"].append(Case(lambda a, b: tf.einsum("ij,jk->ik", a, b), [T(A), T(B)], lambda a, b: a @ b, mode="concrete",
                           traced_ok=True))  # outside a transform einsum runs on concrete operands
CASES["hvp"] = [Case(lambda x, v: tf.hvp(lambda u: tf.sum(u * u * u), (x,), (v,)), [T(V), T(W)],
                     lambda x, v: (6 * x * v,), mode="concrete", kinds=("numpy", "tensor", "list"))]
CASES["einsum_path"] = [Case(lambda a, b: np.asarray(tf.einsum_path("ij,jk->ik", a, b).steps), [T(A), T(B)],
                             lambda a, b: np.array([[0, 1]]), mode="concrete", kinds=("numpy", "tensor", "list"),
                             traced_ok=True)]
CASES["zeros"] = [Case(tf.zeros, [[2, 3]], lambda s: np.zeros(s), mode="concrete"),
                  Case(tf.zeros, [[0, 2], "f32"], lambda s, d: np.zeros(s, np.float32), mode="concrete")]
CASES["ones"] = [Case(tf.ones, [[4]], lambda s: np.ones(s), mode="concrete"),
                 Case(tf.ones, [[2, 2], "i64"], lambda s, d: np.ones(s, np.int64), mode="concrete")]
CASES["full"] = [Case(tf.full, [[3], 2.5], lambda s, v: np.full(s, v), mode="concrete"),
                 Case(tf.full, [[2], 1.0, "bool"], lambda s, v, d: np.full(s, True), mode="concrete")]
CONCRETE_KINDS = ("numpy", "tensor", "list", "scalar")

# Names that are not functions of tensors: exception classes, the classes whose instances the
# functions return (their operators and methods have cases of their own), and metadata properties.
# Not functions of tensors: the error classes, the callable classes and the tree utilities (which
# take any Python objects; test_trees.py tests them).
EXEMPT = {"Error", "ShapeError", "DTypeError", "ValueError", "ADRuleError", "TracerConversionError", "Traced",
          "EagerTensor", "no_grad", "ContractionPath",
          "Jit", "Transformed", "Vmapped", "MemoryMeter", "SparseAnalysis", "SparseMatrix", "SparsityPattern", "JacobianChoice",
          "JacobianTransformed", "Traced.shape",
          "Traced.dtype", "Traced.ndim", "TreeDef", "tree_flatten",
          "tree_leaves", "tree_map", "tree_unflatten"}
OPERATOR_DUNDERS = {f"__{p}{op}__" for op in ("add", "sub", "mul", "matmul", "truediv", "floordiv", "mod", "pow",
                                               "and", "or", "xor", "lshift", "rshift", "divmod") for p in ("", "r")}
OPERATOR_DUNDERS |= {"__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__", "__neg__", "__pos__", "__abs__",
                     "__invert__", "__getitem__"}


def public_names():
    names = []
    for prefix, module in (("", tf), ("linalg.", tf.linalg), ("random.", tf.random)):
        for n in dir(module):
            if not n.startswith("_") and not isinstance(getattr(module, n), types.ModuleType):
                names.append(prefix + n)
    for n in dir(tf.Traced):
        if n.startswith("_") and (n not in OPERATOR_DUNDERS or getattr(tf.Traced, n) is getattr(object, n, None)):
            continue              # not an operator, or object's own (identity comparison)
        names.append("Traced." + n)
    return names


def test_every_public_function_has_a_case():
    missing = [n for n in public_names() if n not in CASES and n not in EXEMPT]
    assert not missing, f"public names without a case in test_interop.CASES: {missing}"
    assert "Traced.__rmul__" in public_names() and "Traced.__rmatmul__" in public_names()


def variants(case, name=""):
    """(label, kinds): kinds gives each T argument "traced" or a concrete kind."""
    ls = leaves(case.args)
    if case.mode == "concrete":
        yield "numpy", ["numpy"] * len(ls)
        for p, leaf in enumerate(ls):
            for kind in CONCRETE_KINDS:
                if kind != "numpy" and applicable(leaf, kind):
                    yield f"arg{p}={kind}", ["numpy" if i != p else kind for i in range(len(ls))]
            yield f"arg{p}=traced", ["numpy" if i != p else "traced" for i in range(len(ls))]
        return
    yield "traced", ["traced"] * len(ls)
    for p, leaf in enumerate(ls):
        for kind in case.kinds if p not in case.traced_only else ():
            if applicable(leaf, kind):
                yield f"arg{p}={kind}", ["traced" if i != p else kind for i in range(len(ls))]
    if ls and "numpy" in case.kinds:
        # Outside any transform: a method's self a Tensor (a NumPy array's operators are NumPy's).
        method = name.startswith("Traced.")
        yield "concrete", ["tensor" if i in case.traced_only or (method and i == 0) else "numpy" for i in range(len(ls))]
        yield "eager", ["eager"] * len(ls)


def all_variants():
    for name in sorted(CASES):
        for i, case in enumerate(CASES[name]):
            for label, kinds in variants(case, name):
                yield pytest.param(name, i, label, kinds, id=f"{name}[{i}]-{label}")


def call(case, kinds):
    """Runs the case with the T arguments of the given kinds; traced ones are arguments of tf.jit
    (a dummy one where none is traced, so the call still happens inside a transform)."""
    ls = leaves(case.args)
    traced = [leaf.value for leaf, k in zip(ls, kinds) if k == "traced"]

    def run(*tv):
        it = iter(tv)
        values = [next(it) if k == "traced" else concrete(leaf, k) for leaf, k in zip(ls, kinds)]
        return case.fn(*substitute(case.args, iter(values)), **case.kwargs)

    if case.mode == "concrete" and "traced" not in kinds:
        return to_numpy(run())
    if "traced" not in kinds and len(set(kinds)) == 1 or set(kinds) == {"numpy", "tensor"}:
        # Every argument concrete (or every one eager) outside a transform: runs at once, and hands
        # back Tensors (EagerTensors).
        result = run()
        want = tf.EagerTensor if kinds[0] == "eager" else tf.Tensor
        assert all(isinstance(r, want) for r in flat_objects(result)), (want, result)
        return to_numpy(result)
    if not traced:
        return to_numpy(tf.jit(lambda dummy: run())(np.zeros(1)))
    return to_numpy(tf.jit(run)(*traced))


def compare(case, got, want):
    got, want = flat(got), flat(want)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        w = np.asarray(w)
        assert g.shape == w.shape, (g.shape, w.shape)
        assert g.dtype.kind == w.dtype.kind or {g.dtype.kind, w.dtype.kind} <= {"i", "u"}, (g.dtype, w.dtype)
        if w.dtype.kind in "biu":
            np.testing.assert_array_equal(g, w)
        else:
            np.testing.assert_allclose(g, w, rtol=case.rtol, atol=case.atol)


@pytest.mark.parametrize("name,index,label,kinds", list(all_variants()))
def test_public_function_accepts_every_operand_kind(name, index, label, kinds):
    case = CASES[name][index]
    ls = leaves(case.args)
    args = arrays_of(case)
    if case.mode == "concrete" and "traced" in kinds and not case.traced_ok:
        with pytest.raises(TypeError):    # a concrete value is needed: the traced one's is not known
            call(case, kinds)
        return
    refused = [k for k in kinds if k not in ("traced", "eager", *case.kinds)]
    if case.trees and refused == ["list"]:
        with pytest.raises((TypeError, ValueError)):
            call(case, kinds)
        return
    if refused:
        # A kind the function does not take: a TypeError naming it.
        with pytest.raises(TypeError) as info:
            call(case, kinds)
        assert case.mode == "concrete" or name.split(".")[-1] in str(info.value), str(info.value)
        return
    got = call(case, kinds)
    if case.expected is None:
        assert case.check(got, *args), got
        if any(k != "traced" for k in kinds) and case.mode == "traced":
            reference = call(case, ["traced"] * len(ls))
            for g, r in zip(flat(got), flat(reference)):
                np.testing.assert_array_equal(g, r)
        return
    if case.post is not None:
        got = case.post(got, *args)
    compare(case, got, case.expected(*args, **case.kwargs))


def test_numpy_defers_to_traced_operators():
    """ndarray (op) Traced runs Traced's reflected operator: no object arrays, no NumPy ufunc on a
    Traced value."""
    x = np.array([1.0, 2.0, 3.0])
    a = np.array([2.0, 0.5, -1.0])
    got = tf.jit(lambda t: (a * t, a + t, a - t, a / t, a ** t, a @ t, a < t, a >= t, a == t, np.float64(2.0) * t))(x)
    for g, w in zip(got, (a * x, a + x, a - x, a / x, a ** x, a @ x, a < x, a >= x, a == x, 2.0 * x)):
        assert isinstance(g, tf.Tensor)
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-15)
    with pytest.raises(TypeError):
        tf.jit(lambda t: np.sin(t))(x)
