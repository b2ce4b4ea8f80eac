# SPDX-License-Identifier: GPL-3.0-or-later
"""Controller side of lossless.fabric.change_report: thin glue over
module_utils/_window/_change_report.py (the report) and _report_files.sync_files (the files)."""

from __future__ import annotations

import json
import os

from ansible.module_utils.parsing.convert_bool import boolean

from ansible_collections.lossless.fabric.plugins.module_utils._common import _report_files
from ansible_collections.lossless.fabric.plugins.module_utils._window import _change_report, _change_window
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
    "devices": {"type": "dict"},
    "collect": {"type": "bool", "default": False},
    "counters": {"type": "dict", "default": {}},
    "plans": {"type": "dict", "default": {}},
    "findings": {"type": "list", "elements": "dict", "default": []},
    "benchmark": {"type": "dict", "default": {}},
    "reasons": {"type": "list", "elements": "str", "default": []},
    "scope": {"type": "list", "elements": "str", "default": []},
    "ib_counters": {"type": "dict", "default": {}},
}


# What each device of the window registers (roles/change_window/tasks), and the NIC tasks' run_once loops.
_WINDOW_VARS = ("__change_window_push", "__change_window_settle", "__change_window_rollback", "__change_window_backup",
                "__change_window_counters_before", "__change_window_counters_middle", "__change_window_counters_after",
                "__change_window_sm_files", "__change_window_sm_commands", "__change_window_sm_arm", "__change_window_sm_settle",
                "__change_window_sm_rollback")
_NIC_VARS = ("__change_window_nic_backup", "__change_window_nic_apply", "__change_window_nic_restore", "__change_window_nic_confirm")


class ActionModule(ControllerAction):
    """Write the change window's JSON and Markdown report (and the busbw plot) on the controller."""

    argument_spec = ARGUMENT_SPEC

    def _collect(self, args, task_vars):
        """The change window's devices and counters, read from the batch's hosts (role lossless.fabric.change_window:
        its registered results and facts) instead of handed in."""
        hostvars = task_vars.get("hostvars") or {}
        switches = list(task_vars.get("__change_window_switches") or [])
        sms = list(task_vars.get("__change_window_sms") or [])
        name = task_vars["__change_window_name"]
        backup_dir = "%s/%s-backup" % (self._templar.template(task_vars["change_window_report_dir"]), name)
        plans = (task_vars.get("fabric_plan_result") or {}).get("devices") or {}
        check_mode = bool(self._task.check_mode)
        seen = {}
        for host in switches + sms:
            mine = hostvars.get(host) or {}
            seen[host] = {key: mine.get(key) for key in _WINDOW_VARS if key in mine}
        registered = {key: task_vars.get(key) for key in _NIC_VARS}
        nic_hosts = [r.get("item") for r in (registered["__change_window_nic_backup"] or {}).get("results") or [] if isinstance(r, dict)]
        become = {h: boolean(self._templar.template((hostvars.get(h) or {}).get("nic_qos_become", True)), strict=False)
                  for h in nic_hosts if isinstance(h, str)}
        devices = _change_window.switch_devices(switches, seen, plans, backup_dir, check_mode)
        devices.update(_change_window.nic_devices(registered, backup_dir, check_mode, task_vars.get("ansible_inventory_sources") or [], become))
        devices.update(_change_window.sm_devices(sms, seen, name, backup_dir, check_mode))
        args.update(devices=devices, plans=args["plans"] or plans)
        if not args["counters"]:
            args["counters"] = _change_window.counters(switches, seen)

    def run_validated(self, args, task_vars, result):
        if args["collect"]:
            try:
                self._collect(args, task_vars)
            except KeyError as exc:
                result.update(failed=True, msg="collect: %s is not defined (collect is for the role lossless.fabric.change_window)" % exc)
                return result
        elif args["devices"] is None:
            result.update(failed=True, msg="devices: required unless collect is true")
            return result
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
            written = _report_files.sync_files(dest, _change_report.files(report), check_mode=bool(self._task.check_mode), mode=0o644)
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
