# SPDX-License-Identifier: GPL-3.0-or-later
"""Controller side of lossless.fabric.switch_counters: netmiko runs in the
worker process; the reading and the snapshot shape are in
module_utils/_counters.py, the commands and parsing in module_utils/_platforms."""

from __future__ import annotations

from ansible.plugins.action import ActionBase

from ansible_collections.lossless.fabric.plugins.module_utils import _counters
from ansible_collections.lossless.fabric.plugins.module_utils._switch_connection import INVENTORY_DEFAULTS

ARGUMENT_SPEC = _counters.ARGUMENT_SPEC


class ActionModule(ActionBase):
    """Read a switch's PFC / ECN / drop / watchdog counters as one snapshot (read-only)."""

    TRANSFERS_FILES = False
    _requires_connection = False

    def run(self, tmp=None, task_vars=None):
        task_vars = task_vars or {}
        result = super().run(tmp, task_vars)
        _validation, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        for option, variables in INVENTORY_DEFAULTS.items():
            if args.get(option) is None:
                for var in variables:
                    if var in task_vars:
                        args[option] = self._templar.template(task_vars[var])
                        break
        if args.get("host_key_checking") is None:
            args["host_key_checking"] = bool(_config_host_key_checking())
        device = task_vars.get("lossless_fabric_device")
        device = self._templar.template(device) if device is not None else None
        device = device if isinstance(device, dict) else {}
        if args.get("platform") is None:
            args["platform"] = device.get("platform")
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


def _config_host_key_checking():
    # The [defaults] host_key_checking setting, as ansible's ssh connection reads it.
    from ansible import constants as C  # pylint: disable=import-outside-toplevel

    return C.config.get_config_value("HOST_KEY_CHECKING")
