# SPDX-License-Identifier: GPL-3.0-or-later
"""Peers judge the SONiC simulator (issue 32).

No community parser exists for community SONiC's click CLI: ntc-templates 9.3.0's index names no ``sonic``
platform. Its ``edgecore`` templates are written for Edgecore's own switch OS, and, because the index matches the
platform as a prefix, netmiko's ``edgecore_sonic`` (what this collection uses) picks them up for ``show version``
and ``show interfaces status``: they raise TextFSMError on SONiC's own published forms (sonic-utilities'
test vectors, below), not only on the simulator's. genie has SONiC parsers only for ``show version``,
``show platform inventory``, ``show interfaces transceiver eeprom`` and ``docker stats`` (docs/research/peers.md 4):
genie is not installed (about 770 MB), so ``show version`` is read here with its own lines. No vendor Ansible
collection drives the community bash/click CLI (``dellemc.enterprise_sonic`` is Enterprise SONiC's sonic-cli):
there is no peer-collection test for SONiC (docs/vendor-sonic.md "Peers").

What a peer client judges is the session: netmiko's ``edgecore_sonic`` (a plain LinuxSSH: prompt detection only)
logs in over real SSH and sends what an engineer reads; each output is parsed here with the column layout of the
sonic-utilities source that prints it (tabulate 'simple': columns cut at the ruler's dash groups), and the values
equal the simulator's state (CONFIG_DB and the lab wiring). Forms and sources: docs/vendor-sonic.md "Simulator".
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

import netmiko  # noqa: E402  # the judges: pinned test dependencies, never skipped
import ntc_templates  # noqa: E402
import textfsm  # noqa: E402
import wiring  # noqa: E402
from ntc_templates import parse as ntc_parse  # noqa: E402
from switchsim.client import SimProcess  # noqa: E402
from switchsim.server import Simulator  # noqa: E402

from ansible_collections.lossless.fabric.plugins.module_utils._platforms.sonic import _driver as sonic  # noqa: E402

HOSTVARS = {
    "leaf5": {"lossless_fabric_device": {"kind": "switch", "platform": "sonic", "ports": {
        "Ethernet0": {"speed": "400G", "peer": {"host": "spine1", "port": "Ethernet1/1"}},
        "Ethernet8": {"speed": "400G", "peer": {"host": "leaf6", "port": "Ethernet0"}},
        "Ethernet16": {"speed": "400G"}}}},
    "leaf6": {"lossless_fabric_device": {"kind": "switch", "platform": "sonic", "ports": {
        "Ethernet0": {"speed": "400G", "peer": {"host": "leaf5", "port": "Ethernet8"}}}}},
    "spine1": {"lossless_fabric_device": {"kind": "switch", "platform": "eos", "ports": {
        "Ethernet1/1": {"speed": "400G", "peer": {"host": "leaf5", "port": "Ethernet0"}}}}},
}
PORTS = ["Ethernet0", "Ethernet8", "Ethernet16"]
DESCRIBE = '{"op": "add", "path": "/PORT/Ethernet0/description", "value": "to leaf5 Ethernet8"}'

# sonic-utilities' own test vectors (branch 202505): tests/intfutil_test.py show_interface_status_Ethernet32_output,
# and doc/Command-Reference.md "show version"'s first lines.
SONIC_STATUS = """\
  Interface        Lanes    Speed    MTU    FEC    Alias             Vlan    Oper    Admin    Type    Asym PFC
-----------  -----------  -------  -----  -----  -------  ---------------  ------  -------  ------  ----------
 Ethernet32  13,14,15,16      40G   9100     rs     etp9  PortChannel1001      up       up     N/A         off
"""
SONIC_VERSION = """\
SONiC Software Version: SONiC.HEAD.32-21ea29a
Distribution: Debian 9.8
Kernel: 4.9.0-8-amd64
Build commit: 21ea29a
Build date: Fri Mar 22 01:55:48 UTC 2019
Built by: johnar@jenkins-worker-4
"""


@pytest.fixture(name="sim", scope="module")
def fixture_sim(tmp_path_factory):
    run = str(tmp_path_factory.mktemp("peers_sonic"))
    wiring.write(run, wiring.build(HOSTVARS))
    cfg = {"wiring_file": os.path.join(run, wiring.FILE), "switches": [
        {"name": "leaf5", "platform": "sonic", "port": 0, "username": "admin", "password": "s3cret-sonic", "ports": PORTS,
         "version": "202405", "hwsku": "Mellanox-SN4700-O8C48"},
        {"name": "leaf6", "platform": "sonic", "port": 0, "username": "admin", "password": "s3cret-sonic", "ports": ["Ethernet0"],
         "initial_config": [DESCRIBE]},
        {"name": "spine1", "platform": "eos", "port": 0, "username": "admin", "password": "s3cret-eos", "ports": ["Ethernet1/1"]}]}
    with SimProcess(cfg, run) as s:
        yield s


def test_ntc_templates_has_no_sonic_template_and_its_edgecore_ones_refuse_sonics_own_forms():
    index = pathlib.Path(os.path.dirname(ntc_templates.__file__), "templates", "index").read_text(encoding="utf-8").lower()
    assert "sonic" not in index
    platforms = {line.split(",")[2].strip() for line in index.splitlines() if line.count(",") >= 3}
    assert "edgecore" in platforms
    # netmiko edgecore_sonic -> the 'edgecore' rows (prefix match): written for Edgecore's OS, not SONiC's click CLI
    for command, text in (("show interfaces status", SONIC_STATUS), ("show version", SONIC_VERSION)):
        with pytest.raises(textfsm.TextFSMError):
            ntc_parse.parse_output(platform="edgecore_sonic", command=command, data=text)
    for command in ("show lldp table", "show lldp neighbors", "show interfaces description", "show platform summary",
                    "show runningconfiguration all"):
        with pytest.raises(Exception, match="No template found"):
            ntc_parse.parse_output(platform="edgecore_sonic", command=command, data="")


def table(text: str, first: str) -> list[dict[str, str]]:
    """A tabulate 'simple' table whose header starts with ``first``: cells cut at the ruler's dash groups."""
    lines = text.replace("\r", "").split("\n")
    at = next(i for i, line in enumerate(lines) if line.split()[:1] == [first] and i + 1 < len(lines)
              and re.fullmatch(r"\s*-+(?:  +-+)*\s*", lines[i + 1]))
    groups = [(m.start(), m.end()) for m in re.finditer(r"-+", lines[at + 1])]
    header = [lines[at][a:b].strip() for a, b in groups]
    rows = []
    for line in lines[at + 2:]:
        if not line.strip() or set(line.strip()) == {"-"}:
            break
        rows.append(dict(zip(header, (line[a:b].strip() for a, b in groups))))
    return rows


def colon_lines(text: str) -> dict[str, str]:
    return dict(line.split(": ", 1) for line in text.splitlines() if ": " in line)


def lldp_blocks(text: str) -> dict[str, dict[str, str]]:
    """lldpctl's plain text (sonic-utilities doc/Command-Reference.md "show lldp neighbors"): per 'Interface:' block,
    its 'Key:   value' lines."""
    found: dict[str, dict[str, str]] = {}
    current = None
    for line in text.splitlines():
        head = re.match(r"^Interface:\s+(\S+), via: LLDP, RID: \d+, Time: \d+ days?, \d\d:\d\d:\d\d$", line)
        if head:
            current = found.setdefault(head.group(1), {})
            continue
        cell = re.match(r"^    (\w+):\s+(.*)$", line)
        if current is not None and cell:
            current[cell.group(1)] = cell.group(2)
    return found


def test_netmiko_edgecore_sonic_reads_what_an_engineer_reads_equal_to_the_simulator_state(sim):
    conn = netmiko.ConnectHandler(device_type="edgecore_sonic", host="127.0.0.1", port=sim.port("leaf5"), username="admin",
                                  password="s3cret-sonic", conn_timeout=10)
    try:
        assert conn.find_prompt() == "admin@leaf5:~$"
        out = {command: conn.send_command(command) for command in (
            "show version", "show platform summary", "show interfaces status", "show interfaces description",
            "show lldp table", "show lldp neighbors", "show lldp neighbors Ethernet8", "show runningconfiguration all",
            "sonic-cli")}
    finally:
        conn.disconnect()
    db = json.loads(sim.running("leaf5"))
    meta = db["DEVICE_METADATA"]["localhost"]
    # show/main.py version() and show/platform.py summary: the release, SKU, ASIC and platform the switch runs
    version = colon_lines(out["show version"])
    assert version["SONiC Software Version"].startswith("SONiC.202405.")
    assert (version["HwSKU"], version["ASIC"], version["Platform"]) == (meta["hwsku"], "mellanox", meta["platform"])
    summary = colon_lines(out["show platform summary"])
    assert list(summary) == ["Platform", "HwSKU", "ASIC", "ASIC Count", "Serial Number", "Model Number", "Hardware Revision"]
    assert (summary["Platform"], summary["HwSKU"], summary["ASIC"], summary["ASIC Count"]) == (meta["platform"], meta["hwsku"], "mellanox", "1")
    # scripts/intfutil status and description: one row per PORT, CONFIG_DB's fields, oper from the wiring
    status = {row["Interface"]: row for row in table(out["show interfaces status"], "Interface")}
    assert list(status) == PORTS
    for port, row in status.items():
        have = db["PORT"][port]
        assert (row["Lanes"], row["MTU"], row["Alias"], row["Admin"]) == (have["lanes"], have["mtu"], have["alias"], have["admin_status"])
        assert row["Oper"] == ("down" if port == "Ethernet16" else "up") and row["Speed"] == "400G"
    description = {row["Interface"]: row for row in table(out["show interfaces description"], "Interface")}
    assert list(description) == PORTS
    assert all(row["Description"] == db["PORT"][port].get("description", "N/A") and row["Alias"] == db["PORT"][port]["alias"]
               and row["Oper"] == status[port]["Oper"] for port, row in description.items())
    # scripts/lldpshow summary: what each neighbour advertises (EOS: its interface name; SONiC: the alias, with the
    # PORT description), the count line
    lldp = {row["LocalPort"]: row for row in table(out["show lldp table"], "LocalPort")}
    assert {p: (r["RemoteDevice"], r["RemotePortID"], r["Capability"], r["RemotePortDescr"]) for p, r in lldp.items()} == {
        "Ethernet0": ("spine1", "Ethernet1/1", "BR", ""), "Ethernet8": ("leaf6", "etp1", "BR", "to leaf5 Ethernet8")}
    assert out["show lldp table"].splitlines()[-1] == "Total entries displayed:  2"
    # lldpctl's detail: chassis IDs (the lab wiring's MACs), port ID with its subtype, the port description
    detail = lldp_blocks(out["show lldp neighbors"])
    assert detail == {
        "Ethernet0": {"ChassisID": "mac " + wiring.mac("spine1", "chassis"), "SysName": "spine1", "TTL": "120",
                      "Capability": "Router, on", "PortID": "ifname Ethernet1/1"},
        "Ethernet8": {"ChassisID": "mac " + wiring.mac("leaf6", "chassis"), "SysName": "leaf6", "TTL": "120",
                      "Capability": "Router, on", "PortID": "local etp1", "PortDescr": "to leaf5 Ethernet8"}}
    assert lldp_blocks(out["show lldp neighbors Ethernet8"]) == {"Ethernet8": detail["Ethernet8"]}
    # show/main.py runningconfiguration all: CONFIG_DB as JSON plus bgpraw
    running = json.loads(out["show runningconfiguration all"])
    assert running.pop("bgpraw") == "" and running == db
    # Dell's dell_sonic driver opens Enterprise SONiC's sonic-cli, which community SONiC has not
    assert out["sonic-cli"].strip() == "-bash: sonic-cli: command not found"
    # the project's own link reader takes the same two views
    ends = sonic.Driver.parse_links({"show lldp table": out["show lldp table"], "show interfaces status": out["show interfaces status"]})
    assert ends["Ethernet8"]["neighbors"][0]["port"] == "etp1" and ends["Ethernet8"]["neighbors"][0]["port_descr"] == "to leaf5 Ethernet8"
    assert ends["Ethernet16"]["oper"] == "down" and not ends["Ethernet16"]["neighbors"]


# --- 'show queue counters' (scripts/queuestat): sonic-utilities' own expected output as the judge ------------------
# tests/queue_counter_test.py show_queue_counters (fixtures/sonic show_queue_counters.txt): the per-port block, its
# header and ruler; Counter/pkts and Counter/bytes of the unicast queues read into the simulator's state.
QUEUESTAT = ROOT / "tests/unit/plugins/module_utils/_platforms/fixtures/sonic/show_queue_counters.txt"


def test_show_queue_counters_block_as_queuestat_prints_it_reads_into_the_queue_state(tmp_path):
    sim = Simulator({"switches": [{"name": "leaf5", "platform": "sonic"}]}, str(tmp_path))
    dev = sim.devices["leaf5"]
    port = dev.ports[0]
    dev.set_counters(port, {"tx_packets": {"3": 1234567, "0": 12}, "tx_bytes": {"3": 9876543210, "0": 1200}, "queue_drops": {"3": 2}})
    text = dev.new_shell(None).handle("show queue counters")
    real = QUEUESTAT.read_text().splitlines()
    assert text.splitlines()[:2] == real[:2]  # 'For namespace :' and the std_header, right-aligned (stralign='right')
    rows = table(text, "Port")
    want = {"Port": port, "TxQ": "UC3", "Counter/pkts": "1234567", "Counter/bytes": "9876543210", "Drop/pkts": "2", "Drop/bytes": "0"}
    assert rows[0]["TxQ"] == "UC0" and rows[3] == want
    ports, errors = sonic.Driver.parse_counters({"show queue counters": text})
    assert errors == {}
    counters = dev.counters[port]
    assert ports[port]["queue_tx_packets"] == {str(q): counters["tx_packets"][q] for q in range(8)}
    assert ports[port]["queue_tx_bytes"] == {str(q): counters["tx_bytes"][q] for q in range(8)}
