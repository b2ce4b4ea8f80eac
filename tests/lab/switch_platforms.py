# SPDX-License-Identifier: GPL-3.0-or-later
"""The switch platforms the tests run on: one list for every test (integration, unit, lab).

A platform is tested when it has both a production driver (the registry's ``DRIVERS`` in
plugins/module_utils/_platforms/_drivers.py) and a simulator grammar (``tests/lab/switchsim/<platform>.py``,
found into ``GRAMMARS``), so adding a platform is its driver package, its record and its grammar, and
every parametrised test picks it up (docs/adding-a-platform.md). Outside pytest (where the repo's conftest.py makes
``ansible_collections.lossless.fabric`` importable) the simulator's table alone is used.
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

from switchsim import GRAMMARS  # noqa: E402  # pylint: disable=wrong-import-position


def _drivers() -> tuple[str, ...] | None:
    try:
        from ansible_collections.lossless.fabric.plugins.module_utils._platforms._drivers import DRIVERS  # pylint: disable=import-outside-toplevel
    except ImportError:
        return None
    return tuple(DRIVERS)


def _tested() -> list[str]:
    drivers = _drivers()
    if drivers is None:
        return list(GRAMMARS)
    missing = [p for p in drivers if p not in GRAMMARS]
    if missing:  # a driver nobody can test is a gap, not something to skip silently
        raise RuntimeError(f"switch platform(s) {missing} have a driver but no simulator grammar (tests/lab/switchsim/<platform>.py)")
    return list(drivers)


# In the registry's order (_records.DRIVEN); the grammars' order outside pytest.
SWITCH_PLATFORMS: list[str] = _tested()
