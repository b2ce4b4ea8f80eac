# SPDX-License-Identifier: GPL-3.0-or-later
"""The driver contract (_platforms/_base.py), checked for every driver in the registry.

Parametrised over _drivers.DRIVERS: a platform added there (docs/adding-a-platform.md) is
checked by this file with no edit. The per-platform files (test_eos.py, test_nvue.py,
test_junos.py, test_links.py, test_*_counters.py) keep the exact lines, the real device
output and the simulator sessions; this file keeps what every driver must do alike.
"""

from __future__ import annotations

import importlib
import inspect
import re

import pytest

from ansible_collections.lossless.fabric.plugins.module_utils._intent import _derive, _tables
from ansible_collections.lossless.fabric.plugins.module_utils._intent import _plan as _intent_plan  # _plan is this file's helper
from ansible_collections.lossless.fabric.plugins.module_utils._platforms import _base, _drivers, _records

NAMES = sorted(_drivers.DRIVERS)
REGISTRY = _records.registry()

# Output no switch prints for any command: every reader must refuse it.
GARBAGE = "%% this is not output of any known form\nfoo bar 1 2 3\n"

# Every method of the contract a driver must implement (_base.Driver raises NotImplementedError for each).
ABSTRACT = sorted(
    name
    for name, member in vars(_base.Driver).items()
    if callable(getattr(member, "__func__", member)) and "raise NotImplementedError" in inspect.getsource(getattr(member, "__func__", member))
)


def _driver(name):
    return _drivers.driver_class(name)


def _plan(name, **roce):
    """The plan build_plan gives one switch of this platform with one port (the record's example name)."""
    record = REGISTRY[name]
    device = {"kind": "switch", "platform": name, "ports": {record.interface_example: {"speed": "400G", "description": "gpu1 mlx5_0"}}}
    if record.ecn_in_percent_of_queue_buffer:
        device["queue_buffer_bytes"] = 12_000_000
    return _intent_plan.build_plan({"name": "lab", "transport": "roce", "roce": roce}, {"sw1": device})["devices"]["sw1"]


def test_the_contract_has_its_methods():
    # The list this file checks is read from _base; it must hold the contract's core, or the check below is empty.
    assert {"render", "parse", "missing_lines", "load", "commit", "confirm", "rollback", "link_commands", "parse_links",
            "counter_commands", "parse_counters", "read_counters"} <= set(ABSTRACT)


def test_the_registry_is_the_drivers_and_the_planned():
    assert list(REGISTRY) == [*_drivers.DRIVERS, *(record.name for record in _records.PLANNED)]
    assert _tables.PLATFORMS == REGISTRY
    assert all(not record.supported for record in _records.PLANNED)


# --- the record -------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_record_is_valid(name):
    record = importlib.import_module(_drivers.DRIVERS[name]).PLATFORM
    assert isinstance(record, _base.Platform)
    assert record is _records.registry()[name]  # the driver publishes the registry's record
    assert record.name == name == _driver(name).platform
    assert record.supported is True
    assert isinstance(_driver(name).device_type, str) and _driver(name).device_type
    pattern = re.compile(record.interface_pattern, re.ASCII)
    assert pattern.fullmatch(record.interface_example)
    # ASCII digits only: the pattern must not take a non-ASCII digit or a name with a second command.
    assert not re.fullmatch(record.interface_pattern, record.interface_example.replace("1", "\u0661").replace("0", "\u0660"), re.ASCII)
    assert not pattern.fullmatch(record.interface_example + "\n")
    assert not pattern.fullmatch(record.interface_example + " ; reload")
    assert isinstance(record.max_mtu, int) and not isinstance(record.max_mtu, bool) and 1500 <= record.max_mtu <= 9216
    assert isinstance(record.max_mtu_why, str) and "\n" not in record.max_mtu_why
    assert isinstance(record.ecn_in_percent_of_queue_buffer, bool)
    for note in record.notes:
        assert note.format(host="h", dscp=26, priority=3)
    shape = {"min_threshold_bytes", "max_threshold_bytes", "max_probability_percent"}
    if record.ecn_in_percent_of_queue_buffer:
        assert set(record.ecn_defaults_of_buffer(12_000_000)) == shape
    else:
        assert record.ecn_defaults_of_buffer is None
    if record.ecn_defaults is not None:
        try:
            assert set(record.ecn_defaults(400)) == shape
        except ValueError as exc:  # no byte table (Junos): the refusal names the platform
            assert str(exc).startswith(name + ": ") and record.ecn_in_percent_of_queue_buffer
        if not record.ecn_in_percent_of_queue_buffer:  # the intent reaches the table through the record
            assert _derive.ecn_defaults(400, name) == record.ecn_defaults(400)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("method", ABSTRACT)
def test_driver_implements_the_contract(name, method):
    assert getattr(_driver(name), method) is not getattr(_base.Driver, method), f"{name}: Driver.{method} is the base's NotImplementedError"
    base_static = isinstance(inspect.getattr_static(_base.Driver, method), staticmethod)
    assert isinstance(inspect.getattr_static(_driver(name), method), staticmethod) == base_static, f"{name}: Driver.{method} static or not as in _base"


# --- render / parse / missing_lines -----------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_render_parse_round_trip(name):
    plan = _plan(name)
    lines = _driver(name).render(plan)
    assert lines and all(isinstance(line, str) for line in lines)
    assert not [line for line in lines if any(ord(ch) < 32 or ord(ch) == 127 for ch in line)]
    assert _driver(name).render(plan) == lines  # stable
    parsed = _driver(name).parse(_driver(name).running_of(lines))
    port = next(iter(plan["ports"]))
    assert parsed["dscp_map"] == plan["dscp_map"]
    intf = parsed["interfaces"][port]
    assert intf["mtu"] == plan["mtu"]
    assert intf["trust"] == plan["trust"]
    assert intf["pfc_enabled"] is True
    assert intf["pfc_priorities"] == plan["pfc_priorities"]
    assert intf["strict_queues"] == [int(tc) for tc, spec in plan["traffic_classes"].items() if spec["strict"]]
    # Every weighted class of the plan has a share; the numbers are the platform's (Junos reserves
    # some for its own forwarding classes, test_junos.py checks them), so only the classes are common.
    assert {tc for tc, spec in plan["traffic_classes"].items() if spec["bandwidth_percent"] is not None} <= set(intf["bandwidth_percent"])
    assert sorted(intf["ecn"]) == [str(plan["ecn_queue"])]
    assert intf["description"] == plan["ports"][port]["description"]
    assert parsed["watchdog"]["enabled"] is plan["watchdog"]["enabled"]
    # NX-OS switches the watchdog on or off only (its times have no sourced CLI syntax, docs/vendor-nxos.md): not read.
    assert parsed["watchdog"]["detection_time_ms"] == (None if name == "nxos" else plan["watchdog"]["detection_time_ms"])


@pytest.mark.parametrize("name", NAMES)
def test_missing_lines_of_the_rendered_config_is_empty(name):
    lines = _driver(name).render(_plan(name))
    assert _driver(name).missing_lines(lines, _driver(name).running_of(lines)) == []


@pytest.mark.parametrize("name", NAMES)
def test_missing_lines_sees_a_changed_value(name):
    driver = _driver(name)
    have = driver.running_of(driver.render(_plan(name)))
    want = driver.render(_plan(name, mtu={"switch": 9000, "host": 8000}))
    missing = driver.missing_lines(want, have)
    assert missing and all("9000" in line or "9014" in line for line in missing), missing  # Junos' media MTU: 9000 + 14


@pytest.mark.parametrize("name", NAMES)
def test_parse_refuses_unknown_text(name):
    with pytest.raises(ValueError, match=name):
        _driver(name).parse(GARBAGE)


# --- links ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_link_commands_are_read_only_show_commands(name):
    commands = _driver(name).link_commands([REGISTRY[name].interface_example])
    assert commands and all(isinstance(c, str) and "show" in c.split()[:2] and "\n" not in c for c in commands)


@pytest.mark.parametrize("name", NAMES)
def test_parse_links_refuses_unknown_output(name):
    commands = _driver(name).link_commands([REGISTRY[name].interface_example])
    with pytest.raises(_base.LinkFormError) as caught:
        _driver(name).parse_links({command: GARBAGE for command in commands})
    assert caught.value.platform == name and str(caught.value).startswith(name + ": ")


# --- counters ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_counter_commands_are_read_only_show_commands(name):
    commands = _driver(name).counter_commands([REGISTRY[name].interface_example])
    assert commands and all(isinstance(c, str) and "show" in c.split()[:2] and "\n" not in c for c in commands)


@pytest.mark.parametrize("name", NAMES)
def test_parse_counters_refuses_unknown_output(name):
    commands = _driver(name).counter_commands([REGISTRY[name].interface_example])
    ports, errors = _driver(name).parse_counters({command: GARBAGE for command in commands})
    assert ports == {}
    assert sorted(errors) == sorted(commands)


@pytest.mark.parametrize("name", NAMES)
def test_parse_counters_reports_an_empty_answer(name):
    commands = _driver(name).counter_commands([REGISTRY[name].interface_example])
    ports, errors = _driver(name).parse_counters({command: "" for command in commands})
    assert ports == {} and sorted(errors) == sorted(commands)


# --- what names the platforms outside the drivers ---------------------------------------------------


@pytest.mark.parametrize("module", ["switch_config", "switch_counters", "switch_links"])
def test_module_docs_name_every_driver(module):
    # ansible-doc and sanity read DOCUMENTATION with its fragments merged, not the argument spec: the platform
    # option and attribute come from doc fragment _switch_platform, written from the registry.
    import importlib  # pylint: disable=import-outside-toplevel

    import yaml  # pylint: disable=import-outside-toplevel

    prefix = "ansible_collections.lossless.fabric.plugins"
    doc = yaml.safe_load(importlib.import_module("%s.modules.%s" % (prefix, module)).DOCUMENTATION)
    assert "platform" not in (doc.get("options") or {}) and "platform" not in (doc.get("attributes") or {}), "written from the registry"
    for ref in doc["extends_documentation_fragment"]:
        parts = ref[len("lossless.fabric."):].split(".")
        fragment = importlib.import_module("%s.doc_fragments.%s" % (prefix, parts[0])).ModuleDocFragment
        piece = yaml.safe_load(getattr(fragment, parts[1].upper() if len(parts) > 1 else "DOCUMENTATION"))
        for key in ("options", "attributes"):
            doc.setdefault(key, {}).update(piece.get(key) or {})
    assert doc["options"]["platform"]["choices"] == NAMES
    assert sorted(doc["attributes"]["platform"]["platforms"]) == NAMES
