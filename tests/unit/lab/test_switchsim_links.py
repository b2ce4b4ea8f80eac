# SPDX-License-Identifier: GPL-3.0-or-later
"""switchsim answers LLDP and link state from the lab wiring (tests/lab/wiring.py), read on every command,
in each vendor's output form; the production parsers read those answers back."""
from __future__ import annotations

import os
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests" / "lab"))

import wiring  # noqa: E402
from switchsim.server import Simulator  # noqa: E402

from ansible_collections.lossless.fabric.plugins.module_utils._platforms.eos import _driver as eos  # noqa: E402
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.junos import _driver as junos  # noqa: E402
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.nvue import _driver as nvue  # noqa: E402

HOSTVARS = {
    "leaf1": {"lossless_fabric_device": {"kind": "switch", "platform": "nvue", "ports": {
        "swp1": {"speed": "400G", "peer": {"host": "gpu1", "nic": "mlx5_0"}},
        "swp2": {"speed": "400G", "peer": {"host": "gpu2", "nic": "mlx5_0"}},
        "swp31": {"speed": "400G", "peer": {"host": "spine1", "port": "Ethernet1/1"}}}}},
    "leaf2": {"lossless_fabric_device": {"kind": "switch", "platform": "junos", "ports": {
        "et-0/0/1": {"speed": "400G", "peer": {"host": "gpu1", "nic": "mlx5_1"}},
        "et-0/0/31": {"speed": "400G", "peer": {"host": "spine1", "port": "Ethernet2/1"}}}}},
    "spine1": {"lossless_fabric_device": {"kind": "switch", "platform": "eos", "ports": {
        "Ethernet1/1": {"speed": "400G", "peer": {"host": "leaf1", "port": "swp31"}},
        "Ethernet2/1": {"speed": "400G", "peer": {"host": "leaf2", "port": "et-0/0/31"}}}}},
    "gpu1": {"lossless_fabric_device": {"kind": "host", "nics": [
        {"name": "mlx5_0", "netdev": "eth2", "speed": "400G", "peer": {"host": "leaf1", "port": "swp1"}},
        {"name": "mlx5_1", "netdev": "eth3", "speed": "400G", "peer": {"host": "leaf2", "port": "et-0/0/1"}}]}},
    "gpu2": {"lossless_fabric_device": {"kind": "host", "nics": [
        {"name": "mlx5_0", "netdev": "eth2", "speed": "400G", "peer": {"host": "leaf1", "port": "swp2"}}]}},
}


@pytest.fixture
def lab(tmp_path):
    wiring.write(str(tmp_path), wiring.build(HOSTVARS))
    cfg = {"wiring_file": os.path.join(str(tmp_path), wiring.FILE), "switches": [
        {"name": "leaf1", "platform": "nvue", "ports": ["swp1", "swp2", "swp31"]},
        {"name": "leaf2", "platform": "junos", "ports": ["et-0/0/1", "et-0/0/31"]},
        {"name": "spine1", "platform": "eos", "ports": ["Ethernet1/1", "Ethernet2/1"]}]}
    sim = Simulator(cfg, str(tmp_path))
    sim.run_dir = str(tmp_path)
    return sim


def ask(sim, device: str, commands: list[str]) -> dict[str, str]:
    shell = sim.devices[device].new_shell(None)
    return {command: shell.handle(command) for command in commands}


def ends(sim, device: str, ports=None) -> dict:
    driver = {"eos": eos, "nvue": nvue, "junos": junos}[sim.devices[device].platform].Driver
    return driver.parse_links(ask(sim, device, driver.link_commands(ports)))


def nb(system, port, subtype, descr, chassis):
    return [{"system": system, "port": port, "port_id_subtype": subtype, "port_descr": descr, "chassis_id": chassis}]


def test_as_intended_each_platform_advertises_its_own_way(lab):
    mac = wiring.mac("gpu1", "mlx5_0")
    leaf1 = ends(lab, "leaf1")
    # a host runs lldpd with its defaults: port ID = MAC (subtype mac), description = netdev
    assert leaf1["swp1"] == {"oper": "up", "speed": "400G", "width": None, "neighbors": nb("gpu1", mac, "mac", "eth2", mac)}
    # an EOS peer: its interface name, no description configured
    assert leaf1["swp31"]["neighbors"] == nb("spine1", "Ethernet1/1", "ifname", None, wiring.mac("spine1", "chassis"))
    spine = ends(lab, "spine1")
    # a Cumulus peer: interface name as port ID and description
    assert spine["Ethernet1/1"]["neighbors"][0]["port"] == "swp31" and spine["Ethernet1/1"]["neighbors"][0]["port_descr"] == "swp31"
    # a Junos peer: its SNMP ifIndex as a locally assigned port ID, the name in the description
    # (EOS prints MAC addresses dotted: xxxx.xxxx.xxxx)
    dotted = wiring.mac("leaf2", "chassis").replace(":", "")
    assert spine["Ethernet2/1"]["neighbors"] == nb("leaf2", "516", "local", "et-0/0/31", ".".join(dotted[i:i + 4] for i in (0, 4, 8)))
    assert spine["Ethernet2/1"]["oper"] == "up" and spine["Ethernet2/1"]["speed"] == "400G"
    leaf2 = ends(lab, "leaf2", ["et-0/0/1", "et-0/0/31"])
    assert leaf2["et-0/0/1"]["neighbors"] == nb("gpu1", wiring.mac("gpu1", "mlx5_1"), "mac", "eth3", wiring.mac("gpu1", "mlx5_1"))
    assert leaf2["et-0/0/31"]["neighbors"][0]["system"] == "spine1" and leaf2["et-0/0/31"]["speed"] == "400G"


def test_a_rewritten_wiring_takes_effect_at_once(lab):
    assert ends(lab, "leaf1")["swp2"]["neighbors"][0]["system"] == "gpu2"
    wiring.refault(lab.run_dir, [{"swap": ["leaf1:swp1", "leaf1:swp2"]}, {"downgrade": "spine1:Ethernet1/1", "speed": "200G"},
                                 {"unplug": "leaf2:et-0/0/1"}])
    leaf1 = ends(lab, "leaf1")
    assert leaf1["swp1"]["neighbors"][0]["system"] == "gpu2" and leaf1["swp2"]["neighbors"][0]["system"] == "gpu1"
    assert leaf1["swp31"]["speed"] == "200G" and ends(lab, "spine1")["Ethernet1/1"]["speed"] == "200G"
    down = ends(lab, "leaf2", ["et-0/0/1"])["et-0/0/1"]
    assert down == {"oper": "down", "speed": None, "width": None, "neighbors": []}


def test_unplugged_shows_down_in_each_form(lab):
    wiring.refault(lab.run_dir, [{"unplug": "spine1:Ethernet1/1"}])
    out = ask(lab, "spine1", ["show interfaces status | json", "show lldp neighbors detail", "show interfaces status"])
    assert '"linkStatus": "notconnect"' in out["show interfaces status | json"]
    # the down port keeps its configured bandwidth (as EOS prints it); the parser does not take it as a speed
    assert '"bandwidth": 400000000000' in out["show interfaces status | json"]
    assert "Interface Ethernet1/1 detected 0 LLDP neighbors:" in out["show lldp neighbors detail"]
    text = eos.Driver.parse_links({"show lldp neighbors detail": out["show lldp neighbors detail"], "show interfaces status": out["show interfaces status"]})
    assert text["Ethernet1/1"] == {"oper": "down", "speed": None, "width": None, "neighbors": []}
    assert text["Ethernet2/1"]["neighbors"][0]["port"] == "516"
    leaf1 = ask(lab, "leaf1", ["nv show interface -o json", "nv show interface swp31 lldp -o json", "nv show interface"])
    assert '"speed"' not in leaf1["nv show interface swp31 lldp -o json"] and "neighbor" not in leaf1["nv show interface swp31 lldp -o json"]
    assert "swp31      down" in leaf1["nv show interface"]
    table = nvue.Driver.parse_links({"nv show interface": leaf1["nv show interface"]})
    assert table["swp31"]["oper"] == "down" and table["swp1"]["neighbors"][0]["system"] == "gpu1"
    junos_out = ask(lab, "leaf2", ["show interfaces et-0/0/31", "show lldp neighbors interface et-0/0/31 | display xml"])
    assert "Physical link is Up" in junos_out["show interfaces et-0/0/31"]  # the other end of spine1's cable is Ethernet2/1: still up


def test_junos_and_nvue_refuse_unknown_interfaces(lab):
    assert ask(lab, "leaf2", ["show interfaces et-0/0/9"])["show interfaces et-0/0/9"].startswith("error: device et-0/0/9 not found")
    assert "does not exist" in ask(lab, "leaf1", ["nv show interface swp9 lldp -o json"])["nv show interface swp9 lldp -o json"]


def test_without_wiring_no_port_is_cabled(tmp_path):
    sim = Simulator({"switches": [{"name": "s", "platform": "eos", "ports": ["Ethernet1"]}]}, str(tmp_path))
    got = eos.Driver.parse_links(ask(sim, "s", list(eos.Driver.LINK_COMMANDS)))
    assert got["Ethernet1"] == {"oper": "down", "speed": None, "width": None, "neighbors": []}
