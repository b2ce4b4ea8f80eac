# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""The nic_qos and nic_counters tasks, without Ansible: the modules hand in the
parameters, a root path, a runner and a tool lookup; everything else is here so
tests drive it with a tree and fake tools.

nic_qos:  validate every input -> discover/select -> per NIC: detect the stack,
          read, compare (+ firmware query) -> [apply -> read back] -> result
          state restored: the wanted values per NIC are an earlier gathered result's
          ``before`` instead of the plan; the rest is the same path.

Changes (present, restored) hold the host's NIC lock (``<root>/run/lossless-fabric/nic-qos.lock``, an
flock: free when the process ends, however it ends) and refuse while another run holds it, or while
a NIC rollback timer of a change window is armed on the host (its put-back would undo this run).
present with ``rollback_timer`` arms a timer (_rollback_timer.arm_action, kind ``nic``) with the NICs
as they are, before the first write: unless confirmed (rollback_timer state confirmed), its detached
process restores them at the deadline - the same restore path as state restored. restored with
``rollback_timer`` (and no ``restore``) does that now.
"""

from __future__ import annotations

import contextlib
import datetime
import errno
import fcntl
import json
import os
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from typing import Any

from ansible_collections.lossless.fabric.plugins.module_utils._common import _rollback_timer, _snapshot
from ansible_collections.lossless.fabric.plugins.module_utils._hosts._nic import (
    MLX5_COUNTERS,
    NIC_COUNTERS,
    STACKS,
    Action,
    Fs,
    NicError,
    NicState,
    Runner,
    apply,
    detect_stack,
    discover,
    firmware_plan,
    map_counters,
    parse_ethtool_stats,
    peer_memory,
    persist_actions,
    plan_nic,
    read_hw_counters,
    restore_wanted,
    select,
    validate_firmware,
    validate_plan,
    validate_snapshot,
    wanted,
)
from ansible_collections.lossless.fabric.plugins.module_utils._hosts._nic_bnxt import BnxtState
from ansible_collections.lossless.fabric.plugins.module_utils._hosts._nic_ionic import IonicState

# The class that reads and sets one NIC, per stack (the bnxt and ionic ones live in their own files).
STATE_CLASSES = {"mlnx": NicState, "upstream": NicState, "bnxt": BnxtState, "ionic": IonicState}

# Tools each path may run; the module resolves them (PATH, or bin_dir first in the lab).
TOOLS = ("dcb", "ethtool", "mlnx_qos", "mlxconfig", "mstconfig")

# The options both modules share; documented once in plugins/doc_fragments/_nic.py.
NIC_ARGUMENT_SPEC: dict[str, dict[str, Any]] = {
    "plan": {"type": "dict"},
    "nics": {"type": "list", "elements": "str"},
    "pci_ids": {"type": "list", "elements": "str"},
    "root": {"type": "path", "default": "/"},
    "bin_dir": {"type": "path"},
}
NIC_MUTUALLY_EXCLUSIVE = [("nics", "pci_ids")]

QOS_ARGUMENT_SPEC: dict[str, dict[str, Any]] = {
    **NIC_ARGUMENT_SPEC,
    "state": {"type": "str", "default": "present", "choices": ["present", "gathered", "restored"]},
    "restore": {"type": "dict"},
    "stack": {"type": "str", "default": "auto", "choices": ["auto", *STACKS]},
    "firmware": {"type": "dict"},
    "rollback_timer": {
        "type": "dict",
        "options": {
            "name": {"type": "str", "required": True},
            "confirm_timeout": {"type": "int"},
            "state_dir": {"type": "path"},
        },
    },
}

# Under the host's root (the lab's tree in the lab): the NIC lock, and the NIC timers' default state_dir.
LOCK_FILE = "run/lossless-fabric/nic-qos.lock"
TIMER_DIR = "var/lib/lossless-fabric/rollback-timers"
TIMER_KIND = "nic"
# How long the timer's own restore waits for the NIC lock (another run's nic_qos finishing its task).
RESTORE_LOCK_WAIT = 120

COUNTERS_ARGUMENT_SPEC: dict[str, dict[str, Any]] = {
    **NIC_ARGUMENT_SPEC,
    "device": {"type": "str"},
    "priorities": {"type": "list", "elements": "int", "default": list(range(8))},
}


def _select(fs: Fs, params: dict, plan_nics: list) -> list[dict]:
    if params.get("nics") and params.get("pci_ids"):
        raise NicError("nics and pci_ids: give one of them, not both")
    if not fs.isdir("/sys/class/infiniband"):
        raise NicError("/sys/class/infiniband absent under %s: no RDMA device on this host (is mlx5_ib loaded?)" % fs.root)
    return select(discover(fs), plan_nics, params.get("nics"), params.get("pci_ids"))


def _firmware_tool(which: Callable[[str], str | None]) -> str:
    for tool in ("mlxconfig", "mstconfig"):
        if which(tool):
            return tool
    raise NicError("firmware: neither mlxconfig (NVIDIA MFT) nor mstconfig (package mstflint) is installed")


def _wants(params: dict, fs: Fs) -> tuple[list[dict], list[dict], list[list[dict]]]:
    """The NICs and, per NIC, the wanted values and what cannot be brought back (restored only)."""
    if params.get("state") != "restored":
        if params.get("restore"):
            raise NicError("restore: only with state restored (state is %r)" % params.get("state"))
        plan = params.get("plan")
        if plan is None:
            raise NicError("plan: required with state %s (fabric_plan_result.devices[host])" % params.get("state"))
        validate_plan(plan)
        chosen = _select(fs, params, plan["nics"])
        return chosen, [wanted(plan)] * len(chosen), [[] for _nic in chosen]
    snapshot = validate_snapshot(params.get("restore"))
    if params.get("pci_ids") or params.get("firmware"):
        raise NicError("state restored: %s not allowed; the earlier result names the NICs, and firmware values are not restored"
                       % ("pci_ids" if params.get("pci_ids") else "firmware"))
    unknown = [str(n) for n in params.get("nics") or [] if n not in snapshot and n not in {v["netdev"] for v in snapshot.values()}]
    if unknown:
        raise NicError("nics: %s not in the earlier result (it has %s)" % (", ".join(unknown), ", ".join(sorted(snapshot))))
    chosen = _select(fs, params, [{"name": n, "netdev": v["netdev"]} for n, v in snapshot.items()])
    wants, cannot = [], []
    for nic in chosen:
        want, lost = restore_wanted(snapshot[nic["name"]]["before"], snapshot[nic["name"]]["stack"])
        wants.append(want)
        cannot.append(lost)
    return chosen, wants, cannot


def _stack_of(fs: Fs, nic: dict, forced: str | None, planned: dict | None) -> str:
    """The module's ``stack`` (when not auto), else the device data's (the plan's NIC entry ``stack``), else detected."""
    if forced not in (None, "auto"):
        return str(forced)
    if planned and planned.get("stack") not in (None, "auto"):
        if planned["stack"] not in STACKS:
            raise NicError("%s: plan nics stack %r is not one of %s" % (nic["name"], planned["stack"], ", ".join(STACKS)))
        return str(planned["stack"])
    return detect_stack(fs, nic)


def _under(root: str, rel: str) -> str:
    return os.path.join(root or "/", rel)


@contextlib.contextmanager
def host_lock(root: str, what: str, wait: float = 0, now: Callable[[], float] | None = None,
              sleep: Callable[[float], None] | None = None) -> Iterator[dict]:
    """The host's NIC lock for one change: refuses (NicError naming the holder) when another process holds it and
    ``wait`` seconds pass. The holder's pid, start time and what it does are written in the file for the message."""
    now, sleep = now or time.time, sleep or time.sleep
    path = _under(root, LOCK_FILE)
    os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        end = now() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES):
                    raise
                if now() >= end:
                    raise NicError("NIC changes on this host are locked by another run: %s (lock %s); wait for it to end"
                                   % (_holder_text(path), path)) from None
                sleep(0.2)
        holder = {"pid": os.getpid(), "pid_start": _rollback_timer.proc_start_time(os.getpid()), "what": what,
                  "started_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")}
        os.ftruncate(fd, 0)
        os.pwrite(fd, (json.dumps(holder, sort_keys=True) + "\n").encode("utf-8"), 0)
        yield holder
    finally:
        os.close(fd)  # the flock goes with it (and with the process, however it ends)


def _holder_text(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as handle:
            holder = json.load(handle)
        return "pid %s (started %s), %s" % (holder.get("pid"), holder.get("started_at"), holder.get("what"))
    except (OSError, ValueError, AttributeError):
        return "a process that left no record"


def _timer_opts(params: dict) -> dict | None:
    """rollback_timer checked against the state; its state_dir defaulted under root."""
    timer = params.get("rollback_timer")
    if not timer:
        return None
    state = params.get("state") or "present"
    if state == "gathered":
        raise NicError("rollback_timer: only with state present (arm) or restored (roll back now), not gathered")
    if state == "present" and not timer.get("confirm_timeout"):
        raise NicError("rollback_timer.confirm_timeout: required with state present (seconds until the NICs are restored unless confirmed)")
    if state == "restored" and (timer.get("confirm_timeout") or params.get("restore")):
        raise NicError("rollback_timer with state restored rolls the timer back from what it saved: no %s"
                       % ("confirm_timeout" if timer.get("confirm_timeout") else "restore"))
    if state == "present" and params.get("firmware"):
        raise NicError("rollback_timer: firmware parameters are not restored by the timer; set them outside a change window")
    out = dict(timer, state_dir=timer.get("state_dir") or _under(params.get("root") or "/", TIMER_DIR))
    try:
        _rollback_timer.validate({"name": out["name"], "state": "confirmed", "state_dir": out["state_dir"]})
    except _rollback_timer.TimerError as exc:
        raise NicError("rollback_timer.%s" % exc) from exc
    return out


def plain_tools(bin_dir: str | None) -> tuple[Runner, Callable[[str], str | None]]:
    """Runner and tool lookup without Ansible, for the timer's detached process (the module is gone by then)."""
    def which(name: str) -> str | None:
        if bin_dir and os.access(os.path.join(bin_dir, name), os.X_OK):
            return os.path.join(bin_dir, name)
        return shutil.which(name)

    def run(argv: list) -> tuple:
        path = which(argv[0])
        if path is None:
            raise NicError("%s: not installed on this host (needed for %s)" % (argv[0], " ".join(argv)))
        proc = subprocess.run([path, *argv[1:]], stdin=subprocess.DEVNULL, capture_output=True, text=True, check=False,
                              env=dict(os.environ, LC_ALL="C"), timeout=_rollback_timer.COMMAND_TIMEOUT)
        return proc.returncode, proc.stdout, proc.stderr

    return run, which


def restore_action(payload: dict) -> dict:
    """The NIC timer's put-back in its detached process: state restored from the values saved when it was armed,
    under the NIC lock (another run's task may be finishing)."""
    try:
        with host_lock(payload.get("root") or "/", "rollback timer %s: restoring the NICs" % payload.get("timer"), wait=RESTORE_LOCK_WAIT):
            return _restore(payload)
    except NicError as exc:
        return {"failed": str(exc), "result": None}


def _restore(payload: dict) -> dict:
    """state restored from a NIC timer's payload; the caller holds the NIC lock."""
    run, which = plain_tools(payload.get("bin_dir"))
    params = {"state": "restored", "restore": payload["restore"], "root": payload.get("root") or "/", "bin_dir": payload.get("bin_dir"),
              "stack": payload.get("stack") or "auto"}
    try:
        result = _run_qos(params, run, which, False)
    except NicError as exc:
        return {"failed": str(exc), "result": None}
    return {"failed": None, "result": {"changed": result["changed"], "commands": result["commands"], "unsupported": result["unsupported"],
                                       "nics": {n: {k: v for k, v in r.items() if k in ("netdev", "stack", "changes", "before", "after")}
                                                for n, r in result["nics"].items()}}}


def _armed_elsewhere(timer_dir: str, own: str | None) -> None:
    armed = [t for t in _rollback_timer.armed_of_kind(timer_dir, TIMER_KIND) if t["name"] != own]
    if armed:
        raise NicError("the NICs of this host are under rollback timer %s until %s (a change window's NIC change, timer process %s): "
                       "a change now would be undone when it fires; let that window confirm or roll back first"
                       % (armed[0]["name"], armed[0]["pending_until"], armed[0]["pid"]))


def run_qos(params: dict, runner: Runner, which: Callable[[str], str | None], check_mode: bool, spawn=None) -> dict[str, Any]:
    """The nic_qos task. Raises NicError (before any write when the input is bad)."""
    timer = _timer_opts(params)
    state = params.get("state") or "present"
    root = params.get("root") or "/"
    if state == "gathered" or check_mode:
        if timer and state == "restored":
            return _roll_back_timer(timer, check_mode=True)
        return _run_qos(params, runner, which, check_mode)
    if not (timer and state == "restored"):
        # Bad input fails before anything is written - the lock file included.
        validate_firmware(params.get("firmware"))
        _wants(params, Fs(root))
    what = "nic_qos state=%s%s" % (state, " (rollback timer %s)" % timer["name"] if timer else "")
    with host_lock(root, what):
        if timer and state == "restored":
            return _roll_back_timer(timer, check_mode=False)
        _armed_elsewhere(timer["state_dir"] if timer else _under(root, TIMER_DIR), None)
        if timer is None:
            return _run_qos(params, runner, which, check_mode)
        armed: dict = {}

        def arm(reports: list[dict]) -> None:
            snapshot = {r["name"]: {"netdev": r["netdev"], "stack": r["stack"], "before": r["before"]} for r in reports}
            payload = {"restore": snapshot, "root": root, "bin_dir": params.get("bin_dir"), "stack": params.get("stack") or "auto",
                       "timer": timer["name"]}
            try:
                armed.update(_rollback_timer.arm_action(
                    timer["state_dir"], timer["name"], timer["confirm_timeout"], TIMER_KIND, payload,
                    "lossless.fabric.nic_qos state=restored rollback_timer={name: %s}" % timer["name"], restore_action, spawn=spawn))
            except _rollback_timer.TimerError as exc:
                raise NicError("rollback_timer: %s; nothing was changed" % exc) from exc

        result = _run_qos(params, runner, which, check_mode, before_apply=arm)
        result["timer"] = armed.get("timer")
        result["pending_until"] = armed.get("pending_until")
        return result


def _roll_back_timer(timer: dict, check_mode: bool) -> dict[str, Any]:
    """restored with rollback_timer: the timer's saved NIC values put back now (or what its firing already did)."""
    opts = {"name": timer["name"], "state_dir": timer["state_dir"]}
    try:
        # run_qos holds the NIC lock already: the put-back runs without taking it again.
        out = _rollback_timer.roll_back(opts, check_mode, time.time, _rollback_timer.process_alive, time.sleep, _rollback_timer.run_argv, action=_restore)
    except _rollback_timer.TimerError as exc:
        raise NicError(str(exc)) from exc
    done = out.get("result") or {}
    return {"changed": bool(out["changed"]), "fired": out.get("fired"), "timer": out["timer"], "nics": done.get("nics") or {},
            "commands": done.get("commands") or [], "unsupported": done.get("unsupported") or [], "persist": {}, "drivers": {}, "ran": [],
            "firmware": {}, "reboot_required": False, "peer_memory": None}


def _run_qos(params: dict, runner: Runner, which: Callable[[str], str | None], check_mode: bool,
             before_apply: Callable[[list[dict]], None] | None = None) -> dict[str, Any]:
    firmware = validate_firmware(params.get("firmware"))
    fs = Fs(params.get("root") or "/")
    chosen, wants, cannot = _wants(params, fs)
    restoring = params.get("state") == "restored"
    gathered = params.get("state") == "gathered"

    states, reports = [], []
    planned = {n.get("name"): n for n in ((params.get("plan") or {}).get("nics") or []) if isinstance(n, dict)} if not restoring else {}
    for index, (nic, want, lost) in enumerate(zip(chosen, wants, cannot)):
        stack = _stack_of(fs, nic, params.get("stack"), planned.get(nic["name"]))
        then = validate_snapshot(params["restore"])[nic["name"]]["stack"] if restoring else stack
        if then != stack:
            raise NicError("%s: gathered on the %s stack, now %s: the earlier values do not apply" % (nic["name"], then, stack))
        state = STATE_CLASSES[stack](fs, runner, nic, stack)
        want = wants[index] = state.plan_wanted(want, None if restoring else params.get("plan"))
        states.append(state)
        report = plan_nic(state, want)
        report["driver"] = state.DRIVER
        report["unsupported"] += lost
        reports.append(report)
    fw_reports = {}
    if firmware:
        tool = _firmware_tool(which)
        for nic in chosen:
            fw_reports[nic["name"]] = firmware_plan(runner, tool, nic["pci"], firmware, nic["name"])

    changed = any(r["actions"] for r in reports) or any(f["argv"] for f in fw_reports.values())
    ran: list[str] = []
    if changed and not check_mode and not gathered:
        if before_apply is not None:
            before_apply(reports)
        for state, report in zip(states, reports):
            try:
                ran += apply(fs, runner, report["actions"])
            except NicError as exc:
                raise NicError("%s (%s): %s; settings before this step were applied, the rest not" % (state.name, state.netdev, exc)) from exc
        for fw in fw_reports.values():
            if fw["argv"]:
                apply(fs, runner, [Action("run", argv=fw["argv"])])
                ran.append(" ".join(fw["argv"]))
        _read_back(states, wants)

    result: dict[str, Any] = {
        "changed": bool(changed and not gathered),
        "nics": {},
        "unsupported": [],
        "commands": [],
        "persist": {},
        "drivers": {state.netdev: state.DRIVER for state in states},
        "peer_memory": peer_memory(fs),
        "reboot_required": any(f["reboot_required"] for f in fw_reports.values()) and not gathered,
        "firmware": fw_reports,
    }
    before_lines: list[str] = []
    after_lines: list[str] = []
    for state, report, want in zip(states, reports, wants):
        commands = [a.text() for a in report.pop("actions")]
        report["commands"] = commands
        result["nics"][state.name] = report
        result["commands"] += commands
        result["unsupported"] += [dict(u, nic=state.name) for u in report["unsupported"]]
        result["persist"][state.netdev] = persist_actions(state, want, report["unsupported"])
        for old, new in diff_lines(report):
            before_lines.append(old)
            after_lines.append(new)
    for name, fw in fw_reports.items():
        if fw["argv"]:
            result["commands"].append(" ".join(fw["argv"]))
            for key in fw["changes"]:
                before_lines.append("%s firmware %s: %s (next boot)" % (name, key, fw["before"][key]))
                after_lines.append("%s firmware %s: %s (next boot)" % (name, key, firmware[key]))
    if not gathered:
        result["diff"] = {"before": "".join(line + "\n" for line in before_lines), "after": "".join(line + "\n" for line in after_lines)}
    result["ran"] = ran
    return result


def diff_lines(report: dict) -> list[tuple[str, str]]:
    """One NIC's report (RV nics.<name>) as (before, after) line pairs, one per changed setting: the module's diff,
    and the change window report's (which has the result whether or not --diff was given)."""
    pairs = []
    for key in report.get("changes") or []:
        old, new = _diff_values((report.get("before") or {}).get(key), (report.get("after") or {}).get(key))
        pairs.append(("%s (%s) %s: %s" % (report.get("name"), report.get("netdev"), key, old),
                      "%s (%s) %s: %s" % (report.get("name"), report.get("netdev"), key, new)))
    return pairs


def _diff_values(before: Any, after: Any) -> tuple[str, str]:
    """One line each; of a DSCP map only the entries that differ."""
    if isinstance(before, dict) and isinstance(after, dict) and all(str(k).isdigit() for k in after):
        keys = sorted((k for k in set(before) | set(after) if before.get(k) != after.get(k)), key=int)
        before = {k: before.get(k) for k in keys}
        after = {k: after.get(k) for k in keys}
    return json.dumps(before), json.dumps(after)


def _read_back(states: list[NicState], wants: list[dict]) -> None:
    """After apply: every supported setting must read back as planned (or as restored)."""
    problems = []
    for state, want in zip(states, wants):
        report = plan_nic(state, want)
        if report["changes"]:
            detail = ", ".join("%s is %r, planned %r" % (k, report["before"][k], report["after"][k]) for k in report["changes"])
            problems.append("%s (%s): after apply %s" % (state.name, state.netdev, detail))
    if problems:
        raise NicError("read-back differs from the plan: " + "; ".join(problems))


def run_counters(params: dict, runner: Runner, device: str) -> dict[str, Any]:
    """The nic_counters task: one snapshot, kind 'nic', ports = RDMA device names."""
    priorities = params.get("priorities")
    priorities = list(range(8)) if priorities is None else priorities
    bad = [p for p in priorities if not isinstance(p, int) or isinstance(p, bool) or not 0 <= p <= 7]
    if bad:
        raise NicError("priorities: %s not in 0-7" % ", ".join(str(p) for p in bad))
    fs = Fs(params.get("root") or "/")
    plan_nics = (params.get("plan") or {}).get("nics") or []
    if not (plan_nics or params.get("nics") or params.get("pci_ids")):
        # Nothing named: every RDMA NIC with a netdev.
        plan_nics = [{"name": n["name"]} for n in discover(fs) if n["netdev"]]
    chosen = _select(fs, params, plan_nics)
    taken_at = _snapshot.now_iso()
    ports, raw, stacks = {}, {}, set()
    for nic in chosen:
        stack = detect_stack(fs, nic)
        stacks.add(stack)
        maps = STATE_CLASSES[stack].COUNTERS or MLX5_COUNTERS
        argv = ["ethtool", "-S", nic["netdev"]]
        rc, out, err = runner(argv)
        if rc != 0:
            said = (err or out or "").strip().splitlines()
            raise NicError("%s: ethtool -S %s: exit %s: %s" % (nic["name"], nic["netdev"], rc, said[0] if said else "no output"))
        raw["ethtool -S %s" % nic["netdev"]] = out
        ports[nic["name"]] = map_counters(parse_ethtool_stats(out), read_hw_counters(fs, nic["name"], maps[2]), sorted(set(priorities)), maps)
    platform = stacks.pop() if len(stacks) == 1 else "mixed"
    snap = _snapshot.snapshot(device, platform, ports, raw, taken_at, kind="nic", names=NIC_COUNTERS)
    return {"changed": False, "counters": snap, "netdevs": {n["name"]: n["netdev"] for n in chosen}}


def tool_runner(module: Any) -> tuple:
    """For an AnsibleModule: argv[0] resolved on bin_dir (lab) then PATH; a missing tool is a clear error, not an exit 127."""
    bin_dir = module.params.get("bin_dir")
    cache: dict[str, str | None] = {}

    def which(name: str) -> str | None:
        if name not in cache:
            found = os.path.join(bin_dir, name) if bin_dir and os.access(os.path.join(bin_dir, name), os.X_OK) else None
            cache[name] = found or module.get_bin_path(name)
        return cache[name]

    def run(argv: list) -> tuple:
        path = which(argv[0])
        if path is None:
            raise NicError("%s: not installed on this host (needed for %s)" % (argv[0], " ".join(argv)))
        return module.run_command([path, *argv[1:]], environ_update={"LC_ALL": "C"})

    return run, which
