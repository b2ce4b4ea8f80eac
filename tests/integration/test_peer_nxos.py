# SPDX-License-Identifier: GPL-3.0-or-later
"""Cisco's own Ansible collection (cisco.nxos 11.1.0, over ansible.netcommon network_cli) drives the NX-OS
simulator as it drives a Nexus switch (issue 32): its terminal plugin opens the shell, its cliconf reads
'show version' and 'show inventory' (get_device_info), nxos_facts gathers the min and interfaces subsets
(show version, show license host-id, show interface | json-pretty, show ipv6 interface vrf all | json-pretty,
show lldp neighbors | json-pretty, show cdp neighbors detail | json-pretty) and nxos_command runs commands;
the facts are checked against the simulator's own state. One lab, one play."""
from __future__ import annotations

import json

import switchlab  # pylint: disable=import-error

HOST = "nx1"


def test_cisco_nxos_facts_and_command_against_the_simulator(switch_lab):
    lab = switch_lab({HOST: "nxos"})
    inv = lab.peer_inventory("cisco.nxos.nxos")
    play = {
        "hosts": HOST, "gather_facts": False,
        "tasks": [
            {"name": "facts", "cisco.nxos.nxos_facts": {"gather_subset": ["min", "interfaces"]}, "register": "f"},
            {"ansible.builtin.debug": {"msg": "RESULT {{ f.ansible_facts | to_json }}"}},
            {"name": "command", "cisco.nxos.nxos_command": {"commands": ["show version", "show hostname", "show inventory | json"]},
             "register": "c"},
            {"ansible.builtin.debug": {"msg": "RESULT {{ c.stdout | to_json }}"}},
        ],
    }
    out = lab.playbook([play], inventory=inv)
    facts, stdout = switchlab.results(out)
    state = lab.sim.state_data["switches"][HOST]

    assert facts["ansible_net_hostname"] == HOST
    assert facts["ansible_net_system"] == "nxos"
    assert facts["ansible_net_version"] == state["version"] == "10.3(2)F"
    assert facts["ansible_net_serialnum"] == state["serial"]
    assert facts["ansible_net_license_hostid"] == state["serial"]
    assert facts["ansible_net_model"] == "Nexus9000 C9364C-GX Chassis"
    assert facts["ansible_net_platform"] == state["model"] == "N9K-C9364C-GX"
    assert facts["ansible_net_image"] == "bootflash:///nxos64-cs.10.3.2.F.bin"
    # interfaces: every port of the switch, from 'show interface | json-pretty'; the lab runs no LLDP peer here
    interfaces = facts["ansible_net_interfaces"]
    assert sorted(interfaces) == sorted(state["ports"])
    for port in state["ports"]:
        assert interfaces[port]["state"] == "down" and interfaces[port]["mtu"] == "1500"
    assert facts["ansible_net_neighbors"] == {}

    version, hostname, inventory = stdout
    assert "Processor Board ID %s" % state["serial"] in version and "Kernel uptime is" in version
    assert hostname.strip() == HOST
    chassis = json.loads(inventory) if isinstance(inventory, str) else inventory
    assert chassis["TABLE_inv"]["ROW_inv"][0]["serialnum"] == state["serial"]
