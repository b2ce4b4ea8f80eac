# SPDX-License-Identifier: GPL-3.0-or-later
"""_fabric_lock: one run per fabric from this controller; the holder named; free once its process is gone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from ansible_collections.lossless.fabric.plugins.module_utils._window import _fabric_lock

HOLD = textwrap.dedent("""
    import os, sys
    from ansible_collections.lossless.fabric.plugins.module_utils._window import _fabric_lock
    taken = _fabric_lock.acquire(sys.argv[1], "lab", os.getpid(), "playbooks/change_window.yml")
    print("taken" if taken["taken"] else "again", flush=True)
    sys.stdin.readline()
""")


def _holder(lock_dir):
    """A second process that takes the lock and holds it until its stdin closes."""
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(lock_dir)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    assert proc.stdout.readline().strip() == "taken"
    return proc


def test_a_second_run_refuses_naming_the_holder_and_takes_it_once_the_holder_is_gone(tmp_path):
    holder = _holder(tmp_path)
    try:
        with pytest.raises(_fabric_lock.LockError) as err:
            _fabric_lock.acquire(str(tmp_path), "lab", os.getpid(), "playbooks/site.yml")
        msg = str(err.value)
        assert "fabric lab is locked by another run from this controller: pid %d (started 20" % holder.pid in msg
        assert "playbook playbooks/change_window.yml" in msg and str(tmp_path / "lab.lock") in msg
        assert err.value.holder["pid"] == holder.pid
        assert _fabric_lock.holder_of(str(tmp_path), "lab")["pid"] == holder.pid
        # another fabric is not held
        assert _fabric_lock.acquire(str(tmp_path), "other", os.getpid(), "x.yml")["taken"] is True
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
    # gone (however it ended): free, nothing to clean up
    assert _fabric_lock.holder_of(str(tmp_path), "lab") is None
    taken = _fabric_lock.acquire(str(tmp_path), "lab", os.getpid(), "playbooks/site.yml")
    assert taken["taken"] is True and taken["previous"]["pid"] == holder.pid
    with open(taken["path"], encoding="utf-8") as handle:
        assert json.load(handle)["playbook"] == "playbooks/site.yml"
    assert oct(os.stat(taken["path"]).st_mode & 0o777) == "0o600"


def test_the_same_run_takes_it_again(tmp_path):
    first = _fabric_lock.acquire(str(tmp_path), "lab", os.getpid(), "site.yml")
    again = _fabric_lock.acquire(str(tmp_path), "lab", os.getpid(), "site.yml")
    assert first["taken"] is True and again["taken"] is False and again["holder"] == first["holder"]


def test_a_pid_reused_by_another_process_does_not_hold_it(tmp_path):
    path = _fabric_lock.lock_path(str(tmp_path), "lab")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        json.dump({"pid": os.getpid(), "pid_start": "1", "playbook": "old.yml"}, handle)  # our PID, another start time
    assert _fabric_lock.holder_of(str(tmp_path), "lab") is None
    assert _fabric_lock.acquire(str(tmp_path), "lab", os.getpid(), "new.yml")["taken"] is True


def test_a_torn_lock_file_is_free(tmp_path):
    path = _fabric_lock.lock_path(str(tmp_path), "lab")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("{not json")
    assert _fabric_lock.acquire(str(tmp_path), "lab", os.getpid(), "new.yml")["taken"] is True


def test_fabric_names_become_safe_file_names(tmp_path):
    assert _fabric_lock.lock_path(str(tmp_path), "dc1-roce") == str(tmp_path / "dc1-roce.lock")
    odd = _fabric_lock.lock_path(str(tmp_path), "dc 1/../x")
    assert os.path.dirname(odd) == str(tmp_path) and os.path.basename(odd).startswith("dc_1_.._x-")
    with pytest.raises(_fabric_lock.LockError, match="is not a fabric name"):
        _fabric_lock.lock_path(str(tmp_path), "")
