"""Every public function of the C++ traced API has a Python spelling.

The public headers are read as text: each declaration at namespace scope whose return type is a
traced result (Traced, TracedList, std::vector<Traced>, a std::pair of them, or a result struct of
the header that holds Traced members, such as linalg's Svd) names a function that must exist in
the Python module of its namespace: tenferro -> tf, tenferro::linalg -> tf.linalg,
tenferro::random -> tf.random. Internal namespaces (detail, ops, tn) are skipped. DIFFERENT lists
the intentional differences, each with its reason; a new C++ function without a Python binding
(or an entry there) fails the test."""
import pathlib
import re

import pytest

import tenferro as tf

HEADERS = ("traced.hpp", "math.hpp", "linalg.hpp", "indexing.hpp", "sort_scan.hpp", "random.hpp", "conv.hpp",
           "control_flow.hpp", "einsum.hpp", "semiring.hpp")
INCLUDE = pathlib.Path(__file__).resolve().parent.parent.parent / "tenferro" / "include" / "tenferro"
MODULES = {"tenferro": tf, "tenferro::linalg": tf.linalg, "tenferro::random": tf.random}

# (C++ namespace, name) -> the Python spelling ("linalg.x" for tf.linalg.x), or None where the
# function has none on purpose; each with the reason.
DIFFERENT = {
    ("tenferro", "constant"): (None, "Python operands (arrays, Tensors, lists, scalars) become constants of the trace by themselves"),
    ("tenferro", "full_like"): (None, "a helper of tracing: a Python scalar operand is broadcast where it is used"),
    ("tenferro", "reverse"): ("flip", "NumPy's name (Python's reversed() means something else)"),
    ("tenferro", "switch_case"): ("switch", "jax.lax.switch's name (switch is a C++ keyword, not a Python one)"),
    ("tenferro", "vector_norm"): ("linalg.vector_norm", "beside matrix_norm in tf.linalg, as in torch.linalg"),
    ("tenferro", "matrix_norm"): ("linalg.matrix_norm", "the same function as linalg::matrix_norm (numeric orders too)"),
}

DECLARATION = re.compile(r"^(?P<ret>[A-Za-z_][\w:]*(?:<[^;{}()]*>)?)\s+(?P<name>[A-Za-z_]\w*)\(")
NAMESPACE_OPEN = re.compile(r"^\s*namespace\s+([\w:]+)\s*\{")
STRUCT = re.compile(r"^struct\s+(\w+)\s*\{")


def code_lines(text):
    """The header's lines without comments and the contents of string and character literals."""
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    out = []
    for line in text.splitlines():
        line = re.sub(r'"(?:\\.|[^"\\])*"', '""', line)
        line = re.sub(r"'(?:\\.|[^'\\])*'", "''", line)
        out.append(line.split("//", 1)[0].rstrip())
    return out


def result_structs(lines):
    """The structs of a header that hold Traced members (the results of decompositions)."""
    names, current = set(), None
    for line in lines:
        m = STRUCT.match(line)
        if m:
            current = m.group(1)
        elif current and line.startswith("};"):
            current = None
        elif current and re.search(r"\bTraced\b", line):
            names.add(current)
    return names


def is_traced_result(ret, structs):
    return (ret in ("Traced", "TracedList") or ret in structs
            or (re.match(r"std::(vector|pair)<", ret) is not None and re.search(r"\bTraced(List)?\b", ret) is not None))


def cpp_functions():
    """(namespace, name, header) of each public function returning a traced result, in header
    order. Braces are counted, so that only declarations at namespace scope count (not members of
    a class, nor anything inside a function body)."""
    found = []
    for header in HEADERS:
        lines = code_lines((INCLUDE / header).read_text())
        structs = result_structs(lines)
        scope = []        # (namespace, the brace depth inside it)
        depth = 0
        for line in lines:
            m = NAMESPACE_OPEN.match(line)
            if m:
                scope.append((m.group(1), depth + 1))
            elif scope and depth == scope[-1][1]:
                d = DECLARATION.match(line)
                namespace = "::".join(n for n, _ in scope)
                if d and is_traced_result(d.group("ret"), structs) and namespace in MODULES:
                    entry = (namespace, d.group("name"), header)
                    if entry not in found:
                        found.append(entry)
            for c in line:
                if c == "{":
                    depth += 1
                elif c == "}":
                    depth -= 1
                    while scope and depth < scope[-1][1]:
                        scope.pop()
        assert depth == 0 and not scope, f"{header}: unbalanced braces as parsed"
    # The functions traced.hpp declares from the op list (U and B entries of op_list.hpp).
    for name in re.findall(r"\b[UB]\(X, \w+, (\w+)\)", (INCLUDE / "op_list.hpp").read_text().split("#define TENFERRO_OP_LIST(", 1)[1]):
        entry = ("tenferro", name, "op_list.hpp")
        if entry not in found:
            found.append(entry)
    return found


def python_spelling(namespace, name):
    if (namespace, name) in DIFFERENT:
        return DIFFERENT[(namespace, name)][0]
    prefix = {"tenferro": "", "tenferro::linalg": "linalg.", "tenferro::random": "random."}[namespace]
    return prefix + name


def resolve(spelling):
    obj = tf
    for part in spelling.split("."):
        if not hasattr(obj, part):
            return None
        obj = getattr(obj, part)
    return obj


def test_the_headers_are_found_and_parsed():
    found = {(ns, name) for ns, name, _ in cpp_functions()}
    # One function of each kind of declaration the parser must see.
    for expected in [("tenferro", "add"), ("tenferro", "max_with_index"), ("tenferro", "split"), ("tenferro", "scan"),
                     ("tenferro", "cond"), ("tenferro::linalg", "svd"), ("tenferro::linalg", "lu_factor"),
                     ("tenferro::random", "uniform"), ("tenferro", "dropout"), ("tenferro", "einsum"),
                     ("tenferro", "semiring_dot_general_index"), ("tenferro", "exp2"), ("tenferro", "remainder")]:
        assert expected in found, expected
    assert ("tenferro", "broadcast_shapes") not in found   # returns a Shape
    assert ("tenferro", "capture_into") not in found       # not a traced result
    assert ("tenferro", "einsum_path") not in found        # a function of shapes


@pytest.mark.parametrize("namespace,name,header", cpp_functions(), ids=lambda v: v if isinstance(v, str) else None)
def test_every_cpp_function_has_a_python_spelling(namespace, name, header):
    spelling = python_spelling(namespace, name)
    if spelling is None:
        return
    assert callable(resolve(spelling)), f"{namespace}::{name} ({header}) has no Python spelling tf.{spelling}"


def test_the_table_of_differences_is_current():
    """Each entry of DIFFERENT names a C++ function that still exists, and its spelling exists."""
    found = {(ns, name) for ns, name, _ in cpp_functions()}
    for key, (spelling, reason) in DIFFERENT.items():
        assert key in found, f"DIFFERENT names {key}, which the headers no longer declare"
        assert reason
        if spelling is not None:
            assert callable(resolve(spelling)), spelling
