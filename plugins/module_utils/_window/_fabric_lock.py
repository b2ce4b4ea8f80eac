# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""A lock per fabric on the controller: one run (change window, site run) at a time from this controller.

The holder is the ansible-playbook process of the run (the parent of the worker an action plugin runs in): its PID,
its start time as /proc gives it (which tells it from a later process with the same PID), the playbook and the time
it took the lock. The lock is free as soon as that process is gone - whichever way it ended (success, failure,
Ctrl-C, SIGTERM, kill -9) - so there is nothing to release and nothing stale to clean up. The same run may take it
again (each play of site.yml plans the fabric). Reading and writing the holder happens under an flock of the file,
so two runs starting at once cannot both take it."""

from __future__ import annotations

import contextlib
import datetime
import fcntl
import hashlib
import json
import os
import re
from collections.abc import Callable, Iterator

from ansible_collections.lossless.fabric.plugins.module_utils._common._rollback_timer import proc_start_time

DEFAULT_DIR = "~/.ansible/lossless-fabric/locks"


class LockError(Exception):
    """The fabric is held by another run (or the lock file cannot be used); the message names the holder."""

    def __init__(self, msg: str, holder: dict | None = None):
        super().__init__(msg)
        self.holder = holder


def lock_path(lock_dir: str, fabric: str) -> str:
    """<lock_dir>/<fabric>.lock; a fabric name with other characters than [A-Za-z0-9_.-] is cleaned and hashed."""
    if not isinstance(fabric, str) or not fabric:
        raise LockError("fabric: %r is not a fabric name (lossless_fabric.name)" % (fabric,))
    base = fabric
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,79}", fabric):
        base = re.sub(r"[^A-Za-z0-9_.-]", "_", fabric)[:60] + "-" + hashlib.sha1(fabric.encode("utf-8")).hexdigest()[:10]
    return os.path.join(os.path.expanduser(lock_dir), base + ".lock")


def alive(holder: dict) -> bool:
    pid, start = holder.get("pid"), holder.get("pid_start")
    return isinstance(pid, int) and pid > 0 and start is not None and proc_start_time(pid) == start


def describe(holder: dict) -> str:
    return "pid %s (started %s), playbook %s" % (holder.get("pid"), holder.get("started_at") or "?", holder.get("playbook") or "?")


@contextlib.contextmanager
def _locked(path: str) -> Iterator[int]:
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield fd
    finally:
        os.close(fd)


def _read(fd: int, path: str) -> dict | None:
    os.lseek(fd, 0, os.SEEK_SET)
    data = b""
    while True:
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        data += chunk
    if not data.strip():
        return None
    try:
        holder = json.loads(data)
    except ValueError:
        return None  # a torn or foreign file: nobody can be holding it through this format
    return holder if isinstance(holder, dict) else None


def holder_of(lock_dir: str, fabric: str) -> dict | None:
    """The live holder of the fabric's lock, or None."""
    path = lock_path(lock_dir, fabric)
    if not os.path.exists(path):
        return None
    with _locked(path) as fd:
        holder = _read(fd, path)
    return holder if holder and alive(holder) else None


def acquire(lock_dir: str, fabric: str, pid: int, playbook: str, now: Callable[[], datetime.datetime] | None = None) -> dict:
    """Take the fabric's lock for the process ``pid`` (the run's ansible-playbook), or raise LockError naming the
    live holder. Returns {path, holder, taken (False: this run held it already), previous (a dead holder taken over)}."""
    path = lock_path(lock_dir, fabric)
    start = proc_start_time(pid)
    if start is None:
        raise LockError("fabric %s: cannot read the start time of process %d in /proc; the lock needs it" % (fabric, pid))
    with _locked(path) as fd:
        held = _read(fd, path)
        if held and alive(held):
            if held.get("pid") == pid and held.get("pid_start") == start:
                return {"path": path, "holder": held, "taken": False, "previous": None}
            raise LockError("fabric %s is locked by another run from this controller: %s (lock %s); wait for it to end - the lock "
                            "is free as soon as that process is gone" % (fabric, describe(held), path), held)
        stamp = (now or (lambda: datetime.datetime.now(datetime.UTC)))()
        holder = {"fabric": fabric, "pid": pid, "pid_start": start, "playbook": playbook,
                  "started_at": stamp.isoformat(timespec="seconds")}
        data = (json.dumps(holder, sort_keys=True) + "\n").encode("utf-8")
        os.lseek(fd, 0, os.SEEK_SET)
        os.ftruncate(fd, 0)
        os.write(fd, data)
        os.fsync(fd)
    return {"path": path, "holder": holder, "taken": True, "previous": held}
