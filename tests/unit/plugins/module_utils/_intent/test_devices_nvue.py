# SPDX-License-Identifier: GPL-3.0-or-later
"""NVUE-specific intent rules: the release device key, NVIDIA's ECN defaults, the lossless pool and LLDP TLV in the plan."""

from __future__ import annotations

import pytest

from ansible_collections.lossless.fabric.plugins.module_utils._intent import _derive, _plan, _tables
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.nvue import _vendor as _vendor_nvue

INTENT = {"name": "lab", "transport": "roce"}


def plan_of(device: dict) -> dict:
    return _plan.build_plan(dict(INTENT), {"leaf1": device})["devices"]["leaf1"]


def errors_of(device: dict) -> list[str]:
    with pytest.raises(_tables.IntentError) as info:
        _plan.build_plan(dict(INTENT), {"leaf1": device})
    return info.value.errors


def switch(**extra):
    device = {"kind": "switch", "platform": "nvue", "ports": {"swp1": {"speed": "400G"}, "swp2": {"speed": "100G"}}}
    device.update(extra)
    return device


@pytest.mark.parametrize("speed", [10, 25, 40, 50, 100, 200, 400, 800])
def test_nvue_ecn_defaults_are_nvidias_roce_numbers_at_every_speed(speed):
    assert _derive.ecn_defaults(speed, "nvue") == {"min_threshold_bytes": 150000, "max_threshold_bytes": 1500000, "max_probability_percent": 100}


def test_nvue_ecn_defaults_refuse_a_speed_without_an_entry():
    with pytest.raises(ValueError, match="platform nvue has no ECN default for 1 Gb/s"):
        _derive.ecn_defaults(1, "nvue")


def test_plan_carries_release_pool_and_lldp_tlv():
    plan = plan_of(switch())
    assert plan["release"] == _vendor_nvue.DEFAULT_RELEASE == "5.14"
    assert plan["traffic_pool"] == {
        "lossless_pool": "default-lossless",
        "lossless_priorities": [3],
        "lossless_memory_percent": 50,
        "lossy_pool": "default-lossy",
        "lossy_priorities": [0, 1, 2, 4, 5, 6, 7],
        "lossy_memory_percent": 50,
    }
    assert plan["lldp_app_tlv"] == {"udp_port": 4791, "priority": 3}
    assert plan["ports"]["swp2"]["ecn"]["max_probability_percent"] == 100


def test_intent_ecn_override_still_wins_on_nvue():
    intent = dict(INTENT, roce={"ecn": {"max_probability_percent": 5}})
    plan = _plan.build_plan(intent, {"leaf1": switch()})["devices"]["leaf1"]
    assert plan["ports"]["swp1"]["ecn"] == {"min_threshold_bytes": 150000, "max_threshold_bytes": 1500000, "max_probability_percent": 5}


@pytest.mark.parametrize("release", ["5.9", "5.14.0", "5.15", "5.17.1"])
def test_release_accepted(release):
    assert plan_of(switch(release=release))["release"] == release


@pytest.mark.parametrize("release", ["4.4", "5.18", "5.x", 5.14, "5.14\nreboot"])
def test_release_refused_with_key_and_value(release):
    errors = errors_of(switch(release=release))
    assert any(e.startswith("leaf1: lossless_fabric_device.release: ") and repr(release) in e for e in errors), errors


def test_release_only_for_nvue():
    device = {"kind": "switch", "platform": "eos", "release": "5.14", "ports": {"Ethernet1": {"speed": "100G"}}}
    assert "leaf1: lossless_fabric_device.release: applies to platforms nvue and sonic only (this switch is eos)" in errors_of(device)


def test_release_spellings_and_paths():
    assert _vendor_nvue.ecn_switch_value("5.14") == "enable" and _vendor_nvue.ecn_switch_value("5.15.0") == "enabled"
    assert _vendor_nvue.lldp_service_path("5.8") is None
    assert _vendor_nvue.lldp_service_path("5.9") == "service lldp" and _vendor_nvue.lldp_service_path("5.16") == "system lldp"
