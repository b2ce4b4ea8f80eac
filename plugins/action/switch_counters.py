# SPDX-License-Identifier: GPL-3.0-or-later
"""Controller side of lossless.fabric.switch_counters: netmiko runs in the
worker process; the reading and the snapshot shape are in
module_utils/_counters.py, the commands and parsing in module_utils/_platforms."""

from __future__ import annotations

from ansible_collections.lossless.fabric.plugins.module_utils import _counters
from ansible_collections.lossless.fabric.plugins.plugin_utils._controller_action import ControllerAction
from ansible_collections.lossless.fabric.plugins.plugin_utils._switch_action import device_vars, with_inventory

ARGUMENT_SPEC = _counters.ARGUMENT_SPEC


class ActionModule(ControllerAction):
    """Read a switch's PFC / ECN / drop / watchdog counters as one snapshot (read-only)."""

    argument_spec = ARGUMENT_SPEC

    def run_validated(self, args, task_vars, result):
        args = with_inventory(args, task_vars, self._templar)
        device = device_vars(task_vars, self._templar)
        if not args.get("ports"):
            known = device.get("ports")
            args["ports"] = [str(name) for name in known] if isinstance(known, (dict, list)) and known else None
        device_name = task_vars.get("inventory_hostname", args.get("host") or "switch")
        outcome = _counters.run(args, device=device_name)
        warnings = outcome.pop("warnings", None)
        if warnings:
            result.setdefault("warnings", []).extend(warnings)
        result.update(outcome)
        return result
