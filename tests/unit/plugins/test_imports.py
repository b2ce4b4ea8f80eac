# SPDX-License-Identifier: GPL-3.0-or-later
"""The import rules of plugins/ (issue 30, "the house by subsystem"), read from the AST:

(a) imports of the collection's own modules are at the top of a file, never inside a function or class;
(b) no importlib, __import__ or sys.modules, but in _platforms/_drivers.py (the one documented dynamic
    import: a driver by platform name);
(c) the module_utils packages are layered: each imports only packages after it in LAYERS (any may import
    _intent._contract, the declared plan contract, which imports nothing);
(d) no file imports a private (underscore) name from another package's module, or reads
    ``module._private`` of a module it imported from another package.

Each rule's violations are printed (``pytest -n0 tests/unit/plugins/test_imports.py``); there are none.
"""

from __future__ import annotations

import ast
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
COLLECTION = "ansible_collections.lossless.fabric"
MODULE_UTILS = COLLECTION + ".plugins.module_utils"
LAYERS = ("_window", "_localize", "_switches", "_cabling", "_hosts", "_intent", "_nccl", "_ib", "_platforms", "_kubernetes", "_common")
CONTRACT = MODULE_UTILS + "._intent._contract"
DYNAMIC_IMPORT = ("plugins/module_utils/_platforms/_drivers.py",)


class Source:
    """One .py file of plugins/: its path from the repo root, its dotted name and package, its AST."""

    def __init__(self, rel: str) -> None:
        self.rel = rel
        with open(os.path.join(ROOT, rel), encoding="utf-8") as handle:
            self.tree = ast.parse(handle.read(), rel)
        parts = rel[:-3].split("/")
        self.is_package = parts[-1] == "__init__"
        if self.is_package:
            parts = parts[:-1]
        self.dotted = ".".join([COLLECTION] + parts)
        # a module_utils subsystem (_intent, _nccl ...), or plugins/<type> for the other plugins
        self.package = subsystem(self.dotted) or "/".join(parts[:2])


def subsystem(dotted: str) -> str | None:
    """'_nccl' for ansible_collections.lossless.fabric.plugins.module_utils._nccl._report; None outside module_utils."""
    if not dotted.startswith(MODULE_UTILS + "."):
        return None
    return dotted[len(MODULE_UTILS) + 1:].split(".")[0]


def contract(module: str, name: str | None) -> bool:
    """Whether an import is of _intent._contract (or a name in it), the one module any package may import."""
    return module == CONTRACT or module.startswith(CONTRACT + ".") or (module, name) == (MODULE_UTILS + "._intent", "_contract")


def is_module(dotted: str) -> bool:
    """Whether a dotted name of the collection is a module or package (a file here), not a name inside one."""
    if not dotted.startswith(COLLECTION + "."):
        return False
    path = os.path.join(ROOT, *dotted[len(COLLECTION) + 1:].split("."))
    return os.path.isfile(path + ".py") or os.path.isfile(os.path.join(path, "__init__.py"))


def sources() -> list[Source]:
    found = []
    for folder, _dirs, names in os.walk(os.path.join(ROOT, "plugins")):
        found.extend(os.path.relpath(os.path.join(folder, n), ROOT) for n in names if n.endswith(".py"))
    return [Source(rel) for rel in sorted(found)]


def imported(src: Source, node: ast.Import | ast.ImportFrom) -> list[tuple[str, str | None, str]]:
    """(module, name, bound as) of each collection import: name is None when a module itself is imported."""
    out = []
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.name.startswith(COLLECTION + "."):
                out.append((alias.name, None, alias.asname or alias.name.split(".")[0]))
        return out
    if node.level:
        base_parts = src.dotted.split(".")[: len(src.dotted.split(".")) - node.level + (1 if src.is_package else 0)]
        base = ".".join(base_parts + ([node.module] if node.module else []))
    else:
        base = node.module or ""
    if not base.startswith(COLLECTION + "."):
        return out
    for alias in node.names:
        full = base + "." + alias.name
        if is_module(full):
            out.append((full, None, alias.asname or alias.name))
        else:
            out.append((base, alias.name, alias.asname or alias.name))
    return out


def nested_imports(tree: ast.AST):
    """Import nodes inside a function or class body."""
    def walk(node, inside):
        for child in ast.iter_child_nodes(node):
            if inside and isinstance(child, (ast.Import, ast.ImportFrom)):
                yield child
            yield from walk(child, inside or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)))
    yield from walk(tree, False)


def rule_a(src: Source) -> list[str]:
    out = []
    for node in nested_imports(src.tree):
        for module, _name, _bound in imported(src, node):
            inside = module[len(MODULE_UTILS) + 1:] if subsystem(module) else module[len(COLLECTION) + 1:]
            out.append("%s: imports %s inside a function" % (src.rel, inside))
    return sorted(set(out))


def rule_b(src: Source) -> list[str]:
    if src.rel in DYNAMIC_IMPORT:
        return []
    out = set()
    for node in ast.walk(src.tree):
        if isinstance(node, ast.Import) and any(a.name == "importlib" or a.name.startswith("importlib.") for a in node.names):
            out.add("%s: importlib" % src.rel)
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "importlib":
            out.add("%s: importlib" % src.rel)
        elif isinstance(node, ast.ImportFrom) and node.module == "sys" and any(a.name == "modules" for a in node.names):
            out.add("%s: sys.modules" % src.rel)
        elif isinstance(node, ast.Name) and node.id == "__import__":
            out.add("%s: __import__" % src.rel)
        elif isinstance(node, ast.Attribute) and node.attr == "modules" and isinstance(node.value, ast.Name) and node.value.id == "sys":
            out.add("%s: sys.modules" % src.rel)
    return sorted(out)


def rule_c(src: Source) -> list[str]:
    own = subsystem(src.dotted)
    if own is None:
        return []
    if own not in LAYERS:
        return ["%s: package %s is not in LAYERS" % (src.rel, own)]
    out = set()
    for node in ast.walk(src.tree):
        if not isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        for module, name, _bound in imported(src, node):
            target = subsystem(module)
            if target is None or target == own:
                continue
            if contract(module, name):
                continue  # the declared plan contract: importable from every layer
            if target not in LAYERS or LAYERS.index(target) < LAYERS.index(own):
                out.add("%s: %s imports %s" % (src.rel, own, target))
    return sorted(out)


def rule_d(src: Source) -> list[str]:
    out = set()
    modules = {}  # bound name -> the other package's module it names
    for node in ast.walk(src.tree):
        if not isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        for module, name, bound in imported(src, node):
            if subsystem(module) in (None, src.package) or contract(module, name):
                continue
            if name is None:
                modules[bound] = module
            elif name.startswith("_"):
                out.add("%s: imports private %s from %s" % (src.rel, name, module[len(MODULE_UTILS) + 1:]))
    for node in ast.walk(src.tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in modules:
            attr, module = node.attr, modules[node.value.id]
            if attr.startswith("_") and not (attr.startswith("__") and attr.endswith("__")) and not is_module(module + "." + attr):
                out.add("%s: reads private %s.%s" % (src.rel, module[len(MODULE_UTILS) + 1:], attr))
    return sorted(out)


RULES = {"a": rule_a, "b": rule_b, "c": rule_c, "d": rule_d}
TITLES = {
    "a": "collection imports inside functions or classes",
    "b": "importlib / __import__ / sys.modules outside _platforms/_drivers.py",
    "c": "module_utils packages importing a package before them in LAYERS",
    "d": "private names of another package's module",
}


@pytest.fixture(scope="module")
def violations() -> dict[str, list[str]]:
    found = {rule: [] for rule in RULES}
    for src in sources():
        for rule, check in RULES.items():
            found[rule].extend(check(src))
    return found


@pytest.mark.parametrize("rule", sorted(RULES))
def test_no_violations(rule, violations, capsys):
    with capsys.disabled():
        print("\n(%s) %s: %d" % (rule, TITLES[rule], len(violations[rule])))
        for line in violations[rule]:
            print("    " + line)
    assert not violations[rule], "rule (%s) %s:\n%s" % (rule, TITLES[rule], "\n".join(violations[rule]))


def test_the_rules_see_what_they_should():
    """Each rule finds a violation written for it, and passes the allowed forms next to it."""
    bad = Source.__new__(Source)
    bad.rel, bad.is_package = "plugins/module_utils/_platforms/_x.py", False
    bad.dotted, bad.package = MODULE_UTILS + "._platforms._x", "_platforms"
    bad.tree = ast.parse(
        "import sys\n"
        "import importlib\n"
        "from %(mu)s._switches import _counters\n"
        "from %(mu)s._intent import _contract\n"
        "from %(mu)s._common._snapshot import _number, count\n"
        "from %(mu)s._platforms import _base\n"
        "def f():\n"
        "    from %(mu)s._common import _snapshot\n"
        "    import json\n"
        "    return sys.modules, _counters._fail, _counters.run, _base._private\n" % {"mu": MODULE_UTILS})
    assert rule_a(bad) == ["plugins/module_utils/_platforms/_x.py: imports _common._snapshot inside a function"]
    assert rule_b(bad) == ["plugins/module_utils/_platforms/_x.py: importlib", "plugins/module_utils/_platforms/_x.py: sys.modules"]
    assert rule_c(bad) == ["plugins/module_utils/_platforms/_x.py: _platforms imports _switches"]
    assert rule_d(bad) == ["plugins/module_utils/_platforms/_x.py: imports private _number from _common._snapshot",
                           "plugins/module_utils/_platforms/_x.py: reads private _switches._counters._fail"]
