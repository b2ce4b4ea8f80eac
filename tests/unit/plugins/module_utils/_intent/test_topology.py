# SPDX-License-Identifier: GPL-3.0-or-later
"""Unit tests for plugins/module_utils/_intent/_topology.py: the cabling in the intent (issue 16).

Each validation rule has a test that asserts its error; removing the rule
makes that intent validate and the test fail.  The generator's output for a
small fabric is written out by hand below.
"""

from __future__ import annotations

import copy
import glob
import os
import re

import pytest
import yaml

from ansible_collections.lossless.fabric.plugins.module_utils._intent import _plan, _topology

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))))


def load_inventory(name: str, cabled: bool = False) -> tuple[dict, dict]:
    """An inventory's intent and devices; without ``cabled`` its own peers and rails are left out,
    so each test below describes exactly the links it is about."""
    intent = None
    for path in glob.glob(os.path.join(ROOT, "inventories", name, "group_vars", "all", "*.yml")):
        with open(path, encoding="utf-8") as handle:
            data = yaml.safe_load(handle) or {}
        intent = data.get("lossless_fabric", intent)
    devices = {}
    for path in sorted(glob.glob(os.path.join(ROOT, "inventories", name, "host_vars", "*.yml"))):
        with open(path, encoding="utf-8") as handle:
            data = yaml.safe_load(handle) or {}
        if "lossless_fabric_device" in data:
            devices[os.path.basename(path)[:-4]] = data["lossless_fabric_device"]
    if not cabled:
        for device in devices.values():
            for port in (device.get("ports") or {}).values():
                port.pop("peer", None)
            for nic in device.get("nics") or []:
                nic.pop("peer", None)
                nic.pop("rail", None)
    return intent, devices


def cabled_lab() -> tuple[dict, dict]:
    """The lab inventory with every link described, from both ends where both are ours."""
    intent, devices = load_inventory("lab")
    devices = copy.deepcopy(devices)
    leaf1, leaf2, leaf3, leaf4, spine1 = (devices[n]["ports"] for n in ("leaf1", "leaf2", "leaf3", "leaf4", "spine1"))
    leaf1["swp1"]["peer"] = {"host": "gpu1", "nic": "mlx5_0"}
    leaf1["swp2"]["peer"] = {"host": "gpu2", "nic": "mlx5_0"}
    leaf1["swp31"]["peer"] = {"host": "spine1", "port": "Ethernet1/1"}
    leaf2["et-0/0/1"]["peer"] = {"host": "gpu1", "nic": "mlx5_1"}
    leaf2["et-0/0/2"]["peer"] = {"host": "gpu2", "nic": "mlx5_1"}
    leaf2["et-0/0/31"]["peer"] = {"host": "spine1", "port": "Ethernet2/1"}
    spine1["Ethernet1/1"]["peer"] = {"host": "leaf1", "port": "swp31"}
    spine1["Ethernet2/1"]["peer"] = {"host": "leaf2", "port": "et-0/0/31"}
    leaf3["Ethernet0"]["peer"] = {"host": "spine1", "port": "Ethernet3/1"}
    leaf3["Ethernet8"]["peer"] = {"host": "spine1", "port": "Ethernet4/1"}
    spine1["Ethernet3/1"]["peer"] = {"host": "leaf3", "port": "Ethernet0"}
    spine1["Ethernet4/1"]["peer"] = {"host": "leaf3", "port": "Ethernet8"}
    leaf4["Ethernet1/1"]["peer"] = {"host": "spine1", "port": "Ethernet5/1"}
    leaf4["Ethernet1/2"]["peer"] = {"host": "spine1", "port": "Ethernet6/1"}
    spine1["Ethernet5/1"]["peer"] = {"host": "leaf4", "port": "Ethernet1/1"}
    spine1["Ethernet6/1"]["peer"] = {"host": "leaf4", "port": "Ethernet1/2"}
    devices["leaf5"]["ports"]["Ethernet0"]["peer"] = {"host": "spine1", "port": "Ethernet7/1"}
    spine1["Ethernet7/1"]["peer"] = {"host": "leaf5", "port": "Ethernet0"}
    for host in ("gpu1", "gpu2"):
        devices[host]["nics"][0].update(rail=0, peer={"host": "leaf1", "port": "swp" + host[-1]})
        devices[host]["nics"][1].update(rail=1, peer={"host": "leaf2", "port": "et-0/0/" + host[-1]})
    return intent, devices


def errors_of(intent: dict, devices: dict) -> list[str]:
    return _plan.validate(intent, devices)[0]


def one_error(intent: dict, devices: dict, *fragments: str) -> str:
    errors = errors_of(intent, devices)
    matching = [e for e in errors if all(f in e for f in fragments)]
    assert matching, f"no error with {fragments!r} in {errors!r}"
    return matching[0]


# ---------------------------------------------------------------------------
# Existing inventories: the links are optional
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["lab", "example", "lab-ib"])
def test_existing_inventories_validate_unchanged_with_no_cabling(name):
    intent, devices = load_inventory(name)
    if name == "lab-ib":
        intent = {k: v for k, v in intent.items() if k != "topology"}
    assert errors_of(intent, devices) == []
    cabling = _plan.build_plan(intent, devices)["cabling"]
    assert cabling == {"links": [], "hosts": {}, "switches": {}, "ib_topology": None}


def test_the_lab_inventory_describes_its_links_once_and_they_are_the_cabled_lab():
    """inventories/lab describes each link at the switch port, rails at the NICs; the same
    links as cabled_lab(), which describes them from both ends."""
    intent, devices = load_inventory("lab", cabled=True)
    assert errors_of(intent, devices) == []
    cabling = _plan.build_plan(intent, devices)["cabling"]
    assert cabling == _plan.build_plan(*cabled_lab())["cabling"]
    assert len(cabling["links"]) == 11
    assert cabling["hosts"]["gpu2"]["nccl_ib_hca"] == "=mlx5_0,mlx5_1"


# ---------------------------------------------------------------------------
# Hand-written links
# ---------------------------------------------------------------------------


def test_hand_written_lab_plans_every_link_once_with_rails_and_speeds():
    intent, devices = cabled_lab()
    assert errors_of(intent, devices) == []
    cabling = _plan.build_plan(intent, devices)["cabling"]
    assert cabling["links"] == [
        {"a": {"host": "leaf1", "port": "swp1"}, "b": {"host": "gpu1", "nic": "mlx5_0"}, "rail": 0, "speed": "400G"},
        {"a": {"host": "leaf1", "port": "swp2"}, "b": {"host": "gpu2", "nic": "mlx5_0"}, "rail": 0, "speed": "400G"},
        {"a": {"host": "leaf1", "port": "swp31"}, "b": {"host": "spine1", "port": "Ethernet1/1"}, "rail": None, "speed": "400G"},
        {"a": {"host": "leaf2", "port": "et-0/0/1"}, "b": {"host": "gpu1", "nic": "mlx5_1"}, "rail": 1, "speed": "400G"},
        {"a": {"host": "leaf2", "port": "et-0/0/2"}, "b": {"host": "gpu2", "nic": "mlx5_1"}, "rail": 1, "speed": "400G"},
        {"a": {"host": "leaf2", "port": "et-0/0/31"}, "b": {"host": "spine1", "port": "Ethernet2/1"}, "rail": None, "speed": "400G"},
        {"a": {"host": "leaf3", "port": "Ethernet0"}, "b": {"host": "spine1", "port": "Ethernet3/1"}, "rail": None, "speed": "400G"},
        {"a": {"host": "leaf3", "port": "Ethernet8"}, "b": {"host": "spine1", "port": "Ethernet4/1"}, "rail": None, "speed": "400G"},
        {"a": {"host": "leaf4", "port": "Ethernet1/1"}, "b": {"host": "spine1", "port": "Ethernet5/1"}, "rail": None, "speed": "100G"},
        {"a": {"host": "leaf4", "port": "Ethernet1/2"}, "b": {"host": "spine1", "port": "Ethernet6/1"}, "rail": None, "speed": "100G"},
        {"a": {"host": "leaf5", "port": "Ethernet0"}, "b": {"host": "spine1", "port": "Ethernet7/1"}, "rail": None, "speed": "400G"},
    ]
    assert cabling["hosts"]["gpu2"]["rails"] == {"0": "mlx5_0", "1": "mlx5_1"}
    assert cabling["hosts"]["gpu2"]["nccl_ib_hca"] == "=mlx5_0,mlx5_1"
    assert cabling["hosts"]["gpu1"]["nics"]["mlx5_1"] == {"peer": {"host": "leaf2", "port": "et-0/0/1"}, "rail": 1, "speed": "400G"}
    assert cabling["switches"]["spine1"]["ports"] == {
        "Ethernet1/1": {"peer": {"host": "leaf1", "port": "swp31"}, "rail": None, "speed": "400G"},
        "Ethernet2/1": {"peer": {"host": "leaf2", "port": "et-0/0/31"}, "rail": None, "speed": "400G"},
        "Ethernet3/1": {"peer": {"host": "leaf3", "port": "Ethernet0"}, "rail": None, "speed": "400G"},
        "Ethernet4/1": {"peer": {"host": "leaf3", "port": "Ethernet8"}, "rail": None, "speed": "400G"},
        "Ethernet5/1": {"peer": {"host": "leaf4", "port": "Ethernet1/1"}, "rail": None, "speed": "100G"},
        "Ethernet6/1": {"peer": {"host": "leaf4", "port": "Ethernet1/2"}, "rail": None, "speed": "100G"},
        "Ethernet7/1": {"peer": {"host": "leaf5", "port": "Ethernet0"}, "rail": None, "speed": "400G"},
    }
    assert cabling["switches"]["leaf1"]["ports_without_peer"] == []
    assert cabling["ib_topology"] is None


def test_one_end_described_is_enough_and_names_are_canonical():
    intent, devices = load_inventory("lab")
    devices = copy.deepcopy(devices)
    devices["gpu1"]["nics"][0]["peer"] = {"host": "spine1", "port": "Ethernet01/01"}
    devices["spine1"]["ports"]["Ethernet1/1"]["cable_length_m"] = 3
    cabling = _plan.build_plan(intent, devices)["cabling"]
    assert cabling["links"] == [{"a": {"host": "spine1", "port": "Ethernet1/1"}, "b": {"host": "gpu1", "nic": "mlx5_0"}, "rail": None, "speed": "400G"}]
    assert cabling["switches"]["spine1"]["ports_without_peer"] == ["Ethernet2/1", "Ethernet3/1", "Ethernet4/1", "Ethernet5/1", "Ethernet6/1",
                                                                   "Ethernet7/1"]


def test_nccl_ib_hca_follows_rail_order_not_nic_order():
    intent, devices = load_inventory("lab")
    devices = copy.deepcopy(devices)
    devices["gpu1"]["nics"][0]["rail"] = 1
    devices["gpu1"]["nics"][1]["rail"] = 0
    host = _plan.build_plan(intent, devices)["cabling"]["hosts"]["gpu1"]
    assert host["rails"] == {"0": "mlx5_1", "1": "mlx5_0"}
    assert host["nccl_ib_hca"] == "=mlx5_1,mlx5_0"


# -- rule: the two ends agree ---------------------------------------------------


def test_ends_that_disagree_are_refused_naming_both():
    intent, devices = cabled_lab()
    devices["gpu1"]["nics"][0]["peer"] = {"host": "leaf1", "port": "swp2"}
    error = one_error(intent, devices, "leaf1: lossless_fabric_device.ports[swp1].peer", "leaf1 swp1 names gpu1 mlx5_0", "gpu1 mlx5_0 names leaf1 swp2")
    assert "gpu1: lossless_fabric_device.nics[0].peer" in error


def test_switch_to_switch_ends_that_disagree_are_refused():
    intent, devices = cabled_lab()
    devices["spine1"]["ports"]["Ethernet1/1"]["peer"] = {"host": "leaf2", "port": "et-0/0/31"}
    one_error(intent, devices, "leaf1 swp31 names spine1 Ethernet1/1 as its peer, but spine1 Ethernet1/1 names leaf2 et-0/0/31")


# -- rule: no port or NIC used twice ----------------------------------------------


def test_a_nic_named_by_two_ports_is_refused():
    intent, devices = load_inventory("lab")
    devices = copy.deepcopy(devices)
    devices["leaf1"]["ports"]["swp1"]["peer"] = {"host": "gpu1", "nic": "mlx5_0"}
    devices["leaf1"]["ports"]["swp2"]["peer"] = {"host": "gpu1", "nic": "mlx5_0"}
    one_error(intent, devices, "gpu1 mlx5_0 is the peer of 2 ends", "leaf1 swp1", "leaf1 swp2", "one cable")


def test_a_port_named_by_two_ports_is_refused():
    intent, devices = load_inventory("lab")
    devices = copy.deepcopy(devices)
    devices["leaf1"]["ports"]["swp31"]["peer"] = {"host": "spine1", "port": "Ethernet1/1"}
    devices["leaf2"]["ports"]["et-0/0/31"]["peer"] = {"host": "spine1", "port": "Ethernet1/1"}
    one_error(intent, devices, "spine1 Ethernet1/1 is the peer of 2 ends")


def test_the_same_end_described_twice_differently_is_refused():
    intent, devices = rail_fabric(units=1, per_unit=2, rails=2, spines=1)
    devices["leaf-su1-r0"]["ports"]["swp1"]["peer"] = {"host": "gpu2", "nic": "mlx5_0"}
    one_error(
        intent,
        devices,
        "lossless_fabric.topology: leaf-su1-r0 swp1 has peer gpu1 mlx5_0 from the topology pattern but gpu2 mlx5_0 in"
        " leaf-su1-r0: lossless_fabric_device.ports[swp1].peer: describe each link once",
    )


# -- rule: rails consistent ---------------------------------------------------------


def test_a_leaf_with_nics_of_two_rails_is_refused():
    intent, devices = cabled_lab()
    # gpu2's cables swapped at the host: its rail-1 NIC on leaf1 (rail 0), its rail-0 NIC on leaf2.
    devices["gpu2"]["nics"][0]["rail"], devices["gpu2"]["nics"][1]["rail"] = 1, 0
    error = one_error(intent, devices, "leaf1: lossless_fabric_device.ports", "NICs of 2 rails meet on this leaf")
    assert "gpu2 mlx5_0 on swp2" in error and "gpu1 mlx5_0 on swp1" in error
    one_error(intent, devices, "leaf2: lossless_fabric_device.ports", "NICs of 2 rails")


def test_two_nics_of_one_host_on_one_rail_are_refused():
    intent, devices = load_inventory("lab")
    devices = copy.deepcopy(devices)
    devices["gpu1"]["nics"][0]["rail"] = 0
    devices["gpu1"]["nics"][1]["rail"] = 0
    one_error(intent, devices, "gpu1: lossless_fabric_device.nics[1].rail", "0 is also the rail of nics[0] (mlx5_0)")


@pytest.mark.parametrize("rail", [-1, 64, "0", True, 1.0])
def test_a_rail_is_an_integer_0_to_63(rail):
    intent, devices = load_inventory("lab")
    devices = copy.deepcopy(devices)
    devices["gpu1"]["nics"][0]["rail"] = rail
    one_error(intent, devices, "gpu1: lossless_fabric_device.nics[0].rail", f"{rail!r} is not a rail (0-63)")


def test_pattern_rail_r_must_be_the_nic_of_rail_r():
    intent, devices = rail_fabric(units=1, per_unit=2, rails=2, spines=1)
    devices["gpu1"]["nics"][0]["rail"] = 1
    devices["gpu1"]["nics"][1]["rail"] = 0
    # The pattern then cables mlx5_1 (rail 0) to leaf-su1-r0: correct by rail; the plan says so.
    cabling = _plan.build_plan(intent, devices)["cabling"]
    assert cabling["switches"]["leaf-su1-r0"]["ports"]["swp1"]["peer"] == {"host": "gpu1", "nic": "mlx5_1"}
    # A hand-written peer that puts rail 1 on the rail-0 leaf is refused.
    devices["gpu2"]["nics"][0]["rail"] = 1
    devices["gpu2"]["nics"][1]["rail"] = 0
    devices["gpu2"]["nics"].append({"name": "mlx5_2", "netdev": "eth9", "speed": "400G", "rail": 5, "peer": {"host": "leaf-su1-r0", "port": "swp9"}})
    devices["leaf-su1-r0"]["ports"]["swp9"] = {"speed": "400G"}
    one_error(intent, devices, "leaf-su1-r0: lossless_fabric_device.ports", "NICs of 2 rails", "rail 5: gpu2 mlx5_2 on swp9")


# -- rule: speeds equal ---------------------------------------------------------------


def test_ends_of_different_speeds_are_refused():
    intent, devices = cabled_lab()
    devices["gpu2"]["nics"][1]["speed"] = "200G"
    one_error(intent, devices, "gpu2: lossless_fabric_device.nics[1].peer", "gpu2 mlx5_1 is 200G but its peer leaf2 et-0/0/2 is 400G")


def test_one_end_described_still_compares_both_speeds():
    intent, devices = load_inventory("lab")
    devices = copy.deepcopy(devices)
    devices["spine1"]["ports"]["Ethernet1/1"]["speed"] = "100G"
    devices["leaf1"]["ports"]["swp31"]["peer"] = {"host": "spine1", "port": "Ethernet1/1"}
    one_error(intent, devices, "leaf1 swp31 is 400G but its peer spine1 Ethernet1/1 is 100G")


def test_pattern_speed_must_match_the_devices():
    intent, devices = rail_fabric(units=1, per_unit=2, rails=2, spines=1)
    devices["gpu2"]["nics"][1]["speed"] = "200G"
    one_error(intent, devices, "gpu2: lossless_fabric_device", "gpu2 mlx5_1 is 200G but the topology pattern cables it at 400G")


# -- rule: unknown hosts, ports and NICs are named --------------------------------------


@pytest.mark.parametrize(
    ("peer", "path", "message"),
    [
        ({"host": "gpu9", "nic": "mlx5_0"}, "peer.host", "'gpu9' is not an inventory host with lossless_fabric_device"),
        ({"host": "gpu1", "nic": "mlx5_7"}, "peer.nic", "'mlx5_7' is not a NIC of gpu1 (mlx5_0, mlx5_1)"),
        ({"host": "spine1", "port": "Ethernet9/1"}, "peer.port", "'Ethernet9/1' is not in spine1's lossless_fabric_device.ports"),
        ({"host": "spine1", "port": "swp1"}, "peer.port", "'swp1' is not a eos interface name of spine1"),
        ({"host": "spine1", "nic": "mlx5_0"}, "peer.nic", "'spine1' is a switch: give its port, not a nic"),
        ({"host": "gpu1", "port": "eth2"}, "peer.port", "'gpu1' is a host: give its nic"),
        ({"host": "leaf1", "port": "swp2"}, "peer.host", "'leaf1' is this device itself"),
        ({"host": "gpu1"}, "peer", "give exactly one of port (a switch port) or nic (a host NIC)"),
        ({"host": "gpu1", "nic": "mlx5_0", "port": "x"}, "peer", "give exactly one of port"),
        ({"nic": "mlx5_0"}, "peer.host", "required"),
        ({"host": "gpu1", "nics": "mlx5_0"}, "peer.nics", "unknown key (did you mean 'nic'?)"),
        ({"host": "gpu1;reboot", "nic": "mlx5_0"}, "peer.host", "is not a host name"),
        ("gpu1 mlx5_0", "peer", "a string is not a peer mapping"),
    ],
)
def test_a_bad_peer_is_named_with_its_key_and_value(peer, path, message):
    intent, devices = load_inventory("lab")
    devices = copy.deepcopy(devices)
    devices["leaf1"]["ports"]["swp1"]["peer"] = peer
    one_error(intent, devices, f"leaf1: lossless_fabric_device.ports[swp1].{path}", message)


def test_all_errors_at_once():
    intent, devices = cabled_lab()
    devices["gpu1"]["nics"][0]["peer"] = {"host": "gpu9", "nic": "mlx5_0"}
    devices["gpu2"]["nics"][1]["speed"] = "200G"
    devices["spine1"]["ports"]["Ethernet1/1"]["peer"] = {"host": "leaf1", "port": "swp99"}
    errors = errors_of(intent, devices)
    assert any("'gpu9' is not an inventory host" in e for e in errors)
    assert any("gpu2 mlx5_1 is 200G but its peer leaf2 et-0/0/2 is 400G" in e for e in errors)
    assert any("'swp99' is not in leaf1's lossless_fabric_device.ports" in e for e in errors)


def test_a_device_with_its_own_errors_is_not_also_called_unknown():
    intent, devices = cabled_lab()
    devices["gpu1"]["nics"][0]["speed"] = "3G"
    errors = errors_of(intent, devices)
    assert any("gpu1: lossless_fabric_device.nics[0].speed" in e for e in errors)
    assert not any("gpu1" in e and "peer" in e for e in errors), errors


# ---------------------------------------------------------------------------
# The rail_optimized pattern
# ---------------------------------------------------------------------------


def rail_fabric(units: int, per_unit: int, rails: int, spines: int, uplinks: int = 1, transport: str = "roce") -> tuple[dict, dict]:
    topology = {
        "pattern": "rail_optimized",
        "scalable_units": units,
        "hosts_per_unit": per_unit,
        "rails": rails,
        "spines": spines,
        "uplinks_per_spine": uplinks,
        "speed": "400G",
    }
    intent = {"name": "rails", "transport": transport, "topology": topology}
    devices: dict = {}
    for host in range(1, units * per_unit + 1):
        nics = [{"name": f"mlx5_{r}", "speed": "400G"} for r in range(rails)]
        if transport == "roce":
            for r, nic in enumerate(nics):
                nic["netdev"] = f"eth{r}"
        devices[f"gpu{host}"] = {"kind": "host", "nics": nics}
    if transport == "roce":
        for unit in range(1, units + 1):
            for rail in range(rails):
                devices[f"leaf-su{unit}-r{rail}"] = {
                    "kind": "switch",
                    "platform": "nvue",
                    "ports": {f"swp{n}": {"speed": "400G"} for n in range(1, per_unit + spines * uplinks + 1)},
                }
        for spine in range(1, spines + 1):
            devices[f"spine{spine}"] = {
                "kind": "switch",
                "platform": "nvue",
                "ports": {f"swp{n}": {"speed": "400G"} for n in range(1, units * rails * uplinks + 1)},
            }
    else:
        devices["sm1"] = {"kind": "subnet_manager", "role": "master"}
        topology["ib_switch_type"] = "IBSW"
        topology["ports"] = {key: {"name": "{n}"} for key in ("leaf_hosts", "leaf_spines", "spine_leaves")}
    return intent, devices


def test_generator_small_fabric_by_hand():
    topology = {
        "scalable_units": 2,
        "hosts_per_unit": 2,
        "rails": 2,
        "leaves_per_rail": 1,
        "spines": 2,
        "uplinks_per_spine": 1,
        "names": {"host": "gpu{host}", "leaf": "leaf-su{unit}-r{rail}", "spine": "spine{spine}"},
        "ports": {"leaf_hosts": {"name": "swp{n}", "first": 1}, "leaf_spines": {"name": "swp{n}", "first": 3}, "spine_leaves": {"name": "swp{n}", "first": 1}},
    }
    host_links, fabric_links, switches = _topology.generate(topology)
    assert host_links == [
        ("gpu1", 0, "leaf-su1-r0", "swp1"),
        ("gpu1", 1, "leaf-su1-r1", "swp1"),
        ("gpu2", 0, "leaf-su1-r0", "swp2"),
        ("gpu2", 1, "leaf-su1-r1", "swp2"),
        ("gpu3", 0, "leaf-su2-r0", "swp1"),
        ("gpu3", 1, "leaf-su2-r1", "swp1"),
        ("gpu4", 0, "leaf-su2-r0", "swp2"),
        ("gpu4", 1, "leaf-su2-r1", "swp2"),
    ]
    assert fabric_links == [
        ("leaf-su1-r0", "swp3", "spine1", "swp1"),
        ("leaf-su1-r0", "swp4", "spine2", "swp1"),
        ("leaf-su1-r1", "swp3", "spine1", "swp2"),
        ("leaf-su1-r1", "swp4", "spine2", "swp2"),
        ("leaf-su2-r0", "swp3", "spine1", "swp3"),
        ("leaf-su2-r0", "swp4", "spine2", "swp3"),
        ("leaf-su2-r1", "swp3", "spine1", "swp4"),
        ("leaf-su2-r1", "swp4", "spine2", "swp4"),
    ]
    assert switches == ["leaf-su1-r0", "leaf-su1-r1", "leaf-su2-r0", "leaf-su2-r1", "spine1", "spine2"]


def test_generator_two_leaves_per_rail_and_two_uplinks_per_spine():
    topology = {
        "scalable_units": 1,
        "hosts_per_unit": 4,
        "rails": 1,
        "leaves_per_rail": 2,
        "spines": 1,
        "uplinks_per_spine": 2,
        "names": {"host": "n{unit}-{index}", "leaf": "l{unit}r{rail}x{leaf}", "spine": "s{spine}"},
        "ports": {"leaf_hosts": {"name": "e{n}", "first": 1}, "leaf_spines": {"name": "e{n}", "first": 10}, "spine_leaves": {"name": "e{n}", "first": 1}},
    }
    host_links, fabric_links, _switches = _topology.generate(topology)
    assert host_links == [("n1-1", 0, "l1r0x1", "e1"), ("n1-2", 0, "l1r0x1", "e2"), ("n1-3", 0, "l1r0x2", "e1"), ("n1-4", 0, "l1r0x2", "e2")]
    assert fabric_links == [("l1r0x1", "e10", "s1", "e1"), ("l1r0x1", "e11", "s1", "e2"), ("l1r0x2", "e10", "s1", "e3"), ("l1r0x2", "e11", "s1", "e4")]


def test_pattern_plans_with_default_names_and_ports():
    intent, devices = rail_fabric(units=2, per_unit=2, rails=2, spines=2)
    assert errors_of(intent, devices) == []
    plan = _plan.build_plan(intent, devices)
    cabling = plan["cabling"]
    assert len(cabling["links"]) == 8 + 8
    # leaf_spines.first defaults to the port after the host ports (hosts_per_unit / leaves_per_rail + 1).
    assert cabling["switches"]["leaf-su2-r1"]["ports"]["swp3"] == {"peer": {"host": "spine1", "port": "swp4"}, "rail": None, "speed": "400G"}
    assert cabling["switches"]["leaf-su2-r1"]["ports"]["swp1"] == {"peer": {"host": "gpu3", "nic": "mlx5_1"}, "rail": 1, "speed": "400G"}
    assert cabling["hosts"]["gpu4"]["rails"] == {"0": "mlx5_0", "1": "mlx5_1"}
    assert plan["intent"]["topology"]["names"] == {"host": "gpu{host}", "leaf": "leaf-su{unit}-r{rail}", "spine": "spine{spine}"}
    assert plan["intent"]["topology"]["ports"]["leaf_spines"] == {"name": "swp{n}", "first": 3}


def test_pattern_and_matching_hand_written_peers_agree():
    intent, devices = rail_fabric(units=1, per_unit=2, rails=2, spines=1)
    devices["leaf-su1-r1"]["ports"]["swp2"]["peer"] = {"host": "gpu2", "nic": "mlx5_1"}
    devices["gpu1"]["nics"][0]["peer"] = {"host": "leaf-su1-r0", "port": "swp1"}
    assert errors_of(intent, devices) == []


@pytest.mark.parametrize(
    ("change", "path", "message"),
    [
        ({"pattern": "fat_tree"}, "lossless_fabric.topology.pattern", "'fat_tree' is not a topology pattern"),
        ({"rails": None}, "lossless_fabric.topology.rails", "required with pattern rail_optimized"),
        ({"rails": 0}, "lossless_fabric.topology.rails", "0 is not a count of rails (NICs per host) (1-64)"),
        ({"hosts_per_unit": "32"}, "lossless_fabric.topology.hosts_per_unit", "'32' is not a count of hosts"),
        ({"leaves_per_rail": 3}, "lossless_fabric.topology.leaves_per_rail", "3 does not divide hosts_per_unit 2"),
        ({"speed": "3G"}, "lossless_fabric.topology.speed", "'3G' is not a link speed"),
        ({"names": {"leaf": "leaf{unit}-{nic}"}}, "lossless_fabric.topology.names.leaf", "{nic} is not a field of this name"),
        ({"names": {"host": "gpu{host:03d}"}}, "lossless_fabric.topology.names.host", "{host} is not a field"),
        ({"names": {"spine": "spine{"}}, "lossless_fabric.topology.names.spine", "is not a name template"),
        ({"names": {"hosts": "x"}}, "lossless_fabric.topology.names.hosts", "unknown key (did you mean 'host'?)"),
        ({"ports": {"leaf_hosts": {"first": -1}}}, "lossless_fabric.topology.ports.leaf_hosts.first", "-1 is not a port number"),
        ({"spine": 2}, "lossless_fabric.topology.spine", "unknown key (did you mean 'spines'?)"),
        ({"switches": ["x"]}, "lossless_fabric.topology.switches", "only with transport infiniband"),
    ],
)
def test_pattern_errors_name_the_key_and_value(change, path, message):
    intent, devices = rail_fabric(units=1, per_unit=2, rails=2, spines=1)
    intent["topology"].update(change)
    intent["topology"] = {k: v for k, v in intent["topology"].items() if v is not None}
    one_error(intent, devices, path, message)


def test_pattern_keys_without_pattern_are_refused():
    intent, devices = load_inventory("lab")
    intent = dict(intent, topology={"rails": 2})
    one_error(intent, devices, "lossless_fabric.topology.rails", "needs pattern (rail_optimized)")


def test_pattern_names_unknown_hosts_switches_and_ports():
    intent, devices = rail_fabric(units=1, per_unit=2, rails=2, spines=1)
    del devices["gpu2"]
    del devices["spine1"]
    del devices["leaf-su1-r0"]["ports"]["swp2"]
    errors = errors_of(intent, devices)
    assert "lossless_fabric.topology.names.host: generated host 'gpu2' is not an inventory host with lossless_fabric_device" in errors
    assert "lossless_fabric.topology.names: generated switch 'spine1' is not an inventory host with lossless_fabric_device" in errors
    assert (
        "leaf-su1-r0: lossless_fabric_device.ports: 'swp2' (generated by lossless_fabric.topology) is not in leaf-su1-r0's lossless_fabric_device.ports"
        in errors
    )


def test_pattern_needs_one_nic_per_rail():
    intent, devices = rail_fabric(units=1, per_unit=2, rails=2, spines=1)
    devices["gpu1"]["nics"].pop()
    one_error(intent, devices, "gpu1: lossless_fabric_device.nics", "1 NICs, but the topology has 2 rails")
    intent, devices = rail_fabric(units=1, per_unit=2, rails=2, spines=1)
    devices["gpu2"]["nics"][0]["rail"] = 1
    devices["gpu2"]["nics"][1]["rail"] = 3
    one_error(intent, devices, "gpu2: lossless_fabric_device.nics", "no NIC with rail 0")


# ---------------------------------------------------------------------------
# InfiniBand: the topology file
# ---------------------------------------------------------------------------


def test_infiniband_pattern_writes_the_ibdiagnet_topology_file():
    intent, devices = rail_fabric(units=1, per_unit=2, rails=2, spines=1, transport="infiniband")
    assert errors_of(intent, devices) == []
    cabling = _plan.build_plan(intent, devices)["cabling"]
    assert cabling["ib_topology"] == (
        "# lossless.fabric: intended InfiniBand cabling; generated, do not edit\n"
        "# format: IBDM topology file (ibdm-topo-file(1)); ibdiagnet --topo_file compares it with the discovered fabric\n"
        "\n"
        "IBSW leaf-su1-r0\n"
        "   P1 -4x-100G-> HCA_2 gpu1 U1/P1\n"
        "   P2 -4x-100G-> HCA_2 gpu2 U1/P1\n"
        "   P3 -4x-100G-> IBSW spine1 P1\n"
        "\n"
        "IBSW leaf-su1-r1\n"
        "   P1 -4x-100G-> HCA_2 gpu1 U2/P1\n"
        "   P2 -4x-100G-> HCA_2 gpu2 U2/P1\n"
        "   P3 -4x-100G-> IBSW spine1 P2\n"
        "\n"
        "IBSW spine1\n"
        "   P1 -4x-100G-> IBSW leaf-su1-r0 P3\n"
        "   P2 -4x-100G-> IBSW leaf-su1-r1 P3\n"
        "\n"
        "HCA_2 gpu1\n"
        "   U1/P1 -4x-100G-> IBSW leaf-su1-r0 P1\n"
        "   U2/P1 -4x-100G-> IBSW leaf-su1-r1 P1\n"
        "\n"
        "HCA_2 gpu2\n"
        "   U1/P1 -4x-100G-> IBSW leaf-su1-r0 P2\n"
        "   U2/P1 -4x-100G-> IBSW leaf-su1-r1 P2\n"
    )
    assert cabling["switches"]["spine1"]["ports"]["1"] == {"peer": {"host": "leaf-su1-r0", "port": "3"}, "rail": None, "speed": "400G"}
    assert cabling["switches"]["spine1"]["ports_without_peer"] == []


def test_infiniband_hand_written_nic_peers_to_named_switches():
    intent, devices = load_inventory("lab-ib")
    devices = copy.deepcopy(devices)
    intent = dict(intent, topology={"switches": ["ib-leaf1", *intent["topology"]["switches"]], "ib_switch_type": "IBSW"})  # lab-ib names its own leaves
    devices["gpu1"]["nics"][0]["peer"] = {"host": "ib-leaf1", "port": 1}
    devices["gpu2"]["nics"][0]["peer"] = {"host": "ib-leaf1", "port": "2"}
    assert errors_of(intent, devices) == []
    text = _plan.build_plan(intent, devices)["cabling"]["ib_topology"]
    assert "IBSW ib-leaf1\n   P1 -4x-50G-> HCA_2 gpu1 U1/P1\n   P2 -4x-50G-> HCA_2 gpu2 U1/P1\n" in text


@pytest.mark.parametrize(
    ("peer", "message"),
    [
        ({"host": "ib-leaf9", "port": 1}, "'ib-leaf9' is not an inventory host with lossless_fabric_device or lossless_fabric.topology.switches"),
        ({"host": "ib-leaf1", "port": 255}, "255 is not an InfiniBand switch port number (1-254)"),
        ({"host": "ib-leaf1", "port": "swp1"}, "'swp1' is not an InfiniBand switch port number"),
        ({"host": "ib-leaf1", "nic": "mlx5_0"}, "'ib-leaf1' is an InfiniBand switch: give its port number"),
    ],
)
def test_infiniband_bad_peers(peer, message):
    intent, devices = load_inventory("lab-ib")
    devices = copy.deepcopy(devices)
    intent = dict(intent, topology={"switches": ["ib-leaf1", *intent["topology"]["switches"]], "ib_switch_type": "IBSW"})  # lab-ib names its own leaves
    devices["gpu1"]["nics"][0]["peer"] = peer
    one_error(intent, devices, "gpu1: lossless_fabric_device.nics[0].peer", message)


def test_infiniband_cabling_needs_the_switch_system_type():
    intent, devices = rail_fabric(units=1, per_unit=2, rails=2, spines=1, transport="infiniband")
    del intent["topology"]["ib_switch_type"]
    one_error(intent, devices, "lossless_fabric.topology.ib_switch_type", "required when the InfiniBand cabling is described")


def test_infiniband_keys_are_refused_with_roce():
    intent, devices = rail_fabric(units=1, per_unit=2, rails=2, spines=1)
    intent["topology"]["ib_switch_type"] = "IBSW"
    one_error(intent, devices, "lossless_fabric.topology.ib_switch_type", "only with transport infiniband")


# ---------------------------------------------------------------------------
# Scale: 1,024 hosts (32 scalable units of 32, 8 rails) validate and plan; bench/bench_topology.py times it
# ---------------------------------------------------------------------------


def test_a_thousand_host_rail_optimized_fabric_validates_and_plans():
    intent, devices = rail_fabric(units=32, per_unit=32, rails=8, spines=16, uplinks=2)
    plan = _plan.build_plan(intent, devices)
    cabling = plan["cabling"]
    assert len(cabling["links"]) == 1024 * 8 + 256 * 32
    assert len(cabling["hosts"]) == 1024
    assert cabling["hosts"]["gpu1024"]["nccl_ib_hca"] == "=" + ",".join(f"mlx5_{r}" for r in range(8))
    # Host 1024 is the last of unit 32: port 32 of every rail leaf of that unit.
    assert cabling["switches"]["leaf-su32-r7"]["ports"]["swp32"]["peer"] == {"host": "gpu1024", "nic": "mlx5_7"}
    assert cabling["switches"]["spine16"]["ports"]["swp512"]["peer"] == {"host": "leaf-su32-r7", "port": "swp64"}


# ---------------------------------------------------------------------------
# docs/intent.md, section "Cabling": its examples are true
# ---------------------------------------------------------------------------


def cabling_doc() -> str:
    with open(os.path.join(ROOT, "docs", "intent.md"), encoding="utf-8") as handle:
        text = handle.read()
    return text[text.index("## Cabling") : text.index("## Cross-field errors")]


def test_docs_hand_written_example_validates_and_plans_what_it_says():
    blocks = [yaml.safe_load(b) for b in re.findall(r"```yaml cabling\n(.*?)```", cabling_doc(), flags=re.S)]
    intent, devices = load_inventory("lab")
    devices = copy.deepcopy(devices)
    devices["leaf1"] = dict(devices["leaf1"], ports=blocks[0]["lossless_fabric_device"]["ports"])
    devices["gpu1"] = blocks[1]["lossless_fabric_device"]
    assert errors_of(intent, devices) == []
    cabling = _plan.build_plan(intent, devices)["cabling"]
    assert {"a": {"host": "leaf1", "port": "swp1"}, "b": {"host": "gpu1", "nic": "mlx5_0"}, "rail": 0, "speed": "400G"} in cabling["links"]
    assert cabling["hosts"]["gpu1"]["rails"] == {"0": "mlx5_0", "1": "mlx5_1"}
    assert cabling["hosts"]["gpu1"]["nccl_ib_hca"] == "=mlx5_0,mlx5_1"


def test_docs_generated_example_table_is_the_generator_output():
    doc = cabling_doc()
    intent = yaml.safe_load(re.findall(r"```yaml cabling\n(.*?)```", doc, flags=re.S)[2])["lossless_fabric"]
    _same, devices = rail_fabric(units=2, per_unit=2, rails=2, spines=2)
    assert errors_of(intent, devices) == []
    links = _plan.build_plan(intent, devices)["cabling"]["links"]
    rows = re.findall(r"^\| (gpu\d mlx5_\d) \| (\S+ swp\d) \| (\S+ swp\d) \| (\S+ swp\d) \|$", doc, flags=re.M)
    assert len(rows) == 8
    text = {f"{link['a']['host']} {link['a']['port']}": f"{link['b']['host']} {link['b'].get('nic') or link['b']['port']}" for link in links}
    for nic, leaf_port, uplink, spine_port in rows:
        assert text[leaf_port] == nic
        assert text[uplink] == spine_port
    ib_intent, ib_devices = rail_fabric(units=1, per_unit=2, rails=2, spines=1, transport="infiniband")
    start = re.search(r"```\n(IBSW leaf-su1-r0\n.*?)```", doc, flags=re.S).group(1)
    assert start in _plan.build_plan(ib_intent, ib_devices)["cabling"]["ib_topology"]


def test_infiniband_host_names_that_cannot_name_a_system_are_refused():
    intent, devices = load_inventory("lab-ib")
    devices = copy.deepcopy(devices)
    intent = dict(intent, topology={"switches": ["ib-leaf1", *intent["topology"]["switches"]], "ib_switch_type": "IBSW"})  # lab-ib names its own leaves
    devices["gpu 1"] = devices.pop("gpu1")
    devices["gpu 1"]["nics"][0]["peer"] = {"host": "ib-leaf1", "port": 1}
    one_error(intent, devices, "'gpu 1': lossless_fabric_device", "'gpu 1' cannot name a system in the InfiniBand topology file")
