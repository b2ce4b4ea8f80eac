# SPDX-License-Identifier: GPL-3.0-or-later
"""Every refusal a platform's renderer can raise, and how the intent refuses the same input first (issue 33 point 1).

An NX-OS watchdog the intent accepted was refused at render time, after four other switches had changed. So: this test
walks every ``raise`` in every ``_platforms/<os>/_render.py`` and requires an entry in REFUSALS for it, either

- ``Intent``: an intent (or device data) that reaches the refusal; ``fabric_plan`` refuses it before any device, naming
  the key, the value and the platform. Where the rule is the platform record's (roce_errors, requires_ports,
  ecn_of_buffer_error: the functions the renderer refuses by), the test also switches the record's rule off and shows
  the renderer refusing the very same plan (the rule and the renderer agree); or
- ``Unreachable``: why no intent fabric_plan accepts can reach it (a range, a choice, the plan's construction), checked
  where a check is cheap.

A new ``raise`` in a renderer fails this test until it is classified. Underneath both, fabric_plan renders every switch
plan (``_switches/_config.render_errors``), so nothing a renderer refuses can reach a device run.
"""

from __future__ import annotations

import ast
import copy
import glob
import os
from collections.abc import Callable
from typing import Any, NamedTuple

import pytest

from ansible_collections.lossless.fabric.plugins.module_utils._intent import _design, _devices, _plan, _schema, _tables
from ansible_collections.lossless.fabric.plugins.module_utils._platforms import _records
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.nxos import _render as nxos_render
from ansible_collections.lossless.fabric.plugins.module_utils._switches import _config

HERE = os.path.dirname(os.path.abspath(__file__))
PLATFORMS_DIR = os.path.join(HERE, "..", "..", "..", "..", "..", "plugins", "module_utils", "_platforms")

PORT = {"eos": "Ethernet1/1", "nvue": "swp1", "junos": "et-0/0/1", "sonic": "Ethernet0", "nxos": "Ethernet1/1"}
INTENT = {"name": "x", "transport": "roce", "roce": {"pfc": {"priorities": [3]}},
          "targets": {"collectives": {"all_reduce_perf": [{"min_size": "1G", "min_busbw": 100}]}}}


class Intent(NamedTuple):
    roce: dict  # merged into the intent's roce section
    device: Callable[[dict], Any] | None  # edits the switch's lossless_fabric_device
    said: str  # in fabric_plan's error: names the key, the value and the platform
    record_rule: bool  # the rule is the record's: switched off, the renderer refuses the same plan


class Unreachable(NamedTuple):
    why: str


def _device(platform: str) -> dict:
    out = {"kind": "switch", "platform": platform, "ports": {PORT[platform]: {"speed": "400G", "cable_length_m": 3}}}
    if platform == "nvue":
        out["release"] = "5.14"
    if _records.registry()[platform].ecn_in_percent_of_queue_buffer:
        out["queue_buffer_bytes"] = 12000000
    return out


def _set(key: str, value: Any) -> Callable[[dict], Any]:
    return lambda device: device.update({key: value})


def _port(key: str, value: Any) -> Callable[[dict], Any]:
    return lambda device: next(iter(device["ports"].values())).update({key: value})


WATCHDOG_TIMES = "the intent's watchdog times are whole milliseconds, 100-5000 and 100-60000 (schema rows roce.pfc.watchdog.*)"
TRUST = "roce.trust takes 'dscp' only (schema row choices), which every renderer maps"
CONSTRUCTED = "the plan's construction (_intent/_plan.py; switch_config's check_plan refuses a hand-written plan without it)"
OWN_LINES = "it parses the renderer's own JSON Patch lines, never input"

REFUSALS: dict[tuple[str, str, str], Intent | Unreachable] = {
    ("eos", "_seconds", "PFC watchdog timer %r is not a number of"): Unreachable(WATCHDOG_TIMES),
    ("eos", "_seconds", "%s; the plan has %d ms"): Intent(
        {"pfc": {"priorities": [3], "watchdog": {"detection_time_ms": 305, "restoration_time_ms": 610}}}, None,
        "lossless_fabric.roce.pfc.watchdog.detection_time_ms: 305: platform eos cannot take it", True),
    ("eos", "_threshold", "ECN threshold %r is not a byte count fro"): Intent(
        {"ecn": {"min_threshold_bytes": 300000000, "max_threshold_bytes": 400000000}}, None,
        "lossless_fabric.roce.ecn.min_threshold_bytes: 300000000: platform eos cannot take it", True),
    ("eos", "_queue_block", "queue block %r is not an EOS queue sub-m"): Unreachable(
        "the plan's queue block is _vendor_eos.QUEUE_BLOCK of the model's ASIC family; the intent refuses an unknown model or family"),
    ("eos", "_watchdog_action", "PFC watchdog action %r has no EOS keywor"): Unreachable(
        "roce.pfc.watchdog.action takes drop or forward (schema row choices), both EOS keywords (_vendor_eos.WATCHDOG_ACTIONS)"),
    ("eos", "_one_line", "value %r carries a control character"): Unreachable(
        "every string in a plan passed the intent's text checks (names by pattern, descriptions by _DESCRIPTION_RE)"),
    ("eos", "render", "plan lacks %s"): Unreachable(CONSTRUCTED),
    ("eos", "render", "cannot render the plan for EOS: %s"): Unreachable("wraps the ValueErrors above, each classified on its own"),
    ("junos", "_watchdog", "junos: watchdog %s %r: %s"): Intent(
        {"pfc": {"priorities": [3], "watchdog": {"detection_time_ms": 4999, "restoration_time_ms": 5000}}}, None,
        "lossless_fabric.roce.pfc.watchdog.detection_time_ms: 4999: platform junos cannot take it", True),
    ("junos", "_ecn_curve", "junos: %s: ECN thresholds are bytes but "): Intent(
        {}, lambda device: device.pop("queue_buffer_bytes"), "lossless_fabric_device.queue_buffer_bytes: required for junos", False),
    ("junos", "_ecn_curve", "junos: %s: %s"): Intent(
        {"ecn": {"min_threshold_bytes": 600000, "max_threshold_bytes": 650000}}, None,
        "lossless_fabric_device.queue_buffer_bytes: 12000000: platform junos cannot take the ECN thresholds of et-0/0/1", True),
    ("junos", "_context", "junos: the plan has no 'junos' section ("): Unreachable(CONSTRUCTED),
    ("junos", "_context", "refusing a name or description Junos wou"): Intent(
        {}, _port("description", 'a"b'), "lossless_fabric_device.ports[et-0/0/1].description: 'a\"b' contains '\"'", False),
    ("nvue", "_context", "trust %r has no NVUE mapping (only %s)"): Unreachable(TRUST),
    ("nvue", "_context", "the plan has no ports"): Intent(
        {}, _set("ports", {}), "lossless_fabric_device.ports: empty: platform nvue sets the lossless class per port", True),
    ("nvue", "_context", "port %r is not an NVUE interface name"): Intent(
        {}, _set("ports", {"eth0": {"speed": "400G"}}), "'eth0' is not a nvue interface name", False),
    ("nvue", "_context", "port %s: a description with a single quo"): Intent(
        {}, _port("description", "it's"), "lossless_fabric_device.ports[swp1].description: \"it's\" contains \"'\"", False),
    ("nvue", "_context", "release: %s"): Intent({}, _set("release", "4.9"), "lossless_fabric_device.release: '4.9' is not a Cumulus Linux", False),
    ("nxos", "_in", "nxos: %s %r is outside NX-OS's %d-%d"): Unreachable(
        "every value it bounds comes from an intent row whose range lies inside NX-OS's (checked below)"),
    ("nxos", "_ecn_groups", "nxos: port %s: ECN thresholds %r are not"): Intent(
        {"ecn": {"min_threshold_bytes": 5000, "max_threshold_bytes": 4000}}, None,
        "lossless_fabric.roce.ecn.min_threshold_bytes: 5000 is not below max_threshold_bytes (4000)", False),
    ("nxos", "_watchdog_word", "nxos: PFC watchdog %s %r has no NX-OS fo"): Intent(
        {"pfc": {"priorities": [3], "watchdog": {"action": "forward"}}}, None,
        "lossless_fabric.roce.pfc.watchdog.action: 'forward': platform nxos cannot take it", True),
    ("nxos", "render_plan", "nxos: trust %r has no NX-OS mapping (the"): Unreachable(TRUST),
    ("nxos", "render_plan", "nxos: the plan has no ports"): Intent(
        {}, _set("ports", {}), "lossless_fabric_device.ports: empty: platform nxos sets the lossless class per port", True),
    ("nxos", "render_plan", "nxos: default traffic class %r: NX-OS's "): Unreachable("the plan's default_traffic_class is always 0 (checked below)"),
    ("nxos", "render_plan", "nxos: the ECN queue %d is not a weighted"): Unreachable(
        "the plan's ECN queue is the RoCE data class, which the plan gives a bandwidth share (weighted) (checked below)"),
    ("nxos", "render_plan", "nxos: port %r is not an NX-OS interface "): Intent(
        {}, _set("ports", {"Eth1/1": {"speed": "400G"}}), "'Eth1/1' is not a nxos interface name", False),
    ("nxos", "render_plan", "nxos: "): Intent(
        {"pfc": {"priorities": [0]}, "data": {"priority": 0}}, None,
        "lossless_fabric.roce.pfc.priorities: [0]: platform nxos cannot take it: PFC priority 0 is the default class", True),
    ("nxos", "render_plan", "nxos: PFC priority %d is not a traffic c"): Unreachable("the plan makes a traffic class of every PFC priority (checked below)"),
    ("sonic", "_op", "sonic: %r is not a CONFIG_DB table, key "): Unreachable(
        "tables and fields are the renderer's own names; keys are port names the intent matched to Ethernet<N>"),
    ("sonic", "_remove", "sonic: %r is not a CONFIG_DB table, key "): Unreachable(
        "a fabric mode's removes (issue 36): the renderer's own table and field names, keys are port names the intent matched"),
    ("sonic", "_ops", "sonic: %r is not a JSON Patch operation"): Unreachable(OWN_LINES),
    ("sonic", "_ops", "sonic: %r is not a /TABLE/key or /TABLE/"): Unreachable(OWN_LINES),
    ("sonic", "_ops", "sonic: %r is not an add of one CONFIG_DB"): Unreachable(OWN_LINES),
    ("sonic", "_ops", "sonic: %r is not a /TABLE/key/field path"): Unreachable(OWN_LINES),
    ("sonic", "render", "trust %r has no SONiC mapping (only %s)"): Unreachable(TRUST),
    ("sonic", "render", "the plan has no ports"): Intent(
        {}, _set("ports", {}), "lossless_fabric_device.ports: empty: platform sonic sets the lossless class per port", True),
    ("sonic", "render", "release %r is not one of %s"): Intent(
        {}, _set("release", "201911"), "lossless_fabric_device.release: '201911' is not a SONiC release branch", False),
    ("sonic", "render", "problem"): Intent(
        {}, _set("buffer_model", "traditional"), "lossless_fabric_device.release: release 202505, HwSKU (HwSKU not given): no documented path", False),
    ("sonic", "render", "buffer_model %r is not one of %s"): Intent(
        {}, _set("buffer_model", "x"), "lossless_fabric_device.buffer_model: 'x' is not a SONiC buffer model", False),
    ("sonic", "render", "port %r is not a SONiC port name (%s)"): Intent(
        {}, _set("ports", {"Eth0": {"speed": "400G"}}), "'Eth0' is not a sonic interface name", False),
    ("sonic", "render", "traffic class %d: DWRR weight %d is outs"): Unreachable(
        "roce.data.bandwidth_percent is 1-99 (schema row) and the other classes share the rest, each at least 1 (checked below)"),
    ("sonic", "render", "port %s: WRED profile name %r is longer "): Unreachable(
        "LF_ECN_<min>_<max>_<probability>: thresholds are at most 10 digits (UINT32, schema rows) and the probability 3: 32 characters"),
    ("sonic", "render", "port %s: speed %r is not a speed in G (t"): Unreachable("the intent parses every speed to whole gigabits (check_speed)"),
}


def _raise_sites() -> list[tuple[str, str, str]]:
    """(platform, function, the first literal of the message) of every raise in every _platforms/<os>/_render.py."""
    found = []
    for path in sorted(glob.glob(os.path.join(PLATFORMS_DIR, "*", "_render.py"))):
        platform = os.path.basename(os.path.dirname(path))
        tree = ast.parse(open(path, encoding="utf-8").read())
        for function in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)):
            for node in ast.walk(function):
                if not (isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and node.exc.args):
                    continue
                message = node.exc.args[1] if isinstance(node.exc.func, ast.Attribute) and len(node.exc.args) > 1 else node.exc.args[0]
                literal = next((c.value for c in ast.walk(message) if isinstance(c, ast.Constant) and isinstance(c.value, str)), None)
                found.append((platform, function.name, (literal or ast.unparse(message))[:40]))
    return found


def test_every_render_refusal_is_classified():
    sites = _raise_sites()
    assert {p for p, _f, _m in sites} == set(_records.registry()), "a platform's renderer was not found"
    missing = [site for site in sites if site not in REFUSALS]
    assert not missing, "render-time refusals with no intent rule or reason (add them to REFUSALS): %s" % missing
    stale = [key for key in REFUSALS if key not in sites]
    assert not stale, "REFUSALS names refusals no renderer raises any more: %s" % stale


def _build(platform: str, case: Intent) -> dict:
    intent = copy.deepcopy(INTENT)
    intent["roce"].update(copy.deepcopy(case.roce))
    device = _device(platform)
    if case.device:
        case.device(device)
    return _plan.build_plan(intent, {"sw1": device})


INTENT_CASES = [(key, case) for key, case in REFUSALS.items() if isinstance(case, Intent)]


@pytest.mark.parametrize("key, case", INTENT_CASES, ids=["%s-%s-%d" % (k[0], k[1], i) for i, (k, _c) in enumerate(INTENT_CASES)])
def test_the_intent_refuses_first_naming_the_key_the_value_and_the_platform(key, case, monkeypatch):
    platform = key[0]
    with pytest.raises(_tables.IntentError) as err:
        _build(platform, case)
    said = "\n".join(err.value.errors)
    assert case.said in said, said
    # a device's rule names the switch (the intent's own ranges name only the key)
    assert "sw1: " in said or said.startswith("lossless_fabric."), said
    if not case.record_rule:
        return
    # The record's rule off: the intent lets the plan through, and the renderer refuses the very same plan.
    relaxed = {name: record._replace(roce_errors=None, requires_ports=False, ecn_of_buffer_error=None) for name, record in _records.registry().items()}
    monkeypatch.setattr(_devices, "platforms", lambda: relaxed)
    monkeypatch.setattr(_design, "platforms", lambda: relaxed)  # the design check reads the same record rules
    plan = _build(platform, case)
    refused = _config.render_errors(plan["devices"])
    assert refused and refused[0].startswith("sw1: platform %s cannot take this plan: " % platform), refused


def test_what_the_unreachable_refusals_rely_on():
    rows = _schema.BY_PATH
    # nxos _in: every bounded value's intent range lies inside NX-OS's
    assert nxos_render.NETQOS_MTU[0] <= rows["roce.mtu.switch"].low and rows["roce.mtu.switch"].high <= nxos_render.NETQOS_MTU[1]
    assert nxos_render.INTERFACE_MTU[0] <= rows["roce.mtu.switch"].low and rows["roce.mtu.switch"].high <= nxos_render.INTERFACE_MTU[1]
    assert nxos_render.DSCP == (0, 63) and (rows["roce.data.dscp"].low, rows["roce.data.dscp"].high) == (0, 63)
    assert nxos_render.QOS_GROUP == (0, 7) == nxos_render.PFC_COS and (rows["roce.data.priority"].low, rows["roce.data.priority"].high) == (0, 7)
    assert nxos_render.DROP_PROBABILITY[0] <= rows["roce.ecn.max_probability_percent"].low
    assert rows["roce.ecn.max_probability_percent"].high <= nxos_render.DROP_PROBABILITY[1]
    # SONiC's WRED profile name at its longest
    assert len("LF_ECN_%d_%d_%d" % (rows["roce.ecn.min_threshold_bytes"].high, rows["roce.ecn.max_threshold_bytes"].high, 100)) <= 32
    # the plan's construction, at the ends of the data share, on every platform
    for share in (rows["roce.data.bandwidth_percent"].low, rows["roce.data.bandwidth_percent"].high):
        intent = copy.deepcopy(INTENT)
        intent["roce"]["data"] = {"bandwidth_percent": share}
        plan = _plan.build_plan(intent, {p: _device(p) for p in PORT})
        assert _config.render_errors(plan["devices"]) == []
        for device in plan["devices"].values():
            assert device["default_traffic_class"] == 0
            classes = {int(tc): spec for tc, spec in device["traffic_classes"].items()}
            assert not classes[int(device["ecn_queue"])]["strict"]
            assert all(int(p) in classes for port in device["ports"].values() for p in port["pfc_priorities"])
            assert all(spec["strict"] or spec["bandwidth_percent"] >= 1 for spec in classes.values())


def test_fabric_plan_renders_every_switch_plan_before_any_device():
    # the net under the intent's rules: a plan a renderer refuses is a plan error, naming the switch and the platform
    plan = _plan.build_plan(INTENT, {"sw1": _device("nxos")})
    broken = copy.deepcopy(plan["devices"])
    broken["sw1"]["default_traffic_class"] = 2
    assert [e[:94] for e in _config.render_errors(broken)] == [
        "sw1: platform nxos cannot take this plan: nxos: default traffic class 2: NX-OS's default class"]
