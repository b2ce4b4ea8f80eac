# SPDX-License-Identifier: GPL-3.0-or-later
"""Controller side of lossless.fabric.nccl_report: thin glue over _report (the report files live on the controller)."""

from __future__ import annotations

import tempfile

from ansible_collections.lossless.fabric.plugins.module_utils._common import _evidence, _report_files
from ansible_collections.lossless.fabric.plugins.module_utils._intent import _targets as _intent_targets
from ansible_collections.lossless.fabric.plugins.module_utils._nccl import _gate as _nccl_gate
from ansible_collections.lossless.fabric.plugins.module_utils._nccl import _report
from ansible_collections.lossless.fabric.plugins.plugin_utils._controller_action import ControllerAction

ARGUMENT_SPEC = {
    "report_dir": {"type": "path", "required": True},
    "name": {"type": "str", "required": True},
    "results": {"type": "list", "elements": "raw", "required": True},
    "baseline": {"type": "list", "elements": "raw"},
    "baseline_label": {"type": "str", "default": "baseline"},
    "compare": {"type": "dict"},
    "phase": {"type": "str"},
    "title": {"type": "str"},
    "generated_at": {"type": "str"},
    "evidence": {"type": "dict", "options": {
        **{key: {"type": "dict"} for key in ("switches_before", "switches_after", "nics_before", "nics_after", "plans", "ports", "settings")},
        "note": {"type": "str"}}},
    **_nccl_gate.GATE_ARG_SPEC,
}


def _errors(args) -> list:
    """Input errors, each naming the option and the value, found before anything is written."""
    errors = []
    if not _report_files.NAME_RE.match(args["name"]):
        errors.append("name: %r is not a report name (letters, digits, '.', '_' and '-', starting with a letter or digit, "
                      "at most 100 characters)" % args["name"])
    if not args["report_dir"].strip():
        errors.append("report_dir: empty")
    for key in ("phase", "title", "generated_at", "baseline_label"):
        value = args.get(key)
        if value is not None and any(c in value for c in "\r\n"):
            errors.append("%s: %r holds a line break (it becomes one line of the report)" % (key, value))
    if args["compare"] is not None and not isinstance(args["compare"].get("sizes", []), list):
        errors.append("compare: not an nccl_compare result (sizes is not a list)")
    evidence = args.get("evidence")
    if evidence is not None:
        try:
            _evidence.settings(evidence.get("settings") or {})
        except ValueError as exc:
            errors.append(str(exc))
    return errors


def evidence_of(evidence, phase=None):
    """_evidence.judge() of the ``evidence`` option (the snapshots around the launches - switch_counters results or
    snapshots, nic_counters snapshots, by inventory name -, the plans, the ports the launch crosses, the settings), plus
    the ports judged and the note; None without the option."""
    if evidence is None:
        return None
    out = _evidence.judge(evidence.get("switches_before") or {}, evidence.get("switches_after") or {}, evidence.get("nics_before") or {},
                          evidence.get("nics_after") or {}, evidence.get("plans") or {}, evidence.get("ports"), evidence.get("settings") or {},
                          phase or "launch")
    out["ports"] = evidence.get("ports")
    out["note"] = evidence.get("note")
    return out


class ActionModule(ControllerAction):
    """Write <report_dir>/<name>.json, .md and .png from nccl_result results; only files whose content changed."""

    argument_spec = ARGUMENT_SPEC

    def run_validated(self, args, task_vars, result):
        errors = _errors(args)
        fabric, fabric_errors = _intent_targets.fabric_targets(args.get("fabric_targets"))
        settings, gate_errors = _nccl_gate.gate_settings(args, fabric, fabric_errors)
        errors.extend(gate_errors)
        results, baseline = [], []
        for key, out in (("results", results), ("baseline", baseline)):
            for i, item in enumerate(args[key] or []):
                try:
                    out.append(_report.slim_result(item, "%s[%d]" % (key, i)))
                except ValueError as exc:
                    errors.append(str(exc))
        if errors:
            result.update(failed=True, errors=errors, msg="\n".join(errors))
            return result
        try:
            evidence = evidence_of(args.get("evidence"), args["phase"])
        except ValueError as exc:
            result.update(failed=True, msg="evidence: %s" % exc)
            return result

        report = _report.benchmark_report(
            results, args["name"], settings if settings["active"] else None, baseline, args["compare"], args["title"],
            args["phase"], args["baseline_label"], args["generated_at"], evidence)
        try:
            with tempfile.TemporaryDirectory(prefix="nccl_report.") as workdir:
                files = _report.render_files(report, workdir)
            synced = _report_files.sync_files(args["report_dir"], files, check_mode=bool(self._task.check_mode))
        except OSError as exc:
            result.update(failed=True, msg="report_dir: cannot write the report to %s: %s" % (args["report_dir"], exc.strerror or exc))
            return result
        base = "%s/%s" % (args["report_dir"].rstrip("/"), args["name"])
        result.update(
            changed=synced["changed"],
            verdict=report["verdict"],
            unmet=report["unmet"],
            report=report,
            results=results,
            files=dict({"json": base + ".json", "markdown": base + ".md", "png": base + ".png"},
                       **({"evidence_png": base + "-evidence.png"} if report.get("evidence") else {})),
            written=synced["written"],
        )
        if self._task.diff and synced["diff"]:
            result["diff"] = synced["diff"]
        return result
