# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""A switch platform's ``Driver`` class, by the name in ``lossless_fabric_device.platform``.

Controller side only (the switch modules' action plugins). The driver of platform ``<os>`` is
``_platforms/<os>/_driver.py``; it is imported when asked for, by its record's name, so that a new
platform needs no edit here, and the registry's records (``_records``) stay data that the intent and
host modules import without any driver code. That one import by name is the collection's only
dynamic import (docs/architecture.md).
"""

from __future__ import annotations

import importlib

from ansible_collections.lossless.fabric.plugins.module_utils._platforms import _records

# platform name -> the dotted name of its driver module.
DRIVERS: dict[str, str] = {record.name: "%s.%s._driver" % (__package__, record.name) for record in _records.DRIVEN}


def driver_class(platform: str):
    """The Driver class of a platform; ValueError names the platforms we have."""
    if platform not in DRIVERS:
        raise ValueError("platform: %r has no switch driver (one of %s)" % (platform, ", ".join(sorted(DRIVERS))))
    return importlib.import_module(DRIVERS[platform]).Driver
