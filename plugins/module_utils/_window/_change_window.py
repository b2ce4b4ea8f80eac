# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""The change window's own logic, without Ansible: its settings checked before anything runs, the names of its
rollback timers, and what its report reads from the batch's hosts (the role's tasks register the results; the
change_report action plugin hands them here)."""

from __future__ import annotations

import hashlib
import re
import shlex
from typing import Any

from ansible_collections.lossless.fabric.plugins.module_utils._platforms import _records

ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,60}")
TIMER_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")  # _rollback_timer.NAME_RE, as a full match
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _whole(value: Any) -> int | None:
    """An int, or a string of ASCII digits (extra vars are strings); None for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and re.fullmatch(r"-?[0-9]+", value):
        return int(value)
    return None


def _path(key: str, value: Any, required: bool, absolute: bool) -> list[str]:
    if value is None or value == "":
        return ["%s: empty (%s)" % (key, required)] if required else []
    if not isinstance(value, str) or _CONTROL.search(value):
        return ["%s: %s is not a path (a string without newline or other control characters)" % (key, _show(value))]
    if absolute and not value.startswith("/"):
        return ["%s: %s is not an absolute path" % (key, _show(value))]
    return []


def _show(value: Any) -> str:
    return repr(value) if not isinstance(value, str) else '"%s"' % value.encode("unicode_escape").decode("ascii").replace('"', '\\"')


def setting_errors(settings: dict, inventory_hosts: list | None = None, devices: dict | None = None) -> list[str]:
    """Every change_window_* setting that reaches a file, a command line or a name, checked with a full match; one
    message per bad setting, naming it and its value. ``inventory_hosts``: groups['all'] (hosts named must be there).
    ``devices``: the plan's devices (fabric_plan's ``devices``); the window's length must fit every switch's commit timer."""
    errors = []
    ints = {}
    for key, low in (("change_window_max_minutes", 1), ("change_window_repeats", 1), ("change_window_settle_seconds", 0),
                     ("change_window_confirm_margin_seconds", 0)):
        number = _whole(settings.get(key))
        if number is None:
            errors.append("%s: %s is not a whole number" % (key, _show(settings.get(key))))
        elif number < low:
            errors.append("%s: %s is below %d" % (key, number, low))
        else:
            ints[key] = number
    if len(ints) == 4 and ints["change_window_confirm_margin_seconds"] + ints["change_window_settle_seconds"] >= ints["change_window_max_minutes"] * 60:
        errors.append("change_window_settle_seconds + change_window_confirm_margin_seconds: %d s leave no time in a window of %d minute(s)"
                      % (ints["change_window_confirm_margin_seconds"] + ints["change_window_settle_seconds"], ints["change_window_max_minutes"]))
    if "change_window_max_minutes" in ints:
        errors += _timer_errors(ints["change_window_max_minutes"], devices or {})
    window_id = settings.get("change_window_id")
    if window_id not in (None, "") and not (isinstance(window_id, str) and ID_RE.fullmatch(window_id)):
        errors.append("change_window_id: %s is not an id (letters, digits, ., _ and -, starting with a letter or digit, at most 61)"
                      % _show(window_id))
    errors += _path("change_window_report_dir", settings.get("change_window_report_dir"), "set it, or lossless_fabric_report_dir", False)
    errors += _path("change_window_rollback_timer_dir", settings.get("change_window_rollback_timer_dir"), "", True)
    errors += _path("change_window_ib_diag_bin", settings.get("change_window_ib_diag_bin"), "", True)
    known = set(inventory_hosts or [])
    host = settings.get("change_window_ib_counters_host")
    if host not in (None, "") and (not isinstance(host, str) or host not in known):
        errors.append("change_window_ib_counters_host: %s is not an inventory host (the master subnet manager's host reads the "
                      "fabric's counters; empty: none)" % _show(host))
    for key in ("change_window_nic_hosts", "change_window_nic_change_hosts"):
        value = settings.get(key)
        if value in (None, ""):
            continue
        if not isinstance(value, list):
            errors.append("%s: %s is not a list of inventory hosts" % (key, _show(value)))
            continue
        bad = [h for h in value if not isinstance(h, str) or h not in known]
        if bad:
            errors.append("%s: %s not inventory hosts" % (key, ", ".join(_show(h) for h in bad)))
    return errors


def _timer_errors(max_minutes: int, devices: dict) -> list[str]:
    """The window hands its remaining time (up to change_window_max_minutes) to each switch as its commit timer
    (roles/change_window/tasks/change.yml): a switch whose OS cannot hold that long a timer would refuse the commit
    after other switches had committed, and the window would roll them all back. Refused here, before any device."""
    errors = []
    platforms = _records.registry()
    for host in sorted(devices):
        plan = devices[host]
        if not isinstance(plan, dict) or plan.get("kind") != "switch" or plan.get("platform") not in platforms:
            continue
        limit = platforms[plan["platform"]].commit_timer_s
        if limit is not None and max_minutes * 60 > limit[1]:
            errors.append("change_window_max_minutes: %d minutes (%d s) is longer than the commit timer %s (platform %s) can hold "
                          "(%d-%d s); the window hands its remaining time to each switch as its timer: at most %d minutes here"
                          % (max_minutes, max_minutes * 60, host, plan["platform"], limit[0], limit[1], limit[1] // 60))
    return errors


def timer_name(window_name: str, host: str, suffix: str) -> str:
    """The rollback timer of one host in one window: ``<window name>-<host>-<suffix>`` (the same on every run, a
    different one per host and suffix). A name rollback_timer would refuse (longer than 64 characters, or a host name
    with characters other than letters, digits, '.', '_', '-') becomes the first ``64 - 12 - len(suffix)`` characters
    of ``<window name>-<host>`` (other characters made '_'), '-', 10 hex digits of the whole name's SHA-1, '-<suffix>'."""
    if not isinstance(suffix, str) or not re.fullmatch(r"[a-z]{1,12}", suffix):
        raise ValueError("suffix: %r is not 1-12 lowercase letters" % (suffix,))
    base = "%s-%s" % (window_name, host)
    name = "%s-%s" % (base, suffix)
    if TIMER_RE.fullmatch(name):
        return name
    digest = hashlib.sha1(name.encode("utf-8")).hexdigest()[:10]
    return "%s-%s-%s" % (re.sub(r"[^A-Za-z0-9_.-]", "_", base)[:64 - 12 - len(suffix)], digest, suffix)


SESSION_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")  # what switch_config takes as a session name


def session_name(window_name: str, started_at: str, host: str) -> str:
    """The switch session (EOS configuration session, Junos commit comment, NVUE apply message) of one switch in
    one run of a window: ``<window name>-<10 hex>``, 64 characters at most, the hex a SHA-1 of window, start time
    and host. Named before the push, so the settle and the rescue always name this run's own commit and never act
    on another run's (a window reusing a change_window_id still gets new names: the start time differs)."""
    for key, value in (("window", window_name), ("started_at", started_at), ("host", host)):
        if not isinstance(value, str) or not value or _CONTROL.search(value):
            raise ValueError("%s: %r is not a one-line text" % (key, value))
    digest = hashlib.sha1(("%s\0%s\0%s" % (window_name, started_at, host)).encode("utf-8")).hexdigest()[:10]
    base = re.sub(r"[^A-Za-z0-9_-]", "_", window_name)[:64 - 11]
    name = "%s-%s" % (base, digest)
    if not SESSION_RE.fullmatch(name):
        name = "lf-%s" % name[:61]
    return name


# ---------------------------------------------------------------- what the report reads from the batch's hosts

def _results(registered: Any) -> list[dict]:
    """The per-item results of a registered loop task (none when it did not run)."""
    results = registered.get("results") if isinstance(registered, dict) else None
    return [r for r in results or [] if isinstance(r, dict)]


def _of(results: list[dict], host: str, nested: bool = False) -> dict | None:
    """The result of ``host`` in a loop over hosts (``nested``: a loop over earlier results, whose item is one)."""
    for result in results:
        item = result.get("item")
        if nested and isinstance(item, dict):
            item = item.get("item")
        if item == host:
            return result
    return None


def switch_devices(switches: list, hostvars: dict, plans: dict, backup_dir: str, check_mode: bool) -> dict:
    """{switch: {platform, push, settle, rollback, backup}}: its registered switch_config results (None: not run)."""
    out = {}
    for host in switches:
        seen = hostvars.get(host) or {}
        backup = seen.get("__change_window_backup")
        out[host] = {
            "platform": (plans.get(host) or {}).get("platform"),
            "push": seen.get("__change_window_push"),
            "settle": seen.get("__change_window_settle"),
            "rollback": seen.get("__change_window_rollback"),
            "backup": "%s/%s.cfg" % (backup_dir, host) if isinstance(backup, dict) and "backup" in backup and not check_mode else None,
        }
    return out


def sm_devices(sms: list, hostvars: dict, window_name: str, backup_dir: str, check_mode: bool) -> dict:
    """{SM host: {kind subnet_manager, files, timer, commands, arm, settle, rollback, backup}}."""
    out = {}
    for host in sms:
        seen = hostvars.get(host) or {}
        out[host] = {
            "kind": "subnet_manager",
            "files": seen.get("__change_window_sm_files") or [],
            "timer": timer_name(window_name, host, "opensm"),
            "commands": seen.get("__change_window_sm_commands") or [],
            "arm": seen.get("__change_window_sm_arm"),
            "settle": seen.get("__change_window_sm_settle"),
            "rollback": seen.get("__change_window_sm_rollback"),
            "backup": "%s/%s.opensm" % (backup_dir, host) if "__change_window_sm_files" in seen and not check_mode else None,
        }
    return out


def nic_devices(registered: dict, backup_dir: str, check_mode: bool, inventory_sources: list, become: dict) -> dict:
    """{GPU host: {kind host, apply, restore, confirm, backup, restore_command}} from the NIC tasks' registered loops
    (``registered``: __change_window_nic_backup / _apply / _restore / _confirm, as the task host sees them)."""
    apply = _results(registered.get("__change_window_nic_apply"))
    restore = _results(registered.get("__change_window_nic_restore"))
    confirm = _results(registered.get("__change_window_nic_confirm"))
    out = {}
    for backup in _results(registered.get("__change_window_nic_backup")):
        host = backup.get("item")
        if not isinstance(host, str):
            continue
        path = "%s/%s.nic.json" % (backup_dir, host)
        out[host] = {
            "kind": "host",
            "apply": _of(apply, host),
            "restore": _of(restore, host),
            "confirm": _of(confirm, host, nested=True),
            "backup": path if not check_mode and "nics" in backup else None,
            "restore_command": "ansible %s -i %s%s -m lossless.fabric.nic_qos -a \"$(cat %s)\"" % (
                host, " -i ".join(shlex.quote(str(s)) for s in inventory_sources or []), " -b" if become.get(host, True) else "", shlex.quote(path)),
        }
    return out


def counters(switches: list, hostvars: dict) -> dict:
    """{switch: {before, middle, after}}: its switch_counters results before and after the baseline, after the post."""
    return {host: {phase: (hostvars.get(host) or {}).get("__change_window_counters_" + phase) for phase in ("before", "middle", "after")}
            for host in switches}
