# SPDX-License-Identifier: GPL-3.0-or-later
"""Cisco NX-OS simulator (a Nexus 9364C-GX on 10.3(2)F) driven by netmiko (cisco_nxos) over real SSH,
and the production nxos.Driver's configure-replace transaction against it."""
from __future__ import annotations

import hashlib
import pathlib
import sys
import tempfile
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests" / "lab"))

from switchsim.client import SimProcess  # noqa: E402  # pylint: disable=wrong-import-position

from ansible_collections.lossless.fabric.plugins.module_utils._intent import _plan  # noqa: E402  # pylint: disable=wrong-import-position
from ansible_collections.lossless.fabric.plugins.module_utils._platforms import _base  # noqa: E402  # pylint: disable=wrong-import-position
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.nxos import _driver as nxos  # noqa: E402  # pylint: disable=wrong-import-position
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.nxos import _readers as nxos_readers  # noqa: E402  # pylint: disable=wrong-import-position
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.nxos import _render as nxos_render  # noqa: E402  # pylint: disable=wrong-import-position
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.nxos import _show as _nxos_show  # noqa: E402  # pylint: disable=wrong-import-position

netmiko = pytest.importorskip("netmiko")

SCALE = 0.01  # device seconds x 0.01: a 30 s commit-timeout runs out in 0.3 s
PORTS = ["Ethernet1/1", "Ethernet1/2", "Ethernet1/3"]
PASSWORD = "s3cret-nxos"


def _spec(initial=("feature scp-server",), **kw):
    spec = {"name": "leaf4", "platform": "nxos", "port": 0, "username": "admin", "password": PASSWORD,
            "ports": PORTS, "initial_config": list(initial)}
    spec.update(kw)
    return spec


@pytest.fixture
def sim(tmp_path):
    with SimProcess({"time_scale": SCALE, "switches": [_spec()]}, str(tmp_path)) as s:
        yield s


@pytest.fixture
def bare(tmp_path):
    """A switch without 'feature scp-server'."""
    with SimProcess({"time_scale": SCALE, "switches": [_spec(initial=())]}, str(tmp_path)) as s:
        yield s


def connect(sim):
    return netmiko.ConnectHandler(device_type="cisco_nxos", host="127.0.0.1", port=sim.port("leaf4"),
                                  username="admin", password=PASSWORD, conn_timeout=10)


def plan():
    ports = {"Ethernet1/1": {"speed": "400G", "description": "gpu1 mlx5_0"}, "Ethernet1/2": {"speed": "400G"}}
    dev = {"kind": "switch", "platform": "nxos", "ports": ports}
    return _plan.build_plan({"name": "lab", "transport": "roce", "roce": {}}, {"leaf4": dev})["devices"]["leaf4"]


def put(conn, name, text):
    """SCP ``text`` to bootflash:<name> the way the driver does (netmiko CiscoNxosFileTransfer) and verify its md5."""
    with tempfile.NamedTemporaryFile("w", suffix=".cfg", delete=False) as handle:
        handle.write(text)
    with netmiko.cisco.cisco_nxos.CiscoNxosFileTransfer(conn, source_file=handle.name, dest_file=name,
                                                        file_system="bootflash:", direction="put") as transfer:
        transfer.transfer_file()
        assert transfer.verify_file()
    pathlib.Path(handle.name).unlink()


# --- prompts and the session -------------------------------------------------------------------------
def test_prompts_of_every_qos_mode(sim):
    conn = connect(sim)
    try:
        assert conn.find_prompt() == "leaf4#"
        out = conn.send_config_set([
            "class-map type qos match-any LF-TC3", "match dscp 26",
            "policy-map type qos LF-QOS", "class LF-TC3", "set qos-group 3",
            "policy-map type queuing LF-QUEUING", "class type queuing c-out-8q-q3", "bandwidth remaining percent 50",
            "policy-map type network-qos LF-NETQOS", "class type network-qos c-8q-nq3", "pause pfc-cos 3",
            "system qos", "service-policy type network-qos LF-NETQOS",
            "interface Ethernet1/1", "priority-flow-control mode on"])
        for prompt in ("leaf4(config)#", "(config-cmap-qos)#", "(config-pmap-qos)#", "(config-pmap-c-qos)#",
                       "(config-pmap-que)#", "(config-pmap-c-que)#", "(config-pmap-nqos)#", "(config-pmap-nqos-c)#",
                       "(config-sys-qos)#", "(config-if)#"):
            assert prompt in out, prompt
        assert "%" not in out
        assert conn.find_prompt() == "leaf4#"
    finally:
        conn.disconnect()


def test_invalid_incomplete_and_range_errors(sim):
    conn = connect(sim)
    try:
        conn.config_mode()
        out = conn.send_command("interface Ethernet1/1", expect_string=r"\(config-if\)#")
        out = conn.send_command("mtu 9999", expect_string=r"#")
        assert out.splitlines()[-1] == "% Invalid number, range is (576:9216)"
        out = conn.send_command("mtu", expect_string=r"#")
        assert "% Incomplete command at '^' marker." in out
        out = conn.send_command("bogus", expect_string=r"#")
        lines = out.splitlines()
        assert lines[-1] == "% Invalid command at '^' marker." and lines[-2].strip() == "^"
        assert lines[-2].index("^") == len("leaf4(config-if)# ")  # under the token, counted from the prompt
        out = conn.send_command("policy-map type queuing Q", expect_string=r"#")
        out = conn.send_command("class type queuing c-out-8q-q9", expect_string=r"#")
        assert "% Invalid command at '^' marker." in out     # not a system queuing class
        out = conn.send_command("class type queuing c-out-8q-q3", expect_string=r"#")
        out = conn.send_command("priority level 9", expect_string=r"#")
        assert "% Invalid number, range is (1:8)" in out
        out = conn.send_command("bandwidth remaining percent 101", expect_string=r"#")
        assert "% Invalid number, range is (0:100)" in out
        out = conn.send_command("random-detect minimum-threshold 1 furlongs maximum-threshold 2 bytes", expect_string=r"#")
        assert "% Invalid command at '^' marker." in out
        conn.send_command("end", expect_string=r"#")
        run = conn.send_command("show running-config")
        assert "mtu 9999" not in run and "priority level 9" not in run
    finally:
        conn.disconnect()


def test_service_policy_needs_an_existing_policy_map(sim):
    conn = connect(sim)
    try:
        out = conn.send_config_set(["system qos", "service-policy type network-qos NOPE"])
        assert "ERROR: policy-map NOPE not found" in out
        assert "NOPE" not in conn.send_command("show running-config")
    finally:
        conn.disconnect()


def test_running_config_full_form_is_what_the_driver_reads(sim):
    sim.load("leaf4", nxos_render.render_plan(plan()))
    conn = connect(sim)
    try:
        run = conn.send_command("show running-config")
        lines = run.splitlines()
        assert lines[0] == "!Command: show running-config"
        assert lines[1].startswith("!Running configuration last done at: ") and lines[2].startswith("!Time: ")
        assert lines[3] == "" and lines[4].startswith("version 10.3(2) Bios:version ")
        assert "hostname leaf4" in lines and "  match dscp 26" in lines
        parsed = nxos_readers.parse_config(run)
        assert parsed["dscp_map"]["26"] == 3 and parsed["interfaces"]["Ethernet1/1"]["pfc_priorities"] == [3]
        assert nxos_readers.missing(nxos_render.render_plan(plan()), run) == []
        ipqos = conn.send_command("show running-config ipqos")
        assert "!Command: show running-config ipqos" in ipqos and "hostname" not in ipqos
        assert "description" not in ipqos and "interface Ethernet1/1\n  priority-flow-control mode on" in ipqos  # QoS lines only
        assert nxos_readers.parse_config(ipqos)["dscp_map"] == parsed["dscp_map"]
    finally:
        conn.disconnect()


# --- bootflash and SCP -------------------------------------------------------------------------------
def test_bootflash_dir_copy_show_md5_delete(sim):
    conn = connect(sim)
    try:
        assert "No such file or directory" in conn.send_command("dir bootflash:x.cfg")
        assert "Copy complete." in conn.send_command("copy running-config bootflash:x.cfg")
        listing = conn.send_command("dir bootflash:")
        assert "  x.cfg" in listing and "Usage for bootflash://sup-local" in listing and "bytes free" in listing
        text = conn.send_command("show file bootflash:x.cfg")
        assert text.startswith("!Command: show running-config")
        md5 = conn.send_command("show file bootflash:x.cfg md5sum")
        assert len(md5.strip()) == 32
        out = conn.send_command_timing("delete bootflash:x.cfg")
        assert 'Do you want to delete "/x.cfg" ? (yes/no/abort)   [y]' in out
        conn.send_command_timing("n")
        assert "x.cfg" in conn.send_command("dir bootflash:x.cfg")
        conn.send_command("terminal dont-ask")
        assert conn.send_command("delete bootflash:x.cfg").strip() == ""
        assert "No such file or directory" in conn.send_command("dir bootflash:x.cfg")
        save = conn.send_command("copy running-config startup-config")
        assert save.splitlines()[-1] == "Copy complete."
    finally:
        conn.disconnect()


def test_scp_put_lands_on_bootflash_and_md5_matches(sim):
    conn = connect(sim)
    try:
        text = "hostname leaf4\ninterface Ethernet1/1\n  mtu 9216\n"
        put(conn, "t.cfg", text)
        assert conn.send_command("show file bootflash:t.cfg md5sum").strip() == hashlib.md5(text.encode()).hexdigest()  # noqa: S324
        assert conn.send_command("show file bootflash:t.cfg") == text.rstrip("\n")
    finally:
        conn.disconnect()


def test_scp_refused_without_feature_scp_server(bare):
    conn = connect(bare)
    try:
        with pytest.raises(Exception, match="feature scp-server"):  # noqa: B017 - scp.SCPException
            put(conn, "t.cfg", "hostname leaf4\n")
        assert "No such file or directory" in conn.send_command("dir bootflash:t.cfg")
    finally:
        conn.disconnect()


# --- configure replace -------------------------------------------------------------------------------
def test_replace_with_a_bad_line_leaves_running_untouched(sim):
    conn = connect(sim)
    try:
        before = sim.running("leaf4")
        put(conn, "bad.cfg", "hostname leaf4\nfeature scp-server\ninterface Ethernet1/1\n  mtu 9216\n  frobnicate on\n")
        out = conn.send_command("configure replace bootflash:bad.cfg verify-only")
        assert "Syntax error while parsing 'frobnicate on'" in out
        out = conn.send_command("configure replace bootflash:bad.cfg")
        assert "Syntax error while parsing 'frobnicate on'" in out and "Configure replace completed successfully" not in out
        assert sim.running("leaf4") == before
    finally:
        conn.disconnect()


def test_replace_verify_only_changes_nothing_then_replace_applies(sim):
    conn = connect(sim)
    try:
        put(conn, "good.cfg", "hostname leaf4\nfeature scp-server\ninterface Ethernet1/2\n  mtu 9216\n")
        out = conn.send_command("configure replace bootflash:good.cfg verify-only")
        assert out.splitlines()[-1] == "Patch validation completed successful" and "`mtu 9216`" in out
        assert "mtu 9216" not in sim.running("leaf4")
        diff = conn.send_command("copy running-config bootflash:now.cfg") and \
            conn.send_command("show diff rollback-patch file bootflash:now.cfg file bootflash:good.cfg")
        assert nxos.diff_of(diff) == "interface Ethernet1/2\nmtu 9216\n"
        out = conn.send_command("configure replace bootflash:good.cfg")
        assert "Configure replace completed successfully." in out
        assert "  mtu 9216" in sim.running("leaf4")
        same = conn.send_command("show diff rollback-patch file bootflash:good.cfg file bootflash:good.cfg")
        assert "Rollback Patch is Empty" in same and nxos.diff_of(same) == ""
    finally:
        conn.disconnect()


def test_commit_timeout_expiry_rolls_back_and_commit_stops_it(sim):
    conn = connect(sim)
    try:
        before = sim.running("leaf4")
        put(conn, "t.cfg", "hostname leaf4\nfeature scp-server\ninterface Ethernet1/1\n  mtu 9000\n")
        out = conn.send_command("configure replace bootflash:t.cfg commit-timeout 29")
        assert "% Invalid number, range is (30:3600)" in out
        out = conn.send_command("configure replace bootflash:t.cfg commit-timeout 30")
        assert "Configure replace completed successfully" in out
        pend = sim.pending("leaf4")
        assert pend["pending_commit"] and pend["platform"] == "nxos" and 0 < pend["remaining_seconds"] <= 30
        time.sleep(30 * SCALE + 0.5)
        assert "mtu 9000" not in sim.running("leaf4") and sim.running("leaf4").count("interface") == before.count("interface")
        assert not sim.pending("leaf4")["pending_commit"]
        assert conn.send_command("configure replace commit").startswith("ERROR:")
        conn.send_command("configure replace bootflash:t.cfg commit-timeout 30")
        assert conn.send_command("configure replace commit").strip() == ""
        time.sleep(30 * SCALE + 0.5)
        assert "mtu 9000" in sim.running("leaf4")
    finally:
        conn.disconnect()


def test_commit_error_fault_fails_the_replace(sim):
    sim.set_faults("leaf4", {"commit_error": "ACLQOS_ERROR: Invalid Class id"})
    conn = connect(sim)
    try:
        put(conn, "t.cfg", "hostname leaf4\nfeature scp-server\ninterface Ethernet1/1\n  mtu 9000\n")
        out = conn.send_command("configure replace bootflash:t.cfg")
        assert "ACLQOS_ERROR: Invalid Class id" in out and nxos.rejection(out)
        assert "mtu 9000" not in sim.running("leaf4")
    finally:
        conn.disconnect()


# --- links and counters ------------------------------------------------------------------------------
def test_counters_are_read_by_the_show_readers(sim):
    sim.set_counters("leaf4", "Ethernet1/1", {"pfc_rx": {"3": 12}, "pfc_tx": {"3": 150}, "queue_drops": {"3": 7}})
    conn = connect(sim)
    try:
        commands = _nxos_show.counter_commands(["Ethernet1/1", "Ethernet1/2"])
        outputs = {c: conn.send_command(c) for c in commands}
        ports, errors = _nxos_show.parse_counters(outputs)
        assert errors == {}
        assert ports["Ethernet1/1"]["pfc_rx_frames"]["3"] == 12 and ports["Ethernet1/1"]["pfc_tx_frames"]["3"] == 150
        assert ports["Ethernet1/1"]["queue_drops"]["3"] == 7 and ports["Ethernet1/2"]["queue_drops"]["3"] == 0
        links = _nxos_show.parse_links({c: conn.send_command(c) for c in _nxos_show.link_commands()})
        assert set(links) == set(PORTS) and all(end["oper"] == "down" for end in links.values())
    finally:
        conn.disconnect()


# --- the production driver, end to end -----------------------------------------------------------------
def _driver(sim):
    conn = connect(sim)
    driver = nxos.Driver(conn, "leaf4")
    driver.prepare()
    return conn, driver


def test_driver_transaction_commit_timeout_confirm(sim):
    lines = nxos_render.render_plan(plan())
    conn, driver = _driver(sim)
    try:
        driver.open_session("s1")
        driver.load(lines)
        assert "  mtu 9214" not in sim.running("leaf4")       # validated only
        diff = driver.diff()
        assert "service-policy type qos input LF-QOS" in diff and "class-map type qos match-any LF-TC3" in diff
        driver.commit(300)
        assert sim.pending("leaf4")["pending_commit"]
        assert driver.pending()["session"] == "s1"
        driver.confirm()
        assert not sim.pending("leaf4")["pending_commit"]
        assert driver.readback_missing(lines) == []
        assert "lf-s1" not in conn.send_command("dir bootflash:")  # the session's files are deleted
        driver.save()
        time.sleep(300 * SCALE + 0.3)
        assert driver.readback_missing(lines) == []
    finally:
        conn.disconnect()


def test_driver_rollback_while_the_timer_runs(sim):
    before = nxos_readers.parse_config(sim.running("leaf4"))
    conn, driver = _driver(sim)
    try:
        driver.open_session("s2")
        driver.load(nxos_render.render_plan(plan()))
        driver.commit(300)
        driver.rollback()
        assert not sim.pending("leaf4")["pending_commit"]
        assert nxos_readers.parse_config(sim.running("leaf4")) == before
    finally:
        conn.disconnect()


def test_driver_timer_expiry_restores_and_a_new_session_is_refused_meanwhile(sim):
    before = nxos_readers.parse_config(sim.running("leaf4"))
    conn, driver = _driver(sim)
    try:
        driver.open_session("s3")
        driver.load(nxos_render.render_plan(plan()))
        driver.commit(30)
        # another run sees session s3's files and its live change: refused (issue 31: no 'show config-replace status')
        with pytest.raises(_base.DeviceError, match="the change of session s3 is live"):
            nxos.Driver(conn, "leaf4").open_session("other")
        assert nxos.Driver(conn, "leaf4").pending() == {"session": "s3", "remaining_s": None, "certain": False}
        time.sleep(30 * SCALE + 0.5)
        assert nxos_readers.parse_config(sim.running("leaf4")) == before
        with pytest.raises(_base.DeviceError, match="rolled back") as caught:
            driver.confirm()
        assert caught.value.state == _base.ROLLED_BACK
        assert nxos.Driver(conn, "leaf4").pending() is None
        nxos.Driver(conn, "leaf4").open_session("other")  # its files are gone: nothing blocks a new run
    finally:
        conn.disconnect()


def test_driver_load_reports_the_line_the_switch_refuses(sim):
    sim.set_faults("leaf4", {"reject_lines": ["^configure replace .* verify-only$"]})
    conn, driver = _driver(sim)
    try:
        driver.open_session("s4")
        with pytest.raises(_base.DeviceError, match="rejected the configuration"):
            driver.load(nxos_render.render_plan(plan()))
        assert "  mtu 9214" not in sim.running("leaf4")
    finally:
        conn.disconnect()


def test_reject_lines_fault_prints_the_nxos_parser_error(sim):
    sim.set_faults("leaf4", {"reject_lines": ["^show version$"]})
    conn = connect(sim)
    try:
        out = conn.send_command("show version")
        assert out.splitlines()[-1] == "% Invalid command at '^' marker." and nxos.rejection(out)
    finally:
        conn.disconnect()


def test_abbreviations_and_a_line_of_a_parent_mode(sim):
    conn = connect(sim)
    try:
        conn.send_command("conf t", expect_string=r"\(config\)#")
        conn.send_command("int e1/2", expect_string=r"\(config-if\)#")
        conn.send_command("mtu 9000", expect_string=r"\(config-if\)#")
        # not an interface line: NX-OS takes it in the parent mode and leaves the sub-mode
        assert conn.send_command("system qos", expect_string=r"\(config-sys-qos\)#") == ""
        conn.send_command("end", expect_string=r"#")
        assert "interface Ethernet1/2\n  mtu 9000" in conn.send_command("sh run")
    finally:
        conn.disconnect()


def test_the_switch_boots_from_its_startup_config_and_keeps_it_without_a_save(sim):
    # The lab launcher stores startup_lines() at every stop: a run that saves nothing must not lose the
    # configuration the switch booted from (the next lab run would start from an empty switch).
    assert "feature scp-server" in sim.startup("leaf4")
    sim.load("leaf4", ["interface Ethernet1/1", "mtu 9216"])
    assert "  mtu 9216" not in sim.startup("leaf4") and "mtu 9216" not in "\n".join(sim.startup("leaf4"))


def test_the_interface_forms_of_published_tor_configurations_are_taken_and_read(sim):
    """'priority-flow-control mode on send-tlv' and 'service-policy type qos input NAME no-stats' (Microsoft's Azure
    Local reference Nexus TOR configuration; issue 31): the switch takes them and prints them back; the driver's reader
    reads PFC on and the policy applied (before issue 31 it read PFC off and no policy)."""
    running = sim.load("leaf4", ["class-map type qos match-any C3", "match dscp 26", "policy-map type qos P", "class C3",
                                 "set qos-group 3", "interface Ethernet1/1", "priority-flow-control mode on send-tlv",
                                 "service-policy type qos input P no-stats"])
    assert "  priority-flow-control mode on send-tlv\n" in running and "  service-policy type qos input P no-stats\n" in running
    intf = nxos_readers.parse_config(running)["interfaces"]["Ethernet1/1"]
    assert intf["pfc_enabled"] is True and intf["qos_policy"] == "P" and intf["trust"] == "dscp"


def test_driver_rollback_stops_the_timer_and_replaces_with_the_saved_configuration(sim):
    """The documented path (issue 31): 'configure replace commit' then 'configure replace <before-file>'."""
    before = nxos_readers.parse_config(sim.running("leaf4"))
    conn, driver = _driver(sim)
    try:
        driver.open_session("s5")
        driver.load(nxos_render.render_plan(plan()))
        driver.commit(600)
        assert sim.pending("leaf4")["pending_commit"]
        nxos.Driver(conn, "leaf4").rollback("s5")
        assert nxos_readers.parse_config(sim.running("leaf4")) == before
        assert not sim.pending("leaf4")["pending_commit"]
        events = [e["event"] for e in sim.log("leaf4")["events"]]
        assert events[-2:] == ["commit_confirmed", "replace"]
    finally:
        conn.disconnect()


@pytest.mark.parametrize("reply, state", [("ERROR: No configure replace commit-timeout is in progress\n", _base.UNKNOWN), ("", _base.COMMITTED)])
def test_confirming_a_change_confirmed_by_hand_under_both_unpublished_replies(tmp_path, reply, state):
    """What 'configure replace commit' prints without a timer is unpublished; the lab models an error line and
    nothing. The driver never reads success from it: an error line leaves the timer unknown (files kept), none
    confirms (files deleted); the change is live either way."""
    with SimProcess({"time_scale": SCALE, "switches": [_spec(commit_reply_without_timer=reply)]}, str(tmp_path)) as sim:
        conn, driver = _driver(sim)
        try:
            driver.open_session("s6")
            driver.load(nxos_render.render_plan(plan()))
            driver.commit(600)
            assert conn.send_command("configure replace commit").strip() == ""  # confirmed by hand; the files stay
            other = nxos.Driver(conn, "leaf4")
            if state == _base.COMMITTED:
                other.confirm("s6")
                assert "lf-s6-target.cfg" not in conn.send_command("dir bootflash:")
            else:
                with pytest.raises(_base.DeviceError, match="whether a commit timer still runs cannot be read") as caught:
                    other.confirm("s6")
                assert caught.value.state == state and "lf-s6-target.cfg" in conn.send_command("dir bootflash:")
            assert "  mtu 9214" in sim.running("leaf4") and not sim.pending("leaf4")["pending_commit"]
        finally:
            conn.disconnect()
