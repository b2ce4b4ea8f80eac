# SPDX-License-Identifier: GPL-3.0-or-later
"""Arista EOS driver: pure render/parse/read-back, and transactions against the
switch simulator over real SSH (netmiko arista_eos)."""

from __future__ import annotations

import copy
import json
import pathlib
import sys
import time

import pytest

from ansible_collections.lossless.fabric.plugins.module_utils import _intent
from ansible_collections.lossless.fabric.plugins.module_utils._platforms import _base, eos

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[4]
FIXTURES = HERE / "fixtures" / "eos"


def small_plan(**roce) -> dict:
    intent = {
        "name": "lab",
        "transport": "roce",
        "roce": roce,
        "targets": {"collectives": {"all_reduce_perf": [{"min_size": "1G", "min_busbw": 180}]}},
    }
    devices = {
        "leaf1": {
            "kind": "switch",
            "platform": "eos",
            "ports": {
                "Ethernet2/1": {"speed": "100G", "cable_length_m": 40},
                "Ethernet1": {"speed": "400G", "description": "to gpu1 mlx5_0"},
            },
        }
    }
    return _intent.build_plan(intent, devices)["devices"]["leaf1"]


PORT_BLOCK = [
    "   mtu 9214",
    "   qos trust dscp",
    "   priority-flow-control on",
    "   priority-flow-control priority 3 no-drop",
    "   priority-flow-control pause watchdog",
    "   tx-queue 0",
    "      no priority",
    "      bandwidth percent 50",
    "   tx-queue 3",
    "      no priority",
    "      bandwidth percent 50",
]

EXPECTED = (
    [
        "qos map dscp 26 to traffic-class 3",
        "qos map dscp 48 to traffic-class 6",
        "priority-flow-control pause watchdog default timeout 0.20",
        "priority-flow-control pause watchdog default recovery-time 0.40",
        "priority-flow-control pause watchdog action drop",
        "interface Ethernet1",
        "   description to gpu1 mlx5_0",
    ]
    + PORT_BLOCK
    + [
        "      random-detect ecn minimum-threshold 600 kbytes maximum-threshold 6000 kbytes max-mark-probability 20",
        "      random-detect ecn count",
        "   tx-queue 6",
        "      priority strict",
        "interface Ethernet2/1",
    ]
    + PORT_BLOCK
    + [
        "      random-detect ecn minimum-threshold 150 kbytes maximum-threshold 1500 kbytes max-mark-probability 20",
        "      random-detect ecn count",
        "   tx-queue 6",
        "      priority strict",
    ]
)


# --- pure: render ---------------------------------------------------------------------------------


def test_class_attributes_and_connection_class():
    assert eos.Driver.platform == "eos" and eos.Driver.device_type == "arista_eos"
    from netmiko.arista.arista import AristaSSH

    assert eos.Driver.connection_class() is AristaSSH


def test_render_small_fabric_exact_lines_in_order():
    assert eos.Driver.render(small_plan()) == EXPECTED


def test_render_units_watchdog_variants():
    plan = small_plan(
        ecn={"min_threshold_bytes": 153600, "max_threshold_bytes": 1536000, "max_probability_percent": 100},
        pfc={"priorities": [3, 4], "watchdog": {"enabled": False, "action": "forward"}},
        cnp={"strict": False},
    )
    lines = eos.Driver.render(plan)
    # 153600 is not a whole number of kbytes: bytes; 1536000 is: kbytes
    assert "      random-detect ecn minimum-threshold 153600 bytes maximum-threshold 1536 kbytes max-mark-probability 100" in lines
    assert not [line for line in lines if line.startswith("priority-flow-control pause watchdog")]
    assert lines.count("   no priority-flow-control pause watchdog") == 2
    assert lines.count("   priority-flow-control priority 4 no-drop") == 2
    assert "      priority strict" not in lines  # the CNP queue is weighted now
    plan["watchdog"]["enabled"] = True
    assert "priority-flow-control pause watchdog action no-drop" in eos.Driver.render(plan)


def test_render_every_number_from_the_plan():
    plan = small_plan()
    plan["mtu"] = 9000
    plan["traffic_classes"]["3"]["bandwidth_percent"] = 70
    plan["dscp_map"] = {"8": 0, "26": 3}
    plan["ports"]["Ethernet1"]["ecn"]["max_probability_percent"] = 7
    lines = eos.Driver.render(plan)
    assert lines[:2] == ["qos map dscp 8 to traffic-class 0", "qos map dscp 26 to traffic-class 3"]  # numeric order
    assert lines.count("   mtu 9000") == 2 and lines.count("      bandwidth percent 70") == 2
    assert "      random-detect ecn minimum-threshold 600 kbytes maximum-threshold 6000 kbytes max-mark-probability 7" in lines


def test_render_refuses_what_eos_cannot_say_or_a_second_command():
    plan = small_plan()
    plan["watchdog"]["detection_time_ms"] = 205
    with pytest.raises(_base.DeviceError, match="steps of 10 ms") as err:
        eos.Driver.render(plan)
    assert err.value.state == _base.UNCHANGED
    plan = small_plan()
    plan["ports"]["Ethernet1"]["description"] = "x\nreload now"
    with pytest.raises(_base.DeviceError, match="control character"):
        eos.Driver.render(plan)
    plan = small_plan()
    del plan["ecn_queue"]
    with pytest.raises(KeyError, match="ecn_queue"):
        eos.Driver.render(plan)


# --- pure: parse ----------------------------------------------------------------------------------


def test_parse_rendered_lines():
    parsed = eos.Driver.parse("\n".join(EXPECTED))
    assert parsed["dscp_map"] == {"26": 3, "48": 6}
    assert parsed["watchdog"] == {"enabled": True, "detection_time_ms": 200, "restoration_time_ms": 400, "action": "drop"}
    assert parsed["interfaces"]["Ethernet1"] == {
        "description": "to gpu1 mlx5_0",
        "mtu": 9214,
        "trust": "dscp",
        "pfc_enabled": True,
        "pfc_priorities": [3],
        "ecn": {"3": {"min_threshold_bytes": 600000, "max_threshold_bytes": 6000000, "max_probability_percent": 20}},
        "strict_queues": [6],
        "bandwidth_percent": {"0": 50, "3": 50},
        "watchdog": True,
    }
    assert parsed["interfaces"]["Ethernet2/1"]["description"] is None
    assert parsed["interfaces"]["Ethernet2/1"]["ecn"]["3"]["min_threshold_bytes"] == 150000


def test_parse_realistic_running_config():
    parsed = eos.Driver.parse((FIXTURES / "running_config_spine.txt").read_text())
    assert parsed["dscp_map"] == {"24": 3, "25": 3, "26": 3, "27": 3, "46": 5, "48": 6}
    assert parsed["watchdog"] == {"enabled": True, "detection_time_ms": 200, "restoration_time_ms": 400, "action": "forward"}
    assert sorted(parsed["interfaces"]) == ["Ethernet1/1", "Ethernet2/1", "Ethernet3/1", "Management1"]
    assert parsed["interfaces"]["Ethernet1/1"] == {
        "description": "to leaf1 swp31",
        "mtu": None,  # from interface defaults, not configured on the port
        "trust": "dscp",
        "pfc_enabled": True,
        "pfc_priorities": [3],
        "ecn": {"3": {"min_threshold_bytes": 600000, "max_threshold_bytes": 6000000, "max_probability_percent": 20}},
        "strict_queues": [6],
        "bandwidth_percent": {"3": 50},
        "watchdog": True,
    }
    second = parsed["interfaces"]["Ethernet2/1"]
    assert second["mtu"] == 1500 and second["trust"] == "cos" and second["pfc_priorities"] == [3, 4]
    assert second["watchdog"] is False  # 'port action drop' alone does not enable it
    assert second["ecn"] == {"3": {"min_threshold_bytes": None, "max_threshold_bytes": None, "max_probability_percent": None}}  # segments
    assert parsed["interfaces"]["Ethernet3/1"]["pfc_enabled"] is False


def test_parse_empty_and_crlf():
    assert eos.Driver.parse("") == {
        "dscp_map": {},
        "watchdog": {"enabled": False, "detection_time_ms": None, "restoration_time_ms": None, "action": None},
        "interfaces": {},
    }
    parsed = eos.Driver.parse("interface Ethernet1\r\n   mtu 9214\r\n   priority-flow-control on\r\n")
    assert parsed["interfaces"]["Ethernet1"]["mtu"] == 9214 and parsed["interfaces"]["Ethernet1"]["pfc_enabled"]


# --- pure: read-back ------------------------------------------------------------------------------


def test_missing_lines_by_meaning_not_by_text():
    running = "\n".join(
        [
            "qos map dscp 24 26 to traffic-class 3",  # EOS merges DSCPs that share a class
            "qos map dscp 48 to traffic-class 6",
            "priority-flow-control pause watchdog action drop",
            "priority-flow-control pause watchdog default recovery-time 0.4",  # 0.40 as EOS may print it
            "priority-flow-control pause watchdog default timeout 0.2",
            "interface defaults",
            "   mtu 9214",
        ]
    )
    for ifname, low, high in (("Ethernet1", "600000 bytes", "6 mbytes"), ("Ethernet2/1", "150 kbytes", "1500000 bytes")):
        running += "\n" + "\n".join(
            [
                "interface " + ifname,
                "   description to gpu1 mlx5_0" if ifname == "Ethernet1" else "   shutdown",
                "   qos trust dscp",
                "   priority-flow-control on",
                "   priority-flow-control priority 3 no-drop",
                "   priority-flow-control pause watchdog",
                "   !",
                "   tx-queue 0",
                "      bandwidth percent 50",
                "      no priority",
                "   tx-queue 3",
                "      bandwidth percent 50",
                "      no priority",
                "      random-detect ecn minimum-threshold %s maximum-threshold %s max-mark-probability 20" % (low, high),
                "      random-detect ecn count",
                # no tx-queue 6: strict is the EOS default
            ]
        )
    assert eos.Driver.missing_lines(EXPECTED, running) == []
    broken = running.replace("interface defaults\n   mtu 9214\n", "").replace("      random-detect ecn count\n", "", 1)
    broken += "\n   tx-queue 6\n      no priority"
    assert eos.Driver.missing_lines(EXPECTED, broken) == [
        "interface Ethernet1 > mtu 9214",
        "interface Ethernet1 > tx-queue 3 > random-detect ecn count",
        "interface Ethernet2/1 > mtu 9214",
        "interface Ethernet2/1 > tx-queue 6 > priority strict",
    ]


def test_missing_lines_negative_lines():
    lines = ["interface Ethernet1", "   no priority-flow-control pause watchdog"]
    assert eos.Driver.missing_lines(lines, "interface Ethernet1\n   priority-flow-control pause watchdog port action drop") == []
    assert eos.Driver.missing_lines(lines, "interface Ethernet1\n   priority-flow-control pause watchdog") == [
        "interface Ethernet1 > no priority-flow-control pause watchdog"
    ]


# --- against the simulator ------------------------------------------------------------------------

SCALE = 0.01  # device seconds x SCALE = real seconds
PORTS = ["Ethernet1", "Ethernet2/1", "Ethernet3"]


@pytest.fixture
def sim(tmp_path):
    sys.path.insert(0, str(ROOT / "tests" / "lab"))
    try:
        from switchsim.client import SimProcess  # pylint: disable=import-outside-toplevel
    finally:
        sys.path.remove(str(ROOT / "tests" / "lab"))
    cfg = {
        "time_scale": SCALE,
        "switches": [
            {
                "name": "leaf1",
                "platform": "eos",
                "port": 0,
                "username": "admin",
                "password": "s3cret-eos",
                "ports": PORTS,
                "initial_config": ["interface Ethernet3", "description untouched"],
            }
        ],
    }
    with SimProcess(cfg, str(tmp_path)) as proc:
        yield proc


def _known_hosts(sim, path: pathlib.Path) -> str:
    import paramiko

    info = sim.state()["switches"]["leaf1"]
    key = paramiko.ECDSAKey.from_private_key_file(info["host_key_file"])
    path.write_text("[%s]:%d %s %s\n" % (info["host"], info["port"], key.get_name(), key.get_base64()))
    return str(path)


@pytest.fixture
def driver(sim, tmp_path):
    conn = eos.Driver.connection_class()(
        host="127.0.0.1",
        port=sim.port("leaf1"),
        username="admin",
        password="s3cret-eos",
        ssh_strict=True,
        system_host_keys=False,
        alt_host_keys=True,
        alt_key_file=_known_hosts(sim, tmp_path / "known_hosts"),
        allow_agent=False,
        use_keys=False,
        fast_cli=True,
        conn_timeout=10,
    )
    drv = eos.Driver(conn, "leaf1")
    drv.prepare()
    yield drv
    try:
        conn.disconnect()
    except (OSError, EOFError):
        pass


def _sessions(drv) -> dict:
    return json.loads(drv._run(["show configuration sessions detail | json"], None, "test")[0])["sessions"]  # pylint: disable=protected-access


def test_transaction_commit_confirm_readback_idempotent(sim, driver):
    lines = eos.Driver.render(small_plan())
    before = sim.running("leaf1")
    start = time.monotonic()
    driver.open_session("lossless-fabric-1")
    driver.load(lines)
    diff = driver.diff()
    driver.commit(300)
    missing = driver.readback_missing(lines)
    driver.confirm()
    driver.save()
    elapsed = time.monotonic() - start
    assert elapsed < 2.0, elapsed  # a few round trips, not one per line
    assert "+++ session:/lossless-fabric-1-session-config" in diff and "+   priority-flow-control priority 3 no-drop" in diff
    assert missing == []
    assert not sim.pending("leaf1")["pending_commit"]
    after = sim.running("leaf1")
    assert after != before and "   description untouched" in after
    assert eos.Driver.parse(driver.gather())["interfaces"]["Ethernet1"] == eos.Driver.parse("\n".join(lines))["interfaces"]["Ethernet1"]
    assert driver.pending() is None

    driver.open_session("lossless-fabric-2")
    driver.load(lines)
    assert driver.diff() == ""
    driver.abort()
    assert sim.running("leaf1") == after
    assert "lossless-fabric-2" not in _sessions(driver)


def test_timer_expiry_reverts(sim, driver):
    lines = eos.Driver.render(small_plan())
    before = sim.running("leaf1")
    driver.open_session("lossless-fabric-timer")
    driver.load(lines)
    driver.commit(60)  # 0.6 s real
    pend = driver.pending()
    assert pend["session"] == "lossless-fabric-timer" and 0 < pend["remaining_s"] <= 60
    assert driver.readback_missing(lines) == []
    time.sleep(60 * SCALE + 0.5)
    assert sim.running("leaf1") == before
    assert driver.pending() is None
    assert driver.readback_missing(lines)  # the plan is gone again
    with pytest.raises(_base.DeviceError, match="cannot confirm") as err:
        driver.confirm()
    assert err.value.state == _base.UNKNOWN and err.value.device_said.startswith("%")


def test_rollback_of_pending_commit(sim, driver):
    lines = eos.Driver.render(small_plan())
    before = sim.running("leaf1")
    driver.open_session("lossless-fabric-rb")
    driver.load(lines)
    driver.commit(3600)
    assert sim.running("leaf1") != before
    driver.rollback("lossless-fabric-rb")
    assert sim.running("leaf1") == before
    assert driver.pending() is None


def test_rejected_line_names_line_and_aborts(sim, driver):
    sim.set_faults("leaf1", {"reject_lines": [r"^random-detect ecn count$"]})
    lines = eos.Driver.render(small_plan())
    before = sim.running("leaf1")
    driver.open_session("lossless-fabric-bad")
    with pytest.raises(_base.DeviceError) as err:
        driver.load(lines)
    assert err.value.line == "random-detect ecn count"
    assert err.value.device_said.startswith("% Invalid input")
    assert err.value.state == _base.UNCHANGED
    assert "leaf1: the device rejected a line" in str(err.value)
    sim.set_faults("leaf1", {"reject_lines": None})
    assert sim.running("leaf1") == before
    assert "lossless-fabric-bad" not in _sessions(driver)  # aborted, not left pending
    assert driver.pending() is None


def test_refuses_lines_outside_the_session(driver):
    driver.open_session("lossless-fabric-x")
    with pytest.raises(_base.DeviceError, match="outside the configuration session") as err:
        driver.load(["interface Ethernet1", "end", "write erase"])
    assert err.value.line == "end" and err.value.state == _base.UNCHANGED
    with pytest.raises(_base.DeviceError, match="session name"):
        driver.open_session("bad name; reload")


def test_connection_dropped_while_loading(sim, driver):
    lines = eos.Driver.render(small_plan())
    before = sim.running("leaf1")
    sim.set_faults("leaf1", {"drop_after_commands": 5})
    driver.open_session("lossless-fabric-drop")
    with pytest.raises(_base.DeviceError, match="connection lost while loading") as err:
        driver.load(lines)
    assert err.value.state == _base.UNCHANGED
    assert sim.running("leaf1") == before
    assert not sim.pending("leaf1")["pending_commit"]


def test_connection_dropped_after_commit_is_pending(sim, driver):
    lines = eos.Driver.render(small_plan())
    before = sim.running("leaf1")
    driver.open_session("lossless-fabric-drop2")
    driver.load(lines)
    driver.commit(100)  # 1 s real
    sim.set_faults("leaf1", {"drop_after_commands": 0})
    with pytest.raises(_base.DeviceError, match="connection lost") as err:
        driver.readback_missing(lines)
    assert err.value.state == _base.PENDING
    time.sleep(100 * SCALE + 0.5)
    assert sim.running("leaf1") == before  # the device rolled itself back


def test_plan_copy_is_not_mutated():
    plan = small_plan()
    snapshot = copy.deepcopy(plan)
    eos.Driver.render(plan)
    assert plan == snapshot
