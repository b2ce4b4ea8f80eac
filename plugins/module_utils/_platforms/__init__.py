# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""Switch platform drivers: one module per switch OS, all with the contract in _base."""

from __future__ import annotations

import importlib

# platform name (as in lossless_fabric_device.platform) -> module under this package
DRIVERS = {
    "eos": "eos",
    "nvue": "nvue",
    "junos": "junos",
}


def driver_class(platform: str):
    """The Driver class of a platform; ValueError names the platforms we have."""
    if platform not in DRIVERS:
        raise ValueError("platform: %r has no switch driver (one of %s)" % (platform, ", ".join(sorted(DRIVERS))))
    module = importlib.import_module("%s.%s" % (__name__, DRIVERS[platform]))
    return module.Driver
