# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""_localize, report, exclusion and the SuperBench baseline (the package docstring says what the whole does)."""

from __future__ import annotations

from typing import Any

from ansible_collections.lossless.fabric.plugins.module_utils._localize._base import (
    _CONTROL,
    _NAME,
    REASON_MAX,
    LocalizeError,
)

# ---------------------------------------------------------------------------
# Output
# ---------------------------------------------------------------------------


def component_text(comp: dict) -> str:
    """{"kind": "nic", "name": "gpu1:mlx5_1"} -> 'nic gpu1:mlx5_1' (the one name used in reports and docs)."""
    return "%s %s" % (comp["kind"], comp["name"])


def _cell(value: Any) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


def report_markdown(result: dict) -> str:
    """The suspects, ranked, with their evidence and the cost, as Markdown."""
    lines = ["# Localization: %s" % result["verdict"], "",
             "%d rounds (%d waves of launches), %d launches, %s GPU-minutes (loopback tests: %d)."
             % (result["rounds"], result.get("waves", result["rounds"]), result["jobs"], result["gpu_minutes"], result.get("loopback_tests", 0)), ""]
    if not result["suspects"]:
        if result["verdict"] == "clean":
            lines.append("No component is slow: every launch reached its reference, or a slow one was cleared by the verify round.")
        else:
            lines.append("Slow launches that no component explains consistently (below): nothing is accused.")
    else:
        lines += ["| rank | component | leaf port | slow | fast | cannot be told from |", "|---|---|---|---|---|---|"]
        for s in result["suspects"]:
            group = ", ".join(component_text(c) for c in s["group"]) or "-"
            name = component_text(s["component"]) + (" (partial: slow in part of its launches)" if s["partial"] else "")
            lines.append("| %d | %s | %s | %d | %d | %s |" % (s["rank"], _cell(name), _cell(s["leaf_port"] or "-"), s["slow"], s["fast"], _cell(group)))
        for s in result["suspects"]:
            lines += ["", "## %d. %s" % (s["rank"], _cell(component_text(s["component"]))), "",
                      "| round | job | hosts | measured | expected | slow |", "|---|---|---|---|---|---|"]
            for e in s["evidence"]:
                unit = e.get("unit", "GB/s")
                cells = (e["round"], e["job"], _cell(" ".join(e["hosts"])), "failed" if e["busbw"] is None else "%.2f %s" % (e["busbw"], unit),
                         "-" if e["expected"] is None else "%.2f %s" % (e["expected"], unit), "yes" if e["slow"] else "no")
                lines.append("| %s | %s | %s | %s | %s | %s |" % cells)
    if result["unexplained"]:
        lines += ["", "Slow launches left unexplained:", ""]
        for u in result["unexplained"]:
            cells = (u["round"], u["job"], _cell(" ".join(u["hosts"])), "failed" if u["busbw"] is None else "%.2f" % u["busbw"], u["expected"])
            lines.append("- round %s, %s (%s): %s GB/s against %s" % cells)
    return "\n".join(lines) + "\n"


def _clean(text: Any, what: str, limit: int) -> str:
    if not isinstance(text, str) or not text.strip():
        raise LocalizeError("%s: expected a non-empty string, got %r" % (what, text))
    if _CONTROL.search(text):
        raise LocalizeError("%s: %r carries a newline or control character" % (what, text))
    if len(text) > limit:
        raise LocalizeError("%s: %d characters, at most %d" % (what, len(text), limit))
    return text


def exclusion(result: dict, kind: str, reason: str) -> list[dict]:
    """What to take out of service for the accused host-side components (host, NIC, link): one entry per host.

    slurm: the argv of ``scontrol update nodename=<h> state=drain reason=<r>``; kubernetes: cordon the node and
    taint it ``lossless.fabric/localize=suspect:NoSchedule``, the reason as an annotation.  Switch-side suspects
    (leaf, uplink, spine) drain no host.  Nothing is run here."""
    if kind not in ("slurm", "kubernetes"):
        raise LocalizeError("exclude: expected 'slurm' or 'kubernetes', got %r" % (kind,))
    reason = _clean(reason, "reason", REASON_MAX)
    out, seen = [], set()
    for suspect in result.get("suspects") or []:
        for comp in [suspect["component"]] + list(suspect.get("group") or []):
            if comp["kind"] not in ("host", "nic", "link"):
                continue
            host = comp["name"].split("~")[0].split(":")[0]
            if host in seen:
                continue
            if not _NAME.match(host):
                raise LocalizeError("exclude: host %r is not a node name" % (host,))
            seen.add(host)
            why = _clean("%s (%s)" % (reason, component_text(comp)), "reason", REASON_MAX)
            entry = {"host": host, "component": comp, "rank": suspect["rank"], "ambiguous": bool(suspect.get("group"))}
            if kind == "slurm":
                entry["argv"] = ["scontrol", "update", "nodename=%s" % host, "state=drain", "reason=%s" % why]
            else:
                entry["node"] = host
                entry["cordon"] = True
                entry["taint"] = {"key": "lossless.fabric/localize", "value": "suspect", "effect": "NoSchedule"}
                entry["annotations"] = {"lossless.fabric/localize-reason": why}
            out.append(entry)
    return out


def superbench_pairwise(hosts: list[str]) -> list[list[tuple[str, str]]]:
    """SuperBench's pair-wise pattern (circle method): N-1 rounds (N odd: N, one host out per round), N/2 pairs each;
    every host meets every other exactly once."""
    if len(hosts) < 2:
        return []
    ring = list(hosts) + ([None] if len(hosts) % 2 else [])
    n = len(ring)
    rounds = []
    for _r in range(n - 1):
        pairs = [(ring[i], ring[n - 1 - i]) for i in range(n // 2)]
        rounds.append([p for p in pairs if None not in p])
        ring = [ring[0], ring[-1]] + ring[1:-1]
    return rounds
