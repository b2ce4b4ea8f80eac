# Copyright: lossless.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""A confirmation timer for files on an ordinary host, without Ansible.

armed        validate -> refuse when armed -> save each file (content, mode, owner or
             "absent") under ``state_dir/<name>/files`` -> record ``armed`` -> detached
             process that fires at the deadline unless the record says otherwise
confirmed    record ``confirmed``, delete the saved copies; the process sees it and exits
rolled_back  put the files back + run the commands now, record ``rolled_back``
gathered     read the record
fire         (the detached process, at the deadline) the same put-back + commands,
             record ``expired``

Every read-modify-write of ``state.json`` happens under an fcntl lock on
``state_dir/<name>/lock``, so the detached process and a later task never race:
whichever takes the lock first decides, the other sees its outcome. Nobody
signals a PID.

A timer can also put back something other than files (kind ``nic``: a GPU
host's NIC settings, armed by nic_qos): its record carries the module's own
restore arguments instead of file copies, and the put-back is a function the
arming module hands in (``arm_action``), run in the detached process - and by
that module's own roll back; confirmed and gathered are the same for every kind.

Only the standard library is imported, all at module level: the detached
process keeps running after Ansible removed the module's temporary directory
and must never import anything from it (an action's code is imported by the
module before the fork).
"""

from __future__ import annotations

import contextlib
import datetime
import errno
import fcntl
import hashlib
import json
import os
import re
import secrets
import select
import shutil
import stat
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from typing import Any

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
DEFAULT_STATE_DIR = "/var/lib/lossless-fabric/rollback-timers"
STATES = ("armed", "confirmed", "rolled_back", "gathered")
# Record statuses; "expired" = the timer fired by itself. "absent" is only reported, never stored.
ARMED, CONFIRMED, ROLLED_BACK, EXPIRED, ABSENT = "armed", "confirmed", "rolled_back", "expired", "absent"
COMMAND_TIMEOUT = 120
OUTPUT_LIMIT = 4096
STEP = 1.0            # the detached process re-reads the record at least this often (seconds)
EXIT_WAIT = 3.0       # how long confirmed/rolled_back wait for the process to be gone
RECORD = "state.json"
LOCK = "lock"
FILES = "files"
RECORD_VERSION = 1

Clock = Callable[[], float]
Runner = Callable[[list, int], dict]
# A put-back other than files: called with the record's payload, returns {"failed": message or None, "result": {...}}.
Action = Callable[[dict], dict]
FILES_KIND = "files"


class TimerError(Exception):
    """A failure with the message for the task and the result gathered so far."""

    def __init__(self, msg: str, result: dict | None = None):
        super().__init__(msg)
        self.result = result or {}


# ---------------------------------------------------------------- validation

def _bad_text(value: str) -> bool:
    return "\n" in value or "\r" in value or "\0" in value


def _validate_paths(paths: Any) -> list[str]:
    if not isinstance(paths, list) or not paths:
        raise TimerError("paths: a non-empty list of absolute file paths is required with state=armed, got %r" % (paths,))
    seen = set()
    for index, path in enumerate(paths):
        if not isinstance(path, str) or _bad_text(path) or not os.path.isabs(path):
            raise TimerError("paths[%d]: %r is not an absolute path without newline or NUL" % (index, path))
        norm = os.path.normpath(path)
        if norm != path:
            raise TimerError("paths[%d]: %r is not in normal form (write %r)" % (index, path, norm))
        if path in seen:
            raise TimerError("paths[%d]: %r is listed twice" % (index, path))
        seen.add(path)
    return list(paths)


def _validate_commands(commands: Any) -> list[list[str]]:
    if commands is None:
        return []
    if not isinstance(commands, list):
        raise TimerError("commands: a list of argv lists is required, got %r" % (commands,))
    for index, argv in enumerate(commands):
        if not isinstance(argv, list) or not argv:
            raise TimerError("commands[%d]: %r is not an argv list; write a command as a list of words, e.g. [systemctl, reload, opensm]"
                             % (index, argv))
        for pos, word in enumerate(argv):
            if not isinstance(word, str):
                raise TimerError("commands[%d][%d]: %r is not a string (quote it)" % (index, pos, word))
            if _bad_text(word):
                raise TimerError("commands[%d][%d]: %r carries a newline or NUL" % (index, pos, word))
        if not argv[0]:
            raise TimerError("commands[%d][0]: the program name is empty" % index)
    return [list(argv) for argv in commands]


def validate(params: dict) -> dict:
    """Check every option before anything is read or written; return the normalised options."""
    name = params.get("name")
    if not isinstance(name, str) or not NAME_RE.fullmatch(name):
        raise TimerError("name: %r does not match %s" % (name, NAME_RE.pattern))
    state = params.get("state") or "gathered"
    if state not in STATES:
        raise TimerError("state: %r is not one of %s" % (state, ", ".join(STATES)))
    state_dir = params.get("state_dir") or DEFAULT_STATE_DIR
    if not isinstance(state_dir, str) or _bad_text(state_dir) or not os.path.isabs(state_dir):
        raise TimerError("state_dir: %r is not an absolute path without newline or NUL" % (state_dir,))
    out = {"name": name, "state": state, "state_dir": os.path.normpath(state_dir), "paths": None, "commands": [], "confirm_timeout": None}
    if state != "armed":
        for key in ("paths", "commands", "confirm_timeout"):
            if params.get(key) not in (None, []):
                raise TimerError("%s: only used with state=armed, got %r with state=%s" % (key, params.get(key), state))
        return out
    timeout = params.get("confirm_timeout")
    if isinstance(timeout, bool) or not isinstance(timeout, int) or timeout <= 0:
        raise TimerError("confirm_timeout: %r is not a whole number of seconds > 0" % (timeout,))
    out.update(paths=_validate_paths(params.get("paths")), commands=_validate_commands(params.get("commands")), confirm_timeout=timeout)
    return out


# ---------------------------------------------------------------- time

def iso(epoch: float | None) -> str | None:
    """UTC ISO 8601 to the second, the format switch_config returns as pending_until."""
    if epoch is None:
        return None
    return datetime.datetime.fromtimestamp(epoch, datetime.UTC).isoformat(timespec="seconds")


# ---------------------------------------------------------------- store

class Store:
    """The files of one timer: ``state_dir/<name>/{lock,state.json,files/N}``."""

    def __init__(self, state_dir: str, name: str):
        self.name = name
        self.state_dir = state_dir
        self.dir = os.path.join(state_dir, name)
        self.record_path = os.path.join(self.dir, RECORD)
        self.lock_path = os.path.join(self.dir, LOCK)
        self.files_dir = os.path.join(self.dir, FILES)

    def copy_path(self, index: int) -> str:
        return os.path.join(self.files_dir, str(index))

    def create(self) -> None:
        os.makedirs(self.state_dir, mode=0o700, exist_ok=True)
        for path in (self.dir, self.files_dir):
            with contextlib.suppress(FileExistsError):
                os.mkdir(path, 0o700)
            os.chmod(path, 0o700)

    @contextlib.contextmanager
    def locked(self) -> Iterator[bool]:
        """Hold the timer's lock; yields False (and locks nothing) when the timer does not exist."""
        try:
            fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600) if os.path.isdir(self.dir) else -1
        except FileNotFoundError:
            fd = -1
        if fd < 0:
            yield False
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield True
        finally:
            os.close(fd)

    def read(self) -> dict | None:
        try:
            with open(self.record_path, encoding="utf-8") as handle:
                record = json.load(handle)
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            raise TimerError("timer %s: cannot read its record %s: %s" % (self.name, self.record_path, exc)) from exc
        if not isinstance(record, dict) or record.get("name") != self.name:
            raise TimerError("timer %s: %s is not a record of this timer" % (self.name, self.record_path))
        return record

    def write(self, record: dict) -> None:
        _write_atomic(self.record_path, (json.dumps(record, indent=1, sort_keys=True) + "\n").encode("utf-8"), 0o600)

    def saved_copies(self) -> list[str]:
        try:
            return sorted((os.path.join(self.files_dir, n) for n in os.listdir(self.files_dir)), key=lambda p: (len(p), p))
        except FileNotFoundError:
            return []

    def delete_copies(self) -> None:
        shutil.rmtree(self.files_dir, ignore_errors=True)


def _write_atomic(path: str, content: bytes, mode: int, owner: tuple[int, int] | None = None) -> str | None:
    """Write ``path`` through a temp file in its directory + rename. Returns a note when the owner could not be set."""
    directory, base = os.path.split(path)
    fd, tmp = tempfile.mkstemp(prefix=".%s." % base, suffix=".tmp", dir=directory)
    note = None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(content)
            handle.flush()
            os.fchmod(handle.fileno(), mode)
            if owner is not None:
                note = _fchown(handle.fileno(), owner)
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return note


def _fchown(fd: int, owner: tuple[int, int]) -> str | None:
    have = os.fstat(fd)
    if (have.st_uid, have.st_gid) == tuple(owner):
        return None
    try:
        os.fchown(fd, owner[0], owner[1])
    except PermissionError:
        if os.geteuid() == 0:
            raise
        # Not root: we may only give files to ourselves; say so instead of failing the restore.
        return "owner %d:%d not restored (not root); the file is owned by %d:%d" % (owner[0], owner[1], have.st_uid, have.st_gid)
    return None


# ---------------------------------------------------------------- files

def _sha256(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()


def snapshot(paths: list[str]) -> list[tuple[dict, bytes | None]]:
    """Each path's state now: (entry, content). Refuses what cannot be put back as it was."""
    out = []
    for index, path in enumerate(paths):
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            out.append(({"path": path, "existed": False, "sha256": None, "mode": None, "uid": None, "gid": None}, None))
            continue
        except OSError as exc:
            raise TimerError("paths[%d]: cannot read %s: %s" % (index, path, exc.strerror)) from exc
        if stat.S_ISLNK(info.st_mode):
            raise TimerError("paths[%d]: %s is a symlink (to %s); name the file itself" % (index, path, os.readlink(path)))
        if not stat.S_ISREG(info.st_mode):
            raise TimerError("paths[%d]: %s is not a regular file" % (index, path))
        try:
            with open(path, "rb") as handle:
                content = handle.read()
        except OSError as exc:
            raise TimerError("paths[%d]: cannot read %s: %s" % (index, path, exc.strerror)) from exc
        entry = {"path": path, "existed": True, "sha256": _sha256(content), "mode": stat.S_IMODE(info.st_mode),
                 "uid": info.st_uid, "gid": info.st_gid}
        out.append((entry, content))
    return out


def _current(path: str) -> tuple[os.stat_result | None, str | None]:
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None, None
    if not stat.S_ISREG(info.st_mode):
        return info, None
    with open(path, "rb") as handle:
        return info, _sha256(handle.read())


def _plan_file(entry: dict) -> str:
    """written | removed | unchanged: what putting ``entry`` back does to the file as it is now."""
    info, digest = _current(entry["path"])
    if not entry["existed"]:
        return "unchanged" if info is None else "removed"
    if info is None or digest != entry["sha256"]:
        return "written"
    same = stat.S_IMODE(info.st_mode) == entry["mode"] and (info.st_uid, info.st_gid) == (entry["uid"], entry["gid"])
    return "unchanged" if same else "written"


def restore(store: Store, record: dict, check_mode: bool = False) -> list[dict]:
    """Put every saved file back (atomically, same mode and owner); a file absent at arm time is removed."""
    restored = []
    for index, entry in enumerate(record["backup"]):
        item = {"path": entry["path"]}
        try:
            item["action"] = _plan_file(entry)
            if check_mode or item["action"] == "unchanged":
                pass
            elif item["action"] == "removed":
                os.unlink(entry["path"])
            else:
                with open(store.copy_path(index), "rb") as handle:
                    content = handle.read()
                if _sha256(content) != entry["sha256"]:
                    raise OSError(errno.EIO, "saved copy %s does not match its sha256" % store.copy_path(index))
                note = _write_atomic(entry["path"], content, entry["mode"], (entry["uid"], entry["gid"]))
                if note:
                    item["warning"] = note
        except OSError as exc:
            item.update(action="failed", error="%s: %s" % (type(exc).__name__, exc))
        restored.append(item)
    return restored


# ---------------------------------------------------------------- commands

def _clip(data: bytes) -> str:
    text = data.decode("utf-8", errors="replace")
    if len(text) > OUTPUT_LIMIT:
        return text[:OUTPUT_LIMIT] + "\n[... %d more characters cut]" % (len(text) - OUTPUT_LIMIT)
    return text


def run_argv(argv: list, timeout: int = COMMAND_TIMEOUT) -> dict:
    """Run one argv (no shell), output captured and clipped. rc is None when it did not run to an exit."""
    try:
        proc = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired as exc:
        return {"argv": argv, "rc": None, "stdout": _clip(exc.stdout or b""), "stderr": _clip(exc.stderr or b"") + "[timed out after %d s]" % timeout}
    except OSError as exc:
        return {"argv": argv, "rc": None, "stdout": "", "stderr": "cannot run %s: %s" % (argv[0], exc.strerror or exc)}
    return {"argv": argv, "rc": proc.returncode, "stdout": _clip(proc.stdout), "stderr": _clip(proc.stderr)}


def run_commands(commands: list[list[str]], runner: Runner) -> list[dict]:
    """Run in order; stop at the first that fails (the later ones assume it worked)."""
    done = []
    for argv in commands:
        result = runner(list(argv), COMMAND_TIMEOUT)
        done.append(result)
        if result["rc"] != 0:
            break
    return done


def _failure(name: str, outcome: dict) -> str | None:
    bad = [r for r in outcome["restored"] if r["action"] == "failed"]
    if bad:
        skipped = "; commands not run" if outcome["commands_skipped"] else ""
        return "timer %s: could not put back %s (%s)%s" % (name, bad[0]["path"], bad[0]["error"], skipped)
    for result in outcome["commands"]:
        if result["rc"] != 0:
            return "timer %s: files put back, but command %s failed: rc=%s stderr=%r" % (name, result["argv"], result["rc"], result["stderr"].strip())
    return None


def _put_back(store: Store, record: dict, now: Clock, runner: Runner, fired: bool) -> dict:
    """Restore the files and, when every file went back, run the commands. The caller holds the lock."""
    restored = restore(store, record)
    skipped = any(r["action"] == "failed" for r in restored)
    commands = [] if skipped else run_commands(record["commands"], runner)
    at = now()
    outcome = {"fired": fired, "at": iso(at), "at_epoch": at, "restored": restored, "commands": commands, "commands_skipped": skipped}
    outcome["failed"] = _failure(store.name, outcome)
    if not skipped:
        # Everything is back: the copies have done their job. On a failure they stay for a human.
        store.delete_copies()
    return outcome


def _action_back(record: dict, now: Clock, action: Action, fired: bool) -> dict:
    """A put-back that is not files (the record's kind): the arming module's action on the record's payload."""
    try:
        done = action(record.get("payload") or {})
    except Exception as exc:  # noqa: BLE001 - whatever it raised is the outcome the record must keep
        done = {"failed": "%s: %s" % (type(exc).__name__, exc), "result": None}
    at = now()
    failed = done.get("failed")
    return {"fired": fired, "at": iso(at), "at_epoch": at, "restored": [], "commands": [], "commands_skipped": False,
            "result": done.get("result"), "failed": "timer %s: %s" % (record["name"], failed) if failed else None}


def _settle_back(store: Store, record: dict, now: Clock, runner: Runner, action: Action | None, fired: bool) -> dict:
    if record.get("kind", FILES_KIND) == FILES_KIND:
        return _put_back(store, record, now, runner, fired)
    if action is None:
        # Never lose the timer over this: the record stays armed for the module that can put it back.
        raise TimerError("timer %s puts back %s, not files: roll it back with the module that armed it (%s)"
                         % (record["name"], record["kind"], record.get("rolled_back_by") or "see the record"))
    return _action_back(record, now, action, fired)


# ---------------------------------------------------------------- the process

def proc_start_time(pid: int) -> str | None:
    """Field 22 of /proc/PID/stat (start time): tells our process from a later one with the same PID."""
    try:
        with open("/proc/%d/stat" % pid, encoding="ascii", errors="replace") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    if fields[0] in ("Z", "X"):
        return None
    return fields[19]


def process_alive(pid: int | None, start: str | None) -> bool:
    if not pid:
        return False
    if os.path.isdir("/proc/self"):
        return start is not None and proc_start_time(pid) == start
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _detach(pipe_w: int) -> None:
    """In the grandchild: no cwd in Ansible's temp dir, no fds shared with Ansible (it waits on them)."""
    os.chdir("/")
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.write(pipe_w, b"%d" % os.getpid())
    os.closerange(3, _max_fd())


def _max_fd() -> int:
    try:
        limit = os.sysconf("SC_OPEN_MAX")
    except (ValueError, OSError):
        limit = -1
    return limit if limit > 0 else 65536


def start_daemon(target: Callable[[], None]) -> int:
    """Run ``target`` in a detached process (double fork + setsid); return its PID once it is detached."""
    pipe_r, pipe_w = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - runs in the forked children
        code = 1
        try:
            os.close(pipe_r)
            os.setsid()
            if os.fork() == 0:
                _detach(pipe_w)
                try:
                    target()
                    code = 0
                finally:
                    os._exit(code)
            code = 0
        finally:
            os._exit(code)
    os.close(pipe_w)
    os.waitpid(child, 0)
    data = b""
    try:
        while True:
            ready, _w, _x = select.select([pipe_r], [], [], 10.0)
            if not ready:
                break
            chunk = os.read(pipe_r, 64)
            if not chunk:
                break
            data += chunk
    finally:
        os.close(pipe_r)
    if not data.isdigit():
        raise TimerError("the timer process did not start (it sent %r)" % data)
    return int(data)


def daemon_loop(store: Store, arm_id: str, now: Clock = time.time, sleep: Callable[[float], None] = time.sleep,
                runner: Runner = run_argv, action: Action | None = None) -> str:
    """The timer: until the record is no longer this arm, or the deadline fires it. Returns why it stopped."""
    while True:
        with store.locked() as exists:
            record = store.read() if exists else None
            if not record or record.get("arm_id") != arm_id or record.get("status") != ARMED:
                return "settled"
            left = record["deadline_epoch"] - now()
            if left <= 0:
                _fire_locked(store, record, now, runner, action)
                return "fired"
        sleep(max(0.05, min(STEP, left)))


def _fire_locked(store: Store, record: dict, now: Clock, runner: Runner, action: Action | None = None) -> dict:
    outcome = _settle_back(store, record, now, runner, action, fired=True)
    record.update(status=EXPIRED, settled_at=outcome["at"], outcome=outcome)
    store.write(record)
    return record


def fire(store: Store, arm_id: str | None = None, now: Clock = time.time, runner: Runner = run_argv, action: Action | None = None) -> dict | None:
    """Fire the timer if it is armed (by this arm) and its deadline has passed; the record after, or None."""
    with store.locked() as exists:
        record = store.read() if exists else None
        if not record or record.get("status") != ARMED or (arm_id and record.get("arm_id") != arm_id):
            return None
        if now() < record["deadline_epoch"]:
            return None
        return _fire_locked(store, record, now, runner, action)


def _daemon_main(store: Store, arm_id: str, action: Action | None = None) -> None:  # pragma: no cover - runs detached
    try:
        daemon_loop(store, arm_id, action=action)
    except Exception as exc:  # noqa: BLE001 - nobody can see a traceback here: put it in the record
        with store.locked() as exists:
            record = store.read() if exists else None
            if record and record.get("arm_id") == arm_id:
                record["process_error"] = "%s: %s" % (type(exc).__name__, exc)
                store.write(record)
        raise


# ---------------------------------------------------------------- states

def _timer(store: Store, record: dict | None, now: Clock, alive: Callable[[int | None, str | None], bool]) -> dict:
    """The ``timer`` return value."""
    if record is None:
        return {"name": store.name, "status": ABSENT, "pending_until": None, "deadline_epoch": None, "paths": [], "kind": None,
                "state_dir": store.state_dir,
                "commands": [], "armed_at": None, "settled_at": None, "outcome": None, "pid": None,
                "process_running": False, "overdue": False, "saved_copies": []}
    running = alive(record.get("pid"), record.get("pid_start"))
    status = record["status"]
    timer = {"name": store.name, "status": status, "pending_until": record["pending_until"],
             "deadline_epoch": record["deadline_epoch"], "paths": [b["path"] for b in record["backup"]],
             "commands": record["commands"], "armed_at": record["armed_at"], "settled_at": record.get("settled_at"),
             "outcome": record.get("outcome"), "pid": record.get("pid"), "process_running": running,
             "kind": record.get("kind", FILES_KIND), "state_dir": store.state_dir,
             "overdue": status == ARMED and now() > record["deadline_epoch"] and not running,
             "saved_copies": [{"path": b["path"], "copy": store.copy_path(i) if b["existed"] else None, "existed": b["existed"]}
                              for i, b in enumerate(record["backup"])] if store.saved_copies() or status == ARMED else []}
    if record.get("process_error"):
        timer["process_error"] = record["process_error"]
    return timer


def _lost_warning(store: Store, timer: dict, advice: str) -> list[str]:
    """A timer whose deadline passed while its process was gone (host reboot, kill -9) never fired."""
    if not timer["overdue"]:
        return []
    copies = ", ".join("%s -> %s" % (c["path"], c["copy"] or "absent at arm time") for c in timer["saved_copies"])
    return ["timer %s: its deadline %s passed but its process is gone (host reboot or killed?), so nothing was put back; "
            "the saved copies are in %s: %s. %s" % (timer["name"], timer["pending_until"], store.files_dir, copies, advice)]


def _missing(store: Store) -> TimerError:
    return TimerError("timer %s does not exist in %s (never armed on this host, or its state directory was removed)" % (store.name, store.state_dir))


def _refuse_rearm(store: Store, record: dict | None, now: Clock, alive) -> None:
    if record and record["status"] == ARMED:
        raise TimerError("timer %s is already armed until %s; confirm it or roll it back first" % (store.name, record["pending_until"]),
                         {"timer": _timer(store, record, now, alive)})
    if record and (record.get("outcome") or {}).get("commands_skipped") and store.saved_copies():
        # The last put-back failed part-way: those copies may be the only old content left. Never overwrite them.
        msg = ("timer %s: its roll back at %s could not put every file back (%s); the saved copies are still in %s - "
               "move them away before arming it again" % (store.name, record.get("settled_at"), record["outcome"]["failed"], store.files_dir))
        raise TimerError(msg, {"timer": _timer(store, record, now, alive)})


def arm(opts: dict, check_mode: bool, now: Clock, spawn: Callable[[Store, str], tuple[int, str | None]], alive) -> dict:
    store = Store(opts["state_dir"], opts["name"])
    with store.locked() as exists:
        _refuse_rearm(store, store.read() if exists else None, now, alive)
    saved = snapshot(opts["paths"])
    armed_at = now()
    deadline = armed_at + opts["confirm_timeout"]
    record = {"version": RECORD_VERSION, "name": store.name, "status": ARMED, "arm_id": secrets.token_hex(8),
              "armed_at": iso(armed_at), "deadline_epoch": deadline, "pending_until": iso(deadline),
              "confirm_timeout": opts["confirm_timeout"], "backup": [entry for entry, _c in saved], "commands": opts["commands"],
              "pid": None, "pid_start": None, "settled_at": None, "outcome": None}
    result = {"changed": True, "pending_until": record["pending_until"], "deadline_epoch": deadline,
              "backup": [{"path": e["path"], "existed": e["existed"], "sha256": e["sha256"]} for e, _c in saved]}
    if check_mode:
        result["timer"] = dict(_timer(store, record, now, alive), process_running=False, overdue=False)
        return result
    store.create()
    with store.locked():
        _refuse_rearm(store, store.read(), now, alive)  # again, now under the lock the write holds
        store.delete_copies()
        store.create()
        for index, (_entry, content) in enumerate(saved):
            if content is not None:
                _write_atomic(store.copy_path(index), content, 0o600)
        store.write(record)
    try:
        pid, start = spawn(store, record["arm_id"])
    except (OSError, TimerError) as exc:
        with store.locked():
            store.delete_copies()
            os.unlink(store.record_path)
        raise TimerError("timer %s: could not start the timer process (%s); nothing was armed" % (store.name, exc)) from exc
    with store.locked():
        current = store.read()
        if current and current["arm_id"] == record["arm_id"]:
            current.update(pid=pid, pid_start=start)
            store.write(current)
            record = current
    result["timer"] = _timer(store, record, now, alive)
    return result


def arm_action(state_dir: str, name: str, confirm_timeout: int, kind: str, payload: dict, rolled_back_by: str, action: Action,
               now: Clock = time.time, spawn=None, alive=None) -> dict:
    """Arm a timer whose put-back is ``action(payload)`` (run by the detached process at the deadline) instead of file
    copies: the same record, lock, refusal to re-arm and confirm as a files timer. ``rolled_back_by`` names the module
    call that rolls it back now (rollback_timer itself cannot: it does not have the action)."""
    opts = validate({"name": name, "state": "confirmed", "state_dir": state_dir})
    if isinstance(confirm_timeout, bool) or not isinstance(confirm_timeout, int) or confirm_timeout <= 0:
        raise TimerError("confirm_timeout: %r is not a whole number of seconds > 0" % (confirm_timeout,))
    alive = alive or process_alive
    store = Store(opts["state_dir"], opts["name"])
    armed_at = now()
    deadline = armed_at + confirm_timeout
    record = {"version": RECORD_VERSION, "name": store.name, "status": ARMED, "arm_id": secrets.token_hex(8), "kind": kind,
              "payload": payload, "rolled_back_by": rolled_back_by, "armed_at": iso(armed_at), "deadline_epoch": deadline,
              "pending_until": iso(deadline), "confirm_timeout": confirm_timeout, "backup": [], "commands": [],
              "pid": None, "pid_start": None, "settled_at": None, "outcome": None}
    store.create()
    with store.locked():
        _refuse_rearm(store, store.read(), now, alive)
        store.delete_copies()
        store.write(record)
    try:
        pid, start = (spawn or _spawn_action)(store, record["arm_id"], action)
    except (OSError, TimerError) as exc:
        with store.locked():
            os.unlink(store.record_path)
        raise TimerError("timer %s: could not start the timer process (%s); nothing was armed" % (store.name, exc)) from exc
    with store.locked():
        current = store.read()
        if current and current["arm_id"] == record["arm_id"]:
            current.update(pid=pid, pid_start=start)
            store.write(current)
            record = current
    return {"changed": True, "pending_until": record["pending_until"], "deadline_epoch": deadline, "timer": _timer(store, record, now, alive)}


def armed_of_kind(state_dir: str, kind: str, now: Clock = time.time, alive=None) -> list[dict]:
    """Every timer of ``kind`` in ``state_dir`` that is armed and can still fire (its process runs): what a change of
    the same things by another run must not overwrite."""
    alive = alive or process_alive
    found = []
    try:
        names = sorted(os.listdir(state_dir))
    except (FileNotFoundError, NotADirectoryError):
        return []
    for name in names:
        if not NAME_RE.fullmatch(name):
            continue
        store = Store(state_dir, name)
        try:
            with store.locked() as exists:
                record = store.read() if exists else None
        except (OSError, TimerError):
            continue
        if record and record.get("kind") == kind and record.get("status") == ARMED and alive(record.get("pid"), record.get("pid_start")):
            found.append(_timer(store, record, now, alive))
    return found


def _wait_gone(record: dict, alive, sleep: Callable[[float], None], now: Clock) -> bool:
    """True once the timer process is gone (it re-reads the record at least every STEP seconds)."""
    end = now() + EXIT_WAIT
    while alive(record.get("pid"), record.get("pid_start")):
        if now() >= end:
            return False
        sleep(0.1)
    return True


def _already_rolled_back(store: Store, record: dict) -> TimerError:
    how = "by itself (its deadline passed)" if record["status"] == EXPIRED else "by state=rolled_back"
    return TimerError("timer %s already rolled back at %s, %s" % (store.name, record.get("settled_at"), how))


def confirm(opts: dict, check_mode: bool, now: Clock, alive, sleep: Callable[[float], None]) -> dict:
    store = Store(opts["state_dir"], opts["name"])
    with store.locked() as exists:
        record = store.read() if exists else None
        if record is None:
            raise _missing(store)
        status = record["status"]
        if status in (EXPIRED, ROLLED_BACK):
            raise _already_rolled_back(store, record)
        changed = status == ARMED
        warnings = _lost_warning(store, _timer(store, record, now, alive), "Confirming keeps the change.") if changed else []
        if changed and not check_mode:
            record.update(status=CONFIRMED, settled_at=iso(now()))
            store.write(record)
            store.delete_copies()
    result = {"changed": changed, "warnings": warnings}
    if changed and not check_mode:
        result["process_exited"] = _wait_gone(record, alive, sleep, now)
    result["timer"] = _timer(store, record, now, alive)
    return result


def roll_back(opts: dict, check_mode: bool, now: Clock, alive, sleep: Callable[[float], None], runner: Runner,
              action: Action | None = None) -> dict:
    store = Store(opts["state_dir"], opts["name"])
    with store.locked() as exists:
        record = store.read() if exists else None
        if record is None:
            raise _missing(store)
        status = record["status"]
        if status == CONFIRMED:
            raise TimerError("timer %s was confirmed at %s; its saved copies are deleted, there is nothing to roll back"
                             % (store.name, record.get("settled_at")), {"timer": _timer(store, record, now, alive)})
        if status in (EXPIRED, ROLLED_BACK):
            outcome = record["outcome"]
            return {"changed": False, "fired": outcome["fired"], "restored": outcome["restored"], "commands": outcome["commands"],
                    "result": outcome.get("result"), "timer": _timer(store, record, now, alive)}
        custom = record.get("kind", FILES_KIND) != FILES_KIND
        if custom and action is None:
            raise TimerError("timer %s puts back %s, not files: roll it back with %s" % (store.name, record["kind"], record.get("rolled_back_by")),
                             {"timer": _timer(store, record, now, alive)})
        if check_mode:
            return {"changed": True, "fired": False, "restored": [] if custom else restore(store, record, check_mode=True),
                    "commands": [{"argv": argv, "rc": None, "stdout": "", "stderr": ""} for argv in record["commands"]],
                    "timer": _timer(store, record, now, alive)}
        outcome = _settle_back(store, record, now, runner, action, fired=False)
        record.update(status=ROLLED_BACK, settled_at=outcome["at"], outcome=outcome)
        store.write(record)
    result = {"changed": True, "fired": False, "restored": outcome["restored"], "commands": outcome["commands"], "result": outcome.get("result")}
    result["process_exited"] = _wait_gone(record, alive, sleep, now)
    result["timer"] = _timer(store, record, now, alive)
    if outcome["failed"]:
        raise TimerError(outcome["failed"], result)
    return result


def gather(opts: dict, now: Clock, alive) -> dict:
    store = Store(opts["state_dir"], opts["name"])
    with store.locked() as exists:
        record = store.read() if exists else None
    timer = _timer(store, record, now, alive)
    advice = "Run state=rolled_back to put them back, or state=confirmed to keep the change."
    return {"changed": False, "timer": timer, "warnings": _lost_warning(store, timer, advice)}


def _spawn(store: Store, arm_id: str) -> tuple[int, str | None]:
    pid = start_daemon(lambda: _daemon_main(store, arm_id))
    return pid, proc_start_time(pid)


def _spawn_action(store: Store, arm_id: str, action: Action) -> tuple[int, str | None]:
    pid = start_daemon(lambda: _daemon_main(store, arm_id, action))
    return pid, proc_start_time(pid)


def run(params: dict, check_mode: bool = False, now: Clock = time.time, spawn=_spawn, alive=process_alive,
        sleep: Callable[[float], None] = time.sleep, runner: Runner = run_argv) -> dict:
    """The module: validate, then the state's function. Raises TimerError (with the result so far) on failure."""
    opts = validate(params)
    if opts["state"] == "armed":
        result = arm(opts, check_mode, now, spawn, alive)
    elif opts["state"] == "confirmed":
        result = confirm(opts, check_mode, now, alive, sleep)
    elif opts["state"] == "rolled_back":
        result = roll_back(opts, check_mode, now, alive, sleep, runner)
    else:
        result = gather(opts, now, alive)
    result.setdefault("warnings", [])
    return result
