# SPDX-License-Identifier: GPL-3.0-or-later
"""Arista EOS simulator driven by netmiko (arista_eos) over real SSH."""
from __future__ import annotations

import json
import pathlib
import sys
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests" / "lab"))

from switchsim.client import SimProcess  # noqa: E402

netmiko = pytest.importorskip("netmiko")

SCALE = 0.002  # 5 minutes of device time = 0.6 s

LINES = [  # AVD eos templates' forms, for the Strata DCS-7050CX3-32S of the 'sim' fixture: uc-tx-queue
    "qos map dscp 26 to traffic-class 3",
    "qos map dscp 48 to traffic-class 6",
    "priority-flow-control pause watchdog default timeout 0.05",
    "interface Ethernet1",
    "mtu 9214",
    "qos trust dscp",
    "priority-flow-control on",
    "priority-flow-control priority 3 no-drop",
    "priority-flow-control pause watchdog",
    "uc-tx-queue 3",
    "random-detect ecn minimum-threshold 150000 bytes maximum-threshold 1500000 bytes max-mark-probability 100",
    "random-detect ecn count",
    "bandwidth percent 50",
    "uc-tx-queue 6",
    "priority strict",
]
# What the driver rendered before issue 13: 'tx-queue' on every model, thresholds in kbytes.
OLD_QUEUE_LINES = ["interface Ethernet1", "tx-queue 3", "random-detect ecn count"]


@pytest.fixture
def sim(tmp_path):
    """A DCS-7050CX3-32S (Trident3: Broadcom Strata) on 4.32.2F."""
    cfg = {"time_scale": SCALE, "switches": [
        {"name": "leaf1", "platform": "eos", "port": 0, "username": "admin", "password": "s3cret-eos",
         "model": "DCS-7050CX3-32S"}]}
    with SimProcess(cfg, str(tmp_path)) as s:
        yield s


@pytest.fixture
def jericho(tmp_path):
    """A DCS-7280CR3-32P4 (Jericho2, the simulator's default model) on a release that names the
    timed session at the top level."""
    cfg = {"time_scale": SCALE, "switches": [
        {"name": "leaf1", "platform": "eos", "port": 0, "username": "admin", "password": "s3cret-eos",
         "version": "4.33.1F"}]}
    with SimProcess(cfg, str(tmp_path)) as s:
        yield s


def connect(sim, **kw):
    params = dict(device_type="arista_eos", host="127.0.0.1", port=sim.port("leaf1"),
                  username="admin", password="s3cret-eos", conn_timeout=10)
    params.update(kw)
    conn = netmiko.ConnectHandler(**params)
    conn.enable()
    return conn


def stage(conn, name="lossless"):
    out = conn.send_config_set(LINES, config_mode_command=f"configure session {name}")
    assert "% " not in out, out
    assert f"(config-s-{name[:6]}-if-Et1-uc-txq-3)#" in out  # EOS truncates the session name
    diff = conn.send_command(f"show session-config named {name} diffs")
    assert "--- system:/running-config" in diff
    assert f"+++ session:/{name}-session-config" in diff
    assert "+   priority-flow-control priority 3 no-drop" in diff
    assert "+qos map dscp 26 to traffic-class 3" in diff
    return diff


def commit_timer(conn, name="lossless", hms="00:05:00"):
    conn.send_command(f"configure session {name}", expect_string=r"\)#")
    out = conn.send_command(f"commit timer {hms}", expect_string=r"#")
    assert "%" not in out
    assert conn.find_prompt() == "leaf1#"


def test_session_commit_timer_confirm_keeps_config(sim):
    before = sim.running("leaf1")
    conn = connect(sim)
    try:
        stage(conn)
        assert sim.running("leaf1") == before          # staged only
        commit_timer(conn)
        pend = sim.pending("leaf1")
        assert pend["pending_commit"] and pend["session"] == "lossless"
        sessions = json.loads(conn.send_command("show configuration sessions detail | json"))
        assert sessions["sessions"]["lossless"]["state"] == "pendingCommitTimer"
        out = conn.send_command("configure session lossless commit")
        assert "%" not in out
        assert not sim.pending("leaf1")["pending_commit"]
        time.sleep(300 * SCALE + 0.5)
        run = conn.send_command("show running-config interfaces Ethernet1")
        assert "priority-flow-control priority 3 no-drop" in run
        assert "      random-detect ecn count" in run
        sec = conn.send_command("show running-config section qos map")
        assert "qos map dscp 26 to traffic-class 3" in sec
    finally:
        conn.disconnect()


def test_commit_timer_expiry_rolls_back(sim):
    before = sim.running("leaf1")
    conn = connect(sim)
    try:
        stage(conn, "roce-change")
        commit_timer(conn, "roce-change", "00:05:00")
        assert "priority-flow-control on" in sim.running("leaf1")
        time.sleep(300 * SCALE + 0.6)
        assert sim.running("leaf1") == before
        assert not sim.pending("leaf1")["pending_commit"]
        out = conn.send_command("configure session roce-change commit")
        assert out.startswith("%")                     # nothing left to confirm
    finally:
        conn.disconnect()


def test_abort_from_exec_rolls_back_pending_timer(sim):
    before = sim.running("leaf1")
    conn = connect(sim)
    try:
        stage(conn, "s2")
        commit_timer(conn, "s2", "01:00:00")
        assert sim.running("leaf1") != before
        conn.send_command("configure session s2 abort")
        assert sim.running("leaf1") == before
    finally:
        conn.disconnect()


def test_invalid_input_uses_eos_error_text(sim):
    conn = connect(sim)
    try:
        out = conn.send_config_set(["interface Ethernet1", "mtu 99999", "priority-flow-control priority",
                                    "priority-flow-control pause watchdog action errdisable",
                                    "random-detect ecn count"],
                                   config_mode_command="configure session bad")
        assert "% Invalid input (at token 1: '99999')" in out
        assert "% Incomplete command (at token 1: 'priority')" in out
        assert "% Invalid input (at token 4: 'errdisable')" in out
        # tx-queue commands are not valid directly under the interface
        assert "% Invalid input (at token 0: 'random-detect')" in out
        conn.send_command("configure session bad abort")
        conn.exit_enable_mode()
        out = conn.send_command("configure terminal", expect_string=r">")
        assert "% Invalid input (privileged mode required)" in out
    finally:
        conn.disconnect()


def test_counters_settable_and_shown(sim):
    sim.set_counters("leaf1", "Ethernet1", {"pfc_rx": {"3": 1204}, "pfc_tx": {"3": 57},
                                            "ecn_marked": {"3": 81234}, "queue_drops": {"3": 2},
                                            "in_discards": 5})
    conn = connect(sim)
    try:
        pfc = json.loads(conn.send_command("show priority-flow-control counters | json"))
        assert pfc["interfaceCounters"]["Ethernet1"] == {"rxFrames": 1204, "txFrames": 57}
        ecn = json.loads(conn.send_command("show qos interfaces ecn counters queue | json"))
        assert ecn["intfQueueCounters"]["Ethernet1"]["queueCounters"]["3"] == "-"  # not counting yet
        conn.send_config_set(["interface Ethernet1", "uc-tx-queue 3", "random-detect ecn count"],
                             config_mode_command="configure session cnt")
        conn.send_command("configure session cnt commit")
        ecn = json.loads(conn.send_command("show qos interfaces Ethernet1 ecn counters queue | json"))
        assert ecn["intfQueueCounters"]["Ethernet1"]["queueCounters"]["3"] == "81234"
        q = json.loads(conn.send_command("show interfaces Ethernet1 counters queue detail | json"))
        tc3 = q["egressQueueCounters"]["interfaces"]["Ethernet1"]["ucastQueues"]["trafficClasses"]["TC3"]
        assert tc3["dropPrecedences"]["DP0"]["droppedPackets"] == 2
        d = json.loads(conn.send_command("show interfaces counters discards | json"))
        assert d["interfaces"]["Ethernet1"]["inDiscards"] == 5 and d["inDiscardsTotal"] == 5
        sim.set_counters("leaf1", "Ethernet1", {"watchdog_storms": {"3": 1}})
        wd = json.loads(conn.send_command("show priority-flow-control counters watchdog | json"))
        assert wd["interfaces"]["Ethernet1"]["txQueues"]["3"]["stuckCount"] == 1
    finally:
        conn.disconnect()


def test_strata_model_rejects_the_old_tx_queue_block(sim):
    """The old template's 'tx-queue 3' fails on a Strata model (it has uc-tx-queue)."""
    conn = connect(sim)
    try:
        out = conn.send_config_set(OLD_QUEUE_LINES, config_mode_command="configure session old")
        assert "% Invalid input (at token 0: 'tx-queue')" in out
        diff = conn.send_command("show session-config named old diffs")
        assert "tx-queue" not in diff
        conn.send_command("configure session old abort")
    finally:
        conn.disconnect()


def test_jericho_model_takes_tx_queue_and_its_own_units(jericho):
    conn = connect(jericho)
    try:
        out = conn.send_config_set(["interface Ethernet1", "uc-tx-queue 3"], config_mode_command="configure session j1")
        assert "% Invalid input (at token 0: 'uc-tx-queue')" in out
        out = conn.send_config_set(
            ["interface Ethernet1", "tx-queue 3",
             "random-detect ecn minimum-threshold 320 microseconds maximum-threshold 480 microseconds max-mark-probability 100",
             "random-detect ecn minimum-threshold 320 segments maximum-threshold 320 segments"],
            config_mode_command="configure session j1")
        assert "(config-s-j1-if-Et1-txq-3)#" in out
        assert "% Invalid input (at token 4: 'segments')" in out  # avd#4900: Jericho offers no segments unit
        assert out.count("% ") == 1
        diff = conn.send_command("show session-config named j1 diffs")
        assert "+      random-detect ecn minimum-threshold 320 microseconds" in diff
        conn.send_command("configure session j1 abort")
    finally:
        conn.disconnect()


def test_threshold_range_as_avd_documents(sim):
    conn = connect(sim)
    try:
        out = conn.send_config_set(
            ["interface Ethernet1", "uc-tx-queue 3",
             "random-detect ecn minimum-threshold 1 bytes maximum-threshold 256000000 bytes",
             "random-detect ecn minimum-threshold 1 bytes maximum-threshold 256000001 bytes",
             "random-detect ecn minimum-threshold 0 bytes maximum-threshold 10 bytes",
             "random-detect ecn minimum-threshold 10 bytes maximum-threshold 10 bytes max-mark-probability 101"],
            config_mode_command="configure session rng")
        assert "% Invalid input (at token 6: '256000001')" in out
        assert "% Invalid input (at token 3: '0')" in out
        assert "% Invalid input (at token 9: '101')" in out
        assert out.count("% ") == 3
        conn.send_command("configure session rng abort")
    finally:
        conn.disconnect()


def test_uncommitted_session_survives_a_disconnect(sim):
    """Arista EOS manual, Configure Session: an uncommitted session is discarded only by abort,
    a reboot or its 24 h timeout, not when the terminal goes."""
    before = sim.running("leaf1")
    conn = connect(sim)
    stage(conn, "left-open")
    conn.disconnect()
    conn = connect(sim)
    try:
        sessions = json.loads(conn.send_command("show configuration sessions detail | json"))["sessions"]
        assert sessions["left-open"]["state"] == "pending"
        assert sim.running("leaf1") == before
        diff = conn.send_command("show session-config named left-open diffs")
        assert "+   priority-flow-control priority 3 no-drop" in diff  # the staged lines are still there
        out = conn.send_command("configure session left-open commit")
        assert "%" not in out and "priority-flow-control priority 3 no-drop" in sim.running("leaf1")
    finally:
        conn.disconnect()


def test_session_json_forms_by_release(sim, jericho):
    """napalm eos.py: up to 4.32 'commitBy' per session; later the timed session at the top level."""
    for s, block in ((sim, "uc-tx-queue"), (jericho, "tx-queue")):
        conn = connect(s)
        try:
            conn.send_config_set(["interface Ethernet1", block + " 3", "random-detect ecn count"], config_mode_command="configure session t1")
            commit_timer(conn, "t1", "01:00:00")
            doc = json.loads(conn.send_command("show configuration sessions detail | json"))
            uptime = json.loads(conn.send_command("show version | json"))["uptime"]
            if s is sim:
                assert doc["sessions"]["t1"]["state"] == "pendingCommitTimer" and "commitTimerSessionName" not in doc
                assert 3500 < doc["sessions"]["t1"]["commitBy"] - uptime <= 3600
            else:
                assert doc["commitTimerSessionName"] == "t1"
                assert 3500 < doc["commitTimerExpireTime"] - uptime <= 3600
        finally:
            conn.disconnect()


def test_qos_profile_mode_and_service_profile(jericho):
    """AVD qos-profiles.j2 forms; the prompt as avd#4900 prints it (here inside a session)."""
    conn = connect(jericho)
    try:
        out = conn.send_config_set(
            ["qos profile RDMA-QOS-PROFILE", "priority-flow-control on", "priority-flow-control priority 3 no-drop",
             "tx-queue 3", "no priority", "bandwidth percent 100",
             "random-detect ecn minimum-threshold 320 microseconds maximum-threshold 480 microseconds max-mark-probability 100",
             "random-detect ecn count", "interface Ethernet1", "service-profile RDMA-QOS-PROFILE"],
            config_mode_command="configure session qp")
        assert "% " not in out, out
        assert "(config-s-qp-qos-profile-RDMA-QOS-PROFILE-txq-3)#" in out
        conn.send_command("configure session qp commit")
        run = jericho.running("leaf1")
        assert "qos profile RDMA-QOS-PROFILE\n   priority-flow-control on\n" in run
        assert ("   tx-queue 3\n      no priority\n      bandwidth percent 100\n      random-detect ecn minimum-threshold 320 microseconds "
                "maximum-threshold 480 microseconds max-mark-probability 100\n      random-detect ecn count\n") in run  # avd#4900's order
        assert "interface Ethernet1\n   service-profile RDMA-QOS-PROFILE" in run
        out = conn.send_config_set(["qos profile RDMA-QOS-PROFILE", "uc-tx-queue 3"], config_mode_command="configure session qp2")
        assert "% Invalid input (at token 0: 'uc-tx-queue')" in out  # Jericho: tx-queue only, in a profile too
        out = conn.send_config_set(["no qos profile RDMA-QOS-PROFILE"], config_mode_command="configure session qp2")
        assert "% " not in out
        assert "qos profile" not in conn.send_command("show session-config named qp2")
        conn.send_command("configure session qp2 abort")
    finally:
        conn.disconnect()


@pytest.mark.parametrize("family", ["sim", "jericho"])
def test_counter_text_tables_are_the_sourced_forms(family, request):
    """Without '| json' the simulator prints the text forms docs/vendor-eos.md sources; the
    driver's text parser reads them (and refuses the layouts nobody has published)."""
    from ansible_collections.lossless.fabric.plugins.module_utils._platforms.eos import _readers as eos_readers

    sim = request.getfixturevalue(family)
    block = "uc-tx-queue" if family == "sim" else "tx-queue"
    sim.set_counters("leaf1", "Ethernet1", {"pfc_rx": {"3": 1204}, "ecn_marked": {"3": 81234}, "queue_drops": {"3": 2}, "in_discards": 5})
    conn = connect(sim)
    try:
        conn.send_config_set(["interface Ethernet1", f"{block} 3", "random-detect ecn count"], config_mode_command="configure session cnt")
        conn.send_command("configure session cnt commit")
        queue = eos_readers.parse_counter_text("show interfaces counters queue detail", conn.send_command("show interfaces counters queue detail"))
        assert queue["Ethernet1"]["queue_drops"]["3"] == 2
        ecn = eos_readers.parse_counter_text("show qos interfaces ecn counters queue", conn.send_command("show qos interfaces ecn counters queue"))
        assert ecn["Ethernet1"]["ecn_marked"] == {"3": 81234}
        pfc = eos_readers.parse_counter_text("show priority-flow-control counters detail", conn.send_command("show priority-flow-control counters"))
        assert pfc["Ethernet1"]["pfc_rx_frames_total"] == 1204
        discards = eos_readers.parse_counter_text("show interfaces counters discards", conn.send_command("show interfaces counters discards"))
        assert discards["Ethernet1"]["in_discards"] == 5
        with pytest.raises(ValueError, match="^eos: "):
            eos_readers.parse_counter_text("show priority-flow-control counters detail", conn.send_command("show priority-flow-control counters detail"))
    finally:
        conn.disconnect()


# -- what the peers send (issue 32): in-process, each rule refused by the simulator before it ------------------
from switchsim.server import Simulator  # noqa: E402


def shell(tmp_path, enable=True, **spec):
    sim = Simulator({"switches": [{"name": "leaf1", "platform": "eos", "ports": ["Ethernet1", "Ethernet2"], **spec}]}, str(tmp_path))
    sh = sim.devices["leaf1"].new_shell(None)
    if enable:
        sh.handle("enable")
    return sh


DESCRIBED = ["interface Ethernet1", "description to spine1 Et1", "no switchport", "ip address 10.0.0.0/31", "interface Ethernet2", "shutdown"]


def test_show_interfaces_in_both_forms(tmp_path):
    """napalm get_facts/get_interfaces and eos_facts (interfaces) send 'show interfaces | json'; ntc-templates reads
    the text. Before issue 32 both were '% Incomplete command'."""
    sh = shell(tmp_path, initial_config=DESCRIBED)
    doc = json.loads(sh.handle("show interfaces | json"))["interfaces"]
    assert set(doc) == {"Ethernet1", "Ethernet2"}
    et1 = doc["Ethernet1"]
    assert (et1["description"], et1["forwardingModel"], et1["mtu"], et1["interfaceStatus"]) == ("to spine1 Et1", "routed", 1500, "notconnect")
    assert et1["interfaceAddress"][0]["primaryIp"] == {"address": "10.0.0.0", "maskLen": 31}
    assert doc["Ethernet2"]["interfaceStatus"] == "disabled" and doc["Ethernet2"]["mtu"] == 9214
    text = sh.handle("show interfaces Ethernet1")
    assert text.startswith("Ethernet1 is down, line protocol is down (notconnect)\n") and "  Description: to spine1 Et1\n" in text
    assert "Ethernet2 is administratively down" in sh.handle("show interfaces")


def test_interface_arguments_must_name_interfaces(tmp_path):
    sh = shell(tmp_path)
    assert sh.handle("sh int st").startswith("Port ")  # 'status', not an interface 'st'
    assert sh.handle("show interfaces bogus") == "% Invalid input (at token 2: 'bogus')\n"
    assert sh.handle("show interfaces Ethernet9") == "% Interface does not exist\n"


def test_show_lldp_neighbors_summary_in_both_forms(tmp_path):
    sh = shell(tmp_path)
    doc = json.loads(sh.handle("show lldp neighbors | json"))
    assert doc["lldpNeighbors"] == []  # napalm's fixture: a list, not the detail form's map
    assert "Port       Neighbor Device ID             Neighbor Port ID           TTL" in sh.handle("show lldp neighbors")


def test_startup_config_dir_and_boot_config(tmp_path):
    sh = shell(tmp_path, enable=False, initial_config=DESCRIBED)
    # privileged EXEC commands, refused as EOS refuses them (arista.eos tolerates the refusal of 'bash')
    assert sh.handle("dir all-filesystems") == "% Invalid input (privileged mode required)\n"
    assert sh.handle("bash timeout 5 cat /mnt/flash/boot-config") == "% Invalid input (privileged mode required)\n"
    sh.handle("enable")
    start = sh.handle("show startup-config")
    assert start.startswith("! Command: show startup-config\n") and "   description to spine1 Et1\n" in start
    assert sh.handle("show startup-config | json") == "% This is an unconverted command\n"
    listing = sh.handle("dir all-filesystems")
    assert "Directory of flash:/\n" in listing and "Directory of system:/\n" in listing
    assert sh.handle("dir").startswith("Directory of flash:/\n") and sh.handle("dir flash:") == sh.handle("dir")
    assert sh.handle("bash timeout 5 cat /mnt/flash/boot-config") == "SWI=flash:/EOS.swi\n"
    assert sh.handle("bash timeout 5 cat /mnt/flash/nothing") == "cat: /mnt/flash/nothing: No such file or directory\n"
    assert sh.handle("bash uname -a") == "bash: uname: command not found\n"


def test_show_inventory_and_interface_descriptions(tmp_path):
    sh = shell(tmp_path, initial_config=DESCRIBED)
    inv = sh.handle("show inventory")
    assert inv.startswith("System information\n") and "  DCS-7280CR3-32P4 " in inv and " SIMLEAF1 " in inv
    desc = sh.handle("show interfaces description").splitlines()
    assert desc[0].split() == ["Interface", "Status", "Protocol", "Description"]
    assert desc[1].split() == ["Et1", "down", "down", "to", "spine1", "Et1"] and desc[2].split() == ["Et2", "admin", "down", "down"]


def test_interfaces_status_prints_current_eos_columns_and_the_description(tmp_path):
    sh = shell(tmp_path, initial_config=DESCRIBED)
    lines = sh.handle("show interfaces status").splitlines()
    assert lines[0].split() == ["Port", "Name", "Status", "Vlan", "Duplex", "Speed", "Type", "Flags", "Encapsulation"]
    assert lines[1].split()[:5] == ["Et1", "to", "spine1", "Et1", "notconnect"] and lines[2].split()[1] == "disabled"
    doc = json.loads(sh.handle("show interfaces status | json"))["interfaceStatuses"]
    assert doc["Ethernet1"]["description"] == "to spine1 Et1" and doc["Ethernet2"]["linkStatus"] == "disabled"
