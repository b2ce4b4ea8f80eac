# SPDX-License-Identifier: GPL-3.0-or-later
"""Every module's EXAMPLES run against its real argument spec, and its
DOCUMENTATION says exactly what that spec accepts (STYLE.md point 20).

Convention: a module (or, for controller-side modules, its action plugin)
defines ARGUMENT_SPEC at module level; main() passes it to AnsibleModule.
"""

from __future__ import annotations

import copy
import glob
import importlib
import os

import pytest
import yaml
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
MODULES = sorted(os.path.basename(p)[:-3] for p in glob.glob(os.path.join(ROOT, "plugins", "modules", "*.py")) if not p.endswith("__init__.py"))
PREFIX = "ansible_collections.lossless.fabric.plugins"


def _spec(name: str) -> dict:
    module = importlib.import_module("%s.modules.%s" % (PREFIX, name))
    spec = getattr(module, "ARGUMENT_SPEC", None)
    if spec is None and os.path.exists(os.path.join(ROOT, "plugins", "action", name + ".py")):
        spec = importlib.import_module("%s.action.%s" % (PREFIX, name)).ARGUMENT_SPEC
    assert spec is not None, "%s defines no ARGUMENT_SPEC (module or action plugin)" % name
    return spec


def _fragment_options(ref: str) -> dict:
    """Options of one of our doc fragments ("lossless.fabric._nccl_gate" or "lossless.fabric._attributes.info_module")."""
    assert ref.startswith("lossless.fabric."), "%s: only lossless.fabric fragments are resolved here" % ref
    parts = ref[len("lossless.fabric."):].split(".")
    fragment = importlib.import_module("%s.doc_fragments.%s" % (PREFIX, parts[0])).ModuleDocFragment
    text = getattr(fragment, parts[1].upper() if len(parts) > 1 else "DOCUMENTATION")
    return yaml.safe_load(text).get("options") or {}


def _docs(name: str) -> tuple[dict, list]:
    module = importlib.import_module("%s.modules.%s" % (PREFIX, name))
    doc = yaml.safe_load(module.DOCUMENTATION)
    # ansible-doc and validate-modules merge the fragments' options; so does this test.
    options = {}
    for ref in doc.get("extends_documentation_fragment") or []:
        options.update(_fragment_options(ref))
    options.update(doc.get("options") or {})
    doc["options"] = options
    return doc, yaml.safe_load(module.EXAMPLES)


_STAND_IN = {"str": "x", "list": ["x"], "dict": {}, "bool": True, "int": 1, "float": 1.0, "path": "/x", "raw": "x", "jsonarg": "{}"}


def _templated(value) -> bool:
    return isinstance(value, str) and "{{" in value


@pytest.mark.parametrize("name", MODULES)
def test_documentation_matches_argument_spec(name):
    doc, _examples = _docs(name)
    spec = _spec(name)
    options = doc.get("options") or {}
    assert sorted(options) == sorted(spec), "%s: documented options differ from ARGUMENT_SPEC" % name
    for key, opt in options.items():
        assert opt.get("type", "str") == spec[key].get("type", "str"), "%s.%s: type differs" % (name, key)
        assert opt.get("default") == spec[key].get("default"), "%s.%s: default differs" % (name, key)
        assert opt.get("choices") == spec[key].get("choices"), "%s.%s: choices differ" % (name, key)
        assert bool(opt.get("no_log")) == bool(spec[key].get("no_log")) or "no_log" not in opt


@pytest.mark.parametrize("name", MODULES)
def test_examples_validate_against_argument_spec(name):
    _doc, examples = _docs(name)
    spec = _spec(name)
    used = 0
    for task in examples:
        for key, args in task.items():
            if key not in ("lossless.fabric.%s" % name,):
                continue
            used += 1
            args = dict(args or {})
            unknown = sorted(set(args) - set(spec))
            assert not unknown, "%s EXAMPLES task %r uses unknown options %s" % (name, task.get("name"), unknown)
            # A Jinja2 value is only known at run time: stand in a value of the documented type.
            concrete = {k: (_STAND_IN[spec[k].get("type", "str")] if _templated(v) else v) for k, v in args.items()}
            # A module process builds its spec anew for every task; the validator fills a dict default in
            # place, so one task's defaults must not leak into the next.
            result = ArgumentSpecValidator(copy.deepcopy(spec)).validate(concrete)
            assert not result.error_messages, "%s EXAMPLES task %r: %s" % (name, task.get("name"), result.error_messages)
    assert used, "%s: EXAMPLES never call the module" % name
