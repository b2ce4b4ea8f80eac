# SPDX-License-Identifier: GPL-3.0-or-later
"""Controller side of lossless.fabric.fabric_plan: thin glue over _intent."""

from __future__ import annotations

from ansible_collections.lossless.fabric.plugins.module_utils import _intent
from ansible_collections.lossless.fabric.plugins.plugin_utils._controller_action import ControllerAction

ARGUMENT_SPEC = {
    "intent": {"type": "dict"},
    "hosts": {"type": "list", "elements": "str"},
    "device_var": {"type": "str", "default": "lossless_fabric_device"},
    "fail_on_warnings": {"type": "bool", "default": False},
}


class ActionModule(ControllerAction):
    """Validate the intent and derive the per-device plan, without touching a device."""

    argument_spec = ARGUMENT_SPEC

    def run_validated(self, args, task_vars, result):
        intent = args["intent"]
        if intent is None:
            if "lossless_fabric" not in task_vars:
                result.update(failed=True, msg="lossless_fabric: the fabric intent is not defined (set it in group_vars or pass intent)")
                return result
            intent = self._templar.template(task_vars["lossless_fabric"])

        hostvars = task_vars.get("hostvars", {})
        hosts = args["hosts"]
        if hosts is None:
            hosts = list(task_vars.get("groups", {}).get("all", []))
        devices = {}
        unknown = []
        for host in hosts:
            if host not in hostvars:
                unknown.append(host)
                continue
            device = hostvars[host].get(args["device_var"])
            if device is not None:
                devices[host] = self._templar.template(device)
        if unknown:
            result.update(failed=True, msg="hosts: not in the inventory: %s" % ", ".join(sorted(unknown)))
            return result

        try:
            plan = _intent.build_plan(intent, devices)
        except _intent.IntentError as exc:
            errors = list(exc.errors)
            result.update(
                failed=True,
                errors=errors,
                fabric_warnings=[],
                msg="The fabric intent has %d error%s:\n%s" % (len(errors), "" if len(errors) == 1 else "s", "\n".join(errors)),
            )
            return result

        warnings = list(plan.get("warnings", []))
        result.update(
            intent=plan["intent"],
            devices=plan["devices"],
            nccl_env=plan["nccl_env"],
            summary=plan["summary"],
            fabric_warnings=warnings,
        )
        if warnings:
            result["warnings"] = warnings
            if args["fail_on_warnings"]:
                result.update(failed=True, msg="fail_on_warnings: the intent has %d warning(s):\n%s" % (len(warnings), "\n".join(warnings)))
        return result
