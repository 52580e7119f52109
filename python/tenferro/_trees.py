"""Trees of arrays as arguments and results of the transforms, as JAX's pytrees.

A tree is a list, tuple (NamedTuples included), dict or None of trees, or a leaf (an array, a
Tensor, a Traced value or a Python scalar). None holds no leaves. Leaves are visited depth-first:
lists and tuples in order, dicts in sorted key order.
"""
from . import _tenferro


class TreeDef:
    """The structure of a tree without its leaves: hashable, so that transforms cache one traced
    program per structure.

    >>> tf.tree_flatten(({"x": 1.0}, [2.0, 3.0]))[1]
    TreeDef(({'x': *}, [*, *]))
    """

    __slots__ = ("node", "leaves")

    def __init__(self, node, leaves):
        self.node = node
        self.leaves = leaves

    def __eq__(self, other):
        return isinstance(other, TreeDef) and self.node == other.node

    def __hash__(self):
        return hash(self.node)

    def __repr__(self):
        return f"TreeDef({_describe(self.node)})"


def _describe(node):
    kind = node[0]
    if kind == "leaf":
        return "*"
    if kind == "none":
        return "None"
    if kind == "dict":
        return "{" + ", ".join(f"{k!r}: {_describe(c)}" for k, c in zip(node[1], node[2])) + "}"
    if kind == "namedtuple":
        return node[1].__name__ + "(" + ", ".join(_describe(c) for c in node[2]) + ")"
    inner = ", ".join(_describe(c) for c in node[1])
    return "[" + inner + "]" if kind == "list" else "(" + inner + ("," if len(node[1]) == 1 else "") + ")"


def _walk(tree, leaves):
    if tree is None:
        return ("none",)
    if isinstance(tree, dict):
        try:
            keys = tuple(sorted(tree))
        except TypeError:
            raise TypeError("tenferro trees: dict keys must be sortable (they fix the order of the leaves)") from None
        return ("dict", keys, tuple(_walk(tree[k], leaves) for k in keys))
    if isinstance(tree, tuple) and hasattr(type(tree), "_fields"):
        return ("namedtuple", type(tree), tuple(_walk(c, leaves) for c in tree))
    if isinstance(tree, (list, tuple)):
        return ("list" if isinstance(tree, list) else "tuple", tuple(_walk(c, leaves) for c in tree))
    leaves.append(tree)
    return ("leaf",)


def tree_flatten(tree):
    """(the leaves in order, the tree's structure): lists, tuples, dicts (by sorted key), namedtuples
    and None are structure, anything else a leaf.

    >>> leaves, treedef = tf.tree_flatten({"a": [1.0, 2.0], "b": None})
    >>> leaves
    [1.0, 2.0]
    >>> treedef
    TreeDef({'a': [*, *], 'b': None})
    """
    leaves = []
    node = _walk(tree, leaves)
    return leaves, TreeDef(node, len(leaves))


def _build(node, it):
    kind = node[0]
    if kind == "leaf":
        return next(it)
    if kind == "none":
        return None
    if kind == "dict":
        return {k: _build(c, it) for k, c in zip(node[1], node[2])}
    if kind == "namedtuple":
        return node[1](*[_build(c, it) for c in node[2]])
    children = [_build(c, it) for c in node[1]]
    return children if kind == "list" else tuple(children)


def tree_unflatten(treedef, leaves):
    """The tree of `treedef`'s structure holding `leaves` in order.

    >>> leaves, treedef = tf.tree_flatten({"a": [1.0, 2.0], "b": None})
    >>> tf.tree_unflatten(treedef, [3.0, 4.0])
    {'a': [3.0, 4.0], 'b': None}
    """
    leaves = list(leaves)
    if len(leaves) != treedef.leaves:
        raise ValueError(f"tree_unflatten: {treedef!r} has {treedef.leaves} leaves, got {len(leaves)}")
    return _build(treedef.node, iter(leaves))


def _unflatten_args(structures, leaves):
    """The arguments (trees) whose structures are `structures`, rebuilt from their leaves in order;
    leaves past the last structure are not used. The flattened functions the transforms trace
    start with this."""
    args, k = [], 0
    for d in structures:
        args.append(tree_unflatten(d, list(leaves[k:k + d.leaves])))
        k += d.leaves
    return args


def tree_leaves(tree):
    """The leaves of a tree in order (tree_flatten's first result).

    >>> tf.tree_leaves([1.0, (2.0, {"c": 3.0})])
    [1.0, 2.0, 3.0]
    """
    return tree_flatten(tree)[0]


def tree_map(f, tree, *rest):
    """The tree of ``f(leaf, *matching leaves of rest)``, rest being trees of the same structure.

    >>> tf.tree_map(lambda x, y: x + y, {"a": 1.0, "b": [2.0]}, {"a": 10.0, "b": [20.0]})
    {'a': 11.0, 'b': [22.0]}
    """
    leaves, treedef = tree_flatten(tree)
    others = []
    for r in rest:
        r_leaves, r_def = tree_flatten(r)
        if r_def != treedef:
            raise ValueError(f"tree_map: the trees differ in structure: {treedef!r} and {r_def!r}")
        others.append(r_leaves)
    return tree_unflatten(treedef, [f(*xs) for xs in zip(leaves, *others)])


class _TreeTransform:
    """grad or value_and_grad over trees: the C++ transform of the flattened function, one per
    argument structure (tenferro/tree.hpp is the C++ counterpart)."""

    def __init__(self, f, mode, argnums, has_aux):
        self._f = f
        self._mode = mode          # "grad" or "value_and_grad"
        self._argnums = argnums    # an int or a tuple of ints
        self._has_aux = has_aux
        self._plain = None         # for calls whose arguments are all leaves, without aux
        self._by_structure = {}
        self.__doc__ = getattr(f, "__doc__", None)

    def __call__(self, *args):
        many = not isinstance(self._argnums, int)
        argnums = tuple(self._argnums) if many else (self._argnums,)
        for a in argnums:
            if not isinstance(a, int) or not -len(args) <= a < len(args):
                raise ValueError(f"tenferro.{self._mode}: argnums {self._argnums!r} for a call with {len(args)} arguments")
        argnums = tuple(a % len(args) for a in argnums)
        defs = [tree_flatten(a) for a in args]
        if not self._has_aux and all(d.node == ("leaf",) for _, d in defs):
            if self._plain is None:
                cpp = _tenferro.grad if self._mode == "grad" else _tenferro.value_and_grad
                self._plain = cpp(self._f, self._argnums)
            return self._plain(*args)
        key = tuple(d for _, d in defs)
        entry = self._by_structure.get(key)
        if entry is None:
            entry = self._entry(defs, argnums)
            self._by_structure[key] = entry
        cpp, aux_def, loss_only = entry
        leaves = [leaf for ls, _ in defs for leaf in ls]
        if any(isinstance(x, _tenferro.Traced) for x in leaves):
            # Inside a traced function: the gradient program recorded into its trace; aux values are
            # f's own results on the traced arguments (recorded once more, merged by the trace).
            value, grads = loss_only(*leaves)
            grads = list(grads) if isinstance(grads, tuple) else [grads]
            aux = []
            if self._has_aux:
                aux = tree_flatten(self._f(*args)[1])[0]
        else:
            value, grads, aux = cpp.call_aux(*leaves)
        at = 0
        trees = []
        for a in argnums:
            n = defs[a][1].leaves
            trees.append(tree_unflatten(defs[a][1], grads[at:at + n]))
            at += n
        gradient = tuple(trees) if many else trees[0]
        if self._has_aux:
            aux_tree = tree_unflatten(aux_def[0], aux)
            if self._mode == "grad":
                return gradient, aux_tree
            return (value, aux_tree), gradient
        return gradient if self._mode == "grad" else (value, gradient)

    def _entry(self, defs, argnums):
        first, at = [], 0
        for _, d in defs:
            first.append(at)
            at += d.leaves
        flat_argnums = tuple(k for a in argnums for k in range(first[a], first[a] + defs[a][1].leaves))
        if not flat_argnums:
            raise ValueError(f"tenferro.{self._mode}: the differentiated arguments hold no arrays")
        structures = [d for _, d in defs]
        aux_def = [None]
        f, has_aux = self._f, self._has_aux

        def flat(*leaves):
            out = f(*_unflatten_args(structures, leaves))
            if not has_aux:
                return out
            if not isinstance(out, tuple) or len(out) != 2:
                raise TypeError(f"tenferro.{self._mode} with has_aux: the function must return (loss, aux)")
            loss, aux = out
            aux_leaves, aux_def[0] = tree_flatten(aux)
            return (loss, *[_tenferro.stop_gradient(x) for x in aux_leaves])

        def flat_loss(*leaves):
            out = flat(*leaves)
            return out[0] if has_aux else out

        return _tenferro.grad(flat, flat_argnums), aux_def, _tenferro.value_and_grad(flat_loss, flat_argnums)


class Jit:
    """A function compiled by tf.jit: traced once per argument structure and signature (dtypes and
    shapes) into a program, which every later call runs. Arguments and results may be trees; the
    flattened function is compiled by the module's C++ jit, one per argument structure.

    >>> f = tf.jit(lambda p: {"y": p["a"] * 2.0})
    >>> isinstance(f, tf.Jit), np.asarray(f({"a": np.array([1.0, 2.0])})["y"]).tolist()
    (True, [2.0, 4.0])
    """

    def __init__(self, f):
        self._f = f
        self._by_structure = {}
        self.__doc__ = getattr(f, "__doc__", None)
        self.__name__ = getattr(f, "__name__", "jitted")

    def _entry(self, defs):
        key = tuple(d for _, d in defs)
        entry = self._by_structure.get(key)
        if entry is None:
            structures, out_def, f = list(key), [None], self._f

            def flat(*leaves):
                out_leaves, out_def[0] = tree_flatten(f(*_unflatten_args(structures, leaves)))
                return tuple(out_leaves)

            entry = (_tenferro.jit(flat), out_def)
            self._by_structure[key] = entry
        return entry

    def __call__(self, *args):
        defs = [tree_flatten(a) for a in args]
        cpp, out_def = self._entry(defs)
        out = cpp(*[leaf for ls, _ in defs for leaf in ls])
        if out_def[0].leaves == 1 and not isinstance(out, tuple):
            out = (out,)
        return tree_unflatten(out_def[0], list(out))

    def print(self, *args):
        """The traced graph for these arguments, as text."""
        defs = [tree_flatten(a) for a in args]
        cpp, _ = self._entry(defs)
        return cpp.print(*[leaf for ls, _ in defs for leaf in ls])


def jit(f):
    """f compiled once per argument structure and signature (dtypes and shapes), then run as a
    program. Arguments and results may be trees (lists, tuples, dicts, None of arrays).

    >>> f = tf.jit(lambda x, y: tf.sum(x * y))
    >>> f(np.array([1.0, 2.0]), np.array([3.0, 4.0])).item()
    11.0
    >>> f(np.ones(3), np.ones(3)).item()  # another signature: traced and compiled again
    3.0
    """
    return Jit(f)


def grad(f, argnums=0, has_aux=False):
    """d f / d args[argnums] of a function returning a real scalar. Arguments may be trees (lists,
    tuples, dicts, None of arrays); the gradient has the differentiated argument's structure (a
    tuple of them for a tuple of argnums). With has_aux, f returns (loss, aux) and the result is
    (gradient, aux).

    >>> tf.grad(lambda x: tf.sum(x ** 2))(np.array([1.0, 2.0])).numpy().tolist()
    [2.0, 4.0]
    >>> g = tf.grad(lambda p: tf.sum(p["w"] * p["b"]))({"w": np.array([1.0, 2.0]), "b": np.array([3.0, 4.0])})
    >>> g["w"].numpy().tolist(), g["b"].numpy().tolist()
    ([3.0, 4.0], [1.0, 2.0])
    >>> g, aux = tf.grad(lambda x: (tf.sum(x * x), x + 1.0), has_aux=True)(np.array([3.0]))
    >>> g.numpy().tolist(), aux.numpy().tolist()
    ([6.0], [4.0])
    """
    return _TreeTransform(f, "grad", argnums, has_aux)


def value_and_grad(f, argnums=0, has_aux=False):
    """(f(args), gradient) as grad; with has_aux ((loss, aux), gradient).

    >>> value, g = tf.value_and_grad(lambda x: tf.sum(tf.exp(x)))(np.array([0.0, 0.0]))
    >>> value.item(), g.numpy().tolist()
    (2.0, [1.0, 1.0])
    """
    return _TreeTransform(f, "value_and_grad", argnums, has_aux)


def _leaf_axes(arg, axes, where):
    """The batch axis of every leaf of `arg`, from `axes`: an int or None for the whole subtree, or
    a list, tuple or dict of them matching `arg`'s structure (JAX's in_axes prefix trees)."""
    if axes is None or isinstance(axes, int):
        return [axes] * len(tree_leaves(arg))
    if isinstance(axes, dict) and isinstance(arg, dict):
        if sorted(axes) != sorted(arg):
            raise ValueError(f"tenferro.vmap: in_axes{where} has keys {sorted(axes)!r}, the argument {sorted(arg)!r}")
        return [a for k in sorted(arg) for a in _leaf_axes(arg[k], axes[k], f"{where}[{k!r}]")]
    if isinstance(axes, (list, tuple)) and isinstance(arg, (list, tuple)) and not isinstance(arg, dict):
        if len(axes) != len(arg):
            raise ValueError(f"tenferro.vmap: in_axes{where} has {len(axes)} entries, the argument {len(arg)}")
        return [a for i, (x, ax) in enumerate(zip(arg, axes)) for a in _leaf_axes(x, ax, f"{where}[{i}]")]
    raise ValueError(f"tenferro.vmap: in_axes{where} = {axes!r} does not match the argument's structure")


class _Vmap:
    def __init__(self, f, in_axes, out_axes, axis_size, loop_fallback):
        self._f, self._in_axes, self._out_axes, self._axis_size = f, in_axes, out_axes, axis_size
        self._loop_fallback = loop_fallback
        self.__doc__ = getattr(f, "__doc__", None)

    def __call__(self, *args):
        in_axes = self._in_axes
        if isinstance(in_axes, list):
            in_axes = tuple(in_axes)
        if isinstance(in_axes, tuple) and len(in_axes) != len(args):
            raise ValueError(f"tenferro.vmap: in_axes has {len(in_axes)} entries for {len(args)} arguments")
        per_arg = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
        defs = [tree_flatten(a) for a in args]
        leaves = [leaf for ls, _ in defs for leaf in ls]
        axes = [ax for i, (a, ax) in enumerate(zip(args, per_arg)) for ax in _leaf_axes(a, ax, f"[{i}]")]
        structures = [d for _, d in defs]
        out_def = [None]
        f = self._f

        def flat(*xs):
            out_leaves, out_def[0] = tree_flatten(f(*_unflatten_args(structures, xs)))
            return tuple(out_leaves)

        out = _tenferro._vmap(flat, tuple(axes), self._out_axes, self._axis_size, len(leaves),
                              self._loop_fallback)(*leaves)
        results = list(out) if isinstance(out, tuple) else [out]
        return tree_unflatten(out_def[0], results)


def vmap(f, in_axes=0, out_axes=0, axis_size=None, loop_fallback=True):
    """f mapped over a batch axis of its arguments, as jax.vmap. Arguments and results may be trees.
    in_axes is an int or None for every argument, or a tuple with one entry per argument: an int or
    None for all its leaves, or a tree of them matching the argument (None: not batched); out_axes
    an int for every result leaf; axis_size the batch size when no argument is batched. Composes
    with grad (vmap(grad(f)) gives per-example gradients) and nests. loop_fallback=False makes an op
    without a batching rule (a custom op) an error instead of a loop over the examples.

    >>> tf.vmap(lambda x: tf.sum(x ** 2))(np.array([[1.0, 2.0], [3.0, 4.0]])).numpy().tolist()
    [5.0, 25.0]
    >>> per_example = tf.vmap(tf.grad(lambda w, x: tf.sum(w * x) ** 2), in_axes=(None, 0))
    >>> per_example(np.array([1.0, 1.0]), np.array([[1.0, 2.0], [3.0, 4.0]])).numpy().tolist()
    [[6.0, 12.0], [42.0, 56.0]]
    """
    return _Vmap(f, in_axes, out_axes, axis_size, loop_fallback)
