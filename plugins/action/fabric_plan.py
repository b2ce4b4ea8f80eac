# SPDX-License-Identifier: GPL-3.0-or-later
"""Controller side of lossless.fabric.fabric_plan: thin glue over _intent."""

from __future__ import annotations

import os

from ansible import context

from ansible_collections.lossless.fabric.plugins.module_utils._intent import _plan, _tables
from ansible_collections.lossless.fabric.plugins.module_utils._intent import _scope as _intent_scope
from ansible_collections.lossless.fabric.plugins.module_utils._switches import _config as _switch_config
from ansible_collections.lossless.fabric.plugins.module_utils._window import _fabric_lock
from ansible_collections.lossless.fabric.plugins.plugin_utils._controller_action import ControllerAction

ARGUMENT_SPEC = {
    "intent": {"type": "dict"},
    "hosts": {"type": "list", "elements": "str"},
    "device_var": {"type": "str", "default": "lossless_fabric_device"},
    "fail_on_warnings": {"type": "bool", "default": False},
    "lock": {"type": "bool", "default": True},
    "lock_dir": {"type": "str", "default": _fabric_lock.DEFAULT_DIR},
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
        views = {}
        unknown = []
        for host in hosts:
            if host not in hostvars:
                unknown.append(host)
                continue
            device = hostvars[host].get(args["device_var"])
            if device is not None:
                devices[host] = self._templar.template(device)
            if "lossless_fabric" in hostvars[host]:
                views[host] = self._templar.template(hostvars[host]["lossless_fabric"])
        if unknown:
            result.update(failed=True, msg="hosts: not in the inventory: %s" % ", ".join(sorted(unknown)))
            return result
        # One intent for every device: a play planned from one group's override would disagree with the others'.
        split = _intent_scope.check(task_vars.get("inventory_hostname", "localhost"), intent, views, task_vars.get("groups"))
        if split:
            result.update(failed=True, msg=split)
            return result

        try:
            # The inventory's groups resolve a tenant's host_group.
            plan = _plan.build_plan(intent, devices, task_vars.get("groups"))
            unrenderable = _switch_config.render_errors(plan["devices"])
            if unrenderable:
                raise _tables.IntentError(unrenderable)
        except _tables.IntentError as exc:
            errors = list(exc.errors)
            result.update(
                failed=True,
                errors=errors,
                fabric_warnings=[],
                msg="The fabric intent has %d error%s:\n%s" % (len(errors), "" if len(errors) == 1 else "s", "\n".join(errors)),
            )
            return result

        if args["lock"] and not self._lock(args["lock_dir"], plan["intent"].get("name"), result):
            return result

        warnings = list(plan.get("warnings", []))
        result.update(
            intent=plan["intent"],
            devices=plan["devices"],
            tenants=plan["tenants"],
            nccl_env=plan["nccl_env"],
            cabling=plan["cabling"],
            summary=plan["summary"],
            design=plan.get("design", []),
            fabric_warnings=warnings,
        )
        if warnings:
            # after the lock's own warning (check mode, another run holds the fabric), never instead of it
            result["warnings"] = list(result.get("warnings") or []) + warnings
            if args["fail_on_warnings"]:
                result.update(failed=True, msg="fail_on_warnings: the intent has %d warning(s):\n%s" % (len(warnings), "\n".join(warnings)))
        return result

    def _lock(self, lock_dir, fabric, result):
        """The fabric's controller lock for this run (its ansible-playbook: the worker's parent). Check mode
        changes nothing and takes no lock; it only warns when another run holds it."""
        playbook = " ".join(context.CLIARGS.get("args") or ()) or "(ad hoc)"
        try:
            if self._task.check_mode:
                holder = _fabric_lock.holder_of(lock_dir, fabric)
                if holder and holder.get("pid") != os.getppid():
                    result.setdefault("warnings", []).append("fabric %s is locked by another run: %s" % (fabric, _fabric_lock.describe(holder)))
                return True
            taken = _fabric_lock.acquire(lock_dir, fabric, os.getppid(), playbook)
        except _fabric_lock.LockError as exc:
            result.update(failed=True, msg=str(exc), lock_holder=exc.holder)
            return False
        except OSError as exc:
            result.update(failed=True, msg="lock_dir: %s: cannot take the fabric lock: %s" % (lock_dir, exc.strerror or exc))
            return False
        result["lock"] = {"path": taken["path"], "holder": taken["holder"]}
        return True
