# SPDX-License-Identifier: GPL-3.0-or-later
"""plugins/module_utils/_common/_rollback_timer.py without Ansible and without forking: an injected
clock, a fake process starter, a fake liveness check; real files under tmp_path and real
(fast) commands."""

from __future__ import annotations

import json
import os
import signal
import stat
import time

import pytest

from ansible_collections.lossless.fabric.plugins.module_utils._common import _rollback_timer as rt

T0 = 1796032800.0  # 2026-11-30T10:00:00Z


class Clock:
    def __init__(self, start: float = T0):
        self.t = start

    def __call__(self) -> float:
        return self.t


class Env:
    """Everything run() takes besides the parameters, all fake except the runner and the files."""

    def __init__(self, tmp_path):
        self.tmp = tmp_path
        self.state_dir = str(tmp_path / "state")
        self.clock = Clock()
        self.spawned: list[str] = []
        self.running: set[int] = set()
        self.ran: list[list[str]] = []
        self.sleeps: list[float] = []

    def spawn(self, store, arm_id):
        self.spawned.append(arm_id)
        pid = 40000 + len(self.spawned)
        self.running.add(pid)
        return pid, "start-%d" % pid

    def alive(self, pid, start):
        return pid in self.running and start == "start-%d" % pid

    def sleep(self, seconds):
        self.sleeps.append(seconds)
        self.clock.t += seconds
        # The fake timer process "sees" the settled record within its step: it is gone.
        self.running.clear()

    def runner(self, argv, timeout):
        self.ran.append(argv)
        return rt.run_argv(argv, timeout)

    def run(self, check_mode=False, **params):
        params.setdefault("state_dir", self.state_dir)
        return rt.run(params, check_mode=check_mode, now=self.clock, spawn=self.spawn, alive=self.alive,
                      sleep=self.sleep, runner=self.runner)

    def store(self, name="w1-opensm"):
        return rt.Store(self.state_dir, name)


@pytest.fixture
def env(tmp_path):
    return Env(tmp_path)


@pytest.fixture
def files(tmp_path):
    conf = tmp_path / "etc" / "opensm.conf"
    conf.parent.mkdir()
    conf.write_text("sm_priority 14\n")
    os.chmod(conf, 0o640)
    parts = tmp_path / "etc" / "partitions.conf"
    parts.write_text("Default=0x7fff, ipoib : ALL=full;\n")
    os.chmod(parts, 0o644)
    return {"conf": str(conf), "parts": str(parts), "new": str(tmp_path / "etc" / "qos-policy.conf"),
            "marker1": str(tmp_path / "m1"), "marker2": str(tmp_path / "m2")}


def _arm(env, files, timeout=60, commands=None, name="w1-opensm"):
    return env.run(name=name, state="armed", paths=[files["conf"], files["parts"], files["new"]],
                   commands=commands if commands is not None else [["touch", files["marker1"]], ["touch", files["marker2"]]],
                   confirm_timeout=timeout)


def _change(files):
    """The change the timer guards: new content, a mode change, a new file."""
    with open(files["conf"], "w") as handle:
        handle.write("sm_priority 0\n")
    os.chmod(files["conf"], 0o666)
    with open(files["new"], "w") as handle:
        handle.write("qos-levels\n")


def _read(path):
    with open(path) as handle:
        return handle.read()


# ------------------------------------------------------------------ armed

def test_arm_saves_copies_and_returns_the_deadline(env, files):
    result = _arm(env, files, timeout=900)
    assert result["changed"] is True
    assert result["pending_until"] == "2026-11-30T10:15:00+00:00"
    assert result["deadline_epoch"] == T0 + 900
    assert [b["existed"] for b in result["backup"]] == [True, True, False]
    assert result["backup"][2] == {"path": files["new"], "existed": False, "sha256": None}
    assert len(result["backup"][0]["sha256"]) == 64
    assert env.spawned and result["timer"]["status"] == "armed" and result["timer"]["process_running"] is True
    store = env.store()
    assert stat.S_IMODE(os.stat(store.dir).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(store.files_dir).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(store.record_path).st_mode) == 0o600
    assert sorted(os.listdir(store.files_dir)) == ["0", "1"]  # no copy of the absent file
    assert stat.S_IMODE(os.stat(store.copy_path(0)).st_mode) == 0o600
    assert _read(store.copy_path(0)) == "sm_priority 14\n"
    record = json.loads(_read(store.record_path))
    assert record["status"] == "armed" and record["pid"] == 40001 and record["arm_id"] == env.spawned[0]
    assert record["backup"][0]["mode"] == 0o640


def test_arm_twice_fails_naming_the_deadline(env, files):
    _arm(env, files, timeout=120)
    with pytest.raises(rt.TimerError, match=r"timer w1-opensm is already armed until 2026-11-30T10:02:00\+00:00"):
        _arm(env, files)
    assert len(env.spawned) == 1


def test_arm_check_mode_writes_nothing_and_starts_nothing(env, files):
    result = _arm(env, files, timeout=30)
    # a second name in check mode: same shape, nothing on disk
    result2 = env.run(check_mode=True, name="other", state="armed", paths=[files["conf"]], confirm_timeout=30)
    assert set(result2) >= {"changed", "pending_until", "deadline_epoch", "backup", "timer"}
    assert result2["changed"] is True and result2["backup"][0]["sha256"] == result["backup"][0]["sha256"]
    assert not os.path.exists(os.path.join(env.state_dir, "other"))
    assert len(env.spawned) == 1


def test_arm_check_mode_on_a_fresh_host_creates_no_state_dir(env, files):
    env.run(check_mode=True, name="w1-opensm", state="armed", paths=[files["conf"]], confirm_timeout=30)
    assert not os.path.exists(env.state_dir) and not env.spawned


def test_arm_refuses_a_symlink_and_a_directory_before_writing(env, files, tmp_path):
    link = tmp_path / "etc" / "link.conf"
    link.symlink_to(files["conf"])
    with pytest.raises(rt.TimerError, match=r"paths\[1\]: .*link.conf is a symlink \(to .*opensm.conf\)"):
        env.run(name="x", state="armed", paths=[files["conf"], str(link)], confirm_timeout=5)
    with pytest.raises(rt.TimerError, match=r"paths\[0\]: .*etc is not a regular file"):
        env.run(name="x", state="armed", paths=[str(tmp_path / "etc")], confirm_timeout=5)
    assert not os.path.exists(env.state_dir)


def test_arm_fails_cleanly_when_the_process_cannot_start(env, files):
    def broken(store, arm_id):
        raise OSError(11, "Resource temporarily unavailable")

    with pytest.raises(rt.TimerError, match="could not start the timer process .*nothing was armed"):
        rt.run({"name": "w1-opensm", "state": "armed", "paths": [files["conf"]], "confirm_timeout": 5, "state_dir": env.state_dir},
               now=env.clock, spawn=broken, alive=env.alive)
    assert env.run(name="w1-opensm")["timer"]["status"] == "absent"


def test_rearm_after_confirm_and_an_old_process_stands_down(env, files):
    _arm(env, files)
    env.run(name="w1-opensm", state="confirmed")
    old = env.spawned[0]
    _arm(env, files)
    assert env.spawned[1] != old
    # the first arm's process, had it still been around, sees another arm and stops
    assert rt.daemon_loop(env.store(), old, now=env.clock, sleep=env.sleep, runner=env.runner) == "settled"
    assert env.run(name="w1-opensm")["timer"]["status"] == "armed"


# ------------------------------------------------------------------ fire

def test_fire_waits_for_the_deadline_then_puts_everything_back(env, files):
    _arm(env, files, timeout=60)
    _change(files)
    env.clock.t = T0 + 59
    assert rt.fire(env.store(), now=env.clock, runner=env.runner) is None
    assert _read(files["conf"]) == "sm_priority 0\n"
    env.clock.t = T0 + 60
    record = rt.fire(env.store(), now=env.clock, runner=env.runner)
    assert record["status"] == "expired"
    assert _read(files["conf"]) == "sm_priority 14\n"
    assert stat.S_IMODE(os.stat(files["conf"]).st_mode) == 0o640
    assert not os.path.exists(files["new"])
    assert [r["action"] for r in record["outcome"]["restored"]] == ["written", "unchanged", "removed"]
    assert env.ran == [["touch", files["marker1"]], ["touch", files["marker2"]]]
    assert os.path.exists(files["marker1"]) and os.path.exists(files["marker2"])
    assert record["outcome"]["fired"] is True and record["outcome"]["failed"] is None
    assert not os.path.exists(env.store().files_dir)  # all back: the copies are gone
    # nothing left to fire
    assert rt.fire(env.store(), now=env.clock, runner=env.runner) is None
    timer = env.run(name="w1-opensm")["timer"]
    assert timer["status"] == "expired" and timer["settled_at"] == "2026-11-30T10:01:00+00:00"
    assert timer["outcome"]["commands"][0]["rc"] == 0


def test_daemon_loop_sleeps_in_short_steps_and_fires(env, files):
    _arm(env, files, timeout=5)
    _change(files)
    assert rt.daemon_loop(env.store(), env.spawned[0], now=env.clock, sleep=env.sleep, runner=env.runner) == "fired"
    assert env.sleeps and max(env.sleeps) <= rt.STEP
    assert env.clock.t >= T0 + 5
    assert _read(files["conf"]) == "sm_priority 14\n"
    assert env.run(name="w1-opensm")["timer"]["status"] == "expired"


def test_daemon_loop_stops_when_confirmed(env, files):
    _arm(env, files, timeout=5)
    store = env.store()

    def sleep_then_confirm(seconds):
        env.sleep(seconds)
        if env.clock.t >= T0 + 2 and env.run(name="w1-opensm")["timer"]["status"] == "armed":
            env.run(name="w1-opensm", state="confirmed")

    _change(files)
    assert rt.daemon_loop(store, env.spawned[0], now=env.clock, sleep=sleep_then_confirm, runner=env.runner) == "settled"
    assert env.clock.t < T0 + 5
    assert _read(files["conf"]) == "sm_priority 0\n" and env.ran == []


def test_a_file_changed_only_in_mode_is_written_back(env, files):
    _arm(env, files, commands=[])
    os.chmod(files["parts"], 0o600)
    env.clock.t = T0 + 61
    record = rt.fire(env.store(), now=env.clock, runner=env.runner)
    assert [r["action"] for r in record["outcome"]["restored"]] == ["unchanged", "written", "unchanged"]
    assert stat.S_IMODE(os.stat(files["parts"]).st_mode) == 0o644


def test_a_file_that_cannot_be_put_back_skips_the_commands_and_keeps_the_copies(env, files, tmp_path):
    other = tmp_path / "gone" / "x.conf"
    other.parent.mkdir()
    other.write_text("a\n")
    env.run(name="w1-opensm", state="armed", paths=[files["conf"], str(other)], commands=[["touch", files["marker1"]]],
            confirm_timeout=10)
    _change(files)
    other.unlink()
    other.parent.rmdir()
    with pytest.raises(rt.TimerError, match=r"could not put back .*gone/x.conf \(FileNotFoundError.*commands not run"):
        env.run(name="w1-opensm", state="rolled_back")
    assert _read(files["conf"]) == "sm_priority 14\n"  # the others still went back
    assert env.ran == [] and not os.path.exists(files["marker1"])
    timer = env.run(name="w1-opensm")["timer"]
    assert timer["status"] == "rolled_back" and timer["outcome"]["commands_skipped"] is True
    assert [c["copy"] for c in timer["saved_copies"]] == [env.store().copy_path(0), env.store().copy_path(1)]
    assert os.path.exists(env.store().copy_path(1))
    # those copies are never overwritten by a new arm
    with pytest.raises(rt.TimerError, match=r"could not put every file back .*saved copies are still in .*/w1-opensm/files - move them away"):
        _arm(env, files)
    assert _read(env.store().copy_path(0)) == "sm_priority 14\n" and len(env.spawned) == 1
    os.rename(env.store().files_dir, str(tmp_path / "kept"))
    assert _arm(env, files)["timer"]["status"] == "armed"


# ------------------------------------------------------------------ confirmed

def test_confirm_keeps_the_change_deletes_the_copies_and_is_idempotent(env, files):
    _arm(env, files)
    _change(files)
    result = env.run(name="w1-opensm", state="confirmed")
    assert result["changed"] is True and result["process_exited"] is True
    assert result["timer"]["status"] == "confirmed" and result["timer"]["saved_copies"] == []
    assert not os.path.exists(env.store().files_dir)
    assert _read(files["conf"]) == "sm_priority 0\n"
    again = env.run(name="w1-opensm", state="confirmed")
    assert again["changed"] is False and "process_exited" not in again
    env.clock.t = T0 + 3600
    assert rt.fire(env.store(), now=env.clock, runner=env.runner) is None
    assert _read(files["conf"]) == "sm_priority 0\n"


def test_confirm_reports_a_process_that_does_not_exit(env, files):
    _arm(env, files)

    def sleep_only(seconds):
        env.clock.t += seconds

    result = rt.run({"name": "w1-opensm", "state": "confirmed", "state_dir": env.state_dir}, now=env.clock,
                    alive=env.alive, sleep=sleep_only)
    assert result["changed"] is True and result["process_exited"] is False


def test_confirm_check_mode_changes_nothing(env, files):
    _arm(env, files)
    assert env.run(check_mode=True, name="w1-opensm", state="confirmed")["changed"] is True
    assert env.run(name="w1-opensm")["timer"]["status"] == "armed"
    assert os.path.exists(env.store().copy_path(0))


def test_confirm_after_the_timer_fired_fails(env, files):
    _arm(env, files, timeout=60)
    env.clock.t = T0 + 75
    rt.fire(env.store(), now=env.clock, runner=env.runner)
    with pytest.raises(rt.TimerError, match=r"^timer w1-opensm already rolled back at 2026-11-30T10:01:15\+00:00, by itself"):
        env.run(name="w1-opensm", state="confirmed")


def test_confirm_after_rolled_back_fails(env, files):
    _arm(env, files)
    env.run(name="w1-opensm", state="rolled_back")
    with pytest.raises(rt.TimerError, match=r"^timer w1-opensm already rolled back at .* by state=rolled_back"):
        env.run(name="w1-opensm", state="confirmed")


@pytest.mark.parametrize("state", ["confirmed", "rolled_back"])
def test_settling_a_timer_that_does_not_exist_fails_naming_it(env, state):
    with pytest.raises(rt.TimerError, match=r"timer nosuch does not exist in .*/state"):
        env.run(name="nosuch", state=state)
    assert not os.path.exists(env.state_dir)


# ------------------------------------------------------------------ rolled_back

def test_rolled_back_puts_back_now_runs_the_commands_and_is_idempotent(env, files):
    _arm(env, files)
    _change(files)
    check = env.run(check_mode=True, name="w1-opensm", state="rolled_back")
    assert check["changed"] is True and [r["action"] for r in check["restored"]] == ["written", "unchanged", "removed"]
    assert [c["argv"] for c in check["commands"]] == [["touch", files["marker1"]], ["touch", files["marker2"]]]
    assert env.ran == [] and _read(files["conf"]) == "sm_priority 0\n"

    result = env.run(name="w1-opensm", state="rolled_back")
    assert result["changed"] is True and result["fired"] is False and result["process_exited"] is True
    assert [r["action"] for r in result["restored"]] == ["written", "unchanged", "removed"]
    assert [c["rc"] for c in result["commands"]] == [0, 0]
    assert env.ran == [["touch", files["marker1"]], ["touch", files["marker2"]]]
    assert _read(files["conf"]) == "sm_priority 14\n" and not os.path.exists(files["new"])
    assert result["timer"]["status"] == "rolled_back"

    again = env.run(name="w1-opensm", state="rolled_back")
    assert again["changed"] is False and again["fired"] is False and again["restored"] == result["restored"]
    assert len(env.ran) == 2
    # and the timer never fires afterwards
    env.clock.t = T0 + 3600
    assert rt.fire(env.store(), now=env.clock, runner=env.runner) is None


def test_rolled_back_after_the_timer_fired_returns_that_outcome(env, files):
    _arm(env, files, timeout=60)
    _change(files)
    env.clock.t = T0 + 60
    fired = rt.fire(env.store(), now=env.clock, runner=env.runner)
    result = env.run(name="w1-opensm", state="rolled_back")
    assert result["changed"] is False and result["fired"] is True
    assert result["restored"] == fired["outcome"]["restored"] and result["commands"] == fired["outcome"]["commands"]
    assert len(env.ran) == 2


def test_rolled_back_after_confirm_fails(env, files):
    _arm(env, files)
    env.run(name="w1-opensm", state="confirmed")
    with pytest.raises(rt.TimerError, match="timer w1-opensm was confirmed at .*nothing to roll back"):
        env.run(name="w1-opensm", state="rolled_back")


def test_a_failing_command_fails_the_rollback_naming_argv_rc_stderr_and_stops_the_rest(env, files, tmp_path):
    script = tmp_path / "reload.sh"
    script.write_text("#!/bin/sh\necho 'opensm: no such unit' >&2\nexit 5\n")
    os.chmod(script, 0o755)
    _arm(env, files, commands=[["touch", files["marker1"]], [str(script), "reload"], ["touch", files["marker2"]]])
    _change(files)
    with pytest.raises(rt.TimerError) as err:
        env.run(name="w1-opensm", state="rolled_back")
    msg = str(err.value)
    assert "files put back, but command ['%s', 'reload'] failed: rc=5 stderr='opensm: no such unit'" % script in msg
    assert [c["rc"] for c in err.value.result["commands"]] == [0, 5]
    assert os.path.exists(files["marker1"]) and not os.path.exists(files["marker2"])
    assert _read(files["conf"]) == "sm_priority 14\n"
    timer = env.run(name="w1-opensm")["timer"]
    assert timer["status"] == "rolled_back" and timer["outcome"]["failed"] == msg


def test_a_failing_command_when_fired_is_recorded(env, files):
    _arm(env, files, commands=[["false"]], timeout=1)
    env.clock.t = T0 + 1
    record = rt.fire(env.store(), now=env.clock, runner=env.runner)
    assert record["status"] == "expired"
    assert "command ['false'] failed: rc=1" in record["outcome"]["failed"]


# ------------------------------------------------------------------ gathered

def test_gathered_absent_and_armed(env, files):
    absent = env.run(name="w1-opensm")
    assert absent == {"changed": False, "warnings": [], "timer": absent["timer"]}
    assert absent["timer"]["status"] == "absent" and absent["timer"]["pending_until"] is None
    assert not os.path.exists(env.state_dir)
    _arm(env, files, timeout=90)
    timer = env.run(name="w1-opensm")["timer"]
    assert timer["status"] == "armed" and timer["pending_until"] == "2026-11-30T10:01:30+00:00"
    assert timer["paths"] == [files["conf"], files["parts"], files["new"]]
    assert timer["process_running"] is True and timer["overdue"] is False and timer["outcome"] is None


def test_gathered_names_the_saved_copies_of_a_lost_timer(env, files):
    _arm(env, files, timeout=90)
    env.running.clear()  # host rebooted / kill -9
    env.clock.t = T0 + 91
    result = env.run(name="w1-opensm")
    assert result["timer"]["overdue"] is True and result["timer"]["status"] == "armed"
    (warning,) = result["warnings"]
    assert "its process is gone" in warning and env.store().copy_path(0) in warning and "state=rolled_back" in warning
    # it can still be settled
    assert env.run(name="w1-opensm", state="rolled_back")["changed"] is True


# ------------------------------------------------------------------ validation

@pytest.mark.parametrize("params, message", [
    ({"name": "-x"}, r"name: '-x' does not match"),
    ({"name": "a" * 65}, r"name: 'a{65}' does not match"),
    ({"name": "a/b"}, r"name: 'a/b' does not match"),
    ({"name": "ok", "state": "armed", "paths": ["etc/x"], "confirm_timeout": 5}, r"paths\[0\]: 'etc/x' is not an absolute path"),
    ({"name": "ok", "state": "armed", "paths": ["/etc/x\n/etc/y"], "confirm_timeout": 5}, r"paths\[0\]: '/etc/x\\n/etc/y' is not an absolute"),
    ({"name": "ok", "state": "armed", "paths": ["/etc/x\0"], "confirm_timeout": 5}, r"paths\[0\]: '/etc/x\\x00'"),
    ({"name": "ok", "state": "armed", "paths": ["/etc/./x"], "confirm_timeout": 5}, r"paths\[0\]: '/etc/./x' is not in normal form"),
    ({"name": "ok", "state": "armed", "paths": ["/a", "/a"], "confirm_timeout": 5}, r"paths\[1\]: '/a' is listed twice"),
    ({"name": "ok", "state": "armed", "paths": [], "confirm_timeout": 5}, r"paths: a non-empty list"),
    ({"name": "ok", "state": "armed", "paths": ["/a"], "confirm_timeout": 0}, r"confirm_timeout: 0 is not a whole number of seconds > 0"),
    ({"name": "ok", "state": "armed", "paths": ["/a"], "confirm_timeout": -3}, r"confirm_timeout: -3"),
    ({"name": "ok", "state": "armed", "paths": ["/a"], "confirm_timeout": True}, r"confirm_timeout: True"),
    ({"name": "ok", "state": "armed", "paths": ["/a"], "confirm_timeout": 5, "commands": ["systemctl reload opensm"]},
     r"commands\[0\]: 'systemctl reload opensm' is not an argv list"),
    ({"name": "ok", "state": "armed", "paths": ["/a"], "confirm_timeout": 5, "commands": [["systemctl", "reload\nreboot"]]},
     r"commands\[0\]\[1\]: 'reload\\nreboot' carries a newline or NUL"),
    ({"name": "ok", "state": "armed", "paths": ["/a"], "confirm_timeout": 5, "commands": [["kill", 1]]}, r"commands\[0\]\[1\]: 1 is not a string"),
    ({"name": "ok", "state": "armed", "paths": ["/a"], "confirm_timeout": 5, "commands": [[]]}, r"commands\[0\]: \[\] is not an argv list"),
    ({"name": "ok", "state": "armed", "paths": ["/a"], "confirm_timeout": 5, "commands": [[""]]}, r"commands\[0\]\[0\]: the program name is empty"),
    ({"name": "ok", "state": "confirmed", "paths": ["/a"]}, r"paths: only used with state=armed, got \['/a'\] with state=confirmed"),
    ({"name": "ok", "state": "gathered", "confirm_timeout": 5}, r"confirm_timeout: only used with state=armed"),
    ({"name": "ok", "state_dir": "rel/dir"}, r"state_dir: 'rel/dir' is not an absolute path"),
])
def test_bad_input_names_the_option_and_value_and_touches_nothing(env, params, message):
    with pytest.raises(rt.TimerError, match=message):
        env.run(**params)
    assert not os.path.exists(env.state_dir) and not env.spawned


# ------------------------------------------------------------------ commands and processes

def test_run_argv_reports_a_missing_program_a_timeout_and_clips_output(tmp_path):
    missing = rt.run_argv(["/nonexistent/opensm-reload"])
    assert missing["rc"] is None and "cannot run /nonexistent/opensm-reload" in missing["stderr"]
    timed = rt.run_argv(["sleep", "30"], timeout=0.2)
    assert timed["rc"] is None and "timed out" in timed["stderr"]
    big = rt.run_argv(["head", "-c", "10000", "/dev/zero"])
    assert big["rc"] == 0 and big["stdout"].startswith("\0" * rt.OUTPUT_LIMIT) and "more characters cut" in big["stdout"]
    assert len(big["stdout"]) < rt.OUTPUT_LIMIT + 100


def test_no_shell_is_involved(tmp_path):
    out = rt.run_argv(["echo", "$(id); touch %s" % (tmp_path / "pwned")])
    assert out["stdout"] == "$(id); touch %s\n" % (tmp_path / "pwned") and not (tmp_path / "pwned").exists()


def test_process_alive_tells_our_process_from_a_reused_pid():
    start = rt.proc_start_time(os.getpid())
    assert start is not None
    assert rt.process_alive(os.getpid(), start) is True
    assert rt.process_alive(os.getpid(), "1") is False
    assert rt.process_alive(None, None) is False


def test_iso_matches_switch_config_format():
    assert rt.iso(T0 + 0.7) == "2026-11-30T10:00:00+00:00"
    assert rt.iso(None) is None


def test_start_daemon_detaches_the_process(tmp_path):
    """The real double fork: own session, cwd /, only fds 0-2 and those on /dev/null; it ends when told."""
    release = str(tmp_path / "release")
    done = str(tmp_path / "done")

    def target():
        end = time.monotonic() + 60
        while not os.path.exists(release) and time.monotonic() < end:
            time.sleep(0.05)
        with open(done, "w") as handle:
            handle.write("ok")

    pid = rt.start_daemon(target)
    start = rt.proc_start_time(pid)
    try:
        assert pid != os.getpid() and start is not None
        # a new session (setsid in the first child), of which it is not the leader: it can never get a terminal
        assert os.getsid(pid) not in (os.getsid(0), pid)
        assert os.readlink("/proc/%d/cwd" % pid) == "/"
        fds = sorted(os.listdir("/proc/%d/fd" % pid), key=int)
        assert fds == ["0", "1", "2"]
        assert {os.readlink("/proc/%d/fd/%s" % (pid, fd)) for fd in fds} == {"/dev/null"}
    finally:
        open(release, "w").close()
        end = time.monotonic() + 60
        while rt.process_alive(pid, start) and time.monotonic() < end:
            time.sleep(0.05)
        if rt.process_alive(pid, start):
            os.kill(pid, signal.SIGKILL)
    assert not rt.process_alive(pid, start)
    assert open(done).read() == "ok"
