# SPDX-License-Identifier: GPL-3.0-or-later
"""Controller side of lossless.fabric.switch_config: netmiko runs in the
worker process (no module start-up per switch); the transaction logic is in
module_utils/_switches/_config.py, the per-OS work in module_utils/_platforms."""

from __future__ import annotations

from ansible_collections.lossless.fabric.plugins.module_utils._switches import _config as _switch_config
from ansible_collections.lossless.fabric.plugins.plugin_utils._controller_action import ControllerAction
from ansible_collections.lossless.fabric.plugins.plugin_utils._switch_action import with_inventory

ARGUMENT_SPEC = _switch_config.ARGUMENT_SPEC


class ActionModule(ControllerAction):
    """Apply a switch plan as a transaction, or render/gather/parse/confirm/roll back."""

    argument_spec = ARGUMENT_SPEC
    required_if = _switch_config.REQUIRED_IF

    def run_validated(self, args, task_vars, result):
        check_mode, diff_mode = bool(self._task.check_mode), bool(self._task.diff)
        if args.get("fabric") is not None:
            # Fabric-wide: one task, every listed switch from a thread pool, a result per switch.
            per_switch = {}
            for host in args["fabric"]:
                host_vars = task_vars.get("hostvars", {}).get(host)
                if host_vars is None:
                    result.update(failed=True, msg="fabric: %r is not in the inventory" % host)
                    return result
                per_switch[host] = self._with_inventory(dict(args, fabric=None), host_vars, host)
            result.update(_switch_config.run_fabric(per_switch, args["workers"], check_mode, diff_mode))
            return result
        args = self._with_inventory(args, task_vars, task_vars.get("inventory_hostname", args.get("host") or "switch"))
        result.update(_switch_config.run(args, device=args.pop("_device"), check_mode=check_mode, diff_mode=diff_mode))
        return result

    def _with_inventory(self, args, host_vars, device):
        """Fill connection options and the platform from one host's variables."""
        args = dict(args)
        if args.get("plan") is None and args.get("plans") is not None:
            args["plan"] = args["plans"].get(device)
        args = with_inventory(args, host_vars, self._templar)
        args["_device"] = device
        return args
