# SPDX-License-Identifier: GPL-3.0-or-later
"""Juniper Junos simulator driven by netmiko (juniper_junos) over real SSH."""
from __future__ import annotations

import pathlib
import sys
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests" / "lab"))

from switchsim.client import SimProcess  # noqa: E402

netmiko = pytest.importorskip("netmiko")

SCALE = 0.002  # commit confirmed 5 (minutes) = 0.6 s

LINES = [  # shared/reference/switch-lossless-cli.md section 5
    "set class-of-service forwarding-classes class ROCE queue-num 3 no-loss pfc-priority 3",
    "set class-of-service forwarding-classes class CNP queue-num 6",
    "set class-of-service classifiers dscp DSCP-ROCE forwarding-class ROCE loss-priority low code-points 011010",
    "set class-of-service classifiers dscp DSCP-ROCE forwarding-class CNP loss-priority low code-points 110000",
    "set class-of-service congestion-notification-profile CNP-ROCE input dscp code-point 011010 pfc",
    "set class-of-service congestion-notification-profile CNP-ROCE output ieee-802.1 code-point 011 flow-control-queue 3",
    "set class-of-service congestion-notification-profile CNP-ROCE pfc-watchdog",
    "set class-of-service drop-profiles DP-ROCE interpolate fill-level [ 10 50 ] drop-probability [ 0 100 ]",
    "set class-of-service schedulers S-ROCE transmit-rate percent 50",
    "set class-of-service schedulers S-ROCE explicit-congestion-notification",
    "set class-of-service schedulers S-ROCE drop-profile-map loss-priority low protocol any drop-profile DP-ROCE",
    "set class-of-service schedulers S-CNP priority strict-high",
    "set class-of-service scheduler-maps SM-ROCE forwarding-class ROCE scheduler S-ROCE",
    "set class-of-service scheduler-maps SM-ROCE forwarding-class CNP scheduler S-CNP",
    "set class-of-service interfaces et-0/0/0 congestion-notification-profile CNP-ROCE",
    "set class-of-service interfaces et-0/0/0 classifiers dscp DSCP-ROCE",
    "set class-of-service interfaces et-0/0/0 scheduler-map SM-ROCE",
    "set interfaces et-0/0/0 mtu 9216",
]


@pytest.fixture
def sim(tmp_path):
    cfg = {"time_scale": SCALE, "switches": [
        {"name": "qfx1", "platform": "junos", "port": 0, "username": "netops", "password": "s3cret-junos"}]}
    with SimProcess(cfg, str(tmp_path)) as s:
        yield s


def connect(sim):
    return netmiko.ConnectHandler(device_type="juniper_junos", host="127.0.0.1", port=sim.port("qfx1"),
                                  username="netops", password="s3cret-junos", conn_timeout=10)


def stage(conn):
    # commit confirmed needs a shared or exclusive candidate: Junos refuses it in private mode.
    out = conn.config_mode(config_command="configure exclusive")
    assert "Entering configuration mode" in out
    out = conn.send_config_set(LINES, exit_config_mode=False)
    assert "error" not in out and "syntax error" not in out, out
    cmp_ = conn.send_command("show | compare")
    assert "[edit]" in cmp_ and "+   class-of-service {" in cmp_
    assert "+           class ROCE queue-num 3 no-loss pfc-priority 3;" in cmp_
    assert "configuration check succeeds" in conn.commit(check=True)


def test_commit_confirmed_then_commit_keeps_config(sim):
    conn = connect(sim)
    try:
        stage(conn)
        out = conn.commit(confirm=True, confirm_delay=5)
        assert "commit confirmed will be automatically rolled back in 5 minutes unless confirmed" in out
        assert sim.pending("qfx1")["pending_commit"]
        assert "commit complete" in conn.commit()
        assert not sim.pending("qfx1")["pending_commit"]
        time.sleep(300 * SCALE + 0.5)
        conn.exit_config_mode()
        run = conn.send_command("show configuration class-of-service | display set")
        assert "set class-of-service forwarding-classes class ROCE pfc-priority 3" in run
        assert "set class-of-service interfaces et-0/0/0 scheduler-map SM-ROCE" in run
    finally:
        conn.disconnect()


def test_commit_confirmed_expiry_rolls_back(sim):
    before = sim.running("qfx1")
    conn = connect(sim)
    try:
        stage(conn)
        conn.commit(confirm=True, confirm_delay=5)
        assert "class-of-service" in sim.running("qfx1")
        time.sleep(300 * SCALE + 0.6)
        assert sim.running("qfx1") == before
        assert not sim.pending("qfx1")["pending_commit"]
    finally:
        conn.disconnect()


def test_syntax_errors_and_commit_check_failure(sim):
    conn = connect(sim)
    try:
        conn.config_mode(config_command="configure private")
        out = conn.send_command("set class-of-service forwarding-classes class ROCE queue-num 99")
        assert "Value 99 is not within range (0..15) at '99'" in out
        out = conn.send_command("set class-of-service forwarding-clases class ROCE queue-num 3",
                                strip_prompt=False)
        lines = out.splitlines()
        caret = next(x for x in lines if x.strip() == "^")
        # the caret sits under the bad token, counted from the start of the prompt
        assert caret.index("^") == len("netops@qfx1# set class-of-service ")
        assert "syntax error." in out
        conn.send_command("set class-of-service interfaces et-0/0/0 scheduler-map SM-MISSING")
        out = conn.send_command("commit check")
        assert "Scheduler map SM-MISSING is not defined" in out
        assert "error: configuration check-out failed" in out
        with pytest.raises(ValueError):
            conn.commit()
        conn.exit_config_mode()   # answers "Exit with uncommitted changes?"
        assert conn.find_prompt() == "netops@qfx1>"
    finally:
        conn.disconnect()


def test_counters_shown_in_junos_shape(sim):
    counters = {"pfc_rx": {"3": 1204}, "pfc_tx": {"3": 57}, "ecn_marked": {"3": 81234}}
    sim.set_counters("qfx1", "et-0/0/0", counters)
    conn = connect(sim)
    try:
        ext = conn.send_command("show interfaces et-0/0/0 extensive")
        assert "MAC Priority Flow Control Statistics:" in ext
        row = next(x for x in ext.splitlines() if x.strip().startswith("Priority :  3"))
        assert row.split()[-2:] == ["1204", "57"]
        q = conn.send_command("show interfaces queue et-0/0/0")
        assert "Queue: 3, Forwarding classes: fcoe" in q
        # columns as in real output (the count right-aligned to 48: test_peers_junos); here the value
        assert any(line.split() == ["ECN-CE", "packets", ":", "81234", "0", "pps"] for line in q.splitlines())
    finally:
        conn.disconnect()


def test_commit_confirmed_refused_in_private_mode(sim):
    conn = connect(sim)
    try:
        conn.config_mode(config_command="configure private")
        conn.send_config_set(LINES, exit_config_mode=False)
        out = conn.send_command("commit confirmed 5", expect_string=r"#")
        assert "error: commit confirmed not supported for private configuration" in out
        assert not sim.pending("qfx1")["pending_commit"]
    finally:
        conn.disconnect()


# --- rules from Juniper's documents (docs/vendor-junos.md) --------------------------------------

ETS_LINES = [
    "set class-of-service forwarding-class-sets PG class ROCE",
    "set class-of-service forwarding-class-sets PG class CNP",
    "set class-of-service traffic-control-profiles TCP scheduler-map SM-ROCE",
    "set class-of-service traffic-control-profiles TCP guaranteed-rate percent 100",
    "set class-of-service interfaces et-0/0/1 forwarding-class-set PG output-traffic-control-profile TCP",
]


def _check(conn, lines):
    conn.config_mode(config_command="configure exclusive")
    out = conn.send_config_set(lines, exit_config_mode=False)
    check = conn.send_command("commit check", expect_string=r"[>#]")
    conn.send_command("rollback 0", expect_string=r"[>#]")
    conn.exit_config_mode()
    return out, check


def multi_sim(tmp_path, model):
    cfg = {"time_scale": SCALE, "switches": [
        {"name": "qfx1", "platform": "junos", "port": 0, "username": "netops", "password": "s3cret-junos", "model": model}]}
    return SimProcess(cfg, str(tmp_path))


def test_ets_port_takes_no_scheduler_map_and_jvd_partitions_commit(sim):
    """QFX5120 (the lab's model) does port scheduling and ETS, not both on one port; the JVD's
    shared-buffer partitions (egress 66 + 10) commit (the old simulator wanted a sum of 100)."""
    conn = connect(sim)
    try:
        _out, check = _check(conn, LINES + ETS_LINES + ["set class-of-service interfaces et-0/0/1 scheduler-map SM-ROCE"])
        assert "scheduler-map and forwarding-class-set cannot be configured on the same interface" in check
        assert "configuration check-out failed" in check
        _out, check = _check(conn, LINES + ETS_LINES)
        assert "configuration check succeeds" in check
        jvd = ["set class-of-service shared-buffer ingress buffer-partition lossless percent 66",
               "set class-of-service shared-buffer ingress buffer-partition lossless dynamic-threshold 10",
               "set class-of-service shared-buffer ingress buffer-partition lossless-headroom percent 24",
               "set class-of-service shared-buffer ingress buffer-partition lossy percent 10",
               "set class-of-service shared-buffer egress buffer-partition lossless percent 66",
               "set class-of-service shared-buffer egress buffer-partition lossy percent 10"]
        out, check = _check(conn, LINES + jvd)
        assert "error" not in out and "configuration check succeeds" in check
        # media MTU: QFX 256..9216; an IP MTU of 9214 (EOS's meaning) would need 9228
        out, _check_out = _check(conn, ["set interfaces et-0/0/1 mtu 9228"])
        assert "Value 9228 is not within range (256..9216)" in out
        # DCBX per port (QFX: priority-flow-control no-auto-negotiation)
        out, check = _check(conn, ["set protocols dcbx interface et-0/0/1 priority-flow-control no-auto-negotiation"])
        assert "error" not in out and "configuration check succeeds" in check
    finally:
        conn.disconnect()


def test_qfx5210_has_no_ets(tmp_path):
    with multi_sim(tmp_path, "qfx5210-64c") as s:
        conn = connect(s)
        try:
            _out, check = _check(conn, LINES + ETS_LINES)
            assert "Hierarchical port scheduling (ETS) is not supported on this platform" in check
            _out, check = _check(conn, LINES)
            assert "configuration check succeeds" in check
        finally:
            conn.disconnect()


def test_show_system_commit_real_form_and_private_refused_on_a_modified_shared_candidate(sim):
    conn = connect(sim)
    other = connect(sim)
    try:
        conn.config_mode(config_command="configure exclusive")
        conn.send_config_set(LINES, exit_config_mode=False)
        out = conn.send_command('commit confirmed 5 comment "run-a"', expect_string=r"[>#]")
        assert "commit complete" in out
        history = conn.send_command("run show system commit", expect_string=r"[>#]")
        first = [line for line in history.splitlines() if line.startswith("0 ")][0]
        assert first.endswith("by netops via cli commit confirmed, rollback in 5mins"), history
        assert "\n    run-a\n" in history + "\n"
        conn.send_command("commit", expect_string=r"[>#]")
        history = conn.send_command("run show system commit", expect_string=r"[>#]")
        assert [line for line in history.splitlines() if line.startswith("0 ")][0].endswith("via cli")
        # the confirmed entry keeps its text (as real QFX output shows)
        assert "commit confirmed, rollback in 5mins" in history
        out = other.send_command("configure private", expect_string=r"[>#]")
        assert "error: configuration database locked by:" in out and "netops terminal" in out
        conn.exit_config_mode()
        conn.config_mode(config_command="configure")
        conn.send_command("set interfaces et-0/0/9 description pending-edit", expect_string=r"[>#]")
        out = other.send_command("configure private", expect_string=r"[>#]")
        assert "error: shared configuration database modified" in out
        out = other.send_command("configure exclusive", expect_string=r"[>#]")
        assert "error: configuration database modified" in out
    finally:
        conn.disconnect()
        other.disconnect()


# --- peers (issue 32; docs/vendor-junos.md "Peers") ------------------------------------------------------


def test_netmiko_reads_the_facts_views_through_ntc_templates(sim):
    """netmiko's juniper_junos session preparation, then send_command(use_textfsm=True) as a user runs it: the
    views parse into the simulator's state (before issue 32 'show chassis hardware' and 'show system uptime'
    were refused and 'show version | display xml' came back as text)."""
    pytest.importorskip("ntc_templates")
    conn = connect(sim)
    try:
        [version] = conn.send_command("show version", use_textfsm=True)
        assert (version["hostname"], version["model"], version["junos_version"]) == ("qfx1", "qfx5120-32c", "23.4R2-S2.1")
        hardware = conn.send_command("show chassis hardware", use_textfsm=True)
        assert [row["chassis_description"] for row in hardware if row["chassis_serial_number"]] == ["QFX5120-32C"]
        [uptime] = conn.send_command("show system uptime", use_textfsm=True)
        assert uptime["time_source"] == "LOCAL CLOCK" and uptime["last_config_user"] == "root"
        xml = conn.send_command("show version | display xml")
        assert xml.lstrip().startswith("<rpc-reply") and "<host-name>qfx1</host-name>" in xml
        assert conn.send_command("set cli timestamp disable").strip() == "CLI timestamp disabled"
    finally:
        conn.disconnect()
