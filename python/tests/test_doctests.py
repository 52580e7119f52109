"""The examples in the docstrings of the public API run and print what they say: every public
function, class and method of tenferro, tenferro.linalg, tenferro.random, tenferro.optim and
tenferro.distributed is searched for `>>>` examples (pybind11 functions included), each run with `tf` (tenferro) and `np`
(NumPy) in scope."""
import doctest
import types

import numpy as np
import pytest

import tenferro as tf


def public_objects():
    seen, out = set(), []
    for prefix, module in (("tf.", tf), ("tf.linalg.", tf.linalg), ("tf.random.", tf.random), ("tf.optim.", tf.optim),
                           ("tf.distributed.", tf.distributed)):
        for name in dir(module):
            if name.startswith("_"):
                continue
            obj = getattr(module, name)
            if isinstance(obj, types.ModuleType) or id(obj) in seen:
                continue
            seen.add(id(obj))
            out.append((prefix + name, obj))
            if isinstance(obj, type):
                for member in dir(obj):
                    attr = getattr(obj, member, None)
                    if (not member.startswith("_") or member == "__call__") and attr is not None and id(attr) not in seen:
                        seen.add(id(attr))
                        out.append((f"{prefix}{name}.{member}", attr))
    return out


def examples():
    parser = doctest.DocTestParser()
    for name, obj in public_objects():
        doc = getattr(obj, "__doc__", None)
        if not isinstance(doc, str) or ">>>" not in doc:
            continue
        yield pytest.param(name, parser.get_doctest(doc, {"tf": tf, "np": np}, name, None, 0), id=name)


ALL = list(examples())


def test_examples_exist():
    names = {p.values[0] for p in ALL}
    assert {"tf.einsum", "tf.optim.adam", "tf.optim.lbfgs", "tf.optim.Optimizer.step"} <= names, sorted(names)


@pytest.mark.parametrize("name,test", ALL)
def test_docstring_example(name, test):
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    out = []
    runner.run(test, out=out.append)
    assert runner.failures == 0, "".join(out)
