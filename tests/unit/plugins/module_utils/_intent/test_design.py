# SPDX-License-Identifier: GPL-3.0-or-later
"""The design check (_intent/_design.py, issue 34): each rule fed a plan that build_plan made and a test then
broke, and the violation named with its switch or host, its port and its numbers; every violation at once."""

from __future__ import annotations

import copy

import pytest

from ansible_collections.lossless.fabric.plugins.module_utils._intent import _design, _plan, _tables


def fabric():
    intent = {"name": "lab", "transport": "roce"}
    devices = {
        "leaf1": {
            "kind": "switch",
            "platform": "eos",
            "ports": {"Ethernet1": {"speed": "400G", "cable_length_m": 40}, "Ethernet2": {"speed": "100G", "cable_length_m": 5}},
        },
        "leaf2": {"kind": "switch", "platform": "junos", "queue_buffer_bytes": 12000000, "ports": {"et-0/0/1": {"speed": "400G"}}},
        "gpu1": {"kind": "host", "gpus": 8, "nics": [{"name": "mlx5_0", "netdev": "eth2", "speed": "400G"}]},
    }
    return intent, devices


@pytest.fixture(name="plan")
def plan_fixture():
    return _plan.build_plan(*fabric())


def errors(plan):
    return _design.check(plan)["errors"]


def rule(plan, name):
    return next(r for r in _design.check(plan)["rules"] if r["rule"] == name)


def test_a_derived_plan_passes_every_rule(plan):
    out = _design.check(plan)
    assert out["errors"] == [] and out["warnings"] == []
    assert [r["rule"] for r in out["rules"]] == list(_design.RULE_NAMES)
    assert all(r["status"] == "ok" and r["checked"] > 0 and r["source"] for r in out["rules"])
    assert plan["design"] == out["rules"]


def test_ib_plan_has_no_ethernet_design():
    intent = {"name": "ib", "transport": "infiniband"}
    devices = {"gpu1": {"kind": "host", "nics": [{"name": "mlx5_0", "speed": "400G"}]}}
    plan = _plan.build_plan(intent, devices)
    assert {r["status"] for r in plan["design"]} == {"not_applicable"}


# -- watchdog -------------------------------------------------------------------------------------


def test_watchdog_lossless_class_not_watched(plan):
    plan["devices"]["leaf1"]["traffic_classes"]["4"] = {"lossless": True, "ecn": False, "strict": False, "bandwidth_percent": 0}
    found = errors(plan)
    assert any("design watchdog: leaf1: lossless traffic classes [3, 4] are not the PFC priorities [3]" in e for e in found)


def test_watchdog_port_pfc_differs(plan):
    plan["devices"]["leaf1"]["ports"]["Ethernet2"]["pfc_priorities"] = [3, 4]
    assert "design watchdog: leaf1 Ethernet2: pfc_priorities [3, 4] differ from the switch's [3] (the watchdog's)" in errors(plan)


def test_watchdog_zero_timer(plan):
    plan["devices"]["leaf1"]["watchdog"]["detection_time_ms"] = 0
    assert any(e.startswith("design watchdog: leaf1 watchdog.detection_time_ms: 0") for e in errors(plan))


def test_watchdog_host_pfc_differs(plan):
    plan["devices"]["gpu1"]["pfc_priorities"] = [4]
    plan["devices"]["gpu1"]["pfc_bitmap"] = "0,0,0,0,1,0,0,0"
    assert any(e.startswith("design watchdog: gpu1: NIC PFC priorities [4] (bitmap '0,0,0,0,1,0,0,0') are not the switches' [3]") for e in errors(plan))


# -- ECN ------------------------------------------------------------------------------------------


def test_ecn_kmin_not_below_kmax(plan):
    plan["devices"]["leaf1"]["ports"]["Ethernet1"]["ecn"].update(min_threshold_bytes=2000000, max_threshold_bytes=1500000)
    want = "design ecn_below_pause: leaf1 Ethernet1: ECN Kmin 2000000 B is not below Kmax 1500000 B (or not above 0)"
    assert any(e.startswith(want) for e in errors(plan))


def test_ecn_kmax_above_queue_buffer(plan):
    plan["devices"]["leaf2"]["ports"]["et-0/0/1"]["ecn"]["max_threshold_bytes"] = 12000000
    found = errors(plan)
    assert any("leaf2 et-0/0/1: ECN Kmax 12000000 B is not below the RoCE queue's buffer 12000000 B" in e for e in found)
    # and in Junos' own units (whole fill-level percents): 100 % is no drop profile
    assert any(e.startswith("design ecn_below_pause: leaf2 et-0/0/1: in junos's units: ECN thresholds") and "100 %" in e for e in found)


def test_ecn_not_on_roce_queue_and_on_cnp_queue(plan):
    classes = plan["devices"]["leaf1"]["traffic_classes"]
    classes["3"]["ecn"] = False
    classes["6"]["ecn"] = True
    found = errors(plan)
    assert "design ecn_below_pause: leaf1: the RoCE queue 3 does not mark ECN (marking on [6]): DCQCN never slows a sender, PFC does all the work" in found
    assert "design ecn_below_pause: leaf1: the CNP queue 6 marks ECN: CNPs are never marked" in found


def test_ecn_pause_point_not_in_plan_is_a_note_not_a_guess(plan):
    record = rule(plan, "ecn_below_pause")
    assert record["status"] == "ok"
    assert any(n.startswith("leaf1: the PFC pause point on eos is the switch's own ingress buffer threshold") for n in record["notes"])
    assert not any(n.startswith("leaf2") for n in record["notes"])


# -- headroom -------------------------------------------------------------------------------------


def test_headroom_too_small_for_cable(plan):
    port = plan["devices"]["leaf1"]["ports"]["Ethernet1"]
    port["cable_length_m"] = 100  # the cable got longer by hand, the headroom did not
    found = errors(plan)
    want = f"design headroom: leaf1 Ethernet1: headroom xoff_bytes {port['headroom']['xoff_bytes']} B is below the 356352 B"
    assert any(e.startswith(want) and "400 Gb/s over 100 m needs" in e for e in found), found


def test_headroom_total_not_per_priority(plan):
    plan["devices"]["leaf1"]["ports"]["Ethernet2"]["headroom"]["total_bytes"] = 1
    assert any(e.startswith("design headroom: leaf1 Ethernet2: headroom total_bytes 1 is not size") for e in errors(plan))


# -- CNP ------------------------------------------------------------------------------------------


def test_cnp_on_pfc_class(plan):
    sw = plan["devices"]["leaf1"]
    sw["traffic_classes"]["6"]["lossless"] = True
    found = errors(plan)
    assert "design cnp_class: leaf1: CNP queue 6 is lossless: CNPs must ride a non-PFC class" in found


def test_cnp_not_strict_is_a_warning(plan):
    plan["devices"]["leaf1"]["traffic_classes"]["6"]["strict"] = False
    out = _design.check(plan)
    assert "design cnp_class: leaf1: CNP queue 6 is weighted, not strict: CNPs wait behind other traffic and DCQCN reacts late" in out["warnings"]


def test_cnp_weighted_by_intent_is_said_once():
    intent, devices = fabric()
    intent["roce"] = {"cnp": {"strict": False}}
    plan = _plan.build_plan(intent, devices)
    assert not [w for w in plan["warnings"] if w.startswith("design cnp_class")]
    assert [w for w in plan["warnings"] if w.startswith("lossless_fabric.roce.cnp.strict")]
    record = next(r for r in plan["design"] if r["rule"] == "cnp_class")
    assert record["status"] == "warning" and "warned by the intent" in record["notes"][0]


def test_cnp_host_differs(plan):
    plan["devices"]["gpu1"]["cnp"] = {"dscp": 46, "priority": 6}
    assert "design cnp_class: gpu1: the NIC sends CNPs with DSCP 46 priority 6, the switches expect DSCP 48 priority 6" in errors(plan)


# -- DSCP map -------------------------------------------------------------------------------------


def test_dscp_missing_and_stray_lossless(plan):
    full = plan["devices"]["leaf1"]["dscp_map_full"]
    del full["63"]
    for dscp in range(24, 32):
        if dscp != 26:
            full[str(dscp)] = 3  # EOS's own default (issue 13)
    found = errors(plan)
    assert "design dscp_map: leaf1: DSCPs 63 map nowhere: they keep the switch's default class" in found
    assert "design dscp_map: leaf1: DSCPs 24-25, 27-31 map to a lossless class ([3]): traffic other than RoCE would be paused" in found


def test_dscp_roce_and_cnp_to_wrong_class(plan):
    full = plan["devices"]["leaf2"]["dscp_map_full"]
    full["26"], full["48"] = 0, 9
    found = errors(plan)
    assert "design dscp_map: leaf2: the RoCE DSCP 26 maps to class 0, not the data class 3" in found
    assert "design dscp_map: leaf2: the CNP DSCP 48 maps to class 9, not the CNP class 6" in found
    assert "design dscp_map: leaf2: DSCPs 48 map to classes [9] the plan does not define" in found


def test_dscp_recomputed_without_full_map(plan):
    sw = plan["devices"]["leaf1"]
    del sw["dscp_map_full"]
    assert errors(plan) == []
    sw["dscp_map"]["26"] = 0
    assert "design dscp_map: leaf1: the RoCE DSCP 26 maps to class 0, not the data class 3" in errors(plan)


def test_dscp_host_map_differs(plan):
    plan["devices"]["gpu1"]["dscp_map"] = {"24": 3, "48": 6}
    assert "design dscp_map: gpu1: the NIC's DSCP map {'24': 3, '48': 6} is not the switches' {'26': 3, '48': 6}" in errors(plan)


def test_dscp_default_class_lossless_by_intent_is_a_note():
    intent, devices = fabric()
    intent["roce"] = {"pfc": {"priorities": [0, 3]}}
    plan = _plan.build_plan(intent, devices)
    record = next(r for r in plan["design"] if r["rule"] == "dscp_map")
    assert record["status"] == "warning" and any("ride the lossless default class 0" in n for n in record["notes"])


# -- scheduler share ------------------------------------------------------------------------------


def test_lossless_class_without_share(plan):
    classes = plan["devices"]["leaf1"]["traffic_classes"]
    classes["3"]["bandwidth_percent"] = 0
    found = errors(plan)
    assert "design scheduler_share: leaf1 class 3: the lossless class has scheduler share 0 %: it is served only when the others are idle" in found
    assert any(e.startswith("design scheduler_share: leaf1: weighted class shares {0: 50, 3: 0} sum to 50 %, not 100 %") for e in found)


def test_lossless_class_strict(plan):
    plan["devices"]["leaf1"]["traffic_classes"]["3"]["strict"] = True
    assert any(e.startswith("design scheduler_share: leaf1 class 3: the lossless class is strict priority") for e in errors(plan))


def test_junos_roce_queue_transmit_rate(plan):
    plan["devices"]["leaf2"]["junos"]["transmit_percent"]["3"] = 0
    assert "design scheduler_share: leaf2 junos.transmit_percent: the RoCE queue 3 has transmit-rate 0 %" in errors(plan)


def test_a_roce_plan_without_its_roce_section(plan):
    del plan["intent"]["roce"]
    assert errors(plan) == ["design dscp_map: intent: a RoCE plan without its roce section: nothing to check the devices against"]


# -- all at once, and build_plan stops ------------------------------------------------------------


def test_every_violation_at_once(plan):
    plan["devices"]["leaf1"]["ports"]["Ethernet2"]["pfc_priorities"] = []
    plan["devices"]["leaf2"]["traffic_classes"]["6"]["lossless"] = True
    plan["devices"]["gpu1"]["dscp_map"] = {}
    rules = {e.split(":")[0] for e in errors(plan)}
    # class 6 made lossless is also a strict lossless class (no share) and a paused class the watchdog does not watch
    assert rules == {"design watchdog", "design cnp_class", "design dscp_map", "design scheduler_share"}


def test_build_plan_raises_on_a_design_error(monkeypatch):
    real = _plan._switch_plan

    def broken(intent, device):
        out = real(intent, device)
        out = copy.deepcopy(out)
        out["traffic_classes"]["3"]["bandwidth_percent"] = 0
        return out

    monkeypatch.setattr(_plan, "_switch_plan", broken)
    with pytest.raises(_tables.IntentError) as exc:
        _plan.build_plan(*fabric())
    assert any(e.startswith("design scheduler_share: leaf1 class 3:") for e in exc.value.errors)
    assert any(e.startswith("design scheduler_share: leaf2 class 3:") for e in exc.value.errors)
