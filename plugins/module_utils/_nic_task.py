# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""The nic_qos and nic_counters tasks, without Ansible: the modules hand in the
parameters, a root path, a runner and a tool lookup; everything else is here so
tests drive it with a tree and fake tools.

nic_qos:  validate every input -> discover/select -> per NIC: detect the stack,
          read, compare (+ firmware query) -> [apply -> read back] -> result
          state restored: the wanted values per NIC are an earlier gathered result's
          ``before`` instead of the plan; the rest is the same path.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

from ansible_collections.lossless.fabric.plugins.module_utils import _counters
from ansible_collections.lossless.fabric.plugins.module_utils._nic import (
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
    nic_counters,
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
}

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


def run_qos(params: dict, runner: Runner, which: Callable[[str], str | None], check_mode: bool) -> dict[str, Any]:
    """The nic_qos task. Raises NicError (before any write when the input is bad)."""
    firmware = validate_firmware(params.get("firmware"))
    fs = Fs(params.get("root") or "/")
    chosen, wants, cannot = _wants(params, fs)
    restoring = params.get("state") == "restored"
    gathered = params.get("state") == "gathered"

    states, reports = [], []
    for nic, want, lost in zip(chosen, wants, cannot):
        stack = params.get("stack") if params.get("stack") not in (None, "auto") else detect_stack(fs, nic)
        then = validate_snapshot(params["restore"])[nic["name"]]["stack"] if restoring else stack
        if then != stack:
            raise NicError("%s: gathered on the %s stack, now %s: the earlier values do not apply" % (nic["name"], then, stack))
        state = NicState(fs, runner, nic, stack)
        states.append(state)
        report = plan_nic(state, want)
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
    taken_at = _counters.now_iso()
    ports, raw, stacks = {}, {}, set()
    for nic in chosen:
        stacks.add(detect_stack(fs, nic))
        argv = ["ethtool", "-S", nic["netdev"]]
        rc, out, err = runner(argv)
        if rc != 0:
            said = (err or out or "").strip().splitlines()
            raise NicError("%s: ethtool -S %s: exit %s: %s" % (nic["name"], nic["netdev"], rc, said[0] if said else "no output"))
        raw["ethtool -S %s" % nic["netdev"]] = out
        ports[nic["name"]] = nic_counters(parse_ethtool_stats(out), read_hw_counters(fs, nic["name"]), sorted(set(priorities)))
    platform = stacks.pop() if len(stacks) == 1 else "mixed"
    snap = _counters.snapshot(device, platform, ports, raw, taken_at, kind="nic", names=NIC_COUNTERS)
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
