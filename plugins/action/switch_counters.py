# SPDX-License-Identifier: GPL-3.0-or-later
"""Controller side of lossless.fabric.switch_counters: netmiko runs in the
worker process; the reading and the snapshot shape are in
module_utils/_switches/_counters.py, the commands and parsing in module_utils/_platforms."""

from __future__ import annotations

from ansible_collections.lossless.fabric.plugins.module_utils._switches import _counters
from ansible_collections.lossless.fabric.plugins.plugin_utils._controller_action import ControllerAction
from ansible_collections.lossless.fabric.plugins.plugin_utils._switch_action import device_vars, with_inventory

ARGUMENT_SPEC = _counters.ARGUMENT_SPEC


class ActionModule(ControllerAction):
    """Read a switch's PFC / ECN / drop / watchdog counters as one snapshot (read-only)."""

    argument_spec = ARGUMENT_SPEC

    def run_validated(self, args, task_vars, result):
        if args.get("fabric") is not None:
            # Fabric-wide: one task, every listed switch from a thread pool, a result per switch.
            hostvars = task_vars.get("hostvars", {})
            missing = [host for host in args["fabric"] if host not in hostvars]
            if missing:
                result.update(failed=True, msg="fabric: %s not in the inventory" % ", ".join(repr(host) for host in missing))
                return result
            per_switch = {host: self._with_inventory(dict(args, fabric=None), hostvars[host]) for host in dict.fromkeys(args["fabric"])}
            outcome = _counters.run_fabric(per_switch, args["workers"])
        else:
            device_name = task_vars.get("inventory_hostname", args.get("host") or "switch")
            outcome = _counters.run(self._with_inventory(args, task_vars), device=device_name)
        warnings = outcome.pop("warnings", None)
        if warnings:
            result.setdefault("warnings", []).extend(warnings)
        result.update(outcome)
        return result

    def _with_inventory(self, args, host_vars):
        """Connection options, the platform and (unless given) the ports from one host's variables."""
        args = with_inventory(args, host_vars, self._templar)
        if not args.get("ports"):
            known = device_vars(host_vars, self._templar).get("ports")
            args["ports"] = [str(name) for name in known] if isinstance(known, (dict, list)) and known else None
        return args
