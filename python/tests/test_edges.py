"""Edges of the Python front end that must fail loudly instead of crashing or answering wrong:
ragged nested sequences and object arrays (refused with typed errors, never a crash of the
interpreter), and Python control flow on traced values (bool(), int(), float(), ... of a Traced
raise tenferro.TracerConversionError instead of silently taking one branch), and reductions over an
empty axis (max, min, argmax, argmin raise ValueError, vector norms are 0 or inf, as NumPy's), and
arguments the bindings refuse (an unknown semiring, dtype or norm order) with typed errors."""
import operator
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tenferro as tf


def run_isolated(code):
    """Runs `code` in a fresh interpreter (so a crash of the extension cannot take pytest down) and
    returns its stdout; fails with the exit status and stderr if the interpreter did not exit 0."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env,
                          timeout=120)
    assert proc.returncode == 0, f"the interpreter exited with {proc.returncode}; stderr:\n{proc.stderr}"
    return proc.stdout


# Each case: an expression building a tensor from a bad nested sequence, the exception type it
# must raise and a fragment of the message.
RAGGED_CASES = [
    ("tf.Tensor([[1.0, 2.0], [3.0]])", "ValueError", "ragged nested sequence: axis 1 has lengths 2 and 1"),
    ("tf.jacfwd(lambda x: x * 2.0)([[1.0, 2.0], [3.0]])", "ValueError",
     "ragged nested sequence: axis 1 has lengths 2 and 1"),
    # jit takes trees (as JAX's): a list is a list of arguments, here multiplied as a Python list.
    ("tf.jit(lambda x: x * 2.0)([[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0]]])", "TypeError",
     "can't multiply sequence"),
    ("tf.jit(lambda x: x * 2.0)(np.array([[1.0, 2.0], [3.0]], dtype=object))", "TypeError", "object array"),
    ("tf.Tensor([[1.0], 2.0])", "ValueError", "ragged nested sequence: axis 1"),
    ("tf.Tensor([1.0, [2.0]])", "ValueError", "ragged nested sequence: axis 1"),
    ("tf.Tensor([np.ones(2), np.ones(3)])", "ValueError", "ragged nested sequence: axis 1 has lengths 2 and 3"),
    ("tf.einsum('i,i->', [1.0, 2.0], [[1.0], [2.0, 3.0]])", "ValueError", "ragged nested sequence"),
    ("tf.jvp(lambda x: x, ([[1.0, 2.0], [3.0]],), ([[1.0, 2.0], [3.0]],))", "ValueError", "ragged nested sequence"),
    ("tf.jit(lambda x: x + [[1.0, 2.0], [3.0]])(np.ones(2))", "ValueError", "ragged nested sequence"),
    ("tf.Tensor(np.array([[1.0], [2.0, 3.0]], dtype=object))", "TypeError", "object"),
    ("tf.grad(lambda x: tf.sum(x))(np.array([1.0, None], dtype=object))", "TypeError", "object"),
    ("tf.Tensor('abc')", "TypeError", "str"),
    ("tf.Tensor([1.0, 'a'])", "TypeError", "str"),
    ("tf.Tensor({'a': 1.0})", "TypeError", "dict"),
    ("tf.Tensor(np.array([2**63], dtype=np.uint64))", "ValueError", "uint64"),
]


@pytest.mark.parametrize("expr,error,fragment", RAGGED_CASES, ids=[c[0] for c in RAGGED_CASES])
def test_bad_nested_sequences_raise_typed_errors_instead_of_crashing(expr, error, fragment):
    out = run_isolated(f"""
        import numpy as np
        import tenferro as tf
        try:
            {expr}
        except Exception as e:
            print("raised", type(e).__name__, isinstance(e, {error}), str(e).replace(chr(10), " "))
        else:
            print("no error")
    """)
    assert out.startswith("raised "), out
    _, name, is_expected, message = out.split(" ", 3)
    assert is_expected == "True", f"{name} is not a {error}: {message}"
    assert fragment in message, message


def test_regular_nested_sequences_still_convert():
    t = tf.Tensor([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(np.asarray(t), [[1.0, 2.0], [3.0, 4.0]])
    assert tf.Tensor([]).shape == (0,)
    assert tf.Tensor([[], []]).shape == (2, 0)
    assert tf.Tensor([np.ones(2), [3.0, 4.0]]).shape == (2, 2)
    assert tf.Tensor([[True, False]]).dtype == "bool"
    assert tf.Tensor([[1, 2]]).dtype == "i64"
    assert tf.Tensor([1j, 2.0]).dtype == "c128"
    # grad takes lists as trees (test_trees.py); jacfwd converts a nested list to one tensor.
    np.testing.assert_array_equal(np.asarray(tf.jacfwd(lambda x: tf.sum(x * x))([[1.0, 2.0], [3.0, 4.0]])),
                                  [[2.0, 4.0], [6.0, 8.0]])


# ---- Python control flow on traced values ----

def conversion_error(f, x=np.array([1.0, -2.0])):
    """The exception raised by tf.jit(f)(x)."""
    with pytest.raises(tf.TracerConversionError) as info:
        tf.jit(f)(x)
    return info.value


def test_if_on_a_traced_value_raises_instead_of_taking_a_branch():
    def abs_sum(x):
        s = tf.sum(x)
        if s > 0:             # the value of s is not known while tracing
            return s
        return -s

    with pytest.raises(tf.TracerConversionError) as info:
        tf.grad(abs_sum)(np.array([-1.0, -2.0]))
    e = info.value
    assert isinstance(e, TypeError)
    message = str(e)
    assert "bool()" in message and "not known while tracing" in message
    assert "tf.where" in message and "tf.cond" in message
    # The documented alternatives give the right gradient: sign(sum(x)) everywhere.
    x = np.array([-1.0, -2.0])
    np.testing.assert_array_equal(np.asarray(tf.grad(lambda x: tf.abs(tf.sum(x)))(x)), [-1.0, -1.0])
    via_where = tf.grad(lambda x: tf.where(tf.sum(x) > 0, tf.sum(x), -tf.sum(x)))(x)
    np.testing.assert_array_equal(np.asarray(via_where), [-1.0, -1.0])
    via_cond = tf.grad(lambda x: tf.cond(tf.sum(x) > 0, lambda s: s, lambda s: -s, tf.sum(x)))(x)
    np.testing.assert_array_equal(np.asarray(via_cond), [-1.0, -1.0])


@pytest.mark.parametrize("convert", [bool, int, float, complex, operator.index, lambda v: range(v), np.asarray,
                                     lambda v: v and 1.0, lambda v: not v, lambda v: [0.0, 1.0][v],
                                     lambda v: np.ones(3)[v]],
                         ids=["bool", "int", "float", "complex", "index", "range", "asarray", "and", "not",
                              "list_index", "ndarray_index"])
def test_concrete_conversions_of_a_traced_value_raise(convert):
    e = conversion_error(lambda x: convert(tf.sum(x)) and x)
    assert isinstance(e, TypeError)
    assert "not known while tracing" in str(e)
    assert "depends on the arguments" in str(e)


def test_while_on_a_traced_value_raises():
    def loop(x):
        while tf.sum(x) < 10.0:
            x = x * 2.0
        return x

    assert "tf.while_loop" in str(conversion_error(loop))


def test_len_and_iteration_use_the_static_leading_axis():
    x = np.arange(6.0).reshape(3, 2)
    rows = tf.jit(lambda x: tuple(r * 2.0 for r in x))(x)
    assert len(rows) == 3
    for got, want in zip(rows, x):
        np.testing.assert_array_equal(np.asarray(got), want * 2.0)
    assert tf.jit(lambda x: tf.reshape(x, [len(x) * 2]))(x).shape == (6,)
    # A 0-d value has neither: a TypeError as for a 0-d NumPy array.
    with pytest.raises(TypeError, match="0-d"):
        tf.jit(lambda x: len(tf.sum(x)) and x)(x)
    with pytest.raises(TypeError, match="0-d"):
        tf.jit(lambda x: list(tf.sum(x)))(x)


def test_equality_is_elementwise_and_traced_values_are_unhashable():
    x = np.array([1.0, 2.0, 3.0])
    eq, ne = tf.jit(lambda x: (tf.where(x == 2.0, 1.0, 0.0), tf.where(x != 2.0, 1.0, 0.0)))(x)
    np.testing.assert_array_equal(np.asarray(eq), (x == 2.0).astype(float))
    np.testing.assert_array_equal(np.asarray(ne), (x != 2.0).astype(float))
    with pytest.raises(TypeError):
        tf.jit(lambda x: {x: 1} and x)(x)


def test_a_list_of_traced_values_is_not_a_tensor():
    with pytest.raises(TypeError, match="tf.stack"):
        tf.jit(lambda x: tf.matmul(x, [x[0], x[1]]))(np.ones((2, 2)))
    # jacfwd on traced values records the batched Jacobian program (vmap of the jvp).
    np.testing.assert_array_equal(np.asarray(tf.jit(lambda x: tf.jacfwd(lambda y: y * y)(x))(np.ones(2))), 2 * np.eye(2))
    # grad on traced values records its gradient program (what vmap(grad(f)) needs).
    np.testing.assert_array_equal(np.asarray(tf.jit(lambda x: tf.grad(lambda y: tf.sum(y * y))(x))(np.ones(2))),
                                  [2.0, 2.0])


# ---- reductions over an empty axis ----

@pytest.mark.parametrize("name", ["max", "min", "argmax", "argmin"])
def test_max_min_argmax_argmin_of_an_empty_axis_raise_value_error_as_numpy(name):
    x = np.zeros((0, 3))
    with pytest.raises(ValueError):
        getattr(np, name)(x, axis=0)             # NumPy refuses the max of no elements
    with pytest.raises(tf.ValueError) as info:
        tf.jit(lambda x: getattr(tf, name)(x, 0))(x)
    assert isinstance(info.value, ValueError)
    assert name in str(info.value) and "empty" in str(info.value), str(info.value)
    if name in ("max", "min"):                  # under a derivative too: the trace refuses it
        with pytest.raises(tf.ValueError):
            tf.grad(lambda x: tf.sum(getattr(tf, name)(x, 0)))(x)
    # Reducing the non-empty axis of an empty tensor is fine: an empty result, as in NumPy.
    got = np.asarray(tf.jit(lambda x: getattr(tf, name)(x, 1))(x))
    want = getattr(np, name)(x, axis=1)
    assert got.shape == want.shape == (0,) and got.dtype.kind == want.dtype.kind


@pytest.mark.parametrize("p", [2.0, 1.0, 0.5, -1.0, -2.5])
def test_vector_norm_of_no_elements_is_numpys_zero_or_inf(p):
    x = np.zeros((0, 3))
    with np.errstate(divide="ignore"):
        want = np.linalg.norm(x, p, axis=0)      # 0 for p > 0, 0^(1/p) = inf for p < 0
    got = np.asarray(tf.jit(lambda x: tf.linalg.vector_norm(x, p, 0))(x))
    np.testing.assert_array_equal(got, want)
    assert np.array_equal(np.asarray(tf.grad(lambda x: tf.sum(tf.linalg.vector_norm(x, p, 0)))(x)), x)


@pytest.mark.parametrize("p", [np.inf, -np.inf])
def test_vector_norm_inf_of_no_elements_raises_as_numpy(p):
    x = np.zeros((0, 3))
    with pytest.raises(ValueError):
        np.linalg.norm(x, p, axis=0)
    with pytest.raises(tf.ShapeError):           # a ValueError, as NumPy's
        tf.jit(lambda x: tf.linalg.vector_norm(x, p, 0))(x)


# Arguments the newer bindings refuse: each error typed and naming the function and what it expected.
REFUSED = [
    (lambda x: tf.semiring_dot_general(x, x, "tropical", lhs_contract=[1], rhs_contract=[0]), ValueError,
     ["semiring_dot_general", "max_plus"]),
    (lambda x: tf.semiring_dot_general_index(x, x, "sum", lhs_contract=[1], rhs_contract=[0]), ValueError,
     ["semiring_dot_general_index", "max_plus"]),
    (lambda x: tf.linalg.matrix_norm(x, None), TypeError, ["matrix_norm", "fro"]),
    (lambda x: tf.linalg.matrix_norm(x, True), TypeError, ["matrix_norm", "number"]),
    (lambda x: tf.linalg.matrix_norm(x, "max"), ValueError, ["matrix_norm", "fro"]),
    (lambda x: tf.astype(x, "float64"), ValueError, ["astype", "f64"]),
    (lambda x: tf.polygamma(-1, x), ValueError, ["polygamma", "n >= 0"]),
    (lambda x: tf.mvlgamma(x, 0), ValueError, ["mvlgamma", "p >= 1"]),
    (lambda x: tf.ldexp(x, 1.5), TypeError, ["ldexp", "integer"]),
]


@pytest.mark.parametrize("f,error,fragments", REFUSED)
def test_new_bindings_refuse_bad_arguments_with_typed_errors(f, error, fragments):
    with pytest.raises(error) as info:
        tf.jit(f)(np.eye(2) + 1.0)
    for fragment in fragments:
        assert fragment in str(info.value), str(info.value)


# Control flow with concrete operands (NumPy data) inside a transformed function whose bodies read
# the function's traced arguments (a closure): recorded into the function's trace, as in JAX, not
# run at once (which could not see the traced values). Derivatives against closed forms and
# central differences.
XS = np.array([[1.0, 2.0], [3.0, 4.0]])


def _central(f, w, h=1e-6):
    return (float(tf.jit(f)(np.array(w + h))) - float(tf.jit(f)(np.array(w - h)))) / (2 * h)


@pytest.mark.parametrize("construct", ["map", "scan", "cond", "switch", "fori_loop", "while_loop", "checkpoint"])
def test_control_flow_on_numpy_data_reads_the_traced_closure(construct):
    bodies = {
        "map": lambda w: tf.sum(tf.map(lambda r: tf.sin(r * w), XS)),
        "scan": lambda w: tf.scan(lambda c, x: (c * tf.cos(w) + tf.sum(x), c), np.array(1.0), XS)[0],
        "cond": lambda w: tf.sum(tf.cond(True, lambda r: tf.sin(r * w), lambda r: r, XS)),
        "switch": lambda w: tf.sum(tf.switch(1, [lambda r: r, lambda r: tf.sin(r * w)], XS)),
        "fori_loop": lambda w: tf.sum(tf.fori_loop(0, 3, lambda i, c: tf.sin(c * w), XS)),
        "while_loop": lambda w: tf.sum(tf.while_loop(lambda c: tf.sum(c) < 100.0, lambda c: c * (1.0 + w * w), XS,
                                                     max_trips=50)),
        "checkpoint": lambda w: tf.sum(tf.checkpoint(lambda r: tf.sin(r * w))(XS)),
    }
    f = bodies[construct]
    w = 0.7
    assert abs(float(tf.grad(f)(np.array(w))) - _central(f, w)) < 1e-6
    # Outside any trace the same calls on NumPy data still run at once.
    assert isinstance(tf.map(lambda r: r * 2.0, XS), tf.Tensor)


def test_a_map_inside_a_scan_body_reads_the_carry():
    f = lambda w: tf.scan(lambda c, x: (c + tf.sum(tf.map(lambda r: r * c * w, XS)), c), np.array(1.0), np.arange(3.0))[0]
    # c_{t+1} = c_t (1 + 10 w): c_3 = (1 + 10 w)^3, whose derivative is 30 (1 + 10 w)^2.
    assert abs(float(tf.jit(f)(np.array(0.5))) - 6.0 ** 3) < 1e-9
    assert abs(float(tf.grad(f)(np.array(0.5))) - 30 * 6.0 ** 2) < 1e-9
