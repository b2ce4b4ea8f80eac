# SPDX-License-Identifier: GPL-3.0-or-later
"""Arista's own collection against the EOS simulator (issue 32): arista.eos 12.0.0 over
ansible.netcommon.network_cli, as a user of that collection points it at a switch (peer_inventory: host keys
checked, 'enable' by become). eos_facts gathers every legacy subset (min, hardware, config, interfaces) and
eos_command runs text and JSON commands; the facts must equal the simulator's state.

The lab is switchlab.SwitchLab (what the switch_lab fixture builds) with a wiring file added, so that the
switch has LLDP neighbours to report: sw1 Ethernet1 - sw2 Ethernet1, sw1 Ethernet2 - gpu1 mlx5_0."""
from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import switchlab  # noqa: E402  # pylint: disable=wrong-import-position,import-error

sys.path.insert(0, os.path.join(switchlab.ROOT, "tests", "lab"))
import wiring  # noqa: E402  # pylint: disable=wrong-import-position,import-error

HOSTVARS = {
    "sw1": {"lossless_fabric_device": {"kind": "switch", "platform": "eos", "ports": {
        "Ethernet1": {"speed": "400G", "peer": {"host": "sw2", "port": "Ethernet1"}},
        "Ethernet2": {"speed": "100G", "peer": {"host": "gpu1", "nic": "mlx5_0"}}}}},
    "sw2": {"lossless_fabric_device": {"kind": "switch", "platform": "eos", "ports": {
        "Ethernet1": {"speed": "400G", "peer": {"host": "sw1", "port": "Ethernet1"}}}}},
    "gpu1": {"lossless_fabric_device": {"kind": "host", "nics": [
        {"name": "mlx5_0", "netdev": "eth2", "speed": "100G", "peer": {"host": "sw1", "port": "Ethernet2"}}]}},
}


@pytest.fixture
def lab(tmp_path):
    wiring.write(str(tmp_path), wiring.build(HOSTVARS))
    where = tmp_path / "lab"
    where.mkdir()
    made = switchlab.SwitchLab(where, {"sw1": "eos", "sw2": "eos"}, 0.01)
    made.sim.config["wiring_file"] = str(tmp_path / wiring.FILE)
    made.start()
    try:
        made.sim.load("sw1", ["interface Ethernet1", "description to sw2 Et1", "no switchport", "ip address 10.0.0.0/31"])
        made.sim.load("sw2", ["interface Ethernet1", "description uplink to sw1"])
        yield made
    finally:
        made.stop()


def dotted(mac):
    digits = mac.replace(":", "")
    return ".".join(digits[i:i + 4] for i in (0, 4, 8))


def test_eos_facts_and_eos_command_report_the_simulators_state(lab):
    inventory = lab.peer_inventory("arista.eos.eos", ansible_become=True, ansible_become_method="enable")
    play = {"hosts": "sw1", "gather_facts": False, "tasks": [
        {"arista.eos.eos_facts": {"gather_subset": "all"}, "register": "facts"},
        {"ansible.builtin.debug": {"msg": "RESULT {{ facts | to_json }}"}},
        {"arista.eos.eos_command": {"commands": [
            "show version", "show interfaces status", "show lldp neighbors",
            {"command": "show interfaces status", "output": "json"}]}, "register": "cmd"},
        {"ansible.builtin.debug": {"msg": "RESULT {{ cmd | to_json }}"}},
    ]}
    out = lab.playbook([play], inventory=inventory)
    facts, cmd = switchlab.results(out)
    f = facts["ansible_facts"]
    # min: cliconf get_device_info ('show version | json', 'show hostname | json', the boot-config's SWI=)
    assert (f["ansible_net_hostname"], f["ansible_net_version"], f["ansible_net_model"]) == ("sw1", "4.32.2F", "DCS-7280CR3-32P4")
    assert (f["ansible_net_serialnum"], f["ansible_net_image"], f["ansible_net_system"]) == ("SIMSW1", "flash:/EOS.swi", "eos")
    # hardware: 'dir all-filesystems', memory from 'show version | json'
    assert f["ansible_net_filesystems"] == ["flash:", "system:"]
    assert f["ansible_net_memtotal_mb"] > f["ansible_net_memfree_mb"] > 0
    # config: 'show running-config'
    assert f["ansible_net_config"] == lab.running("sw1").rstrip("\n")
    # interfaces: 'show interfaces | json', 'show lldp neighbors | json'
    et1 = f["ansible_net_interfaces"]["Ethernet1"]
    assert (et1["description"], et1["operstatus"], et1["lineprotocol"], et1["type"], et1["bandwidth"]) == \
        ("to sw2 Et1", "connected", "up", "routed", 400000000000)
    assert et1["ipv4"] == {"address": "10.0.0.0", "masklen": 31} and f["ansible_net_all_ipv4_addresses"] == ["10.0.0.0"]
    assert set(f["ansible_net_interfaces"]) == {"Ethernet1", "Ethernet2"}
    assert f["ansible_net_neighbors"] == {"Ethernet1": [{"host": "sw2", "port": "Ethernet1"}],
                                          "Ethernet2": [{"host": "gpu1", "port": dotted(wiring.mac("gpu1", "mlx5_0"))}]}
    version, status, lldp, status_json = cmd["stdout"]
    assert version.startswith("Arista DCS-7280CR3-32P4\n") and "Serial number: SIMSW1" in version
    assert status.splitlines()[0].split()[-2:] == ["Flags", "Encapsulation"] and "to sw2 Et1" in status
    assert "sw2" in lldp and "Ethernet1" in lldp
    assert status_json["interfaceStatuses"]["Ethernet1"]["linkStatus"] == "connected"
