# SPDX-License-Identifier: GPL-3.0-or-later
"""Fault injection, host keys, authentication and process hygiene of the simulator."""
from __future__ import annotations

import os
import pathlib
import signal
import sys
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests" / "lab"))

from switchsim.client import SimProcess  # noqa: E402

netmiko = pytest.importorskip("netmiko")
paramiko = pytest.importorskip("paramiko")


@pytest.fixture
def sim(tmp_path):
    cfg = {"time_scale": 0.002, "switches": [
        {"name": "leaf1", "platform": "eos", "port": 0, "username": "admin", "password": "pw-eos"},
        {"name": "qfx1", "platform": "junos", "port": 0, "username": "netops", "password": "pw-junos"},
        {"name": "leaf3", "platform": "nvue", "port": 0, "username": "cumulus", "password": "pw-nv"},
    ]}
    with SimProcess(cfg, str(tmp_path)) as s:
        yield s


def eos(sim, password="pw-eos"):
    return netmiko.ConnectHandler(device_type="arista_eos", host="127.0.0.1", port=sim.port("leaf1"),
                                  username="admin", password=password, conn_timeout=10)


def test_wrong_password_fails_authentication(sim):
    with pytest.raises(netmiko.NetmikoAuthenticationException):
        eos(sim, password="nope")
    sim.set_faults("leaf1", {"wrong_password": True})
    with pytest.raises(netmiko.NetmikoAuthenticationException):
        eos(sim)
    sim.set_faults("leaf1", {"wrong_password": None})
    eos(sim).disconnect()
    # the password never shows up in the simulator's log or state
    text = open(sim.log_path, encoding="utf-8").read() + str(sim.log("leaf1")) + str(sim.state())
    assert "pw-eos" not in text


def test_changed_host_key_is_detected(sim, tmp_path):
    known = tmp_path / "known_hosts"
    c = paramiko.SSHClient()
    c.set_missing_host_key_policy(paramiko.AutoAddPolicy())
    c.connect("127.0.0.1", port=sim.port("qfx1"), username="netops", password="pw-junos",
              look_for_keys=False, allow_agent=False)
    c.save_host_keys(str(known))
    c.close()
    sim.rotate_host_key("qfx1")
    c = paramiko.SSHClient()
    c.load_host_keys(str(known))
    c.set_missing_host_key_policy(paramiko.RejectPolicy())
    with pytest.raises(paramiko.BadHostKeyException):
        c.connect("127.0.0.1", port=sim.port("qfx1"), username="netops", password="pw-junos",
                  look_for_keys=False, allow_agent=False)
    c.close()


def test_host_key_is_persisted(tmp_path):
    cfg = {"switches": [{"name": "a", "platform": "eos", "port": 0, "password": "x",
                         "host_key_file": str(tmp_path / "a.key")}]}
    with SimProcess(cfg, str(tmp_path / "one")) as s1:
        fp1 = s1.state()["switches"]["a"]["host_key_fingerprint"]
    with SimProcess(cfg, str(tmp_path / "two")) as s2:
        fp2 = s2.state()["switches"]["a"]["host_key_fingerprint"]
    assert fp1 == fp2 and (tmp_path / "a.key").exists()


def test_drop_after_n_commands(sim):
    conn = netmiko.ConnectHandler(device_type="cumulus_linux", host="127.0.0.1", port=sim.port("leaf3"),
                                  username="cumulus", password="pw-nv", conn_timeout=10)
    sim.set_faults("leaf3", {"drop_after_commands": 2})
    conn.send_command("nv set qos roce")        # 1
    conn.send_command("nv config diff")         # 2
    conn.write_channel("nv config apply -y\n")  # 3: the simulator drops the connection
    deadline = time.monotonic() + 5
    while conn.is_alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not conn.is_alive()
    try:
        conn.disconnect()
    except Exception:  # noqa: BLE001 - already gone
        pass
    assert sim.pending("leaf3")["rev_id"] == 1  # nothing was applied
    assert any(e["event"] == "fault_drop" for e in sim.log("leaf3")["events"])


def test_reject_line_with_vendor_error(sim):
    sim.set_faults("leaf1", {"reject_lines": [r"^priority-flow-control priority 3 no-drop$"]})
    conn = eos(sim)
    try:
        conn.enable()
        out = conn.send_config_set(["interface Ethernet1", "priority-flow-control priority 3 no-drop"],
                                   config_mode_command="configure session f1")
        assert "% Invalid input (at token 3: 'no-drop')" in out
    finally:
        conn.disconnect()
    sim.set_faults("qfx1", {"reject_lines": ["mtu"]})
    j = netmiko.ConnectHandler(device_type="juniper_junos", host="127.0.0.1", port=sim.port("qfx1"),
                               username="netops", password="pw-junos", conn_timeout=10)
    try:
        j.config_mode(config_command="configure private")
        assert "syntax error." in j.send_command("set interfaces et-0/0/0 mtu 9216")
    finally:
        j.disconnect()


def test_slow_replies(sim):
    conn = eos(sim)
    try:
        sim.set_faults("leaf1", {"delay": 0.4})
        t0 = time.monotonic()
        conn.send_command("show version")
        assert time.monotonic() - t0 >= 0.4
    finally:
        sim.set_faults("leaf1", {"delay": None})
        conn.disconnect()


def test_commit_error_fault(sim):
    sim.set_faults("qfx1", {"commit_error": "mgd: commit failed (simulated)"})
    j = netmiko.ConnectHandler(device_type="juniper_junos", host="127.0.0.1", port=sim.port("qfx1"),
                               username="netops", password="pw-junos", conn_timeout=10)
    try:
        j.config_mode(config_command="configure exclusive")
        j.send_command("set interfaces et-0/0/1 mtu 9216")
        with pytest.raises(ValueError, match="configuration check-out failed"):
            j.commit(confirm=True, confirm_delay=1)
        assert not sim.pending("qfx1")["pending_commit"]
    finally:
        j.disconnect()


def test_sigterm_stops_cleanly_and_leaves_nothing(tmp_path):
    cfg = {"switches": [{"name": "a", "platform": "nvue", "port": 0, "password": "x"}]}
    s = SimProcess(cfg, str(tmp_path))
    s.start()
    conn = netmiko.ConnectHandler(device_type="cumulus_linux", host="127.0.0.1", port=s.port("a"),
                                  username="admin", password="x", conn_timeout=10)
    pid = s.proc.pid
    t0 = time.monotonic()
    rc = s.stop()                                  # SIGTERM with an open session
    assert rc == 0 and time.monotonic() - t0 < 5
    assert not (tmp_path / "switchsim.state.json").exists()
    with pytest.raises(OSError):
        os.kill(pid, 0)
    try:
        conn.disconnect()
    except Exception:  # noqa: BLE001 - the server is gone
        pass


def test_sigint_also_stops(tmp_path):
    s = SimProcess({"switches": [{"name": "a", "platform": "junos", "port": 0, "password": "x"}]},
                   str(tmp_path))
    s.start()
    s.proc.send_signal(signal.SIGINT)
    assert s.proc.wait(5) == 0
    s.proc = None


def _shell(sim, name, user, password):
    client = paramiko.SSHClient()
    client.set_missing_host_key_policy(paramiko.AutoAddPolicy())
    client.connect("127.0.0.1", port=sim.port(name), username=user, password=password, look_for_keys=False, allow_agent=False)
    chan = client.invoke_shell()
    chan.settimeout(0.1)
    return client, chan


def _read(chan, until=None, seconds=0.6):
    """What the channel sends within ``seconds`` (returns early once ``until`` shows up)."""
    got = ""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not (until and until in got):
        try:
            data = chan.recv(65536)
        except TimeoutError:
            continue
        if not data:
            break
        got += data.decode()
    return got


def test_hang_on_a_command_stops_answering_and_keeps_the_session_open(sim):
    sim.set_faults("leaf1", {"hang": r"^show running-config$"})
    client, chan = _shell(sim, "leaf1", "admin", "pw-eos")
    try:
        assert _read(chan, until=">").endswith("leaf1>")
        chan.send("show version\n")
        assert "leaf1>" in _read(chan, until="leaf1>")  # other commands still answer
        chan.send("show running-config\n")
        assert _read(chan) == ""                        # no echo, no output, no prompt
        chan.send("show version\n")
        assert _read(chan) == ""                        # and nothing after it either
        assert chan.get_transport().is_active()         # the TCP/SSH session stays open
    finally:
        client.close()
    events = [e for e in sim.log("leaf1")["events"] if e["event"] == "fault_hang"]
    assert events and events[-1]["command"] == "show running-config"
    sim.set_faults("leaf1", {"hang": None})
    client, chan = _shell(sim, "leaf1", "admin", "pw-eos")
    try:
        _read(chan, until=">")
        chan.send("show running-config\n")
        assert "leaf1>" in _read(chan, until="leaf1>", seconds=3)
    finally:
        client.close()


@pytest.mark.parametrize("name, user, password", [("leaf1", "admin", "pw-eos"), ("qfx1", "netops", "pw-junos"), ("leaf3", "cumulus", "pw-nv")])
def test_hang_at_login_never_shows_a_prompt(sim, name, user, password):
    sim.set_faults(name, {"hang": "login"})
    client, chan = _shell(sim, name, user, password)
    try:
        chan.send("\n")
        assert _read(chan) == ""
    finally:
        client.close()
    assert any(e["event"] == "fault_hang" and e["command"] == "(login)" for e in sim.log(name)["events"])


def test_hang_fault_is_checked():
    from switchsim.core import Device, SimError  # pylint: disable=import-outside-toplevel

    dev = Device({"name": "x", "ports": []}, sim=None)
    with pytest.raises(SimError, match="hang takes"):
        dev.set_faults({"hang": 3})
    with pytest.raises(Exception, match="unterminated|missing"):
        dev.set_faults({"hang": "("})
    dev.set_faults({"hang": "^commit"})
    assert dev.hangs_on("commit timer 00:05:00") and not dev.hangs_on("show version") and not dev.hangs_on(None)


def test_sigterm_with_a_hung_session_still_stops(tmp_path):
    s = SimProcess({"switches": [{"name": "a", "platform": "nvue", "port": 0, "password": "x", "faults": {"hang": "login"}}]}, str(tmp_path))
    s.start()
    client, _chan = _shell(s, "a", "admin", "x")
    try:
        assert s.stop() == 0
    finally:
        client.close()
