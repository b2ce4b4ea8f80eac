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

from ansible_collections.lossless.fabric.plugins.module_utils._intent import _plan
from ansible_collections.lossless.fabric.plugins.module_utils._platforms import _base
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.eos import _driver as eos

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[4]
FIXTURES = HERE / "fixtures" / "eos"


def small_plan(device=None, **roce) -> dict:
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
            **(device or {}),
        }
    }
    return _plan.build_plan(intent, devices)["devices"]["leaf1"]


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
# Every code point mapped (issue 13): 26 -> 3, 48 -> 6, all others -> 0.
DSCP_LINES = ["qos map dscp %d to traffic-class %d" % (d, {26: 3, 48: 6}.get(d, 0)) for d in range(64)]

EXPECTED = (
    DSCP_LINES
    + [
        "priority-flow-control pause watchdog default timeout 0.20",
        "priority-flow-control pause watchdog default recovery-time 0.40",
        "priority-flow-control pause watchdog action drop",
        "interface Ethernet1",
        "   description to gpu1 mlx5_0",
    ]
    + PORT_BLOCK
    + [
        "      random-detect ecn minimum-threshold 600000 bytes maximum-threshold 6000000 bytes max-mark-probability 20",
        "      random-detect ecn count",
        "   tx-queue 6",
        "      priority strict",
        "interface Ethernet2/1",
    ]
    + PORT_BLOCK
    + [
        "      random-detect ecn minimum-threshold 150000 bytes maximum-threshold 1500000 bytes max-mark-probability 20",
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
    # always bytes: whether EOS's kbytes is 1000 or 1024 is unverified
    assert "      random-detect ecn minimum-threshold 153600 bytes maximum-threshold 1536000 bytes max-mark-probability 100" in lines
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
    plan["dscp_map_full"] = {str(d): 1 for d in range(64)}
    plan["dscp_map_full"].update({"8": 0, "26": 3})
    plan["ports"]["Ethernet1"]["ecn"]["max_probability_percent"] = 7
    plan["eos"]["queue_block"] = "uc-tx-queue"
    lines = eos.Driver.render(plan)
    assert lines[7:9] == ["qos map dscp 7 to traffic-class 1", "qos map dscp 8 to traffic-class 0"]  # numeric order
    assert lines[26] == "qos map dscp 26 to traffic-class 3" and len([line for line in lines if line.startswith("qos map dscp")]) == 64
    assert lines.count("   mtu 9000") == 2 and lines.count("      bandwidth percent 70") == 2
    assert "      random-detect ecn minimum-threshold 600000 bytes maximum-threshold 6000000 bytes max-mark-probability 7" in lines
    assert "   uc-tx-queue 3" in lines and not [line for line in lines if line.startswith("   tx-queue")]


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


def _ecn(low, high, prob, unit="bytes"):
    known = unit == "bytes"
    return {"min_threshold_bytes": low if known else None, "max_threshold_bytes": high if known else None,
            "max_probability_percent": prob, "min_threshold": low, "max_threshold": high, "unit": unit}


def test_parse_rendered_lines():
    parsed = eos.Driver.parse("\n".join(EXPECTED))
    assert parsed["dscp_map"] == {"26": 3, "48": 6}
    assert parsed["watchdog"] == {"enabled": True, "detection_time_ms": 200, "restoration_time_ms": 400, "action": "drop"}
    assert parsed["dscp_unmapped"] == []
    assert parsed["interfaces"]["Ethernet1"] == {
        "description": "to gpu1 mlx5_0",
        "mtu": 9214,
        "trust": "dscp",
        "service_profile": None,
        "pfc_enabled": True,
        "pfc_priorities": [3],
        "ecn": {"3": _ecn(600000, 6000000, 20)},
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
        "service_profile": None,
        "pfc_enabled": True,
        "pfc_priorities": [3],
        # kbytes/mbytes: 1000 or 1024 is unverified, so no byte count; number and unit as the device has them
        "ecn": {"3": {"min_threshold_bytes": None, "max_threshold_bytes": None, "max_probability_percent": 20,
                      "min_threshold": 600, "max_threshold": 6, "unit": "kbytes/mbytes"}},
        "strict_queues": [6],
        "bandwidth_percent": {"3": 50},
        "watchdog": True,
    }
    second = parsed["interfaces"]["Ethernet2/1"]
    assert second["mtu"] == 1500 and second["trust"] == "cos" and second["pfc_priorities"] == [3, 4]
    assert second["watchdog"] is False  # 'port action drop' alone does not enable it
    assert second["ecn"]["3"]["min_threshold_bytes"] is None and second["ecn"]["3"]["unit"] == "segments"
    assert parsed["interfaces"]["Ethernet3/1"]["pfc_enabled"] is False


def test_parse_refuses_what_is_not_eos_config():
    for text, why in (
        ("", "no configuration text"),
        ("   \n", "no configuration text"),
        ("set class-of-service forwarding-classes class fc3 queue-num 3", "not EOS configuration text"),
        ("class-of-service {\n    forwarding-classes {\n", "not EOS configuration text"),
        ("nv set qos roce mode lossless", "not EOS configuration text"),
        ('{"cmds": {"interface Ethernet1": {}}}', "not EOS configuration text"),
        ("Port      TxQ    Marked Packets\n--------  -----", "no EOS configuration line"),
    ):
        with pytest.raises(ValueError, match="eos: .*" + why) as err:
            eos.Driver.parse(text)
        assert "show running-config" in str(err.value)


def test_parse_rcf_code_with_braces_is_eos():
    parsed = eos.Driver.parse((FIXTURES / "avd_router_general.cfg").read_text())
    assert sorted(parsed["interfaces"]) == ["Management1"] and parsed["dscp_map"] == {}


def test_parse_banner_text_is_not_judged():
    text = "hostname sw1\nbanner motd\nset your watch {\n}\nEOF\n!\ninterface Ethernet1\n   mtu 9214\n"
    assert eos.Driver.parse(text)["interfaces"]["Ethernet1"]["mtu"] == 9214


def test_parse_crlf():
    parsed = eos.Driver.parse("interface Ethernet1\r\n   mtu 9214\r\n   priority-flow-control on\r\n")
    assert parsed["interfaces"]["Ethernet1"]["mtu"] == 9214 and parsed["interfaces"]["Ethernet1"]["pfc_enabled"]


# --- pure: read-back ------------------------------------------------------------------------------


def test_missing_lines_by_meaning_not_by_text():
    running = "\n".join(
        [
            # EOS merges DSCPs that share a class
            "qos map dscp %s to traffic-class 0" % " ".join(str(d) for d in range(64) if d not in (26, 48)),
            "qos map dscp 26 to traffic-class 3",
            "qos map dscp 48 to traffic-class 6",
            "priority-flow-control pause watchdog action drop",
            "priority-flow-control pause watchdog default recovery-time 0.4",  # 0.40 as EOS may print it
            "priority-flow-control pause watchdog default timeout 0.2",
            "interface defaults",
            "   mtu 9214",
        ]
    )
    for ifname, low, high in (("Ethernet1", "600000 bytes", "6000000 bytes"), ("Ethernet2/1", "150000 bytes", "1500000 bytes")):
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
    broken = broken.replace(" 25 27 ", " 25 ")  # DSCP 27 left on its EOS default class
    assert eos.Driver.missing_lines(EXPECTED, broken) == [
        "qos map dscp 27 to traffic-class 0",
        "interface Ethernet1 > mtu 9214",
        "interface Ethernet1 > tx-queue 3 > random-detect ecn count",
        "interface Ethernet2/1 > mtu 9214",
        "interface Ethernet2/1 > tx-queue 6 > priority strict",
    ]
    # a 'uc-tx-queue' block does not count as the plan's 'tx-queue' (Jericho, the default family)
    assert "interface Ethernet1 > tx-queue 3 > bandwidth percent 50" in eos.Driver.missing_lines(EXPECTED, running.replace("tx-queue", "uc-tx-queue"))


def test_missing_lines_negative_lines():
    lines = ["interface Ethernet1", "   no priority-flow-control pause watchdog"]
    assert eos.Driver.missing_lines(lines, "interface Ethernet1\n   priority-flow-control pause watchdog port action drop") == []
    assert eos.Driver.missing_lines(lines, "interface Ethernet1\n   priority-flow-control pause watchdog") == [
        "interface Ethernet1 > no priority-flow-control pause watchdog"
    ]


# --- against the simulator ------------------------------------------------------------------------

SCALE = 0.01  # device seconds x SCALE = real seconds
PORTS = ["Ethernet1", "Ethernet2/1", "Ethernet3"]


@pytest.fixture(params=[None])
def sim(tmp_path, request):
    """The simulator's default model (DCS-7280CR3-32P4, Jericho2), or request.param's model."""
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
                **({"model": request.param} if request.param else {}),
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
    drv = _driver(sim, tmp_path)
    yield drv
    try:
        drv.conn.disconnect()
    except (OSError, EOFError):
        pass


def _driver(sim, tmp_path):
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
    return drv


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
    # issue 33: the driver reads the running config back and says what the timer did, not "unknown"
    with pytest.raises(_base.DeviceError, match="cannot confirm session lossless-fabric-timer: its commit timer ran out first "
                                                "and EOS rolled the change back") as err:
        driver.confirm()
    assert err.value.state == _base.ROLLED_BACK
    driver.rollback()  # what a rollback asks for is already done: no error
    assert sim.running("leaf1") == before


def test_a_confirm_after_someone_else_settled_the_timer_stays_unknown(sim, driver, tmp_path):
    """The read-back says 'rolled back' only when the change is gone: a commit confirmed by another
    terminal (the change is live, the session no longer under its timer) is not reported as rolled back."""
    lines = eos.Driver.render(small_plan())
    driver.open_session("lossless-fabric-other")
    driver.load(lines)
    driver.commit(3600)
    other = _driver(sim, tmp_path)
    other._run(["configure session lossless-fabric-other commit"], None, "test")  # pylint: disable=protected-access
    other.conn.disconnect()
    with pytest.raises(_base.DeviceError, match="refusing to confirm session lossless-fabric-other: it has no commit timer pending") as err:
        driver.confirm()
    assert err.value.state == _base.UNKNOWN and driver.readback_missing(lines) == []


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
    # login (terminal width, length), enable, the sessions check (2): the 6th command opens the session, the 9th is lost
    sim.set_faults("leaf1", {"drop_after_commands": 8})
    driver.open_session("lossless-fabric-drop")
    with pytest.raises(_base.DeviceError, match="connection lost while loading") as err:
        driver.load(lines)
    assert err.value.state == _base.UNCHANGED
    assert sim.running("leaf1") == before
    assert not sim.pending("leaf1")["pending_commit"]
    # issue 33: the session the lost load left open would block every later run; this run logs in again and aborts it
    assert "logged in again and aborted the uncommitted session lossless-fabric-drop: the switch is as it was" in str(err.value)
    assert "lossless-fabric-drop" not in sim.pending("leaf1")["sessions"]
    sim.set_faults("leaf1", {"drop_after_commands": None})
    driver.open_session("lossless-fabric-next")
    driver.load(lines)  # a later change is not refused
    driver.abort()


def test_a_lost_load_that_cannot_log_in_again_says_the_session_stays_open(sim, driver):
    lines = eos.Driver.render(small_plan())
    sim.set_faults("leaf1", {"drop_after_commands": 8, "wrong_password": True})  # this login stays; a new one fails
    driver.open_session("lossless-fabric-stuck")
    with pytest.raises(_base.DeviceError, match="connection lost while loading") as err:
        driver.load(lines)
    assert err.value.state == _base.UNCHANGED
    assert "could not log in again to abort it" in str(err.value)
    assert "('configure session lossless-fabric-stuck abort')" in str(err.value)
    assert sim.pending("leaf1")["sessions"]["lossless-fabric-stuck"]["state"] == "pending"


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


# --- parse: real published configurations (fixtures/eos/SOURCES.md) ---------------------------------


def test_parse_avd_qos_profiles_service_profile_and_uc_tx_queue():
    parsed = eos.Driver.parse((FIXTURES / "avd_qos.cfg").read_text())
    profiles = parsed["qos_profiles"]
    assert sorted(profiles) == ["experiment", "no_qos_trust", "qprof_testwithpolicy", "test", "test_with_pfc",
                                "uc_mc_queues_test", "wred_queues_test", "wred_uc_queues_test"]
    uc = profiles["uc_mc_queues_test"]
    assert uc["ecn"]["1"] == _ecn(3, 9, 90, "milliseconds")
    assert uc["ecn"]["2"] == _ecn(320, 320, 90, "kbytes") and uc["ecn"]["4"] == _ecn(320, 320, None, "segments")
    assert uc["strict_queues"] == [2] and uc["bandwidth_percent"] == {"1": 50, "2": 10}  # mc-tx-queue lines are not unicast queues
    pfc = profiles["test_with_pfc"]
    assert pfc["pfc_enabled"] and pfc["pfc_priorities"] == [0] and pfc["watchdog"]  # 'priority 1 drop' is not no-drop
    assert profiles["no_qos_trust"]["trust"] == "disabled"
    # Ethernet1 takes profile 'test' (tx-queues 1, 2, 4) and keeps its own trust and mtu
    eth1 = parsed["interfaces"]["Ethernet1"]
    assert eth1["service_profile"] == "test" and eth1["trust"] == "dscp" and eth1["mtu"] == 1500
    assert eth1["bandwidth_percent"] == {"1": 50, "2": 10} and eth1["strict_queues"] == [2]
    assert eth1["ecn"]["2"] == _ecn(320, 320, 90, "kbytes") and eth1["ecn"]["4"]["unit"] == "segments"
    # Ethernet6: profile 'experiment' (trust cos, tx-queues 3 4 5 7) plus its own 'tx-queue 2' block
    eth6 = parsed["interfaces"]["Ethernet6"]
    assert eth6["trust"] == "cos" and eth6["bandwidth_percent"] == {"3": 30, "5": 40, "7": 30}
    assert parsed["interfaces"]["Ethernet7"]["service_profile"] == "qprof_testwithpolicy"
    assert parsed["interfaces"]["Ethernet7"]["bandwidth_percent"] == {"0": 1, "1": 80, "5": 19}
    # qos map dscp with 44 code points on one line, a drop-precedence suffix, and no map for 0-7
    assert parsed["dscp_map"]["63"] == 1 and parsed["dscp_map"]["26"] == 4 and parsed["dscp_map"]["46"] == 5
    assert parsed["dscp_unmapped"] == [0, 1, 2, 3, 4, 5, 6, 7, 48, 56]
    assert parsed["watchdog"]["detection_time_ms"] == 50 and parsed["watchdog"]["restoration_time_ms"] == 1220
    assert parsed["watchdog"]["action"] == "forward"


def test_parse_avd4900_jericho_roce_profile_in_microseconds():
    parsed = eos.Driver.parse((FIXTURES / "avd4900_qos_profile.txt").read_text())
    profile = parsed["qos_profiles"]["RDMA-QOS-PROFILE"]
    assert profile["pfc_enabled"] and profile["pfc_priorities"] == [3]
    assert profile["ecn"] == {"3": _ecn(320, 480, 100, "microseconds")}
    assert profile["bandwidth_percent"] == {"3": 100} and profile["strict_queues"] == []
    assert parsed["interfaces"] == {} and parsed["dscp_unmapped"] == list(range(64))


def test_service_profile_lines_are_read_back_through_the_interface():
    """An interface that holds the plan through a qos profile has it (drift sees it), its own lines win."""
    text = "\n".join([
        "qos profile ROCE",
        "   qos trust dscp",
        "   priority-flow-control on",
        "   priority-flow-control priority 3 no-drop",
        "   !",
        "   tx-queue 3",
        "      bandwidth percent 50",
        "      random-detect ecn minimum-threshold 600000 bytes maximum-threshold 6000000 bytes max-mark-probability 20",
        "!",
        "interface Ethernet1",
        "   service-profile ROCE",
        "   no priority-flow-control",
        "   !",
        "   tx-queue 3",
        "      bandwidth percent 60",
    ])
    eth1 = eos.Driver.parse(text)["interfaces"]["Ethernet1"]
    assert eth1["trust"] == "dscp" and eth1["pfc_priorities"] == [3] and eth1["pfc_enabled"] is False
    assert eth1["bandwidth_percent"] == {"3": 60} and eth1["ecn"]["3"]["min_threshold_bytes"] == 600000


def test_render_queue_block_per_asic_family():
    strata = eos.Driver.render(small_plan(device={"model": "DCS-7060DX5-64S"}))
    jericho = eos.Driver.render(small_plan(device={"asic_family": "jericho"}))
    assert strata.count("   uc-tx-queue 3") == 2 and not [line for line in strata if line.startswith("   tx-queue")]
    assert jericho.count("   tx-queue 3") == 2 and not [line for line in jericho if "uc-tx-queue" in line]
    plan = small_plan()
    plan["eos"]["queue_block"] = "tx-queue 3\nreload"
    with pytest.raises(_base.DeviceError, match="not an EOS queue sub-mode"):
        eos.Driver.render(plan)
    del plan["eos"]
    with pytest.raises(KeyError, match="eos"):
        eos.Driver.render(plan)


def test_parse_sessions_forms():
    old = (FIXTURES / "show_configuration_sessions_detail_4_32.json").read_text()
    rows = eos.parse_sessions(old, json.dumps({"uptime": 5000.0}))
    assert {r["session"]: (r["state"], r["remaining_s"]) for r in rows} == {
        "lossless-fabric-20261201101500-a1b2c3": ("pendingCommitTimer", 120), "cvp-sess": ("pending", None), "old": ("completed", None)}
    new = (FIXTURES / "show_configuration_sessions_detail_4_33.json").read_text()
    rows = eos.parse_sessions(new, json.dumps({"uptime": 7000.0}))
    assert [r for r in rows if r["state"] == "pendingCommitTimer"] == [{"session": "window-b", "state": "pendingCommitTimer", "remaining_s": 300}]
    assert eos.parse_sessions(old, "% not json")[0]["remaining_s"] is None  # no uptime: remaining unknown, never guessed
    text = "  Name      State               User\n  --------- ------------------- ----\n* s1        pending\n  s2        pendingCommitTimer  admin\n"
    assert [(r["session"], r["state"]) for r in eos.parse_sessions(text)] == [("s1", "pending"), ("s2", "pendingCommitTimer")]
    with pytest.raises(ValueError, match="eos: 'show configuration sessions detail' gave neither"):
        eos.parse_sessions("% Invalid input")


# --- issue 15: another run's session ---------------------------------------------------------------


def test_refuses_to_change_while_another_runs_commit_timer_is_pending(sim, driver, tmp_path):
    other = _driver(sim, tmp_path)
    lines = eos.Driver.render(small_plan())
    other.open_session("window-a")
    other.load(lines)
    other.commit(3600)
    held = sim.running("leaf1")
    driver.open_session("window-b")
    with pytest.raises(_base.DeviceError, match="configuration session window-a has a commit timer pending, 3[56]\\d\\d s left") as err:
        driver.load([line.replace("bandwidth percent 50", "bandwidth percent 40") for line in lines])
    assert err.value.state == _base.UNCHANGED and "configure session window-a commit|abort" in str(err.value)
    assert sim.running("leaf1") == held and "window-b" not in _sessions(driver)
    # and it never settles window-a's commit as if it were its own: only a named, timed session
    with pytest.raises(_base.DeviceError, match="refusing to confirm session window-b: it has no commit timer pending"):
        driver.confirm("window-b")
    assert sim.pending("leaf1")["session"] == "window-a"
    other.rollback("window-a")
    other.conn.disconnect()


def test_refuses_while_another_session_is_open_even_after_its_disconnect(sim, driver, tmp_path):
    before = sim.running("leaf1")
    other = _driver(sim, tmp_path)
    other.open_session("half-done")
    other._run(["configure session half-done", "interface Ethernet3", "description staged by someone", "end"], None, "test")  # pylint: disable=protected-access
    other.conn.disconnect()  # EOS keeps the uncommitted session (Configure Session, 24 h)
    assert _sessions(driver)["half-done"]["state"] == "pending"
    driver.open_session("lossless-fabric-3")
    with pytest.raises(_base.DeviceError, match="configuration session half-done is open with uncommitted changes") as err:
        driver.load(eos.Driver.render(small_plan()))
    assert err.value.state == _base.UNCHANGED
    # confirm/rollback of that session are refused: 'commit' would put its staged lines live
    for action, verb in ((driver.confirm, "confirm"), (driver.rollback, "roll back")):
        with pytest.raises(_base.DeviceError, match="refusing to %s session half-done: it has no commit timer pending \\(state: pending\\)" % verb) as err:
            action("half-done")
        assert err.value.state == _base.UNCHANGED
    assert sim.running("leaf1") == before and _sessions(driver)["half-done"]["state"] == "pending"


@pytest.mark.parametrize("sim", ["DCS-7050CX3-32S"], indirect=True)
def test_strata_switch_takes_uc_tx_queue_and_refuses_the_old_lines(sim, driver):
    old = eos.Driver.render(small_plan())  # no model: Jericho's tx-queue, as before issue 13
    driver.open_session("lossless-fabric-old")
    with pytest.raises(_base.DeviceError, match="the device rejected a line") as err:
        driver.load(old)
    assert err.value.line == "tx-queue 0" and err.value.device_said == "% Invalid input (at token 0: 'tx-queue')"
    lines = eos.Driver.render(small_plan(device={"model": "DCS-7050CX3-32S"}))
    driver.open_session("lossless-fabric-new")
    driver.load(lines)
    driver.commit(300)
    assert driver.readback_missing(lines) == []
    driver.confirm()
    assert "   uc-tx-queue 3" in sim.running("leaf1")
