# SPDX-License-Identifier: GPL-3.0-or-later
"""Controller side of lossless.fabric.switch_links: netmiko runs in the worker
process; the reading is in module_utils/_switches/_links.py, the commands and
parsing in module_utils/_platforms."""

from __future__ import annotations

from ansible_collections.lossless.fabric.plugins.module_utils._switches import _links as _switch_links
from ansible_collections.lossless.fabric.plugins.plugin_utils._controller_action import ControllerAction
from ansible_collections.lossless.fabric.plugins.plugin_utils._switch_action import device_vars, with_inventory

ARGUMENT_SPEC = _switch_links.ARGUMENT_SPEC


class ActionModule(ControllerAction):
    """Read a switch's LLDP neighbours, oper state and speed per port (read-only; check mode is the same run)."""

    argument_spec = ARGUMENT_SPEC

    def run_validated(self, args, task_vars, result):
        if args.get("fabric") is not None:
            hostvars = task_vars.get("hostvars", {})
            missing = [host for host in args["fabric"] if host not in hostvars]
            if missing:
                result.update(failed=True, msg="fabric: %s not in the inventory" % ", ".join(repr(host) for host in missing))
                return result
            per_switch = {host: self._with_inventory(dict(args, fabric=None), hostvars[host]) for host in dict.fromkeys(args["fabric"])}
            outcome = _switch_links.run_fabric(per_switch, args["workers"])
        else:
            device_name = task_vars.get("inventory_hostname", args.get("host") or "switch")
            outcome = _switch_links.run(self._with_inventory(args, task_vars), device=device_name)
        warnings = outcome.pop("warnings", None)
        if warnings:
            result.setdefault("warnings", []).extend(warnings)
        result.update(outcome)
        result["changed"] = False
        return result

    def _with_inventory(self, args, host_vars):
        """Connection options, the platform and (unless given) the ports from one host's variables."""
        args = with_inventory(args, host_vars, self._templar)
        if not args.get("ports"):
            known = device_vars(host_vars, self._templar).get("ports")
            args["ports"] = [str(name) for name in known] if isinstance(known, (dict, list)) and known else None
        return args
