# SPDX-License-Identifier: GPL-3.0-or-later
"""switch_links through ansible-playbook against the switch simulator on all three platforms, cabled
from a lab wiring (tests/lab/wiring.py): as intended every switch reports the intended neighbours; after
wiring.refault (a swap, an unplug, a downgrade) the next run reports exactly what the cables now are."""

from __future__ import annotations

import os
import sys

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from labrun import BIN, ROOT, ansible_env, run  # noqa: E402  # pylint: disable=import-error,wrong-import-position
from switchlab import PASSWORD, results  # noqa: E402  # pylint: disable=import-error,wrong-import-position

sys.path.insert(0, os.path.join(ROOT, "tests", "lab"))
import wiring  # noqa: E402  # pylint: disable=wrong-import-position,import-error
from switchsim.client import SimProcess, write_known_hosts  # noqa: E402  # pylint: disable=wrong-import-position,import-error

# The lab inventory's ten links (inventories/lab/host_vars), by hand.
SWITCHES = {
    "leaf1": ("nvue", {"swp1": {"host": "gpu1", "nic": "mlx5_0"}, "swp2": {"host": "gpu2", "nic": "mlx5_0"},
                       "swp31": {"host": "spine1", "port": "Ethernet1/1"}}),
    "leaf2": ("junos", {"et-0/0/1": {"host": "gpu1", "nic": "mlx5_1"}, "et-0/0/2": {"host": "gpu2", "nic": "mlx5_1"},
                        "et-0/0/31": {"host": "spine1", "port": "Ethernet2/1"}}),
    "leaf3": ("sonic", {"Ethernet0": {"host": "spine1", "port": "Ethernet3/1"}, "Ethernet8": {"host": "spine1", "port": "Ethernet4/1"}}),
    "leaf4": ("nxos", {"Ethernet1/1": {"host": "spine1", "port": "Ethernet5/1"}, "Ethernet1/2": {"host": "spine1", "port": "Ethernet6/1"}}),
    "spine1": ("eos", {"Ethernet1/1": {"host": "leaf1", "port": "swp31"}, "Ethernet2/1": {"host": "leaf2", "port": "et-0/0/31"},
                       "Ethernet3/1": {"host": "leaf3", "port": "Ethernet0"}, "Ethernet4/1": {"host": "leaf3", "port": "Ethernet8"},
                       "Ethernet5/1": {"host": "leaf4", "port": "Ethernet1/1"}, "Ethernet6/1": {"host": "leaf4", "port": "Ethernet1/2"}}),
}
NICS = {"gpu1": [("mlx5_0", "eth2", "leaf1", "swp1"), ("mlx5_1", "eth3", "leaf2", "et-0/0/1")],
        "gpu2": [("mlx5_0", "eth2", "leaf1", "swp2"), ("mlx5_1", "eth3", "leaf2", "et-0/0/2")]}


def _hostvars():
    hv = {
        name: {"lossless_fabric_device": {"kind": "switch", "platform": platform, "ports": {p: {"speed": "400G", "peer": peer} for p, peer in ports.items()}}}
        for name, (platform, ports) in SWITCHES.items()
    }
    for host, nics in NICS.items():
        hv[host] = {"lossless_fabric_device": {"kind": "host", "nics": [
            {"name": n, "netdev": d, "speed": "400G", "peer": {"host": sw, "port": p}} for n, d, sw, p in nics]}}
    return hv


def _lab(tmp_path):
    hostvars = _hostvars()
    wiring.write(str(tmp_path), wiring.build(hostvars))
    (tmp_path / "keys").mkdir()
    cfg = {"time_scale": 0.01, "wiring_file": str(tmp_path / wiring.FILE), "switches": [
        {"name": name, "platform": platform, "port": 0, "username": "admin", "password": PASSWORD,
         "host_key_file": str(tmp_path / "keys" / (name + ".key")), "ports": sorted(ports)}
        for name, (platform, ports) in SWITCHES.items()]}
    sim = SimProcess(cfg, str(tmp_path / "sim"))
    sim.start()
    known = write_known_hosts(str(tmp_path / "known_hosts"), sim.state_data)
    hosts = {name: {"ansible_host": "127.0.0.1", "ansible_port": sim.port(name), "ansible_user": "admin", "ansible_password": PASSWORD,
                    "lossless_fabric_known_hosts": known, **hostvars[name]} for name in SWITCHES}
    (tmp_path / "inventory").mkdir()
    (tmp_path / "inventory" / "hosts.yml").write_text(yaml.safe_dump({"all": {"children": {"switches": {"hosts": hosts}}}}))
    return sim


def _read(tmp_path, check=False):
    play = [{"name": "links", "hosts": "switches", "gather_facts": False, "check_mode": check, "tasks": [
        {"name": "read", "lossless.fabric.switch_links": {"fabric": "{{ groups['switches'] }}"}, "run_once": True, "register": "links"},
        {"name": "show", "ansible.builtin.debug": {"msg": "RESULT {{ links | to_json }}"}, "run_once": True},
    ]}]
    path = tmp_path / "play.yml"
    path.write_text(yaml.safe_dump(play, sort_keys=False))
    out = run([os.path.join(BIN, "ansible-playbook"), "-i", str(tmp_path / "inventory"), str(path)], env=ansible_env(ANSIBLE_STDOUT_CALLBACK="default"))
    text = out.stdout + out.stderr
    assert PASSWORD not in text
    assert out.returncode == 0, text
    (result,) = results(out)
    assert result["changed"] is False
    return {name: sw["ends"] for name, sw in result["switches"].items()}


def _peer(end):
    (n,) = end["neighbors"]
    return n["system"], n["port"], n["port_descr"]


def test_switch_links_as_intended_then_refaulted(tmp_path):
    sim = _lab(tmp_path)
    try:
        ends = _read(tmp_path, check=True)  # check mode reads the same (read-only)
        mac = wiring.mac
        assert _peer(ends["leaf1"]["swp1"]) == ("gpu1", mac("gpu1", "mlx5_0"), "eth2")
        assert _peer(ends["leaf1"]["swp2"]) == ("gpu2", mac("gpu2", "mlx5_0"), "eth2")
        assert _peer(ends["leaf1"]["swp31"]) == ("spine1", "Ethernet1/1", None)
        assert _peer(ends["leaf2"]["et-0/0/1"]) == ("gpu1", mac("gpu1", "mlx5_1"), "eth3")
        assert _peer(ends["leaf2"]["et-0/0/31"]) == ("spine1", "Ethernet2/1", None)
        assert _peer(ends["spine1"]["Ethernet1/1"]) == ("leaf1", "swp31", "swp31")
        # Junos sends its ifIndex (locally assigned) and the interface name as the port description
        assert _peer(ends["spine1"]["Ethernet2/1"])[0::2] == ("leaf2", "et-0/0/31")
        assert ends["spine1"]["Ethernet2/1"]["neighbors"][0]["port_id_subtype"] == "local"
        assert _peer(ends["leaf3"]["Ethernet0"]) == ("spine1", "Ethernet3/1", None)
        assert _peer(ends["leaf3"]["Ethernet8"]) == ("spine1", "Ethernet4/1", None)
        # SONiC's lldpmgrd sends the port's alias (locally assigned; the factory PORT table's etpN) as its port id
        assert _peer(ends["spine1"]["Ethernet3/1"]) == ("leaf3", "etp1", None)
        assert _peer(ends["spine1"]["Ethernet4/1"]) == ("leaf3", "etp2", None)
        assert ends["spine1"]["Ethernet3/1"]["neighbors"][0]["port_id_subtype"] == "local"
        assert all(e["oper"] == "up" and e["speed"] == "400G" for sw in ends.values() for e in sw.values())

        faults = [{"swap": ["leaf1:swp1", "leaf1:swp2"]}, {"unplug": "leaf2:et-0/0/2"}, {"downgrade": "spine1:Ethernet2/1", "speed": "200G"}]
        wiring.refault(str(tmp_path), faults)
        ends = _read(tmp_path)
        assert _peer(ends["leaf1"]["swp1"])[0] == "gpu2" and _peer(ends["leaf1"]["swp2"])[0] == "gpu1"
        assert ends["leaf2"]["et-0/0/2"] == {"oper": "down", "speed": None, "width": None, "neighbors": []}
        assert ends["spine1"]["Ethernet2/1"]["speed"] == "200G" and ends["leaf2"]["et-0/0/31"]["speed"] == "200G"
        assert ends["spine1"]["Ethernet1/1"]["speed"] == "400G"
        faults = [{"unplug": "leaf3:Ethernet8"}, {"downgrade": "spine1:Ethernet3/1", "speed": "200G"}]
        wiring.refault(str(tmp_path), faults)
        ends = _read(tmp_path)
        assert ends["leaf3"]["Ethernet8"] == {"oper": "down", "speed": None, "width": None, "neighbors": []}
        assert ends["leaf3"]["Ethernet0"]["speed"] == "200G" and ends["spine1"]["Ethernet3/1"]["speed"] == "200G"
    finally:
        sim.stop()
