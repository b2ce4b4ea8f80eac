# SPDX-License-Identifier: GPL-3.0-or-later
"""NVIDIA Cumulus NVUE simulator driven by netmiko (cumulus_linux) over real SSH."""
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

SCALE = 0.002

LINES = [  # shared/reference/switch-lossless-cli.md section 3
    "nv set qos roce mode lossless",
    "nv set qos mapping default-global trust l3",
    "nv set qos mapping default-global dscp 26 switch-priority 3",
    "nv set qos egress-queue-mapping default-global switch-priority 3 traffic-class 3",
    "nv set qos pfc default-global switch-priority 3",
    "nv set qos pfc default-global tx enable",
    "nv set qos pfc default-global rx enable",
    "nv set qos congestion-control default-global traffic-class 3 min-threshold 150000",
    "nv set qos congestion-control default-global traffic-class 3 max-threshold 1500000",
    "nv set qos congestion-control default-global traffic-class 3 probability 100",
    "nv set qos congestion-control default-global traffic-class 3 ecn enable",
    "nv set qos egress-scheduler default-global traffic-class 6 mode strict",
    "nv set qos egress-scheduler default-global traffic-class 0,3 mode dwrr",
    "nv set qos egress-scheduler default-global traffic-class 0,3 bw-percent 50",
    "nv set qos egress-scheduler default-global traffic-class 1,2,4,5,7 mode strict",
    "nv set interface swp1-2 qos pfc-watchdog state enable",
    "nv set interface swp1 link mtu 9216",
]


@pytest.fixture
def sim(tmp_path):
    cfg = {"time_scale": SCALE, "switches": [
        {"name": "leaf3", "platform": "nvue", "port": 0, "username": "cumulus", "password": "s3cret-nv"}]}
    with SimProcess(cfg, str(tmp_path)) as s:
        yield s


def connect(sim):
    return netmiko.ConnectHandler(device_type="cumulus_linux", host="127.0.0.1", port=sim.port("leaf3"),
                                  username="cumulus", password="s3cret-nv", conn_timeout=10)


def stage(conn):
    for line in LINES:
        out = conn.send_command(line)
        assert out == "", (line, out)
    diff = conn.send_command("nv config diff")
    assert diff.startswith("- set:")
    assert "tx: enable" in diff and "mtu: 9216" in diff
    return diff


def test_apply_confirm_then_confirm_yes_keeps(sim):
    conn = connect(sim)
    try:
        assert conn.find_prompt() == "cumulus@leaf3:mgmt:~$"
        stage(conn)
        out = conn.send_command("nv config apply --confirm 300s -y")
        assert out.startswith("applied [rev_id: ")
        assert sim.pending("leaf3")["pending_commit"]
        assert "seconds remaining" in conn.send_command("nv config apply --confirm-status")
        rev = out.split("rev_id: ")[1].split("]")[0]
        # The bare form is not in NVIDIA's reference; the revision-naming form (napalm-cumulus) is accepted.
        assert conn.send_command("nv config apply --confirm-yes").startswith("Error: --confirm-yes needs the revision")
        assert json.loads(conn.send_command("nv config revision -o json"))[rev]["state"] == "confirm"
        assert conn.send_command("nv config apply %s --confirm-yes" % rev).startswith("applied")
        time.sleep(300 * SCALE + 0.5)
        cmds = conn.send_command("nv config show -o commands")
        assert "nv set qos pfc default-global switch-priority 3" in cmds
        assert "nv set interface swp2 qos pfc-watchdog state enable" in cmds
        assert conn.send_command("nv config diff") == ""
        cc = conn.send_command("nv show qos congestion-control default-global traffic-class")
        assert "146.48 KB" in cc and "1.43 MB" in cc
    finally:
        conn.disconnect()


def test_apply_confirm_expiry_rolls_back(sim):
    before = sim.running("leaf3")
    conn = connect(sim)
    try:
        stage(conn)
        conn.send_command("nv config apply --confirm 5m -y")
        assert "roce" in sim.running("leaf3")
        time.sleep(300 * SCALE + 0.6)
        assert sim.running("leaf3") == before
        assert not sim.pending("leaf3")["pending_commit"]
    finally:
        conn.disconnect()


def test_invalid_set_and_apply_validation(sim):
    conn = connect(sim)
    try:
        out = conn.send_command("nv set qos foo bar")
        assert out.startswith("Error: Invalid argument 'foo'")
        assert conn.send_command("nv set interface swp1 link mtu 99999").startswith(
            "Error: 99999 is greater than the maximum of 9216")
        assert conn.send_command("nv set qos roce mode fast").startswith("Error: 'fast' is not one of")
        # only TC0/TC3 at 50 % leaves the default 12/13 % on the others: > 100 % is rejected at apply
        conn.send_command("nv set qos egress-scheduler default-global traffic-class 0,3 bw-percent 50")
        out = conn.send_command("nv config apply -y")
        assert out.startswith("Error: Invalid config") and "must not exceed 100" in out
        conn.send_command("nv config detach")
        assert conn.send_command("nv config diff") == ""
        # the watchdog needs PFC on the port
        conn.send_command("nv set interface swp3 qos pfc-watchdog")
        assert "PFC or link pause must be configured" in conn.send_command("nv config apply -y")
        assert "command not found" in conn.send_command("vtysh-bogus")
    finally:
        conn.disconnect()


def test_counters_settable_and_shown(sim):
    counters = {"pfc_rx": {"3": 1204}, "pfc_tx": {"3": 57}, "ecn_marked": {"3": 812334}, "watchdog_storms": {"3": 2}}
    sim.set_counters("leaf3", "swp1", counters)
    conn = connect(sim)
    try:
        out = conn.send_command("nv show interface swp1 counters qos pfc-stats")
        row = next(x for x in out.splitlines() if x.startswith("3 "))
        assert row.split() == ["3", "1204", "0", "57", "0"]
        js = json.loads(conn.send_command("nv show interface swp1 counters qos pfc-stats -o json"))
        assert js["3"]["rx-pause-frames"] == 1204
        roce = conn.send_command("nv show interface swp1 qos roce counters")
        assert any(x.split()[:2] == ["ecn-marked-packets", "812334"] for x in roce.splitlines())
        for line in ["nv set qos traffic-pool default-lossy memory-percent 50",
                     "nv set qos traffic-pool default-lossless memory-percent 50",
                     "nv set qos traffic-pool default-lossless switch-priority 3",
                     "nv set qos pfc default-global switch-priority 3",
                     "nv set interface swp1 qos pfc-watchdog state enable"]:
            conn.send_command(line)
        assert conn.send_command("nv config apply -y").startswith("applied")
        wd = conn.send_command("nv show interface swp1 qos pfc-watchdog")
        assert "PFC WD Status" in wd
        assert any(x.split() == ["3", "OK", "2"] for x in wd.splitlines())
    finally:
        conn.disconnect()


def _applied(conn, lines):
    for line in lines:
        out = conn.send_command(line)
        assert out == "", (line, out)
    return conn.send_command("nv config apply -y")


# The rules below come from NVIDIA's pages (docs/vendor-nvue.md); each test keeps
# the line the old template sent and shows the simulator refusing it.
OLD_PFC = ["nv set qos pfc lf-roce-pfc3-2m switch-priority 3", "nv set qos pfc lf-roce-pfc3-2m tx enable",
           "nv set interface swp1 qos pfc profile lf-roce-pfc3-2m"]
POOL = ["nv set qos traffic-pool default-lossy memory-percent 50", "nv set qos traffic-pool default-lossy switch-priority 0,1,2,4,5,6,7",
        "nv set qos traffic-pool default-lossless memory-percent 50", "nv set qos traffic-pool default-lossless switch-priority 3"]


def test_pfc_without_a_lossless_pool_is_refused(sim):
    conn = connect(sim)
    try:
        out = _applied(conn, OLD_PFC)
        assert out.startswith("Error: Invalid config") and "switch-priority 3 is not in a lossless traffic pool" in out
        conn.send_command("nv config detach")
        assert _applied(conn, POOL + OLD_PFC).startswith("applied")
    finally:
        conn.disconnect()


def test_pool_memory_over_100_percent_and_two_lossless_pools_are_refused(sim):
    conn = connect(sim)
    try:
        # default-lossy keeps its default 100 % unless lowered ("must not exceed 100%")
        out = _applied(conn, ["nv set qos traffic-pool default-lossless memory-percent 50"])
        assert "must not exceed 100" in out and "150" in out
        conn.send_command("nv config detach")
        out = _applied(conn, ["nv set qos traffic-pool default-lossy memory-percent 40", "nv set qos traffic-pool default-lossless memory-percent 30",
                              "nv set qos traffic-pool roce-lossless memory-percent 30"])
        assert "only one lossless pool" in out
        assert conn.send_command("nv set qos traffic-pool lossless-x memory-percent 5").startswith("Error: 'lossless-x' is not one of")
    finally:
        conn.disconnect()


def test_no_invented_ranges(sim):
    conn = connect(sim)
    try:
        # NVIDIA states no range for thresholds or watchdog timers: only positive integers are enforced
        for line in ["nv set qos congestion-control p traffic-class 3 max-threshold 500000000",
                     "nv set qos pfc-watchdog polling-interval 50", "nv set qos pfc-watchdog robustness 2000"]:
            assert conn.send_command(line) == "", line
        assert "less than the minimum" in conn.send_command("nv set qos pfc-watchdog polling-interval 0")
        # stated ranges: probability 1-100, cable-length 1-100000
        assert "greater than the maximum of 100" in conn.send_command("nv set qos congestion-control p traffic-class 3 probability 101")
        assert "greater than the maximum of 100000" in conn.send_command("nv set qos pfc p cable-length 100001")
    finally:
        conn.disconnect()


@pytest.fixture
def sim515(tmp_path):
    cfg = {"time_scale": SCALE, "switches": [
        {"name": "leaf3", "platform": "nvue", "port": 0, "username": "cumulus", "password": "s3cret-nv", "version": "5.15.0"}]}
    with SimProcess(cfg, str(tmp_path)) as s:
        yield s


def test_release_spellings_5_14(sim):
    conn = connect(sim)
    try:
        assert conn.send_command("nv set qos congestion-control p traffic-class 3 ecn enable") == ""
        assert "is not one of" in conn.send_command("nv set qos congestion-control p traffic-class 3 ecn enabled")
        assert conn.send_command("nv set service lldp application-tlv udp-port 4791 priority 3") == ""
        assert "Invalid argument 'lldp'" in conn.send_command("nv set system lldp application-tlv udp-port 4791 priority 3")
    finally:
        conn.disconnect()


def test_release_spellings_5_15(sim515):
    conn = connect(sim515)
    try:
        assert conn.send_command("nv set qos congestion-control p traffic-class 3 ecn enabled") == ""
        assert "is not one of" in conn.send_command("nv set qos congestion-control p traffic-class 3 ecn enable")
        assert conn.send_command("nv set system lldp application-tlv udp-port 4791 priority 3") == ""
        assert "Invalid argument 'service'" in conn.send_command("nv set service lldp application-tlv udp-port 4791 priority 3")
    finally:
        conn.disconnect()


def test_qos_roce_switch_spelling_per_release(sim, sim515):
    for s, good, bad in ((sim, "enable on", "state enabled"), (sim515, "state enabled", "enable on")):
        conn = connect(s)
        try:
            assert conn.send_command("nv set qos roce %s" % good) == ""
            assert conn.send_command("nv set qos roce %s" % bad).startswith("Error: Invalid argument")
        finally:
            conn.disconnect()
