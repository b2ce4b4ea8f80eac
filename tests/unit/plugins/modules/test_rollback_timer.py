# SPDX-License-Identifier: GPL-3.0-or-later
"""lossless.fabric.rollback_timer end to end: the real module through ``ansible`` (ad hoc,
connection local), the real detached timer process, files under tmp_path.

Proves what the unit tests of _rollback_timer cannot: the process survives the module's
exit and Ansible's removal of its temp dir, Ansible does not wait for it (the ad hoc call
returns while a 300 s timer is armed), it fires by itself, and it exits when settled.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from ansible_collections.lossless.fabric.plugins.module_utils._common import _rollback_timer as rt

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", "..", ".."))
ANSIBLE = os.path.join(REPO, ".venv", "bin", "ansible")
# Generous bounds for a loaded 2-core machine; the tests wait *up to* these, they never assert durations.
CALL_TIMEOUT = 90
WAIT = 60

pytestmark = pytest.mark.skipif(not os.path.exists(ANSIBLE), reason="needs the repo venv's ansible")


class Host:
    def __init__(self, tmp_path):
        self.tmp = tmp_path
        self.state_dir = str(tmp_path / "state")
        self.calls = 0

    def module(self, check=False, **args):
        """One ad hoc run; returns (rc, result)."""
        args.setdefault("state_dir", self.state_dir)
        self.calls += 1
        tree = self.tmp / ("tree%d" % self.calls)
        cmd = [ANSIBLE, "localhost", "-i", "localhost,", "-c", "local", "-e", "ansible_python_interpreter=%s" % sys.executable,
               "-m", "lossless.fabric.rollback_timer", "-a", json.dumps(args), "-t", str(tree)]
        if check:
            cmd.append("--check")
        env = dict(os.environ, ANSIBLE_NOCOLOR="1", ANSIBLE_LOCAL_TEMP=str(self.tmp / "ansible-local"))
        # The timeout is what proves the detach: with an inherited pipe Ansible would wait for the timer process.
        proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=CALL_TIMEOUT, check=False)
        path = tree / "localhost"
        assert path.exists(), "no result from ansible: rc=%s\n%s\n%s" % (proc.returncode, proc.stdout, proc.stderr)
        return proc.returncode, json.loads(path.read_text())

    def ok(self, **args):
        rc, result = self.module(**args)
        assert rc == 0 and not result.get("failed"), result
        return result

    def records(self):
        if not os.path.isdir(self.state_dir):
            return []
        return [rt.Store(self.state_dir, name).read() for name in sorted(os.listdir(self.state_dir))]


@pytest.fixture
def host(tmp_path):
    h = Host(tmp_path)
    yield h
    # Every timer process this test started must be gone (each ends by itself); kill and fail otherwise.
    leftovers = []
    for record in h.records():
        pid, start = record.get("pid"), record.get("pid_start")
        end = time.monotonic() + WAIT
        while rt.process_alive(pid, start) and time.monotonic() < end:
            time.sleep(0.2)
        if rt.process_alive(pid, start):
            os.kill(pid, signal.SIGKILL)
            leftovers.append((record["name"], pid, record["status"]))
    assert not leftovers, "timer processes left running: %s" % leftovers


@pytest.fixture
def conf(tmp_path):
    path = tmp_path / "opensm.conf"
    path.write_text("sm_priority 14\n")
    os.chmod(path, 0o640)
    return path


def _wait_until_gone(pid, start):
    end = time.monotonic() + WAIT
    while rt.process_alive(pid, start):
        assert time.monotonic() < end, "timer process %d still running" % pid
        time.sleep(0.1)


def test_the_timer_fires_by_itself_restores_the_file_and_runs_the_command(host, conf, tmp_path):
    marker = tmp_path / "reloaded"
    added = tmp_path / "qos-policy.conf"
    armed = host.ok(name="w-fire", state="armed", paths=[str(conf), str(added)], commands=[["touch", str(marker)]], confirm_timeout=2)
    assert armed["changed"] is True and armed["pending_until"].endswith("+00:00")
    assert armed["backup"][1] == {"path": str(added), "existed": False, "sha256": None}
    conf.write_text("sm_priority 0\n")
    added.write_text("qos-levels\n")

    end = time.monotonic() + WAIT
    while True:
        timer = host.ok(name="w-fire")["timer"]
        if timer["status"] != "armed":
            break
        assert time.monotonic() < end, "timer never fired: %s" % timer
        time.sleep(0.5)
    assert timer["status"] == "expired"
    assert conf.read_text() == "sm_priority 14\n" and (conf.stat().st_mode & 0o777) == 0o640
    assert not added.exists() and marker.exists()
    assert [r["action"] for r in timer["outcome"]["restored"]] == ["written", "removed"]
    assert timer["outcome"]["commands"] == [{"argv": ["touch", str(marker)], "rc": 0, "stdout": "", "stderr": ""}]

    rc, result = host.module(name="w-fire", state="confirmed")
    assert rc != 0 and result["msg"].startswith("timer w-fire already rolled back at ")
    again = host.ok(name="w-fire", state="rolled_back")
    assert again["changed"] is False and again["fired"] is True


def test_confirmed_stops_the_process_and_keeps_the_change(host, conf):
    armed = host.ok(name="w-keep", state="armed", paths=[str(conf)], confirm_timeout=300)
    pid = armed["timer"]["pid"]
    start = rt.proc_start_time(pid)
    assert armed["timer"]["process_running"] is True and start is not None
    conf.write_text("sm_priority 0\n")
    rc, again = host.module(name="w-keep", state="armed", paths=[str(conf)], confirm_timeout=300)
    assert rc != 0 and "timer w-keep is already armed until %s" % armed["pending_until"] in again["msg"]

    confirmed = host.ok(name="w-keep", state="confirmed")
    assert confirmed["changed"] is True and confirmed["timer"]["status"] == "confirmed"
    _wait_until_gone(pid, start)
    assert conf.read_text() == "sm_priority 0\n"
    assert host.ok(name="w-keep", state="confirmed")["changed"] is False
    assert not os.path.exists(os.path.join(host.state_dir, "w-keep", "files"))


def test_rolled_back_restores_now_and_stops_the_process(host, conf, tmp_path):
    marker = tmp_path / "restarted"
    armed = host.ok(name="w-back", state="armed", paths=[str(conf)], commands=[["touch", str(marker)]], confirm_timeout=300)
    pid = armed["timer"]["pid"]
    start = rt.proc_start_time(pid)
    conf.write_text("sm_priority 0\n")
    back = host.ok(name="w-back", state="rolled_back")
    assert back["changed"] is True and back["fired"] is False
    assert back["restored"] == [{"path": str(conf), "action": "written"}] and back["commands"][0]["rc"] == 0
    assert conf.read_text() == "sm_priority 14\n" and marker.exists()
    _wait_until_gone(pid, start)
    assert host.ok(name="w-back", state="rolled_back")["changed"] is False


def test_check_mode_arms_nothing(host, conf):
    rc, result = host.module(check=True, name="w-check", state="armed", paths=[str(conf)], confirm_timeout=300)
    assert rc == 0 and result["changed"] is True and result["backup"][0]["existed"] is True
    assert not os.path.exists(host.state_dir)
    assert host.ok(name="w-check")["timer"]["status"] == "absent"


def test_bad_input_fails_before_anything_is_touched(host, conf):
    rc, result = host.module(name="w-bad", state="armed", paths=[str(conf)], commands=[["systemctl", "restart\nopensm"]],
                             confirm_timeout=300)
    assert rc != 0 and result["msg"] == "commands[0][1]: 'restart\\nopensm' carries a newline or NUL"
    assert not os.path.exists(host.state_dir)
