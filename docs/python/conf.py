# Sphinx configuration of tenferro's Python reference. Build it with scripts/docs (which sets
# PYTHONPATH to the release build's module); the pages hold autodoc directives only, so every
# signature and description comes from the module's docstrings.
import re
import types
from pathlib import Path

import tenferro

project = "tenferro"
release = tenferro.__version__
version = release
extensions = ["sphinx.ext.autodoc"]
root_doc = "index"
exclude_patterns = []
html_theme = "alabaster"
html_static_path = []
autodoc_member_order = "bysource"
# pybind11 writes each signature as the docstring's first line: autodoc reads it from there.
autodoc_docstring_signature = True
add_module_names = False

_HERE = Path(__file__).parent
_MODULES = {"tenferro": tenferro, "tenferro.linalg": tenferro.linalg, "tenferro.random": tenferro.random,
            "tenferro.optim": tenferro.optim, "tenferro.distributed": tenferro.distributed}


def _check_complete(app):
    """Every public name of the modules is on some page: a warning (an error under -W) names
    the ones missing, so a new function cannot be left out of the reference."""
    from sphinx.util import logging
    logger = logging.getLogger(__name__)
    documented = set()
    directive = re.compile(r"^\.\. (?:currentmodule|module)::\s*(\S+)|^\.\. auto(?:function|class|exception)::\s*(\S+)")
    for page in _HERE.glob("*.rst"):
        current = "tenferro"
        for line in page.read_text().splitlines():
            m = directive.match(line.strip())
            if m and m.group(1):
                current = m.group(1)
            elif m:
                documented.add(current + "." + m.group(2))
    top = {id(getattr(tenferro, n)) for n in dir(tenferro) if not n.startswith("_")}
    missing = []
    for prefix, module in _MODULES.items():
        for name in dir(module):
            obj = getattr(module, name)
            if name.startswith("_") or isinstance(obj, types.ModuleType):
                continue
            if prefix != "tenferro" and id(obj) in top:
                continue  # a re-export (tenferro.optim.tree_flatten): documented under tenferro
            if f"{prefix}.{name}" not in documented:
                missing.append(f"{prefix}.{name}")
    if missing:
        logger.warning("public names missing from docs/python/*.rst: %s", ", ".join(sorted(missing)))


def setup(app):
    app.connect("builder-inited", _check_complete)
