# SPDX-License-Identifier: GPL-3.0-or-later
"""EOS device keys (model / asic_family), the full DSCP map and the per-platform ECN defaults of _intent."""

from __future__ import annotations

import pytest

from ansible_collections.lossless.fabric.plugins.module_utils._intent import _derive, _plan
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.eos import _vendor as _vendor_eos


def fabric(**device):
    intent = {"name": "lab", "transport": "roce"}
    devices = {"leaf1": {"kind": "switch", "platform": "eos", "ports": {"Ethernet1": {"speed": "400G"}}, **device}}
    return intent, devices


@pytest.mark.parametrize(
    "device, family, block",
    [
        ({}, "jericho", "tx-queue"),  # what the collection rendered before issue 13
        ({"model": "DCS-7060DX5-64S"}, "strata", "uc-tx-queue"),
        ({"model": "DCS-7050CX3-32S"}, "strata", "uc-tx-queue"),
        ({"model": "DCS-7388X5"}, "strata", "uc-tx-queue"),
        ({"model": "DCS-7280CR3-32P4"}, "jericho", "tx-queue"),
        ({"model": "DCS-7800R3-36P-LC"}, "jericho", "tx-queue"),
        ({"asic_family": "strata"}, "strata", "uc-tx-queue"),
        ({"asic_family": "jericho", "model": "DCS-7280SR3-48YC8"}, "jericho", "tx-queue"),
    ],
)
def test_queue_block_from_model_or_family(device, family, block):
    plan = _plan.build_plan(*fabric(**device))["devices"]["leaf1"]
    assert plan["eos"] == {"model": device.get("model"), "asic_family": family, "queue_block": block}


@pytest.mark.parametrize(
    "device, expected",
    [
        ({"model": "DCS-7170-64C"}, "leaf1: lossless_fabric_device.model: 'DCS-7170-64C': no ASIC family known for this model"),
        ({"model": "7050CX3"}, "leaf1: lossless_fabric_device.model: '7050CX3' is not an Arista model name (like DCS-7060DX5-64S)"),
        ({"model": "DCS-7050CX3\nreload"}, "leaf1: lossless_fabric_device.model: 'DCS-7050CX3\\nreload' is not an Arista model name"),
        ({"asic_family": "trident"}, "leaf1: lossless_fabric_device.asic_family: 'trident' is not an EOS ASIC family (one of jericho, strata)"),
        (
            {"asic_family": "strata", "model": "DCS-7280CR3-32P4"},
            "leaf1: lossless_fabric_device.asic_family: 'strata' disagrees with model 'DCS-7280CR3-32P4' (jericho)",
        ),
    ],
)
def test_bad_model_or_family_is_one_clear_error(device, expected):
    errors, _warnings = _plan.validate(*fabric(**device))
    assert len(errors) == 1 and errors[0].startswith(expected), errors


def test_model_is_eos_or_junos_only():
    intent, devices = fabric(model="DCS-7050CX3-32S")
    devices["leaf1"].update(platform="nvue", ports={"swp1": {"speed": "400G"}})
    errors, _warnings = _plan.validate(intent, devices)
    assert errors == ["leaf1: lossless_fabric_device.model: 'DCS-7050CX3-32S': only platforms eos and junos take model"]


def test_full_dscp_map_every_code_point():
    plan = _plan.build_plan(*fabric())["devices"]["leaf1"]
    full = plan["dscp_map_full"]
    assert sorted(full, key=int) == [str(d) for d in range(64)]
    assert full["26"] == 3 and full["48"] == 6
    assert {d for d, tc in full.items() if tc != plan["default_traffic_class"]} == set(plan["dscp_map"])
    assert all(full[str(d)] == 0 for d in range(24, 32) if d != 26)  # 24-31 no longer land in the no-drop class


def test_ecn_defaults_per_platform_and_unknown_speed():
    assert _derive.ecn_defaults(400, "eos") == _vendor_eos.ECN_DEFAULTS[400]
    assert _vendor_eos.ECN_DEFAULTS_SOURCE is None  # unverified, and docs/vendor-eos.md says so
    with pytest.raises(ValueError, match=r"platform eos: no ECN default for 1600 Gb/s"):
        _derive.ecn_defaults(1600, "eos")
    with pytest.raises(ValueError, match="not a speed"):
        _derive.ecn_defaults(True, "eos")


def test_intent_thresholds_skip_the_table():
    intent, devices = fabric()
    intent["roce"] = {"ecn": {"min_threshold_bytes": 100000, "max_threshold_bytes": 900000, "max_probability_percent": 5}}
    ecn = _plan.build_plan(intent, devices)["devices"]["leaf1"]["ports"]["Ethernet1"]["ecn"]
    assert ecn == {"min_threshold_bytes": 100000, "max_threshold_bytes": 900000, "max_probability_percent": 5}
