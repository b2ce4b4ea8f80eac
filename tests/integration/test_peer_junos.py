# SPDX-License-Identifier: GPL-3.0-or-later
"""Juniper's own Ansible collection (junipernetworks.junos 11.0.0, over ansible.netcommon network_cli) drives the
Junos simulator as it drives a QFX (issue 32): its terminal plugin opens the shell (set cli timestamp disable,
set cli screen-length 0, set cli screen-width 1024), its cliconf reads 'show version' (get_device_info) and
junos_command runs show version, show interfaces terse and show lldp neighbors with display text, xml and json
('| display xml|json' appended); the answers are checked against the simulator's own state.

junos_facts, junos_config and napalm's junos driver speak NETCONF (the 'netconf' SSH subsystem, RPCs such as
get-software-information); the lab's SSH server has no NETCONF subsystem, so they cannot reach it
(docs/vendor-junos.md "Peers"). One lab of two cabled Junos switches, one play."""
from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET

import pytest
import switchlab  # pylint: disable=import-error

sys.path.insert(0, str(switchlab.ROOT) + "/tests/lab")
import wiring  # noqa: E402  # pylint: disable=wrong-import-position,import-error

HOST, PEER = "jn1", "jn2"
HOSTVARS = {
    HOST: {"lossless_fabric_device": {"kind": "switch", "platform": "junos", "ports": {
        "et-0/0/1": {"speed": "400G", "peer": {"host": PEER, "port": "et-0/0/2"}}}}},
    PEER: {"lossless_fabric_device": {"kind": "switch", "platform": "junos", "ports": {
        "et-0/0/2": {"speed": "400G", "peer": {"host": HOST, "port": "et-0/0/1"}}}}},
}


@pytest.fixture
def lab(tmp_path):
    """switch_lab's lab, with its switches cabled (the simulator reads the wiring file on every command)."""
    wiring.write(str(tmp_path), wiring.build(HOSTVARS))
    where = tmp_path / "lab"
    where.mkdir()
    made = switchlab.SwitchLab(where, {HOST: "junos", PEER: "junos"}, 0.01)
    made.sim.config["wiring_file"] = str(tmp_path / wiring.FILE)
    made.start()
    try:
        yield made
    finally:
        made.stop()


def test_junipernetworks_junos_command_against_the_simulator(lab):
    lab.sim.load(PEER, ['set interfaces et-0/0/2 description "to jn1 et-0/0/1"'])
    inv = lab.peer_inventory("junipernetworks.junos.junos")
    commands = ["show version", "show interfaces terse", "show lldp neighbors"]
    tasks = []
    for display in ("text", "xml", "json"):
        tasks += [{"name": display, "junipernetworks.junos.junos_command": {"commands": commands, "display": display}, "register": "r"},
                  {"ansible.builtin.debug": {"msg": "RESULT {{ r.stdout | to_json }}"}}]
    out = lab.playbook([{"hosts": HOST, "gather_facts": False, "tasks": tasks}], inventory=inv)
    text, xml, js = switchlab.results(out)
    state = lab.sim.state_data["switches"][HOST]
    peer_index = "516"  # jn2's et-0/0/2 is the second of its ports: SNMP ifIndex 515 + 1
    chassis = wiring.mac(PEER, "chassis")

    version, terse, lldp = text
    assert "Hostname: %s\nModel: %s\nJunos: %s" % (HOST, state["model"], state["version"]) in version
    assert [line.split()[:3] for line in terse.splitlines()[1:3]] == [["et-0/0/1", "up", "up"], ["et-0/0/2", "up", "down"]]
    row = [line for line in lldp.splitlines() if line.startswith("et-0/0/1")][0]
    assert row.split()[:3] == ["et-0/0/1", "-", chassis] and row.endswith(PEER) and "to jn1 et-0/0/1" in row

    def rpc(text_):
        return ET.fromstring(text_[text_.index("<rpc-reply"):text_.rindex("</rpc-reply>") + len("</rpc-reply>")])

    info = rpc(xml[0]).find("multi-routing-engine-results/multi-routing-engine-item/software-information")
    assert (info.findtext("host-name"), info.findtext("product-model"), info.findtext("junos-version")) == (HOST, state["model"], state["version"])
    ports = {p.findtext("{*}name").strip(): p.findtext("{*}oper-status").strip() for p in rpc(xml[1]).findall(".//{*}physical-interface")}
    assert ports == {"et-0/0/1": "up", "et-0/0/2": "down"}
    [entry] = rpc(xml[2]).find("lldp-neighbors-information").findall("lldp-neighbor-information")
    assert (entry.findtext("lldp-remote-port-id"), entry.findtext("lldp-remote-port-description"), entry.findtext("lldp-remote-system-name"),
            entry.findtext("lldp-remote-chassis-id")) == (peer_index, "to jn1 et-0/0/1", PEER, chassis)

    # each answer ends with the '{master:0}' line a QFX prints before its prompt (network_cli strips the prompt only)
    docs = [json.loads(d.rsplit("{master:0}", 1)[0]) for d in js]
    software = docs[0]["multi-routing-engine-results"][0]["multi-routing-engine-item"][0]["software-information"][0]
    assert software["host-name"][0]["data"] == HOST and software["junos-version"][0]["data"] == state["version"]
    assert [p["name"][0]["data"] for p in docs[1]["interface-information"][0]["physical-interface"]] == ["et-0/0/1", "et-0/0/2"]
    neighbour = docs[2]["lldp-neighbors-information"][0]["lldp-neighbor-information"][0]
    assert neighbour["lldp-remote-port-id"][0]["data"] == peer_index and neighbour["lldp-remote-system-name"][0]["data"] == PEER
