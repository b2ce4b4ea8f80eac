# SPDX-License-Identifier: GPL-3.0-or-later
"""Pure parts of switch_config: drift between plan and device, session names, argument handling."""

from __future__ import annotations

import copy
import re

import pytest

from ansible_collections.lossless.fabric.plugins.module_utils import _intent, _switch_config


@pytest.fixture(name="plan")
def fixture_plan():
    intent = {"name": "t", "transport": "roce"}
    devices = {"leaf1": {"kind": "switch", "platform": "eos", "ports": {"Ethernet1": {"speed": "400G"}, "Ethernet2": {"speed": "100G"}}}}
    return _intent.build_plan(intent, devices)["devices"]["leaf1"]


def _holding(plan):
    """What a device that holds the plan exactly reads back as."""
    return {
        "dscp_map": dict(plan["dscp_map"]),
        "watchdog": dict(plan["watchdog"]),
        "interfaces": {
            name: {
                "trust": "dscp",
                "mtu": plan["mtu"],
                "cable_length_m": port["cable_length_m"],
                "pfc_enabled": True,
                "pfc_priorities": list(port["pfc_priorities"]),
                "ecn": {str(plan["ecn_queue"]): dict(port["ecn"])},
                "strict_queues": [plan["cnp"]["queue"]],
                "watchdog": True,
            }
            for name, port in plan["ports"].items()
        },
    }


def test_no_drift_when_the_device_holds_the_plan(plan):
    assert not _switch_config.drift(plan, _holding(plan))


@pytest.mark.parametrize(
    "mutate, expected",
    [
        (lambda g: g["dscp_map"].update({"26": 1}), "global: dscp_map: device has {'26': 1, '48': 6}, plan has {'26': 3, '48': 6}"),
        (lambda g: g["interfaces"].pop("Ethernet2"), "Ethernet2: not configured on the device"),
        (lambda g: g["interfaces"]["Ethernet1"].update(pfc_priorities=[3, 4]), "Ethernet1: pfc_priorities: device has [3, 4], plan has [3]"),
        (lambda g: g["interfaces"]["Ethernet1"].update(mtu=1500), "Ethernet1: mtu: device has 1500, plan has 9214"),
        (lambda g: g["interfaces"]["Ethernet1"].update(strict_queues=[]), "Ethernet1: queue 6 is not strict on the device"),
        (lambda g: g["interfaces"]["Ethernet2"].update(ecn={}), "Ethernet2: no ECN on queue 3"),
        (
            lambda g: g["interfaces"]["Ethernet1"]["ecn"]["3"].update(min_threshold_bytes=1),
            "Ethernet1: ecn[3].min_threshold_bytes: device has 1, plan has 600000",
        ),
        (lambda g: g["interfaces"]["Ethernet1"].update(watchdog=False), "Ethernet1: watchdog: device has False, plan has True"),
        # Junos sizes PFC headroom from the profile's cable length: 100 m when none is set
        (lambda g: g["interfaces"]["Ethernet1"].update(cable_length_m=100), "Ethernet1: cable_length_m: device has 100, plan has 5"),
        (lambda g: g["interfaces"]["Ethernet1"].update(trust=None, mtu=None), None),
    ],
    ids=["dscp-map", "port-missing", "pfc", "mtu", "strict", "ecn-missing", "ecn-threshold", "watchdog", "cable-length", "unreadable-not-judged"],
)
def test_drift_names_each_difference(plan, mutate, expected):
    gathered = copy.deepcopy(_holding(plan))
    mutate(gathered)
    found = _switch_config.drift(plan, gathered)
    assert found == ([expected] if expected else [])


def test_session_name_is_valid_for_every_platform_and_unique():
    names = {_switch_config.session_name(0) for _attempt in range(20)}
    assert len(names) == 20
    assert all(re.fullmatch(r"lossless-fabric-19700101000000-[0-9a-f]{6}", name) for name in names)


def test_rendered_never_contacts_a_device(plan):
    args = {"state": "rendered", "plan": plan, "platform": None, "host": None}
    result = _switch_config.run(dict(args, platform="nvue"), device="leaf1")
    assert not result.get("failed"), result
    assert result["rendered"] == result["commands"] and result["rendered"]
    assert "device_state" not in result


def test_unknown_platform_fails_naming_the_device(plan):
    result = _switch_config.run({"state": "rendered", "plan": plan, "platform": "ios"}, device="leaf1")
    assert result["failed"] and result["msg"].startswith("leaf1: platform: 'ios' has no switch driver")


def test_not_a_plan_fails_clearly():
    result = _switch_config.run({"state": "rendered", "plan": {"ports": 3}, "platform": "eos"}, device="leaf1")
    assert result["failed"] and "not a switch plan" in result["msg"]


@pytest.mark.parametrize("session", ["a;reload", "x\nwrite erase", 'c" and-quit', "", "-x"])
def test_a_session_name_that_could_carry_a_command_is_refused_before_any_device(plan, session):
    result = _switch_config.run({"state": "merged", "plan": plan, "platform": "junos", "session": session, "host": "127.0.0.1", "port": 1}, device="leaf1")
    assert result["failed"] and result["msg"].startswith("leaf1: session: ")
    assert "device_state" not in result  # nothing was contacted


def test_diffs_never_carry_secrets_from_the_running_config():
    text = "\n".join([
        "username admin privilege 15 secret sha512 $6$abc$def",
        "snmp-server community s3cr3t ro",
        'set system root-authentication encrypted-password "$6$xyz"',
        "tacacs-server key 7 070C285F4D06",
        "   priority-flow-control priority 3 no-drop",
    ])
    masked = _switch_config.mask_secrets(text)
    for secret in ("$6$abc$def", "s3cr3t", "$6$xyz", "070C285F4D06"):
        assert secret not in masked
    assert "priority-flow-control priority 3 no-drop" in masked
