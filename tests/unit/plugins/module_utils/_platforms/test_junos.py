# SPDX-License-Identifier: GPL-3.0-or-later
"""Junos driver: render and parse (pure), and the transaction against the switch simulator over real SSH."""

from __future__ import annotations

import copy
import pathlib
import sys
import time

import pytest

from ansible_collections.lossless.fabric.plugins.module_utils._intent import _plan
from ansible_collections.lossless.fabric.plugins.module_utils._platforms import _base
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.junos import _driver as junos
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.junos import _readers as junos_readers

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
    plan = _plan.build_plan(intent, devices)["devices"]["leaf2"]
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
set class-of-service drop-profiles LF-ROCE-DP-55-90-100 interpolate fill-level [ 55 90 ]
set class-of-service drop-profiles LF-ROCE-DP-55-90-100 interpolate drop-probability [ 0 100 ]
delete class-of-service schedulers LF-ROCE-TC0
set class-of-service schedulers LF-ROCE-TC0 transmit-rate percent 42
delete class-of-service schedulers LF-ROCE-TC3-55-90-100
set class-of-service schedulers LF-ROCE-TC3-55-90-100 transmit-rate percent 43
set class-of-service schedulers LF-ROCE-TC3-55-90-100 explicit-congestion-notification
set class-of-service schedulers LF-ROCE-TC3-55-90-100 drop-profile-map loss-priority low protocol any drop-profile LF-ROCE-DP-55-90-100
delete class-of-service schedulers LF-ROCE-TC6
set class-of-service schedulers LF-ROCE-TC6 priority strict-high
set class-of-service schedulers LF-ROCE-TC6 transmit-rate percent 5
delete class-of-service schedulers LF-ROCE-NC
set class-of-service schedulers LF-ROCE-NC transmit-rate percent 5
delete class-of-service schedulers LF-ROCE-MC
set class-of-service schedulers LF-ROCE-MC transmit-rate percent 5
delete class-of-service scheduler-maps LF-ROCE-SM-55-90-100
set class-of-service scheduler-maps LF-ROCE-SM-55-90-100 forwarding-class LF-ROCE-TC0 scheduler LF-ROCE-TC0
set class-of-service scheduler-maps LF-ROCE-SM-55-90-100 forwarding-class best-effort scheduler LF-ROCE-TC0
set class-of-service scheduler-maps LF-ROCE-SM-55-90-100 forwarding-class LF-ROCE-TC3 scheduler LF-ROCE-TC3-55-90-100
set class-of-service scheduler-maps LF-ROCE-SM-55-90-100 forwarding-class LF-ROCE-TC6 scheduler LF-ROCE-TC6
set class-of-service scheduler-maps LF-ROCE-SM-55-90-100 forwarding-class network-control scheduler LF-ROCE-NC
set class-of-service scheduler-maps LF-ROCE-SM-55-90-100 forwarding-class mcast scheduler LF-ROCE-MC
set class-of-service shared-buffer ingress buffer-partition lossless percent 66
set class-of-service shared-buffer ingress buffer-partition lossless-headroom percent 24
set class-of-service shared-buffer ingress buffer-partition lossy percent 10
set class-of-service shared-buffer egress buffer-partition lossless percent 66
set class-of-service shared-buffer egress buffer-partition lossy percent 10
set class-of-service interfaces et-0/0/1 classifiers dscp LF-ROCE-DSCP
set class-of-service interfaces et-0/0/1 congestion-notification-profile LF-ROCE-CNP-2M
delete class-of-service interfaces et-0/0/1 forwarding-class-set
set class-of-service interfaces et-0/0/1 scheduler-map LF-ROCE-SM-55-90-100
set protocols dcbx interface et-0/0/1 priority-flow-control no-auto-negotiation
set interfaces et-0/0/1 description "gpu1 mlx5_1"
set interfaces et-0/0/1 mtu 9216
set class-of-service interfaces et-0/0/31 classifiers dscp LF-ROCE-DSCP
set class-of-service interfaces et-0/0/31 congestion-notification-profile LF-ROCE-CNP-3M
delete class-of-service interfaces et-0/0/31 forwarding-class-set
set class-of-service interfaces et-0/0/31 scheduler-map LF-ROCE-SM-55-90-100
set protocols dcbx interface et-0/0/31 priority-flow-control no-auto-negotiation
set interfaces et-0/0/31 description "to spine1 Ethernet2/1"
set interfaces et-0/0/31 mtu 9216
""".splitlines()

PARSED_PORT = {
    "description": "gpu1 mlx5_1",
    # the IP MTU (media MTU 9216 less the 14-byte Ethernet header), as the plan counts it
    "mtu": 9202,
    "media_mtu": 9216,
    "trust": "dscp",
    "pfc_enabled": True,
    "cable_length_m": 2,
    "pfc_priorities": [3],
    "pfc_queues": {"3": [3]},
    "ecn": {"3": {"min_threshold_percent": 55, "max_threshold_percent": 90, "max_probability_percent": 100}},
    "strict_queues": [6],
    # every queue the port uses: network-control (7) and mcast (8) too
    "bandwidth_percent": {"0": 42, "3": 43, "6": 5, "7": 5, "8": 5},
    "watchdog": True,
    "scheduling": "port",
    "dcbx_pfc": "no-auto-negotiation",
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
        mtu={"switch": 9000, "host": 8900},
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
    # plan shares 60/40 of what the strict, network-control and mcast queues leave (85 %)
    assert "set class-of-service schedulers LF-ROCE-TC2-10-30-7 transmit-rate percent 51" in lines
    assert "set class-of-service schedulers LF-ROCE-TC0 transmit-rate percent 34" in lines
    assert "set class-of-service schedulers LF-ROCE-TC5 priority strict-high" in lines
    assert "set class-of-service schedulers LF-ROCE-TC5 transmit-rate percent 5" in lines
    # the IP MTU 9000 plus the 14-byte Ethernet header Junos counts
    assert "set interfaces et-0/0/1 mtu 9014" in lines


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
        "mtu": 9202,
        "media_mtu": 9216,
        "trust": "dscp",
        "pfc_enabled": True,
        # the fixture's profile sets no cable length: Junos assumes 100 m
        "cable_length_m": 100,
        "pfc_priorities": [3],
        "pfc_queues": {"3": [3]},
        "ecn": {"3": {"min_threshold_percent": 55, "max_threshold_percent": 90, "max_probability_percent": 100}},
        "strict_queues": [6],
        "bandwidth_percent": {"0": 40, "3": 60},
        "watchdog": True,
        "scheduling": "port",
        "dcbx_pfc": None,
    }
    bare = parsed["interfaces"]["et-0/0/5"]
    assert bare == {
        "description": None,
        "mtu": 1500,
        "media_mtu": 1514,
        "trust": None,
        "pfc_enabled": False,
        "cable_length_m": None,
        "pfc_priorities": [],
        "pfc_queues": {},
        "ecn": {},
        "strict_queues": [],
        "bandwidth_percent": {},
        "watchdog": False,
        "scheduling": None,
        "dcbx_pfc": None,
    }


def test_parse_empty():
    """An empty configuration is a configuration with nothing in it (not unknown input)."""
    assert junos.Driver.parse("") == {
        "dscp_map": {},
        "watchdog": {"enabled": False, "detection_time_ms": None, "restoration_time_ms": None, "action": None},
        "shared_buffer": {},
        "interfaces": {},
        "wildcards": {},
    }


def test_parse_jvd_qfx5240_hierarchical_wildcards_and_queue_not_priority():
    """Juniper's AI/ML JVD leaf (QFX5240, braces form): 'et-*' / 'unit *' bindings, NO-LOSS on
    queue 4 with PFC priority 3, CNP on queue 3 strict-high, inet MTU 9170 on a 9216 port."""
    parsed = junos.Driver.parse((FIXTURES / "jvd_aiml_leaf1_qfx5240-64od.conf").read_text())
    assert parsed["dscp_map"] == {"26": 4, "48": 3}
    assert parsed["shared_buffer"] == {"egress": {"lossless": 66, "lossy": 10}, "ingress": {"lossless": 66, "lossless-headroom": 24, "lossy": 10}}
    assert parsed["watchdog"] == {"enabled": True, "detection_time_ms": 200, "restoration_time_ms": 200, "action": "drop"}
    star = parsed["wildcards"]["et-*"]
    assert star["pfc_priorities"] == [3] and star["pfc_queues"] == {"3": [4]}
    assert star["ecn"] == {"4": {"min_threshold_percent": 55, "max_threshold_percent": 90, "max_probability_percent": 100}}
    assert star["strict_queues"] == [3] and star["bandwidth_percent"] == {"3": 5}
    port = parsed["interfaces"]["et-0/0/0:0"]
    assert port["trust"] == "dscp" and port["pfc_enabled"] and port["pfc_priorities"] == [3]
    assert port["mtu"] == 9170 and port["media_mtu"] == 9216
    assert port["ecn"] == star["ecn"] and port["scheduling"] == "port"
    assert parsed["interfaces"]["lo0"]["trust"] is None  # lo0 does not match et-*


def test_parse_both_forms_agree():
    """The hierarchical form turned into set lines reads the same as the display-set form."""
    braces = (FIXTURES / "jvd_aiml_leaf1_qfx5240-64od.conf").read_text()
    as_set = "\n".join(junos_readers.set_lines(braces))
    assert junos.Driver.parse(as_set) == junos.Driver.parse(braces)
    assert "set class-of-service interfaces et-* unit * classifiers dscp mydscp" in as_set
    assert "set class-of-service drop-profiles dp1 interpolate fill-level [ 55 90 ]" in as_set
    assert "set class-of-service forwarding-classes class NO-LOSS queue-num 4 no-loss pfc-priority 3" in as_set


def test_parse_real_display_set_with_code_point_aliases():
    """Juniper/jvd ACX7100 'display set' (excerpt): classifiers name DSCPs by alias (be, cs3, af31, ef)."""
    parsed = junos.Driver.parse((FIXTURES / "jvd_ag1-2_acx7100-32c.set").read_text())
    assert parsed["dscp_map"]["46"] == 5  # ef -> FC-REALTIME queue 5
    assert parsed["dscp_map"]["26"] == 4  # af31 -> FC-HIGH queue 4
    assert parsed["dscp_map"]["0"] == 0  # be
    port = parsed["interfaces"]["et-0/0/24:1"]
    assert port["trust"] == "dscp" and port["scheduling"] == "port" and not port["pfc_enabled"]


def test_parse_ets_bindings_and_inactive_statements():
    text = """
## Last commit: 2026-01-01 00:00:00 UTC by netops
version 21.4R3;
class-of-service {
    forwarding-classes {
        class ROCE queue-num 5 no-loss pfc-priority 3;
    }
    classifiers {
        dscp D {
            forwarding-class ROCE {
                loss-priority low code-points af31;
            }
        }
    }
    congestion-notification-profile P {
        input {
            dscp {
                code-point 011010 {
                    pfc;
                }
            }
        }
        output {
            ieee-802.1 {
                code-point 011 {
                    flow-control-queue 5;
                }
            }
        }
    }
    forwarding-class-sets {
        UC {
            class ROCE;
        }
    }
    traffic-control-profiles {
        T {
            scheduler-map M;
            guaranteed-rate percent 95;
        }
    }
    scheduler-maps {
        M {
            forwarding-class ROCE scheduler S;
        }
    }
    schedulers {
        S {
            transmit-rate percent 60;
            /* marked by ECN */
            explicit-congestion-notification;
            inactive: priority strict-high;
        }
    }
    interfaces {
        xe-0/0/1 {
            forwarding-class-set UC {
                output-traffic-control-profile T;
            }
            congestion-notification-profile P;
            unit 0 {
                classifiers {
                    dscp D;
                }
            }
        }
    }
}
protocols {
    dcbx {
        interface xe-0/0/1 {
            priority-flow-control {
                no-auto-negotiation;
            }
        }
    }
}
"""
    port = junos.Driver.parse(text)["interfaces"]["xe-0/0/1"]
    assert port["scheduling"] == "ets" and port["bandwidth_percent"] == {"5": 60}
    assert port["strict_queues"] == []  # the inactive statement is not in effect
    assert port["pfc_priorities"] == [3] and port["pfc_queues"] == {"3": [5]}
    assert port["dcbx_pfc"] == "no-auto-negotiation"
    assert junos.Driver.parse(text)["dscp_map"] == {"26": 5}


@pytest.mark.parametrize(
    "text, message",
    [
        ("interface Ethernet1\n   mtu 9214\n", "not Junos configuration"),
        ("nv set qos roce mode lossless\n", "not Junos configuration"),
        ('{"configuration": {"class-of-service": {}}}', "display json"),
        ("<rpc-reply><configuration/></rpc-reply>", "XML output"),
        ("set class-of-service forwarding-classes class A queue-num 1\nqos map dscp 26 to traffic-class 3\n", "line 2 is not a set statement"),
        ("class-of-service {\n    forwarding-classes {\n        class A queue-num 1;\n", "unbalanced braces"),
    ],
)
def test_parse_refuses_what_it_does_not_read(text, message):
    with pytest.raises(ValueError, match=message) as info:
        junos.Driver.parse(text)
    assert "junos" in str(info.value) and "display set" in str(info.value)


def test_parse_deactivated_display_set_statement():
    text = (
        "set interfaces et-0/0/1 mtu 9216\n"
        "set class-of-service interfaces et-0/0/1 scheduler-map M\n"
        "deactivate class-of-service interfaces et-0/0/1 scheduler-map\n"
    )
    assert junos.Driver.parse(text)["interfaces"]["et-0/0/1"]["scheduling"] is None


SHOW_SYSTEM_COMMIT = """\
{master:0}
mist@myQFX> show system commit
0   2024-05-06 06:38:48 UTC by mist via netconf
    oc-script
1   2024-04-19 11:47:52 UTC by mist via netconf
    oc-script
2   2024-04-02 03:35:34 UTC by mist via netconf commit confirmed, rollback in 10mins
    mist-authkeys
3   2024-04-02 03:35:26 UTC by mist via netconf
6   2024-04-02 03:11:04 UTC by lab via cli
"""


def test_commit_history_real_form_old_confirmed_entry_is_not_pending():
    """A public QFX capture (fixtures/junos/SOURCES.md): entry 2 keeps 'commit confirmed,
    rollback in 10mins' after it was confirmed; only entry 0 can be pending."""
    entries = junos.parse_commit_history(SHOW_SYSTEM_COMMIT)
    assert [e["index"] for e in entries] == [0, 1, 2, 3, 6]
    assert entries[2]["pending_minutes"] == 10 and entries[2]["comment"] == "mist-authkeys" and entries[2]["via"] == "netconf"
    assert entries[0]["pending_minutes"] is None and entries[0]["comment"] == "oc-script"
    assert entries[4]["comment"] is None


def test_commit_history_refuses_unknown_text():
    with pytest.raises(ValueError, match="not a commit entry"):
        junos.parse_commit_history("Revision 12 applied by admin\n")


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
    # A dropped connection releases its exclusive lock when the simulator notices the close
    # (as mgd does when the session ends): retry until the lock is free.
    deadline = time.monotonic() + 5
    while True:
        driver = connect(sim)
        try:
            out = driver._run(["configure exclusive"], _base.UNCHANGED)[0]  # pylint: disable=protected-access
            if "error:" not in out:
                driver._run(["rollback 0", "exit configuration-mode"], _base.UNCHANGED)  # pylint: disable=protected-access
                break
        finally:
            driver.conn.disconnect()
        assert time.monotonic() < deadline, out
        time.sleep(0.05)
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
        driver.load(["delete class-of-service", "delete interfaces et-0/0/1", "delete interfaces et-0/0/31", "delete protocols"])
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
    # read from 'show system commit' as Junos prints it: entry 0 '... via cli commit confirmed,
    # rollback in 5mins', its comment on the next line
    assert {k: pending[k] for k in ("session", "remaining_s", "user")} == {"session": "lossless-fabric-20260101000000", "remaining_s": 300, "user": USER}
    assert drv.readback_missing(lines) == []
    drv.confirm()
    assert not switch.pending("qfx1")["pending_commit"]
    drv.save()
    elapsed = time.monotonic() - started
    assert elapsed < 3, elapsed
    assert drv.pending() is None
    parsed = junos.Driver.parse(drv.gather())
    assert parsed["interfaces"]["et-0/0/1"] == PARSED_PORT
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
        other.rollback("later")
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


def test_confirm_timeout_beyond_junos_range_is_refused_before_commit(switch, drv):
    """Juniper's <confirm-timeout> range is 1-65,535 minutes: a longer timer is refused by the
    driver (nothing sent to commit, state unchanged), not left for the device to reject."""
    before = switch.running("qfx1")
    drv.open_session("toolong")
    drv.load(sim_lines())
    with pytest.raises(_base.DeviceError) as err:
        drv.commit(65535 * 60 + 1)
    assert "1-65535 minutes" in str(err.value)
    assert err.value.device_said is None
    assert err.value.state == _base.UNCHANGED
    assert switch.running("qfx1") == before
    assert not switch.pending("qfx1")["pending_commit"]
    assert drv.conn.find_prompt().endswith(">")


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


# --- issue 15: one run never touches another run's pending commit ------------------------------


def test_pending_commit_of_another_run_is_refused_and_left_alone(switch, drv):
    before = switch.running("qfx1")
    drv.open_session("run-a")
    drv.load(sim_lines())
    drv.commit(600)
    other = connect(switch)
    try:
        with pytest.raises(_base.DeviceError) as err:
            other.open_session("run-b")
        assert err.value.state == _base.UNCHANGED
        assert "another commit is pending confirmation" in str(err.value) and "'run-a'" in str(err.value) and "by %s" % USER in str(err.value)
        # never confirm or roll back a commit this run did not make
        for act in (other.confirm, other.rollback):
            with pytest.raises(_base.DeviceError) as err:
                act("run-b")
            assert err.value.state == _base.PENDING and "not this run's" in str(err.value)
        assert switch.pending("qfx1")["pending_commit"]
        assert "LF-ROCE-CNP" in switch.running("qfx1")
    finally:
        other.conn.disconnect()
    drv.rollback("run-a")
    assert switch.running("qfx1") == before


def test_open_session_refuses_another_users_uncommitted_shared_edit(switch, drv):
    editor = connect(switch)
    try:
        editor._run(["configure", "set interfaces et-0/0/3 description other-user"], _base.UNCHANGED)  # pylint: disable=protected-access
        with pytest.raises(_base.DeviceError) as err:
            drv.open_session("run-c")
        assert err.value.state == _base.UNCHANGED
        assert "uncommitted changes of another user" in str(err.value) and "shared configuration database modified" in str(err.value)
    finally:
        editor._run(["rollback 0", "exit configuration-mode"], _base.UNCHANGED)  # pylint: disable=protected-access
        editor.conn.disconnect()


def test_open_session_refuses_an_exclusive_lock_naming_its_holder(switch, drv):
    holder = connect(switch)
    try:
        holder._run(["configure exclusive"], _base.UNCHANGED)  # pylint: disable=protected-access
        with pytest.raises(_base.DeviceError) as err:
            drv.open_session("run-d")
        assert "locked by %s" % USER in str(err.value) and err.value.state == _base.UNCHANGED
    finally:
        holder._run(["exit configuration-mode"], _base.UNCHANGED)  # pylint: disable=protected-access
        holder.conn.disconnect()


def test_connection_lost_after_commit_confirmed_reports_pending_not_unchanged(switch, drv):
    """The read-back after this run's commit confirmed loses the connection: the commit is
    pending on the device (its timer will roll it back), so the state says so."""
    before = switch.running("qfx1")
    drv.open_session("lost")
    lines = sim_lines()
    drv.load(lines)
    drv.commit(30)
    switch.set_faults("qfx1", {"drop_on": "show configuration class-of-service"})
    with pytest.raises(_base.DeviceError) as err:
        drv.readback_missing(lines)
    assert err.value.state == _base.PENDING
    assert "device state: pending confirmation" in str(err.value) and "connection lost during" in str(err.value)
    assert switch.pending("qfx1")["pending_commit"]
    assert wait_until(lambda: not switch.pending("qfx1")["pending_commit"], 5)
    assert switch.running("qfx1") == before


def test_connection_lost_during_the_commit_itself_is_unknown(switch, drv):
    before = switch.running("qfx1")
    drv.open_session("mid-commit")
    drv.load(sim_lines())
    switch.set_faults("qfx1", {"drop_on": "^commit confirmed"})
    with pytest.raises(_base.DeviceError) as err:
        drv.commit(30)
    assert err.value.state == _base.UNKNOWN
    assert wait_until(lambda: not switch.pending("qfx1")["pending_commit"], 5)
    assert switch.running("qfx1") == before


def test_ets_plan_commits_on_the_emulated_qfx5120_and_reads_back(switch, drv):
    """The ETS form (priority groups + traffic control profiles) against the simulator's
    QFX5120: commit check passes, the read-back holds every line, the parser sees ETS."""
    before = switch.running("qfx1")
    plan = make_plan()
    plan["junos"] = dict(plan["junos"], scheduling="ets", group_percent={"unicast": 95, "mcast": 5},
                         transmit_percent={"0": 45, "3": 45, "6": 5, "7": 5, "8": 100})
    lines = junos.Driver.render(plan)
    assert "set class-of-service interfaces et-0/0/1 forwarding-class-set LF-ROCE-MC output-traffic-control-profile LF-ROCE-TCP-MC" in lines
    assert not [line for line in lines if line.startswith("set class-of-service interfaces") and "scheduler-map" in line]
    drv.open_session("ets")
    drv.load(lines)
    drv.commit(300)
    assert drv.readback_missing(lines) == []
    drv.confirm("ets")
    port = junos.Driver.parse(drv.gather())["interfaces"]["et-0/0/1"]
    assert port["scheduling"] == "ets" and port["bandwidth_percent"] == {"0": 45, "3": 45, "6": 5, "7": 5, "8": 100}
    assert port["ecn"]["3"]["min_threshold_percent"] == 55
    undo(switch, before)


class _SilentChannel:
    """A connection whose device never prints a prompt again (a hung switch)."""

    base_prompt = "netops@qfx1"

    class remote_conn:  # noqa: N801  # netmiko's attribute name
        closed = False
        eof_received = False

    def write_channel(self, _data):
        pass

    def read_channel(self):
        return ""


def test_a_hung_switch_times_out_naming_device_step_and_state():
    driver = junos.Driver(_SilentChannel(), "qfx1")
    with pytest.raises(_base.DeviceError) as err:
        driver._run(["show system commit"], _base.UNCHANGED, timeout=0.05)  # pylint: disable=protected-access
    text = str(err.value)
    assert text.startswith("qfx1: no prompt after 0 of 1 commands within 0.05 s (step: 'show system commit')")
    assert err.value.state == _base.UNCHANGED
    driver._own_pending = True  # pylint: disable=protected-access  # after this run's commit confirmed
    with pytest.raises(_base.DeviceError) as err:
        driver._run(["show configuration class-of-service | display set"], _base.UNCHANGED, timeout=0.05)  # pylint: disable=protected-access
    assert err.value.state == _base.PENDING


class _ScriptedChannel(_SilentChannel):
    """Answers each command with the output the test gives for it, then the prompt."""

    def __init__(self, answers):
        self.answers = answers
        self.pending_out = ""

    def write_channel(self, data):
        for command in data.splitlines():
            self.pending_out += "%s\n%s\n\n%s> " % (command, self.answers.get(command, ""), self.base_prompt)

    def read_channel(self):
        out, self.pending_out = self.pending_out, ""
        return out


def test_gather_ignores_a_release_without_protocols_dcbx_but_not_a_cos_error():
    cos = "show configuration class-of-service | display set"
    dcbx = "show configuration protocols dcbx | display set"
    syntax = "                                   ^\nsyntax error."
    driver = junos.Driver(_ScriptedChannel({cos: "set class-of-service forwarding-classes class A queue-num 1", dcbx: syntax}), "qfx1")
    assert driver.gather() == "set class-of-service forwarding-classes class A queue-num 1\n"
    driver = junos.Driver(_ScriptedChannel({cos: syntax}), "qfx1")
    with pytest.raises(_base.DeviceError, match="reading the configuration failed") as err:
        driver.gather()
    assert err.value.line == cos and err.value.state == _base.UNCHANGED


def test_parse_a_pasted_capture_with_prompt_and_context_lines():
    text = (
        "{master:0}\n"
        "netops@qfx1> show configuration class-of-service\n"
        "forwarding-classes {\n"
        "    class NO-LOSS queue-num 4 no-loss pfc-priority 3;\n"
        "}\n"
    )
    # a hierarchy shown from below the top: its path comes from the pasted command line
    assert junos_readers.set_lines(text) == ["set class-of-service forwarding-classes class NO-LOSS queue-num 4 no-loss pfc-priority 3"]
    # without the command line: a statement only class-of-service has
    assert junos_readers.set_lines(text.split("\n", 2)[2]) == junos_readers.set_lines(text)
    with_path = "user@sw> show configuration interfaces et-0/0/1\nmtu 9216;\n"
    assert junos_readers.set_lines(with_path) == ["set interfaces et-0/0/1 mtu 9216"]
    full = (
        "{master:0}\nnetops@qfx1> show configuration | display set\n"
        "set class-of-service forwarding-classes class NO-LOSS queue-num 4\n\n{master:0}\nnetops@qfx1> \n"
    )
    assert junos.Driver.parse(full)["dscp_map"] == {}
    assert junos_readers.set_lines(full) == ["set class-of-service forwarding-classes class NO-LOSS queue-num 4"]


# -- LLDP neighbours: the fields that reach the link records (issue 32) --------------------------------------


def test_links_take_port_id_subtype_and_description_as_sent():
    """A real detail reply (fixtures/junos/SOURCES.md): 'Interface name' maps to the LLDP-MIB short name and the
    configured description reaches port_descr unchanged; a Junos neighbour's ifIndex form is in test_links.py."""
    command = "show lldp neighbors interface xe-0/1/0 | display xml"
    ends = junos.Driver.parse_links({command: (FIXTURES / "lldp_interface_napalm_normal_ex_fx_srx.xml").read_text()})
    assert ends["xe-0/1/0"]["neighbors"] == [{"system": "core05.tpe01", "port": "Ethernet3/2/1", "port_id_subtype": "ifname",
                                              "port_descr": "Po1:sw21.tpe01:xe-0/1/0", "chassis_id": "00:1c:73:ee:c0:46"}]
