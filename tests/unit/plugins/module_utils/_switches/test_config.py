# SPDX-License-Identifier: GPL-3.0-or-later
"""Pure parts of switch_config: drift between plan and device, session names, argument handling."""

from __future__ import annotations

import copy
import os
import re
import sys

import pytest

from ansible_collections.lossless.fabric.plugins.module_utils._intent import _plan
from ansible_collections.lossless.fabric.plugins.module_utils._switches import _config as _switch_config

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "..", "..", "..", "lab"))
import switchsim  # noqa: E402  # pylint: disable=wrong-import-position,import-error
from switch_platforms import SWITCH_PLATFORMS  # noqa: E402  # pylint: disable=wrong-import-position,import-error


@pytest.fixture(name="plan")
def fixture_plan():
    intent = {"name": "t", "transport": "roce"}
    devices = {"leaf1": {"kind": "switch", "platform": "eos", "ports": {"Ethernet1": {"speed": "400G"}, "Ethernet2": {"speed": "100G"}}}}
    return _plan.build_plan(intent, devices)["devices"]["leaf1"]


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
    result = _switch_config.run(dict(args, platform="eos"), device="leaf1")
    assert not result.get("failed"), result
    assert result["rendered"] == result["commands"] and result["rendered"]
    assert "device_state" not in result


def test_unknown_platform_fails_naming_the_device(plan):
    result = _switch_config.run({"state": "rendered", "plan": plan, "platform": "ios"}, device="leaf1")
    assert result["failed"] and result["msg"].startswith("leaf1: platform: 'ios' has no switch driver")


def test_a_plan_of_another_platform_is_refused(plan):
    result = _switch_config.run({"state": "rendered", "plan": plan, "platform": "nvue"}, device="leaf1")
    assert result["failed"] and "leaf1: plan.platform: 'eos' is not the switch's platform 'nvue'" in result["plan_errors"]


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


def test_diffs_never_carry_snmpv3_user_keys():
    # NX-OS and EOS print SNMPv3 keys after 'auth <algorithm>' / 'priv [<cipher>]', with no secret keyword.
    text = "\n".join([
        "snmp-server user admin network-admin auth md5 0x9a1b2c3d4e5f60718293a4b5c6d7e8f9 priv 0x11223344556677889900aabbccddeeff localizedkey",
        "snmp-server user ops network-operator auth sha 0xabcdefabcdefabcdefabcdefabcdefab priv aes-128 0xfedcbafedcbafedcbafedcbafedcbafe localizedkey",
        "snmp-server user mon grp v3 localized 0x1234 auth sha 0xc0ffee00 priv aes 0xdecaf000",
        "  priority-flow-control mode on",
    ])
    masked = _switch_config.mask_secrets(text)
    for secret in ("0x9a1b2c3d4e5f60718293a4b5c6d7e8f9", "0x11223344556677889900aabbccddeeff", "0xabcdefabcdefabcdefabcdefabcdefab",
                   "0xfedcbafedcbafedcbafedcbafedcbafe", "0xc0ffee00", "0xdecaf000"):
        assert secret not in masked, masked
    assert "auth md5 ********" in masked and "priv aes-128 ********" in masked and "priority-flow-control mode on" in masked


# --- a hand-written plan is checked with the intent's rules before any device -----------------------

def _plans():
    devices = {
        "e": {"kind": "switch", "platform": "eos", "ports": {"Ethernet1": {"speed": "400G"}, "Ethernet2/1": {"speed": "100G", "description": "to gpu1"}}},
        "n": {"kind": "switch", "platform": "nvue", "ports": {"swp1": {"speed": "400G"}, "swp2s1": {"speed": "100G"}}},
        "j": {"kind": "switch", "platform": "junos", "queue_buffer_bytes": 12000000, "ports": {"et-0/0/1": {"speed": "400G"}}},
        "s": {"kind": "switch", "platform": "sonic", "ports": {"Ethernet0": {"speed": "400G"}}},
        "x": {"kind": "switch", "platform": "nxos", "ports": {"Ethernet1/1": {"speed": "400G"}, "Ethernet1/2": {"speed": "100G"}}},
    }
    # Any other tested platform: a switch of it with its grammar's lab ports (tests/lab/switchsim/<platform>.py).
    for platform in SWITCH_PLATFORMS:
        if platform not in {device["platform"] for device in devices.values()}:
            devices[platform] = {"kind": "switch", "platform": platform, "queue_buffer_bytes": 12000000,
                                 "ports": {port: {"speed": settings["speed"]} for port, settings in switchsim.lab_ports(platform).items()}}
    return _plan.build_plan({"name": "t", "transport": "roce"}, devices)["devices"]


def test_the_plans_cover_every_tested_platform():
    """Every tested platform (a driver plus a simulator grammar: tests/lab/switch_platforms.py) has a switch in
    _plans() (a new one from its grammar's lab ports), so the parametrised checks below run on it too."""
    assert sorted({plan["platform"] for plan in _plans().values()}) == sorted(SWITCH_PLATFORMS)


@pytest.mark.parametrize("host", sorted(_plans()))
def test_every_plan_fabric_plan_derives_passes_the_check_unchanged(host):
    plan = _plans()[host]
    checked, errors = _switch_config.check_plan(plan, plan["platform"], host)
    assert errors == [] and checked == plan


def _rendered(plan, platform="eos"):
    return _switch_config.run({"state": "rendered", "plan": plan, "platform": platform}, device="sw1")


def _edit(path_fn):
    plan = copy.deepcopy(_plans()["e"])
    path_fn(plan)
    return plan


def _rename(plan, old, new):
    plan["ports"][new] = plan["ports"].pop(old)


HAND_WRITTEN = [
    (lambda p: _rename(p, "Ethernet1", "Ethernet1x;reboot"),
     "sw1: plan.ports['Ethernet1x;reboot']: interface name 'Ethernet1x;reboot' contains ';', which could start a second command or a comment"),
    (lambda p: _rename(p, "Ethernet1", "Ethernet1x"), "sw1: plan.ports[Ethernet1x]: 'Ethernet1x' is not a eos interface name (like Ethernet1/1)"),
    (lambda p: _rename(p, "Ethernet1", "Ethernet\u0661"), "sw1: plan.ports[Ethernet\u0661]: 'Ethernet\u0661' is not a eos interface name (like Ethernet1/1)"),
    (lambda p: p["ports"].update({"Ethernet01": p["ports"]["Ethernet1"]}),
     "sw1: plan.ports[Ethernet01]: 'Ethernet01' is the same port as 'Ethernet1' (Ethernet1): give each port once"),
    (lambda p: p["ports"]["Ethernet1"].update(description="x\nreload now"), "sw1: plan.ports[Ethernet1].description: 'x\\nreload now' contains a newline"),
    (lambda p: p["ports"]["Ethernet1"].update(cable_length_m="3; reload"),
     "sw1: plan.ports[Ethernet1].cable_length_m: '3; reload' is not a cable length in metres (1-10000)"),
    (lambda p: p["ports"]["Ethernet1"]["ecn"].update(min_threshold_bytes=-1),
     "sw1: plan.ports[Ethernet1].ecn.min_threshold_bytes: -1 is not a threshold in bytes (1-4294967295)"),
    (lambda p: p["dscp_map"].update({"64": 3}), "sw1: plan.dscp_map[64]: '64' is not a DSCP (0-63, as a decimal string)"),
    (lambda p: p["dscp_map"].update({"26": "3 ; reload"}), "sw1: plan.dscp_map[26]: '3 ; reload' is not a traffic class (0-7)"),
    (lambda p: p["watchdog"].update(action="drop\nreload"), "sw1: plan.watchdog.action: 'drop\\nreload' is not a watchdog action (one of drop, forward)"),
    (lambda p: p.update(mtu=9216), "sw1: plan.mtu: 9216 is not a switch MTU (1500-9214)"),
    (lambda p: p.update(trust="cos"), "sw1: plan.trust: 'cos' is not a trust mode (one of dscp)"),
    (lambda p: p.update(pfc_priorities=[3, 3]), "sw1: plan.pfc_priorities[1]: 3 is listed twice"),
    (lambda p: p["traffic_classes"]["3"].update(bandwidth_percent=101),
     "sw1: plan.traffic_classes[3].bandwidth_percent: 101 is not a bandwidth share in percent (0-100)"),
    (lambda p: p.update(platform="junos"), "sw1: plan.platform: 'junos' is not the switch's platform 'eos'"),
    (lambda p: p.pop("watchdog"), "sw1: plan.watchdog: required (a switch plan from lossless.fabric.fabric_plan has it)"),
    (lambda p: p.update(extra={"note": ["ok", "a|b"]}), "sw1: plan.extra.note[1]: 'a|b' contains '|', which could start a second command or a comment"),
]


@pytest.mark.parametrize("edit, expected", HAND_WRITTEN, ids=[str(i) for i in range(len(HAND_WRITTEN))])
def test_a_hand_written_plan_is_refused_naming_the_key_path_and_value(edit, expected):
    res = _rendered(_edit(edit))
    assert res["failed"] and res["plan_errors"] == [expected], res
    assert "rendered" not in res and "commands" not in res
    assert res["msg"].startswith("sw1: plan: not a switch plan (1 error(s)); nothing sent:\n" + expected)


def test_a_hand_written_plan_is_refused_before_any_connection():
    # merged with a host that does not exist: the check fails first, so nothing tries to connect
    plan = _edit(lambda p: _rename(p, "Ethernet1", "Ethernet1x;reboot"))
    res = _switch_config.run({"state": "merged", "plan": plan, "platform": "eos", "host": "192.0.2.1", "confirm_timeout": 300, "confirm": True}, device="sw1")
    assert res["failed"] and res["plan_errors"] and "device_state" not in res


def test_a_hand_written_port_name_is_rendered_in_its_one_spelling():
    plan = _edit(lambda p: _rename(p, "Ethernet1", "Ethernet01"))
    res = _rendered(plan)
    assert not res.get("failed"), res
    assert "interface Ethernet1" in res["rendered"] and not any("Ethernet01" in line for line in res["rendered"])


# --- every step bounded: the guard, without a device ------------------------------------------------

class _FakeTransport:
    def __init__(self):
        self.active = True
        self.sock = self

    def shutdown(self, _how):
        self.active = False

    def is_active(self):
        return self.active


class _FakeConn:
    def __init__(self):
        self.transport = _FakeTransport()
        self.remote_conn = self

    def get_transport(self):
        return self.transport


def test_a_step_that_outlasts_its_bound_has_its_connection_shut_and_is_named():
    import time  # pylint: disable=import-outside-toplevel

    from ansible_collections.lossless.fabric.plugins.module_utils._platforms._connection import StepGuard  # pylint: disable=import-outside-toplevel

    conn = _FakeConn()
    guard = StepGuard(conn, "sw1", 0.05)
    with pytest.raises(EOFError):
        with guard.bound("commit"):
            # a driver's read loop: it waits until the device answers or the connection goes
            while conn.transport.is_active():
                time.sleep(0.005)
            raise EOFError("the device closed the connection")
    assert guard.expired == "commit" and not conn.transport.active
    quick = StepGuard(_FakeConn(), "sw1", 5)
    with quick.bound("load"):
        pass
    assert quick.expired is None


@pytest.mark.parametrize(
    "step, before, state, text",
    [
        ("load", {}, "unchanged", "unchanged"),
        ("commit", {"pending_until": "T"}, "unknown", "unknown (if the commit went through, the device rolls it back by itself at T unless it is confirmed)"),
        ("read-back", {"pending_until": "T", "device_state": "pending confirmation"}, "pending confirmation",
         "pending confirmation (the device rolls the commit back by itself at T unless it is confirmed)"),
        ("confirm", {"pending_until": "T", "device_state": "pending confirmation"}, "unknown",
         "unknown (committed if the confirm went through; if not, the device rolls the commit back by itself at T)"),
        ("save", {"device_state": "committed"}, "committed", "committed"),
    ],
)
def test_the_state_a_hung_step_leaves(step, before, state, text):
    result = dict(before, step=step)
    assert _switch_config._hung_state(step, result) == state  # pylint: disable=protected-access
    assert _switch_config._state_text(state, result) == text  # pylint: disable=protected-access


def test_netmiko_advice_becomes_one_line():
    from ansible_collections.lossless.fabric.plugins.module_utils._platforms._connection import netmiko_text  # pylint: disable=import-outside-toplevel

    raw = ("\nPattern not detected: '[$>#]' in output.\n\nThings you might try to fix this:\n1. Adjust the regex pattern to better identify the "
           "terminating string.\n2. Increase the read_timeout to a larger value.\n\nYou can also look at the Netmiko session_log or debug log.\n")
    assert netmiko_text(raw) == "no prompt matching '[$>#]' came back"


@pytest.mark.parametrize("value", [0, -1])
def test_step_timeout_must_be_positive(plan, value):
    res = _switch_config.run({"state": "merged", "plan": plan, "platform": "eos", "host": "192.0.2.1", "step_timeout": value}, device="sw1")
    assert res["failed"] and res["msg"] == "sw1: step_timeout: %d is not a number of seconds above 0" % value


def test_confirm_timeout_must_be_positive(plan):
    res = _switch_config.run({"state": "merged", "plan": plan, "platform": "eos", "host": "192.0.2.1", "confirm_timeout": 0}, device="sw1")
    assert res["failed"] and res["msg"] == "sw1: confirm_timeout: 0 is not a number of seconds above 0"


@pytest.mark.parametrize("platform", ["eos", "nvue", "junos"])
@pytest.mark.parametrize("text", ["", "this is not a switch configuration\n", '{"json": true}\n'])
def test_parsed_refuses_what_it_does_not_recognise_as_a_failure_not_a_traceback(platform, text):
    result = _switch_config.run({"state": "parsed", "platform": platform, "running_config": text}, "sw1")
    if text == "" and platform == "junos":
        # Junos: an empty text is an empty configuration (show configuration of a blank candidate).
        assert not result.get("failed") and result["parsed"] is not None
        return
    assert result["failed"] is True
    assert result["msg"].startswith("sw1: running_config: ")
    assert platform in result["msg"]
    assert "parsed" not in result


class _PendingDriver:
    device = "sw1"

    def __init__(self, pending):
        self._pending = pending
        self.calls = []

    def pending(self):
        return self._pending

    def confirm(self, session):
        self.calls.append(("confirm", session))

    def rollback(self, session):
        self.calls.append(("rollback", session))

    def save(self):
        self.calls.append(("save",))


@pytest.mark.parametrize("state", ["confirmed", "rolled_back"])
def test_a_run_never_settles_another_runs_pending_commit(state):
    # Issue 15: window A's rollback once confirmed window B's pending Junos commit.
    driver = _PendingDriver({"session": "change-window-B-0123456789", "remaining_s": 200})
    settle = _switch_config._settle  # pylint: disable=protected-access
    result = settle(driver, {"session": "change-window-A-9876543210", "save": True}, {}, state, False)
    assert driver.calls == [] and result["changed"] is False
    assert result["device_state"] == "pending confirmation"
    assert "change-window-B-0123456789" in result["msg"] and "left alone" in result["msg"]
    own = _PendingDriver({"session": "change-window-A-9876543210", "remaining_s": 200})
    result = settle(own, {"session": "change-window-A-9876543210", "save": True}, {}, state, False)
    assert result["changed"] is True
    assert own.calls[0] == ("confirm" if state == "confirmed" else "rollback", "change-window-A-9876543210")
