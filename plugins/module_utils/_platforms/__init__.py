# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""Switch platform drivers: one module per switch OS, all with the contract in _base,
and the platform registry built from them.

Each driver module defines ``Driver`` (a _base.Driver) and ``PLATFORM`` (a
_base.Platform record: interface name pattern, maximum MTU, ECN units). The
registry is those records plus PLANNED (platforms without a driver yet);
_intent reads it, so a new platform is a module here and its name in _MODULES
(docs/adding-a-platform.md).
"""

from __future__ import annotations

import importlib

# The driver modules are imported by name, not discovered: AnsiballZ packs only what a module
# imports statically, and host modules reach this package through _intent (stdlib-only imports).
from ansible_collections.lossless.fabric.plugins.module_utils._platforms import _base, eos, junos, nvue

# The driver modules, in the registry's order: adding a platform is one name here (and in the import above).
_MODULES = (eos, nvue, junos)

# platform name (as in lossless_fabric_device.platform) -> module under this package.
DRIVERS = {module.PLATFORM.name: module.__name__.rsplit(".", 1)[1] for module in _MODULES}

# Platforms the intent knows but no driver configures yet (supported=False): the intent
# refuses them with "not supported yet", and their notes are recorded before the driver
# exists. A platform's record moves into its driver module when the driver lands.
PLANNED: tuple[_base.Platform, ...] = (
    _base.Platform("nxos", r"Ethernet[0-9]+/[0-9]+(/[0-9]+)?", "Ethernet1/1", supported=False),
    _base.Platform(
        "sonic",
        r"Ethernet[0-9]+",
        "Ethernet0",
        supported=False,
        notes=(
            "{host}: platform sonic: the stock DSCP_TO_TC_MAP|AZURE puts DSCP {dscp} in a lossy traffic class "
            "(its lossless TCs 3 and 4 are fed by DSCP 3 and 4); the plan installs an explicit map, "
            "but 'config qos reload' restores the stock one and silently makes priority {priority} traffic lossy",
        ),
    ),
)


def _module(platform: str):
    return importlib.import_module("%s.%s" % (__name__, DRIVERS[platform]))


def driver_class(platform: str):
    """The Driver class of a platform; ValueError names the platforms we have."""
    if platform not in DRIVERS:
        raise ValueError("platform: %r has no switch driver (one of %s)" % (platform, ", ".join(sorted(DRIVERS))))
    return _module(platform).Driver


def platforms() -> dict[str, _base.Platform]:
    """The platform registry, name -> record: every driver's PLATFORM (in DRIVERS order), then PLANNED.
    A fresh dict each call; ValueError when a record disagrees with its driver."""
    registry: dict[str, _base.Platform] = {}
    for name in DRIVERS:
        module = _module(name)
        record = module.PLATFORM
        if record.name != name or module.Driver.platform != name:
            raise ValueError("platform %r: its module's PLATFORM.name is %r and Driver.platform %r" % (name, record.name, module.Driver.platform))
        registry[name] = record
    for record in PLANNED:
        if record.name in registry:
            raise ValueError("platform %r is both a driver and PLANNED" % record.name)
        registry[record.name] = record
    return registry
