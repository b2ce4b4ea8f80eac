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


# --- operational views, confirm options, LLDP (issues 31, 32): in process, no SSH needed -------------------
# Each test below fails against the simulator before these rules: it printed the per-port two-row DSCP map in
# 'nv show qos roce', the same view for 'interface <if> qos roce status', YAML or "does not exist" for the
# profile views, knew every confirm option, and advertised the interface name as every port's description.

def _device(version="5.14.0", lines=()):
    # pylint: disable=import-outside-toplevel
    import types

    from switchsim.nvue import NvueDevice

    # time_scale 1: the confirm timers of these tests (minutes) never fire while they run; cancel_timers() stops them
    dev = NvueDevice({"name": "leaf3", "version": version}, types.SimpleNamespace(config={}, devices={}, time_scale=1.0))
    shell = dev.new_shell(types.SimpleNamespace(user="cumulus"))
    for line in lines:
        assert shell.handle(line) == "", line
    if lines:
        assert shell.handle("nv config apply -y").startswith("applied")
    return dev, shell


ROCE_PAGE_DSCP_ROWS = [  # RoCE page (5.14, 5.16), 'nv show qos roce': the whole PCP/DSCP -> SP map
    "    0  0    0,1,2,3,4,5,6,7          0",
    "    3  3    24,25,26,27,28,29,30,31  3",
    "    6  6    48,49,50,51,52,53,54,55  6",
]


def test_show_qos_roce_prints_the_whole_dscp_map_and_the_roce_page_key_tree():
    _dev, sh = _device(lines=["nv set qos roce"])
    out = sh.handle("nv show qos roce")
    lines = out.splitlines()
    assert lines[0].split() == ["operational", "applied"]  # no description column in the switch-wide view
    assert lines[2].split() == ["enable", "on"] and lines[2].index("on") == lines[0].index("applied")  # applied column only
    assert lines[3].split() == ["mode", "lossless", "lossless"]
    for row in ROCE_PAGE_DSCP_ROWS:
        assert row in lines
    assert "    cnp   6    48    6" not in lines  # the per-port rows belong to 'interface <if> qos roce status'
    assert "    6  6            6              strict-priority" in lines and "    3  3            3              DWRR-50%" in lines
    assert lines[-3:] == ["Exception List", "=================", "No Data"]
    assert "  selector          UDP" in lines and "  cable-length      100" in lines


def test_show_qos_roce_5_16_names_the_switch_state_and_follows_a_remapped_dscp():
    _dev, sh = _device("5.16.0", ["nv set qos roce state enabled", "nv set qos mapping default-global dscp 26 switch-priority 4"])
    lines = sh.handle("nv show qos roce").splitlines()
    assert lines[2].split() == ["state", "enabled"]
    rows = [line.split() for line in lines]
    assert ["3", "3", "24,25,27,28,29,30,31", "3"] in rows and ["4", "4", "26,32,33,34,35,36,37,38,39", "4"] in rows


def test_interface_roce_status_is_the_per_port_form():
    _dev, sh = _device(lines=["nv set qos roce"])
    lines = sh.handle("nv show interface swp1 qos roce status").splitlines()
    assert lines[0].split() == ["operational", "applied", "description"]
    assert "  congestion-mode   ecn, absolute           Congestion config mode" in lines
    assert "  rx-enabled        yes                     PFC Rx Enabled status" in lines
    assert "    roce  3    26    3" in lines and "    cnp   6    48    6" in lines
    assert "RoCE Pool Status" in lines and "    cnp   6            6              strict priority" in lines


def test_qos_pfc_profile_view_operational_and_applied():
    _dev, sh = _device(lines=["nv set qos pfc lf switch-priority 3", "nv set qos pfc lf tx enable", "nv set qos pfc lf rx disable",
                              "nv set qos pfc lf cable-length 50", "nv set qos pfc lf xoff-threshold 1500",
                              "nv set qos traffic-pool default-lossless switch-priority 3", "nv set qos traffic-pool default-lossless memory-percent 50",
                              "nv set qos traffic-pool default-lossy memory-percent 50"])
    lines = sh.handle("nv show qos pfc lf").splitlines()
    # QoS page, "Priority Flow Control": nv show qos pfc default-global
    assert lines[0] == "                   operational  applied  description"
    assert lines[2].split() == ["cable-length", "50", "50", "Cable", "Length", "(in", "meters)"]
    assert "xoff-threshold     1500 B       1500 B   Xoff Threshold (in bytes)" in lines
    assert lines[-1].split()[:3] == ["[switch-priority]", "3", "3"]


def test_profile_views_show_what_roce_programs_into_default_global():
    _dev, sh = _device(lines=["nv set qos roce"])
    pfc = sh.handle("nv show qos pfc default-global").splitlines()
    assert pfc[-1].split()[:3] == ["[switch-priority]", "3", "3"]
    cc = sh.handle("nv show qos congestion-control default-global").splitlines()
    # QoS page, "Congestion Control (ECN)": an empty key tree, a blank line, the ECN Configurations table
    assert cc[:5] == ["    operational  applied  description", "--  -----------  -------  -----------", "", "ECN Configurations", "====================="]
    assert cc[5].split() == ["traffic-class", "ECN", "RED", "Min", "Th", "Max", "Th", "Probability"]
    assert [row.split()[0] for row in cc[7:]] == ["0", "3"] and "150000 B  1500000 B" in cc[8]
    one = sh.handle("nv show qos congestion-control default-global traffic-class 3").splitlines()
    assert one[2].split()[:3] == ["ecn", "enable", "enable"] and one[3].split()[:5] == ["max-threshold", "1500000", "B", "1500000", "B"]
    assert sh.handle("nv show qos congestion-control default-global traffic-class 5").startswith("Error: The requested item does not exist")


def test_operational_fault_changes_the_operational_column_only():
    dev, sh = _device(lines=["nv set qos roce"])
    dev.set_faults({"operational": {"congestion-control.default-global.traffic-class.3.min-threshold": 159744}})
    row = sh.handle("nv show qos congestion-control default-global traffic-class 3").splitlines()[4]
    assert row.split()[:5] == ["min-threshold", "159744", "B", "150000", "B"]
    assert "  min-threshold     156.00 KB" in sh.handle("nv show qos roce").splitlines()


def test_unknown_options_fault_refuses_the_undocumented_confirm_forms():
    dev, sh = _device(lines=["nv set system hostname leaf3"])
    assert sh.handle("nv set system hostname leaf9") == ""
    assert sh.handle("nv config apply --confirm 5m -y").startswith("applied")
    rev = dev.confirm["rev"]
    dev.set_faults({"unknown_options": ["--confirm-yes", "--confirm-no"]})
    for option in ("--confirm-yes", "--confirm-no"):
        assert sh.handle("nv config apply %s %s" % (rev, option)) == "Error: No such option: %s\n" % option
    assert dev.confirm and dev.revisions[rev]["state"] == "confirm"  # still pending: its timer decides
    dev.set_faults({"unknown_options": None})
    assert sh.handle("nv config apply %s --confirm-no" % rev).startswith("applied")
    assert dev.applied["system"]["hostname"] == "leaf3"
    dev.cancel_timers()


def test_lldp_port_description_is_the_interface_alias():
    dev, _sh = _device(lines=["nv set interface swp1 description 'gpu1 mlx5_1'"])
    assert dev.lldp_advertised("swp1") == {"port_id": "swp1", "subtype": "ifname", "descr": "gpu1 mlx5_1"}
    assert dev.lldp_advertised("swp2") == {"port_id": "swp2", "subtype": "ifname", "descr": "swp2"}
