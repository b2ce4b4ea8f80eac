# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""The change-window report: one JSON document for machines, one Markdown page
and a busbw plot for people.

    build(...)     -> the report dict (what happened per device, counter deltas,
                      findings, the pre/post benchmark, the verdict)
    merge(old, new)-> one window's report across serial batches
    files(report)  -> {name.json, name.md, name.png: bytes}

The benchmark part reuses _report (benchmark_report, benchmark_markdown,
busbw_series, plot_busbw); the judgement is _findings. Nothing reads a clock:
times come from the caller, so the same inputs give the same bytes.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import tempfile
from typing import Any

from ansible_collections.lossless.fabric.plugins.module_utils._common import _report_files
from ansible_collections.lossless.fabric.plugins.module_utils._common import _snapshot as _counter_snapshot  # this file has a _snapshot() of its own
from ansible_collections.lossless.fabric.plugins.module_utils._common._markdown import md_cell, md_table
from ansible_collections.lossless.fabric.plugins.module_utils._hosts import _nic_task
from ansible_collections.lossless.fabric.plugins.module_utils._intent import _targets as _intent_targets
from ansible_collections.lossless.fabric.plugins.module_utils._nccl import _gate as _nccl_gate
from ansible_collections.lossless.fabric.plugins.module_utils._nccl import _report
from ansible_collections.lossless.fabric.plugins.module_utils._switches._config import mask_secrets
from ansible_collections.lossless.fabric.plugins.module_utils._window import _findings

# "changing": the record written right before the first change - a window killed during the push leaves it.
STATUSES = ("dry_run", "changing", "in_progress", "stopped", "passed", "failed")
CHANGING = "changing"


def _snapshot(value: Any) -> dict | None:
    """A snapshot from a snapshot or a registered switch_counters result; None when there is none."""
    if isinstance(value, dict) and not value.get("failed") and not value.get("skipped"):
        snap = value.get("counters") if "ports" not in value else value
        if isinstance(snap, dict) and isinstance(snap.get("ports"), dict):
            return snap
    return None


def _counter_section(counters: dict, plans: dict) -> dict:
    """{device: {pre: {port: summary}, post: ..., resets: [...]}} for the phases with both snapshots."""
    out = {}
    for device in sorted(counters):
        snaps = {key: _snapshot((counters[device] or {}).get(key)) for key in ("before", "middle", "after")}
        entry: dict[str, Any] = {}
        for phase, (first, last) in (("pre", ("before", "middle")), ("post", ("middle", "after"))):
            if snaps[first] and snaps[last]:
                delta = _counter_snapshot.delta(snaps[last], snaps[first])
                entry[phase] = _findings.summarize(delta, plans.get(device))
                entry[phase + "_interval_s"] = delta["interval_s"]
        out[device] = entry
    return out


def _device_section(devices: dict, check_mode: bool, batch: Any = None) -> dict:
    out = {}
    for device in sorted(devices):
        info = devices[device] or {}
        push = info.get("push") if isinstance(info.get("push"), dict) else {}
        judged = _findings.device_outcome(info.get("push"), info.get("settle"), info.get("rollback"), check_mode)
        out[device] = {
            "platform": info.get("platform"),
            "outcome": judged["outcome"],
            "detail": judged["detail"],
            "session": push.get("session"),
            # Only while it matters: the device's own roll-back time of a commit the window has not settled.
            "pending_until": push.get("pending_until") if judged["outcome"] in (_findings.PENDING, _findings.UNKNOWN) else None,
            "diff": mask_secrets(push.get("device_diff")) or "",
            "commands": len(push.get("commands") or []),
            "backup": info.get("backup"),
            "batch": batch,
        }
    return out


def _nic_diff(result: Any) -> str:
    """A nic_qos result's changes as '- before' / '+ after' line pairs (one pair per NIC and setting), the lines
    of its own diff - built from its nics, which it returns with or without --diff."""
    if not isinstance(result, dict) or result.get("skipped") or not isinstance(result.get("nics"), dict):
        return ""
    pairs = [pair for name in sorted(result["nics"]) for pair in _nic_task.diff_lines(dict(result["nics"][name], name=name))]
    return "".join("- %s\n+ %s\n" % pair for pair in pairs)


def _timer_outcome(info: dict, judged: dict) -> dict:
    """A GPU host whose NIC change was armed with a rollback timer (nic_qos rollback_timer): pending until the window
    confirms it (its ``confirm``), kept once confirmed, rolled back by the timer when it fired first."""
    apply, restore, confirm = (r if isinstance(r, dict) and not r.get("skipped") else None
                               for r in (info.get("apply"), info.get("restore"), info.get("confirm")))
    timer = (apply or {}).get("timer") if isinstance((apply or {}).get("timer"), dict) else None
    if timer is None:
        return judged
    settings = _findings._nic_settings(apply)  # pylint: disable=protected-access
    if judged["outcome"] == _findings.APPLIED_NO_ROLLBACK:
        return {"outcome": _findings.PENDING, "detail": "set %s; pending until %s: the host's rollback timer %s puts the NICs back by itself "
                "unless the window confirms it" % (settings, timer.get("pending_until"), timer.get("name"))}
    if judged["outcome"] == _findings.APPLIED and confirm is not None and not confirm.get("failed"):
        return {"outcome": _findings.KEPT, "detail": "set %s; confirmed (rollback timer %s)" % (settings, timer.get("name"))}
    if judged["outcome"] == _findings.RESTORED and restore is not None and restore.get("fired"):
        return {"outcome": _findings.ROLLED_BACK_BY_TIMER, "detail": "set %s; the host's rollback timer %s had put the NICs back by itself"
                % (settings, timer.get("name"))}
    return judged


def _host_section(hosts: dict, status: str, batch: Any = None) -> dict:
    """GPU hosts whose NICs the window changed (nic_qos): ``apply`` (state present), ``restore`` (state restored
    from the backup), ``backup`` (the file of the earlier gathered result), ``restore_command``."""
    out = {}
    for host in sorted(hosts):
        info = hosts[host] or {}
        apply = info.get("apply") if isinstance(info.get("apply"), dict) else {}
        judged = _timer_outcome(info, _findings.host_outcome(info.get("apply"), info.get("restore"), status == "dry_run",
                                                             status not in ("in_progress", CHANGING), info.get("backup")))
        out[host] = {
            "kind": "host",
            "stacks": sorted({n.get("stack") for n in (apply.get("nics") or {}).values() if n.get("stack")}),
            "outcome": judged["outcome"],
            "detail": judged["detail"],
            "diff": _nic_diff(info.get("apply")),
            "restore_diff": _nic_diff(info.get("restore")),
            "commands": len(apply.get("commands") or []),
            "backup": info.get("backup"),
            # How to put the NICs back by hand (NICs have no timer), while that may still be needed.
            "restore_command": info.get("restore_command") if judged["outcome"] in (_findings.APPLIED_NO_ROLLBACK, _findings.UNKNOWN) else None,
            "batch": batch,
        }
    return out


# OpenSM's authentication keys (opensm.conf): never in a report.
_OPENSM_SECRET = re.compile(r"^([-+ ]?\s*(?:m_key|sm_key|sa_key)\s+)\S+", re.MULTILINE)


def file_diff(path: str, before: str | None, after: str | None) -> str:
    """Unified diff of one file, installed (``before``; None: absent) against the plan's (``after``), OpenSM keys
    masked; "" when they are the same."""
    if before == after:
        return ""
    text = "".join(difflib.unified_diff((before or "").splitlines(keepends=True), (after or "").splitlines(keepends=True),
                                        fromfile="%s (installed)" % path if before is not None else "/dev/null",
                                        tofile="%s (plan)" % path))
    return _OPENSM_SECRET.sub(r"\1********", text if text.endswith("\n") else text + "\n")


def _sm_section(sms: dict, check_mode: bool, batch: Any = None) -> dict:
    """Subnet managers whose OpenSM files the window changed under a rollback_timer: ``files`` ([{path, before, after}]
    as the pre-check read and rendered them), ``arm`` / ``settle`` / ``rollback`` (registered rollback_timer results),
    ``timer`` (its name), ``commands`` (what the timer runs after putting the files back), ``backup`` (the folder)."""
    out = {}
    for device in sorted(sms):
        info = sms[device] or {}
        files = [f for f in info.get("files") or [] if isinstance(f, dict)]
        changes = [f["path"] for f in files if f.get("before") != f.get("after")]
        judged = _findings.sm_outcome(info.get("arm"), info.get("settle"), info.get("rollback"), check_mode, changes)
        arm = info.get("arm") if isinstance(info.get("arm"), dict) and not info["arm"].get("skipped") else {}
        out[device] = {
            "kind": "subnet_manager",
            "platform": "opensm",
            "outcome": judged["outcome"],
            "detail": judged["detail"],
            "session": None,
            "timer": {"name": info.get("timer"), "pending_until": arm.get("pending_until"),
                      "commands": [list(c) for c in info.get("commands") or []]} if arm else None,
            "pending_until": arm.get("pending_until") if judged["outcome"] in (_findings.PENDING, _findings.UNKNOWN) else None,
            "files": [{"path": f["path"], "existed": f.get("before") is not None, "changed": f["path"] in changes,
                       "diff": file_diff(f["path"], f.get("before"), f.get("after"))} for f in files],
            "diff": "".join(file_diff(f["path"], f.get("before"), f.get("after")) for f in files),
            "backup": info.get("backup"),
            "batch": batch,
        }
    return out


def _ib_section(ib_counters: dict | None) -> dict | None:
    """{pre, post: _findings.ib_summary} of the fabric's snapshots (before, middle, after); None when not read."""
    if not ib_counters:
        return None
    return {"pre": _findings.ib_summary(ib_counters.get("before"), ib_counters.get("middle")),
            "post": _findings.ib_summary(ib_counters.get("middle"), ib_counters.get("after"))}


def _not_reached(scope: list, devices: dict, plans: dict) -> dict:
    """Devices in scope that no batch has reached yet (serial): unchanged, and said so."""
    out = {device: {"platform": (plans.get(device) or {}).get("platform"), "outcome": _findings.UNCHANGED,
                    "detail": "not reached: its serial batch has not run", "session": None, "pending_until": None, "diff": "",
                    "commands": 0, "backup": None, "batch": None}
           for device in sorted(set(scope) - set(devices))}
    for device, entry in out.items():
        if (plans.get(device) or {}).get("kind") == "subnet_manager":
            entry.update(kind="subnet_manager", platform="opensm", timer=None, files=[])
            entry.pop("commands")
    return out


def _benchmark_section(name: str, benchmark: dict | None) -> dict | None:
    """The benchmark part: ``report``, the nccl_report report that judged the window (role nccl_gate), as is - the
    window's report must not re-judge what decided it; else _report.benchmark_report of the ``post`` launches
    against the ``pre`` ones (or the pre alone when no post ran)."""
    benchmark = benchmark or {}
    if isinstance(benchmark.get("report"), dict):
        if not isinstance(benchmark["report"].get("series"), list) or not isinstance(benchmark["report"].get("launches"), list):
            raise ValueError("benchmark.report: not a report of lossless.fabric.nccl_report (no series or launches)")
        return dict(benchmark["report"], plot=name + ".png")
    pre, post = list(benchmark.get("pre") or []), list(benchmark.get("post") or [])
    if not pre and not post:
        return None
    params = {key: None for key in _nccl_gate.GATE_ARG_SPEC}
    params["fabric_targets"] = benchmark.get("targets")
    settings, errors = None, []
    if benchmark.get("targets"):
        fabric, fabric_errors = _intent_targets.fabric_targets(params["fabric_targets"])
        settings, errors = _nccl_gate.gate_settings(params, fabric, fabric_errors)
    if errors:
        raise ValueError("benchmark.targets: %s" % "; ".join(errors))
    compare = benchmark.get("compare") if isinstance(benchmark.get("compare"), dict) and "sizes" in benchmark["compare"] else None
    if post:
        return _report.benchmark_report(post, name, settings, baseline=pre, compare=compare, phase="post", baseline_label="pre",
                                        title="NCCL busbw before and after the change")
    return _report.benchmark_report(pre, name, settings, phase="pre", title="NCCL busbw before the change (baseline)")


def build(window: dict, devices: dict, status: str, counters: dict | None = None, plans: dict | None = None,  # pylint: disable=too-many-arguments
          findings: list | None = None, benchmark: dict | None = None, reasons: list | None = None, scope: list | None = None,
          ib_counters: dict | None = None) -> dict:
    """The report of one window (or one serial batch of it). ``scope``: every device of the window, so that the
    report names those no batch has reached yet; ``ib_counters``: the InfiniBand fabric's before / middle / after
    snapshots (ib_fabric_facts results). ValueError on input it cannot read."""
    if status not in STATUSES:
        raise ValueError("status: %r is not one of %s" % (status, ", ".join(STATUSES)))
    name = "change-window-%s" % window["id"]
    if not _report_files.NAME_RE.fullmatch(name):
        raise ValueError("window.id: %r makes no file name (letters, digits, '.', '_' and '-')" % window["id"])
    check_mode = status == "dry_run"
    # GPU hosts come in ``devices`` too, marked kind host; they get their own section.
    hosts = _host_section({d: v for d, v in devices.items() if (v or {}).get("kind") == "host"}, status, window.get("batch"))
    # Subnet managers (kind subnet_manager) are devices like the switches, with their files and rollback timer.
    sms = _sm_section({d: v for d, v in devices.items() if (v or {}).get("kind") == "subnet_manager"}, check_mode, window.get("batch"))
    devs = _device_section({d: v for d, v in devices.items() if d not in hosts and d not in sms}, check_mode, window.get("batch"))
    devs.update(sms)
    if status == CHANGING:
        _changing(devs, hosts, window.get("deadline"))
    devs = dict(sorted({**_not_reached(scope or [], devs, plans or {}), **devs}.items()))
    outcomes = {device: entry["outcome"] for device, entry in {**devs, **hosts}.items()}
    findings = list(findings or [])
    return {
        "name": name,
        "window": dict(window),
        "status": status,
        "verdict": _findings.window_verdict("in_progress" if status == CHANGING else status, outcomes),
        "reasons": [str(r) for r in reasons or []],
        "devices": devs,
        "hosts": hosts,
        "outcomes": {o: sorted(d for d, v in outcomes.items() if v == o) for o in _findings.OUTCOMES if o in outcomes.values()},
        "findings": findings,
        "blocking_findings": len(_findings.blocking(findings)),
        "counters": _counter_section(counters or {}, plans or {}),
        "ib_counters": _ib_section(ib_counters),
        "benchmark": _benchmark_section(name, benchmark),
        "batches": [{"batch": window.get("batch"), "devices": sorted(d for d in devices if d not in hosts), "status": status}],
    }


def _changing(devs: dict, hosts: dict, deadline: Any) -> None:
    """The record before the first change: every device of the batch not yet changed is about to be. If no later report
    follows, the window ended during the change - each may hold it, pending until the window's deadline."""
    detail = ("being changed now: if this is the window's last report, it ended during the change - this device may hold the change, "
              "pending until %s, when its own rollback timer puts it back unless someone confirms it" % (deadline or "the window's deadline"))
    for entry in list(devs.values()) + list(hosts.values()):
        if entry["outcome"] == _findings.UNCHANGED:
            entry.update(outcome=_findings.UNKNOWN, detail=detail)
            if "pending_until" in entry:
                entry["pending_until"] = deadline


def merge(old: dict | None, new: dict) -> dict:
    """``new`` (this batch) added to ``old`` (the report of earlier batches of the same window, read from
    disk); a batch seen before is replaced. The verdict covers every device of every batch."""
    if not isinstance(old, dict) or old.get("name") != new["name"] or not isinstance(old.get("devices"), dict):
        return new
    batch = new["window"].get("batch")
    if batch is None or all(b.get("batch") == batch for b in old.get("batches") or []):
        return new
    out = dict(new)
    earlier = [b for b in old.get("batches") or [] if b.get("batch") != batch]
    out["batches"] = earlier + new["batches"]
    mine = set(new["batches"][-1]["devices"])
    # An earlier batch's device keeps its entry; this batch's devices take theirs; the rest stay "not reached".
    devices = {d: e for d, e in new["devices"].items() if d not in mine}
    devices.update({d: e for d, e in old["devices"].items() if d not in mine and e.get("batch") is not None})
    devices.update({d: e for d, e in new["devices"].items() if d in mine})
    out["devices"] = dict(sorted(devices.items()))
    # The NICs change with the batch that ran them (the first); later batches keep those entries.
    out["hosts"] = dict(sorted({**(old.get("hosts") or {}), **(new.get("hosts") or {})}.items()))
    out["counters"] = dict(sorted({**{d: e for d, e in (old.get("counters") or {}).items() if d not in mine}, **new["counters"]}.items()))
    out["ib_counters"] = new.get("ib_counters") or old.get("ib_counters")
    out["findings"] = [f for f in old.get("findings") or [] if f.get("device") not in mine] + new["findings"]
    out["blocking_findings"] = len(_findings.blocking(out["findings"]))
    out["reasons"] = list(dict.fromkeys((old.get("reasons") or []) + new["reasons"]))
    outcomes = {d: e["outcome"] for d, e in {**out["devices"], **out["hosts"]}.items()}
    out["outcomes"] = {o: sorted(d for d, v in outcomes.items() if v == o) for o in _findings.OUTCOMES if o in outcomes.values()}
    out["verdict"] = _findings.window_verdict(new["status"], outcomes)
    return out


# ---------------------------------------------------------------------------
# Markdown
# ---------------------------------------------------------------------------

def _md_devices(report: dict) -> list[str]:
    rows = [[md_cell(d), md_cell(e["platform"]), "**%s**" % md_cell(e["outcome"]), md_cell(e["detail"]), md_cell(e["pending_until"])]
            for d, e in report["devices"].items()]
    return md_table(["device", "platform", "what happened", "detail", "pending until"], rows)


def _md_hosts(report: dict) -> list[str]:
    hosts = report.get("hosts") or {}
    if not hosts:
        return ["The window did not change any GPU host's NICs."]
    rows = [[md_cell(h), md_cell(", ".join(e["stacks"])), "**%s**" % md_cell(e["outcome"]), md_cell(e["detail"]), md_cell(e["backup"])]
            for h, e in hosts.items()]
    out = ["NICs have no rollback timer: a change stays until it is restored from the backup (docs/change-window.md).", ""]
    out += md_table(["host", "NIC stack", "what happened", "detail", "backup (nic_qos gathered)"], rows)
    commands = [(h, e["restore_command"]) for h, e in hosts.items() if e.get("restore_command")]
    if commands:
        out += ["", "To put the NICs back:", ""] + ["- %s: `%s`" % (md_cell(h), c.replace("`", "'")) for h, c in commands]
    return out


def _md_findings(report: dict) -> list[str]:
    if not report["findings"]:
        return ["No findings in the counters."]
    rows = [[md_cell(f["severity"]), md_cell(f["phase"]), md_cell(f["kind"]), md_cell(f["message"])] for f in report["findings"]]
    return md_table(["severity", "phase", "finding", "what"], rows)


def _md_counters(report: dict) -> list[str]:
    rows = []
    for device, entry in report["counters"].items():
        for phase in ("pre", "post"):
            for port, s in (entry.get(phase) or {}).items():
                rows.append([md_cell(device), md_cell(port), phase] + [md_cell(s.get(k)) for k in (
                    "pfc_rx", "pfc_tx", "ecn_marked", "lossless_drops", "watchdog_storms", "cnp_packets")])
    if not rows:
        return ["No counter deltas (the snapshots were not taken)." if report["counters"] else "No switch in this window."]
    return ["Deltas per phase: pre = during the baseline benchmark, post = the change and the benchmark after it. "
            "PFC and drops on the plan's lossless priorities, ECN on its RoCE queue; '-' = the device does not report it.", ""] + md_table(
        ["device", "port", "phase", "PFC rx", "PFC tx", "ECN marked", "lossless drops", "watchdog storms", "CNP"], rows)


def _md_ib_counters(report: dict) -> list[str]:
    section = report.get("ib_counters")
    if not section:
        return []
    out = ["## InfiniBand counter deltas", "",
           "The fabric's port counters (perfquery, read from the master subnet manager's host): pre = during the baseline "
           "benchmark, post = the change and the benchmark after it. Any error counter that went up blocks the change; "
           "PortXmitWait is congestion evidence, not an error.", ""]
    rows = []
    for phase in ("pre", "post"):
        summary = section.get(phase)
        if summary is None:
            rows.append(["-", "-", phase, "not read", "-"])
            continue
        for _key, port in sorted(summary["ports"].items()):
            errors = ", ".join("%s +%d" % item for item in sorted(port["errors"].items())) or "-"
            rows.append(["%s \"%s\"" % (md_cell(port["type"]), md_cell(port["node"])), md_cell(port["port"]), phase, md_cell(errors),
                         md_cell(port["xmit_wait"])])
        if not summary["ports"]:
            rows.append(["-", "-", phase, "none on %d port(s)" % summary["ports_read"], "-"])
    return out + md_table(["node", "port", "phase", "error counters", "PortXmitWait"], rows) + [""]


def _md_benchmark(report: dict) -> list[str]:
    bench = report.get("benchmark")
    if not bench:
        return ["The benchmark did not run in this window."]
    # The benchmark report's own page, one heading level down.
    lines = _report.benchmark_markdown(bench).splitlines()
    return ["#" + line if line.startswith("#") else line for line in lines[2:]]


def _md_diffs(report: dict) -> list[str]:
    out = []
    for device, entry in report["devices"].items():
        out += ["### %s (%s): %s" % (md_cell(device), md_cell(entry["platform"]), md_cell(entry["outcome"])), ""]
        if entry["diff"].strip():
            out += ["```diff", entry["diff"].rstrip("\n").replace("```", "'''"), "```", ""]
        else:
            out += ["No difference.", ""]
        if entry.get("backup"):
            what = "OpenSM files before the change" if entry.get("kind") == "subnet_manager" else "Running configuration before the change"
            out += ["%s: `%s`" % (what, md_cell(entry["backup"])), ""]
        if entry.get("timer"):
            out += ["Rollback timer `%s` (until %s): when it fires or the window rolls back, it puts the files back and runs %s." % (
                md_cell(entry["timer"]["name"]), md_cell(entry["timer"]["pending_until"]),
                " then ".join("`%s`" % " ".join(c).replace("`", "'") for c in entry["timer"]["commands"]) or "nothing"), ""]
    return out


def _md_host_diffs(report: dict) -> list[str]:
    out = []
    for host, entry in (report.get("hosts") or {}).items():
        out += ["### %s (NICs): %s" % (md_cell(host), md_cell(entry["outcome"])), ""]
        for label, key in (("Applied", "diff"), ("Restored", "restore_diff")):
            if entry.get(key, "").strip():
                out += ["%s:" % label, "", "```diff", entry[key].rstrip("\n").replace("```", "'''"), "```", ""]
        if not entry["diff"].strip() and not entry.get("restore_diff", "").strip():
            out += ["No difference.", ""]
    return out


def markdown(report: dict) -> str:
    window = report["window"]
    out = ["# Change window %s%s" % (md_cell(window["id"]), " - %s" % md_cell(window["fabric"]) if window.get("fabric") else ""), ""]
    out.append("Verdict: **%s**" % report["verdict"].upper())
    out.append("")
    counts = ", ".join("%d %s" % (len(devs), outcome) for outcome, devs in report["outcomes"].items())
    facts = ["%d device(s)%s: %s" % (len(report["devices"]), ", %d host(s)" % len(report["hosts"]) if report.get("hosts") else "", counts or "none")]
    for key, label in (("started_at", "started"), ("deadline", "window ends (pending commits roll back by then)"), ("max_minutes", "maximum minutes")):
        if window.get(key) is not None:
            facts.append("%s: %s" % (label, md_cell(window[key])))
    if len(report["batches"]) > 1 or window.get("batch") not in (None, 1):
        facts.append("batch %s (%d batch(es) so far)" % (md_cell(window.get("batch")), len(report["batches"])))
    out += ["; ".join(facts) + ".", ""]
    if report["reasons"]:
        out += ["## Why", ""] + ["- %s" % md_cell(r) for r in report["reasons"]] + [""]
    out += ["## Devices", ""] + _md_devices(report) + [""]
    if report.get("hosts"):
        out += ["## GPU hosts (NICs)", ""] + _md_hosts(report) + [""]
    out += ["## Findings", ""] + _md_findings(report) + [""]
    out += ["## Counter deltas", ""] + _md_counters(report) + [""]
    out += _md_ib_counters(report)
    out += ["## Benchmark", ""] + _md_benchmark(report) + [""]
    out += ["## Diff applied per device", ""] + _md_diffs(report) + _md_host_diffs(report)
    return "\n".join(out).rstrip("\n") + "\n"


def files(report: dict) -> dict:
    """{file name: bytes}: <name>.json, <name>.md and, when a benchmark ran, <name>.png."""
    out = {report["name"] + ".json": (json.dumps(report, indent=2, sort_keys=True) + "\n").encode("utf-8"),
           report["name"] + ".md": markdown(report).encode("utf-8")}
    bench = report.get("benchmark")
    if bench and any(s.get("points") for s in bench["series"]):
        with tempfile.TemporaryDirectory() as work:
            png = os.path.join(work, report["name"] + ".png")
            targets = _report.plot_targets({"targets": (bench.get("targets") or {}).get("busbw") or []}, bench.get("collective"))
            _report.plot_busbw(bench["series"], targets, png, bench["title"])
            with open(png, "rb") as handle:
                out[report["name"] + ".png"] = handle.read()
    return out
