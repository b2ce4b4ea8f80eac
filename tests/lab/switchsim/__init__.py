# SPDX-License-Identifier: GPL-3.0-or-later
"""Strict SSH CLI switch simulator (Arista EOS, NVIDIA Cumulus NVUE, Juniper Junos, SONiC,
Cisco NX-OS).

Lab/test tooling only; never imported by the collection's plugins.
See README.md in this directory ("Adding a platform's grammar").

A platform's grammar is its module here, ``<platform>.py``: no table names it. What a grammar
module exports for the rest of the lab and the tests (docs/adding-a-platform.md lists the same
names; tests/unit/plugins/module_utils/_platforms/test_adding_a_platform.py checks both):

- ``DEVICE``: its ``core.Device`` subclass (``platform = "<platform>"``);
- ``LAB_PORTS``: two of its ports as a lab inventory gives them, ``{name: {"speed", "cable_length_m"
  [, "description"]}}`` (tests/integration/switchlab.py takes the names, the molecule scenario the
  settings, bench/bench_switch_push.py the names at the first port's speed);
- ``HANG_AT``: switch_config step -> the command (a regular expression the ``hang`` fault matches)
  on which a switch of this platform stops answering in that step: every step of ``HANG_STEPS``,
  and those of ``HANG_STEPS_OPTIONAL`` the platform has (tests/integration/test_switch_config.py);
- ``PREPARED`` (optional): the configuration lines a lab switch of this platform starts with, as an
  operator prepares a real one (NX-OS: its SCP server).
"""

from __future__ import annotations

import importlib
import os

_HERE = os.path.dirname(os.path.abspath(__file__))

# The simulator's own modules, shared by every grammar. Every other module here whose name has no
# underscore is a grammar; '<grammar>_<part>.py' is a part of one (sonic_yang.py), as are the
# shared modules with an underscore (jsonpatch_rfc6902.py).
SHARED_MODULES = ("client", "commit", "core", "grammar", "plugin", "server", "sshserver")

# What every grammar module exports (the module docstring says what each is); PREPARED is optional.
GRAMMAR_EXPORTS = ("DEVICE", "LAB_PORTS", "HANG_AT")
# The switch_config steps every platform's HANG_AT names, and those only some platforms have
# (NVUE, SONiC and NX-OS read the device while opening their session; EOS and Junos do not).
HANG_STEPS = ("connect", "load", "commit", "read-back", "confirm")
HANG_STEPS_OPTIONAL = ("open session",)


def _grammars() -> dict[str, str]:
    names = sorted(
        entry[:-3] for entry in os.listdir(_HERE)
        if entry.endswith(".py") and "_" not in entry[:-3] and entry[:-3] not in SHARED_MODULES
    )
    return {name: f"{name}:DEVICE" for name in names}


# The one table of the simulator's platforms, found from the grammar modules: lossless_fabric_device.platform
# -> "module:DEVICE". The modules are imported on first use, so `import switchsim` stays light.
GRAMMARS: dict[str, str] = _grammars()

PLATFORMS: tuple[str, ...] = tuple(GRAMMARS)


def module_of(platform: str):
    """The grammar module of `platform`; KeyError for a platform without a grammar."""
    module = GRAMMARS[platform].split(":")[0]
    return importlib.import_module(f"{__name__}.{module}")


def device_class(platform: str) -> type:
    """The Device class that emulates `platform`; KeyError for a platform without a grammar."""
    return getattr(module_of(platform), GRAMMARS[platform].split(":")[1])


def lab_ports(platform: str) -> dict[str, dict]:
    """The grammar's LAB_PORTS: two ports of a lab switch of `platform`, name -> inventory settings."""
    return dict(module_of(platform).LAB_PORTS)


def prepared(platform: str) -> list[str]:
    """The grammar's PREPARED lines ([] when it has none): what a lab switch of `platform` starts with."""
    return list(getattr(module_of(platform), "PREPARED", ()))


def hang_at(platforms) -> dict[str, dict[str, str]]:
    """step -> {platform: the command a switch of that platform hangs on in that step}, from each
    grammar's HANG_AT; ValueError naming the grammar that lacks a step of HANG_STEPS or names an unknown one."""
    found: dict[str, dict[str, str]] = {step: {} for step in (*HANG_STEPS[:2], *HANG_STEPS_OPTIONAL, *HANG_STEPS[2:])}
    for platform in platforms:
        table = getattr(module_of(platform), "HANG_AT", None)
        if not isinstance(table, dict):
            raise ValueError(f"tests/lab/switchsim/{platform}.py exports no HANG_AT (step -> command)")
        missing = [step for step in HANG_STEPS if step not in table]
        unknown = [step for step in table if step not in found]
        if missing or unknown:
            raise ValueError(f"tests/lab/switchsim/{platform}.py HANG_AT: missing steps {missing}, unknown steps {unknown}")
        for step, command in table.items():
            found[step][platform] = command
    return found
