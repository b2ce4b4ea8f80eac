# SPDX-License-Identifier: GPL-3.0-or-later
"""lossless_fabric.roce.mode (issue 36): normalisation, the plans (interfaces point 1) and the design check per mode.
The five renders of each mode are compared with golden configs in
tests/unit/plugins/module_utils/_platforms/test_render_modes.py."""

from __future__ import annotations

import copy

import pytest

from ansible_collections.lossless.fabric.plugins.module_utils._hosts import _nic
from ansible_collections.lossless.fabric.plugins.module_utils._intent import _design, _devices, _plan, _schema
from ansible_collections.lossless.fabric.plugins.module_utils._intent._tables import IntentError
from ansible_collections.lossless.fabric.plugins.module_utils._platforms import _records

PORT = {"eos": "Ethernet1/1", "nvue": "swp1", "junos": "et-0/0/1", "sonic": "Ethernet0", "nxos": "Ethernet1/1"}
TARGETS = {"collectives": {"all_reduce_perf": [{"min_size": "1G", "min_busbw": 100}]}}


def intent(**roce) -> dict:
    return {"name": "x", "transport": "roce", "roce": roce, "targets": TARGETS}


def devices() -> dict:
    out = {}
    for platform, port in PORT.items():
        dev = {"kind": "switch", "platform": platform, "ports": {port: {"speed": "400G", "cable_length_m": 3}}}
        if platform == "nvue":
            dev["release"] = "5.14"
        if platform == "junos":
            dev["queue_buffer_bytes"] = 12000000
        out["sw-" + platform] = dev
    out["gpu1"] = {"kind": "host", "gpus": 8, "nics": [{"name": "mlx5_0", "netdev": "eth0", "speed": "400G"}]}
    return out


def test_the_default_mode_is_lossless_and_every_plan_says_its_mode():
    plan = _plan.build_plan(intent(), devices())
    assert plan["intent"]["roce"]["mode"] == "lossless" and plan["summary"]["mode"] == "lossless"
    assert {p["mode"] for p in plan["devices"].values()} == {"lossless"}


def test_ecn_only_has_no_pfc_anywhere_and_keeps_ecn_dcqcn_and_the_cnp_class():
    plan = _plan.build_plan(intent(mode="ecn_only"), devices())
    host = plan["devices"]["gpu1"]
    assert host["mode"] == "ecn_only" and host["pfc_priorities"] == [] and host["pfc_bitmap"] == "0,0,0,0,0,0,0,0"
    assert host["dcqcn"] == {"enabled": True, "priorities": [3]} and host["cnp"] == {"dscp": 48, "priority": 6}
    for name in ("sw-" + p for p in PORT):
        sw = plan["devices"][name]
        assert sw["mode"] == "ecn_only" and sw["pfc_priorities"] == [] and sw["watchdog"]["enabled"] is False
        assert sw["traffic_classes"]["3"] == {"lossless": False, "ecn": True, "strict": False, "bandwidth_percent": 50}
        assert sw["traffic_classes"]["6"]["strict"] and not sw["traffic_classes"]["6"]["ecn"]
        assert sw["cnp"] == {"dscp": 48, "priority": 6, "queue": 6, "strict": True}
        for port in sw["ports"].values():
            assert port["pfc_priorities"] == [] and "headroom" not in port and port["ecn"]["min_threshold_bytes"] > 0
    assert "traffic_pool" not in plan["devices"]["sw-nvue"]  # no lossless pool without PFC
    assert plan["summary"]["max_headroom_bytes"] == 0


def test_pfc_only_keeps_pfc_and_marks_no_ecn_and_dcqcn_is_off():
    plan = _plan.build_plan(intent(mode="pfc_only"), devices())
    host = plan["devices"]["gpu1"]
    assert host["mode"] == "pfc_only" and host["pfc_bitmap"] == "0,0,0,1,0,0,0,0" and host["dcqcn"] == {"enabled": False, "priorities": []}
    for name in ("sw-" + p for p in PORT):
        sw = plan["devices"][name]
        assert sw["pfc_priorities"] == [3] and sw["watchdog"]["enabled"] is True
        assert not any(cls["ecn"] for cls in sw["traffic_classes"].values())
        for port in sw["ports"].values():
            assert "ecn" not in port and port["headroom"]["size_bytes"] > 0
    assert any("pfc_only" in w for w in plan["warnings"])


@pytest.mark.parametrize("roce, key, said", [
    ({"mode": "ecn_only", "pfc": {"priorities": [3]}}, "roce.pfc.priorities", "mode ecn_only has no PFC"),
    ({"mode": "ecn_only", "pfc": {"watchdog": {"enabled": True}}}, "roce.pfc.watchdog.enabled", "no pause for a watchdog"),
    ({"mode": "pfc_only", "ecn": {"min_threshold_bytes": 1000}}, "roce.ecn.min_threshold_bytes", "marks no ECN"),
    ({"mode": "pfc_only", "dcqcn": {"enabled": True}}, "roce.dcqcn.enabled", "never gets a congestion notification"),
    ({"mode": "lossy"}, "roce.mode", "'lossy'"),
])
def test_a_key_that_contradicts_the_mode_is_refused(roce, key, said):
    errors, _warnings = _plan.validate(intent(**roce), devices())
    assert any(e.startswith("lossless_fabric." + key) and said in e for e in errors), errors


def test_ecn_only_accepts_an_explicit_empty_pfc_list_and_a_disabled_watchdog_without_warning():
    errors, warnings = _plan.validate(intent(mode="ecn_only", pfc={"priorities": [], "watchdog": {"enabled": False}}), devices())
    assert errors == [] and not any("watchdog" in w for w in warnings), warnings  # the NX-OS watchdog-times note too
    assert any("watchdog" in w for w in _plan.validate(intent(), devices())[1])


def _statuses(plan: dict) -> dict:
    return {r["rule"]: r["status"] for r in plan["design"]}


def test_the_design_check_says_which_rules_a_mode_takes_out():
    ecn = _plan.build_plan(intent(mode="ecn_only"), devices())
    assert _statuses(ecn)["watchdog"] == "not_applicable" and _statuses(ecn)["headroom"] == "not_applicable"
    assert _statuses(ecn)["ecn_below_pause"] == "ok"
    assert any("mode ecn_only" in n for r in ecn["design"] if r["rule"] == "watchdog" for n in r["notes"])
    pfc = _plan.build_plan(intent(mode="pfc_only"), devices())
    assert _statuses(pfc)["ecn_below_pause"] == "not_applicable" and _statuses(pfc)["watchdog"] == "ok"
    assert any("mode pfc_only" in n for r in pfc["design"] if r["rule"] == "ecn_below_pause" for n in r["notes"])


def test_the_design_check_refuses_a_plan_that_contradicts_its_mode():
    ecn = _plan.build_plan(intent(mode="ecn_only"), devices())
    bad = copy.deepcopy(ecn)
    bad["devices"]["sw-eos"]["watchdog"]["enabled"] = True
    bad["devices"]["sw-eos"]["ports"]["Ethernet1/1"]["pfc_priorities"] = [3]
    bad["devices"]["gpu1"]["mode"] = "lossless"
    errors = _design.check(bad)["errors"]
    assert any("sw-eos: mode ecn_only but the PFC watchdog is enabled" in e for e in errors), errors
    assert any("sw-eos Ethernet1/1: mode ecn_only but pfc_priorities [3]" in e for e in errors), errors
    assert any("gpu1: the host plan's mode 'lossless' is not the fabric's 'ecn_only'" in e for e in errors), errors
    pfc = _plan.build_plan(intent(mode="pfc_only"), devices())
    bad = copy.deepcopy(pfc)
    bad["devices"]["sw-nvue"]["traffic_classes"]["3"]["ecn"] = True
    bad["devices"]["gpu1"]["dcqcn"]["enabled"] = True
    errors = _design.check(bad)["errors"]
    assert any("sw-nvue: mode pfc_only but traffic classes [3] mark ECN" in e for e in errors), errors
    assert any("gpu1: mode pfc_only but the NIC runs DCQCN" in e for e in errors), errors


def test_a_plan_without_mode_reads_as_lossless():
    plan = _plan.build_plan(intent(), devices())
    for device in plan["devices"].values():
        device.pop("mode")
    assert _design.check(plan)["errors"] == []


def test_build_plan_refuses_a_contradiction_with_every_error():
    with pytest.raises(IntentError) as err:
        _plan.build_plan(intent(mode="ecn_only", pfc={"priorities": [3], "watchdog": {"enabled": True}}), devices())
    assert len(err.value.errors) == 2


def test_every_platform_runs_every_mode_with_a_source():
    for name, record in _records.registry().items():
        assert set(record.roce_modes) == set(_schema.ROCE_MODES), name
        assert all(isinstance(source, str) and len(source) > 20 for source in record.roce_modes.values()), name


def test_a_mode_a_platform_cannot_run_is_refused_naming_the_platform(monkeypatch):
    relaxed = {name: record._replace(roce_modes={"lossless": "x", "pfc_only": "y"} if name == "junos" else record.roce_modes)
               for name, record in _records.registry().items()}
    monkeypatch.setattr(_devices, "platforms", lambda: relaxed)
    errors, _warnings = _plan.validate(intent(mode="ecn_only"), devices())
    assert [e for e in errors if "roce.mode" in e] == [
        "sw-junos: lossless_fabric.roce.mode: 'ecn_only': platform junos cannot run it: no vendor source shows PFC and ECN set that "
        "way on junos (the modes it runs, each with its source: ['lossless', 'pfc_only'])"], errors
    assert _plan.validate(intent(mode="pfc_only"), devices())[0] == []


@pytest.mark.parametrize("mode, pfc, dcqcn", [
    ("lossless", [0, 0, 0, 1, 0, 0, 0, 0], {"3": 1}),
    ("ecn_only", [0] * 8, {"3": 1}),
    ("pfc_only", [0, 0, 0, 1, 0, 0, 0, 0], {"3": 0}),  # DCQCN switched off on the RoCE priority
])
def test_nic_qos_applies_each_mode_from_the_host_plan_alone(mode, pfc, dcqcn):
    """The host side (nic_qos, _hosts/_nic.py, h/nicvendors' file) reads the mode only through the plan's fields."""
    host = _plan.build_plan(intent(mode=mode), devices())["devices"]["gpu1"]
    _nic.validate_plan(host)
    want = _nic.wanted(host)
    assert want["pfc"] == pfc and want["dcqcn"] == {"np": dcqcn, "rp": dcqcn}
    assert want["cnp"] == {"dscp": 48, "priority": 6} and want["traffic_class"] == 106
