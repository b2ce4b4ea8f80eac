# SPDX-License-Identifier: GPL-3.0-or-later
"""The plan contract (_intent/_contract.py): every plan build_plan makes has the keys its type declares.

The consumers (switch_config's check_plan, nic_qos's validate_plan) read their key lists from the
contract, so a key the plan gains or loses without the contract would go unchecked: this file is
what keeps the two together.
"""

from __future__ import annotations

import ast
import pathlib

import pytest

from ansible_collections.lossless.fabric.plugins.module_utils._intent import _contract, _plan
from ansible_collections.lossless.fabric.plugins.module_utils._platforms import _records

REGISTRY = _records.registry()
CONTRACT = pathlib.Path(_contract.__file__)


def _fits(value, plan_type, where):
    """Every required key present, no key the type does not declare."""
    assert set(_contract.required(plan_type)) <= set(value), (where, sorted(set(_contract.required(plan_type)) - set(value)))
    assert set(value) <= set(_contract.keys(plan_type)), (where, sorted(set(value) - set(_contract.keys(plan_type))))


def _switch(name):
    record = REGISTRY[name]
    device = {"kind": "switch", "platform": name, "ports": {record.interface_example: {"speed": "400G", "description": "gpu1 mlx5_0"}}}
    if record.ecn_in_percent_of_queue_buffer:
        device["queue_buffer_bytes"] = 12_000_000
    if name == "junos":
        device["model"] = "qfx5220"
    return device


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_a_switch_plan_is_a_switch_plan(name):
    devices = {"sw1": _switch(name), "gpu1": {"kind": "host", "nics": [{"name": "mlx5_0", "netdev": "eth2", "speed": "400G"}]}}
    plans = _plan.build_plan({"name": "lab", "transport": "roce"}, devices)["devices"]
    switch = plans["sw1"]
    _fits(switch, _contract.SwitchPlan, name)
    assert set(_contract.keys(_contract.SwitchQos)) <= set(switch)  # build_plan gives the whole model, optional keys too
    for ifname, port in switch["ports"].items():
        _fits(port, _contract.SwitchPort, ifname)
        _fits(port["ecn"], _contract.PortEcn, ifname)
        _fits(port["headroom"], _contract.PortHeadroom, ifname)
    for tc, cls in switch["traffic_classes"].items():
        _fits(cls, _contract.TrafficClass, tc)
    _fits(switch["cnp"], _contract.Cnp, "cnp")
    _fits(switch["watchdog"], _contract.Watchdog, "watchdog")
    for key, plan_type in (("junos", _contract.JunosPlan), ("traffic_pool", _contract.TrafficPool), ("lldp_app_tlv", _contract.LldpAppTlv)):
        if key in switch:
            _fits(switch[key], plan_type, key)
    host = plans["gpu1"]
    _fits(host, _contract.RoceHostPlan, "gpu1")
    for nic in host["nics"]:
        _fits(nic, _contract.HostNic, nic["name"])


def test_infiniband_plans_are_their_types():
    intent = {"name": "lab", "transport": "infiniband", "infiniband": {"sm": {"routing_engine": "minhop"}}}
    devices = {"sm1": {"kind": "subnet_manager", "role": "master"}, "gpu1": {"kind": "host", "nics": [{"name": "mlx5_0", "speed": "400G"}]}}
    plans = _plan.build_plan(intent, devices)["devices"]
    _fits(plans["sm1"], _contract.SubnetManagerPlan, "sm1")
    _fits(plans["gpu1"], _contract.IbHostPlan, "gpu1")


def test_the_contract_imports_nothing_of_the_collection():
    # Host code (nic_qos) imports it: it must not carry the intent or anything else.
    tree = ast.parse(CONTRACT.read_text())
    modules = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    modules |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    assert modules <= {"__future__", "typing"}, modules


def test_the_host_and_the_switch_name_their_classes_apart():
    # traffic_classes: the switch's queues; traffic_class: the host's verbs ToS byte (docs/intent.md).
    assert "traffic_classes" in _contract.keys(_contract.SwitchPlan) and "traffic_class" not in _contract.keys(_contract.SwitchPlan)
    assert "traffic_class" in _contract.keys(_contract.RoceHostPlan) and "traffic_classes" not in _contract.keys(_contract.RoceHostPlan)
