# SPDX-License-Identifier: GPL-3.0-or-later
"""The Junos simulator judged by parsers others wrote from real Juniper switches (issue 32).

For each show command the project reads from Junos or a peer sends when it connects and gathers facts
(junipernetworks.junos 11.0.0 terminal/cliconf/junos_command, netmiko juniper_junos; docs/research/peers.md),
the simulator's answer is parsed with ntc-templates (platform juniper_junos) and the parsed values must equal
the simulator's own state. A command no ntc template covers says so below, with the vendor source of its form.
genie's Junos parsers (ShowVersion, ShowInterfacesTerse, ShowChassisHardware, ShowSystemUptime) would judge the
same outputs; genie is ~770 MB and is left out of the test dependencies (docs/research/peers.md, section genie).

Every test here fails against the simulator before issue 32: it refused 'set cli timestamp disable' (the first
command of junipernetworks.junos' terminal plugin), bare 'show interfaces', 'show interfaces terse',
'show chassis hardware' and 'show system uptime'; it printed text for 'show version | display xml'; its LLDP sent
the interface name as port description whatever the configuration said, its brief LLDP XML dropped the port ID,
and 'show lldp neighbors interface X' printed the brief table instead of the detail view.
"""
from __future__ import annotations

import json
import os
import pathlib
import re
import sys
import time
import xml.etree.ElementTree as ET

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests" / "lab"))

import textfsm  # noqa: E402  # the judges: pinned test dependencies, never skipped
import wiring  # noqa: E402
from ntc_templates import parse as ntc_parse  # noqa: E402
from switchsim.server import Simulator  # noqa: E402

from ansible_collections.lossless.fabric.plugins.module_utils._platforms.junos import _driver as junos  # noqa: E402

JN = "qfx7"
PEER = "qfx8"        # a second Junos switch, with a description configured on its end of the cable
FAR = "spine9"       # a switch outside the simulator: sends its interface name as port ID, no description
HOSTVARS = {
    JN: {"lossless_fabric_device": {"kind": "switch", "platform": "junos", "ports": {
        "et-0/0/1": {"speed": "100G", "peer": {"host": "gpu1", "nic": "mlx5_0"}},
        "et-0/0/2": {"speed": "100G", "peer": {"host": PEER, "port": "et-0/0/5"}},
        "et-0/0/3": {"speed": "100G", "peer": {"host": FAR, "port": "Ethernet7/1"}}}}},
    PEER: {"lossless_fabric_device": {"kind": "switch", "platform": "junos", "ports": {
        "et-0/0/5": {"speed": "100G", "peer": {"host": JN, "port": "et-0/0/2"}}}}},
    FAR: {"lossless_fabric_device": {"kind": "switch", "platform": "eos", "ports": {
        "Ethernet7/1": {"speed": "100G", "peer": {"host": JN, "port": "et-0/0/3"}}}}},
    "gpu1": {"lossless_fabric_device": {"kind": "host", "nics": [
        {"name": "mlx5_0", "netdev": "eth2", "speed": "100G", "peer": {"host": JN, "port": "et-0/0/1"}}]}},
}
PORTS = ["et-0/0/1", "et-0/0/2", "et-0/0/3", "et-0/0/4"]
CONFIG = ['set interfaces et-0/0/1 description "gpu1 mlx5_0"', "set interfaces et-0/0/1 mtu 9216",
          "set interfaces et-0/0/2 unit 0 family inet address 10.0.0.1/30", "set interfaces et-0/0/4 disable"]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    run = str(tmp_path_factory.mktemp("peers-junos"))
    wiring.write(run, wiring.build(HOSTVARS))
    cfg = {"wiring_file": os.path.join(run, wiring.FILE), "switches": [
        {"name": JN, "platform": "junos", "ports": PORTS, "initial_config": CONFIG},
        {"name": PEER, "platform": "junos", "ports": ["et-0/0/5"], "initial_config": ["set interfaces et-0/0/5 description to-qfx7"]}]}
    sim = Simulator(cfg, run)
    sim.run_dir = run
    return sim


@pytest.fixture
def dev(lab):
    return lab.devices[JN]


def ask(lab, command: str, device: str = JN) -> str:
    return lab.devices[device].new_shell(None).handle(command)


def ntc(lab, command: str) -> list[dict]:
    return ntc_parse.parse_output(platform="juniper_junos", command=command, data=ask(lab, command))


def neighbours(dev) -> dict:
    """The simulator's state: {local port: what its neighbour advertises}."""
    return {port: seen["peer"] for port, seen in dev.lldp_ports().items() if seen.get("peer")}


# --- what the peers send when they connect --------------------------------------------------------------


@pytest.mark.parametrize("command, answer", [
    # junipernetworks.junos 11.0.0 plugins/terminal/junos.py on_open_shell, in its order
    ("set cli timestamp disable", "CLI timestamp disabled"),
    ("set cli screen-length 0", "Screen length set to 0"),
    ("set cli screen-width 1024", "Screen width set to 1024"),
    # netmiko 4.8.0 JuniperSSH session_preparation
    ("set cli screen-width 511", "Screen width set to 511"),
    ("set cli complete-on-space off", "Disabling complete-on-space"),
])
def test_terminal_setup_of_each_peer_is_answered(lab, command, answer):
    out = ask(lab, command)
    assert out.strip() == answer
    # junipernetworks.junos' terminal_stderr_re: any of these fails the connection ("unable to set terminal parameters")
    assert "unknown command" not in out and "syntax error" not in out and "\nerror:" not in "\n" + out


def test_cli_timestamp_prints_the_time_before_each_output_until_disabled(lab):
    shell = lab.devices[JN].new_shell(None)
    assert shell.handle("set cli timestamp").splitlines()[1] == "CLI timestamp set to: %b %d %T"
    stamped = shell.handle("show version").splitlines()
    assert time.strptime(stamped[0], "%b %d %H:%M:%S") and stamped[1] == "fpc0:"
    shell.handle("set cli timestamp disable")
    assert shell.handle("show version").splitlines()[0] == "fpc0:"


# --- ntc-templates juniper_junos ---------------------------------------------------------------------------


def test_show_version_parses_with_every_field(lab, dev):
    [row] = ntc(lab, "show version")
    assert (row["hostname"], row["model"], row["junos_version"]) == (JN, dev.model, dev.version)
    assert row["base_os_boot"] == row["kernel_software_suite"] == row["routing_software_suite"] == dev.version


def test_show_lldp_neighbors_parses_to_the_wiring(lab, dev):
    rows = {row["local_interface"]: row for row in ntc(lab, "show lldp neighbors")}
    state = neighbours(dev)
    assert set(rows) == set(state) == {"et-0/0/1", "et-0/0/2", "et-0/0/3"}
    for port, peer in state.items():
        # Port info: the port description when the neighbour sends one, else its port ID (Juniper's page)
        want = {"parent_interface": "-", "chassis_id": peer["chassis"], "neighbor_interface": peer["descr"] or peer["port_id"],
                "neighbor_name": peer["system"]}
        assert {k: rows[port][k] for k in want} == want
    # the Junos neighbour sends its configured description; the switch outside the lab its interface name
    assert rows["et-0/0/2"]["neighbor_interface"] == "to-qfx7" and rows["et-0/0/3"]["neighbor_interface"] == "Ethernet7/1"


def test_show_interfaces_parses_physical_and_logical_interfaces(lab, dev):
    rows = []
    for port in PORTS[:3]:
        rows += ntc(lab, "show interfaces %s" % port)
    physical = {row["interface"]: row for row in rows if "." not in row["interface"]}
    assert list(physical) == PORTS[:3]
    assert physical["et-0/0/1"]["description"] == "gpu1 mlx5_0" and physical["et-0/0/1"]["mtu"] == "9216"
    assert physical["et-0/0/1"]["link_status"] == "Up" and physical["et-0/0/1"]["admin_state"] == "Enabled"
    assert physical["et-0/0/2"]["description"] == "" and physical["et-0/0/2"]["mtu"] == "1514"
    [unit] = [row for row in rows if row["interface"] == "et-0/0/2.0"]
    assert (unit["local"], unit["destination"], unit["mtu"]) == ("10.0.0.1", "10.0.0.0/30", "1500")


def test_a_disabled_port_prints_administratively_down_which_the_ntc_template_refuses(lab, dev):
    """Junos prints 'Physical interface: ge-1/2/1, Administratively down, Physical link is Down' for a disabled
    port (public captures of real MX output). ntc-templates' ADMIN_STATE is one word (\\S+), so its template
    refuses the whole 'show interfaces' of a switch with a disabled port, as it would on a real one; the project's
    reader takes the form."""
    out = ask(lab, "show interfaces")
    assert "Physical interface: et-0/0/4, Administratively down, Physical link is Down" in out
    with pytest.raises(textfsm.TextFSMError):
        ntc_parse.parse_output(platform="juniper_junos", command="show interfaces", data=out)
    # every enabled port's block of the bare command is its 'show interfaces X' block
    for port in PORTS[:3]:
        assert ask(lab, "show interfaces %s" % port).rstrip("\n") in out
    assert junos.Driver.parse_links({"show interfaces et-0/0/4": ask(lab, "show interfaces et-0/0/4")})["et-0/0/4"]["oper"] == "down"


def test_show_chassis_hardware_parses_with_the_chassis_serial(lab, dev):
    rows = ntc(lab, "show chassis hardware")
    chassis = [row for row in rows if row["chassis_serial_number"]]
    assert [(row["chassis_serial_number"], row["chassis_description"]) for row in chassis] == [(junos_serial(lab), dev.model.upper())]
    assert [row["re_description"] for row in rows if row["re_description"]] == ["RE-" + dev.model.upper()]
    assert len([row for row in rows if row["ps_number"]]) == 2 and len([row for row in rows if row["fan_number"]]) == 5


def junos_serial(lab) -> str:
    out = ask(lab, "show chassis hardware | display xml")
    return ET.fromstring(out).find("{*}chassis-inventory/{*}chassis/{*}serial-number").text


def test_show_system_uptime_parses_to_the_boot_and_last_commit(lab, dev):
    [row] = ntc(lab, "show system uptime")
    booted = time.gmtime(dev.booted)
    assert (row["boot_year"], row["boot_month"], row["boot_day"]) == (str(booted.tm_year), "%02d" % booted.tm_mon, "%02d" % booted.tm_mday)
    assert row["boot_time"] == time.strftime("%H:%M:%S", booted) and row["timezone"] == "UTC"
    assert row["time_source"] == "LOCAL CLOCK" and row["users"] == "1" and row["last_config_user"] == dev.last_configured[1]
    assert row["load_average_1min"] == "0.00"


def test_show_interfaces_terse_has_no_template_and_prints_junipers_columns(lab, dev):
    """No ntc template for 'show interfaces terse': the index routes it by prefix to juniper_junos_show_interfaces,
    which refuses terse text (as it would from a real switch). The form is Juniper's ('Example: Customizing Output
    of the show interfaces terse Command Using an Op Script', junos12.3: 'By default, the layout ... looks like
    this'), checked here column by column."""
    out = ask(lab, "show interfaces terse")
    with pytest.raises(textfsm.TextFSMError):
        ntc_parse.parse_output(platform="juniper_junos", command="show interfaces terse", data=out)
    lines = out.splitlines()
    assert lines[0] == "Interface               Admin Link Proto    Local                 Remote"
    rows = {line[:24].strip(): (line[24:30].strip(), line[30:35].strip(), line[35:44].strip(), line[44:66].strip()) for line in lines[1:]}
    assert rows == {"et-0/0/1": ("up", "up", "", ""), "et-0/0/2": ("up", "up", "", ""), "et-0/0/2.0": ("up", "up", "inet", "10.0.0.1/30"),
                    "et-0/0/3": ("up", "up", "", ""), "et-0/0/4": ("down", "down", "", "")}


def test_show_lldp_neighbors_interface_detail_has_no_template(lab, dev):
    """The detail view ('show lldp neighbors interface X': Juniper's show lldp neighbors page, sample
    'interface ge-0/0/2'; a captured MX 'interface xe-0/0/1') has no ntc template: the brief template takes it
    by prefix and refuses it. Checked field by field against the state instead."""
    out = ask(lab, "show lldp neighbors interface et-0/0/2")
    with pytest.raises(textfsm.TextFSMError):
        ntc_parse.parse_output(platform="juniper_junos", command="show lldp neighbors interface et-0/0/2", data=out)
    fields = dict(line.split(" : ", 1) for line in out.splitlines() if " : " in line)
    fields = {k.strip(): v.strip() for k, v in fields.items()}
    peer = neighbours(dev)["et-0/0/2"]
    assert fields["Local Interface"] == "et-0/0/2" and fields["Local Port ID"] == "516"
    assert (fields["Chassis ID"], fields["Port type"], fields["Port ID"], fields["Port description"], fields["System name"]) == (
        peer["chassis"], "Locally assigned", peer["port_id"], "to-qfx7", PEER)


# --- LLDP as a real Junos advertises it ----------------------------------------------------------------------


def test_a_junos_neighbour_sends_its_ifindex_and_its_configured_description(lab):
    peer = neighbours(lab.devices[JN])["et-0/0/2"]
    # qfx8's et-0/0/5 is its first port: SNMP ifIndex 515, the number its own 'show interfaces' prints
    assert (peer["port_id"], peer["subtype"], peer["descr"]) == ("515", "local", "to-qfx7")
    assert "SNMP ifIndex: 515" in ask(lab, "show interfaces et-0/0/5", PEER)
    # a port without a description: the interface name stands in
    assert lab.devices[JN].lldp_advertised("et-0/0/3") == {"port_id": "517", "subtype": "local", "descr": "et-0/0/3"}
    assert lab.devices[JN].lldp_advertised("et-0/0/1")["descr"] == "gpu1 mlx5_0"


def test_brief_xml_keeps_the_port_of_every_neighbour(lab, dev):
    root = ET.fromstring(ask(lab, "show lldp neighbors | display xml"))
    info = root.find("lldp-neighbors-information")
    assert info.get("{http://xml.juniper.net/junos/%s/junos}style" % dev.version) == "brief"
    entries = {e.findtext("lldp-local-interface"): e for e in info.findall("lldp-neighbor-information")}
    state = neighbours(dev)
    for port, peer in state.items():
        assert entries[port].findtext("lldp-remote-port-id") == peer["port_id"]
        assert entries[port].findtext("lldp-remote-chassis-id") == peer["chassis"]
    far = entries["et-0/0/3"]
    assert far.findtext("lldp-remote-port-id-subtype") == "Interface name" and far.find("lldp-remote-port-description") is None
    assert root.findtext("cli/banner") == "{master:0}"


@pytest.mark.parametrize("display", ["xml", "json"])
def test_the_project_reader_takes_the_ifindex_port_and_the_description(lab, display):
    """What reaches the link records (_base.neighbor): port = the ifIndex, port_id_subtype 'local', port_descr = the
    far end's configured description - the field the cabling check can prove a one-end link from."""
    commands = [c.replace("| display xml", "| display %s" % display) for c in junos.Driver.link_commands(["et-0/0/2", "et-0/0/3"])]
    ends = junos.Driver.parse_links({c: ask(lab, c) for c in commands})
    assert ends["et-0/0/2"]["neighbors"] == [{"system": PEER, "port": "515", "port_id_subtype": "local", "port_descr": "to-qfx7",
                                              "chassis_id": wiring.mac(PEER, "chassis")}]
    assert ends["et-0/0/3"]["neighbors"][0]["port"] == "Ethernet7/1" and ends["et-0/0/3"]["neighbors"][0]["port_id_subtype"] == "ifname"
    assert ends["et-0/0/2"]["oper"] == "up" and ends["et-0/0/2"]["speed"] == "100G"


# --- '| display xml' and '| display json' of the facts commands ---------------------------------------------


def test_show_version_display_xml_and_json_carry_the_same_facts(lab, dev):
    root = ET.fromstring(ask(lab, "show version | display xml"))
    assert root.tag == "rpc-reply"
    info = root.find("multi-routing-engine-results/multi-routing-engine-item/software-information")
    assert root.findtext("multi-routing-engine-results/multi-routing-engine-item/re-name") == "fpc0"
    assert (info.findtext("host-name"), info.findtext("product-model"), info.findtext("junos-version")) == (JN, dev.model, dev.version)
    doc = json.loads(ask(lab, "show version | display json"))
    item = doc["multi-routing-engine-results"][0]["multi-routing-engine-item"][0]
    assert item["software-information"][0]["host-name"][0]["data"] == JN
    assert item["software-information"][0]["junos-version"][0]["data"] == dev.version


def test_show_interfaces_terse_display_xml(lab):
    info = ET.fromstring(ask(lab, "show interfaces terse | display xml")).find("{*}interface-information")
    found = {p.findtext("{*}name").strip(): (p.findtext("{*}admin-status").strip(), p.findtext("{*}oper-status").strip())
             for p in info.findall("{*}physical-interface")}
    assert found == {"et-0/0/1": ("up", "up"), "et-0/0/2": ("up", "up"), "et-0/0/3": ("up", "up"), "et-0/0/4": ("down", "down")}
    unit = info.find("{*}physical-interface/{*}logical-interface")
    assert unit.findtext("{*}name").strip() == "et-0/0/2.0"
    assert unit.findtext("{*}address-family/{*}interface-address/{*}ifa-local").strip() == "10.0.0.1/30"


def test_system_uptime_and_chassis_hardware_display_json(lab, dev):
    up = json.loads(ask(lab, "show system uptime | display json"))["system-uptime-information"][0]
    assert up["system-booted-time"][0]["date-time"][0]["attributes"]["junos:seconds"] == str(int(dev.booted))
    inventory = json.loads(ask(lab, "show chassis hardware | display json"))["chassis-inventory"][0]["chassis"][0]
    assert inventory["description"][0]["data"] == dev.model.upper() and inventory["serial-number"][0]["data"] == junos_serial(lab)


@pytest.mark.parametrize("command", ["show interfaces queue et-0/0/1 | display xml", "show system commit | display json",
                                     "show configuration | display xml"])
def test_a_display_format_the_lab_does_not_model_is_refused_never_answered_in_text(lab, command):
    out = ask(lab, command)
    assert out.startswith("error: the lab simulator does not model '| display ")


# --- 'show interfaces queue <if>': the real columns, read into the simulator's per-queue state -----------------------
# The judge would be genieparser's ShowInterfacesQueue (genie: ~770 MB, not a dependency here); its golden output
# (fixtures/junos/genie_show_interfaces_queue.txt, an MX) fixes the columns: ':' at 25, each count right-aligned to
# 48 and its rate to 70 (the Transmitted 'Packets' rate to 71).
GENIE_QUEUE = ROOT / "tests/unit/plugins/module_utils/_platforms/fixtures/junos/genie_show_interfaces_queue.txt"


def value_columns(text: str) -> set[tuple[str, str, int, int, int]]:
    """(section, label, colon, count end, rate end) of every 'label : count rate unit' line."""
    found = set()
    section = ""
    for line in text.splitlines():
        if line.strip() in ("Queued:", "Transmitted:"):
            section = line.strip()
        row = re.fullmatch(r"(\s+)(\S[^:]*?)\s*:(\s+\d+)(\s+\d+) (?:pps|bps)", line)
        if row:
            colon = line.index(":")
            found.add((section, row.group(2), colon, colon + 1 + len(row.group(3)), colon + 1 + len(row.group(3)) + len(row.group(4))))
    return found


def test_show_interfaces_queue_in_the_real_columns_reads_into_the_queue_state(lab, dev):
    dev.set_counters("et-0/0/1", {"tx_packets": {"3": 1234567, "0": 12}, "tx_bytes": {"3": 9876543210, "0": 1200}, "queue_drops": {"3": 2}})
    try:
        text = ask(lab, "show interfaces queue et-0/0/1")
        real = value_columns(GENIE_QUEUE.read_text())
        ours = value_columns(text)
        common = {c[:2] for c in ours} & {c[:2] for c in real}  # (section, label) both print
        assert {("Queued:", "Packets"), ("Transmitted:", "Packets"), ("Transmitted:", "Bytes"), ("Transmitted:", "Tail-dropped packets")} <= common
        assert {c for c in ours if c[:2] in common} == {c for c in real if c[:2] in common}
        ports, errors = junos.Driver.parse_counters({"show interfaces queue et-0/0/1": text})
        assert errors == {}
        counters = dev.counters["et-0/0/1"]
        shown = ports["et-0/0/1"]["queue_tx_packets"]
        assert shown and shown == {q: counters["tx_packets"][int(q)] for q in shown}
        assert ports["et-0/0/1"]["queue_tx_bytes"] == {q: counters["tx_bytes"][int(q)] for q in shown}
        assert shown["3"] == 1234567
    finally:
        dev.clear_counters("et-0/0/1")
