# SPDX-License-Identifier: GPL-3.0-or-later
"""Junos driver: render and parse (pure), and the transaction against the switch simulator over real SSH."""

from __future__ import annotations

import copy
import pathlib
import sys
import time

import pytest

from ansible_collections.lossless.fabric.plugins.module_utils import _intent
from ansible_collections.lossless.fabric.plugins.module_utils._platforms import _base, junos

ROOT = pathlib.Path(__file__).resolve().parents[5]
FIXTURES = pathlib.Path(__file__).resolve().parent / "fixtures" / "junos"
sys.path.insert(0, str(ROOT / "tests" / "lab"))

SCALE = 0.01  # commit confirmed 1 (minute) = 0.6 s
USER, PASSWORD = "netops", "s3cret-junos"


def make_plan(**roce):
    intent = {"name": "lab", "transport": "roce", "roce": roce}
    devices = {
        "leaf2": {
            "kind": "switch",
            "platform": "junos",
            # Junos drop profiles take percent of the queue buffer: the plan carries its size.
            "queue_buffer_bytes": 12_000_000,
            "ports": {
                "et-0/0/1": {"speed": "400G", "cable_length_m": 2, "description": "gpu1 mlx5_1"},
                "et-0/0/31": {"speed": "400G", "cable_length_m": 3, "description": "to spine1 Ethernet2/1"},
            },
        }
    }
    plan = _intent.build_plan(intent, devices)["devices"]["leaf2"]
    assert plan["queue_buffer_bytes"] == 12_000_000
    return plan


EXPECTED = """\
delete class-of-service forwarding-classes class LF-ROCE-TC0
set class-of-service forwarding-classes class LF-ROCE-TC0 queue-num 0
delete class-of-service forwarding-classes class LF-ROCE-TC3
set class-of-service forwarding-classes class LF-ROCE-TC3 queue-num 3
set class-of-service forwarding-classes class LF-ROCE-TC3 no-loss
set class-of-service forwarding-classes class LF-ROCE-TC3 pfc-priority 3
delete class-of-service forwarding-classes class LF-ROCE-TC6
set class-of-service forwarding-classes class LF-ROCE-TC6 queue-num 6
delete class-of-service classifiers dscp LF-ROCE-DSCP
set class-of-service classifiers dscp LF-ROCE-DSCP forwarding-class LF-ROCE-TC3 loss-priority low code-points 011010
set class-of-service classifiers dscp LF-ROCE-DSCP forwarding-class LF-ROCE-TC6 loss-priority low code-points 110000
delete class-of-service congestion-notification-profile LF-ROCE-CNP-2M
set class-of-service congestion-notification-profile LF-ROCE-CNP-2M input dscp code-point 011010 pfc
set class-of-service congestion-notification-profile LF-ROCE-CNP-2M input cable-length 2
set class-of-service congestion-notification-profile LF-ROCE-CNP-2M output ieee-802.1 code-point 011 flow-control-queue 3
set class-of-service congestion-notification-profile LF-ROCE-CNP-2M pfc-watchdog poll-interval 100
set class-of-service congestion-notification-profile LF-ROCE-CNP-2M pfc-watchdog detection 2
set class-of-service congestion-notification-profile LF-ROCE-CNP-2M pfc-watchdog recovery-time 400
delete class-of-service congestion-notification-profile LF-ROCE-CNP-3M
set class-of-service congestion-notification-profile LF-ROCE-CNP-3M input dscp code-point 011010 pfc
set class-of-service congestion-notification-profile LF-ROCE-CNP-3M input cable-length 3
set class-of-service congestion-notification-profile LF-ROCE-CNP-3M output ieee-802.1 code-point 011 flow-control-queue 3
set class-of-service congestion-notification-profile LF-ROCE-CNP-3M pfc-watchdog poll-interval 100
set class-of-service congestion-notification-profile LF-ROCE-CNP-3M pfc-watchdog detection 2
set class-of-service congestion-notification-profile LF-ROCE-CNP-3M pfc-watchdog recovery-time 400
set class-of-service drop-profiles LF-ROCE-DP-5-50-20 interpolate fill-level [ 5 50 ]
set class-of-service drop-profiles LF-ROCE-DP-5-50-20 interpolate drop-probability [ 0 20 ]
delete class-of-service schedulers LF-ROCE-TC0
set class-of-service schedulers LF-ROCE-TC0 transmit-rate percent 50
delete class-of-service schedulers LF-ROCE-TC3-5-50-20
set class-of-service schedulers LF-ROCE-TC3-5-50-20 transmit-rate percent 50
set class-of-service schedulers LF-ROCE-TC3-5-50-20 explicit-congestion-notification
set class-of-service schedulers LF-ROCE-TC3-5-50-20 drop-profile-map loss-priority low protocol any drop-profile LF-ROCE-DP-5-50-20
delete class-of-service schedulers LF-ROCE-TC6
set class-of-service schedulers LF-ROCE-TC6 priority strict-high
delete class-of-service scheduler-maps LF-ROCE-SM-5-50-20
set class-of-service scheduler-maps LF-ROCE-SM-5-50-20 forwarding-class LF-ROCE-TC0 scheduler LF-ROCE-TC0
set class-of-service scheduler-maps LF-ROCE-SM-5-50-20 forwarding-class LF-ROCE-TC3 scheduler LF-ROCE-TC3-5-50-20
set class-of-service scheduler-maps LF-ROCE-SM-5-50-20 forwarding-class LF-ROCE-TC6 scheduler LF-ROCE-TC6
set class-of-service interfaces et-0/0/1 classifiers dscp LF-ROCE-DSCP
set class-of-service interfaces et-0/0/1 congestion-notification-profile LF-ROCE-CNP-2M
set class-of-service interfaces et-0/0/1 scheduler-map LF-ROCE-SM-5-50-20
set interfaces et-0/0/1 description "gpu1 mlx5_1"
set interfaces et-0/0/1 mtu 9214
set class-of-service interfaces et-0/0/31 classifiers dscp LF-ROCE-DSCP
set class-of-service interfaces et-0/0/31 congestion-notification-profile LF-ROCE-CNP-3M
set class-of-service interfaces et-0/0/31 scheduler-map LF-ROCE-SM-5-50-20
set interfaces et-0/0/31 description "to spine1 Ethernet2/1"
set interfaces et-0/0/31 mtu 9214
""".splitlines()

PARSED_PORT = {
    "description": "gpu1 mlx5_1",
    "mtu": 9214,
    "trust": "dscp",
    "pfc_enabled": True,
    "cable_length_m": 2,
    "pfc_priorities": [3],
    "ecn": {"3": {"min_threshold_percent": 5, "max_threshold_percent": 50, "max_probability_percent": 20}},
    "strict_queues": [6],
    "bandwidth_percent": {"0": 50, "3": 50},
    "watchdog": True,
}


# --- pure --------------------------------------------------------------------------------------


def test_render_exact_lines_in_order():
    assert junos.Driver.render(make_plan()) == EXPECTED


def test_render_is_stable():
    plan = make_plan()
    assert junos.Driver.render(plan) == junos.Driver.render(copy.deepcopy(plan))


def test_render_takes_every_number_from_the_plan():
    plan = make_plan(
        data={"dscp": 24, "priority": 2, "bandwidth_percent": 60},
        cnp={"dscp": 16, "priority": 5},
        pfc={"priorities": [2], "watchdog": {"detection_time_ms": 300, "restoration_time_ms": 900}},
        ecn={"min_threshold_bytes": 1_200_000, "max_threshold_bytes": 3_600_000, "max_probability_percent": 7},
        mtu={"switch": 9216},
    )
    lines = junos.Driver.render(plan)
    assert "set class-of-service forwarding-classes class LF-ROCE-TC2 pfc-priority 2" in lines
    assert "set class-of-service classifiers dscp LF-ROCE-DSCP forwarding-class LF-ROCE-TC2 loss-priority low code-points 011000" in lines
    assert "set class-of-service classifiers dscp LF-ROCE-DSCP forwarding-class LF-ROCE-TC5 loss-priority low code-points 010000" in lines
    assert "set class-of-service congestion-notification-profile LF-ROCE-CNP-2M input dscp code-point 011000 pfc" in lines
    assert "set class-of-service congestion-notification-profile LF-ROCE-CNP-2M output ieee-802.1 code-point 010 flow-control-queue 2" in lines
    # 300 ms = 2 polls of 150 ms; recovery as given
    assert "set class-of-service congestion-notification-profile LF-ROCE-CNP-2M pfc-watchdog poll-interval 150" in lines
    assert "set class-of-service congestion-notification-profile LF-ROCE-CNP-2M pfc-watchdog recovery-time 900" in lines
    assert "set class-of-service drop-profiles LF-ROCE-DP-10-30-7 interpolate fill-level [ 10 30 ]" in lines
    assert "set class-of-service schedulers LF-ROCE-TC2-10-30-7 transmit-rate percent 60" in lines
    assert "set class-of-service schedulers LF-ROCE-TC0 transmit-rate percent 40" in lines
    assert "set class-of-service schedulers LF-ROCE-TC5 priority strict-high" in lines
    assert "set interfaces et-0/0/1 mtu 9216" in lines


def test_render_watchdog_off_and_odd_detection_time():
    off = junos.Driver.render(make_plan(pfc={"watchdog": {"enabled": False}}))
    assert not [line for line in off if "pfc-watchdog" in line]
    # the CNP is deleted and rebuilt, so a watchdog configured before goes away
    assert "delete class-of-service congestion-notification-profile LF-ROCE-CNP-2M" in off
    odd = junos.Driver.render(make_plan(pfc={"watchdog": {"detection_time_ms": 1001}}))
    assert "set class-of-service congestion-notification-profile LF-ROCE-CNP-2M pfc-watchdog poll-interval 143" in odd
    assert "set class-of-service congestion-notification-profile LF-ROCE-CNP-2M pfc-watchdog detection 7" in odd


@pytest.mark.parametrize(
    "change, message",
    [
        ({"pfc": {"watchdog": {"action": "forward"}}}, "watchdog action 'forward'"),
        ({"pfc": {"watchdog": {"detection_time_ms": 4999}}}, "detection_time_ms 4999"),
    ],
)
def test_render_refuses_what_junos_cannot_express(change, message):
    with pytest.raises(ValueError, match=message):
        junos.Driver.render(make_plan(**change))


def test_render_needs_the_queue_buffer_for_ecn():
    plan = make_plan()
    del plan["queue_buffer_bytes"]
    with pytest.raises(ValueError, match="queue_buffer_bytes"):
        junos.Driver.render(plan)
    plan["ports"]["et-0/0/1"]["ecn"]["queue_buffer_bytes"] = 600_000  # Kmax above the buffer
    with pytest.raises(ValueError, match="low < high < 100"):
        junos.Driver.render(plan)


def test_render_refuses_a_control_character():
    plan = make_plan()
    plan["ports"]["et-0/0/1"]["description"] = "x\nset system root-authentication"
    with pytest.raises(_base.DeviceError, match="control character"):
        junos.Driver.render(plan)


def test_parse_render_output():
    parsed = junos.Driver.parse("\n".join(line for line in EXPECTED if line.startswith("set ")))
    assert parsed["dscp_map"] == {"26": 3, "48": 6}
    assert parsed["watchdog"] == {"enabled": True, "detection_time_ms": 200, "restoration_time_ms": 400, "action": "drop"}
    assert parsed["interfaces"]["et-0/0/1"] == PARSED_PORT
    assert parsed["interfaces"]["et-0/0/31"]["description"] == "to spine1 Ethernet2/1"


def test_parse_fixture_real_display_set_layout():
    """Junos prints one line per leaf-list value and binds classifiers per unit; defaults apply to a bare pfc-watchdog."""
    parsed = junos.Driver.parse((FIXTURES / "show_configuration_display_set.txt").read_text())
    assert parsed["dscp_map"] == {"24": 3, "26": 3, "48": 6}
    assert parsed["watchdog"] == {"enabled": True, "detection_time_ms": 200, "restoration_time_ms": 200, "action": "drop"}
    port = parsed["interfaces"]["et-0/0/0"]
    assert port == {
        "description": "gpu1 mlx5_0",
        "mtu": 9216,
        "trust": "dscp",
        "pfc_enabled": True,
        # the fixture's profile sets no cable length: Junos assumes 100 m
        "cable_length_m": 100,
        "pfc_priorities": [3],
        "ecn": {"3": {"min_threshold_percent": 55, "max_threshold_percent": 90, "max_probability_percent": 100}},
        "strict_queues": [6],
        "bandwidth_percent": {"0": 40, "3": 60},
        "watchdog": True,
    }
    bare = parsed["interfaces"]["et-0/0/5"]
    assert bare == {
        "description": None,
        "mtu": 1514,
        "trust": None,
        "pfc_enabled": False,
        "cable_length_m": None,
        "pfc_priorities": [],
        "ecn": {},
        "strict_queues": [],
        "bandwidth_percent": {},
        "watchdog": False,
    }


def test_parse_empty():
    assert junos.Driver.parse("") == {
        "dscp_map": {},
        "watchdog": {"enabled": False, "detection_time_ms": None, "restoration_time_ms": None, "action": None},
        "interfaces": {},
    }


# --- against the simulator ---------------------------------------------------------------------

netmiko = pytest.importorskip("netmiko")
SimProcess = pytest.importorskip("switchsim.client").SimProcess


@pytest.fixture(scope="module")
def sim(tmp_path_factory):
    cfg = {
        "time_scale": SCALE,
        "switches": [{"name": "qfx1", "platform": "junos", "port": 0, "username": USER, "password": PASSWORD}],
    }
    with SimProcess(cfg, str(tmp_path_factory.mktemp("junos-sim"))) as proc:
        yield proc


@pytest.fixture
def switch(sim):
    """A clean switch for every test: no faults, nothing pending, the initial config."""
    base = sim.running("qfx1")
    yield sim
    sim.set_faults("qfx1", {}, replace=True)
    assert wait_until(lambda: not sim.pending("qfx1")["pending_commit"], 10)
    # The simulator keeps the shared candidate it had when a commit confirmed
    # expired (real Junos commits the rollback, so its candidate matches the
    # active config again): clear it so the next test starts clean.
    driver = connect(sim)
    try:
        driver._run(["configure exclusive", "rollback 0", "exit configuration-mode"], _base.UNCHANGED)  # pylint: disable=protected-access
    finally:
        driver.conn.disconnect()
    assert sim.running("qfx1") == base


def connect(sim):
    cls = junos.Driver.connection_class()
    conn = cls(
        host="127.0.0.1",
        port=sim.port("qfx1"),
        username=USER,
        password=PASSWORD,
        ssh_strict=False,
        system_host_keys=False,
        allow_agent=False,
        use_keys=False,
        conn_timeout=10,
        fast_cli=True,
    )
    driver = junos.Driver(conn, "qfx1")
    driver.prepare()
    return driver


@pytest.fixture
def drv(switch):
    driver = connect(switch)
    yield driver
    try:
        driver.conn.disconnect()
    except (OSError, EOFError):
        pass


def sim_lines():
    """The plan rendered for the simulator's ports."""
    return junos.Driver.render(make_plan())


def wait_until(predicate, timeout=5.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def undo(sim, before):
    """Put the committed config back (a new connection, rollback to the text we saw before)."""
    driver = connect(sim)
    try:
        driver.open_session("undo")
        driver.load(["delete class-of-service", "delete interfaces et-0/0/1", "delete interfaces et-0/0/31"])
        if driver.diff():
            driver.commit(None)
            driver.abort()
        else:
            driver.abort()
    finally:
        driver.conn.disconnect()
    assert sim.running("qfx1") == before


def test_transaction_commit_confirm_readback_then_idempotent(switch, drv):
    before = switch.running("qfx1")
    lines = sim_lines()
    started = time.monotonic()
    drv.open_session("lossless-fabric-20260101000000")
    drv.load(lines)
    diff = drv.diff()
    assert "+   class-of-service {" in diff and "LF-ROCE-CNP" in diff
    drv.commit(300)
    assert switch.pending("qfx1")["pending_commit"]
    pending = drv.pending()
    assert pending == {"session": "lossless-fabric-20260101000000", "remaining_s": 300}
    assert drv.readback_missing(lines) == []
    drv.confirm()
    assert not switch.pending("qfx1")["pending_commit"]
    drv.save()
    elapsed = time.monotonic() - started
    assert elapsed < 3, elapsed
    assert drv.pending() is None
    parsed = junos.Driver.parse(drv.gather())
    assert parsed["interfaces"]["et-0/0/1"] == dict(PARSED_PORT, mtu=9214)
    assert parsed["dscp_map"] == {"26": 3, "48": 6}

    # the same lines again: empty device diff, nothing committed
    commits = [e for e in switch.log("qfx1")["events"] if e["event"].startswith("commit")]
    drv.open_session("again")
    drv.load(lines)
    assert drv.diff() == ""
    drv.abort()
    assert [e for e in switch.log("qfx1")["events"] if e["event"].startswith("commit")] == commits
    assert not switch.pending("qfx1")["pending_commit"]
    undo(switch, before)


def test_confirmed_commit_expires_and_config_is_gone(switch, drv):
    before = switch.running("qfx1")
    drv.open_session("expire")
    drv.load(sim_lines())
    drv.commit(30)  # -> commit confirmed 1 = 0.6 s at this time scale
    assert "LF-ROCE-CNP" in switch.running("qfx1")
    assert wait_until(lambda: not switch.pending("qfx1")["pending_commit"], 5)
    assert switch.running("qfx1") == before
    drv.abort()


def test_rollback_of_pending_commit(switch, drv):
    before = switch.running("qfx1")
    drv.open_session("rollme")
    drv.load(sim_lines())
    drv.commit(600)
    assert "LF-ROCE-CNP" in switch.running("qfx1")
    drv.rollback("rollme")
    assert not switch.pending("qfx1")["pending_commit"]
    assert switch.running("qfx1") == before
    assert drv.pending() is None


def test_confirm_and_rollback_from_a_new_connection(switch, drv):
    """The confirmed/rolled_back states of switch_config run on a later connection."""
    before = switch.running("qfx1")
    drv.open_session("later")
    drv.load(sim_lines())
    drv.commit(600)
    drv.conn.disconnect()
    other = connect(switch)
    try:
        assert 0 < other.pending()["remaining_s"] <= 600
        other.rollback()
        assert switch.running("qfx1") == before
        assert other.pending() is None
    finally:
        other.conn.disconnect()


def test_rejected_line_names_line_and_junos_error(switch, drv):
    before = switch.running("qfx1")
    lines = sim_lines()
    bad = next(line for line in lines if "drop-profile-map" in line)
    switch.set_faults("qfx1", {"reject_lines": ["drop-profile-map"]})
    drv.open_session("reject")
    with pytest.raises(_base.DeviceError) as err:
        drv.load(lines)
    assert err.value.line == bad
    assert "syntax error" in err.value.device_said
    assert err.value.state == _base.UNCHANGED
    assert switch.running("qfx1") == before
    # the session was discarded and the CLI is back in operational mode
    assert drv.conn.find_prompt().endswith(">")


def test_real_syntax_error_is_reported(switch, drv):
    drv.open_session("typo")
    with pytest.raises(_base.DeviceError) as err:
        drv.load(["set class-of-service forwarding-classes class X queue-num 99"])
    assert "not within range" in err.value.device_said
    assert err.value.state == _base.UNCHANGED


def test_commit_check_failure_leaves_device_unchanged(switch, drv):
    before = switch.running("qfx1")
    drv.open_session("check")
    drv.load(["set class-of-service interfaces et-0/0/1 scheduler-map LF-ROCE-SM-MISSING"])
    assert drv.diff()
    with pytest.raises(_base.DeviceError) as err:
        drv.commit(300)
    assert err.value.line == "commit check"
    assert "Scheduler map LF-ROCE-SM-MISSING is not defined" in err.value.device_said
    assert err.value.state == _base.UNCHANGED
    assert switch.running("qfx1") == before
    assert not switch.pending("qfx1")["pending_commit"]


def test_commit_error_leaves_device_unchanged(switch, drv):
    before = switch.running("qfx1")
    switch.set_faults("qfx1", {"commit_error": "mgd: commit failed: out of memory"})
    drv.open_session("fault")
    drv.load(sim_lines())
    with pytest.raises(_base.DeviceError) as err:
        drv.commit(300)
    assert "out of memory" in err.value.device_said
    assert err.value.state == _base.UNCHANGED
    assert switch.running("qfx1") == before


def test_connection_dropped_while_loading(switch, drv):
    before = switch.running("qfx1")
    switch.set_faults("qfx1", {"drop_on": "scheduler-maps"})
    drv.open_session("drop")
    with pytest.raises(_base.DeviceError) as err:
        drv.load(sim_lines())
    assert err.value.state == _base.UNCHANGED
    assert "connection lost" in str(err.value)
    assert switch.running("qfx1") == before


def test_connection_dropped_after_commit_confirmed_is_pending(switch, drv):
    before = switch.running("qfx1")
    drv.open_session("pending")
    drv.load(sim_lines())
    switch.set_faults("qfx1", {"drop_on": "^commit$"})
    drv.commit(30)
    with pytest.raises(_base.DeviceError) as err:
        drv.confirm()
    assert err.value.state == _base.PENDING
    assert wait_until(lambda: not switch.pending("qfx1")["pending_commit"], 5)
    assert switch.running("qfx1") == before


def test_twenty_line_push_time(switch, drv):
    """Report the time of a 20-line transaction (open, load, diff, commit confirmed, read back, confirm)."""
    before = switch.running("qfx1")
    # 20 lines that commit on their own (a drop profile needs both of its lines)
    lines = [line for line in sim_lines() if line.startswith("set ") and " drop-profiles " not in line][:20]
    started = time.monotonic()
    drv.open_session("speed")
    drv.load(lines)
    assert drv.diff()
    drv.commit(300)
    assert drv.readback_missing(lines) == []
    drv.confirm()
    elapsed = time.monotonic() - started
    sys.stderr.write("\njunos 20-line push: %.3f s\n" % elapsed)
    # ~0.27 s against the simulator, of which ~0.25 s is Nagle + delayed ACK on
    # its sockets (no TCP_NODELAY); ~0.02 s with TCP_NODELAY, as OpenSSH sets.
    assert elapsed < 2.0
    undo(switch, before)
