# SPDX-License-Identifier: GPL-3.0-or-later
"""Controller side of lossless.fabric.cabling_verify: thin glue over module_utils/_cabling/_compare.py (the comparison
and the report) and _report_files.sync_files (the files, as nccl_report and change_report write theirs)."""

from __future__ import annotations

import os

from ansible_collections.lossless.fabric.plugins.module_utils._cabling import _compare as _cabling
from ansible_collections.lossless.fabric.plugins.module_utils._common import _report_files
from ansible_collections.lossless.fabric.plugins.plugin_utils._controller_action import ControllerAction

ARGUMENT_SPEC = {
    "cabling": {"type": "dict", "required": True},
    "observations": {"type": "dict", "default": {}},
    "readings": {"type": "dict", "default": {}},
    "devices": {"type": "dict", "default": {}},
    "exceptions": {"type": "list", "elements": "raw", "default": []},
    "report_dir": {"type": "path", "default": ""},
    "name": {"type": "str", "default": "cabling"},
    "title": {"type": "str", "default": "Cabling check"},
}
# Bad findings listed in the failure message; the report has them all.
_MSG_LINES = 40


def _nics(devices: dict) -> dict:
    """{host: {nic: {netdev, mac}}} from the device plans: how a switch's LLDP may name a host NIC."""
    out = {}
    for host, plan in (devices or {}).items():
        if isinstance(plan, dict) and plan.get("kind") == "host":
            out[str(host)] = {str(n["name"]): {"netdev": n.get("netdev"), "mac": n.get("mac")}
                              for n in plan.get("nics") or [] if isinstance(n, dict) and n.get("name")}
    return out


def _errors(args) -> list:
    errors = []
    if not _report_files.NAME_RE.match(args["name"]):
        errors.append("name: %r is not a report name (letters, digits, '.', '_' and '-', starting with a letter or digit, "
                      "at most 100 characters)" % args["name"])
    if any(c in args["title"] for c in "\r\n"):
        errors.append("title: %r holds a line break (it becomes one line of the report)" % args["title"])
    return errors


class ActionModule(ControllerAction):
    """Judge the cabling, write <report_dir>/<name>.md and .json, fail unless every finding is ok or allowed."""

    argument_spec = ARGUMENT_SPEC

    def run_validated(self, args, task_vars, result):
        errors = _errors(args)
        observations, reasons, reading_errors = _cabling.observations_from_readings(args["readings"])
        errors.extend(reading_errors)
        if errors:
            result.update(failed=True, errors=errors, msg="\n".join(errors))
            return result
        observations = _cabling.merge_observations(args["observations"], observations)
        try:
            verdict = _cabling.compare(args["cabling"], observations, args["exceptions"], _nics(args["devices"]), reasons)
        except _cabling.CablingInputError as exc:
            result.update(failed=True, errors=exc.errors, msg="\n".join(exc.errors))
            return result
        files = _cabling.report_files(verdict, args["name"], args["title"])
        written = {"changed": False, "diff": [], "written": [], "unchanged": []}
        paths = {}
        if args["report_dir"]:
            try:
                written = _report_files.sync_files(args["report_dir"], files, check_mode=bool(self._task.check_mode), mode=0o644)
            except OSError as exc:
                result.update(failed=True, msg="report_dir: cannot write the report to %s: %s" % (args["report_dir"], exc.strerror or exc))
                return result
            base = os.path.join(args["report_dir"], args["name"])
            paths = {"json": base + ".json", "markdown": base + ".md"}
        result.update(
            changed=written["changed"],
            verdict=verdict["verdict"],
            findings=verdict["findings"],
            summary=verdict["summary"],
            unused_exceptions=verdict["unused_exceptions"],
            report={"markdown": files[args["name"] + ".md"].decode("utf-8"), "json": files[args["name"] + ".json"].decode("utf-8")},
            files=paths,
        )
        if self._task.diff and written["diff"]:
            result["diff"] = written["diff"]
        if verdict["unused_exceptions"]:
            result["warnings"] = ["cabling exceptions[%d] (%s %s: %s) matched no finding; remove it once the link is fixed"
                                  % (e["index"], e["end"], e["finding"], e["reason"]) for e in verdict["unused_exceptions"]]
        summary = verdict["summary"]
        if verdict["failed"]:
            bad = [f for f in verdict["findings"] if f["finding"] != "ok" and not f["allowed"]]
            where = paths.get("markdown", "not written: no report_dir") if not self._task.check_mode else "not written: check mode"
            head = "Cabling check failed: %d finding(s) on %d intended link(s) (report %s):" % (len(bad), summary["links"], where)
            lines = [
                "%s %s%s: expected %s; found %s" % (f["finding"], f["a"], (" - " + f["b"]) if f["b"] else "", f["expected"], f["found"])
                for f in bad[:_MSG_LINES]
            ]
            if len(bad) > _MSG_LINES:
                lines.append("... and %d more in the report" % (len(bad) - _MSG_LINES))
            result.update(failed=True, msg="\n".join([head] + lines))
        else:
            result["msg"] = "Cabling check passed: %d intended link(s) ok, %d allowed by exceptions" % (summary["ok"], summary["allowed"])
        return result
