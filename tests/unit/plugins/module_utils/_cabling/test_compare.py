# SPDX-License-Identifier: GPL-3.0-or-later
"""Unit tests for plugins/module_utils/_cabling/_compare.py: the cabling check's comparison and report (issue 16).

The physical truth comes from the lab's own wiring model (tests/lab/wiring.py: the lab inventory's
links plus the faults a test names), turned into the readers' observation shape the way a switch's
LLDP and a host's lldpd see a cable (docs/cabling.md): a switch hears a host NIC as its MAC (port ID
subtype mac, lldpd's default) with the netdev as port description; a host hears a switch port by its
name. Each finding kind has a test whose fault makes it, and the correct fabric passes.
"""

from __future__ import annotations

import copy
import glob
import json
import os
import sys

import pytest
import yaml

from ansible_collections.lossless.fabric.plugins.module_utils._cabling import _compare as _cabling

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))))
sys.path.insert(0, os.path.join(ROOT, "tests", "lab"))
import wiring  # noqa: E402  # pylint: disable=wrong-import-position


def _hostvars() -> dict:
    out = {}
    for path in sorted(glob.glob(os.path.join(ROOT, "inventories", "lab", "host_vars", "*.yml"))):
        with open(path, encoding="utf-8") as handle:
            out[os.path.basename(path)[:-4]] = yaml.safe_load(handle)
    return out


HOSTVARS = _hostvars()
SWITCHES = ("leaf1", "leaf2", "spine1")
HOSTS = ("gpu1", "gpu2")


def _end(host, kind, name):
    return {"host": host, kind: name}


def lab_cabling() -> dict:
    """plan.cabling of the lab inventory, as fabric_plan returns it (written out: the contract in docs/cabling.md)."""
    raw = [("leaf1", "swp1", "gpu1", "nic", "mlx5_0", 0), ("leaf1", "swp2", "gpu2", "nic", "mlx5_0", 0),
           ("leaf1", "swp31", "spine1", "port", "Ethernet1/1", None), ("leaf2", "et-0/0/1", "gpu1", "nic", "mlx5_1", 1),
           ("leaf2", "et-0/0/2", "gpu2", "nic", "mlx5_1", 1), ("leaf2", "et-0/0/31", "spine1", "port", "Ethernet2/1", None)]
    links, switches, hosts = [], {}, {}
    for sw, port, peer, kind, name, rail in raw:
        links.append({"a": _end(sw, "port", port), "b": _end(peer, kind, name), "rail": rail, "speed": "400G"})
        switches.setdefault(sw, {"ports": {}, "ports_without_peer": []})["ports"][port] = {"peer": _end(peer, kind, name), "rail": rail, "speed": "400G"}
        if kind == "nic":
            hosts.setdefault(peer, {"nics": {}, "rails": {}, "nccl_ib_hca": "=mlx5_0,mlx5_1"})["nics"][name] = {
                "peer": _end(sw, "port", port), "rail": rail, "speed": "400G"}
        else:
            switches.setdefault(peer, {"ports": {}, "ports_without_peer": []})["ports"][name] = {"peer": _end(sw, "port", port), "rail": rail, "speed": "400G"}
    return {"links": links, "hosts": hosts, "switches": switches, "ib_topology": None}


def observe(faults=None, *, domain="", host_lldp=True, devices=SWITCHES + HOSTS) -> dict:
    """The readers' observations of the lab cabled as wiring.py says (with these faults)."""
    built = wiring.build(HOSTVARS, faults or [])
    ends = {tuple(e["end"]): e for e in built["ends"]}
    out = {}
    for device in devices:
        mine = {}
        for name, seen in wiring.view(built, device).items():
            entry = {"oper": seen["oper"], "speed": seen["speed"], "width": None, "neighbors": []}
            peer = seen["peer"]
            if peer and (device in SWITCHES or host_lldp):
                if "nic" in peer:
                    entry["neighbors"].append({"system": peer["host"] + domain, "port": peer["mac"], "port_id_subtype": "mac",
                                               "port_descr": peer["netdev"], "chassis_id": None})
                else:
                    entry["neighbors"].append({"system": peer["host"] + domain, "port": peer["port"], "port_id_subtype": "ifname",
                                               "port_descr": None, "chassis_id": None})
            if device in HOSTS:
                info = ends[(device, "nic", name)]
                entry["self"] = {"netdev": info["netdev"], "mac": info["mac"]}
            mine[name] = entry
        out[device] = mine
    return out


def kinds(result) -> list:
    return sorted((f["finding"], f["a"], f["b"]) for f in result["findings"] if f["finding"] != "ok")


def only(result, kind) -> dict:
    found = [f for f in result["findings"] if f["finding"] == kind]
    assert len(found) == 1, result["findings"]
    return found[0]


def test_the_correct_lab_passes_with_every_link_ok():
    result = _cabling.compare(lab_cabling(), observe())
    assert result["verdict"] == "passed" and not result["failed"]
    assert result["summary"]["ok"] == 6 and result["summary"]["links"] == 6
    assert all(result["summary"][k] == 0 for k in _cabling.BAD_KINDS)
    assert {f["a"] for f in result["findings"]} == {"leaf1:swp1", "leaf1:swp2", "leaf1:swp31", "leaf2:et-0/0/1", "leaf2:et-0/0/2", "leaf2:et-0/0/31"}
    assert "Every intended link is cabled as the intent says." in _cabling.markdown(result)


def test_system_names_with_a_domain_and_another_case_match():
    obs = observe(domain=".dc1.example.net")
    for ends in obs.values():
        for seen in ends.values():
            for n in seen["neighbors"]:
                n["system"] = n["system"].upper()
    assert _cabling.compare(lab_cabling(), obs)["verdict"] == "passed"


def test_a_different_host_with_the_same_short_name_prefix_does_not_match():
    obs = observe()
    obs["leaf1"]["swp1"]["neighbors"][0]["system"] = "gpu1x.example"
    f = only(_cabling.compare(lab_cabling(), obs), "wrong_peer")
    assert f["a"] == "leaf1:swp1" and "gpu1x.example port" in f["found"]


@pytest.mark.parametrize("how", ["mac", "mac-dashes", "mac-dotted", "netdev-as-port", "netdev-as-descr", "nic-name"])
def test_a_host_nic_is_recognised_by_mac_netdev_or_nic_name(how):
    obs = observe()
    n = obs["leaf1"]["swp1"]["neighbors"][0]
    mac = obs["gpu1"]["mlx5_0"]["self"]["mac"]
    n.update({"mac": {"port": mac.upper(), "port_descr": None}, "mac-dashes": {"port": mac.replace(":", "-"), "port_descr": None},
              # EOS prints a host's MAC port ID dotted (docs/vendor-eos.md, "LLDP and link state").
              "mac-dotted": {"port": ".".join(mac.replace(":", "")[i:i + 4] for i in (0, 4, 8)), "port_descr": None},
              "netdev-as-port": {"port": "eth2", "port_descr": None}, "netdev-as-descr": {"port": "00:00:00:00:00:01", "port_descr": "eth2"},
              "nic-name": {"port": "mlx5_0", "port_descr": None}}[how])
    # Only the switch end speaks: the host runs no LLDP agent.
    for seen in obs["gpu1"].values():
        seen["neighbors"] = []
    result = _cabling.compare(lab_cabling(), obs)
    assert result["verdict"] == "passed", kinds(result)


def test_the_other_nic_of_the_right_host_is_a_wrong_peer():
    obs = observe()
    obs["leaf1"]["swp1"]["neighbors"][0]["port"] = obs["gpu1"]["mlx5_1"]["self"]["mac"]
    obs["leaf1"]["swp1"]["neighbors"][0]["port_descr"] = "eth3"
    f = only(_cabling.compare(lab_cabling(), obs), "wrong_peer")
    assert (f["a"], f["b"], f["rail"]) == ("leaf1:swp1", "gpu1:mlx5_0", 0)
    assert "leaf1:swp1 sees gpu1:mlx5_1" in f["found"] and f["expected"] == "leaf1:swp1 - gpu1:mlx5_0 at 400G"


def test_the_nic_mac_from_the_plan_when_the_host_gave_no_self():
    obs = observe()
    for seen in obs["gpu1"].values():
        del seen["self"]
        seen["neighbors"] = []
    obs["leaf1"]["swp1"]["neighbors"][0]["port_descr"] = None  # only the MAC to go by
    assert _cabling.compare(lab_cabling(), obs)["verdict"] == "failed"  # the MAC is nobody's: not the peer
    mac = wiring.mac("gpu1", "mlx5_0")
    nics = {"gpu1": {"mlx5_0": {"netdev": "eth2", "mac": mac}, "mlx5_1": {"netdev": "eth3"}}}
    assert _cabling.compare(lab_cabling(), obs, nics=nics)["verdict"] == "passed"


def test_a_swap_is_one_finding_naming_both_links():
    result = _cabling.compare(lab_cabling(), observe([{"swap": ["leaf1:swp1", "leaf1:swp2"]}]))
    assert kinds(result) == [("swapped", "leaf1:swp1", "gpu1:mlx5_0")]
    f = only(result, "swapped")
    assert [(x["a"], x["b"]) for x in f["links"]] == [("leaf1:swp1", "gpu1:mlx5_0"), ("leaf1:swp2", "gpu2:mlx5_0")]
    assert f["rail"] == 0 and f["expected"] == "leaf1:swp1 - gpu1:mlx5_0 and leaf1:swp2 - gpu2:mlx5_0"
    assert f["found"].startswith("crossed: leaf1:swp1 - gpu2:mlx5_0 and leaf1:swp2 - gpu1:mlx5_0"), f["found"]
    assert result["summary"]["swapped"] == 1 and result["summary"]["ok"] == 4 and result["failed"]


def test_a_swap_seen_from_one_end_only_is_still_a_swap():
    obs = observe([{"swap": ["gpu1:mlx5_1", "gpu2:mlx5_1"]}], host_lldp=False)
    f = only(_cabling.compare(lab_cabling(), obs), "swapped")
    assert [x["a"] for x in f["links"]] == ["leaf2:et-0/0/1", "leaf2:et-0/0/2"] and f["rail"] == 1


def test_two_wrong_peers_that_did_not_cross_are_two_findings_not_a_swap():
    obs = observe()
    # leaf1:swp1 hears gpu2's NIC, but leaf1:swp2 still hears gpu2 too (not gpu1): no crossing.
    obs["leaf1"]["swp1"]["neighbors"] = copy.deepcopy(obs["leaf1"]["swp2"]["neighbors"])
    obs["gpu1"]["mlx5_0"]["neighbors"] = [{"system": "leaf2", "port": "et-0/0/2", "port_id_subtype": "ifname", "port_descr": None, "chassis_id": None}]
    result = _cabling.compare(lab_cabling(), obs)
    assert result["summary"]["swapped"] == 0 and result["summary"]["wrong_peer"] == 1
    f = only(result, "wrong_peer")
    assert f["found"] == "leaf1:swp1 sees gpu2:mlx5_0; gpu1:mlx5_0 sees leaf2:et-0/0/2"
    # And two independent wrong peers on two links stay two findings.
    obs["leaf1"]["swp2"]["neighbors"][0]["system"] = "gpu9"
    result = _cabling.compare(lab_cabling(), obs)
    assert [f["a"] for f in result["findings"] if f["finding"] == "wrong_peer"] == ["leaf1:swp1", "leaf1:swp2"]


def test_a_moved_nic_names_where_it_went_on_both_links():
    result = _cabling.compare(lab_cabling(), observe([{"move": "gpu1:mlx5_0", "to": "leaf2:et-0/0/2"}]))
    assert kinds(result) == [("wrong_peer", "leaf1:swp1", "gpu1:mlx5_0"), ("wrong_peer", "leaf2:et-0/0/2", "gpu2:mlx5_1")]
    first, second = (f for f in result["findings"] if f["finding"] == "wrong_peer")
    assert first["found"] == "leaf1:swp1 down; gpu1:mlx5_0 sees leaf2:et-0/0/2" or first["found"] == "gpu1:mlx5_0 sees leaf2:et-0/0/2", first
    assert first["rail"] == 0 and second["rail"] == 1
    assert "leaf2:et-0/0/2 sees gpu1:mlx5_0" in second["found"] and "gpu2:mlx5_1 down" in second["found"]


def test_a_downgraded_link_is_degraded_with_both_speeds():
    result = _cabling.compare(lab_cabling(), observe([{"downgrade": "leaf1:swp31", "speed": "200G"}]))
    f = only(result, "degraded")
    assert (f["a"], f["b"], f["rail"]) == ("leaf1:swp31", "spine1:Ethernet1/1", None)
    assert f["expected"] == "leaf1:swp31 - spine1:Ethernet1/1 at 400G"
    assert f["found"] == "leaf1:swp31 at 200G; spine1:Ethernet1/1 at 200G"


def test_one_slow_end_is_enough_for_degraded():
    obs = observe()
    obs["gpu2"]["mlx5_1"]["speed"] = "100G"
    f = only(_cabling.compare(lab_cabling(), obs), "degraded")
    assert f["a"] == "leaf2:et-0/0/2" and "gpu2:mlx5_1 at 100G" in f["found"]


def test_an_infiniband_width_below_4x_is_degraded():
    obs = observe()
    for device, port in (("leaf1", "swp1"), ("gpu1", "mlx5_0")):
        obs[device][port]["width"] = "4X"
    assert _cabling.compare(lab_cabling(), obs)["verdict"] == "passed"
    obs["gpu1"]["mlx5_0"]["width"] = "2X"
    f = only(_cabling.compare(lab_cabling(), obs), "degraded")
    assert f["a"] == "leaf1:swp1" and "gpu1:mlx5_0 at 400G 2X" in f["found"] and "4X" in f["expected"]


def test_an_unplugged_link_is_missing_at_both_ends():
    f = only(_cabling.compare(lab_cabling(), observe([{"unplug": "leaf1:swp2"}])), "missing")
    assert (f["a"], f["b"], f["rail"]) == ("leaf1:swp2", "gpu2:mlx5_0", 0)
    assert f["found"] == "leaf1:swp2 down; gpu2:mlx5_0 down"


def test_up_without_any_neighbour_is_missing_and_a_stale_neighbour_on_a_down_port_is_ignored():
    obs = observe()
    obs["leaf1"]["swp31"]["neighbors"] = []
    obs["spine1"]["Ethernet1/1"]["neighbors"] = []
    f = only(_cabling.compare(lab_cabling(), obs), "missing")
    assert f["a"] == "leaf1:swp31" and "no LLDP neighbour" in f["found"]
    obs = observe()
    obs["gpu2"]["mlx5_0"]["oper"] = "down"  # lldpd still lists the neighbour until its TTL runs out
    obs["leaf1"]["swp2"]["oper"] = "down"
    assert only(_cabling.compare(lab_cabling(), obs), "missing")["found"] == "leaf1:swp2 down; gpu2:mlx5_0 down"


def test_evidence_of_both_ends_combines():
    # The switch hears nothing (LLDP off on that port), the host hears the switch: proved from one end.
    obs = observe()
    obs["leaf2"]["et-0/0/1"]["neighbors"] = []
    assert _cabling.compare(lab_cabling(), obs)["verdict"] == "passed"
    # One end proves the peer, the other end hears someone else: the disagreement is a wrong peer, not ok.
    obs["leaf2"]["et-0/0/1"]["neighbors"] = [{"system": "gpu2", "port": "eth3", "port_id_subtype": "local", "port_descr": None, "chassis_id": None}]
    f = only(_cabling.compare(lab_cabling(), obs), "wrong_peer")
    assert f["found"] == "leaf2:et-0/0/1 sees gpu2:mlx5_1; gpu1:mlx5_1 sees leaf2:et-0/0/1"


def test_an_unread_device_fails_and_its_links_are_judged_from_the_other_end():
    obs = observe()
    del obs["gpu2"]
    result = _cabling.compare(lab_cabling(), obs, unread_reasons={"gpu2": "host_links failed on gpu2: lldpctl: cannot connect"})
    assert result["failed"] and result["summary"]["unread"] == 1 and result["summary"]["ok"] == 6
    f = only(result, "unread")
    assert f["a"] == "gpu2" and f["found"] == "nothing: host_links failed on gpu2: lldpctl: cannot connect"
    assert [x["a"] for x in f["links"]] == ["leaf1:swp2", "leaf2:et-0/0/2"] and f["expected"] == "an observation of gpu2 (host_links) for 2 link(s)"


def test_a_link_no_end_of_which_was_read_is_unread_and_nothing_read_passes_nothing():
    obs = observe()
    del obs["spine1"]
    del obs["leaf1"]["swp31"]
    f = [x for x in _cabling.compare(lab_cabling(), obs)["findings"] if x["finding"] == "unread" and x["b"]]
    assert [(x["a"], x["found"]) for x in f] == [("leaf1:swp31", "leaf1 said nothing of swp31; spine1 not read")]
    result = _cabling.compare(lab_cabling(), {})
    assert result["failed"] and result["summary"]["ok"] == 0 and result["summary"]["unread"] == 6 + 5


def test_a_neighbour_on_a_port_without_a_peer_is_unexpected():
    cabling = lab_cabling()
    cabling["switches"]["leaf1"]["ports_without_peer"] = ["swp3"]
    obs = observe()
    obs["leaf1"]["swp3"] = {"oper": "up", "speed": "400G", "width": None,
                            "neighbors": [{"system": "storage7", "port": "ens1f0", "port_id_subtype": "ifname", "port_descr": None, "chassis_id": None}]}
    obs["leaf1"]["eth0"] = {"oper": "up", "speed": "1G", "width": None,  # management port, not in scope: the OOB switch is no news
                            "neighbors": [{"system": "oob-sw1", "port": "ge-0/0/1", "port_id_subtype": "ifname", "port_descr": None, "chassis_id": None}]}
    f = only(_cabling.compare(cabling, obs), "unexpected")
    assert (f["a"], f["b"]) == ("leaf1:swp3", None) and f["found"] == "leaf1:swp3 sees storage7 port ens1f0"
    assert f["expected"] == "no neighbour (the intent gives this port no peer)"


def test_a_fabric_device_on_a_port_out_of_scope_and_next_to_the_peer_is_unexpected():
    obs = observe()
    obs["leaf2"]["et-0/0/9"] = {"oper": "up", "speed": "400G", "width": None,
                                "neighbors": [{"system": "spine1", "port": "Ethernet3/1", "port_id_subtype": "ifname", "port_descr": None, "chassis_id": None}]}
    obs["leaf1"]["swp1"]["neighbors"].append({"system": "leaf2", "port": "et-0/0/7", "port_id_subtype": "ifname", "port_descr": None, "chassis_id": None})
    result = _cabling.compare(lab_cabling(), obs)
    assert kinds(result) == [("unexpected", "leaf1:swp1", "gpu1:mlx5_0"), ("unexpected", "leaf2:et-0/0/9", None)]
    assert result["summary"]["ok"] == 6 and result["failed"]
    # A device the fabric reader saw that is not in the cabling (an undescribed spine) is no news on an out-of-scope port.
    obs["leaf2"]["et-0/0/9"]["neighbors"][0]["system"] = "spine9"
    obs["spine9"] = {"Ethernet3/1": {"oper": "up", "speed": "400G", "width": None, "neighbors": [{"system": "leaf2", "port": "et-0/0/9"}]}}
    assert kinds(_cabling.compare(lab_cabling(), obs)) == [("unexpected", "leaf1:swp1", "gpu1:mlx5_0")]


def test_an_exception_allows_the_finding_it_names_and_stays_in_the_report():
    obs = observe([{"downgrade": "leaf1:swp2", "speed": "200G"}])
    exceptions = [{"end": "leaf1:swp2", "finding": "degraded", "reason": "RMA 1234: optic on order"}]
    result = _cabling.compare(lab_cabling(), obs, exceptions)
    assert result["verdict"] == "passed" and result["summary"]["allowed"] == 1 and not result["unused_exceptions"]
    f = only(result, "degraded")
    assert f["allowed"] and f["reason"] == "RMA 1234: optic on order"
    assert "| degraded | leaf1:swp2 | gpu2:mlx5_0 | 0 |" in _cabling.markdown(result)
    assert "allowed: RMA 1234: optic on order |" in _cabling.markdown(result)
    # The far end and the whole device name it too; another finding kind does not.
    for end in ("gpu2:mlx5_0", "gpu2"):
        assert _cabling.compare(lab_cabling(), obs, [dict(exceptions[0], end=end)])["verdict"] == "passed"
    result = _cabling.compare(lab_cabling(), obs, [dict(exceptions[0], finding="missing")])
    assert result["failed"] and [e["end"] for e in result["unused_exceptions"]] == ["leaf1:swp2"]


def test_an_exception_on_a_channelized_port_name_with_a_colon():
    _good, errors = _cabling.check_exceptions([{"end": "leaf2:et-0/0/1:0", "finding": "missing", "reason": "breakout pending"}])
    assert errors == []


def test_an_exception_that_matches_nothing_is_reported():
    result = _cabling.compare(lab_cabling(), observe(), [{"end": "leaf1:swp9", "finding": "missing", "reason": "CHG-77"}])
    assert result["verdict"] == "passed" and result["summary"]["unused_exceptions"] == 1
    assert result["unused_exceptions"] == [{"end": "leaf1:swp9", "finding": "missing", "reason": "CHG-77", "index": 0}]
    assert "- exceptions[0]: leaf1:swp9 missing (CHG-77)" in _cabling.markdown(result)


def test_an_unread_device_can_be_allowed_by_name():
    obs = observe()
    del obs["gpu2"]
    result = _cabling.compare(lab_cabling(), obs, [{"end": "gpu2", "finding": "unread", "reason": "in repair, ticket 55"}])
    assert result["verdict"] == "passed" and only(result, "unread")["allowed"]
    # One of its NICs does not name the whole device.
    result = _cabling.compare(lab_cabling(), obs, [{"end": "gpu2:mlx5_0", "finding": "unread", "reason": "in repair, ticket 55"}])
    assert result["failed"] and result["summary"]["unused_exceptions"] == 1


@pytest.mark.parametrize("entry, error", [
    ({"end": "leaf1:swp2", "finding": "degrade", "reason": "x"},
     "exceptions[0].finding: 'degrade' is not a finding an exception can allow (missing, wrong_peer, swapped, degraded, unexpected, unproven, unread)"),
    ({"end": "leaf1:swp2", "finding": "ok", "reason": "x"}, "exceptions[0].finding: 'ok' is not a finding"),
    ({"end": "leaf1:swp2", "finding": "missing"}, "exceptions[0].reason: required"),
    ({"end": "leaf1:swp2", "finding": "missing", "reason": "RMA\n| injected | row |"}, "exceptions[0].reason: 'RMA\\n| injected | row |' is not one line"),
    ({"end": "leaf1:swp2", "finding": "missing", "reason": "  "}, "exceptions[0].reason: '  ' is not one line"),
    ({"end": "leaf1:", "finding": "missing", "reason": "x"}, "exceptions[0].end: 'leaf1:' is not '<host>:<port or NIC>' or '<host>'"),
    ({"end": ":swp1", "finding": "missing", "reason": "x"}, "exceptions[0].end: ':swp1' is not"),
    ({"end": "leaf1 swp1", "finding": "missing", "reason": "x"}, "exceptions[0].end: 'leaf1 swp1' is not"),
    ({"end": ["leaf1:swp2"], "finding": "missing", "reason": "x"}, "exceptions[0].end: ['leaf1:swp2'] is not"),
    ({"end": "leaf1:swp2", "finding": "missing", "reason": "x", "until": "2027"}, "exceptions[0].until: unknown key (an exception has end, finding, reason)"),
    ("leaf1:swp2 degraded", "exceptions[0]: 'leaf1:swp2 degraded' is not {end, finding, reason}"),
])
def test_a_bad_exception_is_refused_naming_the_key_and_the_value(entry, error):
    with pytest.raises(_cabling.CablingInputError) as raised:
        _cabling.compare(lab_cabling(), observe(), [{"end": "gpu1", "finding": "unread", "reason": "fine"}, entry][1:])
    assert any(e.startswith(error) for e in raised.value.errors), raised.value.errors


def test_every_bad_exception_at_once_and_a_bad_list():
    _good, errors = _cabling.check_exceptions([{"end": "x", "finding": "nope", "reason": ""}, 3])
    assert errors == ["exceptions[0].finding: 'nope' is not a finding an exception can allow"
                      " (missing, wrong_peer, swapped, degraded, unexpected, unproven, unread)",
                      "exceptions[0].reason: '' is not one line saying why (a ticket, an RMA number)",
                      "exceptions[1]: 3 is not {end, finding, reason}"]
    assert _cabling.check_exceptions({"end": "x"})[1] == ["exceptions: {'end': 'x'} is not a list of {end, finding, reason}"]


@pytest.mark.parametrize("mutate, error", [
    (lambda o: o["leaf1"]["swp1"].update(oper="UP"), "observations['leaf1']['swp1'].oper: 'UP' is not up, down or null"),
    (lambda o: o["leaf1"]["swp1"].update(speed="400000"), "observations['leaf1']['swp1'].speed: '400000' is not a speed like '400G' (or null)"),
    (lambda o: o["leaf1"]["swp1"].update(width="4x wide"), "observations['leaf1']['swp1'].width: '4x wide' is not an InfiniBand width"),
    (lambda o: o["leaf1"]["swp1"].update(neighbors=[{"port": "x"}]), "observations['leaf1']['swp1'].neighbors[0]: {'port': 'x'} has no system name"),
    (lambda o: o.update(leaf1=["swp1"]), "observations['leaf1']: ['swp1'] is not a mapping"),
])
def test_an_observation_out_of_shape_is_refused_with_its_path(mutate, error):
    obs = observe()
    mutate(obs)
    with pytest.raises(_cabling.CablingInputError) as raised:
        _cabling.compare(lab_cabling(), obs)
    assert any(e.startswith(error) for e in raised.value.errors), raised.value.errors


def test_a_cabling_that_is_not_a_plan_is_refused():
    with pytest.raises(_cabling.CablingInputError, match=r"cabling.links\[0\].a: \{'host': 'leaf1'\} is not an end"):
        _cabling.compare({"links": [{"a": {"host": "leaf1"}, "b": {"host": "gpu1", "nic": "mlx5_0"}}]}, {})
    with pytest.raises(_cabling.CablingInputError, match="cabling: list is not the plan's cabling"):
        _cabling.compare([], {})


def test_readings_of_the_three_readers_become_observations_and_unread_reasons():
    obs = observe()
    readings = {
        "leaf1": {"switch_links": {"changed": False, "ends": obs["leaf1"]}, "host_links": {"skipped": True}},
        "leaf2": {"switch_links": {"failed": True, "msg": "leaf2: show lldp neighbors: unknown form\nexpected JSON"}},
        "gpu1": {"host_links": {"changed": False, "ends": obs["gpu1"], "lldp_source": "lldpd"}},
        "gpu2": {"host_links": {"unreachable": True, "msg": "ssh: connect to host gpu2 port 22: No route to host"}},
        "sm1": {"ib_links": {"changed": False, "devices": {"spine1": obs["spine1"]}, "unmapped": ["MF0;ib-sw9:SX6036/U1"]}},
    }
    observations, reasons, errors = _cabling.observations_from_readings(readings)
    assert errors == [] and sorted(observations) == ["gpu1", "leaf1", "spine1"]
    assert reasons["leaf2"] == "switch_links failed on leaf2: leaf2: show lldp neighbors: unknown form expected JSON"
    assert reasons["gpu2"] == "host_links unreachable on gpu2: ssh: connect to host gpu2 port 22: No route to host"
    result = _cabling.compare(lab_cabling(), observations, unread_reasons=reasons)
    assert sorted(f["a"] for f in result["findings"] if f["finding"] == "unread") == ["gpu2", "leaf2", "leaf2:et-0/0/2"]
    assert _cabling.observations_from_readings({"x": {"switch_links": {"changed": False}}})[2] == [
        "readings['x']['switch_links']: neither ends nor devices in the result (a switch_links result was expected)"]


def test_two_readers_of_one_device_merge_their_neighbours():
    a = {"gpu1": {"mlx5_0": {"oper": "up", "speed": None, "width": None, "neighbors": [{"system": "leaf1", "port": "swp1"}]}}}
    b = {"gpu1": {"mlx5_0": {"oper": None, "speed": "400G", "width": "4X", "neighbors": [{"system": "leaf1", "port": "swp1"}, {"system": "x", "port": "y"}]},
                  "mlx5_1": {"oper": "down", "neighbors": []}}}
    merged = _cabling.merge_observations(a, b)
    assert merged["gpu1"]["mlx5_0"] == {"oper": "up", "speed": "400G", "width": "4X",
                                        "neighbors": [{"system": "leaf1", "port": "swp1"}, {"system": "x", "port": "y"}]}
    assert merged["gpu1"]["mlx5_1"]["oper"] == "down" and a["gpu1"]["mlx5_0"]["neighbors"] == [{"system": "leaf1", "port": "swp1"}]


def test_the_report_has_one_line_per_bad_link_and_the_same_bytes_each_time():
    faults = [{"swap": ["leaf1:swp1", "leaf1:swp2"]}, {"unplug": "leaf2:et-0/0/31"}, {"downgrade": "leaf2:et-0/0/1", "speed": "200G"}]
    result = _cabling.compare(lab_cabling(), observe(faults))
    md = _cabling.markdown(result)
    rows = [line for line in md.splitlines() if line.startswith("| ") and not line.startswith("| Finding")]
    assert rows == [
        "| swapped | leaf1:swp1 | gpu1:mlx5_0 | 0 | leaf1:swp1 - gpu1:mlx5_0 and leaf1:swp2 - gpu2:mlx5_0 | crossed: leaf1:swp1 - gpu2:mlx5_0 and "
        "leaf1:swp2 - gpu1:mlx5_0 (leaf1:swp1 sees gpu2:mlx5_0; gpu1:mlx5_0 sees leaf1:swp2; leaf1:swp2 sees gpu1:mlx5_0; gpu2:mlx5_0 sees leaf1:swp1) | no |",
        "| degraded | leaf2:et-0/0/1 | gpu1:mlx5_1 | 1 | leaf2:et-0/0/1 - gpu1:mlx5_1 at 400G | leaf2:et-0/0/1 at 200G; gpu1:mlx5_1 at 200G | no |",
        "| missing | leaf2:et-0/0/31 | spine1:Ethernet2/1 | - | leaf2:et-0/0/31 - spine1:Ethernet2/1 at 400G | "
        "leaf2:et-0/0/31 down; spine1:Ethernet2/1 down | no |",
    ]
    assert "Verdict: **failed** - 6 intended links; ok 2, missing 1, wrong_peer 0, swapped 1, degraded 1, unexpected 0, unproven 0, unread 0; allowed 0." in md
    files = _cabling.report_files(result)
    assert sorted(files) == ["cabling.json", "cabling.md"] and files == _cabling.report_files(_cabling.compare(lab_cabling(), observe(faults)))
    doc = json.loads(files["cabling.json"])
    assert doc["verdict"] == "failed" and doc["summary"]["swapped"] == 1 and len(doc["findings"]) == 5


def test_a_pipe_in_a_found_name_cannot_break_the_report_table():
    obs = observe()
    obs["leaf1"]["swp1"]["neighbors"][0].update(system="evil|host", port="x")
    md = _cabling.markdown(_cabling.compare(lab_cabling(), obs))
    row = [line for line in md.splitlines() if line.startswith("| wrong_peer")][0]
    assert "evil\\|host port x" in row and row.count(" | ") == 6


def _junos(port="517", descr=None, subtype="local"):
    """leaf2 as spine1's LLDP shows it: Junos sends its SNMP ifIndex as port ID (subtype local) and the
    interface name, when at all, only as the port description (issue 32)."""
    return [{"system": "leaf2", "port": port, "port_id_subtype": subtype, "port_descr": descr, "chassis_id": "2c:6b:f5:00:00:02"}]


def test_the_right_switch_with_a_port_id_that_names_none_of_its_ports_is_unproven_with_the_reason():
    obs = observe()
    obs["spine1"]["Ethernet2/1"]["neighbors"] = _junos(port="523", descr="to spine1 Ethernet2/1")
    assert _cabling.compare(lab_cabling(), obs)["verdict"] == "passed"  # leaf2's own LLDP proves the link
    obs["leaf2"]["et-0/0/31"]["neighbors"] = []
    f = only(_cabling.compare(lab_cabling(), obs), "unproven")
    assert f["a"] == "leaf2:et-0/0/31" and f["found"] == (
        "leaf2:et-0/0/31 up, no LLDP neighbour; spine1:Ethernet2/1 sees leaf2 port 523 (to spine1 Ethernet2/1), unproven: port ID '523'"
        " (subtype local) is a locally assigned number, not an interface name (Junos sends the SNMP ifIndex), and the port description"
        " 'to spine1 Ethernet2/1' names none either")


@pytest.mark.parametrize("leaf2", ["unread", "silent"])
def test_one_readable_end_proves_a_junos_link_through_the_port_description(leaf2):
    """Only spine1 is read (leaf2 unread, or its LLDP hears nothing): the ifIndex port ID names nothing, the
    description names et-0/0/31, which proves the link from that one end."""
    obs = observe()
    obs["spine1"]["Ethernet2/1"]["neighbors"] = _junos(descr="et-0/0/31")
    if leaf2 == "unread":
        del obs["leaf2"]
    else:
        obs["leaf2"]["et-0/0/31"]["neighbors"] = []
    result = _cabling.compare(lab_cabling(), obs)
    (link,) = [f for f in result["findings"] if f["a"] == "leaf2:et-0/0/31"]
    assert link["finding"] == "ok" and "spine1:Ethernet2/1 sees leaf2:et-0/0/31" in link["found"], link


@pytest.mark.parametrize(
    "neighbor, reason",
    [
        (_junos(), "port ID '517' (subtype local) is a locally assigned number, not an interface name (Junos sends the SNMP ifIndex),"
                   " and no port description was sent"),
        (_junos(descr="uplink"), "port ID '517' (subtype local) is a locally assigned number, not an interface name (Junos sends the SNMP"
                                 " ifIndex), and the port description 'uplink' names none either"),
        # SONiC sends the port's alias (etpN), locally assigned
        (_junos(port="etp1"), "port ID 'etp1' (subtype local) names no port of leaf2 the intent knows, and no port description was sent"),
        (_junos(port="2c6b.f500.0031", subtype="mac"), "port ID '2c6b.f500.0031' (subtype mac) is a MAC the intent does not know for leaf2,"
                                                       " and no port description was sent"),
        (_junos(port="517", subtype=None), "port ID '517' names no port of leaf2 the intent knows, and no port description was sent"),
        # No system name (an optional TLV): who it is cannot be told; NX-OS prints chassis IDs dotted.
        ([{"system": None, "port": "et-0/0/31", "port_id_subtype": "ifname", "port_descr": None, "chassis_id": "2c6b.f500.0002"}],
         "no system name sent (chassis ID 2c:6b:f5:00:00:02, which the intent does not name)"),
        ([{"system": None, "port": "et-0/0/31", "port_id_subtype": None, "port_descr": None, "chassis_id": None}],
         "no system name sent and no chassis ID"),
    ],
)
def test_a_link_one_end_cannot_prove_is_unproven_naming_why(neighbor, reason):
    obs = observe()
    del obs["leaf2"]
    obs["spine1"]["Ethernet2/1"]["neighbors"] = neighbor
    result = _cabling.compare(lab_cabling(), obs)
    f = only(result, "unproven")
    assert f["a"] == "leaf2:et-0/0/31" and f["found"].startswith("leaf2 not read; spine1:Ethernet2/1 sees ") and f["found"].endswith(
        ", unproven: " + reason), f["found"]
    assert result["failed"] and result["summary"]["unproven"] == 1 and result["summary"]["wrong_peer"] == 0


def test_an_unproven_link_can_be_allowed_by_an_exception():
    obs = observe()
    del obs["leaf2"]
    obs["spine1"]["Ethernet2/1"]["neighbors"] = _junos()
    exceptions = [{"end": "spine1:Ethernet2/1", "finding": "unproven", "reason": "Junos ifIndex port IDs: JIRA-7"},
                  {"end": "leaf2", "finding": "unread", "reason": "in repair"}]
    result = _cabling.compare(lab_cabling(), obs, exceptions)
    assert result["verdict"] == "passed" and only(result, "unproven")["allowed"]


def test_a_nameless_neighbour_beside_the_proven_peer_does_not_spoil_the_link():
    obs = observe()
    obs["spine1"]["Ethernet2/1"]["neighbors"].append({"system": None, "port": "x", "port_id_subtype": None, "port_descr": None, "chassis_id": None})
    assert _cabling.compare(lab_cabling(), obs)["verdict"] == "passed"


def test_a_port_the_peer_switch_reported_out_of_scope_is_a_different_port():
    obs = observe()
    obs["spine1"]["Ethernet7/1"] = {"oper": "down", "speed": None, "width": None, "neighbors": []}
    obs["leaf1"]["swp31"]["neighbors"][0]["port"] = "Ethernet7/1"
    obs["spine1"]["Ethernet1/1"]["neighbors"] = []
    f = only(_cabling.compare(lab_cabling(), obs), "wrong_peer")
    assert f["found"].startswith("leaf1:swp31 sees spine1:Ethernet7/1;"), f["found"]
