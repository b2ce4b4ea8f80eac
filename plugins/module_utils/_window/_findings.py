# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""Change-window judgement: counter findings, what happened to each device,
and the window's verdict. Pure Python; nothing here touches Ansible.

Findings come from the counter deltas (_snapshot.delta) of one phase of a
change window - ``pre`` (the baseline benchmark, before the change) or
``post`` (the change and the benchmark after it):

    lossless_drop       a queue / priority group of a lossless priority dropped packets  (blocking)
    watchdog_storm      the PFC watchdog detected a storm (or a queue is in DEADLOCK)    (blocking)
    ecn_without_cnp     ECN marked packets, and the CNP counters available saw none      (blocking)
    ecn_cnp_unknown     ECN marked packets, and no device reports CNPs to check against  (warning)
    lossy_pause         PFC pause frames on a priority the plan does not make lossless  (warning)
    no_counters         a device in scope has no snapshot for the phase                  (blocking)
    no_nic_counters     a GPU host's NIC snapshot is missing (its CNPs are not counted)   (warning)
    counter_reset       a counter went down between the snapshots (cleared or wrapped)   (warning)

The switch-port, NIC and ECN/CNP rules are the evidence rules the nccl gate uses too (one copy:
_common/_evidence.py), mode-aware (lossless, ecn_only, pfc_only): pause_without_ecn, roce_drops,
retransmissions, pause_in_ecn_only, ecn_in_pfc_only, cnp_off_priority; and, when the phase ran a benchmark
(``evidence`` settings given), roce_off_queue and roce_off_priority (the RoCE share of every port and NIC).

InfiniBand (ib_counter_findings: two ib_fabric_facts snapshots of the fabric's PMA counters, perfquery):

    ib_error            an error counter (_ib.ERROR_COUNTERS) of a port went up            (blocking)
    no_ib_counters      the fabric's counters could not be read for the phase              (blocking)
    ib_port_unread      a port read before was not read after (link down, perfquery failed) (warning)
    ib_xmit_wait        PortXmitWait grew: the port waited for credits (congestion, no error) (info)

Queue, traffic class and PFC priority are the same number (the plan's contract,
see _intent/_plan.py _switch_plan), so "the lossless queues" are the plan's pfc_priorities.
"""

from __future__ import annotations

from typing import Any

from ansible_collections.lossless.fabric.plugins.module_utils._common import _evidence, _snapshot
from ansible_collections.lossless.fabric.plugins.module_utils._ib import _facts as _ib

BLOCKING = _evidence.BLOCKING
WARNING = _evidence.WARNING
# Evidence worth showing that is neither an error nor a doubt (InfiniBand congestion: PortXmitWait).
INFO = _evidence.INFO

# perfquery PortCounters fields judged in an InfiniBand window: every increment of an error counter blocks;
# PortXmitWait (ticks a port had data but no credits to send) is congestion evidence only.
IB_ERROR_COUNTERS = _ib.ERROR_COUNTERS
IB_CONGESTION_COUNTER = "PortXmitWait"

# Counters that count packets a queue or priority group threw away.
DROP_COUNTERS = _evidence.DROP_COUNTERS

# What happened to one device in a change window (the report's words).
KEPT = "kept"
ROLLED_BACK = "rolled back"
ROLLED_BACK_BY_TIMER = "rolled back by timer"
UNCHANGED = "unchanged"
PENDING = "pending"
WOULD_CHANGE = "would change"
UNKNOWN = "unknown"
# GPU hosts' NICs have no commit timer: a NIC change is applied at once, and undone only by a restore from its backup.
APPLIED = "applied"
APPLIED_NO_ROLLBACK = "applied, no automatic rollback"
RESTORED = "restored"
OUTCOMES = (KEPT, APPLIED, ROLLED_BACK, RESTORED, ROLLED_BACK_BY_TIMER, UNCHANGED, PENDING, APPLIED_NO_ROLLBACK, WOULD_CHANGE, UNKNOWN)

# The window's verdicts.
VERDICTS = ("kept", "rolled back", "partial", "no change", "stopped", "dry run", "in progress")


_finding = _evidence.finding
# The switch-port rules and the report's per-port numbers are the shared evidence rules (_common/_evidence.py).
port_summary = _evidence.port_summary


def summarize(delta: dict, plan: dict | None) -> dict:
    """{port: port_summary} of one device's delta."""
    return {port: port_summary(counters, plan) for port, counters in (delta.get("ports") or {}).items()}


def _usable(value: Any) -> bool:
    return isinstance(value, dict) and not value.get("failed") and not value.get("skipped") and (
        isinstance(value.get("ports"), dict) or isinstance(value.get("counters"), dict))


def counter_findings(before: dict, after: dict, plans: dict, phase: str, nic_before: dict | None = None,  # pylint: disable=too-many-arguments,too-many-locals
                     nic_after: dict | None = None, ib_before: Any = None, ib_after: Any = None, evidence: dict | None = None,
                     baseline_mode: str | None = None) -> list[dict]:
    """Findings of one phase. ``before``/``after``: {device: snapshot (or a registered switch_counters result)}
    with a key for every switch in scope (a None, failed or skipped value is a ``no_counters`` finding);
    ``plans``: {device: switch plan}; ``nic_*``: the same for host NICs (optional; their CNP counters answer the ECN marks);
    ``ib_*``: the InfiniBand fabric's snapshots (ib_fabric_facts results; optional, see ib_counter_findings);
    ``evidence``: the evidence settings (_evidence.settings: share, min_bytes, max_drops) when the phase ran a
    benchmark - then the traffic rules run too (the RoCE share of every switch port and NIC, CNPs on the CNP
    priority); None: only the rules that hold without a benchmark (drops, storms, pauses, the mode's rules, ECN/CNP).
    ``baseline_mode``: the fabric mode the fabric runs before the change, when the change moves it to the plans' mode;
    the pre phase (counted before anything changed) is judged in that mode (_evidence.in_mode), the post phase in the
    plans' own."""
    if phase not in ("pre", "post"):
        raise ValueError("phase: %r is not pre or post" % (phase,))
    if baseline_mode is not None and baseline_mode not in _evidence.MODES:
        raise ValueError("baseline_mode: %r is not one of %s" % (baseline_mode, ", ".join(_evidence.MODES)))
    if phase == "pre" and baseline_mode is not None:
        plans = {device: _evidence.in_mode(plan, baseline_mode) for device, plan in plans.items()}
    opts = _evidence.settings(evidence or {})
    found: list[dict] = []
    deltas = {}
    for device in sorted(set(before) | set(after)):
        if not _usable(before.get(device)) or not _usable(after.get(device)):
            found.append(_finding(BLOCKING, "no_counters", phase, device, "no counter snapshot %s the %s phase: the phase cannot be judged" % (
                "before" if not _usable(before.get(device)) else "after", phase)))
            continue
        deltas[device] = _snapshot.delta(after[device], before[device])
    nic_deltas = {}
    for device in sorted(set(nic_before or {}) | set(nic_after or {})):
        first, last = (nic_before or {}).get(device), (nic_after or {}).get(device)
        if not _usable(first) or not _usable(last):
            found.append(_finding(WARNING, "no_nic_counters", phase, device, "no NIC counter snapshot %s the %s phase: its CNPs are not "
                                  "counted" % ("before" if not _usable(first) else "after", phase)))
            continue
        nic_deltas[device] = _snapshot.delta(last, first)
    ecn_ports = []
    for device, delta in sorted(deltas.items()):
        plan = plans.get(device)
        for reset in delta["resets"]:
            found.append(_finding(WARNING, "counter_reset", phase, device, "%s: %s%s went down from %s to %s (cleared or wrapped); counted "
                                  "from the reset" % (reset["port"], reset["counter"], "[%s]" % reset["index"] if "index" in reset else "",
                                                      reset["pre"], reset["post"]), port=reset["port"], counter=reset["counter"]))
        for port, counters in delta["ports"].items():
            found.extend(_evidence.port_findings(device, port, counters, plan, phase, opts))
            if evidence is not None:
                found.extend(_evidence.queue_evidence(device, port, counters, plan, phase, opts)[1])
            ecn = port_summary(counters, plan)["ecn_marked"]
            if _evidence.mode_of(plan) != "pfc_only" and isinstance(ecn, int) and ecn > 0:
                ecn_ports.append((device, port, ecn))
        found.extend(_evidence.pause_without_ecn(device, delta["ports"], plan, phase))
    for device, delta in sorted(nic_deltas.items()):
        for nic, counters in delta["ports"].items():
            these = _evidence.nic_evidence(device, nic, counters, plans.get(device), phase, opts)[1]
            # Without a benchmark in the phase the share of a quiet NIC proves nothing: only the mode's rules count then.
            found.extend(f for f in these if evidence is not None or f["kind"] not in _evidence.TRAFFIC_KINDS)
    cnps, counted_by = _evidence.cnp_counts(nic_deltas, deltas)
    found.extend(_evidence.judge_ecn_cnp(ecn_ports, cnps, counted_by, phase))
    return found + ib_counter_findings(ib_before, ib_after, phase)


# ---------------------------------------------------------------------------
# InfiniBand: the fabric's PMA counters (one ib_fabric_facts snapshot per phase boundary, from the master SM host)
# ---------------------------------------------------------------------------


def ib_facts(value: Any) -> dict | None:
    """The ib_fabric snapshot of a registered ib_fabric_facts result (or the snapshot itself); None when it has no
    counters (not read, failed, skipped)."""
    if not isinstance(value, dict) or value.get("failed") or value.get("skipped") or value.get("unreachable"):
        return None
    facts = value.get("ib_fabric") if "ib_fabric" in value else value
    return facts if isinstance(facts, dict) and isinstance(facts.get("counters"), dict) else None


def ib_port_name(facts: dict, key: str) -> tuple[str, str, str]:
    """(node type, node description or GUID, port) of a port key ``<node guid>/<port>``."""
    node_guid, _sep, port = key.partition("/")
    node = (facts.get("nodes") or {}).get(node_guid) or {}
    return node.get("type") or "node", node.get("description") or node_guid, port


def _ib_number(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def ib_delta(before: dict, after: dict) -> dict:
    """Counter deltas of two ib_fabric snapshots: ``ports`` {port key: {counter: increment}} (judged counters only,
    zeros included), ``resets`` [{port, counter, pre, post}] (a counter that went down: cleared or wrapped; counted from
    the reset), ``unread`` [port keys read before, not after]."""
    out: dict = {"ports": {}, "resets": [], "unread": []}
    first, last = before.get("counters") or {}, after.get("counters") or {}
    for key in sorted(first):
        if key not in last:
            out["unread"].append(key)
    for key in sorted(last):
        if key not in first:
            continue  # a port that came up during the phase: no start to count from
        port = {}
        for name in IB_ERROR_COUNTERS + (IB_CONGESTION_COUNTER,):
            pre, post = first[key].get(name), last[key].get(name)
            if not _ib_number(pre) or not _ib_number(post):
                continue
            if post < pre:
                out["resets"].append({"port": key, "counter": name, "pre": pre, "post": post})
                port[name] = post
            else:
                port[name] = post - pre
        out["ports"][key] = port
    return out


def ib_summary(before: Any, after: Any) -> dict | None:
    """The report's view of one phase: {ports: {port key: {node, type, port, errors: {counter: n > 0}, xmit_wait}}
    for the ports where something moved, ports_read, unread}; None without both snapshots."""
    first, last = ib_facts(before), ib_facts(after)
    if first is None or last is None:
        return None
    delta = ib_delta(first, last)
    ports = {}
    for key, counters in delta["ports"].items():
        errors = {name: value for name, value in counters.items() if name in IB_ERROR_COUNTERS and value > 0}
        wait = counters.get(IB_CONGESTION_COUNTER)
        if errors or wait:
            kind, node, port = ib_port_name(last, key)
            ports[key] = {"node": node, "type": kind, "port": port, "errors": errors, "xmit_wait": wait}
    return {"ports": ports, "ports_read": len(delta["ports"]), "unread": delta["unread"]}


def ib_counter_findings(before: Any, after: Any, phase: str) -> list[dict]:
    """Findings in the InfiniBand counters of one phase. ``before``/``after``: ib_fabric_facts results (or their
    ib_fabric); both None: the fabric is not in the window's scope (no findings). Every increment of an error counter on
    any port is blocking and names the node, the port and the counter; PortXmitWait growth is informational."""
    if phase not in ("pre", "post"):
        raise ValueError("phase: %r is not pre or post" % (phase,))
    if before is None and after is None:
        return []
    first, last = ib_facts(before), ib_facts(after)
    if first is None or last is None:
        missing = before if first is None else after
        said = str((missing or {}).get("msg") or "not read").strip() if isinstance(missing, dict) else "not read"
        return [_finding(BLOCKING, "no_ib_counters", phase, "fabric", "no InfiniBand counter snapshot %s the %s phase (%s): the "
                         "phase cannot be judged" % ("before" if first is None else "after", phase, said))]
    delta = ib_delta(first, last)
    found = []
    for reset in delta["resets"]:
        kind, node, port = ib_port_name(last, reset["port"])
        found.append(_finding(WARNING, "counter_reset", phase, node, '%s port %s: %s went down from %d to %d (cleared or wrapped); '
                              "counted from the reset" % (kind, port, reset["counter"], reset["pre"], reset["post"]),
                              node=reset["port"].split("/")[0], port=port, counter=reset["counter"]))
    for key in delta["unread"]:
        kind, node, port = ib_port_name(first, key)
        found.append(_finding(WARNING, "ib_port_unread", phase, node, "%s port %s: read before the %s phase, not after (link down, or "
                              "perfquery failed: see the snapshot's errors)" % (kind, port, phase), node=key.split("/")[0], port=port))
    for key, counters in delta["ports"].items():
        kind, node, port = ib_port_name(last, key)
        where = {"node": key.split("/")[0], "port": port}
        for name in IB_ERROR_COUNTERS:
            if counters.get(name, 0) > 0:
                found.append(_finding(BLOCKING, "ib_error", phase, node, "%s port %s: %s +%d" % (kind, port, name, counters[name]),
                                      counter=name, value=counters[name], **where))
        if counters.get(IB_CONGESTION_COUNTER, 0) > 0:
            found.append(_finding(INFO, "ib_xmit_wait", phase, node, "%s port %s: %s +%d (waited for credits: congestion, not an "
                                  "error)" % (kind, port, IB_CONGESTION_COUNTER, counters[IB_CONGESTION_COUNTER]),
                                  counter=IB_CONGESTION_COUNTER, value=counters[IB_CONGESTION_COUNTER], **where))
    return found


blocking = _evidence.blocking


# ---------------------------------------------------------------------------
# what happened to each device
# ---------------------------------------------------------------------------


def _said(result: dict | None) -> str:
    return str((result or {}).get("msg") or "").strip()


def device_outcome(push: dict | None, settle: dict | None = None, rollback: dict | None = None, check_mode: bool = False) -> dict:
    """{outcome, detail} of one device from its registered switch_config results: ``push`` (state merged,
    confirm false), ``settle`` (state confirmed or rolled_back, the window's decision) and ``rollback`` (the
    rescue's state rolled_back, after a failure). Missing ones were not run (None or a skipped result)."""
    push, settle, rollback = (r if isinstance(r, dict) and not r.get("skipped") else None for r in (push, settle, rollback))
    if push is None:
        return {"outcome": UNCHANGED, "detail": "not pushed: the window ended before the change"}
    if check_mode:
        return {"outcome": WOULD_CHANGE if push.get("changed") else UNCHANGED,
                "detail": "dry run: the device diff shows what a real run would commit" if push.get("changed") else "nothing to change"}
    if push.get("failed"):
        state = push.get("device_state")
        if state in ("unchanged", "rolled back"):
            return {"outcome": UNCHANGED if state == "unchanged" else ROLLED_BACK, "detail": "push failed: %s" % _said(push)}
    elif not push.get("changed"):
        return {"outcome": UNCHANGED, "detail": "nothing to change"}
    until = push.get("pending_until")
    if settle is not None and not settle.get("failed") and settle.get("pending"):
        # The window's own decision went through; a later rescue roll-back finds nothing left to undo.
        session = settle.get("session") or push.get("session")
        if settle.get("device_state") == "committed":
            return {"outcome": KEPT, "detail": "confirmed session %s" % session}
        return {"outcome": ROLLED_BACK, "detail": "rolled back session %s" % session}
    for result, what in ((rollback, "roll-back"), (settle, "settling")):
        if result is None:
            continue
        if result.get("failed"):
            return {"outcome": UNKNOWN, "detail": "%s failed: %s; a pending commit rolls back by the device timer at %s" % (
                what, _said(result), until or "its end")}
        if not result.get("pending") and push.get("failed"):
            # The push failed before or while committing: whether a commit ever landed is unknown, but none is left.
            return {"outcome": UNCHANGED, "detail": "push failed: %s; nothing pending at the %s, so the device runs its old "
                    "configuration" % (_said(push), what)}
        if not result.get("pending"):
            return {"outcome": ROLLED_BACK_BY_TIMER, "detail": "no pending commit left at the %s: the device timer had rolled it back" % what}
        return {"outcome": ROLLED_BACK, "detail": "rolled back session %s" % (result.get("session") or push.get("session"))}
    if push.get("failed"):
        return {"outcome": UNKNOWN, "detail": "push failed: %s" % _said(push)}
    return {"outcome": PENDING, "detail": "commit pending until %s: the device rolls it back then unless it is confirmed" % until}


def _nic_settings(result: dict) -> str:
    """'mlx5_0: cnp, dscp_map; mlx5_1: cnp' from a nic_qos result."""
    nics = result.get("nics") if isinstance(result.get("nics"), dict) else {}
    parts = ["%s: %s" % (name, ", ".join(nic.get("changes") or [])) for name, nic in sorted(nics.items()) if nic.get("changes")]
    return "; ".join(parts) or "no setting"


def host_outcome(apply: dict | None, restore: dict | None = None, check_mode: bool = False, settled: bool = True,
                 backup: str | None = None) -> dict:
    """{outcome, detail} of one GPU host from its registered nic_qos results: ``apply`` (state present, the new
    plan) and ``restore`` (state restored from the backup gathered before the change). NICs have no device-side
    timer: a change not restored stays; ``settled`` false (the window has not decided yet) says exactly that."""
    apply, restore = (r if isinstance(r, dict) and not r.get("skipped") else None for r in (apply, restore))
    where = " from %s" % backup if backup else ""
    if apply is None:
        return {"outcome": UNCHANGED, "detail": "NICs not changed: the window ended before the NIC change"}
    if check_mode:
        return {"outcome": WOULD_CHANGE if apply.get("changed") else UNCHANGED,
                "detail": "dry run: would set %s" % _nic_settings(apply) if apply.get("changed") else "nothing to change on the NICs"}
    if not apply.get("changed") and not apply.get("failed"):
        return {"outcome": UNCHANGED, "detail": "nothing to change on the NICs"}
    failed = "NIC change failed: %s; " % _said(apply) if apply.get("failed") else ""
    if restore is not None:
        if restore.get("failed"):
            return {"outcome": UNKNOWN, "detail": "%srestore failed: %s; the NICs may keep new values: restore them%s (docs/change-window.md)"
                    % (failed, _said(restore), where)}
        lost = ["%s %s: %s" % (u.get("nic"), u.get("setting"), u.get("reason")) for u in restore.get("unsupported") or []]
        return {"outcome": RESTORED, "detail": "%srestored%s: %s%s" % (
            failed, where, _nic_settings(restore) if restore.get("changed") else "nothing differed",
            "; not restored: " + "; ".join(lost) if lost else "")}
    if apply.get("failed"):
        return {"outcome": UNKNOWN, "detail": "%snot restored: restore the NICs%s (docs/change-window.md)" % (failed, where)}
    if not settled:
        return {"outcome": APPLIED_NO_ROLLBACK, "detail": "set %s; NICs have no rollback timer: if the window does not finish, "
                "restore them%s (docs/change-window.md)" % (_nic_settings(apply), where)}
    return {"outcome": APPLIED, "detail": "set %s (nothing to confirm on NICs)" % _nic_settings(apply)}


def _timer_put_back(result: dict) -> str:
    """'put back <path> (written), ...; ran <argv> (rc 0)' from a rollback_timer rolled_back result."""
    files = ", ".join("%s (%s)" % (r.get("path"), r.get("action")) for r in result.get("restored") or []) or "no file"
    ran = "; ".join("ran %s (rc %s)" % (" ".join(str(a) for a in c.get("argv") or []), c.get("rc")) for c in result.get("commands") or [])
    return "put back %s%s" % (files, "; " + ran if ran else "")


def sm_outcome(arm: dict | None, settle: dict | None = None, rollback: dict | None = None, check_mode: bool = False,
               changes: list | None = None) -> dict:
    """{outcome, detail} of one subnet manager from its registered rollback_timer results: ``arm`` (state armed, before
    the OpenSM files were written), ``settle`` (confirmed or rolled_back, the window's decision) and ``rollback`` (the
    rescue's rolled_back after a failure); ``changes``: the files the plan would change (the pre-check's dry run)."""
    arm, settle, rollback = (r if isinstance(r, dict) and not r.get("skipped") else None for r in (arm, settle, rollback))
    files = ", ".join(changes or [])
    if arm is None:
        if changes and not check_mode:
            return {"outcome": UNCHANGED, "detail": "not changed: the window ended before the change (it would change %s)" % files}
        return {"outcome": UNCHANGED, "detail": "nothing to change"}
    if check_mode:
        return {"outcome": WOULD_CHANGE, "detail": "dry run: would write %s under a rollback timer" % files}
    if arm.get("failed"):
        return {"outcome": UNCHANGED, "detail": "rollback timer not armed: %s; no OpenSM file was written" % _said(arm)}
    until = arm.get("pending_until")
    if settle is not None and not settle.get("failed"):
        if settle.get("fired"):
            return {"outcome": ROLLED_BACK_BY_TIMER, "detail": "the rollback timer had already fired: %s" % _timer_put_back(settle)}
        if "restored" in settle:
            return {"outcome": ROLLED_BACK, "detail": "rolled back: %s" % _timer_put_back(settle)}
        return {"outcome": KEPT, "detail": "rollback timer confirmed: OpenSM keeps %s" % files}
    if rollback is not None and not rollback.get("failed"):
        if rollback.get("fired"):
            return {"outcome": ROLLED_BACK_BY_TIMER, "detail": "the rollback timer had already fired (at %s): %s" % (until, _timer_put_back(rollback))}
        return {"outcome": ROLLED_BACK, "detail": "rolled back: %s" % _timer_put_back(rollback)}
    for result, what in ((rollback, "roll-back"), (settle, "settling")):
        if result is not None:
            return {"outcome": UNKNOWN, "detail": "%s failed: %s; the rollback timer puts the files back at %s - check the host" % (
                what, _said(result), until or "its deadline")}
    return {"outcome": PENDING, "detail": "%s written; the rollback timer puts them back at %s unless the window confirms it" % (files, until)}


def window_verdict(status: str, outcomes: dict) -> str:
    """The window's verdict from how it ended (``status``: dry_run, in_progress, stopped, passed, failed) and
    the device outcomes ({device: outcome})."""
    values = set(outcomes.values())
    if status == "dry_run":
        return "dry run"
    if status == "in_progress":
        return "in progress"
    if status == "stopped":
        return "stopped"
    if values <= {UNCHANGED}:
        return "no change" if status == "passed" else "stopped"
    if status == "passed" and values <= {KEPT, APPLIED, UNCHANGED}:
        return "kept"
    if values & {KEPT, APPLIED, APPLIED_NO_ROLLBACK}:
        # Confirmed on some devices while others were rolled back (e.g. a timer ran out first): needs a person.
        return "partial"
    return "rolled back"
