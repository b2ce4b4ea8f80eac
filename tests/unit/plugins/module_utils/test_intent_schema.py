# SPDX-License-Identifier: GPL-3.0-or-later
"""The intent schema (_intent/_schema.py) against validation and docs/intent.md.

- docs/intent.md's key tables are what tools/intent_docs.py renders from the schema;
- every schema-driven leaf's default is the value the plan gets, its range and choices are
  enforced (a value just outside gets an error naming the key path and the value), and a
  value at each bound is accepted.
"""

from __future__ import annotations

import copy
import os
import subprocess
import sys

import pytest

from ansible_collections.lossless.fabric.plugins.module_utils._intent import _plan, _schema

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
DOC = os.path.join(ROOT, "docs", "intent.md")
SCHEMA_LEAVES = [leaf for leaf in _schema.LEAVES if leaf.check == _schema.SCHEMA]
# Every leaf with a machine-readable range or choices, whoever checks it (the schema or the section's code).
RANGED_LEAVES = [leaf for leaf in _schema.LEAVES if leaf.low is not None or leaf.choices is not None]

RESOURCE = {"name": "rdma_shared_device_a", "selectors": {"if_names": ["eth2"]}}
DEVICE = "lossless_fabric_device."
# The host of base() whose lossless_fabric_device holds a device leaf, by the leaf's first key.
# The smallest rail_optimized pattern that cables base()'s RoCE devices (gpu1 mlx5_0 to leaf1 Ethernet1): the pattern needs
# its required keys before any of its other keys is checked.
TOPOLOGY = {
    "pattern": "rail_optimized",
    "scalable_units": 1,
    "hosts_per_unit": 1,
    "rails": 1,
    "speed": "400G",
    "names": {"leaf": "leaf{leaf}"},
    "ports": {"leaf_hosts": {"name": "Ethernet{n}"}},
}
DEVICE_HOST = {"ports": "leaf1", "queue_buffer_bytes": "leaf1", "platform": "leaf1", "nics": "gpu1", "gpus": "gpu1", "role": "sm1", "kind": "gpu1"}


def base(leaf_path: str) -> tuple[dict, dict]:
    """A valid intent and devices in which ``leaf_path`` can be set."""
    transport = "infiniband" if leaf_path.startswith(("infiniband.", DEVICE + "role")) else "roce"
    intent: dict = {"name": "fab", "transport": transport}
    devices: dict = {
        "gpu1": {"kind": "host", "nics": [{"name": "mlx5_0", "netdev": "eth2", "speed": "400G"}]},
        "leaf1": {"kind": "switch", "platform": "eos", "ports": {"Ethernet1": {"speed": "400G"}}},
    }
    if transport == "infiniband":
        devices = {"gpu1": {"kind": "host", "nics": [{"name": "mlx5_0", "speed": "400G"}]}, "sm1": {"kind": "subnet_manager", "role": "master"}}
        intent["infiniband"] = {"sm": {"routing_engine": "minhop"}}
        if leaf_path.startswith("infiniband.partitions[]."):
            # one partition with only its required keys, so every other key takes the schema's default
            intent["infiniband"]["partitions"] = [{"name": "gpu", "pkey": "0x8001", "members": ["ALL_CAS"]}]
    if leaf_path.startswith("kubernetes."):
        intent["kubernetes"] = {"device_plugin": {"resources": [copy.deepcopy(RESOURCE)]}}
    if leaf_path.startswith("topology."):
        intent["topology"] = copy.deepcopy(TOPOLOGY)
    return intent, devices


def put(intent: dict, leaf_path: str, value, devices: dict | None = None) -> str:
    """Set ``leaf_path`` to ``value`` in ``intent`` (or, for a device leaf, in ``devices``); return the error path validation names."""
    node = intent
    shown = ["lossless_fabric"]
    parts = leaf_path.split(".")
    if leaf_path.startswith(DEVICE):
        host = DEVICE_HOST[parts[1].removesuffix("[]")]
        node, shown, parts = devices[host], [f"{host}: lossless_fabric_device"], parts[1:]
    for part in parts[:-1]:
        if part == "<ifname>":
            node = node["Ethernet1"]
            shown[-1] += "[Ethernet1]"
        elif part.endswith("[]"):
            node = node.setdefault(part[:-2], [{}])[0]
            shown.append(part[:-2] + "[0]")
        else:
            node = node.setdefault(part, {})
            shown.append(part)
    node[parts[-1]] = value
    return ".".join(shown + [parts[-1]])


def normalized(intent: dict, devices: dict, leaf_path: str):
    """The value validation gave ``leaf_path``."""
    norm, norm_devices, ctx = _plan._normalize(intent, devices)
    assert ctx.errors == []
    node, parts = norm, leaf_path.split(".")
    if leaf_path.startswith(DEVICE):
        node, parts = norm_devices[DEVICE_HOST[parts[1].removesuffix("[]")]], parts[1:]
    for part in parts:
        node = node[part[:-2]][0] if part.endswith("[]") else node["Ethernet1" if part == "<ifname>" else part]
    return node


def errors_of(intent, devices):
    return _plan.validate(intent, devices)[0]


# -- docs -------------------------------------------------------------------------------------


def test_docs_tables_are_the_schema():
    with open(DOC, encoding="utf-8") as handle:
        text = handle.read()
    assert _schema.rewrite_docs(text) == text, "docs/intent.md differs from _intent/_schema.py: run tools/intent_docs.py"


def test_a_schema_change_shows_in_the_docs_check(monkeypatch):
    with open(DOC, encoding="utf-8") as handle:
        text = handle.read()
    leaves = list(_schema.LEAVES)
    index = next(i for i, leaf in enumerate(leaves) if leaf.path == "roce.data.dscp")
    leaves[index] = leaves[index]._replace(high=62)
    monkeypatch.setattr(_schema, "LEAVES", tuple(leaves))
    new = _schema.rewrite_docs(text)
    assert new != text
    assert "| `data.dscp` | int | 26 | 0-62 | DSCP of RoCE data |" in new


def test_missing_markers_are_refused():
    with pytest.raises(ValueError, match="table 'top'"):
        _schema.rewrite_docs("no markers here")


def test_tool_check_passes_on_the_repo():
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "intent_docs.py"), "--check"], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr


def test_every_table_row_is_rendered_once():
    paths = [leaf.path for leaf in _schema.LEAVES]
    assert len(paths) == len(set(paths))
    with open(DOC, encoding="utf-8") as handle:
        text = handle.read()
    for name in _schema.TABLES:
        rows = _schema.render_table(name).splitlines()[2:]
        assert rows, name
        for row in rows:
            assert text.count(row + "\n") == 1, row


# -- validation -------------------------------------------------------------------------------


def test_schema_leaves_have_consistent_types():
    for leaf in SCHEMA_LEAVES:
        if leaf.type == "bool":
            assert leaf.low is None and leaf.choices is None, leaf.path
            continue
        base_type = "str" if leaf.choices is not None else "int"
        assert leaf.type == (f"{base_type} or null" if leaf.nullable else base_type), leaf.path
        assert leaf.what, leaf.path
        if base_type == "int":
            assert leaf.low is not None and leaf.high is not None and leaf.low <= leaf.high, leaf.path


def test_hand_leaves_cannot_be_driven_from_the_schema():
    hand = next(leaf for leaf in _schema.LEAVES if leaf.check == _schema.HAND)
    with pytest.raises(KeyError, match="by hand"):
        _schema.value(None, {}, hand.path, "x")


@pytest.mark.parametrize("leaf", SCHEMA_LEAVES, ids=lambda leaf: leaf.path)
def test_base_intents_are_valid(leaf):
    assert errors_of(*base(leaf.path)) == []


def test_topology_base_is_valid_and_cables_one_link():
    intent, devices = base("topology.x")
    assert errors_of(intent, devices) == []
    links = _plan.build_plan(intent, devices)["cabling"]["links"]
    assert links == [{"a": {"host": "leaf1", "port": "Ethernet1"}, "b": {"host": "gpu1", "nic": "mlx5_0"}, "rail": 0, "speed": "400G"}]


# Rows whose default is derived (default_doc) are proved by the derivation's own tests in test_intent.py.
@pytest.mark.parametrize("leaf", [leaf for leaf in SCHEMA_LEAVES if leaf.default_doc is None], ids=lambda leaf: leaf.path)
def test_default_is_what_the_plan_gets(leaf):
    intent, devices = base(leaf.path)
    assert normalized(intent, devices, leaf.path) == leaf.default


def outside(leaf) -> list:
    if leaf.type == "bool":
        values = ["true", 1]
    elif leaf.choices is not None and isinstance(leaf.choices[0], int):
        values = [leaf.choices[0] + 1, str(leaf.choices[0])]
    elif leaf.choices is not None:
        values = [leaf.choices[0].upper() + "x", 3]
    else:
        values = [leaf.low - 1, leaf.high + 1, str(leaf.low), True]
    # null is "required" for a required key (test_required_leaves), a value for a nullable one
    return values if leaf.nullable or leaf.default_doc == "required" else [*values, None]


@pytest.mark.parametrize("leaf", [leaf for leaf in _schema.LEAVES if leaf.default_doc == "required" and "." not in leaf.path], ids=lambda leaf: leaf.path)
def test_required_leaves(leaf):
    intent, devices = base("roce.x")
    del intent[leaf.path]
    assert f"lossless_fabric.{leaf.path}: required" in errors_of(intent, devices)


@pytest.mark.parametrize("leaf", RANGED_LEAVES, ids=lambda leaf: leaf.path)
def test_value_outside_is_refused_naming_path_and_value(leaf):
    for value in outside(leaf):
        intent, devices = base(leaf.path)
        shown = put(intent, leaf.path, value, devices)
        errors = errors_of(intent, devices)
        mine = [e for e in errors if e.startswith(shown + ": ")]
        assert mine, (value, errors)
        assert repr(value) in mine[0], (value, mine)
        if leaf.check != _schema.SCHEMA and not leaf.what:
            continue  # the section's own message: path and value are enough
        if leaf.type != "bool" and leaf.choices is None:
            assert mine[0] == f"{shown}: {value!r} is not {leaf.what} ({leaf.low}-{leaf.high})"
        elif leaf.choices is not None:
            assert mine[0].startswith(f"{shown}: {value!r} is not {leaf.what} (")


@pytest.mark.parametrize("leaf", RANGED_LEAVES, ids=lambda leaf: leaf.path)
def test_values_inside_are_accepted(leaf):
    if leaf.type == "bool":
        inside = [True, False]
    elif leaf.choices is not None:
        inside = list(leaf.choices)
    else:
        inside = [leaf.low, leaf.high]
    if leaf.nullable:
        inside.append(None)
    for value in inside:
        intent, devices = base(leaf.path)
        shown = put(intent, leaf.path, value, devices)
        # other rules may still object (cross-key checks); this leaf's own check must not
        own = f"{shown}: {value!r} is not {leaf.what or 'a '} "
        assert not [e for e in errors_of(intent, devices) if e.startswith(own)], value
