# SPDX-License-Identifier: GPL-3.0-or-later
"""plugins/module_utils/_platforms/nvue/ (_render.py, _readers.py, _driver.py): render, parse, and the transaction
against the NVUE switch simulator (tests/lab/switchsim) over real SSH."""

from __future__ import annotations

import copy
import os
import sys
import time

import pytest

from ansible_collections.lossless.fabric.plugins.module_utils._intent import _plan
from ansible_collections.lossless.fabric.plugins.module_utils._platforms import _base
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.nvue import _driver as nvue
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.nvue import _readers as nvue_readers
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.nvue import _render as nvue_render
from ansible_collections.lossless.fabric.plugins.module_utils._switches._config import drift

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, *[os.pardir] * 5))
FIXTURE = os.path.join(HERE, "fixtures", "nvue", "config_show_commands.txt")

INTENT = {"name": "lab", "transport": "roce"}
PORTS = {
    "swp31": {"speed": "400G", "cable_length_m": 3, "description": "to spine1 Ethernet1/1"},
    "swp1": {"speed": "400G", "cable_length_m": 2, "description": "gpu1 mlx5_0"},
    "swp2": {"speed": "400G", "cable_length_m": 2, "description": "gpu2 (mlx5_0)"},
    "swp5": {"speed": "100G", "cable_length_m": 40},
}


def make_plan(ports=None, intent=None):
    devices = {"leaf1": {"kind": "switch", "platform": "nvue", "ports": copy.deepcopy(ports or PORTS)}}
    return _plan.build_plan(copy.deepcopy(intent or INTENT), devices)["devices"]["leaf1"]


OTHER_DSCPS = ",".join(str(d) for d in range(64) if d not in (26, 48))

EXPECTED = [
    "nv set qos mapping lf-roce trust l3",
    "nv set qos mapping lf-roce dscp 26 switch-priority 3",
    "nv set qos mapping lf-roce dscp 48 switch-priority 6",
    "nv set qos mapping lf-roce dscp %s switch-priority 0" % OTHER_DSCPS,
    "nv set qos egress-queue-mapping default-global switch-priority 0 traffic-class 0",
    "nv set qos egress-queue-mapping default-global switch-priority 3 traffic-class 3",
    "nv set qos egress-queue-mapping default-global switch-priority 6 traffic-class 6",
    "nv set qos egress-queue-mapping default-global switch-priority 1,2,4,5,7 traffic-class 0",
    # QoS page "Flow Control Buffers": the lossless pool comes before PFC.
    "nv set qos traffic-pool default-lossy memory-percent 50",
    "nv set qos traffic-pool default-lossy switch-priority 0,1,2,4,5,6,7",
    "nv set qos traffic-pool default-lossless memory-percent 50",
    "nv set qos traffic-pool default-lossless switch-priority 3",
    "nv set qos pfc lf-roce-pfc3-2m switch-priority 3",
    "nv set qos pfc lf-roce-pfc3-2m tx enable",
    "nv set qos pfc lf-roce-pfc3-2m rx enable",
    "nv set qos pfc lf-roce-pfc3-2m cable-length 2",
    "nv set qos pfc lf-roce-pfc3-3m switch-priority 3",
    "nv set qos pfc lf-roce-pfc3-3m tx enable",
    "nv set qos pfc lf-roce-pfc3-3m rx enable",
    "nv set qos pfc lf-roce-pfc3-3m cable-length 3",
    "nv set qos pfc lf-roce-pfc3-40m switch-priority 3",
    "nv set qos pfc lf-roce-pfc3-40m tx enable",
    "nv set qos pfc lf-roce-pfc3-40m rx enable",
    "nv set qos pfc lf-roce-pfc3-40m cable-length 40",
    "nv set qos congestion-control lf-roce-ecn-150000-1500000-100 traffic-class 3 ecn enable",
    "nv set qos congestion-control lf-roce-ecn-150000-1500000-100 traffic-class 3 min-threshold 150000",
    "nv set qos congestion-control lf-roce-ecn-150000-1500000-100 traffic-class 3 max-threshold 1500000",
    "nv set qos congestion-control lf-roce-ecn-150000-1500000-100 traffic-class 3 probability 100",
    "nv set qos egress-scheduler lf-roce traffic-class 0 mode dwrr",
    "nv set qos egress-scheduler lf-roce traffic-class 0 bw-percent 50",
    "nv set qos egress-scheduler lf-roce traffic-class 3 mode dwrr",
    "nv set qos egress-scheduler lf-roce traffic-class 3 bw-percent 50",
    "nv set qos egress-scheduler lf-roce traffic-class 6 mode strict",
    "nv set qos pfc-watchdog polling-interval 200",
    "nv set qos pfc-watchdog robustness 1",
    "nv set interface swp1-2,swp5,swp31 qos mapping profile lf-roce",
    "nv set interface swp1-2,swp5,swp31 qos egress-scheduler profile lf-roce",
    "nv set interface swp1-2 qos pfc profile lf-roce-pfc3-2m",
    "nv set interface swp31 qos pfc profile lf-roce-pfc3-3m",
    "nv set interface swp5 qos pfc profile lf-roce-pfc3-40m",
    "nv set interface swp1-2,swp5,swp31 qos congestion-control profile lf-roce-ecn-150000-1500000-100",
    "nv set interface swp1-2,swp5,swp31 qos pfc-watchdog state enable",
    "nv set interface swp1-2,swp5,swp31 link mtu 9214",
    # The application-priority TLV of NVIDIA's RoCE mode (UDP 4791 at priority 3); 5.9-5.14 path.
    "nv set service lldp application-tlv udp-port 4791 priority 3",
    "nv set interface swp1-2,swp5,swp31 lldp application-tlv udp-port 4791",
    "nv set interface swp1 description 'gpu1 mlx5_0'",
    "nv set interface swp2 description 'gpu2 (mlx5_0)'",
    "nv set interface swp31 description 'to spine1 Ethernet1/1'",
]


# --- render ------------------------------------------------------------------------------------


def test_render_exact_lines_in_order():
    assert nvue.Driver.render(make_plan()) == EXPECTED


def test_render_is_stable_whatever_the_port_order():
    reordered = dict(reversed(list(PORTS.items())))
    assert nvue.Driver.render(make_plan(reordered)) == EXPECTED
    assert nvue.Driver.render(make_plan()) == nvue.Driver.render(make_plan())


def test_render_takes_every_number_from_the_plan():
    intent = {
        "name": "lab",
        "transport": "roce",
        "roce": {
            "data": {"dscp": 24, "priority": 2, "bandwidth_percent": 60},
            "cnp": {"dscp": 16, "priority": 5},
            "pfc": {"priorities": [2], "watchdog": {"detection_time_ms": 300}},
            "ecn": {"min_threshold_bytes": 111111, "max_threshold_bytes": 2222222, "max_probability_percent": 7},
            "mtu": {"switch": 9100},
        },
    }
    lines = nvue.Driver.render(make_plan({"swp7": {"speed": "400G", "cable_length_m": 9}}, intent))
    text = "\n".join(lines)
    assert "nv set qos mapping lf-roce dscp 24 switch-priority 2" in lines
    assert "nv set qos mapping lf-roce dscp 16 switch-priority 5" in lines
    assert "nv set qos pfc lf-roce-pfc2-9m switch-priority 2" in lines
    assert "nv set qos pfc lf-roce-pfc2-9m cable-length 9" in lines
    assert "nv set qos congestion-control lf-roce-ecn-111111-2222222-7 traffic-class 2 probability 7" in lines
    assert "nv set qos egress-scheduler lf-roce traffic-class 2 bw-percent 60" in lines
    assert "nv set qos egress-scheduler lf-roce traffic-class 0 bw-percent 40" in lines
    assert "nv set qos egress-scheduler lf-roce traffic-class 5 mode strict" in lines
    assert "nv set qos egress-queue-mapping default-global switch-priority 1,3,4,6,7 traffic-class 0" in lines
    assert "nv set qos pfc-watchdog polling-interval 300" in lines
    assert "nv set interface swp7 link mtu 9100" in lines
    assert " 26 " not in text and "traffic-class 3" not in text


def test_render_watchdog_off_and_no_descriptions():
    intent = {"name": "lab", "transport": "roce", "roce": {"pfc": {"watchdog": {"enabled": False}}}}
    lines = nvue.Driver.render(make_plan({"swp1": {"speed": "400G", "cable_length_m": 3}}, intent))
    assert "nv set interface swp1 qos pfc-watchdog state disable" in lines
    assert not [line for line in lines if "polling-interval" in line or "description" in line]


def test_render_refuses_what_it_cannot_send():
    plan = make_plan()
    plan["trust"] = "cos"
    with pytest.raises(ValueError, match="trust"):
        nvue.Driver.render(plan)
    plan = make_plan()
    plan["ports"]["swp1"]["description"] = "it's"
    with pytest.raises(ValueError, match="single quote"):
        nvue.Driver.render(plan)
    plan = make_plan()
    plan["ports"]["swp1"]["description"] = "a\nnv config apply -y"
    with pytest.raises(_base.DeviceError, match="control character"):
        nvue.Driver.render(plan)


def test_port_lists_and_expansion():
    assert nvue_render._ports(["swp3", "swp1", "swp2", "swp10", "swp1s0", "swp4"]) == "swp1-4,swp10,swp1s0"
    assert nvue_readers._expand("swp1-2,32") == ["swp1", "swp2", "swp32"]
    assert nvue_readers._expand("eth0,swp19-20") == ["eth0", "swp19", "swp20"]
    assert nvue_readers._expand("0-2,4,7") == ["0", "1", "2", "4", "7"]
    assert nvue_readers._atoms("nv set interface swp1-2 description two words") == [
        ("set", "interface", "swp1", "description", "two words"),
        ("set", "interface", "swp2", "description", "two words"),
    ]
    assert nvue_readers._atoms("nv set interface swp1 description 'two  words'") == nvue_readers._atoms("nv set interface swp1 description two words")
    assert nvue_readers._atoms("nv set qos pfc p tx enabled") == nvue_readers._atoms("nv set qos pfc p tx enable")


# --- parse -------------------------------------------------------------------------------------


def test_parse_render_output_holds_the_plan():
    plan = make_plan()
    parsed = nvue.Driver.parse("\n".join(nvue.Driver.render(plan)))
    assert drift(plan, parsed) == []
    assert parsed["dscp_map"] == plan["dscp_map"]
    assert parsed["watchdog"] == {"enabled": True, "detection_time_ms": 200, "restoration_time_ms": None, "action": "drop"}
    assert parsed["interfaces"]["swp2"]["description"] == "gpu2 (mlx5_0)"
    assert parsed["interfaces"]["swp5"]["ecn"] == {"3": {"min_threshold_bytes": 150000, "max_threshold_bytes": 1500000, "max_probability_percent": 100}}
    assert parsed["interfaces"]["swp5"]["bandwidth_percent"] == {"0": 50, "3": 50}


def test_parse_fixture():
    with open(FIXTURE, encoding="utf-8") as handle:
        parsed = nvue.Driver.parse(handle.read())
    ecn = {"3": {"min_threshold_bytes": 600000, "max_threshold_bytes": 6000000, "max_probability_percent": 20}}
    roce = {"mtu": 9214, "trust": "dscp", "pfc_enabled": True, "pfc_priorities": [3], "ecn": ecn, "strict_queues": [6], "bandwidth_percent": {"0": 50, "3": 50}}
    assert parsed == {
        "dscp_map": {"26": 3, "48": 6},
        "watchdog": {"enabled": True, "detection_time_ms": 200, "restoration_time_ms": None, "action": "drop"},
        "interfaces": {
            "swp1": dict(roce, description="gpu1 mlx5_0", watchdog=True),
            "swp2": dict(roce, description="gpu2 mlx5_0", watchdog=True),
            "swp31": dict(roce, description="to spine1 Ethernet1/1", watchdog=False),
            "swp32": {
                "description": None,
                "mtu": 1500,
                "trust": "pcp",  # the default-global mapping trusts l2 (802.1p)
                "pfc_enabled": False,
                "pfc_priorities": [],
                "ecn": {},
                "strict_queues": [],
                "bandwidth_percent": {},
                "watchdog": False,
            },
        },
        "switch_wide": {"trust": "pcp", "pfc_enabled": False, "pfc_priorities": [], "ecn": {}, "strict_queues": [], "bandwidth_percent": {}},
        "roce": None,
        "traffic_pools": {},
    }


@pytest.mark.parametrize("text", ["", "   \n", "cumulus@leaf1:mgmt:~$ nv config show -o commands\n", "hello world\n", "{not nvue}"])
def test_parse_refuses_what_it_does_not_know(text):
    with pytest.raises(ValueError, match="nvue: .*expected one of: nv config show -o commands"):
        nvue.Driver.parse(text)


class _RecordingConn:
    base_prompt = "cumulus@leaf1:mgmt:~"

    def __init__(self):
        self.sent = []

    def write_channel(self, data):
        self.sent.append(data)

    def read_channel(self):
        return ""


@pytest.mark.parametrize(
    "line",
    ["nv config apply -y", "nv set interface swp1 link mtu 9214; reboot", "nv set interface swp1 description $(id)", "ls", "nv set x 'unbalanced"],
)
def test_load_refuses_other_lines_before_sending_anything(line):
    conn = _RecordingConn()
    with pytest.raises(_base.DeviceError) as info:
        nvue.Driver(conn, "leaf1").load(["nv set interface swp1 link mtu 9214", line])
    assert info.value.state == _base.UNCHANGED and info.value.line == line
    assert conn.sent == []


def test_connection_class_is_the_cumulus_driver():
    pytest.importorskip("netmiko")
    cls = nvue.Driver.connection_class()
    assert cls.__name__ == "CumulusLinuxSSH"
    assert nvue.Driver.device_type == "cumulus_linux" and nvue.Driver.platform == "nvue"


# --- against the simulator ---------------------------------------------------------------------

SCALE = 0.01
PASSWORD = "nvue-test-pw-4"
SIM_PORTS = {"swp1": {"speed": "400G", "cable_length_m": 2}, "swp2": {"speed": "400G", "cable_length_m": 3}}


@pytest.fixture
def sim(tmp_path):
    pytest.importorskip("netmiko")
    sys.path.insert(0, os.path.join(ROOT, "tests", "lab"))
    from switchsim.client import SimProcess  # pylint: disable=import-outside-toplevel

    cfg = {"time_scale": SCALE, "switches": [{"name": "leaf1", "platform": "nvue", "port": 0, "username": "cumulus", "password": PASSWORD,
                                              "host_key_file": str(tmp_path / "leaf1.key"), "ports": ["swp1", "swp2", "swp3"]}]}
    with SimProcess(cfg, str(tmp_path / "sim")) as proc:
        yield proc


@pytest.fixture
def connect(sim):
    conns = []

    def make():
        conn = nvue.Driver.connection_class()(host="127.0.0.1", port=sim.port("leaf1"), username="cumulus", password=PASSWORD,
                                              fast_cli=True, allow_agent=False, use_keys=False, conn_timeout=10)
        conns.append(conn)
        driver = nvue.Driver(conn, "leaf1")
        driver.prepare()
        return driver

    yield make
    for conn in conns:
        try:
            conn.disconnect()
        except (OSError, EOFError):
            pass


def sim_lines():
    # The simulator has no `interface <id> description` (see test_simulator_lacks_interface_description).
    return nvue.Driver.render(make_plan(SIM_PORTS))


def test_transaction_confirm_then_idempotent(sim, connect):
    lines = sim_lines()
    driver = connect()
    driver.open_session("lossless-fabric-1")
    driver.load(lines)
    diff = driver.diff()
    assert diff.startswith("- set:") and "lf-roce" in diff
    driver.commit(60)
    pending = driver.pending()
    assert pending["session"] == "lossless-fabric-1" and 0 < pending["remaining_s"] <= 60
    assert driver.readback_missing(lines) == []
    extra = "nv set interface swp3 link mtu 1500"
    assert driver.readback_missing(lines + [extra]) == [extra]
    driver.confirm("lossless-fabric-1")
    driver.save()
    assert driver.pending() is None
    time.sleep(60 * SCALE + 0.3)  # the timer would have fired by now
    assert "lf-roce" in sim.running("leaf1")
    assert drift(make_plan(SIM_PORTS), nvue.Driver.parse(driver.gather())) == []

    again = connect()
    again.open_session("lossless-fabric-2")
    again.load(lines)
    assert again.diff() == ""
    again.abort()


def test_staged_changes_of_another_run_are_refused(sim, connect):
    # NVUE keeps one pending revision per user: staged lines we did not make
    # would be applied with ours, so the run refuses and names them.
    before = sim.running("leaf1")
    driver = connect()
    driver.conn.send_command("nv set interface swp3 link mtu 1500")
    with pytest.raises(_base.DeviceError) as info:
        driver.open_session("s")
    assert "already holds staged changes" in str(info.value) and "swp3" in str(info.value)
    assert info.value.state == _base.UNCHANGED
    assert sim.running("leaf1") == before


def test_pending_confirm_of_another_run_is_refused_before_loading(sim, connect):
    first = connect()
    first.open_session("window-a")
    first.load(sim_lines())
    first.commit(300)
    second = connect()
    with pytest.raises(_base.DeviceError) as info:
        second.open_session("window-b")
    assert "pending confirmation (revision 2" in str(info.value) and "lossless.fabric window-a" in str(info.value)
    assert info.value.state == _base.UNCHANGED
    # and a run never confirms another run's apply
    with pytest.raises(_base.DeviceError) as info:
        second.confirm("window-b")
    assert "another run's pending apply" in str(info.value)
    assert sim.pending("leaf1")["pending_commit"]
    assert second.pending()["session"] == "window-a"
    first.confirm("window-a")
    assert not sim.pending("leaf1")["pending_commit"]


def test_confirm_timer_expiry_rolls_back(sim, connect):
    before = sim.running("leaf1")
    driver = connect()
    driver.open_session("s")
    driver.load(sim_lines())
    driver.commit(60)
    assert "lf-roce" in sim.running("leaf1")
    time.sleep(60 * SCALE + 0.5)
    assert sim.running("leaf1") == before
    assert driver.pending() is None
    with pytest.raises(_base.DeviceError) as info:
        driver.confirm("s")
    assert info.value.state == _base.ROLLED_BACK


def test_rollback_of_a_pending_apply(sim, connect):
    before = sim.running("leaf1")
    driver = connect()
    driver.open_session("s")
    driver.load(sim_lines())
    driver.commit(300)
    assert sim.pending("leaf1")["pending_commit"]
    # another connection (a later play) finds and rolls it back
    other = connect()
    assert other.pending()["remaining_s"] > 0
    assert other.pending()["session"] == "s"
    other.rollback("s")
    assert sim.running("leaf1") == before
    assert not sim.pending("leaf1")["pending_commit"]


def test_rejected_line_names_line_and_error_and_leaves_nothing(sim, connect):
    before = sim.running("leaf1")
    lines = sim_lines()
    bad = next(line for line in lines if "probability" in line)
    sim.set_faults("leaf1", {"reject_lines": [r"congestion-control .* probability"]})
    driver = connect()
    driver.open_session("s")
    with pytest.raises(_base.DeviceError) as info:
        driver.load(lines)
    exc = info.value
    assert exc.line == bad and exc.state == _base.UNCHANGED
    assert exc.device_said.startswith("Error:")
    assert "leaf1" in str(exc) and bad in str(exc)
    assert driver.diff() == ""  # the pending revision was detached
    assert sim.running("leaf1") == before


def test_real_validation_error_is_reported(sim, connect):
    driver = connect()
    driver.open_session("s")
    with pytest.raises(_base.DeviceError) as info:
        driver.load(["nv set interface swp1 link mtu 9214", "nv set interface swp1 link mtu 99999", "nv set interface swp2 link mtu 9214"])
    assert info.value.line == "nv set interface swp1 link mtu 99999"
    assert "greater than the maximum" in info.value.device_said


def test_apply_failure_leaves_device_unchanged(sim, connect):
    before = sim.running("leaf1")
    sim.set_faults("leaf1", {"commit_error": "switchd reload failed"})
    driver = connect()
    driver.open_session("s")
    driver.load(sim_lines())
    with pytest.raises(_base.DeviceError) as info:
        driver.commit(300)
    assert info.value.state == _base.UNCHANGED
    assert "switchd reload failed" in info.value.device_said
    assert sim.running("leaf1") == before
    assert not sim.pending("leaf1")["pending_commit"]


def test_connection_dropped_while_loading(sim, connect):
    before = sim.running("leaf1")
    sim.set_faults("leaf1", {"drop_after_commands": 6})
    driver = connect()
    driver.open_session("s")
    started = time.monotonic()
    with pytest.raises(_base.DeviceError) as info:
        driver.load(sim_lines())
    assert info.value.state == _base.UNCHANGED and "connection lost" in str(info.value)
    assert time.monotonic() - started < 5
    assert sim.running("leaf1") == before


def test_connection_dropped_at_apply_with_timer_is_pending(sim, connect):
    sim.set_faults("leaf1", {"drop_on": r"^nv config apply --confirm"})
    driver = connect()
    driver.open_session("s")
    driver.load(sim_lines())
    with pytest.raises(_base.DeviceError) as info:
        driver.commit(300)
    assert info.value.state == _base.PENDING


def test_interface_description_is_accepted(sim, connect):
    # NVUE has had `interface <id> description` since 5.0.0 (NVUE command reference, Interface).
    driver = connect()
    driver.open_session("s")
    driver.load(["nv set interface swp1 description 'gpu1 mlx5_0'"])
    assert "gpu1 mlx5_0" in driver.diff()
    driver.abort()


def test_twenty_line_push_is_one_round_trip(sim, connect):
    lines = sim_lines()[:20]
    assert len(lines) == 20
    driver = connect()
    started = time.monotonic()
    driver.open_session("s")
    driver.load(lines)
    loaded = time.monotonic()
    assert driver.diff()
    driver.commit(300)
    assert driver.readback_missing(lines) == []
    driver.confirm()
    driver.save()
    done = time.monotonic()
    commands = [entry["command"] for entry in sim.log("leaf1")["commands"]]
    print("\nnvue 20-line push: load %.1f ms, whole transaction %.1f ms, %d commands" % ((loaded - started) * 1000, (done - started) * 1000, len(commands)))
    assert loaded - started < 1.0


def _release_plan(release):
    devices = {"leaf1": {"kind": "switch", "platform": "nvue", "release": release, "ports": copy.deepcopy(PORTS)}}
    return _plan.build_plan(copy.deepcopy(INTENT), devices)["devices"]["leaf1"]


def test_render_release_5_15_spells_enabled_and_uses_system_lldp():
    lines = nvue.Driver.render(_release_plan("5.15"))
    assert "nv set qos congestion-control lf-roce-ecn-150000-1500000-100 traffic-class 3 ecn enabled" in lines
    assert "nv set system lldp application-tlv udp-port 4791 priority 3" in lines
    assert not any(" ecn enable" == line[-11:] or line.startswith("nv set service lldp") for line in lines)
    # pfc tx/rx and the watchdog state keep 'enable': the current reference still spells them so
    assert "nv set qos pfc lf-roce-pfc3-2m tx enable" in lines


def test_render_release_5_8_has_no_lldp_tlv():
    lines = nvue.Driver.render(_release_plan("5.8"))
    assert not any("lldp" in line for line in lines)
    assert "nv set qos traffic-pool default-lossless switch-priority 3" in lines


def test_render_pool_comes_before_pfc():
    lines = nvue.Driver.render(make_plan())
    first_pfc = min(i for i, line in enumerate(lines) if line.startswith("nv set qos pfc "))
    assert lines.index("nv set qos traffic-pool default-lossless switch-priority 3") < first_pfc


def test_hung_switch_fails_the_step_bounded_naming_device_step_and_state():
    # _RecordingConn never answers: every wait must end at the driver's timeout (scaled here).
    driver = nvue.Driver(_RecordingConn(), "leaf1")
    driver.apply_timeout = driver.command_timeout = 0.05
    driver.session = "window-a"
    with pytest.raises(_base.DeviceError) as info:
        driver.commit(60)
    text = str(info.value)
    assert text.startswith("leaf1: apply: the switch did not answer within 0 s")
    assert info.value.state == _base.PENDING and "nv config apply --confirm 1m -y -m 'lossless.fabric window-a'" in text
    with pytest.raises(_base.DeviceError) as info:
        driver.open_session("window-b")
    assert "checking for other pending changes: the switch did not answer" in str(info.value) and info.value.state == _base.UNCHANGED
