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
    # The functions traced.hpp, linalg.hpp and control_flow.hpp declare from the op list (its U, B,
    # M and R entries).
    op_list = (INCLUDE / "op_list.hpp").read_text().split("#define TENFERRO_OP_LIST(", 1)[1]
    listed = [("tenferro", name) for name in re.findall(r"\b[UBR]\(X, \w+, (\w+)\)", op_list)]
    listed += [("tenferro::linalg", name) for name in re.findall(r"\bM\(X, \w+, (\w+), \d+\)", op_list)]
    assert any(namespace == "tenferro::linalg" for namespace, _ in listed), "op_list.hpp: no M entry parsed"
    for namespace, name in listed:
        entry = (namespace, name, "op_list.hpp")
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


# ---- options and the transform, eager and optimizer APIs -------------------------------------------

OPTION_HEADERS = ("control_flow.hpp", "conv.hpp", "eager.hpp", "einsum.hpp", "einsum_path.hpp", "jacobian.hpp",
                  "linalg.hpp", "optim.hpp", "sparse.hpp", "vmap.hpp", "exec_options.hpp")
# Each options struct -> the Python callables whose keyword parameters spell its fields.
OPTION_TAKERS = {
    "ScanOptions": ("scan",), "RematOptions": ("rematerialize",), "WhileOptions": ("while_loop",), "CheckpointOptions": ("checkpoint",),
    "FixedPointOptions": ("fixed_point",), "RootOptions": ("root",), "ConvOptions": ("conv",),
    "BackwardOptions": ("EagerTensor.backward",), "Options": ("einsum", "einsum_path"),
    "PathOptions": ("einsum", "einsum_path"), "JacobianOptions": ("jacobian",), "SvdOptions": ("linalg.svd",),
    "TriangularSolveOptions": ("linalg.triangular_solve",), "SgdOptions": ("optim.sgd",),
    "AdamOptions": ("optim.adam",), "AdamWOptions": ("optim.adamw",), "LbfgsOptions": ("optim.lbfgs",),
    # sparse_hessian takes the same but mode (a Hessian's coloring is the symmetric one).
    "SparseOptions": ("sparse_jacobian",), "VmapOptions": ("vmap",),
}
# (struct, field) -> the Python keyword, or None where Python has none on purpose; with the reason.
OPTION_DIFFERENT = {
    ("Options", "path"): (None, "the PathOptions fields are einsum's keywords themselves"),
    ("Options", "explicit_path"): ("optimize", "a list of SSA pairs given as optimize=, as opt_einsum's optimize"),
    ("PathOptions", "optimizer"): ("optimize", "opt_einsum's and numpy.einsum's keyword"),
    ("SgdOptions", "lr"): ("lr", None), ("AdamOptions", "lr"): ("lr", None), ("AdamWOptions", "lr"): ("lr", None),
    ("RematOptions", "memory_limit"): ("memory_limit", None),
    ("BackwardOptions", "retain_graph"): ("retain_graph", None),
    ("ExecOptions", "*"): (None, "executor switches for debugging the executor (TENFERRO_EXEC_* environment variables)"),
}
FIELD = re.compile(r"^\s+(?:[\w:<>, ]+?)\s+(\w+)(?:\s*=\s*[^;]+)?;\s*$")


def option_structs():
    """(struct, [field names]) of every *Options struct (and einsum's tn::Options) in the headers."""
    out = []
    for header in OPTION_HEADERS:
        lines = code_lines((INCLUDE / header).read_text())
        current, fields, depth = None, [], 0
        for line in lines:
            m = re.match(r"^struct (\w*Options) \{", line)
            if m and current is None:
                current, fields, depth = m.group(1), [], 1
                continue
            if current is None:
                continue
            depth += line.count("{") - line.count("}")
            if depth <= 0:
                out.append((current, fields))
                current = None
                continue
            f = FIELD.match(line)
            if f and depth == 1 and "(" not in line:
                fields.append(f.group(1))
    return out


def keyword_names(fn):
    """The parameter names of a Python function or of a pybind11 function (its signature line)."""
    import inspect
    try:
        return set(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        pass
    doc = (fn.__doc__ or "").splitlines()
    names = set()
    for line in doc:
        m = re.match(r"^\w+\((.*)\)", line)
        if m:
            names |= set(re.findall(r"(\w+):", m.group(1)))
    return names


def test_the_option_structs_are_found():
    structs = dict(option_structs())
    assert "max_trips" in structs["WhileOptions"] and "checkpoint_every" in structs["ScanOptions"]
    assert "history" in structs["LbfgsOptions"] and "weight_decay" in structs["AdamWOptions"]


@pytest.mark.parametrize("struct,fields", option_structs(), ids=lambda v: v if isinstance(v, str) else None)
def test_every_option_has_a_python_keyword(struct, fields):
    if (struct, "*") in OPTION_DIFFERENT:
        return
    assert struct in OPTION_TAKERS, f"{struct}: no Python function is known to take it (OPTION_TAKERS)"
    for taker in OPTION_TAKERS[struct]:
        fn = resolve(taker)
        assert fn is not None, taker
        names = keyword_names(fn)
        for field in fields:
            spelling = OPTION_DIFFERENT.get((struct, field), (field, None))[0]
            if spelling is None:
                continue
            assert spelling in names, f"{struct}::{field} is not a keyword of tf.{taker} ({sorted(names)})"


# The public functions of the transform, optimizer and einsum headers, by name (their return types
# are not traced values, so the scan above does not see them) -> the Python spelling.
API_FUNCTIONS = {
    "grad": "grad", "value_and_grad": "value_and_grad", "jacfwd": "jacfwd", "jacrev": "jacrev",
    "hessian": "hessian", "jvp": "jvp", "vjp": "vjp", "hvp": "hvp", "trace": "jit", "vmap": "vmap",
    "checkpoint": "checkpoint", "rematerialize": "rematerialize", "einsum_path": "einsum_path",
    "sparse_jacobian": "sparse_jacobian", "sparse_hessian": "sparse_hessian", "jacobian": "jacobian",
    "jacobian_sparsity": "jacobian_sparsity", "hessian_sparsity": "hessian_sparsity",
    "optim::sgd": "optim.sgd", "optim::adam": "optim.adam", "optim::adamw": "optim.adamw",
    "optim::lbfgs": "optim.lbfgs", "optim::exponential_decay": "optim.exponential_decay",
    "optim::cosine_decay": "optim.cosine_decay", "optim::warmup_cosine_decay": "optim.warmup_cosine_decay",
    "optim::inverse_time_decay": "optim.inverse_time_decay",
}
API_HEADERS = {"transforms.hpp": "", "vmap.hpp": "", "control_flow.hpp": "", "einsum.hpp": "", "sparse.hpp": "",
               "jacobian.hpp": "", "optim.hpp": "optim::"}


def api_function_names():
    """Names of the functions declared at the top level of the public namespaces of API_HEADERS
    (templates included), prefixed by their sub-namespace."""
    names = set()
    for header, prefix in API_HEADERS.items():
        text = "\n".join(code_lines((INCLUDE / header).read_text()))
        depth, scope, pending = 0, [], []
        for line in text.splitlines():
            m = NAMESPACE_OPEN.match(line)
            if m:
                scope.append((m.group(1), depth + 1))
            elif scope and depth == scope[-1][1] and scope[-1][0] in ("tenferro", "tenferro::optim", "optim"):
                d = re.match(r"^(?:[\w:<>,\s]+?\s)?(\w+)\(", line)
                if d and not line.startswith(("struct", "class", "using", "return", "enum")) and "operator" not in line:
                    names.add(prefix + d.group(1))
            for c in line:
                depth += c == "{"
                if c == "}":
                    depth -= 1
                    while scope and depth < scope[-1][1]:
                        scope.pop()
    return names


def test_every_transform_and_optimizer_has_a_python_spelling():
    found = api_function_names()
    for name in ("grad", "hvp", "trace", "optim::adam", "optim::lbfgs", "einsum_path"):
        assert name in found, (name, sorted(found))
    for name, spelling in API_FUNCTIONS.items():
        assert name in found, f"API_FUNCTIONS names {name}, which the headers no longer declare"
        assert callable(resolve(spelling)), f"{name} has no Python spelling tf.{spelling}"


def test_eager_tensor_members_have_python_spellings():
    lines = code_lines((INCLUDE / "eager.hpp").read_text())
    start = next(i for i, line in enumerate(lines) if line.startswith("class EagerTensor"))
    members = set()
    for line in lines[start + 1:]:
        if line.startswith("};"):
            break
        if line.strip().startswith("private:"):
            break
        m = re.match(r"^\s+(?:[\w:<>&\s]+?\s)?[&*]?(\w+)\(", line)
        if m and m.group(1) not in ("EagerTensor", "operator", "Traced"):
            members.add(m.group(1))
    renamed = {"set_requires_grad": "requires_grad", "defined": None, "type": "dtype"}  # a property; grad is None
    assert {"backward", "grad", "detach", "value", "zero_grad", "is_leaf"} <= members, members
    for m in members:
        spelling = renamed.get(m, m)
        if spelling is not None:
            assert hasattr(tf.EagerTensor, spelling), f"EagerTensor::{m} has no Python spelling"
