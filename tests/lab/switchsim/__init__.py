# SPDX-License-Identifier: GPL-3.0-or-later
"""Strict SSH CLI switch simulator (Arista EOS, NVIDIA Cumulus NVUE, Juniper Junos, SONiC,
Cisco NX-OS).

Lab/test tooling only; never imported by the collection's plugins.
See README.md in this directory ("Adding a platform's grammar").
"""

from __future__ import annotations

import importlib

# The one table of the simulator's platforms: lossless_fabric_device.platform -> "module:DeviceClass"
# (a core.Device subclass in this package). Imported on first use, so `import switchsim` stays light.
GRAMMARS: dict[str, str] = {
    "eos": "eos:EosDevice",
    "nvue": "nvue:NvueDevice",
    "junos": "junos:JunosDevice",
    "sonic": "sonic:SonicDevice",
    "nxos": "nxos:NxosDevice",
}

PLATFORMS: tuple[str, ...] = tuple(GRAMMARS)


def device_class(platform: str) -> type:
    """The Device class that emulates `platform`; KeyError for a platform without a grammar."""
    module, cls = GRAMMARS[platform].split(":")
    return getattr(importlib.import_module(f"{__name__}.{module}"), cls)
