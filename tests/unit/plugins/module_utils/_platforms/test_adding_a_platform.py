# SPDX-License-Identifier: GPL-3.0-or-later
"""docs/adding-a-platform.md's list of what a new platform provides, checked for every platform in the
registry: the list in the page is the one this test checks (parsed between its markers), and each of its
files and names exists for every platform (its package, its record, its grammar and the grammar's exports)."""

from __future__ import annotations

import ast
import importlib
import pathlib
import re
import sys

import pytest

from ansible_collections.lossless.fabric.plugins.module_utils._platforms import _base, _drivers, _records

ROOT = pathlib.Path(__file__).resolve().parents[5]
sys.path.insert(0, str(ROOT / "tests" / "lab"))

import switchsim  # noqa: E402  # pylint: disable=wrong-import-position,import-error

DOC = ROOT / "docs" / "adding-a-platform.md"
PREFIX = "ansible_collections.lossless.fabric."

# What this test checks: (file, the names it defines), "<name>" / "<NAME>" standing for the platform.
PROVIDES = [
    ("plugins/module_utils/_platforms/<name>/__init__.py", []),
    ("plugins/module_utils/_platforms/<name>/_vendor.py", []),
    ("plugins/module_utils/_platforms/<name>/_render.py", []),
    ("plugins/module_utils/_platforms/<name>/_readers.py", []),
    ("plugins/module_utils/_platforms/<name>/_driver.py",
     ["PLATFORM", "Driver", "Driver.platform", "Driver.device_type", "Driver.counters_not_available"]),
    ("plugins/module_utils/_platforms/_records.py", ["<NAME>", "DRIVEN"]),
    ("tests/lab/switchsim/<name>.py", list(switchsim.GRAMMAR_EXPORTS)),
]

REGISTRY = _records.registry()
DRIVEN = [record.name for record in _records.DRIVEN]
ITEM = re.compile(r"^- `(?P<path>[^`]+)`(?::(?P<names>(?: `[^`]+`,?)+))? — ")


def _doc_list() -> list[tuple[str, list[str]]]:
    text = DOC.read_text(encoding="utf-8")
    body = text[text.index("<!-- provides: begin -->"):text.index("<!-- provides: end -->")].splitlines()[1:]
    found = []
    for line in body:
        match = ITEM.match(line)
        assert match, "docs/adding-a-platform.md: an item of the list is not '- `FILE`[: `NAME`, ...] — what it is': %r" % line
        found.append((match["path"], re.findall(r"`([^`]+)`", match["names"] or "")))
    return found


def _each(name: str):
    for path, names in PROVIDES:
        yield path.replace("<name>", name), [n.replace("<NAME>", name.upper()) for n in names]


def _module(path: str):
    if path.startswith("tests/lab/switchsim/"):
        return importlib.import_module("switchsim." + path.rsplit("/", 1)[1][:-3])
    dotted = path[:-3].replace("/", ".")
    return importlib.import_module(PREFIX + (dotted[: -len(".__init__")] if dotted.endswith(".__init__") else dotted))


def test_the_page_lists_what_this_test_checks():
    assert _doc_list() == PROVIDES


def test_every_registered_platform_is_driven_and_has_a_grammar():
    # PLANNED records (no driver yet) provide only their record; none today.
    assert [name for name in REGISTRY if name not in DRIVEN] == [record.name for record in _records.PLANNED]
    assert list(_drivers.DRIVERS) == DRIVEN
    missing = [name for name in DRIVEN if name not in switchsim.GRAMMARS]
    assert not missing, "no simulator grammar tests/lab/switchsim/<name>.py for %s" % missing


@pytest.mark.parametrize("name", DRIVEN)
def test_the_platform_provides_every_item(name):
    for path, names in _each(name):
        assert (ROOT / path).is_file(), "%s: %s is missing (docs/adding-a-platform.md)" % (name, path)
        module = _module(path)
        for dotted in names:
            value = module
            for part in dotted.split("."):
                assert hasattr(value, part), "%s: %s defines no %s (docs/adding-a-platform.md)" % (name, path, dotted)
                value = getattr(value, part)


@pytest.mark.parametrize("name", DRIVEN)
def test_the_items_are_what_the_page_says(name):
    record = getattr(_records, name.upper())
    assert record is REGISTRY[name] and record in _records.DRIVEN
    driver = importlib.import_module(_drivers.DRIVERS[name])
    assert driver.PLATFORM is record
    assert issubclass(driver.Driver, _base.Driver) and driver.Driver.platform == name and driver.Driver.device_type
    assert set(driver.Driver.counters_not_available) <= set(_base.COUNTERS_EXPECTED)
    grammar = switchsim.module_of(name)
    assert grammar.DEVICE is switchsim.device_class(name) and grammar.DEVICE.platform == name
    ports = switchsim.lab_ports(name)
    assert len(ports) == 2 and all(re.fullmatch(record.interface_pattern, port, re.ASCII) for port in ports), ports
    assert all(isinstance(settings.get("speed"), str) and isinstance(settings.get("cable_length_m"), int) for settings in ports.values())
    assert set(switchsim.HANG_STEPS) <= set(grammar.HANG_AT) <= set(switchsim.HANG_STEPS + switchsim.HANG_STEPS_OPTIONAL)
    assert all(isinstance(command, str) and re.compile(command) for command in grammar.HANG_AT.values())
    assert all(isinstance(line, str) for line in getattr(grammar, "PREPARED", ()))


def test_the_hang_table_is_collected_from_every_grammar():
    table = switchsim.hang_at(DRIVEN)
    assert {platform for by_platform in table.values() for platform in by_platform} == set(DRIVEN)
    assert all(set(table[step]) == set(DRIVEN) for step in switchsim.HANG_STEPS)


@pytest.mark.parametrize("name", DRIVEN)
def test_render_and_readers_import_one_way(name):
    """_render.py and _readers.py (pure) import only the package's _vendor, _platforms/_base, _indent,
    _records and _common: never _driver, nor each other (docs/adding-a-platform.md, "The driver")."""
    platforms = PREFIX + "plugins.module_utils._platforms"
    allowed = {platforms + "." + name + "._vendor", platforms + "._base", platforms + "._indent", platforms + "._records"}
    for part in ("_render", "_readers"):
        path = ROOT / "plugins" / "module_utils" / "_platforms" / name / (part + ".py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom) or not (node.module or "").startswith(PREFIX):
                continue
            for alias in node.names:
                target = node.module + "." + alias.name
                module = target if target.startswith(platforms + ".") and target.rsplit(".", 1)[-1].startswith("_") else node.module
                assert module.startswith(PREFIX + "plugins.module_utils._common") or module in allowed or target in allowed, (
                    "%s/%s.py imports %s" % (name, part, target))
