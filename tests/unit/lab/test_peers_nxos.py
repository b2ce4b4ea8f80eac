# SPDX-License-Identifier: GPL-3.0-or-later
"""The NX-OS simulator judged by parsers others wrote from real Nexus switches (issue 32).

For each show command the project reads from NX-OS or a peer sends when it connects and gathers facts
(cisco.nxos 11.1.0 cliconf/terminal/nxos_facts, netmiko cisco_nxos, napalm nxos_ssh; docs/research/peers.md),
the simulator's answer is parsed with ntc-templates (platform cisco_nxos) and the parsed values must equal the
simulator's own state. A command no ntc template covers says so below, with the vendor source of its form.
genie's parsers (nxos ShowVersion, ShowInventory, ShowLldpNeighborsDetail, ShowInterface) would judge the same
outputs; genie is ~770 MB and is left out of the test dependencies (docs/research/peers.md, section genie).

Every test here fails against the simulator before issue 32: it refused show inventory, show hostname, show
interface, show lldp neighbors, show license host-id, show clock and every '| json', printed 'show version'
without Processor Board ID / Kernel uptime / Last reset, and LLDP chassis IDs colon-separated.
"""
from __future__ import annotations

import json
import os
import pathlib
import re
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests" / "lab"))

import wiring  # noqa: E402
from ntc_templates.parse import parse_output  # noqa: E402  # the judge: a pinned test dependency, never skipped
from switchsim.server import Simulator  # noqa: E402

from ansible_collections.lossless.fabric.plugins.module_utils._platforms.nxos import _driver as nxos  # noqa: E402

NX = "leaf7"
LONG = "spine-with-a-name-over-twenty"  # NX-OS wraps a Device ID longer than 20 characters onto its own line
HOSTVARS = {
    NX: {"lossless_fabric_device": {"kind": "switch", "platform": "nxos", "ports": {
        "Ethernet1/1": {"speed": "100G", "peer": {"host": "gpu1", "nic": "mlx5_0"}},
        "Ethernet1/2": {"speed": "100G", "peer": {"host": LONG, "port": "Ethernet3/1"}}}}},
    LONG: {"lossless_fabric_device": {"kind": "switch", "platform": "eos", "ports": {
        "Ethernet3/1": {"speed": "100G", "peer": {"host": NX, "port": "Ethernet1/2"}}}}},
    "gpu1": {"lossless_fabric_device": {"kind": "host", "nics": [
        {"name": "mlx5_0", "netdev": "eth2", "speed": "100G", "peer": {"host": NX, "port": "Ethernet1/1"}}]}},
}
PORTS = ["Ethernet1/1", "Ethernet1/2", "Ethernet1/3"]


def dotted(mac: str) -> str:
    hexes = mac.replace(":", "")
    return ".".join(hexes[i:i + 4] for i in (0, 4, 8))


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    run = str(tmp_path_factory.mktemp("peers-nxos"))
    wiring.write(run, wiring.build(HOSTVARS))
    cfg = {"wiring_file": os.path.join(run, wiring.FILE), "switches": [
        {"name": NX, "platform": "nxos", "ports": PORTS,
         "initial_config": ["feature scp-server", "interface Ethernet1/1", "description gpu1 mlx5_0", "mtu 9216"]},
        {"name": LONG, "platform": "eos", "ports": ["Ethernet3/1"]}]}
    sim = Simulator(cfg, run)
    sim.run_dir = run
    return sim


@pytest.fixture
def dev(lab):
    return lab.devices[NX]


def ask(lab, command: str) -> str:
    return lab.devices[NX].new_shell(None).handle(command)


def ntc(lab, command: str) -> list[dict]:
    return parse_output(platform="cisco_nxos", command=command, data=ask(lab, command))


def test_show_version_parses_with_every_field(lab, dev):
    """cisco_nxos_show_version: the fields napalm (uptime), nxos_facts (serialnum) and genie (kernel_uptime) need."""
    [row] = ntc(lab, "show version")
    assert row["hostname"] == dev.config.hostname == NX
    assert row["os"] == "10.3(2)F" and row["bios"] == "07.69"
    assert row["platform"] == "C9364C-GX" and dev.model == "N9K-C9364C-GX"
    assert row["serial"] == dev.serial and re.fullmatch(r"[A-Z0-9]{11}", dev.serial)
    assert re.fullmatch(r"\d+ day\(s\), \d+ hour\(s\), \d+ minute\(s\), \d+ second\(s\)", row["uptime"])
    assert row["last_reboot_reason"] == "Unknown"
    assert row["boot_image"] == "bootflash:///nxos64-cs.10.3.2.F.bin"


def test_show_version_as_cisco_nxos_cliconf_reads_it(lab, dev):
    """cisco.nxos cliconf get_device_info's regular expressions (its own code, 11.1.0) on the same text."""
    out = ask(lab, "show version")
    assert re.search(r"\s+NXOS:\s+version\s*(\S+)", out, re.M).group(1) == "10.3(2)F"
    assert re.search(r"Hardware\n\s+cisco(.+)$", out, re.M).group(1).strip() == "Nexus9000 C9364C-GX Chassis"
    assert re.search(r"\s+Device name:\s*(\S+)", out, re.M).group(1) == NX
    assert re.search(r"Processor Board ID\s*(\S+)", out, re.M).group(1) == dev.serial
    assert " uptime is " in out  # napalm nxos_ssh get_facts splits here


def test_show_inventory_parses_and_names_the_chassis(lab, dev):
    rows = ntc(lab, "show inventory")
    assert rows[0] == {"name": "Chassis", "descr": "Nexus9000 C9364C-GX Chassis", "pid": dev.model, "vid": "V01", "sn": dev.serial}
    # cisco.nxos get_device_info: network_os_platform from the chassis PID
    out = ask(lab, "show inventory")
    assert re.search(r'NAME: "Chassis",\s*DESCR:.*\nPID:\s*(\S+)', out, re.M).group(1) == dev.model


def test_show_inventory_json_is_the_nx_api_table(lab, dev):
    """napalm nxos_ssh get_facts reads TABLE_inv / ROW_inv (name '"Chassis"', serialnum)."""
    body = json.loads(ask(lab, "show inventory | json"))
    rows = body["TABLE_inv"]["ROW_inv"]
    assert rows[0] == {"name": '"Chassis"', "desc": "Nexus9000 C9364C-GX Chassis", "productid": dev.model,
                       "vendorid": "V01", "serialnum": dev.serial}


def test_show_hostname_parses(lab, dev):
    assert ntc(lab, "show hostname") == [{"hostname": dev.config.hostname}]
    assert json.loads(ask(lab, "show hostname | json")) == {"hostname": dev.config.hostname}


def test_show_clock_parses(lab):
    [row] = ntc(lab, "show clock")
    assert row["timezone"] == "UTC" and re.fullmatch(r"\d\d:\d\d:\d\d\.\d{3}", row["time"])


def test_show_interface_parses_to_the_switch_state(lab, dev):
    rows = {r["interface"]: r for r in ntc(lab, "show interface")}
    assert sorted(rows) == PORTS
    one = rows["Ethernet1/1"]
    assert (one["link_status"], one["admin_state"], one["description"], one["mtu"]) == ("up", "up", "gpu1 mlx5_0", "9216")
    assert (one["duplex"], one["speed"], one["bandwidth"]) == ("full-duplex", "100 Gb/s", "100000000 Kbit")
    assert one["mac_address"] == dotted(wiring.mac(NX, "Ethernet1/1"))
    assert rows["Ethernet1/2"]["mtu"] == "1500" and rows["Ethernet1/2"]["description"] == ""
    assert rows["Ethernet1/3"]["link_status"] == "down (Link not connected)"
    assert rows["Ethernet1/3"]["duplex"] == "auto-duplex"


def test_show_interface_json_pretty_is_what_nxos_facts_reads(lab):
    """nxos_facts' interfaces subset sends 'show interface | json-pretty' and maps state, desc, eth_mtu, eth_speed..."""
    body = json.loads(ask(lab, "show interface | json-pretty"))
    rows = {r["interface"]: r for r in body["TABLE_interface"]["ROW_interface"]}
    assert sorted(rows) == PORTS
    assert rows["Ethernet1/1"]["state"] == "up" and rows["Ethernet1/1"]["desc"] == "gpu1 mlx5_0"
    assert rows["Ethernet1/1"]["eth_mtu"] == "9216" and rows["Ethernet1/1"]["eth_speed"] == "100 Gb/s"
    assert rows["Ethernet1/3"]["state"] == "down" and rows["Ethernet1/3"]["state_rsn_desc"] == "Link not connected"
    assert "desc" not in rows["Ethernet1/3"]


def test_show_interface_status_parses(lab):
    rows = {r["port"]: r for r in ntc(lab, "show interface status")}
    assert rows["Eth1/1"]["status"] == "connected" and rows["Eth1/1"]["name"] == "gpu1 mlx5_0"
    assert rows["Eth1/3"]["status"] == "notconnec"


def test_show_lldp_neighbors_parses_with_long_names_wrapped(lab):
    rows = {r["local_interface"]: r for r in ntc(lab, "show lldp neighbors")}
    assert rows["Eth1/1"]["neighbor_name"] == "gpu1"
    assert rows["Eth1/1"]["neighbor_interface"] == dotted(wiring.mac("gpu1", "mlx5_0"))
    assert rows["Eth1/2"]["neighbor_name"] == LONG and rows["Eth1/2"]["neighbor_interface"] == "Ethernet3/1"
    assert "\n" + LONG + "\n" in ask(lab, "show lldp neighbors")


def test_show_lldp_neighbors_json_is_what_nxos_facts_reads(lab):
    body = json.loads(ask(lab, "show lldp neighbors | json"))
    rows = {r["l_port_id"]: r for r in body["TABLE_nbor"]["ROW_nbor"]}
    assert body["neigh_count"] == "2"
    assert rows["Eth1/2"]["chassis_id"] == LONG and rows["Eth1/2"]["port_id"] == "Ethernet3/1"
    assert rows["Eth1/2"]["port_type"] == "Interface Name"
    assert rows["Eth1/1"]["port_type"] == "Mac Address" and rows["Eth1/1"]["port_id"] == dotted(wiring.mac("gpu1", "mlx5_0"))


def test_lldp_detail_chassis_ids_are_dotted(lab):
    """cisco_nxos_show_lldp_neighbors_detail reads CHASSIS_ID as xxxx.xxxx.xxxx only (every real capture prints it
    so); the old colon form parsed to an empty chassis_id."""
    rows = {r["local_interface"]: r for r in ntc(lab, "show lldp neighbors detail")}
    assert rows["Eth1/2"]["chassis_id"] == dotted(wiring.mac(LONG, "chassis"))
    assert rows["Eth1/1"]["chassis_id"] == dotted(wiring.mac("gpu1", "mlx5_0"))
    assert rows["Eth1/2"]["neighbor_name"] == LONG and rows["Eth1/2"]["neighbor_interface"] == "Ethernet3/1"


def test_the_project_reader_takes_the_dotted_chassis(lab):
    links = nxos.Driver.parse_links({c: ask(lab, c) for c in nxos.Driver.link_commands()})
    [nb] = links["Ethernet1/2"]["neighbors"]
    assert nb["chassis_id"] == dotted(wiring.mac(LONG, "chassis")) and nb["system"] == LONG and nb["port"] == "Ethernet3/1"


def test_json_of_a_command_without_a_json_form_is_refused_as_nx_os_does(lab):
    """The does-not-support capture (napalm test/nxos_ssh/mocked_data/.../show_inventory___json.txt): a caret and
    '% Invalid command at '^' marker.', which cisco.nxos' retry_json reads as 'retry as text'."""
    out = ask(lab, "show hosts | json")
    assert out.rstrip().endswith("% Invalid command at '^' marker.")
    assert ask(lab, "show version | include NXOS").rstrip().endswith("% Invalid command at '^' marker.")


# Commands a peer sends or the project reads that no ntc-templates 9.3.0 template covers; the form's source.
NO_TEMPLATE = {
    "show license host-id": ("License hostid: VDH=", "a 9.3(3) Nexus 9000v session in a public cisco.nxos test suite"),
    "show hosts": ("Default domain is", "napalm test/nxos_ssh/mocked_data/test_get_facts/*/show_hosts.txt"),
    "show privilege": ("privilege level: 15", "unverified: no published capture; cisco.nxos on_become reads '15'"),
    "show user-account admin": ("roles:network-admin", "unverified layout; cisco.nxos validate_user_role reads 'roles:'"),
    "show running-config": ("version 10.3(2) Bios:version 07.69", "Nexus 9000 Fundamentals guide 10.3(x) 'show running-config sanitized'"),
}


@pytest.mark.parametrize("command", sorted(NO_TEMPLATE))
def test_commands_no_template_covers_say_so(lab, command):
    marker, _source = NO_TEMPLATE[command]
    assert marker in ask(lab, command)
    with pytest.raises(Exception, match="No template found"):
        parse_output(platform="cisco_nxos", command=command, data=ask(lab, command))


def test_license_hostid_is_the_serial_nxos_facts_reads(lab, dev):
    out = ask(lab, "show license host-id")
    assert re.search(r"License hostid: VDH=(.+)$", out, re.M).group(1) == dev.serial


# --- 'show queuing interface <if>': the egress QOS GROUP tables of a real 93180FX2, read into the queue state -------
# No ntc-templates 9.3.0 template covers the command (genie's ShowQueuingInterface would; genie is not a dependency):
# the judge is the published capture (fixtures/nxos show_queuing_interface_e1_51_qos_group_5.txt, SOURCES.md there).
QOS_GROUP_5 = ROOT / "tests/unit/plugins/module_utils/_platforms/fixtures/nxos/show_queuing_interface_e1_51_qos_group_5.txt"


def test_show_queuing_interface_tx_rows_in_the_real_layout_read_into_the_queue_state(lab, dev):
    with pytest.raises(Exception, match="No template found"):
        parse_output(platform="cisco_nxos", command="show queuing interface Ethernet1/1", data="")
    dev.set_counters("Ethernet1/1", {"tx_packets": {"3": 1234567, "0": 12}, "tx_bytes": {"3": 9876543210, "0": 1200}})
    try:
        text = ask(lab, "show queuing interface Ethernet1/1")
        real = QOS_GROUP_5.read_text().splitlines()
        # the group table's lines as the real switch draws them: 63 wide, the same labels in the same order
        rows = [line for line in text.splitlines() if line.startswith("|") and "QOS GROUP" not in line and "Unicast" not in line]
        labels = [line.split("|")[1].strip() for line in real if line.startswith("|") and "QOS GROUP" not in line and "Unicast" not in line]
        assert {len(line) for line in text.splitlines() if line.startswith(("|", "+-"))} == {len(line) for line in real if line.startswith(("|", "+-"))} == {63}
        assert [line.split("|")[1].strip() for line in rows[:len(labels)]] == labels
        ports, errors = nxos.Driver.parse_counters({"show queuing interface Ethernet1/1": text})
        assert errors == {}
        counters = dev.counters["Ethernet1/1"]
        assert ports["Ethernet1/1"]["queue_tx_packets"] == {str(q): counters["tx_packets"][q] for q in range(8)}
        assert ports["Ethernet1/1"]["queue_tx_bytes"] == {str(q): counters["tx_bytes"][q] for q in range(8)}
    finally:
        dev.clear_counters("Ethernet1/1")
