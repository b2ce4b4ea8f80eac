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

from ansible_collections.lossless.fabric.plugins.module_utils._intent import _plan, _schema, _tables

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))))
DOC = os.path.join(ROOT, "docs", "intent.md")
SCHEMA_LEAVES = [leaf for leaf in _schema.LEAVES if leaf.check == _schema.SCHEMA]
# Every leaf with a machine-readable range or choices, whoever checks it (the schema or the section's code);
# a mapping's choices are its keys (targets.collectives: test_collectives_are_the_rows_choices).
RANGED_LEAVES = [leaf for leaf in _schema.LEAVES if (leaf.low is not None or leaf.choices is not None) and leaf.type != "map"]

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
    ib_tenant = leaf_path.startswith(("tenants[].partition", "tenants[].qos_level"))
    transport = "infiniband" if leaf_path.startswith(("infiniband.", DEVICE + "role")) or ib_tenant else "roce"
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
    if leaf_path.startswith("tenants[]."):
        # one tenant with only its required keys (an InfiniBand one needs its partition's P_Key and its hosts' GUIDs)
        intent["tenants"] = [{"name": "t1", "hosts": ["gpu1"]}]
        if transport == "infiniband":
            intent["tenants"][0]["partition"] = {"pkey": "0x8002"}
            devices["gpu1"]["nics"][0]["guid"] = "0x0c42a10300010001"
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
            name = "all_reduce_perf" if part == "<c>[]" else part[:-2]  # a collective's targets
            node = node.setdefault(name, [{}])[0]
            shown.append(name + "[0]")
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


# Rows whose default is derived (a marker) are proved by the derivation's own tests in test_intent.py.
@pytest.mark.parametrize("leaf", [leaf for leaf in SCHEMA_LEAVES if leaf.has_default()], ids=lambda leaf: leaf.path)
def test_default_is_what_the_plan_gets(leaf):
    intent, devices = base(leaf.path)
    assert normalized(intent, devices, leaf.path) == leaf.default


def as_yaml(value):
    """A row's default as validation returns it: tuples (immutable rows) are lists."""
    if isinstance(value, (list, tuple)):
        return [as_yaml(item) for item in value]
    if isinstance(value, dict):
        return {key: as_yaml(item) for key, item in value.items()}
    return value


# Rows the section checks by hand, whose data default validation returns unchanged (in base()'s intent).
HAND_DEFAULTS = [
    "roce.pfc.priorities",
    "infiniband.sm.routing_engine",
    "infiniband.sm.root_guids",
    "infiniband.qos.vlarb_high",
    "infiniband.qos.vlarb_low",
    "infiniband.qos.sl2vl.ca",
    "infiniband.qos.sl2vl.switch",
    "infiniband.qos.levels",
    "targets.tolerance_percent",
    "targets.require_gdr",
    "targets.collectives",
    "kubernetes.namespace",
    "kubernetes.node_selector",
    "kubernetes.device_plugin.image",
    "kubernetes.multi_nic_cni.namespace",
    "kubernetes.multi_nic_cni.version",
    "kubernetes.multi_nic_cni.network.name",
    "kubernetes.multi_nic_cni.network.subnet",
    "kubernetes.multi_nic_cni.network.master_nets",
    "kubernetes.multi_nic_cni.network.namespaces",
    "topology.leaves_per_rail",
    "topology.spines",
    "topology.uplinks_per_spine",
    "topology.names.host",
    "topology.names.spine",
    "topology.ports.leaf_hosts.first",
    "topology.ports.leaf_spines.name",
    "topology.ports.spine_leaves.name",
    "topology.ports.spine_leaves.first",
]


@pytest.mark.parametrize("path", HAND_DEFAULTS)
def test_hand_checked_default_is_what_the_plan_gets(path):
    leaf = _schema.BY_PATH[path]
    assert leaf.check == _schema.HAND and leaf.has_default(), path
    intent, devices = base(path)
    node = intent
    for part in path.split(".")[:-1]:
        node = node.get(part, {})
    node.pop(path.split(".")[-1], None)  # base() gives some keys (sm.routing_engine): take the row's default
    assert normalized(intent, devices, path) == as_yaml(leaf.default)


def test_default_partitions_are_the_rows():
    intent, devices = base("infiniband.x")
    del intent["infiniband"]["sm"]
    norm = _plan._normalize(intent, devices)[0]
    assert norm["infiniband"]["partitions"] == as_yaml(_schema.BY_PATH["infiniband.partitions"].default)


def is_list(leaf) -> bool:
    return leaf.min_len is not None


def numbers_outside(leaf) -> list:
    values = []
    if leaf.low is not None:
        values.append(leaf.low if leaf.exclusive else leaf.low - 1)
    if leaf.high is not None:
        values.append(leaf.high if leaf.exclusive else leaf.high + 1)
    return values


def outside(leaf) -> list:
    if leaf.type == "bool":
        values = ["true", 1]
    elif leaf.choices is not None and isinstance(leaf.choices[0], int):
        values = [leaf.choices[0] + 1, str(leaf.choices[0])]
    elif leaf.choices is not None:
        values = [leaf.choices[0].upper() + "x", 3]
    else:
        values = [*numbers_outside(leaf), True]
        if leaf.type in ("int", "int or null"):
            values.append(str(leaf.low))  # a size string ('1K') is a valid int-or-size
    # null is "required" for a required key (test_required_leaves), "absent" for a key with no default, a value for a nullable one
    return values if leaf.nullable or not leaf.has_default() else [*values, None]


def placed(leaf, value):
    """``value`` where validation checks it: a list row gets it as its first entry (of its default list)."""
    if not is_list(leaf):
        return value
    entries = as_yaml(leaf.default) if leaf.has_default() else [None] * leaf.min_len
    return [value, *entries[1:]] if entries else [value]


@pytest.mark.parametrize("leaf", [leaf for leaf in _schema.LEAVES if leaf.default is _schema.REQUIRED and "." not in leaf.path], ids=lambda leaf: leaf.path)
def test_required_leaves(leaf):
    intent, devices = base("roce.x")
    del intent[leaf.path]
    assert f"lossless_fabric.{leaf.path}: required" in errors_of(intent, devices)


@pytest.mark.parametrize("leaf", RANGED_LEAVES, ids=lambda leaf: leaf.path)
def test_value_outside_is_refused_naming_path_and_value(leaf):
    for value in outside(leaf):
        intent, devices = base(leaf.path)
        shown = put(intent, leaf.path, placed(leaf, value), devices) + ("[0]" if is_list(leaf) else "")
        errors = errors_of(intent, devices)
        mine = [e for e in errors if e.startswith(shown + ": ")]
        assert mine, (value, errors)
        assert repr(value) in mine[0], (value, mine)
        if leaf.check != _schema.SCHEMA and not leaf.what:
            continue  # the section's own message: path and value are enough
        if leaf.type != "bool" and leaf.choices is None:
            assert mine[0] == f"{shown}: {value!r} is not {leaf.what} ({_schema._bounds(leaf)})"
        elif leaf.choices is not None:
            assert mine[0].startswith(f"{shown}: {value!r} is not {leaf.what} (")


@pytest.mark.parametrize("leaf", RANGED_LEAVES, ids=lambda leaf: leaf.path)
def test_values_inside_are_accepted(leaf):
    if leaf.type == "bool":
        inside = [True, False]
    elif leaf.choices is not None:
        inside = list(leaf.choices)
    elif leaf.exclusive:
        inside = [leaf.low + 0.5] + ([leaf.high - 0.5] if leaf.high is not None else [])
    else:
        inside = [leaf.low] + ([leaf.high] if leaf.high is not None else [])
    if leaf.nullable:
        inside.append(None)
    for value in inside:
        intent, devices = base(leaf.path)
        shown = put(intent, leaf.path, placed(leaf, value), devices) + ("[0]" if is_list(leaf) else "")
        # other rules may still object (cross-key checks); this leaf's own check must not
        own = f"{shown}: {value!r} is not {leaf.what or 'a '} "
        assert not [e for e in errors_of(intent, devices) if e.startswith(own)], value


# -- every row's default and range are data (or say why not), and validation reads them ---------


def row_problems(leaf) -> list[str]:
    """What keeps ``leaf`` from giving its default and range as data or as an explicit marker."""
    problems = []
    if leaf.default is _schema.UNSET:
        problems.append("no default: give the value (None is null) or REQUIRED, DERIVED or ABSENT")
    elif leaf.default is _schema.DERIVED and not leaf.default_doc:
        problems.append("a derived default needs default_doc saying how it is derived")
    if leaf.has_range():
        if leaf.range_is is not None:
            problems.append(f"range data and the marker {leaf.range_is!r}")
    elif leaf.range_is not in _schema.RANGE_MARKS:
        problems.append("no range: give low/high, choices or min_len/max_len, or range_is RULE, DERIVED or ANY")
    elif leaf.range_is is not _schema.ANY and not leaf.range_doc:
        problems.append(f"range_is {leaf.range_is!r} needs range_doc saying which rule")
    if leaf.low is not None and leaf.high is not None and leaf.low > leaf.high:
        problems.append(f"low {leaf.low} above high {leaf.high}")
    if ("null" in leaf.type) != leaf.nullable and not leaf.path.startswith("topology."):
        problems.append(f"type {leaf.type!r} but nullable={leaf.nullable}")
    # the default is inside the row's own range
    if leaf.has_default() and leaf.default is not None and leaf.type != "map":
        entries = list(leaf.default) if leaf.min_len is not None else [leaf.default]
        if leaf.min_len is not None and not leaf.min_len <= len(entries) <= (leaf.max_len or len(entries)):
            problems.append(f"default {leaf.default!r}: {len(entries)} entries, outside {leaf.min_len}-{leaf.max_len}")
        for entry in entries:
            if isinstance(entry, int) and not isinstance(entry, bool) and leaf.outside(entry):
                problems.append(f"default entry {entry!r} outside {_schema._bounds(leaf)}")
            if leaf.choices is not None and not isinstance(entry, dict) and entry not in leaf.choices:
                problems.append(f"default entry {entry!r} not among the choices")
    return problems


@pytest.mark.parametrize("leaf", _schema.LEAVES, ids=lambda leaf: leaf.path)
def test_every_row_gives_default_and_range_as_data_or_a_marker(leaf):
    assert row_problems(leaf) == []


def test_a_row_without_default_or_range_is_refused():
    assert len(row_problems(_schema.Leaf("x.y", "int"))) == 2
    assert row_problems(_schema.Leaf("x.y", "int", _schema.DERIVED, range_is=_schema.DERIVED)) == [
        "a derived default needs default_doc saying how it is derived",
        "range_is Mark('derived') needs range_doc saying which rule",
    ]
    assert row_problems(_schema.Leaf("x.y", "int", 5, low=6, high=9)) == ["default entry 5 outside 6-9"]
    assert row_problems(_schema.Leaf("x.y", "int", _schema.ABSENT, low=1, high=2)) == []


def test_docs_cells_come_from_the_data():
    leaf = _schema.BY_PATH["roce.pfc.priorities"]
    assert _schema.default_cell(leaf) == "`[3]`"
    assert _schema.range_cell(leaf) == "1-8 entries; each 0-7, unique"
    assert _schema.range_cell(leaf._replace(max_len=4, range_doc=None)) == "1-4 entries; each 0-7"
    assert _schema.range_cell(_schema.BY_PATH["targets.tolerance_percent"]) == "0 < x < 100"
    assert _schema.range_cell(_schema.BY_PATH["targets.collectives.<c>[].min_busbw"]) == "> 0"
    assert _schema.default_cell(_schema.BY_PATH["kubernetes.node_selector"]).startswith('`{feature.node.kubernetes.io/pci-15b3.present: "true"}`')
    assert _schema.default_cell(_schema.BY_PATH["infiniband.compute_partition"]) == "derived: the first partition"
    assert _schema.default_cell(_schema.BY_PATH["topology.scalable_units"]) == "required"


def test_collectives_are_the_rows_choices():
    """The docs list every collective the validator takes (they listed 10 of its 11: no alltoallv_perf)."""
    leaf = _schema.BY_PATH["targets.collectives"]
    assert leaf.choices == _tables.COLLECTIVES
    assert "alltoallv_perf" in leaf.choices
    cell = _schema.range_cell(leaf)
    with open(DOC, encoding="utf-8") as handle:
        text = handle.read()
    for name in _tables.COLLECTIVES:
        assert f"`{name}`" in cell
        intent, devices = base("targets.x")
        intent["targets"] = {"collectives": {name: [{"min_size": "1M", "min_busbw": 1}]}}
        assert errors_of(intent, devices) == [], name
    assert f"| `collectives` | map | `{{}}` | {cell} |" in text
    intent, devices = base("targets.x")
    intent["targets"] = {"collectives": {"allreduce_perf_x": [{"min_size": 1, "min_busbw": 1}]}}
    assert [e for e in errors_of(intent, devices) if "allreduce_perf_x" in e and "unknown collective" in e]


# Numeric rows from every section, schema-checked and hand-checked alike.
NUMERIC_SAMPLE = [
    "roce.data.dscp",
    "roce.pfc.priorities",
    "roce.pfc.watchdog.detection_time_ms",
    "infiniband.sm.lmc",
    "infiniband.qos.sl2vl.ca",
    "infiniband.qos.vlarb_low[].weight",
    "infiniband.qos.levels[].sl",
    "infiniband.partitions[].rate",
    "targets.tolerance_percent",
    "targets.collectives.<c>[].min_busbw",
    "kubernetes.device_plugin.resources[].rdma_hca_max",
    "kubernetes.multi_nic_cni.network.mtu",
    "topology.rails",
    "topology.spines",
    "topology.ports.leaf_hosts.first",
    "lossless_fabric_device.queue_buffer_bytes",
    "lossless_fabric_device.nics[].rail",
    "lossless_fabric_device.nics[].vfs",
    "lossless_fabric_device.gpus",
]


def own_errors(leaf, value) -> list[str]:
    intent, devices = base(leaf.path)
    shown = put(intent, leaf.path, placed(leaf, value), devices) + ("[0]" if is_list(leaf) else "")
    return [e for e in errors_of(intent, devices) if e.startswith(shown + ": ")]


@pytest.mark.parametrize("path", NUMERIC_SAMPLE)
def test_just_outside_the_rows_range_is_refused(path):
    leaf = _schema.BY_PATH[path]
    assert leaf.low is not None
    for value in numbers_outside(leaf):
        assert own_errors(leaf, value), value


@pytest.mark.parametrize("path", NUMERIC_SAMPLE)
def test_validation_reads_the_range_from_the_row(path, monkeypatch):
    """Narrow the row by one: the bound it gave up is refused, and the message shows the row's new range."""
    leaf = _schema.BY_PATH[path]
    step = 0.5 if leaf.exclusive else 0
    narrowed = [(leaf._replace(low=leaf.low + 1), leaf.low + step)]
    if leaf.high is not None:
        narrowed.append((leaf._replace(high=leaf.high - 1), leaf.high - step))
    for row, value in narrowed:
        assert not [e for e in own_errors(leaf, value) if _schema._bounds(leaf) in e], value  # inside the real row
        monkeypatch.setitem(_schema.BY_PATH, path, row)
        assert [e for e in own_errors(row, value) if _schema._bounds(row) in e], (value, own_errors(row, value))
        monkeypatch.setitem(_schema.BY_PATH, path, leaf)


@pytest.mark.parametrize(
    ("path", "default"),
    [
        ("roce.data.bandwidth_percent", 40),
        ("roce.pfc.priorities", (3, 4)),
        ("infiniband.sm.routing_engine", ("minhop",)),
        ("infiniband.qos.sl2vl.switch", (0,) * 16),
        ("targets.tolerance_percent", 7),
        ("targets.require_gdr", False),
        ("topology.uplinks_per_spine", 2),
        ("lossless_fabric_device.gpus", 4),
    ],
)
def test_validation_reads_the_default_from_the_row(path, default, monkeypatch):
    leaf = _schema.BY_PATH[path]
    monkeypatch.setitem(_schema.BY_PATH, path, leaf._replace(default=default))
    intent, devices = base(path)
    node = intent
    for part in path.split(".")[:-1]:
        node = node.get(part, {}) if not path.startswith(DEVICE) else node
    node.pop(path.split(".")[-1], None)
    assert normalized(intent, devices, path) == as_yaml(default)
