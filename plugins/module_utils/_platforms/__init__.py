# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""Switch platform drivers: one module per switch OS, all with the contract in _base,
and the platform registry.

Each driver module defines ``Driver`` (a _base.Driver) and publishes its record as
``PLATFORM`` (a _base.Platform: interface name pattern, maximum MTU, ECN starting values).
The records themselves live in ``_records.py`` (data only, imported by the intent); the
registry is ``_records.DRIVEN`` then ``_records.PLANNED`` (platforms without a driver yet).
A new platform is its record there plus its driver module here (docs/adding-a-platform.md).
"""

from __future__ import annotations

import importlib

# Records only (data); the driver modules are imported when a driver is asked for, so that a
# module importing the intent (host modules too) carries no driver code: _records.py.
from ansible_collections.lossless.fabric.plugins.module_utils._platforms import _base, _records

# platform name (as in lossless_fabric_device.platform) -> module under this package.
DRIVERS = {record.name: record.name for record in _records.DRIVEN}
PLANNED: tuple[_base.Platform, ...] = _records.PLANNED


def _module(platform: str):
    return importlib.import_module("%s.%s" % (__name__, DRIVERS[platform]))


def driver_class(platform: str):
    """The Driver class of a platform; ValueError names the platforms we have."""
    if platform not in DRIVERS:
        raise ValueError("platform: %r has no switch driver (one of %s)" % (platform, ", ".join(sorted(DRIVERS))))
    return _module(platform).Driver


def platforms() -> dict[str, _base.Platform]:
    """The platform registry, name -> record: every driven platform (in DRIVERS order), then PLANNED.
    A fresh dict each call; ValueError when a name is twice in it. (That each driver module's
    PLATFORM is its record is the contract suite's test: importing the drivers here would pull
    them into every module that imports the intent.)"""
    registry: dict[str, _base.Platform] = {}
    for record in (*_records.DRIVEN, *_records.PLANNED):
        if record.name in registry:
            raise ValueError("platform %r is twice in the registry (_platforms/_records.py)" % record.name)
        registry[record.name] = record
    return registry
