# SPDX-License-Identifier: GPL-3.0-or-later
"""What the change window tests (RoCE: test_change_window.py, InfiniBand: test_change_window_ib.py) share to run
playbooks/change_window.yml in the background, wait for the interim report it writes right after the change, and
kill it the way a crash or an operator does - every process it started included.

A lab here is any object with `argv(playbook, *args)` (the ansible-playbook argv against its inventory),
`inventory` (its inventory folder), `tmp` (a folder of the test's own) and `reports()` (the window's JSON reports)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from labrun import ROOT, ansible_env  # noqa: E402  # pylint: disable=import-error,wrong-import-position

sys.path.insert(0, os.path.join(ROOT, "tests", "lab"))
from labproc import wait_for  # noqa: E402  # pylint: disable=import-error,wrong-import-position


def start_window(lab, *args) -> subprocess.Popen:
    """The window in the background (its own process group, so that a kill reaches every worker); its output goes
    to <lab.tmp>/window.log."""
    log = open(os.path.join(str(lab.tmp), "window.log"), "w", encoding="utf-8")  # pylint: disable=consider-using-with  # closed by stop_window
    proc = subprocess.Popen(  # pylint: disable=consider-using-with  # stopped by stop_window
        lab.argv("change_window.yml", *args), cwd=ROOT, env=ansible_env(), stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    proc.log = log
    return proc


def window_log(lab) -> str:
    with open(os.path.join(str(lab.tmp), "window.log"), encoding="utf-8") as handle:
        return handle.read()


def _tree(pid: int) -> list[int]:
    """pid and every process descended from it, read from /proc."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open("/proc/%s/stat" % entry, encoding="utf-8") as handle:
                    ppid = int(handle.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue  # gone meanwhile
            children.setdefault(ppid, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        found.append(todo.pop())
        todo.extend(children.get(found[-1], []))
    return found


def _kill(proc: subprocess.Popen, sig: int) -> None:
    """Kill ansible-playbook - and every process it started: Ansible's workers start sessions of their own
    (WorkerProcess._detach), so the playbook's process group alone misses the task in flight, which would run on
    after the test. The playbook is stopped first: a worker it forked between reading /proc and the kill would
    otherwise be missed and finish its task on its own."""
    try:
        os.kill(proc.pid, signal.SIGSTOP)
    except ProcessLookupError:
        return
    groups = {proc.pid}
    for pid in _tree(proc.pid):
        try:
            groups.add(os.getpgid(pid))
        except ProcessLookupError:
            pass
    groups.discard(os.getpgrp())
    for group in sorted(groups, key=lambda g: g != proc.pid):  # the playbook first
        try:
            os.killpg(group, sig)
        except ProcessLookupError:
            pass
    try:
        os.kill(proc.pid, signal.SIGCONT)  # a stopped process acts on a signal other than SIGKILL only once continued
    except ProcessLookupError:
        pass


def stop_window(proc: subprocess.Popen, sig: int | None = None) -> None:
    """Send sig (if given) to the window and all it started, then wait for the playbook to end (SIGKILL after 10 min)."""
    if sig is not None and proc.poll() is None:
        _kill(proc, sig)
    try:
        proc.wait(timeout=600)
    finally:
        if proc.poll() is None:
            _kill(proc, signal.SIGKILL)
            proc.wait(timeout=30)
        proc.log.close()


def wait_until_pending(lab, proc: subprocess.Popen, timeout: float = 300) -> dict:
    """The interim report the window writes right after the change (verdict "in progress", devices pending); the
    window is killed and the test fails with its log if the playbook ends or the time runs out first."""
    return wait_until_report(lab, proc, lambda data: data["status"] == "in_progress", "the window's interim report", timeout)


def wait_until_report(lab, proc: subprocess.Popen, accept, what: str, timeout: float = 300) -> dict:
    """The first of the window's reports that ``accept(report)`` takes (reports are read as they are rewritten); the
    window is killed and the test fails with its log if the playbook ends or the time runs out first."""
    def found():
        if proc.poll() is not None:
            raise AssertionError("the window ended (rc %s) before %s" % (proc.returncode, what))
        for path in lab.reports():
            try:
                with open(path, encoding="utf-8") as handle:
                    data = json.load(handle)
            except ValueError:
                continue  # being rewritten
            if accept(data):
                return data
        return None

    try:
        return wait_for(found, what, timeout=timeout, interval=0.1)
    except AssertionError as exc:
        stop_window(proc, signal.SIGKILL)
        raise AssertionError("%s\n%s" % (exc, window_log(lab)[-6000:])) from None


def window_processes(lab) -> list[int]:
    """Processes still running this lab's change window (a worker reparented to init included)."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            with open("/proc/%s/cmdline" % entry, "rb") as handle:
                argv = handle.read().split(b"\0")
        except OSError:
            continue  # not a process, or gone meanwhile
        if lab.inventory.encode() in argv and b"playbooks/change_window.yml" in argv:
            found.append(int(entry))
    return found


def wait_until_window_gone(lab, timeout: float = 10) -> None:
    """No process of this lab's window is left. Right after a SIGKILL, /proc can still show a worker that is
    exiting, so this waits (bounded) rather than looking once."""
    left: list[int] = []

    def gone():
        left[:] = window_processes(lab)
        return not left

    try:
        wait_for(gone, "the killed window's processes to end", timeout=timeout, interval=0.1)
    except AssertionError as exc:
        raise AssertionError("%s: still running: %s" % (exc, left)) from None
