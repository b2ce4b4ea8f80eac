# SPDX-License-Identifier: GPL-3.0-or-later
"""Controller side of lossless.fabric.change_report: thin glue over
module_utils/_change_report.py (the report) and _report.sync_files (the files)."""

from __future__ import annotations

import json
import os

from ansible_collections.lossless.fabric.plugins.module_utils import _change_report, _report
from ansible_collections.lossless.fabric.plugins.plugin_utils._controller_action import ControllerAction

ARGUMENT_SPEC = {
    "dest": {"type": "path", "required": True},
    "window": {
        "type": "dict", "required": True,
        "options": {
            "id": {"type": "str", "required": True},
            "fabric": {"type": "str"},
            "started_at": {"type": "str"},
            "deadline": {"type": "str"},
            "max_minutes": {"type": "int"},
            "batch": {"type": "int"},
        },
    },
    "status": {"type": "str", "required": True, "choices": list(_change_report.STATUSES)},
    "devices": {"type": "dict", "required": True},
    "counters": {"type": "dict", "default": {}},
    "plans": {"type": "dict", "default": {}},
    "findings": {"type": "list", "elements": "dict", "default": []},
    "benchmark": {"type": "dict", "default": {}},
    "reasons": {"type": "list", "elements": "str", "default": []},
    "scope": {"type": "list", "elements": "str", "default": []},
    "ib_counters": {"type": "dict", "default": {}},
}


class ActionModule(ControllerAction):
    """Write the change window's JSON and Markdown report (and the busbw plot) on the controller."""

    argument_spec = ARGUMENT_SPEC

    def run_validated(self, args, task_vars, result):
        try:
            report = _change_report.build(args["window"], args["devices"], args["status"], args["counters"], args["plans"],
                                          args["findings"], args["benchmark"], args["reasons"], args["scope"], args["ib_counters"])
        except (KeyError, TypeError, ValueError) as exc:
            result.update(failed=True, msg="change_report: %s: %s" % (type(exc).__name__, exc))
            return result
        dest = args["dest"]
        previous = os.path.join(dest, report["name"] + ".json")
        if os.path.exists(previous):
            # Earlier serial batches of the same window wrote it: one report for the whole window.
            try:
                with open(previous, encoding="utf-8") as handle:
                    report = _change_report.merge(json.load(handle), report)
            except (OSError, ValueError) as exc:
                result.update(failed=True, msg="%s: cannot read the earlier report of this window: %s" % (previous, exc))
                return result
        try:
            written = _report.sync_files(dest, _change_report.files(report), check_mode=bool(self._task.check_mode), mode=0o644)
        except OSError as exc:
            result.update(failed=True, msg="%s: cannot write the report: %s" % (dest, exc.strerror or exc))
            return result
        result.update(
            changed=written["changed"],
            verdict=report["verdict"],
            outcomes=report["outcomes"],
            devices={device: {"outcome": e["outcome"], "detail": e["detail"]} for device, e in report["devices"].items()},
            hosts={host: {"outcome": e["outcome"], "detail": e["detail"]} for host, e in report.get("hosts", {}).items()},
            reasons=report["reasons"],
            files={name.rsplit(".", 1)[1]: os.path.join(dest, name) for name in written["written"] + written["unchanged"]},
        )
        if self._task.diff:
            result["diff"] = written["diff"]
        return result
