# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""Controller-side glue shared by the switch action plugins: fill the
connection options and the platform from a host's inventory variables."""

from __future__ import annotations

from ansible import constants as C

from ansible_collections.lossless.fabric.plugins.module_utils._platforms._connection import INVENTORY_DEFAULTS


def with_inventory(args: dict, host_vars, templar) -> dict:
    """A copy of args where every connection option left unset takes the
    host's usual inventory variable, and platform its lossless_fabric_device."""
    args = dict(args)
    for option, variables in INVENTORY_DEFAULTS.items():
        if args.get(option) is None:
            for var in variables:
                if var in host_vars:
                    args[option] = templar.template(host_vars[var])
                    break
    if args.get("host_key_checking") is None:
        # The [defaults] host_key_checking setting, as ansible's ssh connection reads it.
        args["host_key_checking"] = bool(C.config.get_config_value("HOST_KEY_CHECKING"))
    if args.get("platform") is None:
        plan_platform = (args.get("plan") or {}).get("platform") if isinstance(args.get("plan"), dict) else None
        args["platform"] = plan_platform or device_vars(host_vars, templar).get("platform")
    return args


def device_vars(host_vars, templar) -> dict:
    """The host's lossless_fabric_device, templated ({} when it has none)."""
    device = host_vars.get("lossless_fabric_device")
    device = templar.template(device) if device is not None else None
    return device if isinstance(device, dict) else {}
